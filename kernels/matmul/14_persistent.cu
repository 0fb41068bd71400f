/*
 * 14_persistent.cu — matmul ladder, step 14 (Hopper, sm_90a): step 13 as a persistent kernel, f16/bf16.
 *
 * Idea: in step 13 each block computes one tile and exits; its consumers' epilogue (converting and storing
 * 128 accumulators per thread) and the next block's start-up (barrier init, the first TMA round trip) leave
 * the tensor cores idle at every tile. Here the grid is one block per SM (at most), and each block walks
 * the output tiles tile = blockIdx.x, + gridDim.x, ... in the grouped order (GROUP row tiles per column
 * band, batch outermost), so concurrently running blocks share A and B panels in L2. The producer's stage
 * ring runs on across tiles: while the consumers store tile i, the producer is already filling the stages
 * with tile i + 1's first k tiles, so the next tile's wgmma start the moment the epilogue ends.
 * Changed from step 13: a persistent grid and a tile loop; the stage counter (and the mbarrier phases) run
 * over the block's whole sequence of k tiles, not one tile's.
 * Not done here (see docs/architecture.md): thread-block clusters with TMA multicast, and an epilogue
 * through shared memory and TMA stores.
 * Launch: 384 threads, grid = min(tiles, SMs) blocks; block tile 128 x 256 x 64, 4 stages of 48 KB.
 * Limits and operands: as step 12 (mm_hopper.cuh: supports_hopper); tiles < 2^31.
 */
#include "mm_hopper.cuh"

using namespace ckh;

namespace {

constexpr int BM = 128, BN = 256, STAGES = 4, NT = 384, GROUP = 8;
constexpr int A_BYTES = OpTile<KMAJ, BM>::BYTES, STAGE_BYTES = A_BYTES + OpTile<KMAJ, BN>::BYTES;
constexpr int SMEM = STAGES * STAGE_BYTES + 1024 + 2 * STAGES * 8;

/* Tile `id` of a batch-major grouped order over mt x nt tiles per batch: batch z, row tile tm, column tile tn. */
__device__ __forceinline__ void tile_of(int id, int mt, int nt, int &z, int &tm, int &tn) {
  const int per = mt * nt;
  z = id / per;
  const int l = id % per, band = l / (GROUP * nt), rows = min(GROUP, mt - band * GROUP), in = l % (GROUP * nt);
  tm = band * GROUP + in % rows, tn = in / rows;
}

template <typename T, int LA, int LB>
__global__ void __launch_bounds__(NT, 1)
    matmul_persistent_kernel(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
                             const TcArgs p, int tiles) {
#ifndef CK_HAS_WGMMA
  __trap(); // built without sm_90a (supports() refuses first)
#else
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = (smem_u32(smem) + 1023) & ~1023u;
  const uint32_t full = base + STAGES * STAGE_BYTES, empty = full + 8 * STAGES;
  const int tid = threadIdx.x, wg = tid >> 7, wt = tid & 127;
  const int mt = (int)((p.m + BM - 1) / BM), nt = (int)((p.n + BN - 1) / BN);
  const int ktiles = (int)((p.k + BK - 1) / BK);

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) mbar_init(full + 8 * s, 1), mbar_init(empty + 8 * s, 2);
    mbar_fence_init();
  }
  __syncthreads();

  if (wg == 0) { // producer
    setmaxnreg_dec<40>();
    if (tid == 0) {
      int it = 0; // k tiles issued by this block so far (all tiles)
      for (int id = blockIdx.x; id < tiles; id += gridDim.x) {
        int z, tm, tn;
        tile_of(id, mt, nt, z, tm, tn);
        const int za = p.a_bs ? z : 0, zb = p.b_bs ? z : 0;
        for (int t = 0; t < ktiles; ++t, ++it) {
          const int s = it % STAGES;
          mbar_wait(empty + 8 * s, ((it / STAGES) & 1) ^ 1);
          const uint32_t sa = base + s * STAGE_BYTES, bar = full + 8 * s;
          mbar_expect_tx(bar, STAGE_BYTES);
          OpTile<LA, BM>::load(sa, &ma, bar, tm * BM, t * BK, za);
          OpTile<LB, BN>::load(sa + A_BYTES, &mb, bar, tn * BN, t * BK, zb);
        }
      }
    }
  } else { // consumers: warpgroup c owns rows 64c .. 64c + 63 of every tile
    setmaxnreg_inc<232>();
    const int c = wg - 1;
    int it = 0;
    for (int id = blockIdx.x; id < tiles; id += gridDim.x) {
      int z, tm, tn;
      tile_of(id, mt, nt, z, tm, tn);
      float d[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
      for (int t = 0; t < ktiles; ++t, ++it) {
        const int s = it % STAGES;
        mbar_wait(full + 8 * s, (it / STAGES) & 1);
        const uint32_t sa = base + s * STAGE_BYTES, sb = sa + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks)
          Wgmma<BN, T>::template mma<LA, LB>(d, OpTile<LA, BM>::desc(sa, c * 64, ks), OpTile<LB, BN>::desc(sb, 0, ks), 1);
        wgmma_commit();
        wgmma_wait<1>();
        if (t > 0 && wt == 0) mbar_arrive(empty + 8 * ((it - 1) % STAGES));
      }
      wgmma_wait<0>();
      fence_acc(d);
      if (wt == 0) mbar_arrive(empty + 8 * ((it - 1) % STAGES)); // the tile's last stage
      const int64_t m0 = (int64_t)tm * BM, n0 = (int64_t)tn * BN;
      const int mrem = (int)(p.m - m0 < BM ? p.m - m0 : BM), nrem = (int)(p.n - n0 < BN ? p.n - n0 : BN);
      store_wg<BN>(p, c_base(p, z, m0, n0), d, c * 64, wt, mrem, nrem);
    }
  }
