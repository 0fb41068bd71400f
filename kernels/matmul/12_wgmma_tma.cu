/*
 * 12_wgmma_tma.cu — matmul ladder, step 12 (Hopper, sm_90a): wgmma fed by TMA, f16/bf16.
 *
 * Idea: on Hopper, mma.sync (step 11) is the old path; the tensor cores' full rate comes from wgmma, an
 * asynchronous warpgroup-wide (4 warps) instruction that reads its operands straight from shared memory
 * through 64-bit matrix descriptors, and the tiles get there by TMA: one thread hands the copy engine a box
 * of a tensor map (mm_hopper.cuh) and the engine writes it, 128-byte swizzled, into shared memory and
 * signals an mbarrier with the bytes it wrote. No thread computes a load address, and tails are zeros that
 * the engine fills in. Two warpgroups each own 64 rows of the 128 x 256 block tile: per 64-wide k tile,
 * four wgmma m64n256k16, 128 f32 accumulators per thread.
 * Pipeline: STAGES tiles in flight. Thread 0 starts the copies of the first STAGES k tiles, each on its
 * stage's "full" mbarrier (arrive + expected bytes); every thread waits for the stage's phase, the
 * warpgroups issue their wgmma, wait for them to finish (wgmma.wait_group 0), and the block meets at
 * __syncthreads so that thread 0 may refill the stage with tile t + STAGES. The barrier and the full wait
 * make the producer and the tensor cores take turns; step 13 removes that.
 * Changed from step 11: TMA instead of per-thread cp.async (no address arithmetic), wgmma instead of
 * ldmatrix + mma.sync, the swizzle done by the hardware on both sides, operands read in place whichever of
 * their dims is contiguous (transposed views need no copy).
 * Launch: 256 threads (2 warpgroups), grid x = column tiles, y = row tiles (grouped by 8 for L2 reuse),
 * z = batch (several launches past 65535); dynamic shared memory STAGES * 48 KB + 1 KB (alignment) +
 * barriers.
 * Measured (H100, bf16, % of cuBLAS in the same run, three runs): 8192^3 81.2 / 82.9 / 83.2%, 4096^3 74.7 -
 * 74.9%: 2.2-2.3x step 11. 154 registers, 193 KB of shared memory, one block (8 warps) per SM.
 * Limits: m, n, k < 2^31; compute capability 9.x and an sm_90a build; operands a tensor map takes (the
 * dispatcher copies the others, CK_VF_TMA; supports() says when even a copy would not do).
 * Operands as in mm_tc_host.cuh (TcArgs): f16 or bf16 A and B, C in the input dtype or f32, alpha/beta in f32,
 * beta == 0 never reads C.
 */
#include "mm_hopper.cuh"

using namespace ckh;

namespace {

constexpr int BM = 128, BN = 256, STAGES = 4, NT = 256, GROUP = 8;
constexpr int A_BYTES = OpTile<KMAJ, BM>::BYTES, STAGE_BYTES = A_BYTES + OpTile<KMAJ, BN>::BYTES;
constexpr int SMEM = STAGES * STAGE_BYTES + 1024 + STAGES * 8;

template <typename T, int LA, int LB>
__global__ void __launch_bounds__(NT, 1)
    matmul_wgmma_tma_kernel(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
                            const TcArgs p, int64_t y0, int64_t z0) {
#ifndef CK_HAS_WGMMA
  __trap(); // built without sm_90a: never run silently wrong (supports() refuses first)
#else
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = (smem_u32(smem) + 1023) & ~1023u; // the swizzle atoms need 1024-byte alignment
  const uint32_t full = base + STAGES * STAGE_BYTES;        // STAGES mbarriers, 8 bytes each
  const int tid = threadIdx.x, wg = tid >> 7, wt = tid & 127;

  unsigned tile_m, tile_n;
  tile_of_block<GROUP>(tile_m, tile_n);
  const int64_t z = z0 + blockIdx.z, m0 = (y0 + tile_m) * BM, n0 = (int64_t)tile_n * BN;
  const int za = p.a_bs ? (int)z : 0, zb = p.b_bs ? (int)z : 0;
  const int ktiles = (int)((p.k + BK - 1) / BK);

  auto issue = [&](int kt, int s) {
    const uint32_t sa = base + s * STAGE_BYTES, bar = full + 8 * s;
    mbar_expect_tx(bar, STAGE_BYTES);
    OpTile<LA, BM>::load(sa, &ma, bar, (int)m0, kt * BK, za);
    OpTile<LB, BN>::load(sa + A_BYTES, &mb, bar, (int)n0, kt * BK, zb);
  };
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) mbar_init(full + 8 * s, 1);
    mbar_fence_init();
  }
  __syncthreads();
  if (tid == 0)
    for (int s = 0; s < STAGES && s < ktiles; ++s) issue(s, s);

  float d[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
  for (int t = 0; t < ktiles; ++t) {
    const int s = t % STAGES;
    mma_stage<BM, BN, T, LA, LB>(d, full + 8 * s, (t / STAGES) & 1, base + s * STAGE_BYTES, wg * 64);
    wgmma_wait<0>();
    fence_acc(d);
    __syncthreads(); // no one reads stage s any more
    if (tid == 0 && t + STAGES < ktiles) issue(t + STAGES, s);
  }

  const int mrem = (int)(p.m - m0 < BM ? p.m - m0 : BM), nrem = (int)(p.n - n0 < BN ? p.n - n0 : BN);
  store_wg<BN>(p, c_base(p, z, m0, n0), d, wg * 64, wt, mrem, nrem);
#endif
}

struct Rung {
  template <typename T, int LA, int LB> static int launch(const ck_mm_desc *d, const ck_env *env, const Maps &mp) {
    static ck_devcache raised;
    auto kern = matmul_wgmma_tma_kernel<T, LA, LB>;
    if (int e = raise_smem(kern, SMEM, raised, env->device)) return e;
    return launch_tiles_tma<BM, BN, NT, SMEM>(d, env, mp, kern);
  }
};

} // namespace

extern "C" int ck_matmul_wgmma_tma(const void *desc, const ck_env *env) { return launch_rung<Rung>(desc, env, BM, BN); }

extern "C" const char *ck_matmul_wgmma_tma_supports(const void *desc) {
  return supports_hopper((const ck_mm_desc *)desc, (const void *)matmul_wgmma_tma_kernel<__half, KMAJ, MNMAJ>);
}
