#!/usr/bin/env bash
# lab/sgemm.sh — sweep of the f32 CUDA-core matmul rung (kernels/matmul/09_double_buffer.cu) against
# cuBLAS SGEMM at 4096^3 and 8192^3, plus the SASS instruction mix of each configuration's k loop and an ncu
# profile of cuBLAS, the current default (config 0) and the sweep's best at 4096^3.
#
# Run from the repository root: OUT=/some/dir bash lab/sgemm.sh
# Expected wall time on the H100 host (16 cores): build ~20-30 s (16 slices of sgemm_cfgs.h compiled in
# parallel), sweep ~40 s (50 configurations x ~0.7 s; hard budget 60 s: configurations not started by then are
# SKIPPED), SASS stats ~5 s, ncu <= 45 s (skipped when ncu is missing or the time is gone): ~120 s in all.
# SGEMM_ONLY="0,4,50" times only those configurations (indices of sgemm_cfgs.h).
# Full output: $OUT/sgemm.txt (sweep table, cuBLAS spread, SASS mix, ncu). Stdout: a short summary, the top 15
# last.
set -u
OUT=${OUT:-/tmp/sgemm_out}
mkdir -p "$OUT" build/exp
LOG="$OUT/sgemm.txt"
: >"$LOG"
T0=$(date +%s)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
[ -x "$NVCC" ] || NVCC=nvcc
NVFLAGS="-O3 -lineinfo -std=c++17 -gencode arch=compute_90a,code=sm_90a -Ikernels -Isrc -Ilab --expt-relaxed-constexpr"
NPART=16

echo "== build ($(nproc) cores)" | tee -a "$LOG"
pids=()
for p in $(seq 0 $((NPART - 1))); do
  $NVCC $NVFLAGS -Xptxas -v -DPART=$p -DNPART=$NPART -c lab/sgemm_part.cu -o build/exp/sgemm_part$p.o \
    >build/exp/sgemm_part$p.log 2>&1 &
  pids+=($!)
done
$NVCC $NVFLAGS -c lab/sgemm_sweep.cu -o build/exp/sgemm_sweep.o >build/exp/sgemm_main.log 2>&1 &
pids+=($!)
fail=0
for pid in "${pids[@]}"; do wait "$pid" || fail=1; done
if [ $fail = 1 ]; then
  cat build/exp/sgemm_part*.log build/exp/sgemm_main.log | grep -iE "error" | head -20 | tee -a "$LOG"
  echo "BUILD FAILED" | tee -a "$LOG"
  exit 1
fi
$NVCC -gencode arch=compute_90a,code=sm_90a build/exp/sgemm_sweep.o build/exp/sgemm_part*.o -o build/exp/sgemm_sweep \
  -lcublas 2>&1 | tee -a "$LOG"
echo "build: $(($(date +%s) - T0)) s" | tee -a "$LOG"

echo "== sweep" >>"$LOG"
BUDGET=${SGEMM_BUDGET:-60}
build/exp/sgemm_sweep ${SGEMM_ONLY:+--only "$SGEMM_ONLY"} --sizes 4096,8192 --reps 10 --warmup 3 --budget "$BUDGET" --top 15 >"$OUT/sweep.txt" 2>&1
rc=$?
cat "$OUT/sweep.txt" >>"$LOG"
echo "sweep rc=$rc, at $(($(date +%s) - T0)) s" | tee -a "$LOG"
BEST=$(sed -n 's/^BEST \([0-9]*\) .*/\1/p' "$OUT/sweep.txt")
BESTNAME=$(sed -n 's/^BEST [0-9]* \(.*\)/\1/p' "$OUT/sweep.txt")

