#!/bin/sh
# The linear-algebra layer's one-kernel Cholesky on the CPU (lab/la_small_emu.cpp says what it checks): la_small.cu's
# launches rewritten to the stand-in CUDA's emu_launch, compiled with g++, run.   sh lab/la_small_emu.sh   (g++ >= 11)
set -e
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
python3 - "$D" <<'PY'
import re, sys
s = open("kernels/linalg/la_small.cu").read()
t = re.sub(r"kern<<<(.*?), THREADS, 0, \(cudaStream_t\)env->stream>>>\(", r"emu_launch(kern, dim3(\1), dim3(THREADS), ", s, flags=re.S)
assert "<<<" not in t
open(sys.argv[1] + "/la_small.cu", "w").write(t)
PY
F="-std=c++20 -O1 -pthread -w -D__CUDACC__ -Ilab/issue37_emu -Ikernels -Ikernels/linalg -include lab/issue37_emu/cuda_runtime.h"
g++ -x c++ $F -c "$D/la_small.cu" -o "$D/la_small.o"
g++ $F lab/la_small_emu.cpp "$D/la_small.o" -o "$D/emu"
"$D/emu"
