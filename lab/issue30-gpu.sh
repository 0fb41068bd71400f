#!/bin/bash
# Issue 30 on the GPU host (architecture step 2: code moved into layers and tables, no behaviour change):
#   stage a: the new tree and the tree before issue 30 (242e721, unpacked into .old-src by the caller:
#            git archive 242e721 Makefile src kernels lua spec examples) built side by side; small-op host
#            time A/B (old, new, old, new in one run); every spec on the new build.
#   stage b: the matmul ladder on the new build (results under $OUT/ladders.tgz).
#   stage c: the reduce, transpose and elementwise ladders and the overhead bench.
# Compare the ladders with the committed bench/results/*.json of the same device (lab/ladder_diff.lua).
set -u
. .gpu-lua/env.sh
export NCCL_NVLS_ENABLE=0
R=${OUT:-/tmp/issue30}; mkdir -p "$R"
J=$(nproc)
here=$PWD
build_new() { make -j"$J" all CUDA_ARCH=90a >"$R/build-new.log" 2>&1 || { tail -30 "$R/build-new.log"; exit 1; }; }
case "${1:-a}" in
a)
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$R/device.txt"
  rm -rf /tmp/old && cp -r .old-src /tmp/old && ln -s "$here/.gpu-lua" /tmp/old/.gpu-lua
  (build_new; echo "new build done") &
  (cd /tmp/old && make -j"$J" all CUDA_ARCH=90a >"$R/build-old.log" 2>&1; echo "old build rc=$?") &
  wait
  echo "== small ops, host us per op: old / new / old / new (one run, alternating)"
  for k in 1 2; do
    (cd /tmp/old && timeout 60 lua5.4 examples/small_ops_bench.lua >"$R/small-old-$k.log" 2>&1)
    timeout 60 lua5.4 examples/small_ops_bench.lua >"$R/small-new-$k.log" 2>&1
  done
  for k in 1 2; do for v in old new; do echo "-- $v-$k"; head -8 "$R/small-$v-$k.log"; done; done
  echo "== specs"
  timeout "${T_SPECS:-420}" sh spec/run.sh >"$R/specs.log" 2>&1
  echo "specs rc=$?"
  grep -B2 -A14 "^FAIL\|^ERROR" "$R/specs.log" | head -80
  grep "^\[" "$R/specs.log" | head -12
  tail -1 "$R/specs.log"
  ;;
b|c)
  [ -f cukern/core.so ] || build_new
  only=matmul; [ "$1" = c ] && only=reduce,transpose,elementwise,overhead
  mkdir -p /tmp/lad
  CUKERN_RESULTS=/tmp/lad timeout "${T_BENCH:-540}" lua5.4 examples/demo.lua --only="$only" --no-report >"$R/ladders-$1.log" 2>&1
  echo "ladders rc=$?"
  tail -40 "$R/ladders-$1.log"
  tar czf "$R/ladders-$1.tgz" -C /tmp/lad .
  ;;
esac