echo "== SASS: instruction mix of each configuration's main k loop (static counts; see lab/sass_stats.py)" >>"$LOG"
CUOBJDUMP=$CUDA_HOME/bin/cuobjdump
command -v "$CUOBJDUMP" >/dev/null 2>&1 || CUOBJDUMP=cuobjdump
if command -v "$CUOBJDUMP" >/dev/null 2>&1; then
  "$CUOBJDUMP" -sass build/exp/sgemm_sweep >"$OUT/sgemm_sweep.sass" 2>&1
  python3 lab/sass_stats.py <"$OUT/sgemm_sweep.sass" >"$OUT/sass_stats.txt" 2>&1
  cat "$OUT/sass_stats.txt" >>"$LOG"
  gzip -f "$OUT/sgemm_sweep.sass"
else
  echo "(no cuobjdump)" >>"$LOG"
fi
echo "== ptxas (registers, spills) per instantiation" >>"$LOG"
cat build/exp/sgemm_part*.log | grep -E "Compiling entry|Used|spill" >>"$LOG"

NCU=$(command -v ncu || ls "$CUDA_HOME"/bin/ncu 2>/dev/null || true)
LEFT=$((140 - ($(date +%s) - T0)))
echo "== ncu at 4096^3: config 0 (current default), config ${BEST:-?} (best), cuBLAS; ${LEFT} s left" >>"$LOG"
if [ -n "$NCU" ] && [ -n "$BEST" ] && [ $LEFT -gt 25 ]; then
  TO=$((LEFT - 8)); [ $TO -gt 60 ] && TO=60
  timeout $TO "$NCU" --target-processes all -k regex:'matmul_double_buffer|gemm|Gemm|xmma|cutlass' \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats \
    --section InstructionStats --section LaunchStats --section Occupancy \
    --metrics smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum \
    build/exp/sgemm_sweep --only "0,$BEST" --sizes 4096 --reps 1 --warmup 0 --novalidate >"$OUT/ncu.txt" 2>&1
  echo "ncu rc=$?" >>"$OUT/ncu.txt"
  cat "$OUT/ncu.txt" >>"$LOG"
else
  echo "(ncu skipped: ncu='${NCU}', best='${BEST:-}', ${LEFT} s left)" >>"$LOG"
fi
echo "total: $(($(date +%s) - T0)) s" >>"$LOG"

# ---- summary (stdout, <= 40 lines; the top 15 last)
echo "sgemm sweep: $(head -1 "$OUT/sweep.txt" | cut -c1-150)"
grep -E "^cublas " "$OUT/sweep.txt"
if [ -f "$OUT/sass_stats.txt" ]; then
  echo "SASS k-loop mix (static; config 0 = current default, then the best):"
  head -1 "$OUT/sass_stats.txt"
  grep -E "^128x128x16 w64x32 t8x8 s3 b2 g8 L0 I0 vec1 " "$OUT/sass_stats.txt"
  [ -n "${BESTNAME:-}" ] && grep -F "$BESTNAME vec1 " "$OUT/sass_stats.txt"
fi
if [ -f "$OUT/ncu.txt" ]; then
  echo "ncu at 4096, one line per kernel (ms, SM GHz, issue slots busy %, no-eligible %, FFMA thread-inst, warp-inst):"
  awk '/Context [0-9]+, Stream/ { if (k) print k; n = $0; sub(/^ +/, "", n); gsub(/\(anonymous namespace\)::/, "", n);
         sub(/matmul_double_buffer_kernel</, "ours<", n); k = substr(n, 1, 64); next }
       k && /^ +(Duration|SM Frequency|Issue Slots Busy|No Eligible|smsp__sass_thread_inst_executed_op_ffma_pred_on.sum|smsp__inst_executed.sum) / {
         l = $1 ~ /ffma/ ? "ffma" : $1 ~ /smsp__inst/ ? "inst" : $1 == "SM" ? "GHz" : $1 == "Issue" ? "busy%" : $1 == "No" ? "noelig%" : "ms";
         k = k " " l "=" $NF }
       END { if (k) print k }' "$OUT/ncu.txt" | head -8
fi
echo "total $(($(date +%s) - T0)) s; full output in \$OUT/sgemm.txt"
sed -n '/^## TOP/,/^BEST/p' "$OUT/sweep.txt" | grep -v "^BEST" | cut -c1-230 | head -22
