#!/bin/sh
# GPU host: compute-sanitizer over the quick all-variant acceptance run (spec/gpu_sanitize.lua).
#   make gpu-sanitize            (or: sh spec/gpu_sanitize.sh)
#   TOOLS="memcheck initcheck"   which tools (default: memcheck racecheck synccheck initcheck)
#   CUKERN_GPU_SANITIZE_VARIANTS="tiled persistent"   only those rungs (racecheck over every rung takes minutes)
# Writes $OUT/gpu-sanitize-<tool>.log and $OUT/gpu-sanitize-summary.txt (OUT defaults to build-asan/gpu):
# one line per tool with its error summary and the acceptance run's own last line. Exit status non-zero
# when a tool reports an error or the run fails.
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build-asan/gpu}
mkdir -p "$OUT"
LUA=${LUA:-lua5.4}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
CS=${COMPUTE_SANITIZER:-$CUDA_HOME/bin/compute-sanitizer}
TOOLS=${TOOLS:-memcheck racecheck synccheck initcheck}
SUM="$OUT/gpu-sanitize-summary.txt"
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}"
export LUA_CPATH="./?.so;${LUA_CPATH:-;}"
# Every launch synchronises, so that a fault is reported at the op that caused it.
export CUKERN_SYNC=1
status=0
[ -x "$CS" ] || { echo "compute-sanitizer not found at $CS (set COMPUTE_SANITIZER)"; exit 1; }
# first without a tool: the acceptance run itself must pass
"$LUA" spec/gpu_sanitize.lua >"$OUT/gpu-sanitize-plain.log" 2>&1 || status=1
{
  echo "# gpu-sanitize $(date -u +%FT%TZ) commit ${CUKERN_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/# /'
  "$CS" --version 2>/dev/null | tail -1 | sed 's/^/# /'
  echo "plain: $(tail -1 "$OUT/gpu-sanitize-plain.log")"
} >"$SUM"
for tool in $TOOLS; do
  log="$OUT/gpu-sanitize-$tool.log"
  extra=""
  [ "$tool" = memcheck ] && extra="--leak-check full"
  [ "$tool" = racecheck ] && extra="--racecheck-report all"
  # shellcheck disable=SC2086
  "$CS" --tool "$tool" $extra --print-limit 50 --error-exitcode 99 "$LUA" spec/gpu_sanitize.lua >"$log" 2>&1
  rc=$?
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
  run=$(grep "^gpu_sanitize:" "$log" | tail -1)
  echo "$tool: rc=$rc ${summary:-no summary line} | ${run:-no run line}" | tee -a "$SUM"
  [ "$rc" = 0 ] || status=1
  # the first distinct errors, for the record
  grep -E "^========= (Invalid|Uninitialized|Race|Barrier|Error|Warning)" "$log" | sort | uniq -c | sort -rn | head -5 \
    | sed "s/^/  $tool: /" | tee -a "$SUM"
done
exit $status
