#!/bin/bash
# For round 3 session 13, on a 4-GPU host (issues 31 and 38): d135e18's warm-up (both sides of the scaling table warm
# every device for 100 ms before timing) measured; results: bench/results/round13/x4/.
#   fresh sm_90a build; on all GPUs: NCCL from C, PyTorch's split (bench/torch_multigpu.py), the scaling table beside
#   it, lab/split_probe.lua, the all-reduce ladder with the scaling rows merged (allreduce-4gpu-<device>.json); then on
#   two of them (CUDA_VISIBLE_DEVICES=0,1) the same (allreduce-<device>.json); the several-GPU specs last, in the time
#   left. The GPU count comes from the machine.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round13-x4.sh
set -u
. lab/run_env.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
NG=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv > "$R/device.txt" 2>&1; cat "$R/device.txt"
build_sm90 300
make -s bench-c > "$R/bench-c.log" 2>&1 || tail -5 "$R/bench-c.log"
timeout 60 build/bench/peer_ref > "$R/peer_c.jsonl" 2> "$R/peer_c.err"
run_set() { # G label results-dir
  local G=$1 L=$2 D=$3
  mkdir -p "$D"
  timeout 90 build/bench/nccl_ref "$G" > "$R/nccl_c-$L.jsonl" 2> "$R/nccl_c-$L.err"; log "nccl_ref $L rc=$?"
  timeout 120 python3 bench/torch_multigpu.py --gpus "$G" --out "$R/torch-$L.json" > "$R/torch-$L.log" 2>&1; log "torch $L rc=$?"
  CUKERN_RESULTS="$R" timeout 120 lua5.4 examples/scaling_bench.lua --torch "$R/torch-$L.json" --out "$R/scaling-$L.json" \
    > "$R/scaling-$L.txt" 2>&1
  log "scaling $L rc=$?"; tail -4 "$R/scaling-$L.txt"
  timeout 60 lua5.4 lab/split_probe.lua > "$R/split-$L.txt" 2>&1; log "split probe $L rc=$?"; sed -n 1,9p "$R/split-$L.txt"
  CUKERN_RESULTS="$D" timeout 150 lua5.4 examples/allreduce_ladder.lua --nccl-c "$R/nccl_c-$L.jsonl" \
    --peer-c "$R/peer_c.jsonl" --scaling "$R/scaling-$L.json" > "$R/allreduce-$L.txt" 2>&1
  log "allreduce ladder $L rc=$?"; tail -6 "$R/allreduce-$L.txt"
}
run_set "$NG" "$NG" "$R"
CUDA_VISIBLE_DEVICES=0,1 run_set 2 2 "$R/two"
left=$((565 - ($(date +%s) - T0))); [ "$left" -lt 10 ] && left=10
spec() { timeout "$left" sh spec/run.sh "spec/$1_spec.lua" > "$R/$1.txt" 2>&1; log "$1 rc=$? $(tail -1 "$R/$1.txt")"; }
for f in devices collectives dist shard store multi_sanitize; do spec "$f" & done
wait
log done
