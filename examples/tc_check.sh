#!/usr/bin/env bash
# tc_check.sh — build examples/tc_check.cu with the tensor-core rungs and the cuBLAS reference (sm_90a) and run
# it; output goes to $OUT/tc_check.log as well when OUT is set. Works from the repository (examples/ beside
# kernels/) or from a flat folder holding tc_check.cu, ck_kernels.h, mm_tc.cuh and the three .cu files.
# A prebuilt binary (build/tc_check in the repository, ./tc_check in a flat folder) newer than every source is
# run as it is (TC_REBUILD=1 forces a build; TC_USE_PREBUILT=1 runs an existing one whatever the dates).
# Extra arguments go to the program (--check: correctness only; --speed: timings only).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$here/11_mma_sync.cu" ]; then # a flat copy
  inc="-I$here"; src="$here"; bin="$here/tc_check"
else # in the repository: the binary goes to build/ (ignored)
  inc="-I$here/../kernels"; src="$here/../kernels/matmul"; bin="$here/../build/tc_check"
  mkdir -p "$here/../build"
fi
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
ARCH=${CUDA_ARCH:-90a}
sources=("$here/tc_check.cu" "$src/00_cublas.cu" "$src/10_wmma.cu" "$src/11_mma_sync.cu")
stale=${TC_REBUILD:-0}
[ -x "$bin" ] || stale=1
for f in "${sources[@]}" "$src/mm_tc.cuh"; do [ "$f" -nt "$bin" ] && stale=1; done
[ "${TC_USE_PREBUILT:-0}" = 1 ] && [ -x "$bin" ] && stale=0 # e.g. built here, copied to a GPU host
if [ "$stale" != 0 ]; then
  echo "building $bin (sm_$ARCH)"
  "$NVCC" -O3 -lineinfo -std=c++17 -gencode arch=compute_$ARCH,code=sm_$ARCH $inc --expt-relaxed-constexpr \
    -Xlinker -rpath -Xlinker "$CUDA_HOME/lib64" -o "$bin" "${sources[@]}" -lcublas --threads 4
fi
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  "$bin" "$@" 2>&1 | tee "$OUT/tc_check.log"
  exit "${PIPESTATUS[0]}"
fi
exec "$bin" "$@"
