#!/bin/bash
# Round 3, session 8, after lab/round8-final.sh (one H100/H200, ~330 s): fresh sm_90a build with FFT rung 4's
# register cap and float twiddles (the probe's best setting made the default); fft_spec; the FFT ladder
# (fft-<device>.json); lab/unique_time.lua with its step breakdown (its check of ck.full was wrong in the last call).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round8-last.sh
set -u
. lab/run_env.sh
timeout 330 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"
timeout 90 sh spec/run.sh spec/fft_spec.lua > "$R/fft.txt" 2>&1; log "fft_spec rc=$? $(tail -1 "$R/fft.txt")"
grep -B1 -A12 "^FAIL\|^ERROR" "$R/fft.txt" | head -30
CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/fft_ladder.lua > "$R/fft_ladder.txt" 2>&1; log "fft ladder rc=$?"
grep -E "radix8|cufft" "$R/fft_ladder.txt" | tail -14
timeout 40 python3 lab/unique_torch.py > "$R/torch_unique.json" 2> "$R/torch_unique.err"; log "torch unique rc=$?"
timeout 90 lua5.4 lab/unique_time.lua "$R/torch_unique.json" > "$R/unique.txt" 2>&1; log "unique rc=$?"; cat "$R/unique.txt"
log done
