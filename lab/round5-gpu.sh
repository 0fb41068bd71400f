#!/bin/bash
# Round 3, session 5 on the GPU host: the whole suite under the host-oracle rule of spec/helpers.lua's H.gpu, the
# scan/sort and linear-algebra benchmarks that never ran (issues 33, 34), and the sanitizer/ncu/nsys checks of
# issues 33, 35, 36 and 37, in few device calls. Stages (first argument, any of), each under its own limit:
#   build     make for sm_90a                                                         (~3-4 min on 16 cores)
#   probe     lab/scan_probe.lua: each scan rung alone on 2^20+1 and 300x5000, flushed line by line
#   speceach  PAR_SPECS NPAR at a time, then SPECS (default: every spec file) one at a time, under T_EACH seconds
#             each; a summary line at the end (a file that did not finish counts as one failure)
#   scansort  bench/torch_scan_sort.py, then the scan, sort and histogram ladders (scan-/sort-/histogram-<device>.json)
#   linalg    bench/torch_linalg.py --quick, then examples/linalg_bench.lua (lu-/linalg-<device>.json)
#   san33 san35 san37   compute-sanitizer over lab/issue3N_sanitize.lua (TOOLS: default per issue)
#   san36     compute-sanitizer racecheck and memcheck over the streams spec's child (allocator reuse across streams)
#   nvtx      nsys (or ncu --nvtx where nsys is missing) over a small script with CUKERN_NVTX=1: ranges named after Lua lines
#   complexbench  examples/complex_bench.lua (fused c64 ops vs memcpy; cgemm)
#   scanladder / sortladder   one ladder each (no peers); topkpeer: torch.topk beside the topk cases, same run
#   fftpeers  lab/issue35-gpu.sh peers: torch.fft2/rfft/conv2d and cukern's fft2, rfft, conv2 in the same run
#   overlap24 the overlap ladder with 24 chunks of 16 MiB beside the default 12 of 32 MiB (the pipeline's fill and
#             drain cost one chunk each: smaller chunks bring the three-stream rung closer to the bound)
#   ncu       ncu summaries of the flash2 attention rung and the FP8 GEMM row (tensor-pipe utilisation)
#   OUT=/some/dir bash lab/round5-gpu.sh "build probe speceach"      (from the repository root; .gpu-lua carried)
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
export NCCL_NVLS_ENABLE=0 CUKERN_COMMIT="${CUKERN_COMMIT:-unknown}"
[ -f /usr/include/dlpack/dlpack.h ] || [ ! -f .gpu-lua/include/dlpack/dlpack.h ] || export DLPACK_INCDIR="$PWD/.gpu-lua/include"
R="$OUT/r"; mkdir -p "$R"
trap 'tar czf "$OUT/r.tgz" -C "$OUT" r 2>/dev/null' EXIT
STAGES="${1:-build speceach}"
T0=${T0:-$(date +%s)} # (an outer T0 makes DEADLINE count from the first of several invocations)
log() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$R/progress.txt"; }
# DEADLINE (seconds from the start): a stage that would begin after it is skipped and says so, so the call ends
# with its logs packed instead of being killed mid-stage; HARD: no spec file runs past it (its limit shrinks)
has() {
  case " $STAGES " in *" $1 "*) ;; *) return 1 ;; esac
  if [ -n "${DEADLINE:-}" ] && [ $(($(date +%s) - T0)) -ge "$DEADLINE" ]; then log "$1 skipped (past DEADLINE)"; return 1; fi
  return 0
}
fails() { grep -B1 -A12 "^FAIL\|^ERROR" "$1" | head -"${2:-60}"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$R/device.txt" 2>&1
. lab/sanitize.sh
if has build; then
  timeout "${T_BUILD:-360}" make -j"$(nproc)" all CUDA_ARCH=90a > "$R/build.txt" 2>&1; log "build rc=$?"; tail -2 "$R/build.txt"
fi
if has probe; then
  timeout "${T_PROBE:-90}" lua5.4 lab/scan_probe.lua > "$R/scan_probe.txt" 2>&1; log "scan probe rc=$?"
  sort -k8 -n -r "$R/scan_probe.txt" | head -8
fi
# one spec file: its own limit (T_EACH, shrunk to HARD), its output in $R/<name>.txt, one progress line
spec_one() {
  local f=$1 b t0 lim rc
  b=$(basename "$f" .lua); t0=$(date +%s)
  if [ -n "${DEADLINE:-}" ] && [ $((t0 - T0)) -ge "$DEADLINE" ]; then log "$b not run (past DEADLINE)"; return; fi
  lim=${T_EACH:-100}; [ -n "${HARD:-}" ] && [ $((HARD - (t0 - T0))) -lt "$lim" ] && lim=$((HARD - (t0 - T0)))
  [ "$lim" -lt 5 ] && lim=5
  timeout "$lim" sh spec/run.sh "$f" > "$R/$b.txt" 2>&1; rc=$?
  log "$b rc=$rc $(($(date +%s) - t0))s $(tail -1 "$R/$b.txt")"
}
if has speceach; then
  # PAR_SPECS run NPAR at a time (one GPU, several processes: the specs' time is mostly their host oracles), then
  # SPECS one at a time (those that need the GPU's memory or timing to themselves: OOM, 2^31 elements, streams)
  export -f spec_one log; export R T0 T_EACH DEADLINE HARD 2>/dev/null
  [ -n "${PAR_SPECS:-}" ] && printf '%s\n' $PAR_SPECS | xargs -P "${NPAR:-4}" -I{} bash -c 'spec_one "$@"' _ {}
  for f in ${SPECS-spec/*_spec.lua}; do spec_one "$f"; done
  P=0; F=0; S=0
  for f in ${PAR_SPECS:-} ${SPECS-spec/*_spec.lua}; do
    b=$(basename "$f" .lua)
    last=$(tail -1 "$R/$b.txt" 2>/dev/null)
    set -- $(echo "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped.*/\1 \2 \3/p')
    if [ $# -eq 3 ]; then P=$((P + $1)); F=$((F + $2)); S=$((S + $3)); [ "$2" = 0 ] || fails "$R/$b.txt" 40
    else F=$((F + 1)); echo "== $b did not finish:"; tail -c 600 "$R/$b.txt" 2>/dev/null; echo; fi
  done
  log "speceach total: $P passed, $F failed, $S skipped"
fi
if has scansort; then
  timeout "${T_PEERS:-150}" python3 bench/torch_scan_sort.py --out "$R/peers.json" > "$R/peers_scan_sort.txt" 2>&1
  log "torch scan/sort rc=$?"; tail -12 "$R/peers_scan_sort.txt"
  for l in scan sort histogram; do
    CUKERN_PEERS="$R/peers.json" CUKERN_RESULTS="$R" timeout "${T_LADDER:-140}" lua5.4 "examples/${l}_ladder.lua" > "$R/${l}_ladder.txt" 2>&1
    log "$l ladder rc=$?"; tail -30 "$R/${l}_ladder.txt"
  done
fi
if has linalg; then
  timeout "${T_TORCH_LA:-150}" python3 bench/torch_linalg.py "$R/torch_linalg.json" --quick > "$R/torch_linalg.txt" 2>&1
  log "torch linalg rc=$?"; tail -5 "$R/torch_linalg.txt"
  CUKERN_RESULTS="$R" timeout "${T_LA:-200}" lua5.4 examples/linalg_bench.lua --torch "$R/torch_linalg.json" > "$R/linalg_bench.txt" 2>&1
  log "linalg bench rc=$?"; tail -45 "$R/linalg_bench.txt"
fi
if has complexbench; then
  timeout 60 python3 bench/torch_complex.py --out "$R/torch_complex.json" > "$R/torch_complex.txt" 2>&1; log "torch complex rc=$?"
  CUKERN_RESULTS="$R" timeout 90 lua5.4 examples/complex_bench.lua --torch "$R/torch_complex.json" > "$R/complex_bench.txt" 2>&1
  log "complex bench rc=$?"; tail -14 "$R/complex_bench.txt"
fi
if has topkpeer; then
  timeout 60 python3 - > "$R/torch_topk.txt" 2>&1 <<'PY'
import torch, json
def timed(fn, reps=20):
    for _ in range(3): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts) // 2]
x = torch.rand(2**28, device="cuda"); s = torch.rand(65536, 1024, device="cuda")
print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
  "topk f32 n=2^28 k=1024": timed(lambda: torch.topk(x, 1024)),
  "topk f32 65536x1024 dim 2 k=10": timed(lambda: torch.topk(s, 10, 1))}))
