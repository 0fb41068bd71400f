#!/bin/bash
# Round 3, session 12, on a 4-GPU host: the diagnoses that need GPUs before the fixes (results:
# bench/results/round12/x4a/):
#   - issue 33: the scan look-back probe's fourth set (lab/scan_lookback_probe.cu, PROBE4: a wider look-back window,
#     its step and re-poll counts, the next tile's loads in flight by cp.async) on GPU 0, compiled on the build host
#     (.lab-bin/slp, carried: nothing to build for it here);
#   - issues 31/38: lab/split_probe.lua on two GPUs (CUDA_VISIBLE_DEVICES=0,1), then on all of them: where the bf16
#     split loses to PyTorch's (each half alone, the host time to issue, the split by hand);
#   - PyTorch's split beside it (bench/torch_multigpu.py) on 2 and on all GPUs.
# Fresh sm_90a build first. The GPU count comes from the machine.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round12-x4.sh
set -u
. lab/run_env.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
NG=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv > "$R/device.txt" 2>&1; cat "$R/device.txt"
(CUDA_VISIBLE_DEVICES=0 PROBE4=1 timeout 120 .lab-bin/slp 28 > "$R/scan_probe4.txt" 2>&1; echo "rc=$?" >> "$R/scan_probe4.txt") &
PROBE=$!
timeout 330 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; grep -m3 error "$R/build.txt"
wait $PROBE; log "scan probe done"; cat "$R/scan_probe4.txt"
for G in 2 "$NG"; do
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((G - 1)))
  timeout 120 lua5.4 lab/split_probe.lua > "$R/split-$G.txt" 2>&1; log "split probe ($G GPUs) rc=$?"; cat "$R/split-$G.txt"
  timeout 120 python3 bench/torch_multigpu.py --gpus "$G" --out "$R/torch-$G.json" > "$R/torch-$G.log" 2>&1
  log "torch ($G GPUs) rc=$?"; grep -i "matmul" "$R/torch-$G.log" | head -3
done
unset CUDA_VISIBLE_DEVICES
log done
