#!/bin/bash
# Round 3, session 11, on a 4-GPU host (issue 38, and issue 31's two-GPU rows on the same host): fresh sm_90a build;
# on all four GPUs, twice: NCCL from C, PyTorch's split (bench/torch_multigpu.py) and the scaling table beside it
# (examples/scaling_bench.lua --torch); the all-reduce ladder with the C references (allreduce-4gpu-<device>.json);
# then on two of the GPUs (CUDA_VISIBLE_DEVICES=0,1) the scaling rows, the all-reduce ladder and the device parity
# rows (under two/); last, the several-GPU specs on all four in the time left. The GPU count comes from the machine.
# Results: bench/results/round11/x4/.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round11-x4.sh
set -u
. lab/run_env.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
NG=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv > "$R/device.txt" 2>&1; cat "$R/device.txt"
nvidia-smi topo -m > "$R/topo.txt" 2>&1
timeout 330 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; grep -m3 error "$R/build.txt"
make -s bench-c > "$R/bench-c.log" 2>&1 || tail -5 "$R/bench-c.log"
timeout 60 build/bench/peer_ref > "$R/peer_c.jsonl" 2> "$R/peer_c.err"
scale() { # G label
  local G=$1 L=$2
  timeout 90 build/bench/nccl_ref "$G" > "$R/nccl_c-$L.jsonl" 2> "$R/nccl_c-$L.err"; log "nccl_ref $L rc=$? $(tail -1 "$R/nccl_c-$L.jsonl")"
  timeout 150 python3 bench/torch_multigpu.py --gpus "$G" --out "$R/torch-$L.json" > "$R/torch-$L.log" 2>&1
  log "torch $L rc=$?"; tail -4 "$R/torch-$L.log"
  CUKERN_RESULTS="$R" timeout 120 lua5.4 examples/scaling_bench.lua --torch "$R/torch-$L.json" --out "$R/scaling-$L.json" \
    > "$R/scaling-$L.txt" 2>&1
  log "scaling $L rc=$?"; tail -5 "$R/scaling-$L.txt"
}
scale "$NG" "${NG}a"
CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/allreduce_ladder.lua --nccl-c "$R/nccl_c-${NG}a.jsonl" \
  --peer-c "$R/peer_c.jsonl" --scaling "$R/scaling-${NG}a.json" > "$R/allreduce-$NG.txt" 2>&1
log "allreduce ladder rc=$?"; tail -14 "$R/allreduce-$NG.txt"
scale "$NG" "${NG}b"
export CUDA_VISIBLE_DEVICES=0,1
mkdir -p "$R/two"
scale 2 2a
CUKERN_RESULTS="$R/two" timeout 100 lua5.4 examples/allreduce_ladder.lua --nccl-c "$R/nccl_c-2a.jsonl" \
  --peer-c "$R/peer_c.jsonl" --scaling "$R/scaling-2a.json" > "$R/allreduce-2.txt" 2>&1
log "allreduce ladder (2) rc=$?"; tail -8 "$R/allreduce-2.txt"
CUKERN_RESULTS="$R/two" timeout 60 lua5.4 examples/device_parity.lua > "$R/parity-2.txt" 2>&1; log "parity (2) rc=$?"; tail -6 "$R/parity-2.txt"
unset CUDA_VISIBLE_DEVICES
# the several-GPU specs on all four, in the time left (the call's limit is 600 s)
left=$((565 - ($(date +%s) - T0))); [ "$left" -lt 10 ] && left=10
spec() { timeout "$left" sh spec/run.sh "spec/$1_spec.lua" > "$R/$1.txt" 2>&1; log "$1 rc=$? $(tail -1 "$R/$1.txt")"; }
for f in devices collectives dist shard store multi_sanitize; do spec "$f" & done
wait
for f in "$R"/*.txt; do grep -q "^[0-9]* passed, [1-9]" "$f" && grep -B1 -A14 "^FAIL\|^ERROR" "$f" | head -50; done
log done
