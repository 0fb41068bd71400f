/*
 * mm_persistent.cuh — the persistent Hopper kernel of the matmul ladder's step 14 (14_persistent.cu: f16/bf16
 * inputs, where its idea is told) and step 18 (18_wgmma_fp8.cu: e4m3/e5m2 inputs): one block per SM walking the
 * output tiles, a TMA producer warpgroup and two wgmma consumer warpgroups, optional 2-CTA clusters sharing B by
 * multicast, and the epilogue through shared memory and TMA stores. No rung's own choices live here; the two
 * files pick the configurations and the operand layouts.
 *
 * The kernel is written over an input policy Op (In below): A's and B's element types, the result type of the
 * TMA-store epilogue, and KT, the k extent of a tile. A tile's k extent is one 128-byte swizzle row in either
 * case: 64 two-byte or 128 one-byte elements, so the shared-memory tiles, their TMA boxes (in bytes) and the
 * wgmma descriptors are the same bytes for both; a k tile is 4 wgmma of 32 bytes of k each (m64n256k16 for
 * f16/bf16, m64n256k32 for FP8).
 */
#ifndef CK_MM_PERSISTENT_CUH
#define CK_MM_PERSISTENT_CUH

#include <cuda_fp8.h>
#include <string.h>

#include "mm_hopper.cuh"

namespace ckp {

using namespace ckh;

/* Inputs TA x TB (the same size: 2 bytes, or 1 for FP8), the TMA-store epilogue's result type TC. */
template <typename TA, typename TB = TA, typename TC = TA> struct In {
  using A = TA;
  using B = TB;
  using C = TC;
  static_assert(sizeof(TA) == sizeof(TB), "inputs of one size");
  static constexpr int KT = 128 / (int)sizeof(TA); // k per tile: one 128-byte swizzle row
};
constexpr int KSTEPS = 4; // wgmma per k tile, 32 bytes of k each

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
template <class Op, int LA, int LB, int CL, bool TMA_EPI>
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
  const int ktiles = (int)((p.k + Op::KT - 1) / Op::KT);

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
          OpTile<LA, BM>::load(sa, &ma, bar, m0, t * Op::KT, za);
          if constexpr (CL == 2) OpTile<LB, BN>::load_half_mc(sa + A_BYTES, &mb, bar, tn * BN, t * Op::KT, zb, (int)rank);
          else OpTile<LB, BN>::load(sa + A_BYTES, &mb, bar, tn * BN, t * Op::KT, zb);
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
        for (int ks = 0; ks < KSTEPS; ++ks)
          Wgmma<BN, typename Op::A, typename Op::B>::template mma<LA, LB>(d, OpTile<LA, BM>::desc(sa, c * 64, ks), OpTile<LB, BN>::desc(sb, 0, ks), 1);
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
          store_wg_tma<typename Op::C>(&mc, staging + c * 16384, d, p.alpha, 1 + c, wt, (int)n0, (int)m0 + 64 * c, z);
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

/* C as a TMA store takes it: f16 or bf16 (step 14: the input dtype; step 18: the result of FP8 inputs), beta == 0
 * (C is not read), unit column stride, 16-byte aligned
 * base, rows and batches, n a multiple of 8 (16-byte rows: the engine clips a box at the tensor's edge in
 * 16-byte steps along the inner dim, so with a partial last chunk it would write up to 7 columns past n, as
 * seen on an H100), m, n < 2^31. Then the map (box 64 x 64, 128-byte swizzle); else false. */
inline bool make_c_map(CUtensorMap *map, const ck_mm_desc *d) {
  if ((d->c_dtype != CK_F16 && d->c_dtype != CK_BF16) || d->beta != 0.0 || d->n % 8 != 0) return false;
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
  return enc(map, d->c_dtype == CK_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, d->c, dims,
             strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* One configuration's launch: CL-block clusters, the TMA-store epilogue or direct stores. */
template <class Op, int LA, int LB, int CL, bool TMA_EPI>
int launch_cfg(const ck_mm_desc *d, const ck_env *env, const Maps &mp, const CUtensorMap &mc) {
  static ck_devcache raised;
  static ck_devcache clusters; // resident clusters of this kernel (asked once per device)
  int &max_clusters = clusters.v[env->device];
  constexpr int SMEM = smem_bytes<TMA_EPI>();
  auto kern = matmul_persistent_kernel<Op, LA, LB, CL, TMA_EPI>;
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


} // namespace ckp

#endif
