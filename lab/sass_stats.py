#!/usr/bin/env python3
"""Instruction mix of the main k loop of each matmul_double_buffer_kernel in `cuobjdump -sass` output (stdin).

The main loop is the backward branch whose body [target, branch] holds the most FFMA. In it: all instructions,
FFMA, LDS by width, LDGSTS, BAR, DEPBAR, other (address arithmetic, loop control, predication), the FFMA share of
issue slots (on sm_90 an SMSP issues one instruction per clock and retires one warp FFMA per clock, so any other
instruction in the loop costs an FFMA slot), and a register-bank heuristic for FFMA: bank = register % 2 (two
64-bit-wide banks per SMSP on Volta-Hopper); a source read is saved when the operand carries .reuse (or repeats
another source); 'b2' = FFMAs with two non-reused sources in one bank, 'b3' = with three.
Note: the loop body holds both paths of issue() (interior and edge tiles); only the interior one runs at
4096/8192, so 'other' and 'LDGSTS' overstate the executed counts by the edge path (static counts, not
executed ones: ncu's instruction counts are the executed truth). Usage: sass_stats.py [filter-substring]
"""
import re
import sys

flt = sys.argv[1] if len(sys.argv) > 1 else "matmul_double_buffer_kernel"
funcs, cur = [], None
for line in sys.stdin:
    m = re.match(r"\s*Function : (\S+)", line)
    if m:
        cur = {"name": m.group(1), "ins": []}
        funcs.append(cur)
        continue
    m = re.match(r"\s*(\.L_x_\d+):", line)
    if m and cur is not None:
        cur.setdefault("labels", {})[m.group(1)] = len(cur["ins"])
        continue
    m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
    if m and cur is not None:
        cur["ins"].append((int(m.group(1), 16), m.group(2).strip()))


def cfg_of(name):
    m = re.search(r"CfgI((?:Li-?\d+E)+)EELb(\d)", name)
    if not m:
        return name[:60]
    v = [int(x) for x in re.findall(r"Li(-?\d+)E", m.group(1))]
    v += [0] * (12 - len(v))
    bm, bn, bk, wm, wn, tm, tn, st, mb, g, l, i = v[:12]
    return f"{bm}x{bn}x{bk} w{wm}x{wn} t{tm}x{tn} s{st} b{mb} g{g} L{l} I{i} vec{m.group(2)}"


def opcode(text):
    t = re.sub(r"^@!?U?P\w+\s+", "", text)
    return t.split()[0] if t else ""


def bank_stats(body):
    b2 = b3 = 0
    for _, t in body:
        if opcode(t).split(".")[0] != "FFMA":
            continue
        ops = [o.strip() for o in re.sub(r"^@!?U?P\w+\s+", "", t).split(None, 1)[1].split(",")]
        srcs = ops[1:4]
        regs = []
        for o in srcs:
            m = re.match(r"-?\|?(R\d+)(\.reuse)?", o)
            if m and not m.group(2):
                regs.append(int(m.group(1)[1:]))
        regs = sorted(set(regs))
        cnt = [sum(1 for r in regs if r % 2 == k) for k in (0, 1)]
        if max(cnt) >= 3:
            b3 += 1
        if max(cnt) >= 2:
            b2 += 1
    return b2, b3


print(f"{'config':52s} {'loop':>5s} {'FFMA':>5s} {'LDS128':>6s} {'LDS64':>5s} {'LDS':>4s} {'LDGSTS':>6s} {'BAR':>3s} "
      f"{'other':>5s} {'ffma%':>6s} {'FFMA/LDS':>8s} {'b2':>4s} {'b3':>4s}")
for f in funcs:
    if flt not in f["name"]:
        continue
    ins = f["ins"]
    addr_idx = {a: k for k, (a, _) in enumerate(ins)}
    best = None
    for k, (a, t) in enumerate(ins):
        if opcode(t).startswith("BRA"):
            m = re.search(r"BRA\s+(?:\S+\s+)?0x([0-9a-f]+)", t)
            ml = re.search(r"(\.L_x_\d+)", t)
            if m:
                tgt = int(m.group(1), 16)
            elif ml and ml.group(1) in f.get("labels", {}) and f["labels"][ml.group(1)] < len(ins):
                tgt = ins[f["labels"][ml.group(1)]][0]
            else:
                continue
            if tgt <= a and tgt in addr_idx:
                body = ins[addr_idx[tgt]: k + 1]
                nf = sum(1 for _, x in body if opcode(x).startswith("FFMA"))
                if best is None or nf > best[0]:
                    best = (nf, body)
    if best is None:
        print(f"{cfg_of(f['name']):52s} (no loop found)")
        continue
    body = best[1]
    ops = [opcode(t) for _, t in body]
    nffma = sum(o.startswith("FFMA") for o in ops)
    n128 = sum(o.startswith("LDS.128") for o in ops)
    n64 = sum(o.startswith("LDS.64") for o in ops)
    nlds = sum(o.startswith("LDS") for o in ops) - n128 - n64
    nldg = sum(o.startswith("LDGSTS") for o in ops)
    nbar = sum(o.startswith("BAR") for o in ops)
    other = len(ops) - nffma - n128 - n64 - nlds - nldg - nbar
    nl = max(1, n128 + n64 + nlds)
    b2, b3 = bank_stats(body)
    print(f"{cfg_of(f['name']):52s} {len(ops):5d} {nffma:5d} {n128:6d} {n64:5d} {nlds:4d} {nldg:6d} {nbar:3d} {other:5d} "
          f"{100.0 * nffma / len(ops):5.1f}% {nffma / nl:8.1f} {b2:4d} {b3:4d}")
