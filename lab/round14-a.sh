#!/bin/bash
# For round 3 session 14's first one-GPU call (results: bench/results/round14/a/): what session 13 left unrun or
# unexplained.
#   19bb52a ck.where's core-first path (select.lua): the select and badinput specs on the GPU, the select bench's
#           where beside PyTorch, lab/select_host.lua (host time per call: where took 11 us of its 430 on an H200);
#   f16 in the tiled elementwise rung: 66.7% of memcpy where bf16 made 91.9% and f16 contiguous 93.8% (session 13 d);
#           6c5b1f7 (the pairs stored packed, the constant pitch) is not run yet: the select bench's run of the
#           elementwise bench below, then ncu over one launch each (lab/ew_half_probe.lua), warp states and
#           instruction statistics;
#   the index ladder's rung 3 (flags: an own compaction, session 13, checked on the CPU only): the select specs and the
#           compaction rows of the select bench with CUKERN_IX_FLAGS=1 (cub leaves nonzero and masked_select to it);
#           if they pass and it beats cub, its rank in kernels/index/rungs.def goes before cub's;
#   the scan look-back's sleeps on this card (lab/scan_delay.lua, rung 6 at 2^28: H100-tuned 2200/688 gave 94.6% of
#           CUB on an H200);
#   the spec files the suite of session 13's run a did not finish: map_dtypes, sort, core, reduce; and linalg_spec
#           (its complex solve/inv of 2 x 96x96 goes through cuBLAS's batched C/Z LU since 61996e8).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round14-a.sh
set -u
. lab/run_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
build_sm90
timeout 90 python3 bench/torch_select.py --out "$R/torch_select.json" > "$R/torch_select.log" 2>&1; log "torch select rc=$?"
mkdir -p "$R/sel"
CUKERN_RESULTS="$R/sel" timeout 90 lua5.4 examples/select_bench.lua --torch "$R/torch_select.json" > "$R/select.txt" 2>&1
log "select rc=$?"; grep -E "^(where|cat|stack|index_select|nonzero)" "$R/select.txt"
timeout 40 lua5.4 lab/select_host.lua > "$R/select_host.txt" 2>&1; log "select host rc=$?"; cat "$R/select_host.txt"
# the index ladder's rung 3 (flags, session 13, not run on a GPU yet) in cub's place: its specs first, then the bench
mkdir -p "$R/sel-flags"
CUKERN_IX_FLAGS=1 timeout 120 sh spec/run.sh spec/select_spec.lua spec/select_paths_spec.lua > "$R/spec-flags.txt" 2>&1
log "select specs with flags rc=$? $(tail -1 "$R/spec-flags.txt")"
CUKERN_IX_FLAGS=1 CUKERN_RESULTS="$R/sel-flags" timeout 60 lua5.4 examples/select_bench.lua --torch "$R/torch_select.json" \
  --only "masked,nonzero,find" > "$R/select-flags.txt" 2>&1; log "select flags rc=$?"
grep -E "^(masked|nonzero|find)" "$R/select-flags.txt"
mkdir -p "$R/ew" "$R/ew-before"
CUKERN_EW_VARIANTS=contiguous,tiled CUKERN_RESULTS="$R/ew" timeout 40 lua5.4 examples/elementwise_bench.lua > "$R/ew.txt" 2>&1
CUKERN_EW_PAIRS=0 CUKERN_EW_VARIANTS=tiled CUKERN_RESULTS="$R/ew-before" timeout 40 lua5.4 examples/elementwise_bench.lua \
  > "$R/ew-before.txt" 2>&1
log "ew bench"; grep -E "^ *(-2|2|3) .*(memcpy|f16|bf16)" "$R/ew.txt" "$R/ew-before.txt"
if command -v ncu > /dev/null; then
  for dt in f16 bf16; do
    timeout 90 ncu --clock-control none -k regex:ew_wide --launch-skip 2 --launch-count 1 --section SpeedOfLight \
      --section WarpStateStats --section InstructionStats --section Occupancy lua5.4 lab/ew_half_probe.lua "$dt" \
      > "$R/ncu-tiled-$dt.txt" 2>&1
    log "ncu $dt rc=$?"; grep -E "Memory Throughput|DRAM Throughput|Compute \(SM\)|Issue Slots Busy|Stall|Executed Ipc" "$R/ncu-tiled-$dt.txt" | head -12
  done
fi
for d in "2200 688" "1500 500" "1100 350" "800 250"; do
  set -- $d
  CUKERN_SCAN_DELAY=$1 CUKERN_SCAN_POLL=$2 timeout 40 lua5.4 lab/scan_delay.lua >> "$R/scan_delay.txt" 2>&1
done
log "scan delay sweep"; grep -E "2\^28|268435456" "$R/scan_delay.txt" | head -8
par_specs "spec/select_spec.lua spec/badinput_spec.lua spec/linalg_spec.lua spec/map_dtypes_spec.lua spec/sort_spec.lua \
  spec/core_spec.lua spec/reduce_spec.lua" 7 $((570 - $(date +%s) + T0))
log done
