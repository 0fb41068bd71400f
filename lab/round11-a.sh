#!/bin/bash
# Round 3, session 11, first one-GPU call: build; FFT rung 4 A/B in lab/fft_r8_probe.cu (the rung before 7961f42
# as kernels/fft/r8_old.inc, from `git show 7961f42^:kernels/fft/04_radix8.cu`, not committed; the new one with
# compile-time lengths, swizzled and not); LU's dmma tiles at 8192 f64 (CUKERN_MM_CFG 1 = 128x64, 2 = 64x64, one
# process each); the overlap ladder with its duplex row, the staged three-stream form and 48 chunks of 8 MiB; then
# every spec file (lab/round7-suite.sh) until DEADLINE. Results: bench/results/round11/a/.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round11-a.sh
set -u
. lab/run_env.sh
NV="nvcc -O3 -std=c++17 -arch=sm_90a -Ikernels --expt-relaxed-constexpr"
( $NV -DR8_FILE='"fft/r8_old.inc"' -o /tmp/r8old lab/fft_r8_probe.cu -lcufft > "$R/r8old-build.txt" 2>&1
  $NV -o /tmp/r8new lab/fft_r8_probe.cu -lcufft > "$R/r8new-build.txt" 2>&1
  $NV -DR8_SWZ=0 -o /tmp/r8nosw lab/fft_r8_probe.cu -lcufft > "$R/r8nosw-build.txt" 2>&1 ) &
timeout 320 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; grep -m3 error "$R/build.txt"
wait
for b in r8old r8new r8nosw r8new; do timeout 40 /tmp/$b > "$R/$b.txt" 2>&1; log "$b rc=$?"; cat "$R/$b.txt" >> "$R/r8-all.txt"; done
cat "$R/r8-all.txt"
for c in 1 2; do CUKERN_MM_CFG=$c timeout 60 lua5.4 lab/lu_probe.lua 8192 f64 > "$R/lu-cfg$c.txt" 2>&1; log "lu cfg $c rc=$?"; cat "$R/lu-cfg$c.txt"; done
for a in "" "--staged" "--staged --bufs 4" "--chunks 48 --mb 8 --staged"; do
  # shellcheck disable=SC2086
  CUKERN_RESULTS="$R" timeout 60 lua5.4 examples/overlap_ladder.lua $a > "$R/overlap.txt" 2>&1; log "overlap $a rc=$?"
  grep -E "alone|bound|streams" "$R/overlap.txt" | tee -a "$R/overlap-all.txt"
done
DEADLINE=${DEADLINE:-560} HARD=${HARD:-588} bash lab/round7-suite.sh > "$R/suite-out.txt" 2>&1
tail -4 "$R/suite-out.txt"
