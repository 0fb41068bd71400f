#!/usr/bin/env bash
# bench/exp/mma.sh — experiment for the tensor-core rungs 10 (wmma) and 11 (mma_sync), track `mma`.
#
# Builds examples/tc_check.cu with 00_cublas, 10_wmma and 11_mma_sync (nvcc, sm_90a; ~30-40 s on 16 cores),
# runs it: part 1 checks every rung's default on awkward shapes and EVERY configuration (CUKERN_MM_CFG=<i>) on
# two tail-heavy shapes, in bf16, f16 and TF32, against a host f64 reference; part 2 times cuBLAS and every
# configuration at 4096^3 and 8192^3 (median of 10 after 3 warm-ups, % of cuBLAS in the same run; each timed
# configuration is also checked on sampled elements). Expected wall time: ~40 s build + ~40 s run.
# Then, when cuobjdump is there, a SASS census per kernel (registers aside): instructions between a
# kernel's first and last HMMA (the unrolled k loop) per HMMA, and its HMMA / LDSM / LDS / LDGSTS / BAR counts.
# Output: $OUT/mma.txt (everything), $OUT/mma_sass.txt (the census); the short table is printed last.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/mma_out}
mkdir -p "$OUT"
log=$OUT/mma.txt
t0=$(date +%s)
{
  echo "# mma experiment, $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit --format=csv,noheader 2>/dev/null || true
} >"$log"
# tc_check.sh tees to $OUT/tc_check.log when OUT is set: run it with OUT unset, into our log.
env -u OUT TC_REBUILD=1 bash examples/tc_check.sh >>"$log" 2>&1
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
exit $rc
