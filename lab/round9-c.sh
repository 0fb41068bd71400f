#!/bin/bash
# Round 3, session 9, third one-GPU call (~330 s): LU rung 4 with its swaps as one permutation (laswp_perm) and a
# panel-width knob. Build; the LU ladder spec at panel widths 128 (default), 256 and 16, and the other linalg specs;
# lab/lu_probe.lua at 8192 and 4096 for CUKERN_LU_PANEL_COLS = 64, 128, 256; the LU ladder (lu-<device>.json under $R).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round9-c.sh
set -u
. lab/run_env.sh
timeout 300 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"
timeout 150 sh spec/run.sh spec/linalg_gpu_spec.lua spec/linalg_spec.lua > "$R/specs.txt" 2>&1
log "linalg specs rc=$? $(tail -1 "$R/specs.txt")"
for w in 256 16; do
  CUKERN_LU_PANEL_COLS=$w timeout 60 sh spec/run.sh spec/linalg_gpu_spec.lua --filter="LU ladder" > "$R/specs-w$w.txt" 2>&1
  log "LU spec at width $w rc=$? $(tail -1 "$R/specs-w$w.txt")"
done
grep -h -B1 -A14 "^FAIL\|^ERROR" "$R"/specs*.txt | head -60
for w in 128 64 256; do
  for n in 8192 4096; do
    CUKERN_LU_PANEL_COLS=$w timeout 40 lua5.4 lab/lu_probe.lua $n >> "$R/lu_probe.txt" 2>&1; log "probe cols=$w n=$n rc=$?"
  done
done
cat "$R/lu_probe.txt"
CUKERN_RESULTS="$R" timeout 120 lua5.4 examples/linalg_bench.lua --only lu > "$R/bench.txt" 2>&1; log "bench rc=$?"
cat "$R/bench.txt"
log done
