#!/bin/bash
# Round 3, session 8, the last call (one H100/H200, ~400 s): fresh sm_90a build at the scan single pass's register cap
# and ck.unique's unchecked permutation scatter; scan_spec; the scan ladder (scan-<device>.json); sort_spec's
# ck.unique tests; lab/unique_time.lua beside lab/unique_torch.py.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round8-verify.sh
set -u
. lab/run_env.sh
timeout 330 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"
timeout 150 sh spec/run.sh spec/scan_spec.lua > "$R/scan.txt" 2>&1; log "scan_spec rc=$? $(tail -1 "$R/scan.txt")"
grep -B1 -A12 "^FAIL\|^ERROR" "$R/scan.txt" | head -30
timeout 60 sh spec/run.sh spec/sort_spec.lua --filter="ck.unique" > "$R/unique_spec.txt" 2>&1; log "unique specs rc=$? $(tail -1 "$R/unique_spec.txt")"
grep -B1 -A12 "^FAIL\|^ERROR" "$R/unique_spec.txt" | head -20
CUKERN_RESULTS="$R" timeout 120 lua5.4 examples/scan_ladder.lua > "$R/scan_ladder.txt" 2>&1; log "scan ladder rc=$?"
timeout 40 python3 lab/unique_torch.py > "$R/torch_unique.json" 2> "$R/torch_unique.err"; log "torch unique rc=$?"
timeout 90 lua5.4 lab/unique_time.lua "$R/torch_unique.json" > "$R/unique.txt" 2>&1; log "unique rc=$?"; cat "$R/unique.txt"
log done
