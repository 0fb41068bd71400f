#!/usr/bin/env bash
# Experiment: the host time of one kernel launch on this machine (the floor under every small op).
cd "$(dirname "$0")/.."
mkdir -p build/exp
/usr/local/cuda/bin/nvcc -O2 -arch=sm_90 -o build/exp/launch_floor lab/launch_floor.cu || exit 1
build/exp/launch_floor | tee ${OUT:+$OUT/launch.txt}
. .gpu-lua/env.sh 2>/dev/null
lua5.4 examples/small_ops_bench.lua --torch 2>&1 | tee -a ${OUT:+$OUT/launch.txt}
