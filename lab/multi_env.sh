# lab/multi_env.sh — sourced (after lab/run_env.sh) by the several-GPU call scripts (lab/round13-x4.sh,
# lab/round14-x4.sh): run_set G LABEL DIR runs, on the GPUs visible, NCCL from C, PyTorch's split
# (bench/torch_multigpu.py), the scaling table beside it, lab/split_probe.lua and the all-reduce ladder with the
# scaling rows merged; until_s N says whether the call is younger than N seconds.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
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
until_s() { [ $(($(date +%s) - T0)) -lt "$1" ]; } # whether the call is younger than $1 seconds
