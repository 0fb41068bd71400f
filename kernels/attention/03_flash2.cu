/*
 * 03_flash2.cu — rung 3: FlashAttention-2's work split on mma.sync.
 *
 * Idea (Dao, 2023): rung 2 splits each K/V tile across its warps, so every warp holds its own O, max and sum
 * for the same query rows, and they must be merged through shared memory. Here the 4 warps split the *query*
 * block instead (16 rows each of 64): each warp sees every key of every tile, keeps O for its own rows in
 * registers, and writes it straight out; no warp talks to another. A block of 64 queries reads each K/V tile
 * once for 64 rows (rung 2: for 16), so K/V traffic from L2 drops 4x. The rescaling of O by 1/sum is done once
 * at the end, not per tile. Causal: the tiles wholly above the diagonal are skipped (a query block stops at its
 * last row), and the blocks are issued longest first so that the short ones fill the tail. The K/V tiles are
 * double-buffered: tile t + 1 is in flight (cp.async) while tile t is computed, which matters here because the
 * O accumulators leave room for only 2 blocks (8 warps) per SM to hide the loads with.
 * Change from rung 2: query split across warps, no merge, 4x the rows per K/V tile, causal tiles skipped, K/V
 * double-buffered.
 * Launch: 128 threads (4 warps), a block per 64 queries of a (batch, head): grid (ceil(Sq/64), B*H);
 * 5 tiles of 64 x (D + 8) halves of dynamic shared memory (Q, K0, V0, K1, V1: 45 KiB for D = 64, 85 KiB for 128).
 * Limits: ck_flash_supports (flash_common.cuh). Operands: q, k, v, o strided, head dim at unit stride.
 */
#include "flash_common.cuh"

using namespace ckflash;

#define F2_BM 64
#define F2_BN 64

// ---------------------------------------------------------------- kernel

template <class T, int D> __global__ void __launch_bounds__(128) attn_flash2_kernel(const ck_attn_desc d) {
  extern __shared__ uint4 smem[];
  T *qs = (T *)smem, *kv = qs + F2_BM * (D + PAD);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t z = blockIdx.y / d.heads, h = blockIdx.y % d.heads;
  const int64_t i0 = (int64_t)(gridDim.x - 1 - blockIdx.x) * F2_BM; /* longest (causal) first */
  uint32_t qf[D / 16][4];
  start<T, D, F2_BM>(qf, qs, d, z, h, i0, warp * 16);
  State<D> st;
  st.init();
  Geo g = {d.skv, 0, i0 + warp * 16 + (lane >> 2), (float)(d.scale * 1.4426950408889634), d.causal != 0};
  const int64_t end = d.causal && i0 + F2_BM < d.skv ? i0 + F2_BM : d.skv;
  kv_loop<T, D, F2_BN, F2_BN / 8, true>(st, qf, kv, 0, g, d, z, h, end);
  sum_rows(st);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t i = g.row + r * 8;
    if (i >= d.sq) continue;
    T *o = at<T>(d.o, d.o_st, z, h, i);
    const float inv = 1.f / st.l[r];
#pragma unroll
    for (int dn = 0; dn < D / 8; ++dn)
      *(uint32_t *)(o + dn * 8 + (lane & 3) * 2) = pack2<T>(st.o[dn][2 * r] * inv, st.o[dn][2 * r + 1] * inv);
  }
}

// ---------------------------------------------------------------- launcher

template <class T, int D> static int launch(const ck_attn_desc &d, const ck_env *env) {
  static ck_devcache raised;
  const size_t smem = (size_t)(F2_BM + 4 * F2_BN) * (D + PAD) * sizeof(T);
  int e = allow_smem(env, raised, attn_flash2_kernel<T, D>, smem);
  if (e) return e;
  const dim3 grid((unsigned)((d.sq + F2_BM - 1) / F2_BM), (unsigned)(d.batch * d.heads));
  ck_note(env, attn_flash2_kernel<T, D>, 128, smem);
  attn_flash2_kernel<T, D><<<grid, 128, smem, (cudaStream_t)env->stream>>>(d);
  return (int)cudaGetLastError();
}

CK_FLASH_LAUNCHER(ck_attn_flash2, launch)

extern "C" const char *ck_attn_flash2_supports(const void *desc) { return ck_flash_supports((const ck_attn_desc *)desc); }
