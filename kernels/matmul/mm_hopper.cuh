/*
 * mm_hopper.cuh — plumbing shared by the matmul ladder's Hopper rungs (12_wgmma_tma.cu,
 * 13_warp_specialized.cu, 14_persistent.cu); no kernel lives here. Needs an sm_90a build (the default
 * CUDA_ARCH=90a): wgmma and setmaxnreg exist only there; TMA and mbarriers are plain sm_90.
 *
 * What the rungs share and none of them teaches:
 * - tensor maps (host): one per operand, built with cuTensorMapEncodeTiled (reached through the runtime's
 *   driver entry point, so nothing links libcuda), rank 3 (the two matrix dims and the batch), 128-byte
 *   swizzle, zero fill outside the tensor (so M, N, K tails cost no branch: a box past the edge lands as
 *   zeros). Either matrix dim of an operand may be the contiguous one (mm_tma.h): the map's inner dim is
 *   that one, and the wgmma descriptor says which (K-major or MN-major), so transposed views are read in
 *   place;
 * - the shared-memory tile of one operand and one k tile (BK = 64 two-byte elements = one 128-byte swizzle
 *   row), its TMA loads and its wgmma descriptors (OpTile below);
 * - PTX wrappers: the mbarrier init fence and arrive with an expected transaction count (init, arrive, the
 *   parity wait and setmaxnreg are mm_ptx.cuh's, shared with rung 11), the TMA load and store (with its
 *   bulk-group commit and waits, and the proxy fence its shared-memory source needs), named barriers, wgmma
 *   (fence, commit, wait, and m64nNk16 for N = 128 and 256);
 * - the epilogue from wgmma's accumulator layout (alpha/beta, c_dtype, any C strides: mm_epilogue.cuh's
 *   store_pair) and supports().
 *
 * Shared-memory layouts (128-byte swizzle: the 16-byte chunk c of row r of every 8-row, 1024-byte atom sits
 * at chunk c ^ (r % 8); TMA writes it so, and wgmma reads it so when the descriptor says "128B swizzle"):
 *   K-major tile (the operand's k is contiguous): R rows of 64 k values (128 bytes); one TMA box {64, R}.
 *     Descriptor: start = row 0 of the warpgroup's rows, + 32 bytes per k16 step (inside the swizzle row),
 *     stride byte offset (SBO) 1024 = from one 8-row group to the next; the leading offset is unused.
 *   MN-major tile (rows contiguous): R/64 blocks, each BK k rows of 64 row values (128 bytes), one TMA box
 *     {64, BK} per block. Descriptor: start = the block of the warpgroup's first row, + 2048 bytes (16 k
 *     rows) per k16 step, leading byte offset (LBO) = BK*128 = from one 64-wide block to the next, SBO 1024
 *     = from one 8-k group to the next; the instruction's transpose bit set.
 * wgmma's accumulators (m64nNk16, f32): thread t of the warpgroup holds rows 16*(t/32) + (t%32)/4 and + 8,
 * columns 8j + 2*(t%4) + {0, 1}: d[4j], d[4j+1] on the first row, d[4j+2], d[4j+3] on the second — the
 * m16n8 layout of mma.sync, repeated over N/8 column blocks.
 */
#ifndef CK_MM_HOPPER_CUH
#define CK_MM_HOPPER_CUH

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_fp8.h>

#include "mm_tc.cuh"
#include "mm_tma.h"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CK_HAS_WGMMA 1 /* device pass for sm_90a: wgmma and setmaxnreg available */
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define CK_HAS_TMA 1
#endif