PY
  log "torch topk rc=$? $(cat "$R/torch_topk.txt" | tail -1)"
fi
for l in scan sort; do
  if has ${l}ladder; then
    CUKERN_RESULTS="$R" timeout "${T_LADDER:-140}" lua5.4 "examples/${l}_ladder.lua" > "$R/${l}_ladder.txt" 2>&1
    log "$l ladder rc=$?"; tail -42 "$R/${l}_ladder.txt"
  fi
done
if has overlap24; then
  for cfg in "12 32" "24 16"; do
    set -- $cfg
    mkdir -p "$R/overlap-$1x$2"
    CUKERN_RESULTS="$R/overlap-$1x$2" timeout 90 lua5.4 examples/overlap_ladder.lua --chunks "$1" --mb "$2" > "$R/overlap-$1x$2.txt" 2>&1
    log "overlap ladder $1 chunks of $2 MiB rc=$?"; grep -E "three_streams|two_streams|bound" "$R/overlap-$1x$2.txt" | head -6
  done
fi
if has san35; then sanitize san35 lab/issue35_sanitize.lua "${T_SAN:-150}" ${TOOLS:-memcheck racecheck synccheck}; fi
if has san33; then sanitize san33 lab/issue33_sanitize.lua "${T_SAN:-150}" ${TOOLS:-memcheck racecheck synccheck initcheck}; fi
if has san37; then sanitize san37 lab/issue37_sanitize.lua "${T_SAN:-150}" ${TOOLS:-memcheck racecheck synccheck}; fi
if has san36; then
  for tool in racecheck memcheck; do
    extra=""; [ "$tool" = racecheck ] && extra="--racecheck-report all"
    # shellcheck disable=SC2086
    CUKERN_CHECK_STREAMS=1 CUKERN_STREAMS_N=65536 timeout 150 compute-sanitizer --tool "$tool" $extra --print-limit 50 \
      --error-exitcode 9 lua5.4 spec/streams_child.lua 1 > "$R/san36-$tool.txt" 2>&1
    log "san36 $tool rc=$? $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/san36-$tool.txt") $(grep -c '^ok' "$R/san36-$tool.txt") ok, $(grep -c '^not ok' "$R/san36-$tool.txt") not ok"
  done
