#!/bin/bash
# Round 3, session 12's verification call, on a 4-GPU host (H100s: single-GPU work runs on one card while the
# others take other work). Results: bench/results/round12/final/.
#   after a fresh sm_90a build, four lanes at once, one GPU each (CUDA_VISIBLE_DEVICES):
#     GPU 0: the scan ladder (scan-<device>.json: CUB's reference on plain pointers, rung 6's look-back sleeps),
#            lab/scan_delay.lua under several sleep settings (rung 6 at 2^28, rung 10 along dim 1 of 16384^2);
#     GPU 1: the spec files this session touched (scan, fft, bench);
#     GPU 2: compute-sanitizer memcheck and racecheck over lab/issue33_sanitize.lua, with small sleeps forced
#            (CUKERN_SCAN_*) so that the sleeping look-back paths run under the tools on small cases;
#     GPU 3: the FFT peers (fft2 4096^2, rfft 2^28 beside PyTorch and CuPy, both sides with the L2 flushed and no
#            wait between the flush and the start event); the host time per small linear-algebra call beside
#            PyTorch's (lab/linalg_host.lua, lab/linalg_host.py).
#   then on all GPUs and on two: PyTorch's split (bench/torch_multigpu.py) and the scaling table beside it
#   (examples/scaling_bench.lua --torch), lab/split_probe.lua on all.
#   OUT=/dir CUKERN_COMMIT=abc bash lab/round12-final.sh
set -u
. lab/run_env.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
NG=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv > "$R/device.txt" 2>&1; cat "$R/device.txt"
timeout 300 make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; grep -m3 error "$R/build.txt"
lane0() {
  export CUDA_VISIBLE_DEVICES=0
  CUKERN_RESULTS="$R" timeout 150 lua5.4 examples/scan_ladder.lua > "$R/scan_ladder.txt" 2>&1; log "scan ladder rc=$?"
  for s in "" "CUKERN_SCAN_DELAY=0 CUKERN_SCAN_POLL=0" "CUKERN_SCAN_DELAY=3000" \
           "CUKERN_SCAN_COLS_DELAY=2200 CUKERN_SCAN_COLS_POLL=688" "CUKERN_SCAN_COLS_POLL=688"; do
    env $s timeout 40 lua5.4 lab/scan_delay.lua >> "$R/scan_delay.txt" 2>&1
  done
  log "scan delay rc=$?"
}
lane1() {
  export CUDA_VISIBLE_DEVICES=1
  for f in scan fft bench; do
    timeout 200 sh spec/run.sh "spec/${f}_spec.lua" > "$R/${f}_spec.txt" 2>&1; log "${f}_spec rc=$? $(tail -1 "$R/${f}_spec.txt")"
  done
}
lane2() {
  export CUDA_VISIBLE_DEVICES=2 CUKERN_SYNC=1 CUKERN_SCAN_DELAY=200 CUKERN_SCAN_POLL=100 CUKERN_SCAN_COLS_DELAY=200 \
    CUKERN_SCAN_COLS_POLL=100
  for tool in memcheck racecheck; do
    extra=""; [ "$tool" = racecheck ] && extra="--racecheck-report all" && export SAN_QUICK=1
    # shellcheck disable=SC2086
    timeout 170 compute-sanitizer --tool "$tool" $extra --print-limit 50 --error-exitcode 9 lua5.4 lab/issue33_sanitize.lua \
      > "$R/san33-$tool.txt" 2>&1
    log "san33 $tool rc=$? $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/san33-$tool.txt") $(grep -v '^=' "$R/san33-$tool.txt" | tail -1)"
  done
}
lane3() {
  export CUDA_VISIBLE_DEVICES=3
  OUT="$R" timeout 200 bash lab/issue35-gpu.sh peers > "$R/fft_peers.txt" 2>&1; log "fft peers rc=$?"
  timeout 90 lua5.4 lab/linalg_host.lua > "$R/linalg_host.txt" 2>&1; log "linalg host (ck) rc=$?"
  timeout 90 python3 lab/linalg_host.py >> "$R/linalg_host.txt" 2>&1; log "linalg host (torch) rc=$?"
}
lane0 & lane1 & lane2 & lane3 &
wait
log "lanes done"; grep -E "^ *(0|6|10) " "$R/scan_ladder.txt" | tail -16; cat "$R/scan_delay.txt" "$R/linalg_host.txt"
grep -E "fft2|rfft" "$R/fft_peers.txt"
scale() { # G label
  local G=$1 L=$2
  timeout 60 python3 bench/torch_multigpu.py --gpus "$G" --out "$R/torch-$L.json" > "$R/torch-$L.log" 2>&1
  log "torch $L rc=$?"
  CUKERN_RESULTS="$R" timeout 100 lua5.4 examples/scaling_bench.lua --torch "$R/torch-$L.json" --out "$R/scaling-$L.json" \
    > "$R/scaling-$L.txt" 2>&1
  log "scaling $L rc=$?"; tail -5 "$R/scaling-$L.txt"
}
scale "$NG" "$NG"
timeout 60 lua5.4 lab/split_probe.lua > "$R/split-$NG.txt" 2>&1; log "split probe rc=$?"; head -9 "$R/split-$NG.txt"
CUDA_VISIBLE_DEVICES=0,1 scale 2 2
for f in "$R"/*_spec.txt; do grep -q "^[0-9]* passed, [1-9]" "$f" && grep -B1 -A14 "^FAIL\|^ERROR" "$f" | head -40; done
log done
