#!/usr/bin/env bash
# GPU host: one batched experiment call. Usage: bash lab/all.sh [--specs] [--sanity] track ...
# Builds the library (sm_90a), runs lab/<track>.sh for each track (150 s limit each, output in
# $OUT/<track>.txt), then optionally the whole spec suite (specs.log). Short tables are printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
specs=0
tracks=()
for a in "$@"; do case "$a" in --specs) specs=1 ;; *) tracks+=("$a") ;; esac; done
FINAL=${OUT:-/tmp/exp-out}; mkdir -p "$FINAL"
OUT=/tmp/exp-raw; rm -rf "$OUT"; mkdir -p "$OUT"
# the device tool brings back at most 8 files: everything is packed into $FINAL/exp.tgz at the end
trap 'tar czf "$FINAL/exp.tgz" -C "$OUT" . 2>/dev/null' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
t0=$(date +%s)
make -j16 all CUDA_ARCH=90a >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; echo "BUILD FAILED"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
for t in "${tracks[@]}"; do
  t1=$(date +%s)
  OUT="$OUT" timeout "${T_TRACK:-150}" bash "lab/$t.sh" >"$OUT/$t.stdout" 2>&1
  rc=$?
  echo "== $t: rc $rc, $(( $(date +%s) - t1 )) s"
done
if [ $specs = 1 ]; then
  t1=$(date +%s)
  timeout "${T_SPECS:-330}" sh spec/run.sh >"$OUT/specs.log" 2>&1
  echo "== specs: rc $?, $(( $(date +%s) - t1 )) s"
  grep -B2 -A12 "^FAIL\|^ERROR" "$OUT/specs.log" | head -80
  tail -1 "$OUT/specs.log"
fi
for t in "${tracks[@]}"; do echo "==== $t"; tail -n "${TAIL:-30}" "$OUT/$t.stdout"; done
