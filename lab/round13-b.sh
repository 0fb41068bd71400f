#!/bin/bash
# Round 3 session 13's second one-GPU call, on round13-a's machine while it is warm (its build is kept: no rebuild
# unless cukern/core.so is missing). Results: bench/results/round13/b/.
#   7fc3595: the FFT peers (fft2 4096^2, rfft 2^28 beside PyTorch and CuPy; 0.976x and 0.958x in session 12);
#   compute-sanitizer synccheck and initcheck over the scan/sort ladders, with the look-back sleeps forced onto the
#   small cases (session 12 ran memcheck and racecheck so: 0 errors, 0 hazards).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round13-b.sh
set -u
. lab/run_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
[ -f cukern/core.so ] || build_sm90
OUT="$R" timeout 200 bash lab/issue35-gpu.sh peers > "$R/fft_peers.txt" 2>&1; log "fft peers rc=$?"; grep -E "fft2|rfft" "$R/fft_peers.txt"
# synccheck and initcheck over the scan/sort ladders with the look-back sleeps forced onto the small cases (session 12
# ran memcheck and racecheck so: 0 errors, 0 hazards)
for tool in synccheck initcheck; do
  CUKERN_SYNC=1 CUKERN_SCAN_DELAY=200 CUKERN_SCAN_POLL=100 CUKERN_SCAN_COLS_DELAY=200 CUKERN_SCAN_COLS_POLL=100 \
    timeout 120 compute-sanitizer --tool "$tool" --print-limit 50 --error-exitcode 9 lua5.4 lab/issue33_sanitize.lua \
    > "$R/san33-$tool.txt" 2>&1
  log "san33 $tool rc=$? $(grep -E -m1 'ERROR SUMMARY' "$R/san33-$tool.txt") $(grep -v '^=' "$R/san33-$tool.txt" | tail -1)"
done
