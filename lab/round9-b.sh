#!/bin/bash
# Round 3, session 9, second one-GPU call (~300 s): LU rung 4 with the swap folded into the update and one L2 round
# trip less a column; the small solve's one-shuffle swap and f64 cut at 16. Build; linalg specs; lu_probe at 8192
# and 4096; lab/solve_small_probe.lua; the LU ladder and batched solves beside torch.linalg (results under $R).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round9-b.sh
set -u
. lab/run_env.sh
timeout 300 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"
timeout 150 sh spec/run.sh spec/linalg_gpu_spec.lua spec/linalg_spec.lua > "$R/specs.txt" 2>&1
log "linalg specs rc=$? $(tail -1 "$R/specs.txt")"
grep -B1 -A14 "^FAIL\|^ERROR" "$R/specs.txt" | head -60
timeout 40 lua5.4 lab/lu_probe.lua 8192 > "$R/lu_probe.txt" 2>&1; log "probe rc=$?"
timeout 30 lua5.4 lab/lu_probe.lua 4096 >> "$R/lu_probe.txt" 2>&1; log "probe 4096 rc=$?"; cat "$R/lu_probe.txt"
timeout 60 lua5.4 lab/solve_small_probe.lua > "$R/solve_probe.txt" 2>&1; log "solve probe rc=$?"; cat "$R/solve_probe.txt"
timeout 60 python3 bench/torch_linalg.py "$R/torch_batched.json" --batched-only > "$R/torch.txt" 2>&1; log "torch rc=$?"
CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/linalg_bench.lua --only lu,batched --torch "$R/torch_batched.json" \
  > "$R/bench.txt" 2>&1; log "bench rc=$?"
cat "$R/bench.txt"
log done
