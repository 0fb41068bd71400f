#!/usr/bin/env bash
# lab/mmatune.sh — experiment, track `mmatune` (issue 13): rung 11 (mma_sync) configurations in bf16 and
# TF32 against cuBLAS.
#
# Builds examples/tc_check.cu with 00_cublas, 10_wmma and 11_mma_sync (as examples/tc_check.sh does, plus
# -Xptxas -v: spills are reported) into build/exp/tc_tune, then runs `tc_tune --tune`:
#   part 1: mma_sync's default on tc_check's awkward shapes, and EVERY configuration (CUKERN_MM_CFG=0..7) on
#           five tail-heavy shapes, in bf16, f16 and TF32 (both output dtypes), against a host f64 reference;
#   tune:   bf16 and TF32 at 8192^3, the default and every configuration, at 4096^3 the default; each timed in
#           alternating launches with cuBLAS (rung, cuBLAS, rung, ...), 3 warm-up pairs + 15 pairs, medians;
#           % of cuBLAS = median of the per-pair ratios; each timed configuration checked on 64 sampled elements.
# Then a SASS census per kernel (cuobjdump): HMMA / LDSM / LDS / LDGSTS / BAR / IMAD / IADD counts and the
# instructions per HMMA between a kernel's first and last HMMA (the unrolled k loop).
# Then, while time is left (NCU_BUDGET s from the start, default 145), ncu of NCU_CFGS ("kind:cfg ...", default
# "bf16:0 bf16:6": shared-memory wavefronts, HMMA pipe, stalls) and, per NCU_SRC ("kind:cfg ..."), warp-state
# samples per SASS instruction ($OUT/mmatune_src.csv); SASS_KEEP=<regex> keeps those kernels' whole SASS (gzipped).
# Expected wall time: ~50 s build (16 cores) + ~35 s checks + ~10 s timing + ~5 s census + ncu (cut at 145 s).
# Output: $OUT/mmatune.txt (everything), $OUT/mmatune_{sass,build,ncu}.txt; short table last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/mmatune_out}
mkdir -p "$OUT" build/exp
log=$OUT/mmatune.txt
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
ARCH=${CUDA_ARCH:-90a}
bin=build/exp/tc_tune
t0=$(date +%s)
{
  echo "# mmatune experiment, $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv,noheader 2>/dev/null || true
} >"$log"
rc=0
if [ "${TUNE_USE_PREBUILT:-0}" = 1 ] && [ -x "$bin" ]; then
  echo "# using prebuilt $bin" >>"$log"
elif ! nice "$NVCC" -O3 -lineinfo -std=c++17 -gencode arch=compute_$ARCH,code=sm_$ARCH -Ikernels --expt-relaxed-constexpr \
    -Xptxas -v -Xlinker -rpath -Xlinker "$CUDA_HOME/lib64" -o "$bin" examples/tc_check.cu kernels/matmul/00_cublas.cu \
    kernels/matmul/10_wmma.cu kernels/matmul/11_mma_sync.cu -lcublas --threads 8 >"$OUT/mmatune_build.txt" 2>&1; then
  echo "BUILD FAILED" | tee -a "$log"; tail -30 "$OUT/mmatune_build.txt"; exit 1
fi
awk '/Function properties for/ { f = $NF } / bytes spill stores/ && !/ 0 bytes spill stores/ && f ~ /mma_sync/ { print "# SPILL: " f ": " $0 }' \
  "$OUT/mmatune_build.txt" >"$OUT/mmatune_spills.txt" 2>/dev/null
spills=$(wc -l <"$OUT/mmatune_spills.txt")
echo "# build $(( $(date +%s) - t0 )) s; mma_sync kernels with spills: $spills" >>"$log"
cat "$OUT/mmatune_spills.txt" >>"$log"
t1=$(date +%s)
timeout ${TUNE_TIMEOUT:-120} "$bin" --tune >>"$log" 2>&1
rc=$?
t2=$(date +%s)
echo "# tc_tune --tune exit status $rc, $((t2 - t1)) s" >>"$log"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader 2>/dev/null | sed 's/^/# after: /' >>"$log"

