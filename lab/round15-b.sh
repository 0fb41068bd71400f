#!/bin/bash
# Round 3 session 15's second and third one-GPU calls (results: bench/results/round15/b/ at 422f6e6, c/ after its findings): issue 34's small batches after the
# one-kernel paths read A and B in place (la_in), ck.inv's identity in registers, potrf_small to order 64 (one block a
# matrix), and the elementwise tiled rung declining mostly idle tiles (03_tiled.cu).
#   specs: linalg (GPU, host, complex), elementwise, transpose, half, assembly, core; compute-sanitizer memcheck,
#   initcheck, racecheck and synccheck over lab/la_small_sanitize.lua (block_potrf_kernel's shared triangle);
#   lab/linalg_host (ck and torch: issue, wall); lab/ew_small_tiles (strided vs tiled on small transposes);
#   examples/linalg_bench --only batched beside bench/torch_linalg.py --batched-only (the linalg JSON's batched rows).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round15-b.sh
set -u
. lab/run_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
build_sm90
par_specs "spec/linalg_gpu_spec.lua spec/linalg_spec.lua spec/linalg_complex_spec.lua spec/elementwise_spec.lua
  spec/transpose_spec.lua spec/half_spec.lua spec/assembly_spec.lua spec/core_spec.lua" 4 200
sanitize san-la lab/la_small_sanitize.lua 150 memcheck initcheck racecheck synccheck
timeout 90 lua5.4 lab/linalg_host.lua > "$R/linalg_host.txt" 2>&1; log "linalg host (ck) rc=$?"
timeout 90 python3 lab/linalg_host.py >> "$R/linalg_host.txt" 2>&1; log "linalg host (torch) rc=$?"
grep -E "(solve|inv|cholesky) .*(10000x8x8|1000x64x64)" "$R/linalg_host.txt"
CUKERN_EW_TILE_FILL=0 timeout 90 lua5.4 lab/ew_small_tiles.lua > "$R/ew_small_tiles.txt" 2>&1; log "ew_small_tiles rc=$?"
timeout 90 lua5.4 lab/ew_small_tiles.lua >> "$R/ew_small_tiles.txt" 2>&1; log "ew_small_tiles (default rules) rc=$?"
cat "$R/ew_small_tiles.txt"
timeout 120 python3 bench/torch_linalg.py "$R/torch_linalg.json" --batched-only > "$R/torch_linalg.txt" 2>&1
log "torch batched rc=$?"
CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/linalg_bench.lua --only batched --torch "$R/torch_linalg.json" > "$R/linalg_bench.txt" 2>&1
log "linalg bench batched rc=$?"; grep -E "^(solve|inv|cholesky)" "$R/linalg_bench.txt"
log done
