#!/bin/bash
# Issue 34 (linear algebra on cuSOLVER) on the GPU host, from the repo root after `. .gpu-lua/env.sh`:
#   OUT=/some/dir bash lab/issue34-gpu.sh
# builds (sm_90a), runs the linalg specs (GPU ones included) and then every spec, times torch.linalg
# (bench/torch_linalg.py) and cukern (examples/linalg_bench.lua: the LU ladder -> lu-<device>.json, functions beside
# torch -> linalg-<device>.json), and packs logs and JSON into $OUT/issue34.tgz.
# LAPACKE (host oracle) is loaded at run time: if liblapacke.so.3 is missing here the host-side specs say so;
# CUKERN_LAPACKE=/path/liblapacke.so.3 points at one.
set -u
. .gpu-lua/env.sh 2>/dev/null || true
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
R=/tmp/issue34; rm -rf "$R"; mkdir -p "$R"
trap 'tar czf "${OUT:-/tmp}/issue34.tgz" -C "$R" . 2>/dev/null' EXIT
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$R/device.txt"
ls /usr/lib/x86_64-linux-gnu/liblapacke.so* 2>&1 | tee "$R/lapacke.txt"
make -j"$(nproc)" all CUDA_ARCH=90a >"$R/build.log" 2>&1 || { tail -40 "$R/build.log"; exit 1; }
echo "== -Xptxas -v of the LU rungs"
for f in kernels/lu/01_unblocked.cu kernels/lu/02_blocked.cu kernels/linalg/la_aux.cu; do
  /usr/local/cuda/bin/nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -Ikernels --expt-relaxed-constexpr -Xptxas -v \
    -c "$f" -o /dev/null 2>&1 | grep -E "Compiling|registers" ; done > "$R/ptxas.txt"
echo "== linalg specs"
timeout 600 sh spec/run.sh spec/linalg_spec.lua spec/linalg_gpu_spec.lua spec/linalg_octave_spec.lua >"$R/specs-linalg.log" 2>&1
echo "rc=$?"; grep -B2 -A14 "^FAIL\|^ERROR" "$R/specs-linalg.log" | head -80; tail -1 "$R/specs-linalg.log"
echo "== torch.linalg"
timeout 900 python3 bench/torch_linalg.py "$R/torch_linalg.json" >"$R/torch.log" 2>&1; echo "rc=$?"; tail -2 "$R/torch.log"
echo "== cukern linalg bench"
CUKERN_RESULTS="$R" timeout 1500 lua5.4 examples/linalg_bench.lua --torch "$R/torch_linalg.json" 2>&1 | tee "$R/bench.log" | tail -60
echo "== all specs"
timeout 900 sh spec/run.sh >"$R/specs-all.log" 2>&1; echo "rc=$?"; grep -B2 -A14 "^FAIL\|^ERROR" "$R/specs-all.log" | head -60
tail -1 "$R/specs-all.log"
