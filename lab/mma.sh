#!/usr/bin/env bash
# lab/mma.sh — experiment for the tensor-core rungs 10 (wmma) and 11 (mma_sync), track `mma`.
#
# Builds examples/tc_check.cu with 00_cublas, 10_wmma and 11_mma_sync (nvcc, sm_90a; ~40 s on 16 cores),
# runs it: part 1 checks every rung's default on awkward shapes and EVERY configuration (CUKERN_MM_CFG=<i>) on
# two tail-heavy shapes, in bf16, f16 and TF32, against a host f64 reference; part 2 (--quick) times cuBLAS and
# each rung's default at 4096^3 and 8192^3, and every configuration at 8192^3 (median of 10 after 3 warm-ups,
# % of cuBLAS in the same run; each timed configuration is also checked on sampled elements).
# Then, when cuobjdump is there, a SASS census per kernel (registers aside): instructions between a
# kernel's first and last HMMA (the unrolled k loop) per HMMA, and its HMMA / LDSM / LDS / LDGSTS / BAR counts.
# Then, when ncu is there and time is left, one profile each of the default mma_sync bf16 and TF32 kernels at
# 8192^3 (tc_check --prof; --clock-control none; SpeedOfLight, ComputeWorkloadAnalysis, WarpStateStats and the
# tensor-pipe / shared-memory metrics that this ncu knows for gh100).
# Expected wall time: ~40 s build + ~45 s run + ~5 s census + <= 50 s ncu (skipped past 140 s).
# Output: $OUT/mma.txt (everything), $OUT/mma_sass.txt (the census), $OUT/mma_ncu.txt; the short table is last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/mma_out}
mkdir -p "$OUT"
log=$OUT/mma.txt
t0=$(date +%s)
{
  echo "# mma experiment, $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit --format=csv,noheader 2>/dev/null || true
} >"$log"
# tc_check.sh tees to $OUT/tc_check.log when OUT is set: run it with OUT unset, into our log.
env -u OUT TC_REBUILD=1 bash examples/tc_check.sh --quick >>"$log" 2>&1
rc=$?
t1=$(date +%s)
echo "# tc_check exit status $rc, $((t1 - t0)) s (build + run)" >>"$log"

# SASS census of the rung kernels in the binary just built.
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
objdump=$(command -v cuobjdump || echo "$CUDA_HOME/bin/cuobjdump")
sass=$OUT/mma_sass.txt
if [ -x "$objdump" ] && [ -x build/tc_check ]; then
  "$objdump" -sass build/tc_check 2>/dev/null | awk '
    function flush() {
      if (name != "" && hmma > 0) {
        n = name; sub(/.*matmul_/, "", n); sub(/INS_3CfgI/, " ", n); gsub(/E?Li/, " ", n); sub(/EEEvN4cktc6TcArgsEll$/, "", n)
        printf "%-110s hmma %4d ldsm %4d lds %4d ldgsts %4d bar %3d stl %3d ldl %3d total %5d loop/hmma %.2f\n",
               substr(n, 1, 110), hmma, ldsm, lds, ldg, bar, stl, ldl, tot, (last - first + 1) / hmma
      }
    }
    /Function :/ { flush(); name = $3; hmma = ldsm = lds = ldg = bar = stl = ldl = tot = 0; first = last = -1; next }
    /^[ \t]*\/\*[0-9a-f]+\*\/ / {
      tot++
      if ($0 ~ /HMMA/) { hmma++; if (first < 0) first = tot; last = tot }
      if ($0 ~ /LDSM/) ldsm++
      else if ($0 ~ /[^A-Z]LDS[ .]/) lds++
      if ($0 ~ /LDGSTS/) ldg++
      if ($0 ~ /BAR\.SYNC/) bar++
      if ($0 ~ /STL/) stl++
      if ($0 ~ /LDL/) ldl++
    }
    END { flush() }' >"$sass"
  echo "# SASS census (per kernel; loop/hmma = instructions from the first to the last HMMA per HMMA):" >>"$log"
  cat "$sass" >>"$log"
else
  echo "# no cuobjdump: SASS census skipped" | tee "$sass" >>"$log"
fi

