#!/usr/bin/env python3
"""lab/fft_swizzle.py: the shared-memory bank wavefronts of FFT rung 4 (kernels/fft/04_radix8.cu) for each buffer
layout, relative to a conflict-free pass (2 wavefronts per warp-wide 8-byte access), summed over the passes of a
line of n = 256..4096 c64 points. The model: a warp's 8-byte accesses go out as two half-warps, and a half-warp
takes as many wavefronts as the most distinct 4-byte words any one of the 32 banks holds. It needs no GPU.
    python3 lab/fft_swizzle.py
Session 11's output: plain 3.00 (n = 256, 512) and 2.33 (1024..4096); i ^ ((i >> 3) & 15) 1.00 at every length;
padding one element per 16 (i + (i >> 4)) 1.17-1.25. On the H100 the swizzle did not pay (the rung's header)."""


def wavefronts(addrs):
    total = 0
    for h in (0, 16):
        banks = {}
        for a in addrs[h:h + 16]:
            for w in (2 * a, 2 * a + 1):
                banks.setdefault(w % 32, set()).add(w)
        total += max((len(s) for s in banks.values()), default=0)
    return total


def passes(n):
    ns, out = 1, []
    while ns < n:
        r = 8 if n // ns >= 8 else n // ns
        out.append((ns, r))
        ns *= r
    return out


def cost(n, layout):
    t = n // 8
    f = max(1, 256 // t)
    got = ideal = 0
    ps = passes(n)
    for pi, (ns, r) in enumerate(ps):
        for warp in range(t * f // 32):
            for q in range(8 // r):
                for k in range(r):
                    lanes = [(x % t, x // t) for x in range(warp * 32, warp * 32 + 32)]
                    if pi > 0:  # loads from the buffer
                        got += wavefronts([layout(y * n + x + q * t + k * (n // r)) for x, y in lanes])
                        ideal += 2
                    if pi < len(ps) - 1:  # stores into it
                        def dst(j):
                            return (j // ns) * ns * r + (j & (ns - 1))
                        got += wavefronts([layout(y * n + dst(x + q * t) + k * ns) for x, y in lanes])
                        ideal += 2
    return got / ideal


LAYOUTS = {
    "plain": lambda i: i,
    "xor (i >> 3) & 15": lambda i: i ^ ((i >> 3) & 15),
    "pad i >> 4": lambda i: i + (i >> 4),
    "pad i >> 3": lambda i: i + (i >> 3),
}
if __name__ == "__main__":
    for name, f in LAYOUTS.items():
        print("%-18s" % name, " ".join("n=%d %.2f" % (n, cost(n, f)) for n in (256, 512, 1024, 2048, 4096)))
