#!/bin/sh
# The tiled elementwise rung on the CPU (lab/ew_tiled_emu.cpp says what it checks): the launch rewritten to the
# stand-in CUDA's emu_launch, compiled with g++, run.   sh lab/ew_tiled_emu.sh   (from the repository root; g++ >= 11)
set -e
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
python3 - "$D" <<'PY'
import re, sys
s = open("kernels/elementwise/03_tiled.cu").read()
t = re.sub(r"kern<<<grid, (dim3\(.*?\)), 0, \(cudaStream_t\)env->stream>>>\(p\);", r"emu_launch(kern, dim3(grid), \1, p);", s)
assert t != s, "the launch in 03_tiled.cu changed: update lab/ew_tiled_emu.sh"
open(sys.argv[1] + "/03_tiled.cu", "w").write(t)
PY
F="-std=c++20 -O1 -pthread -w -D__CUDACC__ -Ilab/issue37_emu -Ikernels -Ikernels/elementwise -include lab/issue37_emu/cuda_runtime.h"
g++ -x c++ $F -c "$D/03_tiled.cu" -o "$D/t.o"
g++ $F lab/ew_tiled_emu.cpp "$D/t.o" -o "$D/emu"
"$D/emu"
