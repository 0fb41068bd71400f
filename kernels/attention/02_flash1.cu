/*
 * 02_flash1.cu — rung 2: fused attention with FlashAttention-1's work split, on mma.sync.
 *
 * Idea (Dao et al., 2022): never write S. A block takes 16 query rows, walks the keys in tiles of 64 staged in
 * shared memory (cp.async), and keeps the online softmax (Milakov & Gimelshein's running max and sum, as the
 * row ladder's rung 2) so O can be accumulated tile by tile and rescaled when the max grows. Within a tile the 4
 * warps split the keys ("sliced K": 16 each), as FlashAttention-1 does; so each warp holds a partial O, max and
 * sum for the same 16 rows, and at the end the four are merged through shared memory
 * (O = sum_w O_w 2^(m_w - M) / sum_w l_w 2^(m_w - M)). Both products run on the tensor cores (mma.sync
 * m16n8k16, f32 accumulators); P goes from the score registers into the second product without shared memory.
 * Change from rung 1: S, the mask pass and P never reach memory: q, k, v are read and o written, once per block.
 * Launch: 128 threads (4 warps), a block per 16 queries of a (batch, head): grid (ceil(Sq/16), B*H); dynamic
 * shared memory: Q 16 rows, K and V 64 rows of D + 8 halves (the merge reuses the K/V space).
 * Limits: ck_flash_supports (flash_common.cuh). Operands: q, k, v, o strided, head dim at unit stride.
 */
#include "flash_common.cuh"

using namespace ckflash;

#define F1_BM 16
#define F1_BN 64

// ---------------------------------------------------------------- kernel

template <class T, int D> __global__ void __launch_bounds__(128) attn_flash1_kernel(const ck_attn_desc d) {
  extern __shared__ uint4 smem[];
  T *qs = (T *)smem, *ks = qs + F1_BM * (D + PAD);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t z = blockIdx.y / d.heads, h = blockIdx.y % d.heads;
  const int64_t i0 = (int64_t)blockIdx.x * F1_BM;
  uint32_t qf[D / 16][4];
  start<T, D, F1_BM>(qf, qs, d, z, h, i0, 0);
  State<D> st;
  st.init();
  Geo g = {d.skv, 0, i0 + (lane >> 2), (float)(d.scale * 1.4426950408889634), d.causal != 0};
  const int64_t end = d.causal && i0 + F1_BM < d.skv ? i0 + F1_BM : d.skv;
  kv_loop<T, D, F1_BN, 2, false>(st, qf, ks, warp * 16, g, d, z, h, end);
  /* the merge: each warp's max and sum per row (in qs's space) and partial O (in ks/vs's), then one pass */
  sum_rows(st);
  float *ml = (float *)qs, *po = (float *)ks; /* ml[warp][row][max, sum]; po[warp][row][D] */
  const int r0 = lane >> 2;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if ((lane & 3) == 0) ml[(warp * F1_BM + r0 + 8 * r) * 2] = st.m[r], ml[(warp * F1_BM + r0 + 8 * r) * 2 + 1] = st.l[r];
#pragma unroll
    for (int dn = 0; dn < D / 8; ++dn) {
      float *p = po + (warp * F1_BM + r0 + 8 * r) * D + dn * 8 + (lane & 3) * 2;
      p[0] = st.o[dn][2 * r], p[1] = st.o[dn][2 * r + 1];
    }
  }
  __syncthreads();
  for (int e = threadIdx.x; e < F1_BM * D / 2; e += 128) {
    const int row = e / (D / 2), c = (e % (D / 2)) * 2;
    if (i0 + row >= d.sq) continue;
    float M = -INFINITY, L = 0, o0 = 0, o1 = 0;
    for (int w = 0; w < 4; ++w) M = fmaxf(M, ml[(w * F1_BM + row) * 2]);
    for (int w = 0; w < 4; ++w) {
      const float mw = ml[(w * F1_BM + row) * 2], f = mw == -INFINITY ? 0.f : exp2f(mw - M);
      const float *p = po + (w * F1_BM + row) * D + c;
      L += ml[(w * F1_BM + row) * 2 + 1] * f, o0 += p[0] * f, o1 += p[1] * f;
    }
    *(uint32_t *)(at<T>(d.o, d.o_st, z, h, i0 + row) + c) = pack2<T>(o0 / L, o1 / L);
  }
}

// ---------------------------------------------------------------- launcher

template <class T, int D> static int launch(const ck_attn_desc &d, const ck_env *env) {
  static ck_devcache raised;
  const size_t smem = (size_t)(F1_BM + 2 * F1_BN) * (D + PAD) * sizeof(T);
  static_assert(4 * F1_BM * 2 * sizeof(float) <= F1_BM * (D + PAD) * 2, "the merge's max/sum fit in Q's space");
  static_assert(4 * F1_BM * D * sizeof(float) <= 2 * F1_BN * (D + PAD) * 2, "the merge's partial O fit in K/V's");
  int e = allow_smem(env, raised, attn_flash1_kernel<T, D>, smem);
  if (e) return e;
  const dim3 grid((unsigned)((d.sq + F1_BM - 1) / F1_BM), (unsigned)(d.batch * d.heads));
  ck_note(env, attn_flash1_kernel<T, D>, 128, smem);
  attn_flash1_kernel<T, D><<<grid, 128, smem, (cudaStream_t)env->stream>>>(d);
  return (int)cudaGetLastError();
}

CK_FLASH_LAUNCHER(ck_attn_flash1, launch)

extern "C" const char *ck_attn_flash1_supports(const void *desc) { return ck_flash_supports((const ck_attn_desc *)desc); }
