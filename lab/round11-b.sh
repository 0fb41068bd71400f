#!/bin/bash
# Round 3, session 11, one GPU, two calls on one warm machine (the second reuses the first's build):
#   b1  build; the spec files the changes since run A touch (fft, complex, conv, linalg, linalg_gpu) and the four run A's
#       deadline left out (badinput, streams, multi_sanitize, embed); the FFT ladder (fft-<device>.json)
#   b2  the FFT's peers (torch.fft2/rfft/conv2d beside ck.fft2/rfft/conv2); the complex bench beside PyTorch; the LU
#       ladder (lu-<device>.json); the overlap ladder twice (overlap-<device>.json, the second run kept); compute-
#       sanitizer memcheck and racecheck over lab/issue35_sanitize.lua (every FFT rung, small cases)
# Results under $OUT/r (r.tgz); bench/results/round11/b/.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round11-b.sh b1      (then b2 on the same machine)
set -u
. lab/run_env.sh
export NCCL_NVLS_ENABLE=0 CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
[ -f /usr/include/dlpack/dlpack.h ] || [ ! -f .gpu-lua/include/dlpack/dlpack.h ] || export DLPACK_INCDIR="$PWD/.gpu-lua/include"
for st in "$@"; do
case "$st" in
b1)
  timeout 330 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; grep -m3 error "$R/build.txt"
  PAR_SPECS="spec/fft_spec.lua spec/complex_spec.lua spec/conv_spec.lua spec/linalg_spec.lua spec/linalg_gpu_spec.lua" \
    SPECS="spec/badinput_spec.lua spec/streams_spec.lua spec/multi_sanitize_spec.lua spec/embed_spec.lua" NPAR=5 \
    T_EACH=200 HARD=440 T0=$T0 bash lab/round5-gpu.sh speceach > "$R/specs-out.txt" 2>&1
  tail -12 "$R/specs-out.txt"
  OUT="$R" bash lab/issue35-gpu.sh ladder > "$R/fft_ladder.txt" 2>&1; log "fft ladder rc=$?"
  grep -E "radix8|cufft" "$R/fft_ladder.txt" | grep -E "n=(256|512|1024|2048|4096) " | head -12
  ;;
b2)
  [ -f cukern/core.so ] || { timeout 330 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; }
  OUT="$R" timeout 200 bash lab/issue35-gpu.sh peers > "$R/fft_peers.txt" 2>&1; log "fft peers rc=$?"; cat "$R/fft_peers.txt" | tail -30
  T0=$T0 bash lab/round5-gpu.sh complexbench > "$R/complex-out.txt" 2>&1; tail -10 "$R/complex-out.txt"
  CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/linalg_bench.lua --only lu > "$R/lu_bench.txt" 2>&1; log "lu bench rc=$?"
  grep -E "8192|4096" "$R/lu_bench.txt" | head -12
  for k in 1 2; do
    CUKERN_RESULTS="$R" timeout 60 lua5.4 examples/overlap_ladder.lua > "$R/overlap-$k.txt" 2>&1; log "overlap $k rc=$?"
    cat "$R/overlap-$k.txt"
  done
  OUT="$R" TOOLS="memcheck racecheck" bash lab/issue35-gpu.sh sanitize > "$R/fft_sanitize.txt" 2>&1; log "fft sanitize rc=$?"
  cat "$R/fft_sanitize.txt"
  ;;
esac
done
log done
