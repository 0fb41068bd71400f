/*
 * 14_persistent.cu — matmul ladder, step 14 (Hopper, sm_90a): step 13 as a persistent kernel whose epilogue
 * goes out through shared memory and TMA stores, optionally in 2-CTA clusters that share B through TMA
 * multicast, f16/bf16.
 *
 * Idea, three parts. (1) Persistent: in step 13 each block computes one tile and exits; the epilogue and the
 * next block's start-up (barrier init, the first TMA round trip) leave the tensor cores idle at every tile.
 * Here the grid holds as many blocks as can be resident (one per SM), and they walk the output tiles; the
 * producer's stage ring runs on across tiles, so while the consumers store tile i the producer already
 * fills the stages with tile i + 1's first k tiles. (2) TMA-store epilogue: step 13's epilogue costs each
 * consumer thread 128 calls of store_pair (a 64-bit address, bounds, alpha/beta and a dtype switch per pair
 * of values: some 2,500 instructions, estimated from the source) while the tensor cores wait, and leaves
 * half-written 32-byte sectors for L2 to merge. Here, when C takes a tensor map (the
 * input dtype, unit column stride, 16-byte aligned rows, beta == 0), each consumer warpgroup converts its
 * 64 x 256 accumulators to the output dtype and writes them into a 128-byte-swizzled staging area in shared
 * memory (conflict-free 4-byte stores: 128 per thread), and one thread hands the copy engine the boxes (TMA
 * store; the engine clips rows and columns outside C, so tails need no branch). The staging area holds half
 * a warpgroup's tile (64 x 128, two 64 x 64 boxes, 16 KB per warpgroup), so each tile goes out in two
 * halves; the second half's store is waited for only at the next tile's epilogue. Other C layouts keep
 * step 13's direct stores. (3) Clusters (CL = 2): two blocks of a cluster take vertically adjacent tiles
 * (rows m0 and m0 + 128, the same 256 columns), so they need the same B tile: each loads half of it with a
 * multicast TMA that writes both blocks' shared memory and signals both blocks' "full" barriers, and L2
 * serves B once for the pair. A stage is then refilled only when the consumers of both blocks are done with
 * it: each consumer warpgroup arrives on the "empty" barrier of its own block and of the partner (mapa + a
 * remote arrive), and each empty barrier counts 4. Units (one tile, or a pair of tiles for CL = 2) are
 * walked in the grouped order (GROUP units per column band, batch outermost), block (cluster) c taking
 * units c, c + grid, ...; with CL = 2 and odd row tiles, the last pair's second block computes on zeros
 * (TMA's fill) and stores nothing.
 * Changed from step 13: a persistent grid with a tile loop (the stage counter and mbarrier phases run over
 * the block's whole sequence of k tiles), the TMA-store epilogue, clusters as an option.
 * Launch: 384 threads (cudaLaunchKernelEx, cluster dims CL x 1 x 1), grid = CL * min(units, resident
 * clusters); block tile 128 x 256 x 64, 4 stages of 48 KB + 32 KB of staging (225 KB of shared memory);
 * 168 registers at entry (setmaxnreg: 40 producer, 232 consumers), one block (12 warps) per SM.
 * Configurations (CUKERN_MM_CFG): 0 = 2-CTA clusters + TMA-store epilogue (the default), 1 = no clusters +
 * TMA stores, 2 = clusters + direct stores, 3 = neither.
 * Measured: configuration 0 101.9% of cuBLAS bf16 at 8192^3 on the H100 (alternating pairs, 2026-11-24).
 * Limits and operands: as step 12 (mm_hopper.cuh: supports_hopper); fewer than 2^31 units.
 * History (measurements per configuration): docs/architecture.md, "The Hopper rungs".
 */
#include <string.h>

#include "mm_hopper.cuh"

using namespace ckh;

namespace {

constexpr int BM = 128, BN = 256, STAGES = 4, NT = 384, GROUP = 8; // GROUP: units per column band
constexpr int A_BYTES = OpTile<KMAJ, BM>::BYTES, STAGE_BYTES = A_BYTES + OpTile<KMAJ, BN>::BYTES;
constexpr int STAGING = 2 * 16384; // per consumer warpgroup: 64 rows x 128 columns of 2-byte C, two 64 x 64 boxes
constexpr int CBOX = 64;           // a C box: 64 x 64 elements, 128-byte rows (the swizzle's span)

template <bool TMA_EPI> constexpr int smem_bytes() { return STAGES * STAGE_BYTES + (TMA_EPI ? STAGING : 0) + 1024 + 2 * STAGES * 8; }
static_assert(smem_bytes<true>() <= 227 * 1024, "one block per SM: at most 227 KB of shared memory");

__device__ __forceinline__ uint32_t pack2(float a, float b, __half) {
  const __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<const uint32_t *>(&h);
}
__device__ __forceinline__ uint32_t pack2(float a, float b, __nv_bfloat16) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<const uint32_t *>(&h);
}

