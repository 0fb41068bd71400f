#!/bin/bash
# Round 3, session 3 on the GPU host: the dtype work of issue 32, the linear algebra of issue 34 and the suite.
# Stages (first argument, any of): build specs ew scansort linalg sanitize31 — each with its own time limit so one call of
# the device tool (10 minutes) holds a few of them; results under $OUT/r, packed into $OUT/r.tgz.
#   OUT=/some/dir bash lab/round3-gpu.sh "build specs"      (from the repository root; .gpu-lua carried)
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
export NCCL_NVLS_ENABLE=0 CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
R="$OUT/r"; mkdir -p "$R"
trap 'tar czf "$OUT/r.tgz" -C "$OUT" r 2>/dev/null' EXIT
STAGES="${1:-build specs}"
T0=$(date +%s)
log() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$R/progress.txt"; }
has() { case " $STAGES " in *" $1 "*) return 0 ;; esac; return 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$R/device.txt" 2>&1
if has build; then
  timeout 300 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; tail -3 "$R/build.txt"
fi
if has specs; then
  # SPECS: a list of spec files (default: all of them)
  timeout "${T_SPECS:-330}" sh spec/run.sh ${SPECS:-} > "$R/specs.txt" 2>&1; log "specs rc=$? $(tail -1 "$R/specs.txt")"
  grep -B1 -A12 "^FAIL\|^ERROR" "$R/specs.txt" | head -150
fi
if has speceach; then # one spec file at a time, each with its own limit (finds the slow or stuck one)
  for f in ${SPECS:-}; do
    b=$(basename "$f" .lua); t0=$(date +%s)
    timeout "${T_EACH:-60}" sh spec/run.sh "$f" > "$R/$b.txt" 2>&1; rc=$?
    log "$b rc=$rc $(($(date +%s) - t0))s $(tail -1 "$R/$b.txt")"
    grep -B1 -A10 "^FAIL\|^ERROR" "$R/$b.txt" | head -40
  done
fi
if has ew; then
  CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/elementwise_bench.lua > "$R/ew_bench.txt" 2>&1; log "ew bench rc=$?"
  tail -30 "$R/ew_bench.txt"
fi
if has scansort; then
  timeout "${T_PEERS:-150}" python3 bench/torch_scan_sort.py --out "$R/peers.json" > "$R/peers_scan_sort.txt" 2>&1; log "torch scan/sort rc=$?"
  for l in scan sort histogram; do
    CUKERN_RESULTS="$R" timeout "${T_LADDER:-140}" lua5.4 "examples/${l}_ladder.lua" > "$R/${l}_ladder.txt" 2>&1
    log "$l ladder rc=$?"; tail -25 "$R/${l}_ladder.txt"
  done
fi
if has linalg; then
  timeout 120 sh spec/run.sh spec/linalg_spec.lua spec/linalg_gpu_spec.lua spec/linalg_octave_spec.lua > "$R/specs-linalg.txt" 2>&1
  log "linalg specs rc=$? $(tail -1 "$R/specs-linalg.txt")"; grep -B1 -A12 "^FAIL\|^ERROR" "$R/specs-linalg.txt" | head -60
  timeout 150 python3 bench/torch_linalg.py "$R/torch_linalg.json" --quick > "$R/torch_linalg.txt" 2>&1; log "torch linalg rc=$?"
  CUKERN_RESULTS="$R" timeout 200 lua5.4 examples/linalg_bench.lua --torch "$R/torch_linalg.json" > "$R/linalg_bench.txt" 2>&1
  log "linalg bench rc=$?"; tail -40 "$R/linalg_bench.txt"
fi
if has sanitize31; then
  OUT="$R" timeout 400 bash lab/issue31-gpu.sh "c" > "$R/issue31.txt" 2>&1; log "issue31 c rc=$?"; tail -40 "$R/issue31.txt"
fi
log done
