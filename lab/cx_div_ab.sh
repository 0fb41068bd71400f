#!/bin/bash
# Complex division in its two forms, in one run on one GPU, without the library's build: lab/cx_div_gpu.cu over
# kernels/complex/02_vectorized.cu with cx_math.h's division in NumPy's form (one reciprocal 1 / d for both parts) and
# in the tree's (each part divided by d). Session 15 ran it while the tree had NumPy's form (acb0862, taken back: its
# 1 / d overflows for subnormal divisors); the script now makes NumPy's form in a copy. Both binaries built at once.
#   bash lab/cx_div_ab.sh      (from the repository root; prints both tables)
set -u
NV=${NVCC:-/usr/local/cuda/bin/nvcc}
F="-std=c++17 -O3 -arch=sm_90a --expt-relaxed-constexpr"
D=$(mktemp -d)
cp -r kernels "$D/"
python3 - "$D/kernels/complex/cx_math.h" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = "r = q / p, d = p + q * r;"; b = "return P##mk((x + y * r) / d, (u - v * r) / d);"
assert a in s and b in s, "cx_math.h's division is not the form this script knows"
s = s.replace(a, "r = q / p, s = (T)1 / (p + q * r);").replace(b, "return P##mk((x + y * r) * s, (u - v * r) * s);")
open(p, "w").write(s)
PY
$NV $F -I"$D/kernels" -I"$D/kernels/complex" lab/cx_div_gpu.cu "$D/kernels/complex/02_vectorized.cu" -o "$D/new" &
$NV $F -Ikernels -Ikernels/complex lab/cx_div_gpu.cu kernels/complex/02_vectorized.cu -o "$D/old" &
wait
echo "== NumPy's form (one reciprocal)"; "$D/new"
echo "== each part divided (the tree's form)"; "$D/old"
echo "== NumPy's form again"; "$D/new"
rm -rf "$D"