/* A consumer warpgroup's epilogue through the staging area stg (16 KB: rows 0..63 x columns 0..127 of its
 * part of the tile, as two 64 x 64 boxes, each 64 rows of 128 bytes, 16-byte chunk q of row r at q ^ (r % 8)):
 * two halves of 128 columns, each written, fenced, and stored by thread 0 of the warpgroup (wt == 0), which
 * also waits until the previous store has left the staging area before anyone writes it again. */
template <typename T>
__device__ __forceinline__ void store_wg_tma(const CUtensorMap *mc, uint32_t stg, const float (&d)[BN / 2], float alpha,
                                             int bar_id, int wt, int n0, int m0, int z) {
  const int r = 16 * (wt >> 5) + ((wt & 31) >> 2), q4 = 4 * (wt & 3);
  const uint32_t row_r = stg + r * 128 + q4, row_r8 = row_r + 8 * 128; // (r + 8) % 8 == r % 8: same swizzle
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (wt == 0) bulk_wait<true>(); // the staging area's previous contents have been read by the engine
    named_sync(bar_id, 128);
#pragma unroll
    for (int jj = 0; jj < 16; ++jj) {
      const int j = 16 * h + jj; // columns 8j .. 8j + 7 of the warpgroup's 256
      const uint32_t off = (jj >> 3) * (CBOX * 128) + ((((jj & 7) ^ (r & 7))) << 4);
      const uint32_t v0 = pack2(alpha * d[4 * j], alpha * d[4 * j + 1], T());
      const uint32_t v1 = pack2(alpha * d[4 * j + 2], alpha * d[4 * j + 3], T());
      asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(row_r + off), "r"(v0) : "memory");
      asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(row_r8 + off), "r"(v1) : "memory");
    }
    fence_async_smem();
    named_sync(bar_id, 128);
    if (wt == 0) {
      tma_store(mc, stg, n0 + 128 * h, m0, z);
      tma_store(mc, stg + CBOX * 128, n0 + 128 * h + CBOX, m0, z);
      bulk_commit();
    }
  }
}

/* Unit `id` of a batch-major grouped order over mu x nt units per batch: batch z, unit row um, column tile tn. */
__device__ __forceinline__ void unit_of(int id, int mu, int nt, int &z, int &um, int &tn) {
  const int per = mu * nt;
  z = id / per;
  const int l = id % per, band = l / (GROUP * nt), rows = min(GROUP, mu - band * GROUP), in = l % (GROUP * nt);
  um = band * GROUP + in % rows, tn = in / rows;
}

// ---------------------------------------------------------------- kernel

/* CL: blocks per cluster (1, or 2 sharing B by multicast); TMA_EPI: the epilogue through staging + TMA stores
 * (C in the input dtype, its map in mc; beta == 0), else direct stores (mc unused). */
