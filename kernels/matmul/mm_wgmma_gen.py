#!/usr/bin/env python3
"""mm_wgmma_gen.py — writes mm_wgmma.inc: the wgmma.mma_async statements of mm_hopper.cuh, one asm statement per
shape and input type (the N/2 f32 accumulators are its operands; only the operand lists are generated).
  16-bit inputs: m64nNk16 for N = 128, 256, f16 and bf16; the transpose immediates from the template (TA, TB).
  FP8 inputs:    m64n256k32 for e4m3 and e5m2 in each operand (any pairing); no transpose immediates: FP8
                 wgmma reads both operands K-major from shared memory (PTX ISA, wgmma.mma_async, .atype/.btype).
  python3 kernels/matmul/mm_wgmma_gen.py > kernels/matmul/mm_wgmma.inc
"""

CXX = {"f16": "__half", "bf16": "__nv_bfloat16", "e4m3": "__nv_fp8_e4m3", "e5m2": "__nv_fp8_e5m2"}


def regs(first, n):
    names = ["%%%d" % i for i in range(first, first + n)]
    return ", ".join(names)


def block(n_acc, ta, tb, k, trans):
    nd = n_acc
    p = nd + 2  # the scale-d operand, after the accumulators and the two descriptors
    out = []
    tmpl_b = "" if ta == tb else ", " + CXX[tb]
    out.append("template <> struct Wgmma<%d, %s%s> {" % (2 * n_acc, CXX[ta], tmpl_b))
    out.append("  template <int TA, int TB> static __device__ __forceinline__ void mma(float (&d)[%d], uint64_t da, "
               "uint64_t db, int sd) {" % nd)
    if not trans:
        out.append("    static_assert(TA == 0 && TB == 0, \"FP8 wgmma reads both operands K-major\");")
    out.append("#ifdef CK_HAS_WGMMA")
    out.append("    asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"" % p)
    out.append("                 \"wgmma.mma_async.sync.aligned.m64n%dk%d.f32.%s.%s\\n\"" % (2 * n_acc, k, ta, tb))
    lines = []
    for i in range(0, nd, 16):
        lines.append(regs(i, 16))
    body = ", \"\n                 \"".join(lines)
    out.append("                 \"{" + body + "}, \"")
    if trans:
        out.append("                 \"%%%d, %%%d, p, 1, 1, %%%d, %%%d;\\n}\\n\"" % (nd, nd + 1, nd + 3, nd + 4))
    else:
        out.append("                 \"%%%d, %%%d, p, 1, 1;\\n}\\n\"" % (nd, nd + 1))
    ops = ['"+f"(d[%d])' % i for i in range(nd)]
    rows = [", ".join(ops[i:i + 8]) for i in range(0, nd, 8)]
    out.append("                 : " + ",\n                   ".join(rows))
    if trans:
        out.append("                 : \"l\"(da), \"l\"(db), \"r\"(sd), \"n\"(TA), \"n\"(TB));")
    else:
        out.append("                 : \"l\"(da), \"l\"(db), \"r\"(sd));")
    out.append("#endif")
    out.append("  }")
    out.append("};")
    return "\n".join(out)


print("// mm_wgmma.inc — wgmma.mma_async m64nNk16 (N = 128, 256; f16, bf16) and m64n256k32 (e4m3, e5m2 in either")
print("// operand), f32 accumulators, for mm_hopper.cuh. One asm statement per shape: the N/2 accumulator registers")
print("// are its operands. Written by mm_wgmma_gen.py (operand lists only); the form is documented in mm_hopper.cuh.")
blocks = [block(64, "f16", "f16", 16, True), block(64, "bf16", "bf16", 16, True),
          block(128, "f16", "f16", 16, True), block(128, "bf16", "bf16", 16, True)]
for ta in ("e4m3", "e5m2"):
    for tb in ("e4m3", "e5m2"):
        blocks.append(block(128, ta, tb, 32, False))
print("\n\n".join(blocks))
