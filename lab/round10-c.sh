#!/bin/bash
# Round 3, session 10, third one-GPU call, after the allocator fix (a new segment was sorted by a base not yet set:
# round10-b's specs failed with invalid arguments and illegal addresses) and dmma's m16n8k16 configurations. Build;
# lab/dmma_bench.lua with the default pick and each of the six configurations; lab/lu_probe.lua 8192; dmma_sanitize
# under memcheck (an m16n8k16 and an m8n8k4 configuration); lab/issue_probe.lua; then every spec file
# (lab/round7-suite.sh) until DEADLINE.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round10-c.sh
set -u
. lab/run_env.sh
timeout 320 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; grep -m3 error "$R/build.txt"
timeout 40 lua5.4 lab/dmma_bench.lua > "$R/dmma_bench.txt" 2>&1; log "dmma bench rc=$?"
for c in 0 1 2 3 4 5; do
  CUKERN_MM_CFG=$c timeout 40 lua5.4 lab/dmma_bench.lua > "$R/dmma_bench_cfg$c.txt" 2>&1; log "dmma bench cfg $c rc=$?"
done
for c in 0 2 5; do
  CUKERN_MM_CFG=$c CUKERN_SYNC=1 timeout 40 compute-sanitizer --tool memcheck --print-limit 20 --error-exitcode 9 \
    lua5.4 lab/dmma_sanitize.lua > "$R/dmma-memcheck-$c.txt" 2>&1
  log "dmma cfg $c memcheck rc=$? $(grep -m1 'ERROR SUMMARY' "$R/dmma-memcheck-$c.txt") $(grep -c '^ok' "$R/dmma-memcheck-$c.txt") ok"
  grep -m3 '^BAD' "$R/dmma-memcheck-$c.txt"
done
timeout 40 lua5.4 lab/lu_probe.lua 8192 > "$R/lu_probe.txt" 2>&1; log "lu probe rc=$?"
timeout 30 lua5.4 lab/issue_probe.lua > "$R/issue_probe.txt" 2>&1; log "issue probe rc=$?"
DEADLINE=${DEADLINE:-560} HARD=${HARD:-590} bash lab/round7-suite.sh > "$R/suite-out.txt" 2>&1
tail -4 "$R/suite-out.txt"; cat "$R/lu_probe.txt"; cut -c1-200 "$R/dmma_bench.txt"; head -3 "$R/issue_probe.txt"
