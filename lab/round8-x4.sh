#!/bin/bash
# Round 3, session 8, on a 4-GPU host (nvidia-h100-x4 / nvidia-h200-x4; the GPU count comes from the machine).
# Stages (first argument, any of; everything under $OUT/r, packed into $OUT/r.tgz at exit):
#   specs   fresh sm_90a build; the several-GPU specs (devices, collectives, dist, shard, store, multi_sanitize)
#           on every GPU, beside scan_spec and sort_spec on cuda:0 (scan rung 6's status words, sorts without
#           indices); then the scan ladder (scan-<device>.json) and ck.unique / ck.sort without indices beside
#           torch.unique / torch.sort
#   scale   issue 38's rows on all the GPUs: NCCL from C, PyTorch's split, the scaling table, the all-reduce ladder
#           with the C references beside it, the headline rows on every device (lab/issue31-gpu.sh's stage b)
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round8-x4.sh "specs"
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
export R="$OUT/r" T0=$(date +%s); mkdir -p "$R"
trap 'tar czf "$OUT/r.tgz" -C "$OUT" r 2>/dev/null' EXIT
log() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$R/progress.txt"; }
NG=$(nvidia-smi -L | wc -l)
for st in ${1:-specs}; do
case "$st" in
specs)
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv > "$R/device.txt" 2>&1; cat "$R/device.txt"
  nvidia-smi topo -m > "$R/topo.txt" 2>&1
  timeout 330 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; tail -3 "$R/build.txt" | cut -c1-300
  make -s bench-c > "$R/bench-c.log" 2>&1 || tail -5 "$R/bench-c.log"
  spec() { timeout "${T_SPEC:-240}" sh spec/run.sh "spec/$1_spec.lua" > "$R/$1.txt" 2>&1; log "$1 rc=$? $(tail -1 "$R/$1.txt")"; }
  for f in ${SPECS:-devices collectives dist shard store multi_sanitize scan sort}; do spec "$f" & done
  wait
  for f in "$R"/*.txt; do grep -q "^[0-9]* passed, [1-9]" "$f" && grep -B1 -A14 "^FAIL\|^ERROR" "$f" | head -50; done
  CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/scan_ladder.lua > "$R/scan_ladder.txt" 2>&1; log "scan ladder rc=$?"
  grep -E "n=2\^28|16384x16384|1024x262144" "$R/scan_ladder.txt" | head -24
  timeout 40 python3 lab/unique_torch.py > "$R/torch_unique.json" 2> "$R/torch_unique.err"
  timeout 60 lua5.4 lab/unique_time.lua "$R/torch_unique.json" > "$R/unique.txt" 2>&1
  log "unique rc=$?"; cat "$R/unique.txt"
  ;;
scale)
  [ -f cukern/core.so ] || { timeout 330 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; }
  [ -x build/bench/nccl_ref ] || make -s bench-c > "$R/bench-c.log" 2>&1
  timeout 60 build/bench/peer_ref > "$R/peer_c.jsonl" 2> "$R/peer_c.err"
  G=$NG
  timeout 90 build/bench/nccl_ref "$G" > "$R/nccl_c-$G.jsonl" 2> "$R/nccl_c-$G.err"; log "nccl_ref rc=$? $(tail -1 "$R/nccl_c-$G.jsonl")"
  timeout 200 python3 bench/torch_multigpu.py --gpus "$G" --out "$R/torch-$G.json" > "$R/torch-$G.log" 2>&1
  log "torch rc=$?"; tail -4 "$R/torch-$G.log"
  CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/scaling_bench.lua --torch "$R/torch-$G.json" --out "$R/scaling-$G.json" > "$R/scaling-$G.txt" 2>&1
  log "scaling rc=$?"; tail -5 "$R/scaling-$G.txt"
  CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/allreduce_ladder.lua --nccl-c "$R/nccl_c-$G.jsonl" --peer-c "$R/peer_c.jsonl" \
    --scaling "$R/scaling-$G.json" > "$R/allreduce-$G.txt" 2>&1
  log "allreduce ladder rc=$?"; tail -14 "$R/allreduce-$G.txt"
  CUKERN_RESULTS="$R" timeout 120 lua5.4 examples/device_parity.lua > "$R/parity-$G.txt" 2>&1; log "parity rc=$?"; tail -8 "$R/parity-$G.txt"
  ;;
esac
done
log done
