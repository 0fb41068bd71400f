#!/bin/bash
# Issue 33 (scan and sort ladders) on one H100 (nvidia-h100-x1), from the repo root, with $OUT an output dir:
#   bash lab/issue33-gpu.sh [stages]        (default "a b c")
#   stage a: build (sm_90a); a smoke test; the new specs (scan, sort), then every spec.
#   stage b: the ladders (examples/scan_ladder.lua, sort_ladder.lua, histogram_ladder.lua -> scan-<device>.json,
#            sort-<device>.json, histogram-<device>.json) and the peers in the same run (bench/torch_scan_sort.py:
#            PyTorch, CuPy). Copy the JSON into bench/results/ and run `make report` to regenerate the README.
#   stage c: compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over lab/issue33_sanitize.lua (every
#            rung of the scan, sort, histogram and searchsorted ladders on small cases, checked against the host).
# Everything (logs, JSON, -Xptxas -v of the new kernels) goes to /tmp/issue33, packed into $OUT/issue33.tgz.
set -u
[ -f .gpu-lua/env.sh ] && . .gpu-lua/env.sh
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
R=/tmp/issue33; mkdir -p "$R"
trap 'tar czf "${OUT:-/tmp}/issue33.tgz" -C "$R" . 2>/dev/null' EXIT
J=$(nproc)
build() { [ -f cukern/core.so ] && [ -z "${REBUILD:-}" ] || make -j"$J" all CUDA_ARCH=90a >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }; }
for st in ${1:-a b c}; do
case "$st" in
a)
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv | tee "$R/device.txt"
  t0=$(date +%s); build; echo "build: $(( $(date +%s) - t0 )) s"
  for f in kernels/scan/*.cu kernels/sort/*.cu kernels/hist/*.cu kernels/search/*.cu; do
    echo "== $f"; /usr/local/cuda/bin/nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Ikernels \
      --expt-relaxed-constexpr -Xptxas -v -c "$f" -o /dev/null 2>&1 | grep -E "Function properties|registers|spill" | head -400
  done > "$R/ptxas.txt" 2>&1
  echo "== smoke"
  timeout 120 lua5.4 -e '
    local ck = require "cukern"
    local x = ck.rand(1000000, {device = "cuda"})
    for _, v in ipairs(ck.variants("scan")) do
      local ok, r = pcall(ck.cumsum, x, 1, {variant = v.name})
      print("scan", v.name, ok and ck.last_ran().name or r, ok and ck.allclose(r, ck.cumsum(x:host()):to("cuda"), 1e-4, 1e-2))
    end
    for _, v in ipairs(ck.variants("sort")) do
      local ok, s, i = pcall(ck.sort, x, 1, {variant = v.name})
      print("sort", v.name, ok and ck.last_ran().name or s, ok and ck.equal(s, ck.sort(x:host()):to("cuda")))
    end' 2>&1 | tail -24
  echo "== scan and sort specs"
  timeout 900 sh spec/run.sh spec/scan_spec.lua spec/sort_spec.lua spec/hist_spec.lua >"$R/specs-new.log" 2>&1
  echo "rc=$?"; grep -B2 -A14 "^FAIL\|^ERROR" "$R/specs-new.log" | head -80; tail -1 "$R/specs-new.log"
  echo "== all specs"
  timeout "${T_SPECS:-900}" sh spec/run.sh >"$R/specs.log" 2>&1
  echo "rc=$?"; grep -B2 -A14 "^FAIL\|^ERROR" "$R/specs.log" | head -80; tail -1 "$R/specs.log"
  ;;
b)
  build
  timeout 900 python3 bench/torch_scan_sort.py --out "$R/peers.json" >"$R/peers.log" 2>&1
  echo "peers rc=$?"; cat "$R/peers.log" | tail -20
  CUKERN_RESULTS="$R" timeout 900 lua5.4 examples/scan_ladder.lua 2>&1 | tail -60
  CUKERN_RESULTS="$R" timeout 1200 lua5.4 examples/sort_ladder.lua 2>&1 | tail -40
  CUKERN_RESULTS="$R" timeout 600 lua5.4 examples/histogram_ladder.lua 2>&1 | tail -20
  ;;
c)
  build
  CUKERN_SYNC=1 timeout 300 lua5.4 lab/issue33_sanitize.lua 2>&1 | tail -3
  for tool in ${TOOLS:-memcheck racecheck synccheck initcheck}; do
    extra=""; [ "$tool" = racecheck ] && extra="--racecheck-report all"
    # shellcheck disable=SC2086
    CUKERN_SYNC=1 timeout 1200 compute-sanitizer --tool "$tool" $extra --print-limit 50 --error-exitcode 9 \
      lua5.4 lab/issue33_sanitize.lua >"$R/san-$tool.log" 2>&1
    echo "$tool: rc=$? $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/san-$tool.log") $(grep issue33_sanitize: "$R/san-$tool.log" | tail -1)"
  done
  ;;
esac
done
