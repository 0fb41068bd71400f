#!/bin/bash
# For round 3 session 13, on a 4-GPU host (issues 31 and 38): d135e18's warm-up (both sides of the scaling table warm
# every device for 100 ms before timing) measured; results: bench/results/round13/x4/.
#   fresh sm_90a build; on all GPUs: NCCL from C, PyTorch's split (bench/torch_multigpu.py), the scaling table beside
#   it, lab/split_probe.lua, the all-reduce ladder with the scaling rows merged (allreduce-4gpu-<device>.json); then on
#   two of them (CUDA_VISIBLE_DEVICES=0,1) the same (allreduce-<device>.json); the several-GPU specs last, in the time
#   left. The GPU count comes from the machine.
# While the two-GPU set runs on GPUs 0 and 1, GPUs 2 and 3 (a host of four or more) run issue 32's and 34's one-GPU
# work, a GPU each (lane_select, lane_ew below: results in $R/i32-select/ and $R/i32-ew/): nothing of the two-GPU set
# touches them but the host's CPUs (64 on this kind). On a two-GPU host (when no four-GPU kind is lent) the set runs
# once, on both, and the lanes follow it on GPUs 0 and 1.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round13-x4.sh
set -u
. lab/run_env.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
NG=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv > "$R/device.txt" 2>&1; cat "$R/device.txt"
build_sm90 300
make -s bench-c > "$R/bench-c.log" 2>&1 || tail -5 "$R/bench-c.log"
timeout 60 build/bench/peer_ref > "$R/peer_c.jsonl" 2> "$R/peer_c.err"
. lab/multi_env.sh
# issue 32 on one GPU: PyTorch's select cases, then ours beside them (where: 4 groups a thread; index_select of rows:
# 8 units), then where and index_select with the forms before (CUKERN_IX_WHERE_U=1, CUKERN_IX_ROWS_U=4) and cat/stack
# with 50 reps; the selection specs (both kernels changed are in 02_vec.cu) until 470 s into the call
lane_select() {
  local D="$R/i32-select"; mkdir -p "$D/before" "$D/reps50"
  timeout 120 python3 bench/torch_select.py --out "$D/torch_select.json" > "$D/torch.log" 2>&1; log "torch select rc=$?"
  CUKERN_RESULTS="$D" timeout 120 lua5.4 examples/select_bench.lua --torch "$D/torch_select.json" > "$D/select.txt" 2>&1
  log "select bench rc=$?"
  CUKERN_IX_WHERE_U=1 CUKERN_IX_ROWS_U=4 CUKERN_RESULTS="$D/before" timeout 60 lua5.4 examples/select_bench.lua \
    --only "where,index_select" --torch "$D/torch_select.json" > "$D/select-before.txt" 2>&1; log "select before rc=$?"
  CUKERN_RESULTS="$D/reps50" timeout 60 lua5.4 examples/select_bench.lua --only "cat,stack" --reps 50 \
    --torch "$D/torch_select.json" > "$D/select-reps50.txt" 2>&1; log "select reps50 rc=$?"
  for f in select_paths select; do
    until_s 470 || break
    timeout $((480 - $(date +%s) + T0)) sh spec/run.sh "spec/${f}_spec.lua" > "$D/spec-$f.txt" 2>&1; log "$f rc=$? $(tail -1 "$D/spec-$f.txt")"
  done
}
# issue 32's tiled rung in f16/bf16 (element pairs) and issue 34's batched LU up to order 128: the elementwise bench,
# then its tiled rung with CUKERN_EW_PAIRS=0 (the form before); lab/linalg_host; the linalg and elementwise GPU specs until 470 s
lane_ew() {
  local D="$R/i32-ew"; mkdir -p "$D/before"
  CUKERN_RESULTS="$D" timeout 90 lua5.4 examples/elementwise_bench.lua > "$D/ew.txt" 2>&1; log "ew bench rc=$?"
  CUKERN_EW_PAIRS=0 CUKERN_EW_VARIANTS=tiled CUKERN_RESULTS="$D/before" timeout 60 lua5.4 examples/elementwise_bench.lua \
    > "$D/ew-before.txt" 2>&1; log "ew before rc=$?"
  timeout 90 lua5.4 lab/linalg_host.lua > "$D/linalg_host.txt" 2>&1; log "linalg host (ck) rc=$?"
  timeout 90 python3 lab/linalg_host.py >> "$D/linalg_host.txt" 2>&1; log "linalg host (torch) rc=$?"
  grep -E "inv .*(100x128|2x512)" "$D/linalg_host.txt"
  for f in linalg_gpu elementwise; do
    until_s 470 || break
    timeout $((480 - $(date +%s) + T0)) sh spec/run.sh "spec/${f}_spec.lua" > "$D/spec-$f.txt" 2>&1; log "$f rc=$? $(tail -1 "$D/spec-$f.txt")"
  done
}
run_set "$NG" "$NG" "$R"
if [ "$NG" -ge 4 ]; then
  CUDA_VISIBLE_DEVICES=2 lane_select > "$R/lane-select.log" 2>&1 &
  CUDA_VISIBLE_DEVICES=3 lane_ew > "$R/lane-ew.log" 2>&1 &
  CUDA_VISIBLE_DEVICES=0,1 run_set 2 2 "$R/two"
else # a two-GPU host: the set above was the two-GPU one; the lanes after it
  CUDA_VISIBLE_DEVICES=0 lane_select > "$R/lane-select.log" 2>&1 &
  CUDA_VISIBLE_DEVICES=1 lane_ew > "$R/lane-ew.log" 2>&1 &
fi
wait
grep -E "where|index_select|cat64|stack16|nonzero_1d_sparse" "$R/i32-select/select.txt" | head -12
grep -E "f16|bf16" "$R/i32-ew/ew.txt" "$R/i32-ew/ew-before.txt" | head -12
left=$((565 - ($(date +%s) - T0))); [ "$left" -lt 10 ] && left=10
spec() { timeout "$left" sh spec/run.sh "spec/$1_spec.lua" > "$R/$1.txt" 2>&1; log "$1 rc=$? $(tail -1 "$R/$1.txt")"; }
for f in devices collectives dist shard store multi_sanitize; do spec "$f" & done
wait
log done
