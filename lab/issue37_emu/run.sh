#!/bin/sh
# Issue 37 without a GPU: the row ladder's kernels run on the CPU (every rung, op, f32/f64/bf16, short, long and
# strided lines, against the host oracle within spec/rows_spec.lua's bound), and the fused attention rungs'
# fragment arithmetic (ldmatrix, mma.sync m16n8k16, the online softmax and the FlashAttention-1 merge) replayed
# lane by lane in NumPy against softmax(QK^T)V. What this cannot see: timing, memory ordering, the real
# instructions; the GPU run (lab/issue37-gpu.sh) is the check of those.
#   sh lab/issue37_emu/run.sh   (from the repository root; g++ >= 11; PYTHON: a python3 with NumPy, e.g. /usr/bin/python3)
# How: cuda_runtime.h here stands in for CUDA (one OS thread per CUDA thread, std::barrier for __syncthreads and
# for each warp's shuffles; its globals are inline variables, so every object file shares them), the launches
# (kernel<<<grid, block, smem, stream>>>(args)) are rewritten to emu_launch(kernel, grid, block, args).
set -e
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
H=lab/issue37_emu
python3 - "$D" <<'PY'
import os, re, sys
for f in os.listdir("kernels/rows"):
    if f.endswith((".cu", ".cuh")):
        s = open("kernels/rows/" + f).read()
        s = re.sub(r"(\w[\w:<>, ]*?)<<<(.*?),\s*([^,]+?),\s*[^,]+?,\s*\(cudaStream_t\)env->stream>>>\(([^;]*)\);",
                   r"emu_launch(\1, dim3(\2), dim3(\3), \4);", s, flags=re.S)
        open(os.path.join(sys.argv[1], f), "w").write(s)
PY
F="-std=c++20 -O1 -pthread -w -D__CUDACC__ -I$H -Ikernels -include $H/cuda_runtime.h"
for f in "$D"/0*.cu; do g++ -x c++ $F -I"$D" -c "$f" -o "${f%.cu}.o"; done
gcc -O1 -std=c11 -Isrc -Isrc/core -Isrc/host -Ikernels -c src/host/host_rows.c -o "$D/host_rows.o"
g++ $F $H/rows_emu.cpp "$D"/0*.o "$D/host_rows.o" -o "$D/rows_emu"
"$D/rows_emu"
"${PYTHON:-python3}" $H/flash_emu.py
