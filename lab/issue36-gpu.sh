#!/bin/bash
# Issue 36 (streams, asynchronous copies, pinned memory, NVTX) on one H100, from the repo root, with $OUT an output dir:
#   . .gpu-lua/env.sh && OUT=$OUT bash lab/issue36-gpu.sh "build specs bench nsys sanitize"
#   build     make all for sm_90a (~5-6 min from clean on 16 cores; seconds when built)
#   specs     spec/streams_spec.lua (its GPU checks: producer/consumer with and without events, allocator reuse,
#             async copies of a freed pinned source, graph capture on a user stream, per-stream batch), then
#             the specs the stream changes touch (order, graph, embed) and the DLPack engine with a device buffer
#             and the engine's own stream (~2-3 min; at most 6)
#   bench     examples/overlap_ladder.lua -> overlap-<device>.json, bench/torch_overlap.py (PyTorch, same workload),
#             lab/pinned_bw.cu (cudaMemcpyAsync from pinned memory, C) and cukern's pinned copies timed beside it,
#             examples/frame_loop.c (serial vs overlapped frame time, 16 MiB frames) (~2 min)
#   nsys      nsys profile of a small script with CUKERN_NVTX=1: NVTX ranges named after Lua lines, as text (~1 min)
#   sanitize  compute-sanitizer racecheck and memcheck over the streams spec's child (allocator reuse across streams
#             included) with 64 Ki-element arrays (~2 min; at most 5)
# Logs and JSON go to /tmp/issue36, packed into $OUT/issue36.tgz; results JSON also to $OUT.
set -u
[ -f .gpu-lua/env.sh ] && . .gpu-lua/env.sh
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
export NCCL_NVLS_ENABLE=0
R=/tmp/issue36; mkdir -p "$R"
trap 'tar czf "${OUT:-/tmp}/issue36.tgz" -C "$R" . 2>/dev/null' EXIT
J=$(nproc)
# DLPack's header (libdlpack-dev) where the host lacks it: a copy carried in .gpu-lua/include/dlpack/dlpack.h
[ -f /usr/include/dlpack/dlpack.h ] || [ ! -f .gpu-lua/include/dlpack/dlpack.h ] || export DLPACK_INCDIR="$PWD/.gpu-lua/include"
build() { [ -f cukern/core.so ] && [ -z "${REBUILD:-}" ] || make -j"$J" all CUDA_ARCH=90a >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }; }
for st in ${1:-build specs bench nsys sanitize}; do
case "$st" in
build)
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv | tee "$R/device.txt"
  t0=$(date +%s); build; echo "build: $(( $(date +%s) - t0 )) s"
  ;;
specs)
  build
  timeout 150 sh spec/run.sh spec/streams_spec.lua >"$R/specs-streams.log" 2>&1
  echo "streams rc=$?"; grep -B2 -A14 "^FAIL\|^ERROR" "$R/specs-streams.log" | head -60; tail -1 "$R/specs-streams.log"
  timeout 200 sh spec/run.sh spec/order_spec.lua spec/graph_spec.lua spec/embed_spec.lua >"$R/specs-touched.log" 2>&1
  echo "touched rc=$?"; grep -B2 -A14 "^FAIL\|^ERROR" "$R/specs-touched.log" | head -60; tail -1 "$R/specs-touched.log"
  echo "== the DLPack engine (GPU part: the engine's device buffer and stream)"
  make -s build/engine_dlpack CUDA_ARCH=90a >"$R/engine-build.log" 2>&1 && timeout 60 build/engine_dlpack . | tee "$R/engine.txt" | tail -12
  ;;
bench)
  build
  CUKERN_RESULTS="$R" timeout 120 lua5.4 examples/overlap_ladder.lua 2>&1 | tee "$R/overlap.txt" | tail -12
  timeout 120 python3 bench/torch_overlap.py --out "$R/overlap-torch.json" >"$R/torch.log" 2>&1; echo "torch rc=$?"; tail -25 "$R/torch.log"
  /usr/local/cuda/bin/nvcc -O2 lab/pinned_bw.cu -o "$R/pinned_bw" && timeout 60 "$R/pinned_bw" | tee "$R/pinned_bw.json"
  timeout 60 lua5.4 -e '
    local ck = require "cukern"
    local h = ck.rand(64 * 1024 * 1024, {device = "host"}):pin()
    local d = h:to("cuda")
    local function med(f) local t = {}; f(); for r = 1, 10 do ck.sync(); local t0 = ck.core.clock(); f(); ck.sync(); t[r] = ck.core.clock() - t0 end; table.sort(t); return t[5] end
    print(("{\"ck_h2d_gbps\": %.2f, \"ck_d2h_gbps\": %.2f}"):format(2^28 / med(function() d:copy_(h) end) / 1e9,
      2^28 / med(function() h:copy_(d) end) / 1e9))' | tee "$R/ck_pinned_bw.json"
  make -s build/frame_loop CUDA_ARCH=90a >"$R/frame-build.log" 2>&1 && timeout 60 build/frame_loop . 4194304 60 | tee "$R/frame_loop.txt"
  cp "$R"/overlap-*.json "$R"/*pinned_bw.json "$R/frame_loop.txt" "${OUT:-/tmp}/" 2>/dev/null
  ;;
nsys)
  build
  cat >"$R/nvtx_demo.lua" <<'LUA'
local ck = require "cukern"
local x = ck.rand(1 << 20, {device = "cuda"})
local y = x * 2 + 1
local s = ck.sum(y)
ck.nvtx.range("frame", function() local z = (y * y):sqrt(); return ck.sum(z) end)
print(s:item())
LUA
  CUKERN_NVTX=1 timeout 90 nsys profile --trace=cuda,nvtx -o "$R/nvtx" --force-overwrite true lua5.4 "$R/nvtx_demo.lua" >"$R/nsys.log" 2>&1
  echo "nsys rc=$?"
  timeout 60 nsys stats --report nvtx_sum --format csv "$R/nvtx.nsys-rep" >"$R/nvtx_ranges.txt" 2>&1 ||
    timeout 60 nsys stats --report nvtxsum --format csv "$R/nvtx.nsys-rep" >"$R/nvtx_ranges.txt" 2>&1
  head -30 "$R/nvtx_ranges.txt"; cp "$R/nvtx_ranges.txt" "${OUT:-/tmp}/" 2>/dev/null
  ;;
sanitize)
  build
  for tool in racecheck memcheck; do
    extra=""; [ "$tool" = racecheck ] && extra="--racecheck-report all"
    # shellcheck disable=SC2086
    CUKERN_CHECK_STREAMS=1 CUKERN_STREAMS_N=65536 timeout 150 compute-sanitizer --tool "$tool" $extra --print-limit 50 --error-exitcode 9 \
      lua5.4 spec/streams_child.lua 1 >"$R/san-$tool.log" 2>&1
    echo "$tool: rc=$? $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/san-$tool.log") $(grep -c '^ok' "$R/san-$tool.log") ok, $(grep -c '^not ok' "$R/san-$tool.log") not ok"
  done
  ;;
esac
done
