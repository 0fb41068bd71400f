#!/bin/bash
# For round 3 session 13's first one-GPU call: the commits of session 12 that no GPU ran, and the spec files that
# session 12's suite run did not reach (results: bench/results/round13/a/).
#   1c93eea, adc248e  cholesky of a batch (order <= 128) through cusolverDn<t>potrfBatched: spec/linalg_gpu_spec.lua
#            (batched factors in every dtype against the host, the entry that is not positive definite named),
#            lab/linalg_host.lua and .py (the host time per call beside PyTorch: 10^4 x 8x8 took 147 ms before; 2 x 512
#            and 100 x 128 say whether the order limit should move); adc248e's ck.bench wait before each rep
#            (spec/bench_spec.lua);
#   c5632ac  linalg_gpu_spec's svd by gesvd (the Jacobi fallback's routine, taken at once by check = false);
#   0414915  scan rung 6 sleeps from 1024 tiles: spec/scan_spec.lua (2^23+5 elements), the scan ladder;
#   7fc3595  cuFFT plans of rows in the basic layout (NULL embeds): spec/fft_spec.lua here, the FFT peers in
#            lab/round13-b.sh (rfft 2^28 was 0.958x PyTorch, fft2 4096^2 0.976x, in session 12's final run);
#   badinput, streams, multi_sanitize and embed: past the deadline of round 12 run a (last run on a GPU in session
#            11's B1, at 5590a42).
# Then every other spec file until DEADLINE. lab/round13-b.sh (the same machine while warm: no rebuild) has the FFT
# peers for 7fc3595 and compute-sanitizer's synccheck and initcheck over the scan/sort ladders.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round13-a.sh
set -u
. lab/run_env.sh
export NCCL_NVLS_ENABLE=0 CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
build_sm90
par_specs "spec/linalg_gpu_spec.lua spec/scan_spec.lua spec/bench_spec.lua spec/fft_spec.lua spec/badinput_spec.lua \
  spec/streams_spec.lua spec/multi_sanitize_spec.lua spec/embed_spec.lua" 8 200
timeout 90 lua5.4 lab/linalg_host.lua > "$R/linalg_host.txt" 2>&1; log "linalg host (ck) rc=$?"
timeout 90 python3 lab/linalg_host.py >> "$R/linalg_host.txt" 2>&1; log "linalg host (torch) rc=$?"; grep cholesky "$R/linalg_host.txt"
CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/scan_ladder.lua > "$R/scan_ladder.txt" 2>&1; log "scan ladder rc=$?"
grep -E "^ *(0|6) " "$R/scan_ladder.txt" | head -10
DEADLINE=${DEADLINE:-560} HARD=${HARD:-588} bash lab/round7-suite.sh > "$R/suite-out.txt" 2>&1
tail -4 "$R/suite-out.txt"
