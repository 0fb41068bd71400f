#!/bin/bash
# Round 3, session 10, last one-GPU call: the session's final commit. Build; lab/dmma_bench.lua (the committed pick);
# the LU ladder (examples/linalg_bench.lua --only lu: lu-<device>.json under $R); lab/issue_probe.lua; then every
# spec file (lab/round7-suite.sh) until DEADLINE.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round10-final.sh
set -u
. lab/run_env.sh
timeout 320 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; grep -m3 error "$R/build.txt"
timeout 40 lua5.4 lab/dmma_bench.lua > "$R/dmma_bench.txt" 2>&1; log "dmma bench rc=$?"
CUKERN_RESULTS="$R" timeout 120 lua5.4 examples/linalg_bench.lua --only lu > "$R/lu_bench.txt" 2>&1; log "lu bench rc=$?"
timeout 30 lua5.4 lab/issue_probe.lua > "$R/issue_probe.txt" 2>&1; log "issue probe rc=$?"
DEADLINE=${DEADLINE:-565} HARD=${HARD:-590} bash lab/round7-suite.sh > "$R/suite-out.txt" 2>&1
tail -4 "$R/suite-out.txt"; grep 8192 "$R/lu_bench.txt"; cut -c1-150 "$R/dmma_bench.txt"
