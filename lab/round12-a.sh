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
[ -f /usr/include/dlpack/dlpack.h ] || [ ! -f .gpu-lua/include/dlpack/dlpack.h ] || export DLPACK_INCDIR="$PWD/.gpu-lua/include"
timeout 330 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; grep -m3 error "$R/build.txt"
PAR_SPECS="spec/fft_spec.lua spec/complex_spec.lua spec/linalg_spec.lua spec/linalg_complex_spec.lua spec/conv_spec.lua" \
  SPECS="" NPAR=5 T_EACH=150 T0=$T0 bash lab/round5-gpu.sh speceach > "$R/specs-out.txt" 2>&1
tail -8 "$R/specs-out.txt"
OUT="$R" timeout 200 bash lab/issue35-gpu.sh peers > "$R/fft_peers.txt" 2>&1; log "fft peers rc=$?"; grep -E "fft2|rfft" "$R/fft_peers.txt"
T0=$T0 bash lab/round5-gpu.sh complexbench > "$R/complex-out.txt" 2>&1; grep c64_div "$R/complex-out.txt"
OUT="$R" TOOLS="memcheck" bash lab/issue35-gpu.sh sanitize > "$R/fft_sanitize.txt" 2>&1; log "fft sanitize rc=$?"; tail -2 "$R/fft_sanitize.txt"
DEADLINE=${DEADLINE:-560} HARD=${HARD:-588} bash lab/round7-suite.sh > "$R/suite-out.txt" 2>&1
tail -4 "$R/suite-out.txt"
