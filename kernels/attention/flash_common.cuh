/*
 * flash_common.cuh — what the fused attention rungs (02_flash1, 03_flash2) share (issue 37): the tensor-core
 * instructions (mma.sync m16n8k16 with f32 accumulators, ldmatrix, cp.async), tiles in shared memory, and
 * `slab`, one warp's step of the online softmax over a slice of a K/V tile.
 *
 * Fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16"): lane l holds rows l/4 and l/4 + 8 of a 16x8
 * accumulator, columns 2(l%4) and 2(l%4) + 1. The scores S = Q K^T come out in that layout, and the same registers
 * rounded to 16 bits are already the A operand of P V (two 8-key accumulator tiles = one 16-key A fragment), so P
 * never touches shared memory. K rows are the "col" B operand as they are stored (ldmatrix); V is read
 * transposed (ldmatrix .trans). Shared tiles are [rows][D + 8] halves: the 16-byte pad puts the 8 rows an
 * ldmatrix reads in 8 different bank groups.
 * The softmax runs in the log2 domain (scale * log2(e) folded in, exp2f); each thread keeps its two rows' max
 * (the quad agrees on it every tile) and a partial row sum (summed over the quad once, at the end).
 */
#ifndef CK_FLASH_COMMON_CUH
#define CK_FLASH_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <type_traits>

#include "ck_kernels.h"
#include "half.h"

namespace ckflash {

#define CKF_D __device__ __forceinline__
constexpr int PAD = 8;

// ---------------------------------------------------------------- instructions

template <class T> CKF_D void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, ck_f16_t>)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

CKF_D uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

template <bool TRANS> CKF_D void ldmatrix_x4(uint32_t (&r)[4], const void *p) {
  if constexpr (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}

/* 16 bytes global -> shared, asynchronously; nothing read (zeros written) when !valid. */
CKF_D void cp_async16(void *dst, const void *src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(valid ? 16 : 0));
}
CKF_D void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> CKF_D void cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

template <class T> CKF_D uint32_t pack2(float lo, float hi) {
  uint32_t r;
  if constexpr (std::is_same_v<T, ck_f16_t>) {
    const __half2 h = __floats2half2_rn(lo, hi);
    memcpy(&r, &h, 4);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    memcpy(&r, &h, 4);
  }
  return r;
}

// ---------------------------------------------------------------- tiles

/* rows x D halves from global (row r at g + r*stride) into s[rows][D + PAD]; rows past `valid` are zeros.
 * Issued by all `threads` threads; the caller commits and waits. */
template <class T, int D> CKF_D void load_tile(T *s, const T *g, int64_t stride, int rows, int64_t valid, int threads) {
  constexpr int C = D / 8; /* 16-byte chunks per row */
  for (int e = threadIdx.x; e < rows * C; e += threads) {
    const int r = e / C, c = e % C;
    const bool ok = r < valid;
    cp_async16(s + r * (D + PAD) + c * 8, ok ? g + r * stride + c * 8 : g, ok);
  }
}

/* A fragments of 16 query rows (row0 of the tile) for all D/16 k-steps. */
template <class T, int D> CKF_D void load_q(uint32_t (&qf)[D / 16][4], const T *qs, int row0) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) ldmatrix_x4<false>(qf[kk], qs + (row0 + (lane & 15)) * (D + PAD) + kk * 16 + (lane >> 4) * 8);
}