namespace ckh {

using namespace cktc;

constexpr int BK = 64; // k per tile: one 128-byte swizzle row of 2-byte elements
enum { KMAJ = 0, MNMAJ = 1 };

// ---------------------------------------------------------------- PTX wrappers (device)

// mbar_init, mbar_arrive and mbar_wait: mm_ptx.cuh (sm_80+; rung 11's warp-specialized k loop uses them too).
/* Make the initialised barriers visible to the async proxy (TMA) and the other threads (with a barrier). */
__device__ __forceinline__ void mbar_fence_init() {
#ifdef CK_HAS_TMA
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
/* Arrive and expect `bytes` more from the TMA (the phase completes when both have happened). */
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
#ifdef CK_HAS_TMA
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
#endif
}
/* TMA: the box at coordinates (c0 inner, c1, c2) of `map` into shared memory at dst; completes on bar. */
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1, int c2) {
#ifdef CK_HAS_TMA
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
               "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
#endif
}

/* The same with a multicast: the box lands at dst in every CTA of the cluster named in `mask` and completes
 * on the mbarrier at bar's offset in each of them. */
__device__ __forceinline__ void tma_load_mc(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1, int c2,
                                            uint16_t mask) {
#ifdef CK_HAS_TMA
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(dst),
               "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "h"(mask)
               : "memory");
#endif
}

// clusters: this CTA's rank, an arrive on the mbarrier at the same offset in CTA `rank`, a cluster-wide barrier
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r = 0;
#ifdef CK_HAS_TMA
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
  return r;
}
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
#ifdef CK_HAS_TMA
  asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
               "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
               "r"(rank)
               : "memory");
#endif
}
__device__ __forceinline__ void cluster_sync() {
#ifdef CK_HAS_TMA
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}


