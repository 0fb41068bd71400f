#!/bin/bash
# For round 3 session 14's one-GPU call after the x4 runs (results: bench/results/round14/c/): the commits since
# 00f62d1, which no GPU has run:
#   3b86372 matmul rung 18 (wgmma_fp8, FP8 on step 14's persistent kernel): fp8_spec's acceptance loop over both
#           FP8 rows, and compute-sanitizer memcheck, racecheck, synccheck over the FP8 rows (lab/issue37_sanitize.lua,
#           SAN_ONLY=fp8); tensorcore_spec for rung 14 (its PTX is unchanged, the TMA maps' code changed);
#   index rung 3 writing through shared memory and made the compactions' default; the one divmod (select specs);
#   f16 ops on the bare cvt (half, elementwise, fuzz); the scan sleeps scaled by bandwidth (scan_spec);
#   the dispatch rule m >= 8192 (tensorcore_spec); core_spec's asynchrony check.
# lab/round14-d.sh follows on the same warm machine (the benchmarks).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round14-c.sh
set -u
. lab/run_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
build_sm90
par_specs "spec/scan_spec.lua spec/fp8_spec.lua spec/tensorcore_spec.lua spec/select_spec.lua spec/select_paths_spec.lua \
  spec/half_spec.lua spec/elementwise_spec.lua spec/core_spec.lua spec/fuzz_spec.lua spec/matmul_spec.lua \
  spec/badinput_spec.lua spec/introspection_spec.lua spec/order_spec.lua spec/assembly_spec.lua" 7 200
export SAN_ONLY=fp8; sanitize san-fp8 lab/issue37_sanitize.lua 100 memcheck racecheck synccheck
log done