/* One warp's online-softmax state: O (16 rows x D, accumulator tiles), each thread's two rows' max and sum. */
template <int D> struct State {
  float o[D / 8][4];
  float m[2], l[2];
  CKF_D void init() {
#pragma unroll
    for (int i = 0; i < D / 8; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
    m[0] = m[1] = -INFINITY;
    l[0] = l[1] = 0.f;
  }
};

struct Geo {
  int64_t skv;  /* keys in all */
  int64_t key0; /* the key of shared row 0 */
  int64_t row;  /* this thread's first query row (its second is row + 8) */
  float sl2;    /* scale * log2(e) */
  bool causal;
};

/* One warp's step over keys kbase .. kbase + 8*NT of the shared K/V tile: S = Q K^T, the cut (keys past skv, and
 * past the query when causal), the online softmax update, O += P V. Between the two products it waits for the V
 * tile (until at most WAIT_V cp.async groups are pending) and for the block: every warp of the block calls it. */
template <class T, int D, int NT, int WAIT_V>
CKF_D void slab(State<D> &st, const uint32_t (&qf)[D / 16][4], const T *ks, const T *vs, int kbase, const Geo &g) {
  static_assert(NT % 2 == 0, "keys come in 16s");
  const int lane = threadIdx.x & 31;
  float s[NT][4];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
    for (int nt = 0; nt < NT; nt += 2) {
      uint32_t b[4];
      ldmatrix_x4<false>(b, ks + (kbase + nt * 8 + (lane & 7) + ((lane >> 4) << 3)) * (D + PAD) + kk * 16 + ((lane >> 3) & 1) * 8);
      mma<T>(s[nt], qf[kk], b[0], b[1]);
      mma<T>(s[nt + 1], qf[kk], b[2], b[3]);
    }
  float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t j = g.key0 + kbase + nt * 8 + (lane & 3) * 2 + (e & 1), i = g.row + (e >> 1) * 8;
      const bool cut = j >= g.skv || (g.causal && j > i);
      s[nt][e] = cut ? -INFINITY : s[nt][e] * g.sl2;
      mx[e >> 1] = fmaxf(mx[e >> 1], s[nt][e]);
    }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
    const float mn = fmaxf(st.m[r], mx[r]);
    const float corr = mn == -INFINITY ? 1.f : exp2f(st.m[r] - mn);
    st.m[r] = mn;
    st.l[r] *= corr;
#pragma unroll
    for (int dn = 0; dn < D / 8; ++dn) st.o[dn][2 * r] *= corr, st.o[dn][2 * r + 1] *= corr;
  }
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float m = st.m[e >> 1];
      s[nt][e] = m == -INFINITY ? 0.f : exp2f(s[nt][e] - m);
      st.l[e >> 1] += s[nt][e];
    }
  cp_wait<WAIT_V>();
  __syncthreads();
#pragma unroll
  for (int kk = 0; kk < NT / 2; ++kk) {
    const uint32_t a[4] = {pack2<T>(s[2 * kk][0], s[2 * kk][1]), pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                           pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
    for (int dn = 0; dn < D / 8; dn += 2) {
      uint32_t b[4];
      ldmatrix_x4<true>(b, vs + (kbase + kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * (D + PAD) + dn * 8 + (lane >> 4) * 8);
      mma<T>(st.o[dn], a, b[0], b[1]);
      mma<T>(st.o[dn + 1], a, b[2], b[3]);
    }
  }
}

/* Element (z, h, s, 0) of q, k, v or o. */
template <class T> CKF_D T *at(const void *p, const int64_t (&st)[3], int64_t z, int64_t h, int64_t s) {
  return (T *)p + z * st[0] + h * st[1] + s * st[2];
}

/* The block's BM query rows from i0 into qs, and this warp's A fragments of its 16 rows from row0. */
template <class T, int D, int BM>
CKF_D void start(uint32_t (&qf)[D / 16][4], T *qs, const ck_attn_desc &d, int64_t z, int64_t h, int64_t i0, int row0) {
  load_tile<T, D>(qs, at<T>(d.q, d.q_st, z, h, i0), d.q_st[2], BM, d.sq - i0, blockDim.x);
  cp_commit();
  cp_wait<0>();
  __syncthreads();
  load_q<T, D>(qf, qs, row0);
}

/* The K/V tiles of keys [0, end) of (z, h), BN keys at a time, staged in shared memory at kv (K, then V: one
 * cp.async group each, so the scores start while V is still in flight); this warp takes keys kbase .. kbase + 8*NT
 * of each tile (slab). DOUBLE: two buffers (kv holds K0 V0 K1 V1), tile t + 1 loading while tile t is computed;
 * the groups pending are then K(t), V(t), K(t+1), V(t+1) (empty groups after the last tile keep the count). */
template <class T, int D, int BN, int NT, bool DOUBLE>
CKF_D void kv_loop(State<D> &st, const uint32_t (&qf)[D / 16][4], T *kv, int kbase, Geo &g,
                   const ck_attn_desc &d, int64_t z, int64_t h, int64_t end) {
  constexpr int TILE = BN * (D + PAD);
  auto issue = [&](int64_t j0, int buf) {
    T *ks = kv + 2 * buf * TILE;
    load_tile<T, D>(ks, at<T>(d.k, d.k_st, z, h, j0), d.k_st[2], BN, d.skv - j0, blockDim.x);
    cp_commit();
    load_tile<T, D>(ks + TILE, at<T>(d.v, d.v_st, z, h, j0), d.v_st[2], BN, d.skv - j0, blockDim.x);
    cp_commit();
  };
  issue(0, 0);
  int buf = 0;
  for (int64_t j0 = 0; j0 < end; j0 += BN) {
    if constexpr (DOUBLE) {
      if (j0 + BN < end) issue(j0 + BN, buf ^ 1);
      else cp_commit(), cp_commit();
      cp_wait<3>();
    } else {
      cp_wait<1>();
    }
    __syncthreads();
    g.key0 = j0;
    slab<T, D, NT, DOUBLE ? 2 : 0>(st, qf, kv + 2 * buf * TILE, kv + 2 * buf * TILE + TILE, kbase, g);
    __syncthreads(); /* every warp is done with this buffer before it is loaded again */
    if constexpr (DOUBLE) buf ^= 1;
    else if (j0 + BN < end) issue(j0 + BN, 0);
  }
}

/* The quad's partial row sums added up (every lane of the quad gets them). */
template <int D> CKF_D void sum_rows(State<D> &st) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    st.l[r] += __shfl_xor_sync(0xffffffffu, st.l[r], 1);
    st.l[r] += __shfl_xor_sync(0xffffffffu, st.l[r], 2);
  }
}

