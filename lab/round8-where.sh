#!/bin/bash
# Round 3, session 8, the very last call (one H100/H200, ~420 s): fresh sm_90a build with cols_lookback's streaming
# loads and stores and dense where's batched groups; select_spec and select_paths_spec; examples/select_bench.lua
# --only "^where" (where against the memcpy of its bytes); scan_spec; the scan ladder (scan-<device>.json).
# Neither trial helped (bench/results/round8/README.md, run 10); both were reverted after this call.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round8-where.sh
set -u
. lab/run_env.sh
timeout 330 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"
for f in select select_paths; do
  timeout 150 sh spec/run.sh "spec/${f}_spec.lua" > "$R/$f.txt" 2>&1; log "${f}_spec rc=$? $(tail -1 "$R/$f.txt")"
  grep -B1 -A12 "^FAIL\|^ERROR" "$R/$f.txt" | head -30
done
CUKERN_RESULTS="$R" timeout 60 lua5.4 examples/select_bench.lua --only "^where" > "$R/where.txt" 2>&1; log "where bench rc=$?"
tail -8 "$R/where.txt"
timeout 150 sh spec/run.sh spec/scan_spec.lua > "$R/scan.txt" 2>&1; log "scan_spec rc=$? $(tail -1 "$R/scan.txt")"
grep -B1 -A12 "^FAIL\|^ERROR" "$R/scan.txt" | head -30
CUKERN_RESULTS="$R" timeout 120 lua5.4 examples/scan_ladder.lua > "$R/scan_ladder.txt" 2>&1; log "scan ladder rc=$?"
grep -E "^ *(6|10|9|0) " "$R/scan_ladder.txt" | tail -14
log done
