#!/bin/bash
# Issue 32 (selection, masks, assembly) on the GPU host, one command from the repository root:
#   OUT=/tmp/sel bash lab/select.sh        build; the index specs on the GPU; PyTorch's side, then ours
#   OUT=/tmp/sel bash lab/select.sh b      build; the benchmark only (bench/torch_select.py, then
#                                          examples/select_bench.lua --torch: one table, ours beside PyTorch)
#   OUT=/tmp/sel bash lab/select.sh s      build; the specs only
# The table (case, rung, ms, memcpy ms, % of memcpy, PyTorch ms, ratio, the target, met, cudaMallocs in the
# timed calls) ends the output; results (JSON, logs) go to $OUT/r.tgz. BENCH_ARGS passes options to the Lua side
# (--only PATTERN, --reps N).
set -u
[ -f .gpu-lua/env.sh ] && . .gpu-lua/env.sh
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
R=/tmp/select; rm -rf "$R"; mkdir -p "$R"
trap 'cp -r bench/results "$R/" 2>/dev/null; tar czf "${OUT:-/tmp}/r.tgz" -C "$R" . 2>/dev/null' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$R/device.txt"
t0=$(date +%s)
make -j"$(nproc)" all CUDA_ARCH=90a >"$R/build.log" 2>&1 || { grep -m20 -B2 -A6 "error" "$R/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
for st in ${1:-s b}; do
case "$st" in
s)
  timeout 500 sh spec/run.sh ${SPECS:-spec/select_spec.lua spec/select_paths_spec.lua spec/join_spec.lua spec/assembly_spec.lua spec/fuzz_spec.lua spec/badinput_spec.lua spec/order_spec.lua spec/graph_spec.lua spec/architecture_spec.lua} >"$R/specs.log" 2>&1
  echo "specs rc=$?"; grep -B2 -A14 "^FAIL\|^ERROR" "$R/specs.log" | head -80; tail -1 "$R/specs.log" ;;
b)
  torch=""
  if timeout 300 python3 bench/torch_select.py --out "$R/torch_select.json" >"$R/torch.log" 2>&1; then
    torch="--torch $R/torch_select.json"
  else
    echo "PyTorch's side failed (rc $?; the table has no torch columns):"; tail -3 "$R/torch.log"
  fi
  timeout 400 lua5.4 examples/select_bench.lua $torch ${BENCH_ARGS:-} 2>"$R/bench.progress" | tee "$R/bench.log"
  rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || { echo "select_bench rc=$rc:"; tail -8 "$R/bench.progress"; } ;;
esac
done
