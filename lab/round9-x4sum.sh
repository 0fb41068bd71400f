#!/bin/bash
# Round 3, session 9, second 4-GPU call: lab/sum_probe.lua in this tree and in 01bb637's (ab/, as lab/round9-x4ab.sh
# unpacks it; not committed), twice each, after building both.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round9-x4sum.sh
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export R="$OUT/r" T0=$(date +%s); mkdir -p "$R"
trap 'tar czf "$OUT/r.tgz" -C "$OUT" r 2>/dev/null' EXIT
log() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$R/progress.txt"; }
nvidia-smi --query-gpu=index,name,driver_version --format=csv > "$R/device.txt" 2>&1
J=$(( $(nproc) / 2 ))
(timeout 330 make -j"$J" all CUDA_ARCH=90a > "$R/build-head.txt" 2>&1; echo "head rc=$?" >> "$R/progress.txt") &
(timeout 330 make -C ab -j"$J" all CUDA_ARCH=90a > "$R/build-ab.txt" 2>&1; echo "ab rc=$?" >> "$R/progress.txt") &
wait; log "builds done"
cp lab/sum_probe.lua ab/lab_sum_probe.lua
run() { # tree label
  (cd "$1" && LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}" \
    timeout 100 lua5.4 "$3" > "$R/sum-$2.txt" 2>&1); log "sum probe $2 rc=$?"; cat "$R/sum-$2.txt"
}
run . head1 lab/sum_probe.lua; run ab ab1 lab_sum_probe.lua; run . head2 lab/sum_probe.lua; run ab ab2 lab_sum_probe.lua
log done
