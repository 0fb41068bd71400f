#!/bin/bash
# Round 3 session 15's last one-GPU call (results: bench/results/round15/e/): issue 32's cat, stack and index_select,
# the cases below 90% of memcpy (cat of 64 80-84%, stack of 16 88.6, index_select 87-91 in session 14).
#   the specs that run cat (select, select_paths, join, assembly, fuzz) after cat_k steps its units by rows and
#   remainder instead of a division each; lab/select_host.lua (host issue time against events, per case);
#   examples/select_bench.lua beside bench/torch_select.py for those cases, with cat_k's per-unit division back
#   (CUKERN_IX_CAT_DIV=1) and without, in the same run; ncu (SpeedOfLight, Occupancy, LaunchStats) over cat_k of
#   64 inputs and over index_select's rows_k.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round15-e.sh   (CUKERN_IX_CAT_DIV existed at 3f178a6 only; later it is ignored)
set -u
. lab/run_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
build_sm90
par_specs "spec/select_spec.lua spec/select_paths_spec.lua spec/join_spec.lua spec/assembly_spec.lua spec/fuzz_spec.lua" 5 200
timeout 60 lua5.4 lab/select_host.lua > "$R/select_host.txt" 2>&1; log "select_host rc=$?"; cat "$R/select_host.txt"
timeout 150 python3 bench/torch_select.py --out "$R/torch_select.json" > "$R/torch.txt" 2>&1; log "torch_select rc=$?"
for div in 0 1; do
  CUKERN_IX_CAT_DIV=$div CUKERN_RESULTS="$R/div$div" timeout 100 lua5.4 examples/select_bench.lua --torch "$R/torch_select.json" \
    --only "cat,stack,index_select" > "$R/select_bench-div$div.txt" 2> "$R/select_bench-div$div.progress"
  log "select_bench CUKERN_IX_CAT_DIV=$div rc=$?"; cat "$R/select_bench-div$div.progress"
done
if command -v ncu > /dev/null; then
  timeout 120 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats -k regex:"cat_k|rows_k" \
    --launch-skip 2 --launch-count 2 lua5.4 -e 'local ck = require "cukern"
      local l = {}; for i = 1, 64 do l[i] = ck.rand(8192, 128, {device = "cuda"}) end
      local A, ix = ck.rand(65536, 2048, {device = "cuda"}), ck.randint(1, 65536, {65536}, {dtype = "i64", device = "cuda"})
      for _ = 1, 3 do ck.cat(l, 2); ck.index_select(A, 1, ix) end; ck.sync()' > "$R/ncu-cat-rows.txt" 2>&1
  log "ncu rc=$?"; grep -E "cat_k|rows_k|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Registers Per" "$R/ncu-cat-rows.txt" | head -24
fi
log done
