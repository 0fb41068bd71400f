#!/bin/bash
# For round 3 session 14's first call, on a 4-GPU host (issue 38; issues 32, 33, 37 in lanes). Results:
# bench/results/round14/x4/.
#   fresh sm_90a build; on all GPUs: the set of lab/multi_env.sh (NCCL from C, PyTorch's split, the scaling table with
#   d135e18's warm-up, the split probe, the all-reduce ladder: allreduce-4gpu-<device>.json), then the several-GPU specs
#   on all GPUs; then at once, a lane each:
#     GPUs 0,1: the same set on two GPUs ($R/two), then lane_select on GPU 0;
#     GPU 2: lane_ew;   GPU 3: lane_gemm.
#   On a two-GPU host the set runs once, on both; lane_select then lane_gemm on GPU 0, lane_ew on GPU 1.
#   lab/round14-x4b.sh is the second call on the same warm machine (the whole suite over every GPU).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round14-x4.sh
set -u
. lab/run_env.sh
. lab/multi_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
NG=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv > "$R/device.txt" 2>&1; cat "$R/device.txt"
nvidia-smi topo -m > "$R/topo.txt" 2>&1
build_sm90 300
make -s bench-c > "$R/bench-c.log" 2>&1 || tail -5 "$R/bench-c.log"
timeout 60 build/bench/peer_ref > "$R/peer_c.jsonl" 2> "$R/peer_c.err"
# issue 32 (session 13's round14-a): PyTorch's select cases and ours beside them (19bb52a's where), the host time per
# call, then the index ladder's rung 3 (flags, checked on the CPU only) in cub's place: its specs, its compaction rows
lane_select() {
  local D="$R/sel"; mkdir -p "$D/all" "$D/flags"
  timeout 90 python3 bench/torch_select.py --out "$D/torch_select.json" > "$D/torch_select.log" 2>&1; log "torch select rc=$?"
  CUKERN_RESULTS="$D/all" timeout 90 lua5.4 examples/select_bench.lua --torch "$D/torch_select.json" > "$D/select.txt" 2>&1
  log "select rc=$?"; grep -E "^(where|cat|stack|index_select|nonzero|masked)" "$D/select.txt"
  timeout 40 lua5.4 lab/select_host.lua > "$D/select_host.txt" 2>&1; log "select host rc=$?"
  CUKERN_IX_FLAGS=1 timeout 120 sh spec/run.sh spec/select_spec.lua spec/select_paths_spec.lua > "$D/spec-flags.txt" 2>&1
  log "select specs with flags rc=$? $(tail -1 "$D/spec-flags.txt")"
  CUKERN_IX_FLAGS=1 CUKERN_RESULTS="$D/flags" timeout 60 lua5.4 examples/select_bench.lua --torch "$D/torch_select.json" \
    --only "masked,nonzero,find" > "$D/select-flags.txt" 2>&1; log "select flags rc=$?"
  grep -E "^(masked|nonzero|find)" "$D/select-flags.txt"
}
# issue 32's tiled rung in f16/bf16 (6c5b1f7: pairs stored packed, constant pitch; not run yet), with and without pairs;
# ncu over one tiled launch each of f16 and bf16; issue 33's look-back sleeps on this card (rung 6 at 2^28)
lane_ew() {
  local D="$R/ew"; mkdir -p "$D/now" "$D/before"
  CUKERN_EW_VARIANTS=contiguous,tiled CUKERN_RESULTS="$D/now" timeout 60 lua5.4 examples/elementwise_bench.lua > "$D/ew.txt" 2>&1
  CUKERN_EW_PAIRS=0 CUKERN_EW_VARIANTS=tiled CUKERN_RESULTS="$D/before" timeout 60 lua5.4 examples/elementwise_bench.lua \
    > "$D/ew-before.txt" 2>&1
  log "ew bench"; grep -E "^ *(-2|2|3) .*(memcpy|f16|bf16)" "$D/ew.txt" "$D/ew-before.txt"
  if command -v ncu > /dev/null; then
    for dt in f16 bf16; do
      timeout 90 ncu --clock-control none -k regex:ew_wide --launch-skip 2 --launch-count 1 --section SpeedOfLight \
        --section WarpStateStats --section InstructionStats --section Occupancy --section SourceCounters \
        lua5.4 lab/ew_half_probe.lua "$dt" > "$D/ncu-tiled-$dt.txt" 2>&1
      log "ncu $dt rc=$?"; grep -E "Memory Throughput|DRAM Throughput|Compute \(SM\)|Issue Slots Busy|Executed Ipc" "$D/ncu-tiled-$dt.txt" | head -8
    done
  fi
  for d in "2200 688" "1500 500" "1100 350" "800 250"; do
    set -- $d
    CUKERN_SCAN_DELAY=$1 CUKERN_SCAN_POLL=$2 timeout 40 lua5.4 lab/scan_delay.lua >> "$D/scan_delay.txt" 2>&1
  done
  log "scan delay sweep"; grep -E "2\^28|268435456" "$D/scan_delay.txt" | head -8
}
# issue 37's bf16 shape sweep (examples/gemm_sweep.lua): --quick, then the whole sweep until 575 s into the call
lane_gemm() {
  local D="$R/gemm"; mkdir -p "$D/quick" "$D/full"
  CUKERN_RESULTS="$D/quick" timeout 200 lua5.4 examples/gemm_sweep.lua --quick > "$D/gemm_quick.txt" 2>&1
  log "gemm sweep quick rc=$?"; tail -12 "$D/gemm_quick.txt"
  until_s 450 || return
  CUKERN_RESULTS="$D/full" timeout $((575 - $(date +%s) + T0)) lua5.4 examples/gemm_sweep.lua > "$D/gemm_full.txt" 2>&1
  log "gemm sweep full rc=$?"; tail -6 "$D/gemm_full.txt"
}
spec() { timeout 120 sh spec/run.sh "spec/$1_spec.lua" > "$R/$1.txt" 2>&1; log "$1 rc=$? $(tail -1 "$R/$1.txt")"; }
run_set "$NG" "$NG" "$R"
for f in devices collectives dist shard store multi_sanitize; do spec "$f" & done
wait
if [ "$NG" -ge 4 ]; then
  (CUDA_VISIBLE_DEVICES=0,1 run_set 2 2 "$R/two"; CUDA_VISIBLE_DEVICES=0 lane_select) > "$R/lane-select.log" 2>&1 &
  CUDA_VISIBLE_DEVICES=2 lane_ew > "$R/lane-ew.log" 2>&1 &
  CUDA_VISIBLE_DEVICES=3 lane_gemm > "$R/lane-gemm.log" 2>&1 &
else
  (CUDA_VISIBLE_DEVICES=0 lane_select; CUDA_VISIBLE_DEVICES=0 lane_gemm) > "$R/lane-select.log" 2>&1 &
  CUDA_VISIBLE_DEVICES=1 lane_ew > "$R/lane-ew.log" 2>&1 &
fi
wait
log done
