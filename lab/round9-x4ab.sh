#!/bin/bash
# Round 3, session 9, on a 4-GPU host: is the four-GPU scaling drop of session 8 (bf16 product 3.79x -> 3.26x, 8 GiB
# sum 3.58x -> 3.20x; every row 130-150 us slower) in our code or in the machine? The same call builds this tree and
# 01bb637 (the commit of the 3.79x run; its sources unpacked under ab/ by `git archive 01bb637 src kernels lua
# examples Makefile mk | tar -x -C ab`, not committed) and runs each one's examples/scaling_bench.lua in turn, twice,
# beside PyTorch's split (bench/torch_multigpu.py), then lab/split_probe.lua on this tree.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round9-x4ab.sh
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export R="$OUT/r" T0=$(date +%s); mkdir -p "$R"
trap 'tar czf "$OUT/r.tgz" -C "$OUT" r 2>/dev/null' EXIT
log() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$R/progress.txt"; }
NG=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=index,name,driver_version --format=csv > "$R/device.txt" 2>&1; cat "$R/device.txt"
J=$(( $(nproc) / 2 ))
(timeout 330 make -j"$J" all CUDA_ARCH=90a > "$R/build-head.txt" 2>&1; echo "head rc=$?" >> "$R/progress.txt") &
(timeout 330 make -C ab -j"$J" all CUDA_ARCH=90a > "$R/build-ab.txt" 2>&1; echo "ab rc=$?" >> "$R/progress.txt") &
wait; log "builds done"; tail -2 "$R/progress.txt"
timeout 200 python3 bench/torch_multigpu.py --gpus "$NG" --out "$R/torch.json" > "$R/torch.log" 2>&1; log "torch rc=$?"
run() { # tree label
  (cd "$1" && LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}" \
    CUKERN_RESULTS="$R" timeout 120 lua5.4 examples/scaling_bench.lua --torch "$R/torch.json" --out "$R/scaling-$2.json" \
    > "$R/scaling-$2.txt" 2>&1); log "scaling $2 rc=$?"; grep -E "GPU|bf16|sum|chain" "$R/scaling-$2.txt" | head -6
}
run . head1; run ab ab1; run . head2; run ab ab2
LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}" \
  timeout 100 lua5.4 lab/split_probe.lua > "$R/split_probe.txt" 2>&1; log "split probe rc=$?"; tail -30 "$R/split_probe.txt"
log done
