#!/bin/bash
# Round 3 session 13's last one-GPU call (results: bench/results/round13/c/): what the two-GPU call (x2) showed
# and the commits after it.
#   f16 conversions on the device through the hardware's cvt (kernels/half.h; NaN keeps the integer path):
#     spec/half_spec.lua's device conversions over every pattern first; the elementwise bench's f16/bf16 rows
#     (contiguous and tiled rungs; x2 had f16 contiguous at 57.9% of memcpy, one transposed 47.9%), the tiled rung
#     again with CUKERN_EW_PAIRS=0;
#   nonzero / masked_select on 32-bit counts (kernels/index/00_cub.cu by_count_sel): PyTorch's select cases, then
#     ours for the compactions and where, then the compactions again with CUKERN_IX_SEL64=1 (the form before);
#   the specs of both: half, elementwise, select, select_paths, fuzz.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round13-c.sh
set -u
. lab/run_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
build_sm90
timeout 60 sh spec/run.sh spec/half_spec.lua > "$R/spec-half.txt" 2>&1; log "half rc=$? $(tail -1 "$R/spec-half.txt")"
mkdir -p "$R/ew" "$R/ew-before" "$R/sel" "$R/sel64"
CUKERN_EW_VARIANTS=contiguous,tiled CUKERN_RESULTS="$R/ew" timeout 60 lua5.4 examples/elementwise_bench.lua > "$R/ew.txt" 2>&1
log "ew bench rc=$?"
CUKERN_EW_PAIRS=0 CUKERN_EW_VARIANTS=tiled CUKERN_RESULTS="$R/ew-before" timeout 50 lua5.4 examples/elementwise_bench.lua \
  > "$R/ew-before.txt" 2>&1; log "ew before rc=$?"
grep -E "^ *(-2|2|3) .*(memcpy|f16|bf16)" "$R/ew.txt" "$R/ew-before.txt"
timeout 90 python3 bench/torch_select.py --out "$R/torch_select.json" > "$R/torch_select.log" 2>&1; log "torch select rc=$?"
CUKERN_RESULTS="$R/sel" timeout 80 lua5.4 examples/select_bench.lua --torch "$R/torch_select.json" \
  --only "where,masked,nonzero,find,count" > "$R/select.txt" 2>&1; log "select rc=$?"
CUKERN_IX_SEL64=1 CUKERN_RESULTS="$R/sel64" timeout 60 lua5.4 examples/select_bench.lua --torch "$R/torch_select.json" \
  --only "masked,nonzero,find" > "$R/select64.txt" 2>&1; log "select sel64 rc=$?"
grep -E "^(where|masked|nonzero|find|count)" "$R/select.txt" "$R/select64.txt"
left=$((570 - ($(date +%s) - T0))); [ "$left" -lt 10 ] && left=10
for f in elementwise select select_paths fuzz; do
  (timeout "$left" sh spec/run.sh "spec/${f}_spec.lua" > "$R/spec-$f.txt" 2>&1; log "$f rc=$? $(tail -1 "$R/spec-$f.txt")") &
done
wait
log done
