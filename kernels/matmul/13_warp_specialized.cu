/*
 * 13_warp_specialized.cu — matmul ladder, step 13 (Hopper, sm_90a): a producer warpgroup and two consumer
 * warpgroups around a ring of shared-memory stages, f16/bf16.
 *
 * Idea: in step 12 every thread waits at a block barrier after each k tile, so the copy engine and the
 * tensor cores take turns. Here the roles are split by warpgroup: warpgroup 0 only issues TMA copies (one
 * thread of it), warpgroups 1 and 2 only multiply. Each stage has two mbarriers: "full" (the producer
 * arrives with the expected byte count, the TMA completes it) and "empty" (each consumer warpgroup arrives
 * once its wgmma have read the stage). The producer refills a stage as soon as it is empty, up to STAGES
 * tiles ahead; a consumer keeps one wgmma group in flight (wait_group 1) and releases the previous stage,
 * so the tensor cores always have the next tile's instructions queued. setmaxnreg moves registers from the
 * producer (40 per thread) to the consumers (232), which hold 128 f32 accumulators each.
 * Changed from step 12: producer/consumer warpgroups, full/empty mbarriers instead of __syncthreads, one
 * wgmma group in flight, setmaxnreg.
 * Launch: 384 threads (3 warpgroups), grid x = column tiles, y = row tiles (grouped by 8), z = batch (split
 * past 65535); block tile 128 x 256 x 64, 4 stages of 48 KB.
 * 168 registers at entry (setmaxnreg moves them), one block (12 warps) per SM.
 * Measured: 92.4% of cuBLAS bf16 at 8192^3 on the H100 (alternating pairs, 2026-11-24).
 * Limits and operands: as step 12 (mm_hopper.cuh: supports_hopper).
 * History (measurements, ncu): docs/architecture.md, "The Hopper rungs".
 */
#include "mm_hopper.cuh"

using namespace ckh;

namespace {

constexpr int BM = 128, BN = 256, STAGES = 4, NT = 384, GROUP = 8;
constexpr int A_BYTES = OpTile<KMAJ, BM>::BYTES, STAGE_BYTES = A_BYTES + OpTile<KMAJ, BN>::BYTES;
constexpr int SMEM = STAGES * STAGE_BYTES + 1024 + 2 * STAGES * 8;

template <typename T, int LA, int LB>
__global__ void __launch_bounds__(NT, 1)
    matmul_warp_specialized_kernel(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
                                   const TcArgs p, int64_t y0, int64_t z0) {
#ifndef CK_HAS_WGMMA
  __trap(); // built without sm_90a (supports() refuses first)
#else
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = (smem_u32(smem) + 1023) & ~1023u;
  const uint32_t full = base + STAGES * STAGE_BYTES, empty = full + 8 * STAGES;
  const int tid = threadIdx.x, wg = tid >> 7, wt = tid & 127;

  unsigned tile_m, tile_n;
  tile_of_block<GROUP>(tile_m, tile_n);
  const int64_t z = z0 + blockIdx.z, m0 = (y0 + tile_m) * BM, n0 = (int64_t)tile_n * BN;
  const int ktiles = (int)((p.k + BK - 1) / BK);

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) mbar_init(full + 8 * s, 1), mbar_init(empty + 8 * s, 2);
    mbar_fence_init();
  }
  __syncthreads();

  if (wg == 0) { // producer
    setmaxnreg_dec<kRegsProducer>();
    if (tid == 0) {
      const int za = p.a_bs ? (int)z : 0, zb = p.b_bs ? (int)z : 0;
      for (int t = 0; t < ktiles; ++t) {
        const int s = t % STAGES;
        mbar_wait(empty + 8 * s, ((t / STAGES) & 1) ^ 1); // round 0 passes at once (fresh barrier)
        const uint32_t sa = base + s * STAGE_BYTES, bar = full + 8 * s;
        mbar_expect_tx(bar, STAGE_BYTES);
        OpTile<LA, BM>::load(sa, &ma, bar, (int)m0, t * BK, za);
        OpTile<LB, BN>::load(sa + A_BYTES, &mb, bar, (int)n0, t * BK, zb);
      }
    }
  } else { // consumers: warpgroup c owns rows 64c .. 64c + 63
    setmaxnreg_inc<ws_regs<NT, NT - 128, 1>()>();
    const int c = wg - 1;
    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
    for (int t = 0; t < ktiles; ++t) {
      const int s = t % STAGES;
      mma_stage<BM, BN, T, LA, LB>(d, full + 8 * s, (t / STAGES) & 1, base + s * STAGE_BYTES, c * 64);
      wgmma_wait<1>(); // tile t - 1's wgmma are done: release its stage
      if (t > 0 && wt == 0) mbar_arrive(empty + 8 * ((t - 1) % STAGES));
    }
    wgmma_wait<0>();
    fence_acc(d);
    const int mrem = (int)(p.m - m0 < BM ? p.m - m0 : BM), nrem = (int)(p.n - n0 < BN ? p.n - n0 : BN);
    store_wg<BN>(p, c_base(p, z, m0, n0), d, c * 64, wt, mrem, nrem);
  }
#endif
}

struct Rung {
  template <typename T, int LA, int LB> static int launch(const ck_mm_desc *d, const ck_env *env, const Maps &mp) {
    static ck_devcache raised;
    auto kern = matmul_warp_specialized_kernel<T, LA, LB>;
    if (int e = raise_smem(kern, SMEM, raised, env->device)) return e;
    return launch_tiles_tma<BM, BN, NT, SMEM>(d, env, mp, kern);
  }
};

} // namespace

extern "C" int ck_matmul_warp_specialized(const void *desc, const ck_env *env) { return launch_rung<Rung>(desc, env, BM, BN); }

extern "C" const char *ck_matmul_warp_specialized_supports(const void *desc) {
  return supports_hopper((const ck_mm_desc *)desc, (const void *)matmul_warp_specialized_kernel<__half, KMAJ, MNMAJ>);
}
