#!/bin/bash
# For round 3's next session, its first one-GPU call (results: bench/results/round16/a/): what session 15 left unrun.
#   c8b387a: ck_copy_permuted's own fill rule (a quarter of the 64 x 64 tiles; the f64 exception), gesv_small's
#            batch check: transpose_spec (its {40, 64, 36} cases keep every permutation on the tiled path), the specs
#            that copy permuted views (elementwise, half, assembly, core, linalg_gpu), and lab/ew_small_tiles.lua with
#            the rules on (its copy_ column against the tr-rung and strided columns of session 15's c);
#   then the select rows that are still under 90% (examples/select_bench.lua beside bench/torch_select.py, cat,
#   stack and index_select only) for the next try at cat_k's occupancy;
#   complex_spec on the GPU and examples/complex_bench.lua beside bench/torch_complex.py (c64 div against add and mul,
#   % of memcpy, issue 35's 95%: NumPy's one-reciprocal form was tried in session 15 and taken back, lab/cx_div_ab.sh);
#   551b0bb's NaN/Inf check of the linalg layer (an isfinite pass and its count: linalg_spec, linalg_complex_spec);
#   and ck.unique's inverse by search against the scatter (lab/unique_time.lua beside lab/unique_torch.py: 2^26 i32
#   in [0, 2^20), the composition's steps each timed), with sort_spec (its unique cases run inverse_by = "search" on
#   both backends) before, to choose the default.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round16-a.sh
set -u
. lab/run_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
build_sm90
par_specs "spec/transpose_spec.lua spec/elementwise_spec.lua spec/half_spec.lua spec/assembly_spec.lua spec/core_spec.lua
  spec/linalg_gpu_spec.lua spec/linalg_spec.lua spec/linalg_complex_spec.lua spec/sort_spec.lua spec/complex_spec.lua" 8 240
timeout 90 lua5.4 lab/ew_small_tiles.lua > "$R/ew_small_tiles.txt" 2>&1; log "ew_small_tiles (default rules) rc=$?"
cat "$R/ew_small_tiles.txt"
timeout 150 python3 bench/torch_select.py --out "$R/torch_select.json" > "$R/torch.txt" 2>&1; log "torch_select rc=$?"
CUKERN_RESULTS="$R" timeout 100 lua5.4 examples/select_bench.lua --torch "$R/torch_select.json" --only "cat,stack,index_select" \
  > "$R/select_bench.txt" 2> "$R/select_bench.progress"
log "select_bench rc=$?"; cat "$R/select_bench.progress"
timeout 100 python3 bench/torch_complex.py --out "$R/torch_complex.json" > "$R/torch_complex.txt" 2>&1; log "torch complex rc=$?"
CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/complex_bench.lua --torch "$R/torch_complex.json" > "$R/complex_bench.txt" 2>&1
log "complex bench rc=$?"; grep -E "c64_(add|mul|div|sum)" "$R/complex_bench.txt" | tail -8
timeout 40 python3 lab/unique_torch.py > "$R/torch_unique.json" 2> "$R/torch_unique.err"; log "unique torch rc=$?"
timeout 90 lua5.4 lab/unique_time.lua "$R/torch_unique.json" > "$R/unique.txt" 2>&1; log "unique rc=$?"; cat "$R/unique.txt"
log done
