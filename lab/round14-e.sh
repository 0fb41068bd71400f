#!/bin/bash
# For round 3 session 14's last one-GPU call (results: bench/results/round14/e/): the commits after run c/d, which no
# GPU has run:
#   potrf_small (ck.cholesky of real matrices of order <= 32 in one kernel): linalg_gpu/linalg specs, compute-sanitizer
#     memcheck and initcheck over lab/la_small_sanitize.lua, and lab/linalg_host (host time per call beside PyTorch);
#   rung 16 declining C rows that are not 16-byte multiples, and the spec fixes of fp8_spec and tensorcore_spec (run c);
#   ck.unique's flags written in place (sort_spec; lab/unique_time.lua beside lab/unique_torch.py).
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round14-e.sh
set -u
. lab/run_env.sh
export CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
build_sm90
par_specs "spec/sort_spec.lua spec/tensorcore_spec.lua spec/fp8_spec.lua spec/linalg_gpu_spec.lua spec/linalg_spec.lua \
  spec/linalg_complex_spec.lua spec/badinput_spec.lua spec/errors_spec.lua" 8 200
sanitize san-la lab/la_small_sanitize.lua 90 memcheck initcheck
timeout 90 lua5.4 lab/linalg_host.lua > "$R/linalg_host.txt" 2>&1; log "linalg host (ck) rc=$?"
timeout 90 python3 lab/linalg_host.py >> "$R/linalg_host.txt" 2>&1; log "linalg host (torch) rc=$?"
grep -E "cholesky|inv .*10000" "$R/linalg_host.txt"
timeout 90 python3 lab/unique_torch.py > "$R/torch_unique.json" 2> "$R/torch_unique.err"; log "torch unique rc=$?"
timeout 120 lua5.4 lab/unique_time.lua "$R/torch_unique.json" > "$R/unique.txt" 2>&1; log "unique rc=$?"; cat "$R/unique.txt"
log done