# SASS census of the mma_sync kernels (names shortened to the Cfg template arguments).
objdump=$(command -v cuobjdump || echo "$CUDA_HOME/bin/cuobjdump")
sass=$OUT/mmatune_sass.txt
if [ -x "$objdump" ] && [ -x "$bin" ]; then
  "$objdump" -sass "$bin" 2>/dev/null | awk '
    function flush() {
      if (name ~ /mma_sync/ && hmma > 0) {
        m = s = i = a = 0
        for (x = first; x <= last; x++) { if (op[x] == "m") m++; else if (op[x] == "s") s++; else if (op[x] == "i") i++; else if (op[x] == "a") a++ }
        n = name; sub(/.*matmul_mma_sync_/, "", n); sub(/_?kernel/, "", n); sub(/INS_3CfgI/, " ", n); gsub(/E?Li/, " ", n)
        sub(/EEEvN4cktc6TcArgsEll$/, "", n); kind = n ~ /^tf32/ ? "tf32" : n ~ /__nv_bfloat16/ ? "bf16" : "f16"
        sub(/^tf32/, "", n); sub(/E+(13__nv_bfloat16|6__half)?Lb/, " vec=", n); gsub(/E+/, " ", n); n = kind " " n
        printf "%-54s hmma %4d ldsm %3d lds %3d ldgsts %3d bar %2d stl %2d | k loop/hmma: all %.2f ldsm %.2f lds %.2f imad %.2f iadd %.2f other %.2f\n",
               substr(n, 1, 54), hmma, ldsm, lds, ldg, bar, stl, (last - first + 1) / hmma,
               m / hmma, s / hmma, i / hmma, a / hmma, (last - first + 1 - hmma - m - s - i - a) / hmma
      }
    }
    /Function :/ { flush(); name = $3; hmma = ldsm = lds = ldg = bar = stl = tot = 0; first = last = -1; delete op; next }
    /^[ \t]*\/\*[0-9a-f]+\*\/ / {
      tot++; k = "o"
      if ($0 ~ /HMMA/) { hmma++; if (first < 0) first = tot; last = tot; k = "h" }
      else if ($0 ~ /LDSM/) { ldsm++; k = "m" }
      else if ($0 ~ /[^A-Z]LDS[ .]/) { lds++; k = "s" }
      else if ($0 ~ /[^A-Z]IMAD/) k = "i"
      else if ($0 ~ /[^A-Z]IADD/) k = "a"
      if ($0 ~ /LDGSTS/) ldg++
      if ($0 ~ /BAR\.SYNC/) bar++
      if ($0 ~ /STL/) stl++
      op[tot] = k
    }
    END { flush() }' >"$sass"
  echo "# SASS census (dtype, Cfg: BM BN BK WM WN STAGES MINB PIPE RND GROUP, vec; k loop = first..last HMMA):" >>"$log"
  cat "$sass" >>"$log"
else
  echo "# no cuobjdump: SASS census skipped" | tee "$sass" >>"$log"
