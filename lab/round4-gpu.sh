#!/bin/bash
# Round 3, session 4 on the GPU host: the merged work of issues 35 (complex, FFT, conv), 36 (streams, pinned memory,
# DLPack) and 37 (FP8, rows, attention) in few device calls. Stages (first argument, any of), each under its own
# limit so one call of the device tool (10 minutes) holds several; results under $OUT/r, packed into $OUT/r.tgz:
#   build     make for sm_90a                                                         (~4 min on 16 cores)
#   newspecs  the specs of the new work: complex, fp8, fft, conv, rows, attention, streams, embed
#   mine      FP8 GEMM (cuBLASLt vs torch._scaled_mm) and complex (vs memcpy and torch) benches
#   fft       the FFT ladder and bench/torch_fft.py
#   rows      bench/torch_rows_attention.py, then the rows and attention ladders
#   overlap   lab/issue36-gpu.sh's bench stage (overlap ladder, torch peer, pinned bandwidth, frame loop)
#   speceach  SPECS (a list of spec files), one at a time under T_EACH seconds each
#   OUT=/some/dir bash lab/round4-gpu.sh "build newspecs mine"      (from the repository root; .gpu-lua carried)
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
export NCCL_NVLS_ENABLE=0 CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
R="$OUT/r"; mkdir -p "$R"
trap 'tar czf "$OUT/r.tgz" -C "$OUT" r 2>/dev/null' EXIT
STAGES="${1:-build newspecs}"
T0=$(date +%s)
log() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$R/progress.txt"; }
has() { case " $STAGES " in *" $1 "*) return 0 ;; esac; return 1; }
fails() { grep -B1 -A12 "^FAIL\|^ERROR" "$1" | head -"${2:-60}"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$R/device.txt" 2>&1
if has build; then
  timeout "${T_BUILD:-330}" make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; tail -2 "$R/build.txt"
fi
if has newspecs; then
  for f in complex fp8 fft conv rows attention streams embed; do
    timeout "${T_EACH:-90}" sh spec/run.sh "spec/${f}_spec.lua" > "$R/$f.txt" 2>&1
    log "$f rc=$? $(tail -1 "$R/$f.txt")"; fails "$R/$f.txt" 40
  done
fi
if has mine; then
  timeout 70 python3 bench/torch_fp8.py --out "$R/torch_fp8.json" > "$R/torch_fp8.txt" 2>&1; log "torch fp8 rc=$?"
  CUKERN_RESULTS="$R" timeout 90 lua5.4 examples/fp8_bench.lua --torch "$R/torch_fp8.json" > "$R/fp8_bench.txt" 2>&1
  log "fp8 bench rc=$?"; tail -8 "$R/fp8_bench.txt"
  timeout 50 python3 bench/torch_complex.py --out "$R/torch_complex.json" > "$R/torch_complex.txt" 2>&1; log "torch complex rc=$?"
  CUKERN_RESULTS="$R" timeout 70 lua5.4 examples/complex_bench.lua --torch "$R/torch_complex.json" > "$R/complex_bench.txt" 2>&1
  log "complex bench rc=$?"; tail -8 "$R/complex_bench.txt"
fi
if has fft; then
  timeout 100 python3 bench/torch_fft.py --out "$R/peers-fft.json" > "$R/peers-fft.txt" 2>&1; log "torch fft rc=$?"
  tail -12 "$R/peers-fft.txt"
  CUKERN_PEERS="$R/peers-fft.json" CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/fft_ladder.lua > "$R/fft_ladder.txt" 2>&1
  log "fft ladder rc=$?"; tail -30 "$R/fft_ladder.txt"
fi
if has rows; then
  timeout 90 python3 bench/torch_rows_attention.py --out "$R/peers-rows.json" > "$R/peers-rows.txt" 2>&1
  log "torch rows/attention rc=$?"
  CUKERN_PEERS="$R/peers-rows.json" CUKERN_RESULTS="$R" timeout 100 lua5.4 examples/rows_ladder.lua > "$R/rows_ladder.txt" 2>&1
  log "rows ladder rc=$?"; tail -25 "$R/rows_ladder.txt"
  CUKERN_PEERS="$R/peers-rows.json" CUKERN_RESULTS="$R" timeout 120 lua5.4 examples/attention_ladder.lua > "$R/attention_ladder.txt" 2>&1
  log "attention ladder rc=$?"; tail -25 "$R/attention_ladder.txt"
fi
if has overlap; then
  OUT="$R" timeout "${T_OVERLAP:-200}" bash lab/issue36-gpu.sh bench > "$R/overlap.txt" 2>&1; log "overlap rc=$?"
  tail -40 "$R/overlap.txt"
fi
if has speceach; then # one spec file at a time, each with its own limit (finds the slow or stuck one)
  for f in ${SPECS:-}; do
    b=$(basename "$f" .lua); t0=$(date +%s)
    timeout "${T_EACH:-60}" sh spec/run.sh "$f" > "$R/$b.txt" 2>&1; rc=$?
    log "$b rc=$rc $(($(date +%s) - t0))s $(tail -1 "$R/$b.txt")"
    fails "$R/$b.txt" 30
  done
fi
log done
