#!/bin/bash
# Round 3, session 8, the last GPU call (one H100/H200, ~480 s). Everything under $OUT/r (r.tgz at exit).
#   1. fresh sm_90a build; meanwhile lab/fft_r8_probe.cu built with each knob setting and run (FFT rung 4's
#      register cap and twiddle form against cuFFT; the GPU is otherwise idle, the timings are CUDA events)
#   2. lab/host_overhead.lua alone (what the host adds around one op: the 4-GPU host's one-GPU rows were slow)
#   3. sort_spec (sorts without indices on every rung; onesweep wrote indices it was not given in cef147f)
#   4. lab/unique_torch.py, then lab/unique_time.lua beside it (ck.unique, sorts without indices, the steps)
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round8-final.sh
set -u
. lab/run_env.sh
( timeout 330 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; echo "build rc=$?" > "$R/build.rc" ) &
B=$!
for m in 1 2 3; do for t in 0 1; do
  nvcc -O3 -std=c++17 -arch=sm_90a -Ikernels --expt-relaxed-constexpr -DR8_MINB=$m -DR8_TWP2=$t -Xptxas -v \
    -o "/tmp/r8_$m$t" lab/fft_r8_probe.cu -lcufft > "$R/r8_$m$t.ptxas" 2>&1 &
done; done
wait $(jobs -p | grep -v "^$B$") 2>/dev/null
for m in 1 2 3; do for t in 0 1; do
  [ -x "/tmp/r8_$m$t" ] && timeout 40 "/tmp/r8_$m$t" >> "$R/fft_r8_probe.txt" 2>&1
done; done
log "fft probe done"; cat "$R/fft_r8_probe.txt"
wait $B; log "$(cat "$R/build.rc")"; tail -2 "$R/build.txt" | cut -c1-200
timeout 60 lua5.4 lab/host_overhead.lua > "$R/host_overhead.txt" 2>&1; log "host overhead rc=$?"; cat "$R/host_overhead.txt"
timeout 240 sh spec/run.sh spec/sort_spec.lua > "$R/sort.txt" 2>&1; log "sort_spec rc=$? $(tail -1 "$R/sort.txt")"
grep -B1 -A12 "^FAIL\|^ERROR" "$R/sort.txt" | head -40
timeout 40 python3 lab/unique_torch.py > "$R/torch_unique.json" 2> "$R/torch_unique.err"; log "torch unique rc=$?"
timeout 90 lua5.4 lab/unique_time.lua "$R/torch_unique.json" > "$R/unique.txt" 2>&1; log "unique rc=$?"; cat "$R/unique.txt"
log done
