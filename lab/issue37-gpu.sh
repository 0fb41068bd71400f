#!/bin/bash
# Issue 37, part 1 (the row-op and attention ladders) on one H100 (nvidia-h100-x1), from the repository root:
#   OUT=/some/dir bash lab/issue37-gpu.sh "build specs bench sanitize"     (.gpu-lua carried; each stage timed out)
#   build     make for sm_90a (then -Xptxas -v of the new kernels into ptxas.txt)             ~ 3-4 min on 16 cores
#   specs     spec/rows_spec.lua and spec/attention_spec.lua on the GPU                        ~ 1 min (limit 150 s)
#   bench     the PyTorch peers (bench/torch_rows_attention.py), then examples/rows_ladder.lua and
#             examples/attention_ladder.lua reading them (CUKERN_PEERS): rows-<device>.json, attention-<device>.json
#             with ratio_to_torch and peer rows                                               ~ 3 min (limits 90+100+120 s)
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck over lab/issue37_sanitize.lua (every new rung on
#             small cases, checked against the host)                                          ~ 2 min (limit 60 s each)
#   ncu       (optional) an ncu summary of the flash2 rung (tensor-pipe utilisation) into ncu-flash2.txt
# Results under $OUT/r37 (copy the JSON into bench/results/), packed into $OUT/r37.tgz.
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
R="${OUT:-/tmp}/r37"; mkdir -p "$R"
trap 'tar czf "${OUT:-/tmp}/r37.tgz" -C "${OUT:-/tmp}" r37 2>/dev/null' EXIT
STAGES="${1:-build specs bench sanitize}"
T0=$(date +%s)
log() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$R/progress.txt"; }
has() { case " $STAGES " in *" $1 "*) return 0 ;; esac; return 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$R/device.txt" 2>&1
if has build; then
  timeout 420 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; tail -3 "$R/build.txt"
  for f in kernels/rows/*.cu kernels/attention/*.cu; do
    echo "== $f"; timeout 60 /usr/local/cuda/bin/nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Ikernels \
      --expt-relaxed-constexpr -Xptxas -v -c "$f" -o /dev/null 2>&1 | grep -E "Function properties|registers|spill" | head -200
  done > "$R/ptxas.txt" 2>&1 &
fi
if has specs; then
  timeout 150 sh spec/run.sh spec/rows_spec.lua spec/attention_spec.lua > "$R/specs.txt" 2>&1
  log "specs rc=$? $(tail -1 "$R/specs.txt")"; grep -B1 -A14 "^FAIL\|^ERROR" "$R/specs.txt" | head -120
fi
if has bench; then
  timeout 90 python3 bench/torch_rows_attention.py --out "$R/peers.json" > "$R/peers.txt" 2>&1; log "torch peers rc=$?"
  tail -30 "$R/peers.txt"
  CUKERN_PEERS="$R/peers.json" CUKERN_RESULTS="$R" timeout 100 lua5.4 examples/rows_ladder.lua > "$R/rows_ladder.txt" 2>&1
  log "rows ladder rc=$?"; tail -60 "$R/rows_ladder.txt"
  CUKERN_PEERS="$R/peers.json" CUKERN_RESULTS="$R" timeout 120 lua5.4 examples/attention_ladder.lua > "$R/attention_ladder.txt" 2>&1
  log "attention ladder rc=$?"; tail -60 "$R/attention_ladder.txt"
fi
if has sanitize; then
  for tool in memcheck racecheck synccheck; do
    extra=""; [ "$tool" = racecheck ] && extra="--racecheck-report all"
    # shellcheck disable=SC2086
    CUKERN_SYNC=1 timeout 60 compute-sanitizer --tool "$tool" $extra --print-limit 50 --error-exitcode 9 \
      lua5.4 lab/issue37_sanitize.lua > "$R/san-$tool.txt" 2>&1
    log "$tool rc=$? $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/san-$tool.txt") $(grep issue37_sanitize: "$R/san-$tool.txt" | tail -1)"
    grep -m5 "^BAD" "$R/san-$tool.txt"
  done
fi
if has ncu; then
  timeout 120 ncu --clock-control none --kernel-name regex:attn_flash2 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
    lua5.4 -e 'local ck = require "cukern"
      local q = ck.randn({4, 16, 4096, 128}, {device = "cuda", dtype = "bf16"})
      ck.attention(q, q, q, {variant = "flash2"}); ck.sync()' > "$R/ncu-flash2.txt" 2>&1; log "ncu rc=$?"
  grep -E "Tensor|SM Busy|Throughput|Duration" "$R/ncu-flash2.txt" | head -20
fi
wait
log "done"
