#!/usr/bin/env bash
# lab/mmapeak.sh — experiment, track `mmapeak`: measured ceilings of mma.sync / wmma on this GPU beside
# cuBLAS (part 1), and rung 10's bf16 WMMA beside its f16 (part 2).
#
# Part 1: lab/mma_peak.cu (built here, ~10 s): validation of one instruction per kind against a host
# reference, cuBLAS 8192^3 bf16 / f16 / TF32, then register-only throughput loops of mma.sync m16n8k16
# bf16/f16, m16n8k8 tf32 and wmma m16n16k16 bf16/f16 over warps per SM x independent accumulator chains, and
# ldmatrix.x4 + mma.sync loops (operands reloaded from shared memory every k step). ~15 s.
# Part 2: lab/wmma_bf16.cu (built here, ~15 s; it #includes kernels/matmul/10_wmma.cu, the rung as it is):
# calibration of the f16/bf16 fragment element maps, validation of the rung in bf16 and f16, timings at 4096^3
# and 8192^3 vs cuBLAS in the same dtype; SASS census (cuobjdump) of the rung's W3 kernels, bf16 ("rung") and
# f16 ("rung_f16"): LDSM / MOVM per k loop. (The other bf16 fragment loads of run 1, copies of the rung's
# kernel, are in git: 8c95728:bench/exp/wmma_bf16.cu.) ~30 s.
# Expected wall time: ~80 s. Output: $OUT/mmapeak.txt (everything); the short table is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
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
if "$NVCC" "${NVFLAGS[@]}" -Xptxas -v -o build/exp/mma_peak lab/mma_peak.cu -lcublas >"$OUT/mma_peak_build.txt" 2>&1; then
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

# ---- part 2: rung 10 in bf16 and f16
rc2=0
if "$NVCC" "${NVFLAGS[@]}" -Ikernels -Ikernels/matmul --expt-relaxed-constexpr -Xptxas -v -o build/exp/wmma_bf16 \
     lab/wmma_bf16.cu -lcublas >"$OUT/wmma_bf16_build.txt" 2>&1; then
  grep 'spill stores' "$OUT/wmma_bf16_build.txt" | grep -v ' 0 bytes spill stores' | sed 's/^/# SPILL (wmma_bf16): /' >>"$log"
  timeout 100 build/exp/wmma_bf16 >>"$log" 2>&1
  rc2=$?
else
  echo "wmma_bf16 BUILD FAILED" >>"$log"; cat "$OUT/wmma_bf16_build.txt" >>"$log"; rc2=1
fi
objdump=$(command -v cuobjdump || echo "$CUDA_HOME/bin/cuobjdump")
if [ -x "$objdump" ] && [ -x build/exp/wmma_bf16 ]; then
  echo "# SASS census (loop/hmma = instructions from the first to the last HMMA, per HMMA)" >>"$log"
  "$objdump" -sass build/exp/wmma_bf16 2>/dev/null | awk '
    function flush() {
      if (name != "" && hmma > 0) {
        n = name
        if (n ~ /matmul_wmma_kernel.*ILi128ELi128ELi64ELi64ELi64ELi3ELi2ELi8EEE13__nv_bfloat16Lb1/) n = "rung"
        else if (n ~ /matmul_wmma_kernel.*ILi128ELi128ELi64ELi64ELi64ELi3ELi2ELi8EEE6__halfLb1/) n = "rung_f16"
        else n = ""
        if (n != "") printf "sass %-11s hmma %4d ldsm %4d lds %4d movm %4d ldgsts %4d bar %3d stl %3d total %5d loop/hmma %.2f\n",
               n, hmma, ldsm, lds, movm, ldg, bar, stl, tot, (last - first + 1) / hmma
      }
    }
    /Function :/ { flush(); name = $3; hmma = ldsm = lds = movm = ldg = bar = stl = tot = 0; first = last = -1; next }
    /^[ \t]*\/\*[0-9a-f]+\*\/ / {
      tot++
      if ($0 ~ /HMMA/) { hmma++; if (first < 0) first = tot; last = tot }
      if ($0 ~ /LDSM/) ldsm++
      else if ($0 ~ /[^A-Z]LDS[ .]/) lds++
      if ($0 ~ /MOVM/) movm++
      if ($0 ~ /LDGSTS/) ldg++
      if ($0 ~ /BAR\.SYNC/) bar++
      if ($0 ~ /STL/) stl++
    }
    END { flush() }' >>"$log"
else
  echo "# no cuobjdump: SASS census skipped" >>"$log"
fi
t2=$(date +%s)
echo "# part 2 rc $rc2, $((t2 - t1)) s; total $((t2 - t0)) s" >>"$log"

# ---- summary
echo "== mmapeak: part 1 rc $rc1 ($((t1 - t0)) s), part 2 rc $rc2 ($((t2 - t1)) s); full output in $log"
grep -m 5 'FAIL\|SPILL\|warning' "$log" | cut -c1-160
grep '^check ' "$log" | grep -v 1000x1100 | sed -E 's/^check +//; s/ mma.sync//; s/ +\(max.*//; s/  +/ /g' | paste -sd'|' | sed 's/^/check: /' | cut -c1-200
grep '^cublas' "$log" | cut -c1-160
sed -n '/== summary/,/^validation:/p' "$log" | grep -v '^==' | sed 's/ flop\/clk\/SM/ f\/clk/; s/clk\/inst\/SMSP/cpi/' | cut -c1-170
grep '^calib' "$log" | cut -c1-150
grep '^check .*1000x1100' "$log" | sed -E 's/^check +//; s/ +1000x1100x1030 max rel err /:/; s/, 2048\^3 sampled /\//; s/: (ok|FAILED)$/ \1/' | paste -sd'|' | sed 's/^/check2: /' | cut -c1-200
grep '^speed\|^sass' "$log" | sed 's/ TFLOP\/s/ TF/' | cut -c1-150
[ $rc1 -ne 0 ] && exit $rc1
exit $rc2