/* Raise a kernel's dynamic shared memory limit once per device. */
template <class K> static int allow_smem(const ck_env *env, ck_devcache &done, K *kern, size_t bytes) {
  if (bytes <= 48 * 1024 || done.v[env->device]) return 0;
  const int e = (int)cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
  if (!e) done.v[env->device] = 1;
  return e;
}

} // namespace ckflash

/* What both fused rungs take: f16/bf16 (the rung table), head dims 64 or 128 for q, k and v, no mask, 16-byte
 * aligned rows (cp.async and ldmatrix move 16 bytes). */
static inline const char *ck_flash_supports(const ck_attn_desc *d) {
  if (d->d != d->dv || (d->d != 64 && d->d != 128)) return "head dims 64 and 128 only (q, k and v alike): 'naive' takes any";
  if (d->mask) return "no mask (causal is fine): 'naive' takes masks";
  const void *p[4] = {d->q, d->k, d->v, d->o};
  const int64_t *s[4] = {d->q_st, d->k_st, d->v_st, d->o_st};
  for (int i = 0; i < 4; ++i) {
    if ((uintptr_t)p[i] % 16) return "16-byte aligned q, k, v and out only (a view at an odd offset)";
    for (int k = 0; k < 3; ++k)
      if (s[i][k] % 8) return "batch, head and sequence strides that are multiples of 8 elements only (16-byte rows)";
  }
  if (d->batch * d->heads > 65535) return "batch x heads <= 65535 (the grid's y)";
  return nullptr;
}

/* extern "C" launcher NAME(desc, env): FN<T, D>(d, env) for f16/bf16 and head dims 64/128. */
#define CK_FLASH_LAUNCHER(NAME, FN)                                                                                  \
  extern "C" int NAME(const void *desc, const ck_env *env) {                                                        \
    const ck_attn_desc &d = *(const ck_attn_desc *)desc;                                                            \
    if (d.dtype == CK_F16) return d.d == 64 ? FN<ck_f16_t, 64>(d, env) : FN<ck_f16_t, 128>(d, env);               \
    return d.d == 64 ? FN<ck_bf16_t, 64>(d, env) : FN<ck_bf16_t, 128>(d, env);                                    \
  }

#endif