/* The box at coordinates (c0 inner, c1, c2) of `map` from shared memory at src (a bulk group of this thread). */
__device__ __forceinline__ void tma_store(const CUtensorMap *map, uint32_t src, int c0, int c1, int c2) {
#ifdef CK_HAS_TMA
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
#endif
}
__device__ __forceinline__ void bulk_commit() {
#ifdef CK_HAS_TMA
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}
/* This thread's bulk groups have finished reading shared memory (R = 1) or are complete (R = 0: written). */
template <bool READ> __device__ __forceinline__ void bulk_wait() {
#ifdef CK_HAS_TMA
  if constexpr (READ) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
  else asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
}
/* Ordinary shared-memory stores made visible to the copy engine (before the barrier that precedes its use). */
__device__ __forceinline__ void fence_async_smem() {
#ifdef CK_HAS_TMA
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wgmma_fence() {
#ifdef CK_HAS_WGMMA
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#ifdef CK_HAS_WGMMA
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int N> __device__ __forceinline__ void wgmma_wait() {
#ifdef CK_HAS_WGMMA
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
/* After a wait: the accumulators are read or written by ordinary code only from here on (the compiler
 * would otherwise see them as ready when the wgmma asm statement "returned"). */
template <int R> __device__ __forceinline__ void fence_acc(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// setmaxnreg_inc / setmaxnreg_dec, named_sync: mm_ptx.cuh; kRegsProducer / ws_regs: mm_pipeline.cuh (rung 11's
// warp-specialized configurations use them too).

/* A shared-memory matrix descriptor, 128-byte swizzle (byte offsets; the fields hold them >> 4). */
__device__ __forceinline__ uint64_t desc_sw128(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)((lbo >> 4) & 0x3FFF) << 16 |
         (uint64_t)((sbo >> 4) & 0x3FFF) << 32 | 1ull << 62;
}

/* wgmma.mma_async m64nNk16 (f16/bf16) or m64nNk32 (FP8: e4m3/e5m2, T for A and U for B), f32 accumulators d
 * (N/2 per thread) += A (descriptor da) * B (db); scale-d sd: 0 ignores d's old values. TA / TB: 1 when the
 * operand is MN-major (the transpose bits; FP8 takes K-major operands only, TA = TB = 0). */
template <int N, typename T, typename U = T> struct Wgmma; // U: B's type (FP8 may mix)
#include "mm_wgmma.inc"

// ---------------------------------------------------------------- one operand's tile (device)

/* The R x BK tile of one operand (A: R = BM rows of m; B: R = BN rows of n) in layout L. */
template <int L, int R> struct OpTile {
  static_assert(R % 64 == 0 && R <= 256, "64-row blocks; a TMA box has at most 256 rows");
  static constexpr int BYTES = R * BK * 2;
  /* The tile whose first row is r0 and first k is k0 (batch z), into dst; completes on bar. */
  static __device__ __forceinline__ void load(uint32_t dst, const CUtensorMap *map, uint32_t bar, int r0, int k0, int z) {
    if constexpr (L == KMAJ) {
      tma_load(dst, map, bar, k0, r0, z);
    } else {
#pragma unroll
      for (int c = 0; c < R / 64; ++c) tma_load(dst + c * BK * 128, map, bar, r0 + 64 * c, k0, z);
    }
  }
  /* Half of the tile, multicast to both CTAs of a 2-CTA cluster: CTA `half` loads rows half*R/2 .. of it
   * (K-major: one box of R/2 rows, so the map's box has R/2 rows; MN-major: its R/128 64-row blocks). */
  static __device__ __forceinline__ void load_half_mc(uint32_t dst, const CUtensorMap *map, uint32_t bar, int r0, int k0,
                                                      int z, int half) {
    if constexpr (L == KMAJ) {
      tma_load_mc(dst + half * (R / 2) * 128, map, bar, k0, r0 + half * (R / 2), z, 3);
    } else {
#pragma unroll
      for (int c = half * (R / 128); c < (half + 1) * (R / 128); ++c)
        tma_load_mc(dst + c * BK * 128, map, bar, r0 + 64 * c, k0, z, 3);
    }
  }
  /* Descriptor of rows row0 .. (row0 + 64 or the instruction's N) at k16 step ks. */
  static __device__ __forceinline__ uint64_t desc(uint32_t tile, int row0, int ks) {
    if constexpr (L == KMAJ) return desc_sw128(tile + row0 * 128 + ks * 32, 16, 1024);
    else return desc_sw128(tile + (row0 / 64) * (BK * 128) + ks * 2048, BK * 128, 1024);
  }
};

// ---------------------------------------------------------------- one k tile of a consumer (device)

/* A consumer warpgroup's k tile: wait for the stage's full barrier (phase parity), then the BK/16 wgmma
 * m64nBNk16 of its A rows row0 .. row0 + 63 (A tile at sa, B tile right after it), committed as one group.
 * The caller waits for the group (wgmma_wait) when its pipeline needs to. */
template <int BM, int BN, typename T, int LA, int LB>
__device__ __forceinline__ void mma_stage(float (&d)[BN / 2], uint32_t full_bar, uint32_t parity, uint32_t sa, int row0) {
  mbar_wait(full_bar, parity);
  const uint32_t sb = sa + OpTile<LA, BM>::BYTES;
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < BK / 16; ++ks)
    Wgmma<BN, T>::template mma<LA, LB>(d, OpTile<LA, BM>::desc(sa, row0, ks), OpTile<LB, BN>::desc(sb, 0, ks), 1);
  wgmma_commit();
}

// ---------------------------------------------------------------- epilogue (device)

/* A warpgroup's m64 x N accumulators (thread wt of the warpgroup) to C rows row0 .. row0 + 63 of the block
 * tile at cb (mrem x nrem valid). */
template <int N>
__device__ __forceinline__ void store_wg(const TcArgs &p, void *cb, const float (&d)[N / 2], int row0, int wt, int mrem,
                                         int nrem) {
  const int r = row0 + 16 * (wt >> 5) + ((wt & 31) >> 2), c = 2 * (wt & 3);
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
    store_pair(p, cb, r, 8 * j + c, mrem, nrem, d[4 * j], d[4 * j + 1]);
    store_pair(p, cb, r + 8, 8 * j + c, mrem, nrem, d[4 * j + 2], d[4 * j + 3]);
  }
}

// ---------------------------------------------------------------- tensor maps and launches (host)

/* The two tensor maps of a launch and the layouts they were built for. */
struct Maps {
  CUtensorMap a, b;
  int la, lb; // KMAJ or MNMAJ
};

inline PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void *f = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      f = nullptr;
    return (PFN_cuTensorMapEncodeTiled_v12000)f;
  }();
  return fn;
}