template <typename T, int LA, int LB, int CL, bool TMA_EPI>
__global__ void __launch_bounds__(NT, 1)
    matmul_persistent_kernel(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
                             const __grid_constant__ CUtensorMap mc, const TcArgs p, int units) {
#ifndef CK_HAS_WGMMA
  __trap(); // built without sm_90a (supports() refuses first)
#else
  static_assert(CL == 1 || CL == 2, "clusters of 1 or 2 blocks");
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = (smem_u32(smem) + 1023) & ~1023u; // the same offset in both blocks of a cluster
  const uint32_t staging = base + STAGES * STAGE_BYTES;
  const uint32_t full = staging + (TMA_EPI ? STAGING : 0), empty = full + 8 * STAGES;
  const int tid = threadIdx.x, wg = tid >> 7, wt = tid & 127;
  const uint32_t rank = CL == 2 ? cluster_rank() : 0, peer = rank ^ 1;
  const int unit0 = blockIdx.x / CL, stride = gridDim.x / CL;
  const int mt = (int)((p.m + BM - 1) / BM), mu = (mt + CL - 1) / CL, nt = (int)((p.n + BN - 1) / BN);
  const int ktiles = (int)((p.k + BK - 1) / BK);

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) mbar_init(full + 8 * s, 1), mbar_init(empty + 8 * s, 2 * CL);
    mbar_fence_init();
  }
  if constexpr (CL == 2) cluster_sync(); // both blocks' barriers exist before either's copies or arrivals reach them
  else __syncthreads();

  if (wg == 0) { // producer
    setmaxnreg_dec<kRegsProducer>();
    if (tid == 0) {
      int it = 0; // k tiles issued by this block so far (all units)
      for (int id = unit0; id < units; id += stride) {
        int z, um, tn;
        unit_of(id, mu, nt, z, um, tn);
        const int za = p.a_bs ? z : 0, zb = p.b_bs ? z : 0, m0 = (CL * um + (int)rank) * BM;
        for (int t = 0; t < ktiles; ++t, ++it) {
          const int s = it % STAGES;
          mbar_wait(empty + 8 * s, ((it / STAGES) & 1) ^ 1); // the consumers (of both blocks) released it
          const uint32_t sa = base + s * STAGE_BYTES, bar = full + 8 * s;
          mbar_expect_tx(bar, STAGE_BYTES); // A, and all of B (with CL = 2 half of it comes from the partner)
          OpTile<LA, BM>::load(sa, &ma, bar, m0, t * BK, za);
          if constexpr (CL == 2) OpTile<LB, BN>::load_half_mc(sa + A_BYTES, &mb, bar, tn * BN, t * BK, zb, (int)rank);
          else OpTile<LB, BN>::load(sa + A_BYTES, &mb, bar, tn * BN, t * BK, zb);
        }
      }
    }
  } else { // consumers: warpgroup c owns rows 64c .. 64c + 63 of every tile
    setmaxnreg_inc<ws_regs<NT, NT - 128, 1>()>();
    const int c = wg - 1;
    int it = 0;
    auto release = [&](int i) { // this warpgroup is done with the stage of k tile i (here and in the partner)
      if (wt == 0) {
        const uint32_t bar = empty + 8 * (i % STAGES);
        mbar_arrive(bar);
        if constexpr (CL == 2) mbar_arrive_cluster(bar, peer);
      }
    };
    for (int id = unit0; id < units; id += stride) {
      int z, um, tn;
      unit_of(id, mu, nt, z, um, tn);
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
        wgmma_wait<1>(); // written out, not through mma_stage: with the helper nvcc lays this loop out differently
                         // (twice the wgmma in the PTX), and that version has not been measured
        if (t > 0) release(it - 1);
      }
      wgmma_wait<0>();
      fence_acc(d);
      release(it - 1); // the tile's last stage
      const int64_t m0 = (int64_t)(CL * um + (int)rank) * BM, n0 = (int64_t)tn * BN;
      if (m0 < p.m) {
        if constexpr (TMA_EPI) {
          store_wg_tma<T>(&mc, staging + c * 16384, d, p.alpha, 1 + c, wt, (int)n0, (int)m0 + 64 * c, z);
        } else {
          const int mrem = (int)(p.m - m0 < BM ? p.m - m0 : BM), nrem = (int)(p.n - n0 < BN ? p.n - n0 : BN);
          store_wg<BN>(p, c_base(p, z, m0, n0), d, c * 64, wt, mrem, nrem);
        }
      }
    }
    if constexpr (TMA_EPI)
      if (wt == 0) bulk_wait<false>(); // the last stores are complete before the block (and its staging area) goes
  }
  if constexpr (CL == 2) cluster_sync(); // the partner may still multicast into this block or arrive on its barriers
#endif
}

// ---------------------------------------------------------------- launch (host)

/* C as a TMA store takes it: the input dtype, beta == 0 (C is not read), unit column stride, 16-byte aligned
 * base, rows and batches, n a multiple of 8 (16-byte rows: the engine clips a box at the tensor's edge in
 * 16-byte steps along the inner dim, so with a partial last chunk it would write up to 7 columns past n, as
 * seen on an H100), m, n < 2^31. Then the map (box 64 x 64, 128-byte swizzle); else false. */