fi
# ncu, while time is left (<= 145 s in all): bf16 8192^3 H0 (cfg 0) and H6 (cfg 6): is the shared-memory pipe the
# limit (l1tex shared wavefronts % of peak) and where do the warps stall.
NCU=$(command -v ncu || ls "$CUDA_HOME"/bin/ncu 2>/dev/null || true)
NCU_BUDGET=${NCU_BUDGET:-145} # seconds since the start after which no ncu run begins
ncu_out=$OUT/mmatune_ncu.txt
: >"$ncu_out"
if [ -n "$NCU" ] && [ -x "$bin" ]; then
  known=$("$NCU" --query-metrics --chip gh100 2>/dev/null | awk '{print $1}')
  mets=""
  for m in l1tex__data_pipe_lsu_wavefronts_mem_shared sm__inst_executed_pipe_tensor_op_hmma sm__pipe_shared_cycles_active \
           smsp__average_warps_issue_stalled_barrier_per_issue_active smsp__average_warps_issue_stalled_mio_throttle_per_issue_active \
           smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active \
           smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active smsp__average_warps_issue_stalled_wait_per_issue_active; do
    if printf '%s\n' "$known" | grep -qx "$m"; then
      case $m in smsp__average*) mets="$mets,$m.ratio" ;; *) mets="$mets,$m.avg.pct_of_peak_sustained_active" ;; esac
    fi
  done
  mets=${mets#,}
  for kc in ${NCU_CFGS:-bf16:0 bf16:6}; do
    kind=${kc%%:*} cfg=${kc#*:}
    left=$((NCU_BUDGET - ($(date +%s) - t0)))
    [ $left -gt 20 ] || { echo "(ncu $kind cfg $cfg skipped: ${left} s left)" >>"$ncu_out"; continue; }
    echo "== ncu $kind 8192^3 cfg $cfg" >>"$ncu_out"
    timeout $((left - 5)) "$NCU" --clock-control none -k regex:mma_sync --launch-skip 1 --launch-count 1 \
      ${mets:+--metrics "$mets"} "$bin" --prof $kind 8192 mma_sync $cfg 2 >>"$ncu_out" 2>&1
    echo "ncu rc=$?" >>"$ncu_out"
  done
  # NCU_SRC="kind:cfg ...": per-SASS-instruction warp-state samples (SourceCounters) of those kernels, as CSV
  for kc in ${NCU_SRC:-}; do
    kind=${kc%%:*} cfg=${kc#*:}
    left=$((NCU_BUDGET - ($(date +%s) - t0)))
    [ $left -gt 30 ] || { echo "(ncu source $kind cfg $cfg skipped: ${left} s left)" >>"$ncu_out"; continue; }
    rep=build/exp/src_${kind}_$cfg
    timeout $((left - 5)) "$NCU" --clock-control none -k regex:mma_sync --launch-skip 1 --launch-count 1 \
      --section SourceCounters --section WarpStateStats -f -o "$rep" "$bin" --prof $kind 8192 mma_sync $cfg 2 >>"$ncu_out" 2>&1
    echo "ncu source $kind cfg $cfg rc=$?" >>"$ncu_out"
    { echo "== source $kind cfg $cfg"; "$NCU" -i "$rep.ncu-rep" --page source --csv --print-source sass 2>&1 ||
        "$NCU" -i "$rep.ncu-rep" --page source --csv 2>&1; } >>"$OUT/mmatune_src.csv"
    "$NCU" -i "$rep.ncu-rep" --page details 2>&1 | sed -n '/Warp State Statistics/,/Section:/p' | head -40 >>"$ncu_out"
  done
  cat "$ncu_out" >>"$log"
fi
# SASS_KEEP=regex: the whole SASS of the kernels whose names match, gzipped
if [ -n "${SASS_KEEP:-}" ] && [ -x "$objdump" ]; then
  "$objdump" -sass "$bin" 2>/dev/null | awk -v re="$SASS_KEEP" '/Function :/ { keep = $0 ~ re } keep' | gzip >"$OUT/mmatune_sass_keep.txt.gz"
fi
t3=$(date +%s)
echo "# total $((t3 - t0)) s" >>"$log"

echo "== mmatune: $(grep -c ' ok ' "$log") ok lines, $(grep -c 'FAIL' "$log") FAIL lines, rc $rc, $((t3 - t0)) s, spilling kernels: ${spills:-?}"
grep -m 6 'FAIL\|SPILL' "$log" | cut -c1-170
# census: the bf16 and TF32 kernels of the 16-byte-copy path (vec=1), short
grep -v '^f16 ' "$sass" | grep 'vec=1 ' | awk '{ sub(/ +hmma.*\| k loop\/hmma:/, " |"); print }' | cut -c1-150 | head -14
awk '/^== ncu / { if (k) print k; k = $3 " " $4 " " $5; next }
     k && /(l1tex__data_pipe_lsu_wavefronts_mem_shared|sm__inst_executed_pipe_tensor_op_hmma|sm__pipe_shared_cycles|issue_stalled)/ {
       l = $1; sub(/smsp__average_warps_issue_stalled_/, "stall_", l); sub(/_per_issue_active.ratio/, "", l)
       sub(/l1tex__data_pipe_lsu_wavefronts_mem_shared.*/, "smem_wavefronts%", l); sub(/sm__inst_executed_pipe_tensor_op_hmma.*/, "hmma%", l)
       sub(/sm__pipe_shared_cycles_active.*/, "shared_pipe%", l); k = k " " l "=" $NF }
     /^ncu rc=/ { if (k) print k; k = "" } END { if (k) print k }' "$ncu_out" 2>/dev/null | cut -c1-220
sed -n '/== tune summary/,$p' "$log" | cut -c1-150
exit $rc
