#!/bin/bash
# For round 3 session 14's second call, on lab/round14-x4.sh's machine while warm (its build is kept; make rebuilds
# only what changed). Results: bench/results/round14/x4b/.
#   The whole suite on GPUs, which has not run since e8106b1: every spec file, the k-th on GPU k mod N (one GPU
#   each), four at a time per GPU, each under 240 s, none past 585 s; the summary line counts a file that did not
#   finish as one failure.
#   OUT=/dir CUKERN_COMMIT=abc [PER_GPU=4] bash lab/round14-x4b.sh   (PER_GPU: spec files at a time per GPU)
set -u
. lab/run_env.sh
export NCCL_NVLS_ENABLE=0 CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
NG=$(nvidia-smi -L | wc -l)
build_sm90 200
# the longest files first (session 13 run a: sort 159 s and cut, scan 123, map_dtypes 80 and cut)
FILES="spec/sort_spec.lua spec/scan_spec.lua spec/map_dtypes_spec.lua spec/core_spec.lua spec/reduce_spec.lua
  $(ls spec/*_spec.lua | grep -v -E '/(sort|scan|map_dtypes|core|reduce)_spec.lua')"
gpu_spec() { CUDA_VISIBLE_DEVICES=$1 spec_one "$2"; }
spec_one() {
  local f=$1 b t0 lim rc
  b=$(basename "$f" .lua); t0=$(date +%s)
  lim=$((585 - (t0 - T0))); [ "$lim" -gt 240 ] && lim=240
  if [ "$lim" -lt 5 ]; then log "$b not run (past the deadline)"; return; fi
  timeout "$lim" sh spec/run.sh "$f" > "$R/$b.txt" 2>&1; rc=$?
  log "$b gpu=$CUDA_VISIBLE_DEVICES rc=$rc $(($(date +%s) - t0))s $(tail -1 "$R/$b.txt")"
}
export -f gpu_spec spec_one log; export R T0
printf '%s\n' $FILES | awk -v n="$NG" '{ print (NR - 1) % n, $0 }' | xargs -P $((${PER_GPU:-4} * NG)) -L1 bash -c 'gpu_spec "$0" "$1"'
P=0; F=0; S=0
for f in $FILES; do
  b=$(basename "$f" .lua)
  set -- $(tail -1 "$R/$b.txt" 2>/dev/null | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped.*/\1 \2 \3/p')
  if [ $# -eq 3 ]; then P=$((P + $1)); F=$((F + $2)); S=$((S + $3)); [ "$2" = 0 ] || grep -B1 -A12 "^FAIL\|^ERROR" "$R/$b.txt" | head -40
  else F=$((F + 1)); echo "== $b did not finish:"; tail -c 400 "$R/$b.txt" 2>/dev/null; echo; fi
done
log "suite on $NG GPUs: $P passed, $F failed, $S skipped"