#endif
}

template <typename T, int LA, int LB> int launch(const ck_mm_desc *d, const ck_env *env, const Maps &mp) {
  static bool raised;
  auto kern = matmul_persistent_kernel<T, LA, LB>;
  if (int e = raise_smem(kern, SMEM, raised)) return e;
  const int64_t tiles = ((d->m + BM - 1) / BM) * ((d->n + BN - 1) / BN) * d->batch;
  if (tiles > 0x7fffffffLL) return (int)cudaErrorInvalidConfiguration; // supports() refuses these first
  const int sms = env->sm_count > 0 ? env->sm_count : 132;
  const unsigned grid = (unsigned)(tiles < sms ? tiles : sms);
  kern<<<grid, NT, SMEM, (cudaStream_t)env->stream>>>(mp.a, mp.b, tc_args(d), (int)tiles);
  return (int)cudaGetLastError();
}

template <typename T> int launch_t(const ck_mm_desc *d, const ck_env *env) {
  Maps mp;
  if (!make_maps(mp, d, BM, BN)) return (int)cudaErrorInvalidValue;
  if (mp.la == KMAJ) return mp.lb == KMAJ ? launch<T, KMAJ, KMAJ>(d, env, mp) : launch<T, KMAJ, MNMAJ>(d, env, mp);
  return mp.lb == KMAJ ? launch<T, MNMAJ, KMAJ>(d, env, mp) : launch<T, MNMAJ, MNMAJ>(d, env, mp);
}

} // namespace

extern "C" int ck_matmul_persistent(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  if (d->dtype == CK_F16) return launch_t<__half>(d, env);
  if (d->dtype == CK_BF16) return launch_t<__nv_bfloat16>(d, env);
  return (int)cudaErrorInvalidValue;
}

extern "C" const char *ck_matmul_persistent_supports(const void *desc) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (((d->m + BM - 1) / BM) * ((d->n + BN - 1) / BN) * d->batch > 0x7fffffffLL) return "needs fewer than 2^31 tiles";
  return supports_hopper(d, (const void *)matmul_persistent_kernel<__half, KMAJ, MNMAJ>);
}
