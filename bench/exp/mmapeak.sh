#!/usr/bin/env bash
# bench/exp/mmapeak.sh — experiment, track `mmapeak`: measured ceilings of mma.sync / wmma on this GPU beside
# cuBLAS (part 1), and WMMA bf16 formulations for rung 10 (part 2).
#
# Part 1: bench/exp/mma_peak.cu (built here, ~10 s): validation of one instruction per kind against a host
# reference, cuBLAS 8192^3 bf16 / f16 / TF32, then register-only throughput loops of mma.sync m16n8k16
# bf16/f16, m16n8k8 tf32 and wmma m16n16k16 bf16/f16 over warps per SM x independent accumulator chains, and
# ldmatrix.x4 + mma.sync loops (operands reloaded from shared memory every k step). ~15 s.
# Part 2: see below (bench/exp/wmma_bf16.cu), when present.
# Expected wall time: ~60 s. Output: $OUT/mmapeak.txt (everything); the short table is printed last.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/mmapeak_out}
mkdir -p "$OUT" build/exp
log=$OUT/mmapeak.txt
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
ARCH=${CUDA_ARCH:-90a}
NVFLAGS=(-O3 -std=c++17 -gencode arch=compute_$ARCH,code=sm_$ARCH -Xlinker -rpath -Xlinker "$CUDA_HOME/lib64")
t0=$(date +%s)
{
  echo "# mmapeak experiment, $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv,noheader 2>/dev/null || true
} >"$log"

# ---- part 1: ceilings
rc1=0
if "$NVCC" "${NVFLAGS[@]}" -Xptxas -v -o build/exp/mma_peak bench/exp/mma_peak.cu -lcublas >"$OUT/mma_peak_build.txt" 2>&1; then
  grep -c 'spill stores' "$OUT/mma_peak_build.txt" | sed 's/^/# ptxas kernels: /' >>"$log"
  grep 'spill stores' "$OUT/mma_peak_build.txt" | grep -v ' 0 bytes spill stores' | sed 's/^/# SPILL: /' >>"$log"
  timeout 90 build/exp/mma_peak >>"$log" 2>&1
  rc1=$?
else
  echo "mma_peak BUILD FAILED" >>"$log"; cat "$OUT/mma_peak_build.txt" >>"$log"; rc1=1
fi
t1=$(date +%s)
echo "# part 1 rc $rc1, $((t1 - t0)) s" >>"$log"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader 2>/dev/null | sed 's/^/# after part 1: /' >>"$log"

# ---- summary
echo "== mmapeak: part 1 rc $rc1 ($((t1 - t0)) s); full output in $log"
grep -m 5 'FAIL\|SPILL\|warning' "$log" | cut -c1-160
grep '^check ' "$log" | sed -E 's/^check +//; s/ mma.sync//; s/ +\(max.*//; s/  +/ /g' | paste -sd'|' | sed 's/^/check: /' | cut -c1-200
grep '^cublas' "$log" | cut -c1-160
sed -n '/== summary/,/^validation:/p' "$log" | grep -v '^==' | sed 's/ flop\/clk\/SM/ f\/clk/; s/clk\/inst\/SMSP/cpi/' | cut -c1-170
exit $rc1
