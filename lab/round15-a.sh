#!/bin/bash
# For round 3's next session, its first one-GPU call (results: bench/results/round15/a/): what session 14 left unrun.
#   2abe5ea: rung 16's ldc rule (fp8_spec), la_funcs' exec_worded (linalg_gpu_spec, linalg_spec), and
#            lab/la_small_sanitize.lua as fixed (compute-sanitizer memcheck and initcheck over potrf_small and
#            gesv_small: in session 14's run e the script stopped before any check);
#   the open items' measurements: lab/linalg_host (cholesky of 1000 x 64x64, inv of 10^4 x 8x8 f32, and why f32 ran
#            slower than f64 at 8x8), ncu over unique's inverse scatter (5.5 ms of 9.6, lab/unique_time.lua's steps),
#            and ncu over cat of 64 (kernel and host share).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round15-a.sh
set -u
. lab/run_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
build_sm90
par_specs "spec/fp8_spec.lua spec/linalg_gpu_spec.lua spec/linalg_spec.lua spec/linalg_complex_spec.lua" 4 200
sanitize san-la lab/la_small_sanitize.lua 120 memcheck initcheck
timeout 90 lua5.4 lab/linalg_host.lua > "$R/linalg_host.txt" 2>&1; log "linalg host (ck) rc=$?"
timeout 90 python3 lab/linalg_host.py >> "$R/linalg_host.txt" 2>&1; log "linalg host (torch) rc=$?"
grep -E "cholesky|inv .*10000" "$R/linalg_host.txt"
if command -v ncu > /dev/null; then
  timeout 120 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis -k regex:scatter_k \
    --launch-count 1 lua5.4 -e 'local ck = require "cukern"
      local n = math.tointeger(2 ^ 26)
      local perm = ck.argsort(ck.rand({n}, {device = "cuda"}))
      local src = ck.arange(1, n + 1, {dtype = "i64", device = "cuda"})
      ck.scatter(ck.empty({n}, {dtype = "i64", device = "cuda"}), 1, perm, src); ck.sync()' > "$R/ncu-scatter.txt" 2>&1
  log "ncu scatter rc=$?"; grep -E "Duration|Memory Throughput|DRAM Throughput|L2 Hit" "$R/ncu-scatter.txt" | head -6
fi
log done
