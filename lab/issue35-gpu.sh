#!/bin/bash
# Issue 35 (the FFT ladder, cuFFT, ck.conv) on one H100 (nvidia-h100-x1), from the repo root, with $OUT an output dir:
#   bash lab/issue35-gpu.sh [stages]        (default "build specs ladder peers sanitize")
#   build:    make for sm_90a; -Xptxas -v of kernels/fft/*.cu                                   (~4-6 min cold, 0 warm)
#   specs:    a smoke test; the FFT's specs on both backends (every rung against the host, NumPy/Octave, conv) and
#             those of the code the FFT touched (complex, scan, hist, errors, architecture)              (~2 min)
#   allspecs: (not in the default) every spec                                                     (~5-10 min)
#   ladder:   examples/fft_ladder.lua -> $OUT/fft-<device>.json (CUKERN_RESULTS)            (~1 min)
#   peers:    bench/torch_fft.py (PyTorch torch.fft, conv2d; CuPy when installed) -> $OUT/peers-fft.json; then
#             ck.conv2 4096^2 by 31^2 (direct) and by 512^2 (fft), fft2 4096^2, rfft 2^28 timed by ck.bench (~1 min)
#             (L2 flushed before each rep and no wait between the flush and the start event, as bench/torch_fft.py
#             times its peers: the device time, the host's issue time hidden behind the flush on both sides)
#   sanitize: compute-sanitizer memcheck, racecheck, synccheck over lab/issue35_sanitize.lua (every rung of the FFT
#             ladder and both ways of conv2 on small cases, checked against the host)                      (~2 min)
# Logs go to $OUT (or /tmp/issue35); copy the JSON into bench/results/ to commit it.
set -u
[ -f .gpu-lua/env.sh ] && . .gpu-lua/env.sh
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
R=${OUT:-/tmp/issue35}; mkdir -p "$R"
J=$(nproc)
build() { [ -f cukern/core.so ] && [ -z "${REBUILD:-}" ] || make -j"$J" all CUDA_ARCH=90a >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }; }
for st in ${1:-build specs ladder peers sanitize}; do
case "$st" in
build)
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv | tee "$R/device.txt"
  t0=$(date +%s); REBUILD=${REBUILD:-1} build; echo "build: $(( $(date +%s) - t0 )) s"
  for f in kernels/fft/*.cu; do
    echo "== $f"; /usr/local/cuda/bin/nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Ikernels \
      --expt-relaxed-constexpr -Xptxas -v -c "$f" -o /dev/null 2>&1 | grep -E "Function properties|registers|spill"
  done > "$R/ptxas-fft.txt" 2>&1
  ;;
specs)
  build
  echo "== smoke"
  timeout 120 lua5.4 -e '
    local ck = require "cukern"
    local h = ck.complex(ck.rand(4, 1024), ck.rand(4, 1024))
    local ref = ck.fft(h)
    for _, v in ipairs(ck.variants("fft")) do
      local ok, y = pcall(ck.fft, h:to("cuda"), {variant = v.name})
      print("fft", v.name, ok and ck.last_ran().name or y,
            ok and (y:to("host"):real() - ref:real()):abs():max():item())
    end' 2>&1 | tail -8
  echo "== the FFT's specs, and those of the code it touched (complex, scan/sort/hist's host wrapper, catalogues)"
  timeout 300 sh spec/run.sh spec/fft_spec.lua spec/conv_spec.lua spec/fft_peers_spec.lua spec/complex_spec.lua \
    spec/scan_spec.lua spec/hist_spec.lua spec/errors_spec.lua spec/architecture_spec.lua >"$R/specs-fft.log" 2>&1
  echo "rc=$?"; grep -B2 -A14 "^FAIL\|^ERROR" "$R/specs-fft.log" | head -80; tail -1 "$R/specs-fft.log"
  ;;
allspecs) # (not in the default stages: the whole suite, several minutes on a GPU)
  build
  timeout "${T_SPECS:-900}" sh spec/run.sh >"$R/specs.log" 2>&1
  echo "rc=$?"; grep -B2 -A14 "^FAIL\|^ERROR" "$R/specs.log" | head -60; tail -1 "$R/specs.log"
  ;;
ladder)
  build
  CUKERN_RESULTS="$R" timeout 300 lua5.4 examples/fft_ladder.lua 2>&1 | tail -60
  ;;
peers)
  build
  timeout 240 python3 bench/torch_fft.py --out "$R/peers-fft.json" >"$R/peers-fft.log" 2>&1
  echo "peers rc=$?"; tail -20 "$R/peers-fft.log"
  timeout 240 lua5.4 -e '
    local ck = require "cukern"
    local function t(name, f) f(); local r = ck.bench{fn = f, warmup = 2, reps = 10, device = "cuda", flush = true}; print(("%-40s %9.3f ms"):format(name, r.ms)) end
    local img = ck.rand(4096, 4096, {device = "cuda"})
    local k31, k512 = ck.rand(31, 31, {device = "cuda"}), ck.rand(512, 512, {device = "cuda"})
    t("ck.conv2 full 4096^2 by 31^2 (direct)", function() return ck.conv2(img, k31) end)
    t("ck.conv2 full 4096^2 by 512^2 (fft)", function() return ck.conv2(img, k512) end)
    local m = ck.complex(img, img)
    t("ck.fft2 c64 4096x4096", function() return ck.fft2(m) end)
    local r = ck.rand(2^28, {device = "cuda"})
    t("ck.rfft f32 n=2^28", function() return ck.rfft(r) end)' 2>&1 | tee "$R/cukern-peers.log"
  ;;
sanitize)
  build
  CUKERN_SYNC=1 timeout 120 lua5.4 lab/issue35_sanitize.lua 2>&1 | tail -3
  for tool in ${TOOLS:-memcheck racecheck synccheck}; do
    extra=""; [ "$tool" = racecheck ] && extra="--racecheck-report all"
    # shellcheck disable=SC2086
    CUKERN_SYNC=1 timeout 240 compute-sanitizer --tool "$tool" $extra --print-limit 50 --error-exitcode 9 \
      lua5.4 lab/issue35_sanitize.lua >"$R/san-$tool.log" 2>&1
    echo "$tool: rc=$? $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/san-$tool.log") $(grep issue35_sanitize: "$R/san-$tool.log" | tail -1)"
  done
  ;;
esac
done
