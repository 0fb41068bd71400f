#!/bin/sh
# The index ladder's rungs 2 and 3 on the CPU (lab/ix_vec_emu.cpp says what it checks): its launches rewritten to the
# stand-in CUDA's emu_launch, compiled with g++, run.   sh lab/ix_vec_emu.sh   (from the repository root; g++ >= 11)
set -e
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
python3 - "$D" <<'PY'
import os, re, sys
for f in ["02_vec.cu", "03_flags.cu", "ix_common.cu"]:
    s = open("kernels/index/" + f).read()
    t = re.sub(r"(\w[\w:<>,. ()]*?)<<<([^,()]*?),\s*([^,]+?),\s*[^,]+?,\s*(?:s|\(cudaStream_t\)env->stream)>>>\(([^;]*)\);",
               r"emu_launch(\1, dim3(\2), dim3(\3), \4);", s)
    t = t.replace("kern<<<g, block, 0, s>>>(d);", "emu_launch(kern, dim3(g), dim3(block), d);")
    t = re.sub(r"<<<grid_for\(d\.numel, block, env\), block, 0, s>>>", "", t)  # the scatters: not run here
    assert "<<<" not in t, f
    open(sys.argv[1] + "/" + f, "w").write(t)
# rung 3 takes its block scan from the scan ladder's header, which also holds a launcher it does not call: that
# launch becomes a plain call (never made here)
os.makedirs(sys.argv[1] + "/scan", exist_ok=True)
h = re.sub(r"<<<.*?>>>", "", open("kernels/scan/scan_common.cuh").read(), flags=re.S)
open(sys.argv[1] + "/scan/scan_common.cuh", "w").write(h)
PY
F="-std=c++20 -O1 -pthread -w -D__CUDACC__ -Ilab/issue37_emu -Ikernels -Ikernels/index -include lab/issue37_emu/cuda_runtime.h"
for f in 02_vec 03_flags ix_common; do g++ -x c++ $F -c "$D/$f.cu" -o "$D/$f.o"; done
g++ $F lab/ix_vec_emu.cpp "$D/02_vec.o" "$D/03_flags.o" "$D/ix_common.o" -o "$D/emu"
"$D/emu"
