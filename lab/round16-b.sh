#!/bin/bash
# For round 3's next session, its second one-GPU call, on lab/round16-a.sh's machine while warm (its build is kept):
# issue 34's two items that have not run since session 11 (H100), now on whatever card this is (results:
# bench/results/round16/b/): the LU ladder at 1024, 4096 and 8192 in f32 and f64 (every rung validated against
# cuSOLVER's getrf first; % of cuSOLVER in the same run; target 75% for the blocked rungs at 8192) and iterative
# refinement at 8192 f64 (speed-up over the plain f64 solve, backward errors; target 2x), through
# examples/linalg_bench.lua --only lu,refine (writes lu-<device>.json and linalg-<device>.json into $R).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round16-b.sh
set -u
. lab/run_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
build_sm90 120
CUKERN_RESULTS="$R" timeout 450 lua5.4 examples/linalg_bench.lua --only lu,refine > "$R/linalg_bench.txt" 2>&1
log "linalg bench lu,refine rc=$?"; grep -E "^lu |refine|plain|INVALID" "$R/linalg_bench.txt" | tail -40
log done
