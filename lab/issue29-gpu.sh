#!/bin/bash
# Issue 29 on the GPU host, in one machine session:
#   stage a: the new tree and the previous commit (7e111ba, unpacked into .old-src by the caller: git archive
#            7e111ba Makefile src kernels lua spec examples) built side by side; the order matrix on both (it
#            must fail on the old one); small-op host time A/B, old and new alternating in one run;
#            compute-sanitizer memcheck and racecheck on the new specs.
#   stage b: the new tree built, then every spec on it (CUKERN_CHECK_ORDER=1, as spec/run.sh sets it).
#   stage c: compute-sanitizer memcheck and racecheck on the new specs again (after stage b, machine warm).
# Results under $OUT.
set -u
. .gpu-lua/env.sh
export NCCL_NVLS_ENABLE=0
R=${OUT:-/tmp/issue29}; mkdir -p "$R"
J=$(nproc)
CS=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
here=$PWD
case "${1:-a}" in
a)
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$R/device.txt"
  rm -rf /tmp/old && cp -r .old-src /tmp/old && ln -s "$here/.gpu-lua" /tmp/old/.gpu-lua
  (make -j"$J" all CUDA_ARCH=90a >"$R/build-new.log" 2>&1; echo "new build rc=$?") &
  (cd /tmp/old && make -j"$J" all CUDA_ARCH=90a >"$R/build-old.log" 2>&1; echo "old build rc=$?") &
  wait
  echo "== the order matrix on the previous commit (7e111ba): must fail"
  cp spec/order_spec.lua /tmp/old/spec/
  (cd /tmp/old && CUKERN_CHECK_ORDER=1 timeout 120 sh spec/run.sh spec/order_spec.lua >"$R/order-old.log" 2>&1)
  grep -E "runs read stale|joined the batch|passed" "$R/order-old.log" | head -5
  grep -A12 "stale values" "$R/order-old.log" | head -14
  echo "== the order matrix on the new tree"
  timeout 120 sh spec/run.sh spec/order_spec.lua >"$R/order-new.log" 2>&1
  grep -E "order\]|passed" "$R/order-new.log"
  grep -A10 "^FAIL\|^ERROR" "$R/order-new.log" | head -30
  echo "== small ops, host us per op: old / new / old / new (one run, alternating)"
  for k in 1 2; do
    (cd /tmp/old && timeout 60 lua5.4 examples/small_ops_bench.lua --json "$R/small-old-$k.json" >"$R/small-old-$k.log" 2>&1)
    timeout 60 lua5.4 examples/small_ops_bench.lua --json "$R/small-new-$k.json" >"$R/small-new-$k.log" 2>&1
  done
  for f in "$R"/small-*.log; do echo "-- $(basename "$f")"; cat "$f"; done
  ;&
c)
  echo "== compute-sanitizer on the new specs"
  export LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;${LUA_PATH:-;}" LUA_CPATH="./?.so;${LUA_CPATH:-;}"
  for tool in memcheck racecheck; do
    CUKERN_ORDER_QUICK=1 CUKERN_FUZZ_CASES=600 timeout 150 "$CS" --tool $tool --print-limit 20 --error-exitcode 99 \
      sh spec/run.sh spec/order_spec.lua spec/map_reliability_spec.lua spec/fuzz_spec.lua >"$R/sanitize-$tool.log" 2>&1
    echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/sanitize-$tool.log" | tail -1) | $(tail -1 "$R/sanitize-$tool.log")"
  done
  ;;
b)
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$R/device.txt"
  make -j"$J" all CUDA_ARCH=90a >"$R/build-new.log" 2>&1 || { tail -30 "$R/build-new.log"; exit 1; }
  timeout "${T_SPECS:-480}" sh spec/run.sh >"$R/specs.log" 2>&1
  echo "specs rc=$?"
  grep -B2 -A14 "^FAIL\|^ERROR" "$R/specs.log" | head -120
  grep "^\[" "$R/specs.log" | head -20
  tail -1 "$R/specs.log"
  ;;
esac
