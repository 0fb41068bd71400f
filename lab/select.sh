#!/bin/bash
# Issue 32 (selection, masks, assembly) on the GPU host: build; the index specs on the GPU (spec/select_spec.lua,
# the fuzz, bad input); PyTorch's side (bench/torch_select.py) then ours (examples/select_bench.lua --torch) in
# one run on one device. Results (JSON, logs) go to $OUT/r.tgz.
set -u
. .gpu-lua/env.sh
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
R=/tmp/select; mkdir -p "$R"
trap 'cp -r bench/results "$R/" 2>/dev/null; tar czf "${OUT:-/tmp}/r.tgz" -C "$R" . 2>/dev/null' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/device.txt"
t0=$(date +%s)
make -j"$(nproc)" all CUDA_ARCH=90a >"$R/build.log" 2>&1 || { grep -m20 -B2 -A6 "error" "$R/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
for st in ${1:-s b}; do
case "$st" in
s)
  timeout 400 sh spec/run.sh ${SPECS:-spec/select_spec.lua spec/fuzz_spec.lua spec/badinput_spec.lua spec/assembly_spec.lua spec/architecture_spec.lua} >"$R/specs.log" 2>&1
  echo "specs rc=$?"; grep -B2 -A14 "^FAIL\|^ERROR" "$R/specs.log" | head -80; tail -1 "$R/specs.log" ;;
b)
  timeout 200 python3 bench/torch_select.py --out "$R/torch_select.json" >"$R/torch.log" 2>&1; echo "torch rc=$?"; tail -2 "$R/torch.log"
  timeout 300 lua5.4 examples/select_bench.lua --torch "$R/torch_select.json" 2>&1 | tee "$R/bench.log" ;;
esac
done
