#!/usr/bin/env bash
# lab/allreduce.sh — the all-reduce rungs (kernels/allreduce/: gather, oneshot, ring) on the GPUs of this host:
# the checker, then the f32-sum benchmark. Needs >= 2 GPUs with peer access between every pair (one GPU: the
# rungs are only checked as no-ops). NCCL (rung 0) is not in it: it is timed elsewhere.
#
#   OUT=/some/dir bash lab/allreduce.sh [N]      (from the repository root; N GPUs, default all visible)
#
# Builds build/exp/allreduce_check (one nvcc, ~20 s on 2 cores; ptxas -v of every kernel in
# $OUT/allreduce_ptxas.txt), runs the checks (lab/allreduce_check.cu says what they are; full log
# $OUT/allreduce_check.txt; "N passed, N failed" and the failures on stdout), then --bench: per rung f32 sum at
# 1 MiB, 16 MiB, 256 MiB and 1 GiB per GPU, median of 10 after 3 warm-ups, one JSON line each (stdout and
# $OUT/allreduce_bench.jsonl). Exit status: the checker's (0 all passed, 1 failures, 2 CUDA error), else the
# benchmark's.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/exp/out}
mkdir -p "$OUT" build/exp
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$(command -v nvcc || echo "$CUDA_HOME/bin/nvcc")}
N=${1:-}
t0=$(date +%s)
$NVCC -arch=sm_90a -std=c++17 -O3 -Ikernels -Xptxas -v lab/allreduce_check.cu kernels/allreduce/*.cu \
  -o build/exp/allreduce_check 2> build/exp/allreduce_ptxas.txt ||
  { echo "allreduce_check failed to build:"; grep -v "^ptxas info" build/exp/allreduce_ptxas.txt | tail -20; exit 1; }
cp build/exp/allreduce_ptxas.txt "$OUT/allreduce_ptxas.txt"
echo "built in $(( $(date +%s) - t0 )) s; spills: $(grep -c '[1-9][0-9]* bytes spill' "$OUT/allreduce_ptxas.txt") kernels"
nvidia-smi topo -m 2>/dev/null | head -12 > "$OUT/allreduce_topo.txt"

timeout 300 ./build/exp/allreduce_check $N > "$OUT/allreduce_check.txt" 2>&1
rc=$?
grep "^#" "$OUT/allreduce_check.txt"
grep "^not ok" "$OUT/allreduce_check.txt" | head -20
tail -1 "$OUT/allreduce_check.txt"
echo "check exit $rc after $(( $(date +%s) - t0 )) s"
[ $rc -ne 0 ] && exit $rc

timeout 200 ./build/exp/allreduce_check $N --bench 2>&1 | tee "$OUT/allreduce_bench.jsonl" | grep -v "^#"
rc=${PIPESTATUS[0]}
echo "bench exit $rc after $(( $(date +%s) - t0 )) s"
exit $rc