/* One operand: `rows` (m for A, n for B) x k, element strides rs (between rows) and ks (between k values),
 * batch stride bs (0: one matrix for every batch), of dtype f16, bf16 (2-byte elements) or e4m3/e5m2 (1-byte,
 * mapped as bytes: TMA only moves them); box_rows rows of a K-major tile. A box's inner extent is one 128-byte
 * swizzle row (64 or 128 elements). Returns the layout (KMAJ when k is contiguous) or -1 when no map can
 * describe it. */
inline int make_map(CUtensorMap *map, const void *base, int dtype, int64_t rows, int64_t k, int64_t rs, int64_t ks,
                    int64_t bs, int64_t batch, int box_rows) {
  PFN_cuTensorMapEncodeTiled_v12000 enc = encode_fn();
  if (!enc) return -1;
  const bool byte = dtype == CK_E4M3 || dtype == CK_E5M2;
  const int64_t es = byte ? 1 : 2;
  const int kind = ck_tma_operand(base, rows, k, rs, ks, bs, es); // 1: k contiguous, 2: rows contiguous
  if (kind == 0) return -1;
  const int layout = kind == 1 ? KMAJ : MNMAJ;
  const int64_t nb = bs != 0 ? batch : 1;
  // dims inner first; a dim of extent 1 is never stepped: any valid stride will do
  const int64_t inner = layout == KMAJ ? k : rows, outer = layout == KMAJ ? rows : k;
  int64_t s1 = layout == KMAJ ? rs : ks;
  if (outer <= 1) s1 = (inner * es + 15) / 16 * (16 / es);
  int64_t s2 = bs;
  if (nb <= 1) s2 = s1 * (outer > 1 ? outer : 1);
  const cuuint64_t dims[3] = {(cuuint64_t)inner, (cuuint64_t)outer, (cuuint64_t)nb};
  const cuuint64_t strides[2] = {(cuuint64_t)(s1 * es), (cuuint64_t)(s2 * es)};
  const cuuint32_t box[3] = {(cuuint32_t)(128 / es), (cuuint32_t)(layout == KMAJ ? box_rows : BK), 1};
  const cuuint32_t estr[3] = {1, 1, 1};
  const CUtensorMapDataType t = byte ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                : dtype == CK_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUresult r = enc(map, t, 3, const_cast<void *>(base), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? layout : -1;
}

/* Both maps of a launch (box_a / box_b: rows of a K-major A / B tile; B of its own dtype, b_dtype, which
 * differs from A's only in a mixed FP8 product); false when either cannot be made. */
inline bool make_maps(Maps &mp, const ck_mm_desc *d, int box_a, int box_b) {
  mp.la = make_map(&mp.a, d->a, d->dtype, d->m, d->k, d->a_rs, d->a_cs, d->a_bs, d->batch, box_a);
  mp.lb = make_map(&mp.b, d->b, d->b_dtype, d->n, d->k, d->b_cs, d->b_rs, d->b_bs, d->batch, box_b);
  return mp.la >= 0 && mp.lb >= 0;
}

/* The Hopper rungs run f16/bf16 inputs (output: the input dtype or f32) with m, n, k < 2^31 (TMA
 * coordinates are 32-bit) on a compute capability 9.x device, with operands a tensor map takes as they
 * are or after the dispatcher's contiguous copy (CK_VF_TMA, mm_tma.h). */
inline const char *supports_hopper(const ck_mm_desc *d, const void *kern) {
  if (d->dtype != CK_F16 && d->dtype != CK_BF16) return "f16/bf16 inputs only";
  if (d->c_dtype != d->dtype && d->c_dtype != CK_F32) return "output must be the input dtype or f32";
  if (d->m > 0x7fffffffLL || d->n > 0x7fffffffLL || d->k > 0x7fffffffLL) return "needs m, n, k < 2^31 (TMA coordinates)";
  const bool a_contig = (d->a_cs == 1 || d->k <= 1) && (d->a_rs == d->k || d->m <= 1) && (d->a_bs == 0 || d->a_bs == d->m * d->k);
  const bool b_contig = (d->b_cs == 1 || d->n <= 1) && (d->b_rs == d->n || d->k <= 1) && (d->b_bs == 0 || d->b_bs == d->k * d->n);
  if (!ck_tma_operand_after_copy(d->a, d->m, d->k, d->a_rs, d->a_cs, d->a_bs, 2, a_contig))
    return "A: a tensor map needs 16-byte aligned rows (k a multiple of 8 for a copy) and base";
  if (!ck_tma_operand_after_copy(d->b, d->k, d->n, d->b_rs, d->b_cs, d->b_bs, 2, b_contig))
    return "B: a tensor map needs 16-byte aligned rows (n a multiple of 8 for a copy) and base";
  if (const char *why = ckmm::cc_outside(9, 9, "needs a Hopper GPU (compute capability 9.x: wgmma, TMA)")) return why;
  if (const char *why = ckmm::no_image(kern, "not built for this GPU (no kernel image; build with CUDA_ARCH=90a)")) return why;
  if (!encode_fn()) return "the driver has no cuTensorMapEncodeTiled (needs CUDA 12+ driver)";
  return NULL;
}

/* A rung's launch over d: the tensor maps (box_a / box_b rows of a K-major A / B box), then
 * R::launch<T, LA, LB>(d, env, maps) for the dtype and the layouts the maps found. */
template <class R, typename T> int launch_layouts(const ck_mm_desc *d, const ck_env *env, int box_a, int box_b) {
  Maps mp;
  if (!make_maps(mp, d, box_a, box_b)) return (int)cudaErrorInvalidValue;
  if (mp.la == KMAJ)
    return mp.lb == KMAJ ? R::template launch<T, KMAJ, KMAJ>(d, env, mp) : R::template launch<T, KMAJ, MNMAJ>(d, env, mp);
  return mp.lb == KMAJ ? R::template launch<T, MNMAJ, KMAJ>(d, env, mp) : R::template launch<T, MNMAJ, MNMAJ>(d, env, mp);
}
template <class R> int launch_rung(const void *desc, const ck_env *env, int box_a, int box_b) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  if (d->dtype == CK_F16) return launch_layouts<R, __half>(d, env, box_a, box_b);
  if (d->dtype == CK_BF16) return launch_layouts<R, __nv_bfloat16>(d, env, box_a, box_b);
  return (int)cudaErrorInvalidValue;
}

/* One block per BM x BN tile (mm_common.cuh: split_tiles), the two tensor maps as kernel arguments. */
template <int BM, int BN, int NT, int SMEM>
int launch_tiles_tma(const ck_mm_desc *d, const ck_env *env, const Maps &mp,
                     void (*kern)(const CUtensorMap, const CUtensorMap, const TcArgs, int64_t, int64_t)) {
  const TcArgs p = tc_args(d);
  ck_note(env, kern, NT, SMEM);
  return ckmm::split_tiles(d, BM, BN, [&](dim3 grid, int64_t y0, int64_t z0) {
    kern<<<grid, NT, SMEM, (cudaStream_t)env->stream>>>(mp.a, mp.b, p, y0, z0);
  });
}

using ckmm::raise_smem;

} // namespace ckh

#endif
