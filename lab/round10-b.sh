#!/bin/bash
# Round 3, session 10, second one-GPU call: matmul rung 17 (dmma, f64 on the tensor cores) and LU's f64 trailing
# update on it; the allocator's small-block segments (issue 31's issue time). Build; the specs these touch plus the
# three that session 10's first call left unrun; lab/dmma_sanitize.lua under memcheck and initcheck (each of dmma's
# three configurations); lab/dmma_bench.lua (default pick, then each configuration); lab/lu_probe.lua at 8192 and
# 4096; the LU ladder (examples/linalg_bench.lua --only lu); lab/issue_probe.lua twice.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round10-b.sh
set -u
. lab/run_env.sh
timeout 320 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; grep -m3 error "$R/build.txt"
for i in 1 2; do timeout 60 lua5.4 lab/issue_probe.lua > "$R/issue_probe$i.txt" 2>&1; log "issue probe rc=$?"; done
timeout 100 lua5.4 lab/dmma_bench.lua > "$R/dmma_bench.txt" 2>&1; log "dmma bench rc=$?"; cat "$R/dmma_bench.txt"
for c in 0 1 2; do
  CUKERN_MM_CFG=$c timeout 60 lua5.4 lab/dmma_bench.lua > "$R/dmma_bench_cfg$c.txt" 2>&1; log "dmma bench cfg $c rc=$?"
done
timeout 60 lua5.4 lab/lu_probe.lua 8192 > "$R/lu_probe.txt" 2>&1; log "lu probe rc=$?"
timeout 40 lua5.4 lab/lu_probe.lua 4096 >> "$R/lu_probe.txt" 2>&1; log "lu probe 4096 rc=$?"; cat "$R/lu_probe.txt"
for c in 0 1 2; do for tool in memcheck initcheck; do
  CUKERN_MM_CFG=$c CUKERN_SYNC=1 timeout 60 compute-sanitizer --tool $tool --print-limit 20 --error-exitcode 9 \
    lua5.4 lab/dmma_sanitize.lua > "$R/dmma-$tool-$c.txt" 2>&1
  log "dmma cfg $c $tool rc=$? $(grep -m1 'ERROR SUMMARY' "$R/dmma-$tool-$c.txt") $(grep -c '^ok' "$R/dmma-$tool-$c.txt") ok"
done; done
timeout 200 sh spec/run.sh spec/matmul_spec.lua spec/core_spec.lua spec/linalg_gpu_spec.lua spec/linalg_spec.lua \
  spec/graph_spec.lua spec/reduce_spec.lua > "$R/specs.txt" 2>&1; log "specs rc=$? $(tail -1 "$R/specs.txt")"
grep -B1 -A14 "^FAIL\|^ERROR" "$R/specs.txt" | head -60
for s in streams multi_sanitize embed; do
  timeout 120 sh spec/run.sh spec/${s}_spec.lua > "$R/$s.txt" 2>&1; log "$s rc=$? $(tail -1 "$R/$s.txt")"
  grep -B1 -A14 "^FAIL\|^ERROR" "$R/$s.txt" | head -30
done
CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/linalg_bench.lua --only lu > "$R/lu_bench.txt" 2>&1; log "lu bench rc=$?"
tail -30 "$R/lu_bench.txt"; cat "$R/issue_probe2.txt"
log done
