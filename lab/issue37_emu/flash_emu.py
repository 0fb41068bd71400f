"""Lane-level replay of kernels/attention/flash_common.cuh's fragment arithmetic: ldmatrix (plain and .trans) and
mma.sync m16n8k16 as the PTX ISA lays their fragments out, `slab` (scores, the causal cut, the online softmax, P V),
the row sums, rung 3's store and rung 2's four-warp merge, mirrored expression by expression, in float64 against
softmax(Q K^T * scale) V. Odd lengths, Sq != Skv, causal, head dims 64 and 128. Prints the worst error per case
and exits 1 if any exceeds 1e-12. Run by run.sh."""
import numpy as np
PAD = 8

def ldmatrix_x4(smem, addr_of_lane, trans):
    # addr_of_lane(l) -> (row, col) of the 8-element row that lane l points at; matrix m = l // 8, row l % 8
    mats = []
    for m in range(4):
        rows = [smem[r, c:c + 8] for (r, c) in (addr_of_lane(8 * m + i) for i in range(8))]
        mats.append(np.array(rows))  # 8x8
    out = np.zeros((32, 4, 2))
    for t in range(32):
        g, c = t // 4, t % 4
        for m in range(4):
            M = mats[m]
            out[t, m] = M[2 * c:2 * c + 2, g] if trans else M[g, 2 * c:2 * c + 2]
    return out  # per lane, 4 regs of 2 halves

def mma(C, A, b0, b1):
    # C[32][4], A[32][4][2], b0/b1[32][2]: assemble matrices, multiply, scatter back
    Am = np.zeros((16, 16)); Bm = np.zeros((16, 8))
    for t in range(32):
        g, c = t // 4, t % 4
        Am[g, 2*c:2*c+2] = A[t][0]; Am[g+8, 2*c:2*c+2] = A[t][1]
        Am[g, 2*c+8:2*c+10] = A[t][2]; Am[g+8, 2*c+8:2*c+10] = A[t][3]
        Bm[2*c:2*c+2, g] = b0[t]; Bm[2*c+8:2*c+10, g] = b1[t]
    Cm = Am @ Bm
    for t in range(32):
        g, c = t // 4, t % 4
        C[t][0] += Cm[g, 2*c]; C[t][1] += Cm[g, 2*c+1]; C[t][2] += Cm[g+8, 2*c]; C[t][3] += Cm[g+8, 2*c+1]

