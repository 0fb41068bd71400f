# lab/sanitize.sh — sourced by the GPU call scripts (lab/round5-gpu.sh, lab/run_env.sh): sanitize LABEL SCRIPT LIMIT
# TOOLS... runs compute-sanitizer's TOOLS one after the other over `lua5.4 SCRIPT` (CUKERN_SYNC=1; racecheck with
# SAN_QUICK=1 and every report), each under LIMIT seconds, into $R/LABEL-TOOL.txt, with a progress line (log) and
# the first bad lines. Needs $R and log() from the includer.
sanitize() { # sanitize LABEL SCRIPT LIMIT TOOLS...
  local label=$1 script=$2 limit=$3; shift 3
  for tool in "$@"; do
    extra=""; [ "$tool" = racecheck ] && extra="--racecheck-report all"
    # shellcheck disable=SC2086
    [ "$tool" = racecheck ] && export SAN_QUICK=1 || export SAN_QUICK=0
    CUKERN_SYNC=1 timeout "$limit" compute-sanitizer --tool "$tool" $extra --print-limit 50 --error-exitcode 9 \
      lua5.4 "$script" > "$R/$label-$tool.txt" 2>&1
    log "$label $tool rc=$? $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/$label-$tool.txt") $(grep -v '^=' "$R/$label-$tool.txt" | tail -1)"
    grep -m5 "^BAD\|Invalid\|Race reported\|Uninitialized" "$R/$label-$tool.txt"
  done
}
