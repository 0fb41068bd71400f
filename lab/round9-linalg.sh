#!/bin/bash
# Round 3, session 9 (one H100/H200, ~500 s): issue 34's two new paths — LU rung 4 (fused_panel: one cooperative
# kernel a panel) and the one-kernel solve of orders <= 32 (la_small.cu). Build; the linalg specs (GPU ones
# included); lab/lu_probe.lua at 8192 for CUKERN_LU_PANEL_ROWS = 32, 64, 128, 256; the LU ladder and the batched
# solves beside torch.linalg (examples/linalg_bench.lua --only lu,batched; results under $R).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round9-linalg.sh
set -u
. lab/run_env.sh
timeout 300 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"
timeout 180 sh spec/run.sh spec/linalg_gpu_spec.lua spec/linalg_spec.lua spec/fp8_spec.lua > "$R/specs.txt" 2>&1
log "linalg specs rc=$? $(tail -1 "$R/specs.txt")"
grep -B1 -A14 "^FAIL\|^ERROR" "$R/specs.txt" | head -60
for rows in 64 32 128 256; do
  CUKERN_LU_PANEL_ROWS=$rows timeout 40 lua5.4 lab/lu_probe.lua 8192 >> "$R/lu_probe.txt" 2>&1; log "probe rows=$rows rc=$?"
done
cat "$R/lu_probe.txt"
timeout 60 python3 bench/torch_linalg.py "$R/torch_batched.json" --batched-only > "$R/torch.txt" 2>&1; log "torch rc=$?"
CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/linalg_bench.lua --only lu,batched --torch "$R/torch_batched.json" \
  > "$R/bench.txt" 2>&1; log "bench rc=$?"
cat "$R/bench.txt"
log done