# ncu: the default mma_sync kernels at 8192^3 (the launch after one warm-up).
NCU=$(command -v ncu || ls "$CUDA_HOME"/bin/ncu 2>/dev/null || true)
ncu_out=$OUT/mma_ncu.txt
left=$((140 - ($(date +%s) - t0)))
if [ -n "$NCU" ] && [ -x build/tc_check ] && [ $left -gt 30 ]; then
  # only metrics this ncu knows (a wrong name makes ncu fail)
  known=$("$NCU" --query-metrics --chip gh100 2>/dev/null | awk '{print $1}')
  mets=""
  for m in sm__pipe_tensor_op_hmma_cycles_active sm__inst_executed_pipe_tensor_op_hmma sm__pipe_tensor_op_gmma_cycles_active \
           sm__pipe_shared_cycles_active; do
    printf '%s\n' "$known" | grep -qx "$m" && mets="$mets,$m.avg.pct_of_peak_sustained_active"
  done
  for m in l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld \
           smsp__inst_executed_pipe_tensor_op_hmma smsp__inst_executed; do
    printf '%s\n' "$known" | grep -qx "$m" && mets="$mets,$m.sum"
  done
  printf '%s\n' "$known" | grep -qx sm__cycles_elapsed && mets="$mets,sm__cycles_elapsed.avg.per_second"
  mets=${mets#,}
  echo "# ncu $("$NCU" --version 2>/dev/null | tail -1); metrics: ${mets:-none known}" >"$ncu_out"
  for kind in bf16 tf32; do
    left=$((140 - ($(date +%s) - t0)))
    [ $left -gt 15 ] || { echo "(ncu $kind skipped: ${left} s left)" >>"$ncu_out"; continue; }
    to=$((left - 5)); [ $to -gt 40 ] && to=40
    echo "== ncu $kind 8192^3 mma_sync default" >>"$ncu_out"
    timeout $to "$NCU" --clock-control none -k regex:mma_sync --launch-skip 1 --launch-count 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy \
      ${mets:+--metrics "$mets"} build/tc_check --prof $kind 8192 mma_sync -1 2 >>"$ncu_out" 2>&1
    echo "ncu rc=$?" >>"$ncu_out"
  done
  cat "$ncu_out" >>"$log"
else
  echo "(ncu skipped: ncu='${NCU}', ${left} s left)" | tee "$ncu_out" >>"$log"
fi
t2=$(date +%s)
echo "# total $((t2 - t0)) s" >>"$log"

# Short table: failures first (if any), then the per-configuration speed lines at 8192^3 and the summary.
echo "== mma experiment: $(grep -c ' ok ' "$log") ok lines, $(grep -c 'FAIL\|WRONG' "$log") FAIL/WRONG lines, tc_check rc $rc, $((t2 - t0)) s"
grep -m 5 'FAIL\|WRONG' "$log" | cut -c1-160
# one line per dtype and rung at 8192^3: TFLOP/s (% of cuBLAS) of the default, then of each forced configuration
awk '$2 == "8192^3" && $5 == "ms" {
  split($3, nm, "/"); key = $1 " " nm[1]; cfg = (nm[2] == "" ? "def" : nm[2])
  if (!(key in line)) { order[++n] = key; line[key] = "" }
  line[key] = line[key] sprintf(" %s %.0f (%s)%s", cfg, $6, $8, $11 == "ok" ? "" : " WRONG")
} END { for (i = 1; i <= n; i++) printf "8192 %-14s%s\n", order[i], line[order[i]] }' "$log" | cut -c1-200
sed -n '/== summary/,/checks passed/p' "$log" | cut -c1-150
# ncu: one line per profile (the kernel's key numbers)
awk '/^== ncu / { if (k) print k; k = $3 " " $4; next }
     k && /^ +(Duration|SM Frequency|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|No Eligible|Achieved Occupancy|Warp Cycles Per Issued Instruction|sm__pipe_tensor_op_hmma_cycles_active|sm__inst_executed_pipe_tensor_op_hmma|l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld)[ .]/ {
       l = $1; if ($1 == "Compute") l = "SM%"; else if ($1 == "Memory") l = "mem%"; else if ($1 == "Issue") l = "issue%";
       else if ($1 == "No") l = "noelig%"; else if ($1 == "Achieved") l = "occ%"; else if ($1 == "Warp") l = "cyc/inst";
       else if ($1 == "SM") l = "clk(" $(NF-1) ")"; else if ($1 == "Duration") l = "t(" $(NF-1) ")";
       else if ($1 ~ /hmma_cycles/) l = "tensor_pipe%"; else if ($1 ~ /inst_executed_pipe_tensor/) l = "hmma_inst%";
       else if ($1 ~ /bank_conflicts/) l = "smem_ld_conflicts";
       k = k " " l "=" $NF }
     /^ncu rc=/ { if (k) print k " rc=" substr($0, 8); k = "" }
     END { if (k) print k }' "$ncu_out" 2>/dev/null | cut -c1-200
exit $rc