fi
if has nvtx; then
  cat > "$R/nvtx_demo.lua" <<'LUA'
local ck = require "cukern"
local x = ck.rand(1 << 20, {device = "cuda"})
local y = x * 2 + 1
local s = ck.sum(y)
ck.nvtx.range("frame", function() local z = y:mul(y):sqrt(); return ck.sum(z) end)
print(s:item())
LUA
  if command -v nsys > /dev/null; then
    CUKERN_NVTX=1 timeout 90 nsys profile --trace=cuda,nvtx -o "$R/nvtx" --force-overwrite true lua5.4 "$R/nvtx_demo.lua" > "$R/nsys.txt" 2>&1
    log "nsys rc=$?"
    timeout 60 nsys stats --report nvtx_sum --format csv "$R/nvtx.nsys-rep" > "$R/nvtx_ranges.txt" 2>&1
    timeout 60 nsys stats --report nvtx_kern_sum --format csv "$R/nvtx.nsys-rep" >> "$R/nvtx_ranges.txt" 2>&1
    rm -f "$R"/nvtx.nsys-rep "$R"/nvtx.sqlite
  else
    log "no nsys here: ncu --nvtx instead"
    CUKERN_NVTX=1 timeout 120 ncu --clock-control none --nvtx --print-nvtx-rename kernel --section LaunchStats lua5.4 "$R/nvtx_demo.lua" > "$R/nvtx_ranges.txt" 2>&1
    log "ncu nvtx rc=$?"
  fi
  grep -i -m12 "scan\|nvtx\|frame\|\.lua" "$R/nvtx_ranges.txt"
fi
if has ncu; then
  # --clock-control none: ncu must never lock the GPU's clocks here (DEVELOPERS.md); only metrics this ncu knows
  known=$(ncu --query-metrics --chip gh100 2>/dev/null | awk '{print $1}')
  mets=""
  for m in sm__pipe_tensor_op_hmma_cycles_active sm__pipe_tensor_op_gmma_cycles_active sm__inst_executed_pipe_tensor_op_hmma \
           sm__pipe_shared_cycles_active sm__pipe_alu_cycles_active sm__pipe_fma_cycles_active; do
    printf '%s\n' "$known" | grep -qx "$m" && mets="$mets,$m.avg.pct_of_peak_sustained_active"
  done
  mets=${mets#,}
  NCU="ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis ${mets:+--metrics $mets}"
  timeout 150 $NCU --kernel-name regex:attn_flash2 --launch-count 1 \
    lua5.4 -e 'local ck = require "cukern"
      local q = ck.randn({4, 16, 4096, 128}, {device = "cuda", dtype = "bf16"})
      ck.attention(q, q, q, {variant = "flash2"}); ck.sync()' > "$R/ncu-flash2.txt" 2>&1; log "ncu flash2 rc=$?"
  grep -E "pipe|SM Busy|Throughput|Duration|Frequency" "$R/ncu-flash2.txt" | head -16
  timeout 150 $NCU --kernel-name regex:'(?i)gemm|xmma|cutlass|sm90' --launch-count 1 \
    lua5.4 -e 'local ck = require "cukern"
      local a = (ck.rand({8192, 8192}, {device = "cuda"}) * 2 - 1):to("e4m3")
      local bt = (ck.rand({8192, 8192}, {device = "cuda"}) * 2 - 1):to("e4m3")
      local c = ck.empty({8192, 8192}, {dtype = "bf16", device = "cuda"})
      ck.matmul(a, bt:t(), {out = c}); ck.sync(); print(ck.last_ran().name)' > "$R/ncu-fp8.txt" 2>&1
  log "ncu fp8 rc=$?"; grep -E "pipe|SM Busy|Throughput|Duration|Frequency|cublaslt" "$R/ncu-fp8.txt" | head -16
fi
if has fftpeers; then # torch.fft / conv2d beside ck.fft2, rfft, conv2 (issue 35's targets), same run
  OUT="$R" timeout 200 bash lab/issue35-gpu.sh peers > "$R/fftpeers.txt" 2>&1; log "fft peers rc=$?"; tail -14 "$R/fftpeers.txt"
fi
log done