inline bool make_c_map(CUtensorMap *map, const ck_mm_desc *d) {
  if (d->c_dtype != d->dtype || d->beta != 0.0 || d->n % 8 != 0) return false;
  if (d->m > 0x7fffffffLL || d->n > 0x7fffffffLL || d->batch > 0x7fffffffLL) return false;
  if ((d->c_cs != 1 && d->n > 1) || ((uintptr_t)d->c & 15) != 0) return false;
  if (!ck_tma_stride_ok(d->m, d->c_rs, 2) || (d->batch > 1 && !ck_tma_stride_ok(2, d->c_bs, 2))) return false;
  PFN_cuTensorMapEncodeTiled_v12000 enc = encode_fn();
  if (!enc) return false;
  int64_t rs = d->c_rs, bs = d->c_bs;
  if (d->m <= 1) rs = (d->n * 2 + 15) / 16 * 8;
  if (d->batch <= 1) bs = rs * (d->m > 1 ? d->m : 1);
  const cuuint64_t dims[3] = {(cuuint64_t)d->n, (cuuint64_t)d->m, (cuuint64_t)d->batch};
  const cuuint64_t strides[2] = {(cuuint64_t)(rs * 2), (cuuint64_t)(bs * 2)};
  const cuuint32_t box[3] = {CBOX, CBOX, 1}, estr[3] = {1, 1, 1};
  return enc(map, d->dtype == CK_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, d->c, dims,
             strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* One configuration's launch: CL-block clusters, the TMA-store epilogue or direct stores. */
template <typename T, int LA, int LB, int CL, bool TMA_EPI>
int launch_cfg(const ck_mm_desc *d, const ck_env *env, const Maps &mp, const CUtensorMap &mc) {
  static ck_devcache raised;
  static ck_devcache clusters; // resident clusters of this kernel (asked once per device)
  int &max_clusters = clusters.v[env->device];
  constexpr int SMEM = smem_bytes<TMA_EPI>();
  auto kern = matmul_persistent_kernel<T, LA, LB, CL, TMA_EPI>;
  if (int e = raise_smem(kern, SMEM, raised, env->device)) return e;
  const int64_t mt = (d->m + BM - 1) / BM, nt = (d->n + BN - 1) / BN, units = (mt + CL - 1) / CL * nt * d->batch;
  if (units > 0x7fffffffLL) return (int)cudaErrorInvalidConfiguration; // supports() refuses these first
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CL, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.blockDim = dim3(NT), cfg.dynamicSmemBytes = SMEM, cfg.stream = (cudaStream_t)env->stream;
  cfg.attrs = attr, cfg.numAttrs = 1;
  if (max_clusters <= 0) {
    cfg.gridDim = dim3(CL * (env->sm_count > 0 ? env->sm_count / CL : 132 / CL));
    int n = 0;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&n, kern, &cfg);
    if (e != cudaSuccess) return (int)e;
    if (n <= 0) return (int)cudaErrorInvalidConfiguration;
    max_clusters = n;
  }
  cfg.gridDim = dim3((unsigned)(CL * (units < max_clusters ? units : max_clusters)));
  ck_note(env, kern, NT, SMEM);
  const cudaError_t e = cudaLaunchKernelEx(&cfg, kern, mp.a, mp.b, mc, tc_args(d), (int)units);
  return e != cudaSuccess ? (int)e : (int)cudaGetLastError();
}

/* The rung's configurations (CUKERN_MM_CFG=<i> forces one): clusters and epilogue. The default is 0, the
 * fastest measured (see the header); the others show what each part brings. */
struct Cfg {
  int cl;
  bool tma_epi;
};
constexpr Cfg kCfgs[] = {{2, true}, {1, true}, {2, false}, {1, false}};
constexpr int kNCfg = sizeof kCfgs / sizeof kCfgs[0];

struct Rung {
  template <typename T, int LA, int LB> static int launch(const ck_mm_desc *d, const ck_env *env, const Maps &mp) {
    const int f = ckmm::forced_cfg(kNCfg);
    const Cfg c = kCfgs[f < 0 ? 0 : f];
    CUtensorMap mc;
    memset(&mc, 0, sizeof mc);
    const bool tma = c.tma_epi && make_c_map(&mc, d);
    if (c.cl == 2) return tma ? launch_cfg<T, LA, LB, 2, true>(d, env, mp, mc) : launch_cfg<T, LA, LB, 2, false>(d, env, mp, mc);
    return tma ? launch_cfg<T, LA, LB, 1, true>(d, env, mp, mc) : launch_cfg<T, LA, LB, 1, false>(d, env, mp, mc);
  }
};

/* A K-major B box: the whole tile, or half of it when the configuration multicasts (each block of a pair
 * loads one half). */
int box_b() {
  const int f = ckmm::forced_cfg(kNCfg);
  return kCfgs[f < 0 ? 0 : f].cl == 2 ? BN / 2 : BN;
}

} // namespace

extern "C" int ck_matmul_persistent(const void *desc, const ck_env *env) { return launch_rung<Rung>(desc, env, BM, box_b()); }

extern "C" const char *ck_matmul_persistent_supports(const void *desc) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (((d->m + BM - 1) / BM) * ((d->n + BN - 1) / BN) * d->batch > 0x7fffffffLL) return "needs fewer than 2^31 tiles";
  return supports_hopper(d, (const void *)matmul_persistent_kernel<__half, KMAJ, MNMAJ, 1, true>);
}
