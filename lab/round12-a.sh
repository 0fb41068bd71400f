#!/bin/bash
# For round 3 session 12's first one-GPU call: the commits of session 11 that no GPU ran (lab/README, session 11).
# Build; the spec files they touch (fft: fft2's rank-2 cuFFT plan and the fallback check; complex: the division's
# final form; linalg, linalg_complex: triangular_solve's trans); the FFT ladder and its peers (fft2 4096² beside
# PyTorch: the reason for the rank-2 plan); the complex bench (the division); compute-sanitizer over the FFT rungs.
# Then every other spec file until DEADLINE. Results: bench/results/round12/a/.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round12-a.sh
# (On two or more GPUs, `lua5.4 lab/split_probe.lua` is the bf16 split's next step: issue 31.)
set -u
. lab/run_env.sh
export NCCL_NVLS_ENABLE=0 CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
build_sm90
par_specs "spec/fft_spec.lua spec/complex_spec.lua spec/linalg_spec.lua spec/linalg_complex_spec.lua spec/conv_spec.lua" 5 150
OUT="$R" timeout 200 bash lab/issue35-gpu.sh peers > "$R/fft_peers.txt" 2>&1; log "fft peers rc=$?"; grep -E "fft2|rfft" "$R/fft_peers.txt"
T0=$T0 bash lab/round5-gpu.sh complexbench > "$R/complex-out.txt" 2>&1; grep c64_div "$R/complex-out.txt"
OUT="$R" TOOLS="memcheck" bash lab/issue35-gpu.sh sanitize > "$R/fft_sanitize.txt" 2>&1; log "fft sanitize rc=$?"; tail -2 "$R/fft_sanitize.txt"
DEADLINE=${DEADLINE:-560} HARD=${HARD:-588} bash lab/round7-suite.sh > "$R/suite-out.txt" 2>&1
tail -4 "$R/suite-out.txt"
