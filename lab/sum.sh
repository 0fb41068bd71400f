#!/usr/bin/env bash
# lab/sum.sh — whole-array f32 sum: configurations of the single_pass rung (kernels/reduce/
# 09_single_pass.cu, the rung's own kernels and launcher) against cub::DeviceReduce::Sum, same run.
#
#   OUT=/some/dir bash lab/sum.sh            (from the repository root, on the H100)
#
# Builds build/exp/sum_sweep (two nvcc jobs in parallel, ~30-60 s), validates every variant against host
# double sums (full arrays 2^22..2^28, misaligned odd lengths, rows), times 2^22, 2^24, 2^26, 2^27, 2^28
# floats in 30 alternating pairs with CUB per variant and size (% of CUB = median(CUB) / median(variant) of
# those pairs; inputs rotated through a 1 GiB pool so no call finds its input in L2), and dumps the SASS of
# CUB's kernel and a few configurations. Expected wall time ~60-90 s. Full output: $OUT/sum.txt, SASS:
# $OUT/sum_sass.txt, ptxas: $OUT/sum_ptxas.txt; then the library path (lab/sum_lib.lua: ck.sum with
# variant cub / shuffle_vec / single_pass at 2^24..2^28, if lua5.4 and cukern/core.so are there).
# A table (% of CUB per size; CUB's row in GB/s) last on stdout, <= 40 lines, ending with the rule's pick:
#   RULE: among the rung's configurations (rows with an sp::Cfg) valid everywhere and >= 97% of CUB at every
#   size (2^22 included), the best mean % over 2^24, 2^26, 2^27, 2^28; if none qualifies, the best minimum.
#   The printed "using SpDefault = ...;" is the one-line change to kernels/reduce/09_single_pass.cu.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/exp/out}
mkdir -p "$OUT" build/exp
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
F="-O3 -lineinfo -std=c++17 -gencode arch=compute_90a,code=sm_90a -Ikernels -Isrc --expt-relaxed-constexpr"
t0=$(date +%s)
$NVCC $F -Xptxas -v -c lab/sum_sweep.cu -o build/exp/sum_sweep.o 2> build/exp/sum_ptxas.txt &
p1=$!
$NVCC $F -c kernels/reduce/08_shuffle_vec.cu -o build/exp/sum_08.o &
p2=$!
wait $p1 || { echo "sum_sweep.cu failed to build:"; tail -20 build/exp/sum_ptxas.txt; exit 1; }
wait $p2 || { echo "08_shuffle_vec.cu failed to build"; exit 1; }
$NVCC $F build/exp/sum_sweep.o build/exp/sum_08.o -o build/exp/sum_sweep || exit 1
cp build/exp/sum_ptxas.txt "$OUT/sum_ptxas.txt"
echo "built in $(( $(date +%s) - t0 )) s" > "$OUT/sum.txt"

timeout 80 ./build/exp/sum_sweep "$@" >> "$OUT/sum.txt" 2>&1
rc=$?
echo "sum_sweep exit $rc, total $(( $(date +%s) - t0 )) s" >> "$OUT/sum.txt"

# The library path (ck.sum through the dispatcher), if the Lua module is built here.
if command -v lua5.4 >/dev/null && [ -f cukern/core.so ]; then
  timeout 40 lua5.4 lab/sum_lib.lua >> "$OUT/sum.txt" 2>&1
  echo "sum_lib exit $?, total $(( $(date +%s) - t0 )) s" >> "$OUT/sum.txt"
else
  echo "sum_lib skipped (no lua5.4 or cukern/core.so)" >> "$OUT/sum.txt"
fi

# SASS of the f32 sum kernels: CUB's, the rung's default and a few configurations.
if command -v cuobjdump >/dev/null || [ -x "$CUDA_HOME/bin/cuobjdump" ]; then
  CUOBJ=$(command -v cuobjdump || echo "$CUDA_HOME/bin/cuobjdump")
  "$CUOBJ" -sass build/exp/sum_sweep.o | c++filt | awk '
    /Function :/ { keep = ($0 ~ /DeviceReduceKernel<.*float const\*/) ||
                   ($0 ~ /reduce_single_pass_kernel<ckred::ArithOp<float, 0>, sp::Cfg<256, 4, 8, 5, [02], 16, 0>/) ||
                   ($0 ~ /reduce_single_pass_kernel<ckred::ArithOp<float, 0>, sp::Cfg<256, 16, 8, 5, 2, 4, 0>/) }
    keep { print }' > "$OUT/sum_sass.txt"
  echo "SASS: $(grep -c 'Function :' "$OUT/sum_sass.txt") kernels in $OUT/sum_sass.txt" >> "$OUT/sum.txt"
fi

# CUB's registers from ptxas (its kernel is not ours to query): DeviceReduceKernel over float const*.
cub_regs=$(c++filt < build/exp/sum_ptxas.txt | awk '/Compiling entry function/ { k = ($0 ~ /DeviceReduceKernel<.*float const\*/) }
  k && /Used/ { for (i = 1; i <= NF; ++i) if ($i == "registers,") print $(i-1); k = 0 }' | head -1)
echo "CUB DeviceReduceKernel registers (ptxas): ${cub_regs:-?}" >> "$OUT/sum.txt"

grep "^built\|exit" "$OUT/sum.txt" | tr '\n' ';'
echo
echo "whole-array f32 sum: % of cub::DeviceReduce::Sum = median(CUB)/median(variant) of 30 alternating pairs (cub: GB/s)"
awk -v cubregs="${cub_regs:-0}" '
  /^device/ { print }
  /^INFO/ { regs[$2] = $4; blk[$2] = $9 }
  /^ROW/ { rows[++n] = $0 }
  END {
    printf "%-10s %4s %3s %7s %7s %7s %7s %7s\n", "variant", "regs", "b/S", "2^22", "2^24", "2^26", "2^27", "2^28"
    for (i = 1; i <= n; ++i) {
      split(rows[i], f, " "); v = f[2]
      r = (v in regs) ? regs[v] : (v == "cub" ? cubregs : "-")
      b = (v in blk) ? blk[v] : (v == "cub" && cubregs > 0 ? int(65536 / (256 * cubregs)) : "-")
      if (b != "-" && b > 8 && v == "cub") b = 8
      line = sprintf("%-10s %4s %3s", v, r, b)
      for (j = 3; j <= 7; ++j) line = line sprintf(" %7s", f[j] == "FAILED" ? "FAILED" : (v == "cub" ? f[j] "G" : f[j] "%"))
      print line
    }
  }' "$OUT/sum.txt"
# library path: one line per variant, GB/s (% of the library's cub) at each size it ran
awk '/^LIB/ && / GB\/s/ { sub(/n=/, "", $3); c[$2] = c[$2] sprintf("  %s %6.0f %5.1f%%", $3, $6, $8) }
     /^LIB/ && /FAILED/ { c[$2] = c[$2] "  " $3 " FAILED" }
     END { for (v in c) printf "lib %-12s%s\n", v, c[v] }' "$OUT/sum.txt" | sort
grep "^FAILED" "$OUT/sum.txt" | head -3
grep "^RULE" "$OUT/sum.txt"
exit $rc
