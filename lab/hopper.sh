#!/usr/bin/env bash
# Experiment: Hopper rungs 12-14 (all of 14's configurations) checked and timed against cuBLAS (bf16), then
# ncu (clock control none) on cuBLAS, rung 13 and rung 14's configurations 0 and 1 at 8192^3 (NCU_ONLY=1: only that).
set -uo pipefail
cd "$(dirname "$0")/.."
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
mkdir -p build/exp
K=kernels/matmul
"$CUDA_HOME/bin/nvcc" -O3 -lineinfo -std=c++17 -gencode arch=compute_90a,code=sm_90a -Ikernels -Isrc --expt-relaxed-constexpr \
  -Xlinker -rpath -Xlinker "$CUDA_HOME/lib64" -o build/exp/hopper_check lab/hopper_check.cu \
  $K/00_cublas.cu $K/10_wmma.cu $K/11_mma_sync.cu $K/12_wgmma_tma.cu $K/13_warp_specialized.cu $K/14_persistent.cu \
  -lcublas --threads 8 || exit 1
O=${OUT:-/tmp}/hopper.txt
[ -n "${NCU_ONLY:-}" ] && : >"$O" || build/exp/hopper_check ${HOPPER_ARGS:-} 2>&1 | tee "$O"
if [ -z "${NO_NCU:-}" ] && command -v ncu >/dev/null; then
  for v in "cublas -1" "warp_spec -1" "persistent 0" "persistent 1"; do
    echo "== ncu $v (bf16 8192^3)" | tee -a "$O"
    timeout 60 ncu --clock-control none -k regex:"gemm|xmma|sm90|matmul" --launch-skip 2 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
      --section ComputeWorkloadAnalysis build/exp/hopper_check --one $v 8192 8192 8192 2>&1 |
      grep -E "Duration|Throughput|Pipe|Stall|Issued|Active|Warp Cycles|Executed Ipc|SM Busy|  [a-z_0-9]+_kernel|gemm|xmma" | head -40 | tee -a "$O"
  done
fi
