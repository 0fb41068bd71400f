#!/bin/bash
# For round 3 session 14, on round14-a's machine while it is warm (its build is kept: no rebuild unless cukern/core.so
# is missing). Results: bench/results/round14/b/.
#   issue 37's bf16 GEMM across shapes (examples/gemm_sweep.lua, written in session 13, not run yet): every shape of
#   the issue (m = 16 ... 16384, n, k in {4096, 8192, 14336}, nn/nt/tn), cuBLAS, rungs 12-14 and the default dispatch in
#   alternating pairs with cuBLAS; the summary (geometric mean, worst shape) is what the dispatch table is to be
#   built from. --quick first (27 shapes), the whole sweep in the time left.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round14-b.sh
set -u
. lab/run_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
[ -f cukern/core.so ] || build_sm90
mkdir -p "$R/quick" "$R/full"
CUKERN_RESULTS="$R/quick" timeout 200 lua5.4 examples/gemm_sweep.lua --quick > "$R/gemm_quick.txt" 2>&1
log "gemm sweep quick rc=$?"; tail -35 "$R/gemm_quick.txt"
CUKERN_RESULTS="$R/full" timeout $((580 - $(date +%s) + T0)) lua5.4 examples/gemm_sweep.lua > "$R/gemm_full.txt" 2>&1
log "gemm sweep full rc=$?"; tail -6 "$R/gemm_full.txt"