def load_q(qs, row0, D):
    qf = []
    for kk in range(D // 16):
        qf.append(ldmatrix_x4(qs, lambda l: (row0 + (l & 15), kk * 16 + (l >> 4) * 8), False))
    return qf  # [kk][lane][4][2]

class State:
    def __init__(s, D):
        s.o = np.zeros((32, D // 8, 4)); s.m = np.full((32, 2), -np.inf); s.l = np.zeros((32, 2))

def slab(st, qf, ks, vs, kbase, key0, skv, rowbase, sl2, causal, D, NT):
    s = np.zeros((NT, 32, 4))
    for kk in range(D // 16):
        for nt in range(0, NT, 2):
            b = ldmatrix_x4(ks, lambda l: (kbase + nt * 8 + (l & 7) + ((l >> 4) << 3), kk * 16 + ((l >> 3) & 1) * 8), False)
            C0 = s[nt]; C1 = s[nt + 1]
            mma(C0, qf[kk], b[:, 0], b[:, 1]); mma(C1, qf[kk], b[:, 2], b[:, 3])
    mx = np.full((32, 2), -np.inf)
    for t in range(32):
        for nt in range(NT):
            for e in range(4):
                j = key0 + kbase + nt * 8 + (t & 3) * 2 + (e & 1); i = rowbase + (t >> 2) + (e >> 1) * 8
                cut = j >= skv or (causal and j > i)
                s[nt, t, e] = -np.inf if cut else s[nt, t, e] * sl2
                mx[t, e >> 1] = max(mx[t, e >> 1], s[nt, t, e])
    for r in range(2):
        m = mx[:, r].copy()
        for x in (1, 2):
            m = np.maximum(m, m[np.arange(32) ^ x])
        for t in range(32):
            mn = max(st.m[t, r], m[t])
            corr = 1.0 if mn == -np.inf else 2.0 ** (st.m[t, r] - mn)
            st.m[t, r] = mn; st.l[t, r] *= corr
            st.o[t, :, 2*r] *= corr; st.o[t, :, 2*r+1] *= corr
    for t in range(32):
        for nt in range(NT):
            for e in range(4):
                m = st.m[t, e >> 1]
                s[nt, t, e] = 0.0 if m == -np.inf else 2.0 ** (s[nt, t, e] - m)
                st.l[t, e >> 1] += s[nt, t, e]
    for kk in range(NT // 2):
        a = np.zeros((32, 4, 2))
        for t in range(32):
            a[t, 0] = s[2*kk, t, 0:2]; a[t, 1] = s[2*kk, t, 2:4]; a[t, 2] = s[2*kk+1, t, 0:2]; a[t, 3] = s[2*kk+1, t, 2:4]
        for dn in range(0, D // 8, 2):
            b = ldmatrix_x4(vs, lambda l: (kbase + kk * 16 + (l & 7) + ((l >> 3) & 1) * 8, dn * 8 + (l >> 4) * 8), True)
            C0 = st.o[:, dn]; C1 = st.o[:, dn + 1]
            mma(C0, a, b[:, 0], b[:, 1]); mma(C1, a, b[:, 2], b[:, 3])

def tile(X, r0, rows, D):
    T = np.zeros((rows, D + PAD))
    n = max(0, min(rows, X.shape[0] - r0))
    T[:n, :D] = X[r0:r0 + n]
    return T

def sum_rows(st):
    for x in (1, 2):
        st.l = st.l + st.l[np.arange(32) ^ x]

def flash2(Q, K, V, scale, causal, BM=64, BN=64):
    sq, D = Q.shape; skv = K.shape[0]; O = np.full((sq, D), np.nan); sl2 = scale * np.log2(np.e)
    for i0 in range(0, sq, BM):
        qs = tile(Q, i0, BM, D)
        for warp in range(4):
            qf = load_q(qs, warp * 16, D); st = State(D)
            end = i0 + BM if causal and i0 + BM < skv else skv
            for j0 in range(0, end, BN):
                slab(st, qf, tile(K, j0, BN, D), tile(V, j0, BN, D), 0, j0, skv, i0 + warp * 16, sl2, causal, D, BN // 8)
            sum_rows(st)
            for t in range(32):
                for r in range(2):
                    i = i0 + warp * 16 + (t >> 2) + r * 8
                    if i >= sq: continue
                    for dn in range(D // 8):
                        O[i, dn*8 + (t&3)*2: dn*8 + (t&3)*2 + 2] = st.o[t, dn, 2*r:2*r+2] / st.l[t, r]
    return O

def flash1(Q, K, V, scale, causal, BM=16, BN=64):
    sq, D = Q.shape; skv = K.shape[0]; O = np.full((sq, D), np.nan); sl2 = scale * np.log2(np.e)
    for i0 in range(0, sq, BM):
        qs = tile(Q, i0, BM, D)
        ml = np.zeros((4, BM, 2)); po = np.zeros((4, BM, D))
        for warp in range(4):
            qf = load_q(qs, 0, D); st = State(D)
            end = i0 + BM if causal and i0 + BM < skv else skv
            for j0 in range(0, end, BN):
                slab(st, qf, tile(K, j0, BN, D), tile(V, j0, BN, D), warp * 16, j0, skv, i0, sl2, causal, D, 2)
            sum_rows(st)
            for t in range(32):
                r0 = t >> 2
                for r in range(2):
                    if (t & 3) == 0: ml[warp, r0 + 8*r] = (st.m[t, r], st.l[t, r])
                    for dn in range(D // 8):
                        po[warp, r0 + 8*r, dn*8 + (t&3)*2: dn*8 + (t&3)*2 + 2] = st.o[t, dn, 2*r:2*r+2]
        for row in range(BM):
            if i0 + row >= sq: continue
            M = ml[:, row, 0].max()
            f = np.array([0.0 if ml[w, row, 0] == -np.inf else 2.0 ** (ml[w, row, 0] - M) for w in range(4)])
            L = (ml[:, row, 1] * f).sum()
            O[i0 + row] = (po[:, row, :] * f[:, None]).sum(0) / L
    return O

def ref(Q, K, V, scale, causal):
    S = Q @ K.T * scale
    if causal:
        S = np.where(np.arange(K.shape[0])[None, :] > np.arange(Q.shape[0])[:, None], -np.inf, S)
    S = S - S.max(1, keepdims=True); P = np.exp(S); P /= P.sum(1, keepdims=True)
    return P @ V

rng = np.random.default_rng(1)
worst = 0.0
for (sq, skv, D) in [(7, 7, 64), (1, 1, 64), (20, 70, 64), (70, 20, 64), (65, 130, 128)]:
    Q, K, V = (rng.standard_normal((n, D)) for n in (sq, skv, skv))
    for causal in (False, True):
        r = ref(Q, K, V, 1 / np.sqrt(D), causal)
        for name, f in (("flash2", flash2), ("flash1", flash1)):
            o = f(Q, K, V, 1 / np.sqrt(D), causal)
            err = np.max(np.abs(o - r)) if not np.isnan(o).any() else np.inf
            worst = max(worst, err)
            print(f"{name} sq={sq} skv={skv} d={D} causal={causal}: max error {err:.2e}")
raise SystemExit(0 if worst < 1e-12 else 1)
