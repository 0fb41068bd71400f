#!/bin/sh
# The index ladder's `vec` rung (kernels/index/02_vec.cu, with ix_common.cu) on the CPU, through its launcher, against
# plain loops: the dense gather's whole-row vectors and element moves, index_select of rows, bad indices.
# What this cannot see: timing, memory ordering, the real instructions, CUB (rung 0); the GPU specs
# (spec/select_paths_spec.lua, lab/select.sh) are the check of those. Uses lab/issue37_emu's CUDA stand-in.
#   sh lab/select_emu/run.sh   (from the repository root; g++ >= 11)
set -e
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
cp -r kernels "$D/kernels"
python3 - "$D" <<'PY'
import sys
def split_top(t):  # split at commas outside (), <> and []
    out, depth, cur = [], 0, ""
    for ch in t:
        if ch in "([<": depth += 1
        if ch in ")]>": depth -= 1
        if ch == "," and depth == 0: out.append(cur.strip()); cur = ""
        else: cur += ch
    out.append(cur.strip())
    return out
def rewrite(s):  # kernel<<<grid, block, smem, stream>>>(args); -> emu_launch(kernel, dim3(grid), dim3(block), args);
    while "<<<" in s:
        i = s.index("<<<")
        j = i  # the kernel's name: back over an identifier and its template arguments
        depth = 0
        while j > 0:
            c = s[j - 1]
            if c == ">": depth += 1
            elif c == "<": depth -= 1
            elif depth == 0 and not (c.isalnum() or c in "_:"): break
            j -= 1
        k = s.index(">>>", i)
        cfg = split_top(s[i + 3:k])
        m = k + 3
        assert s[m] == "("
        depth, e = 0, m
        while True:
            if s[e] == "(": depth += 1
            elif s[e] == ")":
                depth -= 1
                if depth == 0: break
            e += 1
        args = s[m + 1:e]
        s = s[:j] + "emu_launch(%s, dim3(%s), dim3(%s)%s)" % (s[j:i], cfg[0], cfg[1], ", " + args if args.strip() else "") + s[e + 1:]
    return s
for f in ("02_vec.cu", "ix_common.cu", "ix_common.cuh"):
    p = sys.argv[1] + "/kernels/index/" + f
    text = rewrite(open(p).read())
    open(p, "w").write(text)
PY
F="-std=c++20 -O1 -pthread -w -D__CUDACC__ -Ilab/issue37_emu -Ilab/select_emu -I$D/kernels -include lab/issue37_emu/cuda_runtime.h -include lab/select_emu/emu_extra.h"
for f in 02_vec ix_common; do g++ -x c++ $F -c "$D/kernels/index/$f.cu" -o "$D/$f.o"; done
g++ $F lab/select_emu/vec_emu.cpp "$D/02_vec.o" "$D/ix_common.o" -o "$D/vec_emu"
"$D/vec_emu"
