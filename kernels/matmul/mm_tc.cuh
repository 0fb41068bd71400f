/*
 * mm_tc.cuh — plumbing shared by the matmul ladder's tensor-core rungs (10_wmma.cu, 11_mma_sync.cu); no
 * kernel lives here.
 *
 * What the tensor-core rungs need and none of them teaches: kernel arguments for 2- and 4-byte inputs with an
 * output dtype of its own (c_dtype) and full element strides, the PTX wrappers (cp.async with zero fill,
 * ldmatrix, mma.sync, the TF32 rounding), the shared-memory tile layouts (padded or XOR-swizzled 16-byte
 * chunks), the tile loader that fills one pipeline stage (cp.async when the operand allows 16-byte copies,
 * plain loads and 16-byte shared stores otherwise: any strides, any alignment), the grouped tile order, step
 * 9's multi-stage k loop (taught there) with the rung's compute plugged in, the alpha/beta epilogue that
 * converts to c_dtype (beta == 0 never reads C), the split launches and the supports() test. Everything here
 * is inlined into the kernels.
 *
 * Tile layouts. A stage holds an R x CH tile of 16-byte chunks (a chunk = 8 f16/bf16 or 4 f32 along the
 * operand's contiguous dim: k for A, n for B). Row r, chunk ch lives at byte swz<CH, MODE>(r, ch):
 *   SW_PAD   rows padded by one chunk (CH*16 + 16 bytes): the WMMA rung (wmma::load_matrix_sync takes an ldm);
 *   SW_XOR   CH >= 8: chunk ch ^ (r & 7); CH == 4: chunk ch ^ ((r >> 1) & 3) (two 64-byte rows share a
 *            128-byte line): the 8 rows an ldmatrix phase reads at one logical chunk hit 8 different 16-byte
 *            bank groups, and so do the 8 chunks one cp.async phase writes;
 *   SW_TF32B CH >= 8: chunk ch ^ ((r & 3) << 1): the TF32 rung reads B with 8-byte loads at rows t (and t + 4)
 *            and columns 16i + 2g (t = lane % 4, g = lane / 4); this XOR puts each half-warp's 16 loads in 16
 *            different 8-byte bank pairs.
 *
 * Copies of interior tiles (TileCopy). A k tile that lies wholly inside A and B (every interior block's k
 * tiles but the last partial one) needs no bounds test: each thread's chunks sit at fixed offsets from a
 * pointer computed once per block (8 threads or more per row, a thread's chunks of a row 128 bytes apart,
 * its rows the same swizzle term apart), so a k tile costs one 64-bit add per row and the cp.async.
 */
#ifndef CK_MM_TC_CUH
#define CK_MM_TC_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>

#include <type_traits>
#include <utility>

#include "ck_kernels.h"
#include "mm_common.cuh"

namespace cktc {

using ckmm::cp_commit;
using ckmm::cp_wait;

// ---------------------------------------------------------------- kernel arguments (host)

struct TcArgs {
  const void *a, *b;
  void *c;
  int64_t batch, m, n, k;
  int64_t a_bs, a_rs, a_cs, b_bs, b_rs, b_cs, c_bs, c_rs, c_cs;
  float alpha, beta;
  int c_dtype; /* CK_F32, CK_F16 or CK_BF16 */
  int cpair;   /* C allows 2-element stores (c_cs == 1, pairs aligned) */
  /* Stream-K tail (warp-specialized launches, launch_tiles_sk; sk_units == 0: one block per tile, 2-D grid):
   * a 1-D grid whose first sk_dp blocks take tiles 0 .. sk_dp - 1 whole and whose last sk_units blocks share
   * the k tiles of the remaining tiles (sk_iters of them, flattened) in equal runs; partial sums go to sk_part
   * (two BM x BN f32 slots per unit), sk_cnt counts the arrivals per tail tile (zeroed before the launch).
   * 32-bit: the device code divides in 32 bits (a 64-bit division is a call, and ptxas spilled around it). */
  int sk_dp, sk_units, sk_iters; /* < 2^31 each (launch_tiles_sk) */
  int sk_q, sk_r;                /* sk_iters = sk_q * sk_units + sk_r: unit u starts at u q + (u r) / units */
  float sk_uoi;                  /* sk_units / sk_iters: a first guess of the unit holding a k tile */
  float *sk_part;
  int *sk_cnt;
};

inline size_t dt_size(int dt) { return dt == CK_F64 ? 8 : (dt == CK_F16 || dt == CK_BF16) ? 2 : 4; }

/* An operand allows 16-byte copies along its rows: unit column stride, base, row stride and (with a batch)
 * batch stride multiples of 16 bytes. */
inline bool op_vec(const void *p, int64_t rs, int64_t cs, int64_t bs, int64_t batch, size_t es) {
  const int64_t per = 16 / (int64_t)es;
  return cs == 1 && ((uintptr_t)p & 15) == 0 && rs % per == 0 && (batch <= 1 || bs % per == 0);
}

inline bool ab_vec(const ck_mm_desc *d) {
  const size_t es = dt_size(d->dtype);
  return op_vec(d->a, d->a_rs, d->a_cs, d->a_bs, d->batch, es) && op_vec(d->b, d->b_rs, d->b_cs, d->b_bs, d->batch, es);
}

inline TcArgs tc_args(const ck_mm_desc *d) {
  TcArgs p;
  p.a = d->a, p.b = d->b, p.c = d->c;
  p.batch = d->batch, p.m = d->m, p.n = d->n, p.k = d->k;
  p.a_bs = d->a_bs, p.a_rs = d->a_rs, p.a_cs = d->a_cs;
  p.b_bs = d->b_bs, p.b_rs = d->b_rs, p.b_cs = d->b_cs;
  p.c_bs = d->c_bs, p.c_rs = d->c_rs, p.c_cs = d->c_cs;
  p.alpha = (float)d->alpha, p.beta = (float)d->beta;
  p.c_dtype = d->c_dtype;
  const int64_t es = (int64_t)dt_size(d->c_dtype), al = 2 * es; // a pair: 4 bytes (f16/bf16) or 8 (f32)
  p.cpair = d->c_cs == 1 && ((uintptr_t)d->c % al) == 0 && d->c_rs % 2 == 0 && (d->batch <= 1 || d->c_bs % 2 == 0);
  p.sk_dp = p.sk_units = p.sk_iters = p.sk_q = p.sk_r = 0, p.sk_uoi = 0.f, p.sk_part = nullptr, p.sk_cnt = nullptr;
  return p;
}

// ---------------------------------------------------------------- supports (host)

/* The dtype combinations of the tensor-core rungs: f16 -> f16/f32, bf16 -> bf16/f32 (f32 accumulation), and
 * f32 -> f32 only with precision == CK_MM_TF32 when `tf32` (the 11 rung); k < 2^31 (k tiles counted in an
 * int); a device of compute capability >= 8.0 on which `kern` has an image. */
inline const char *supports_tc(const ck_mm_desc *d, bool tf32, const void *kern) {
  if (d->dtype == CK_F16 || d->dtype == CK_BF16) {
    if (d->c_dtype != d->dtype && d->c_dtype != CK_F32) return "output must be the input dtype or f32";
  } else if (d->dtype == CK_F32) {
    if (!tf32) return "f16/bf16 inputs only";
    if (d->precision != CK_MM_TF32) return "f32 inputs only with precision = tf32 (opt-in)";
    if (d->c_dtype != CK_F32) return "tf32: output must be f32";
  } else {
    return tf32 ? "f16/bf16 inputs, or f32 with precision = tf32" : "f16/bf16 inputs only";
  }
  if (d->k > 0x7fffff00LL) return "needs k < 2^31";
  int dev = 0, major = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
    return "no CUDA device";
  if (major < 8) return "needs compute capability >= 8.0 (mma.sync m16n8k16, cp.async)";
  cudaFuncAttributes fa;
  if (cudaFuncGetAttributes(&fa, kern) != cudaSuccess) {
    cudaGetLastError(); // the failed query leaves a (non-sticky) error behind: clear it
    return "not built for this GPU (no kernel image; set CUDA_ARCH)";
  }
  return NULL;
}

// ---------------------------------------------------------------- element types

template <typename T> struct Elem;
template <> struct Elem<__half> {
  static __device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
};
template <> struct Elem<__nv_bfloat16> {
  static __device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
};

// ---------------------------------------------------------------- PTX wrappers (sm_80+)

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* 16 bytes global -> shared; the first `bytes` (0..16) are read, the rest zero-filled. src must be a valid
 * address even when bytes == 0. */
__device__ __forceinline__ void cp16z(uint32_t dst, const void *src, int bytes) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
#endif
}
__device__ __forceinline__ void cp16(uint32_t dst, const void *src) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
#endif
}
/* Four 16-byte copies in one asm statement: their four source addresses are live together, in four register
 * pairs (ptxas would otherwise compute each into the register the previous copy still has to read). */
__device__ __forceinline__ void cp16x4(const uint32_t (&dst)[4], const char *const (&src)[4]) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%4], 16;\n"
               "cp.async.cg.shared.global [%1], [%5], 16;\n"
               "cp.async.cg.shared.global [%2], [%6], 16;\n"
               "cp.async.cg.shared.global [%3], [%7], 16;\n" ::"r"(dst[0]),
               "r"(dst[1]), "r"(dst[2]), "r"(dst[3]), "l"(src[0]), "l"(src[1]), "l"(src[2]), "l"(src[3]));
#endif
}
/* 16 bytes from src + OFF to shared dst + OFF: one register on each side and the constant in the instruction. */
template <int OFF> __device__ __forceinline__ void cp16o(uint32_t dst, const void *src) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0+%2], [%1+%2], 16;\n" ::"r"(dst), "l"(src), "n"(OFF));
#endif
}
__device__ __forceinline__ void sts128(uint32_t dst, uint4 v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
}
/* 8 bytes of shared memory into two registers (a register pair in SASS: one half of an mma operand). */
__device__ __forceinline__ void lds64(uint32_t &x, uint32_t &y, uint32_t src) {
  asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n" : "=r"(x), "=r"(y) : "r"(src));
}

/* Four 8x8 matrices of 16-bit elements (lanes 8i .. 8i+7 give the row addresses of matrix i). */
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

/* D = A B + D, m16n8k16, f32 accumulators; A row-major (4 regs), B column-major (2 regs). */
template <typename T> __device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
template <> __device__ __forceinline__ void mma16816<__half>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}
template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

/* D = A B + D, m16n8k8 TF32, f32 accumulators. */
__device__ __forceinline__ void mma1688_tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

/* f32 bits -> TF32 (round to nearest, ties away from zero). */
__device__ __forceinline__ uint32_t to_tf32(uint32_t x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(x)));
  return r;
}

// ---------------------------------------------------------------- mbarriers (sm_80+; the warp-specialized k loop)

/* A barrier of `count` threads (named barrier id; 0 is __syncthreads'): a warp role's own meeting point. */
__device__ __forceinline__ void named_sync(int id, int count) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory"); }

/* A 64-bit shared-memory barrier at bar (shared address) expecting `count` arrivals per phase. */
__device__ __forceinline__ void mbar_init(uint32_t bar, int count) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
#endif
}
/* One arrival (release: this thread's earlier shared-memory reads are done before the phase can complete). */
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
#if __CUDA_ARCH__ >= 800
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
#endif
}
/* One arrival once all of this thread's earlier cp.async have landed (.noinc: counted in the init count). */
__device__ __forceinline__ void cp_arrive(uint32_t bar) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(bar) : "memory");
#endif
}
/* Wait until the phase of parity `par` has completed (acquire: the copies it counted are visible). A fresh
 * barrier counts its phase -1, of parity 1, as complete: waiting for parity 1 on it returns at once. */
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t par) {
#if __CUDA_ARCH__ >= 900
  asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n @!p bra W;\n}\n" ::"r"(bar),
               "r"(par)
               : "memory");
#elif __CUDA_ARCH__ >= 800
  asm volatile("{\n .reg .pred p;\n W: mbarrier.test_wait.parity.shared.b64 p, [%0], %1;\n @!p bra W;\n}\n" ::"r"(bar),
               "r"(par)
               : "memory");
#endif
}

// ---------------------------------------------------------------- tile layouts

enum { SW_PAD, SW_XOR, SW_TF32B };

/* Byte offset of chunk ch of row r in an R x CH-chunk tile (see the header). */
template <int CH, int MODE> __device__ __forceinline__ uint32_t swz(int r, int ch) {
  if constexpr (MODE == SW_PAD) {
    return (uint32_t)(r * (CH * 16 + 16) + ch * 16);
  } else if constexpr (MODE == SW_TF32B) {
    static_assert(CH >= 8, "TF32 B swizzle needs rows of >= 8 chunks");
    return (uint32_t)(r * CH * 16 + ((ch ^ ((r & 3) << 1)) << 4));
  } else if constexpr (CH >= 8) {
    return (uint32_t)(r * CH * 16 + ((ch ^ (r & 7)) << 4));
  } else {
    static_assert(CH == 4, "XOR swizzle for rows of 4 or >= 8 chunks");
    return (uint32_t)(r * 64 + ((ch ^ ((r >> 1) & 3)) << 4));
  }
}

template <int CH, int MODE> constexpr int tile_bytes(int rows) { return rows * (CH * 16 + (MODE == SW_PAD ? 16 : 0)); }

/* Fill one stage with the R x (CH chunks) tile whose element (r, c) is g[r*rs + c*cs]; elements with
 * r >= rrem or c >= crem become 0. NT threads, thread tid takes chunks tid, tid + NT, ...
 * VEC (cs == 1 and 16-byte alignment, ab_vec): cp.async, zero-filled past the edges (no commit here);
 * otherwise plain loads of single elements and a 16-byte shared store. */
template <typename T, int R, int CH, int MODE, int NT, bool VEC>
__device__ __forceinline__ void load_tile(uint32_t sbase, const T *g, int64_t rs, int64_t cs, int rrem, int crem, int tid) {
  constexpr int EPC = 16 / (int)sizeof(T), N = R * CH / NT;
  static_assert(N * NT == R * CH, "whole chunks per thread");
  const bool full = rrem >= R && crem >= CH * EPC;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int e = tid + i * NT, r = e / CH, ch = e % CH;
    const uint32_t dst = sbase + swz<CH, MODE>(r, ch);
    if (VEC) {
      const T *src = g + r * rs + ch * EPC;
      if (full) {
        cp16(dst, src);
      } else {
        const int v = r < rrem ? min(max(crem - ch * EPC, 0), EPC) : 0;
        cp16z(dst, v > 0 ? (const void *)src : (const void *)g, v * (int)sizeof(T));
      }
    } else {
      using U = typename std::conditional<sizeof(T) == 2, uint16_t, uint32_t>::type; // the element's bits
      const U *gu = reinterpret_cast<const U *>(g);
      union {
        uint4 u;
        U t[EPC];
      } w;
      w.u = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
      for (int j = 0; j < EPC; ++j) {
        const int c = ch * EPC + j;
        if (r < rrem && c < crem) w.t[j] = gu[r * rs + c * cs];
      }
      sts128(dst, w.u);
    }
  }
}

// ---------------------------------------------------------------- tile order (device)

/* Blocks walk GROUP tile rows of one band of tile columns at a time, so that consecutive blocks share B
 * panels while they are in L2. band_tile: the tile of step l (< GROUP x column tiles) of row band `band` of
 * tm tile rows (the last band may be short); tile_of_block: this block's (tile_m, tile_n), grid x = column
 * tiles, y = row tiles, in that order. */
template <int GROUP> __device__ __forceinline__ void band_tile(unsigned band, unsigned l, unsigned tm, unsigned &tile_m,
                                                               unsigned &tile_n) {
  const unsigned rows = min((unsigned)GROUP, tm - band * GROUP);
  tile_m = band * GROUP + l % rows, tile_n = l / rows;
}
template <int GROUP> __device__ __forceinline__ void tile_of_block(unsigned &tile_m, unsigned &tile_n) {
  tile_m = blockIdx.y, tile_n = blockIdx.x;
  if (GROUP > 1) // l < 2^32: gridDim.x < 2^28
    band_tile<GROUP>(blockIdx.y / GROUP, (blockIdx.y % GROUP) * gridDim.x + blockIdx.x, gridDim.y, tile_m, tile_n);
}

/* Where this block's tile lies: batch z, origin (m0, n0), valid rows and columns (<= BM, BN), A and B at the
 * tile's origin, and the number of k tiles (k < 2^31: supports()). */
template <typename T> struct BlockTile {
  int64_t z, m0, n0;
  int mrem, nrem, ktiles;
  const T *A, *B;
};

template <typename T, int BM, int BN, int BK>
__device__ __forceinline__ BlockTile<T> tile_at(const TcArgs &p, int64_t z, int64_t tile_m, int64_t tile_n) {
  BlockTile<T> b;
  b.z = z, b.m0 = tile_m * BM, b.n0 = tile_n * BN;
  b.mrem = (int)(p.m - b.m0 < BM ? p.m - b.m0 : BM);
  b.nrem = (int)(p.n - b.n0 < BN ? p.n - b.n0 : BN);
  b.A = (const T *)p.a + b.z * p.a_bs + b.m0 * p.a_rs;
  b.B = (const T *)p.b + b.z * p.b_bs + b.n0 * p.b_cs;
  b.ktiles = (int)((p.k + BK - 1) / BK);
  return b;
}

/* This block's tile (2-D grid; y0, z0: the launch's first row tile and batch). */
template <typename T, int BM, int BN, int BK, int GROUP>
__device__ __forceinline__ BlockTile<T> block_tile(const TcArgs &p, int64_t y0, int64_t z0) {
  unsigned tile_m, tile_n;
  tile_of_block<GROUP>(tile_m, tile_n);
  return tile_at<T, BM, BN, BK>(p, z0 + blockIdx.z, y0 + tile_m, tile_n);
}

/* Tile l of the whole problem in the order tile_of_block walks one launch (batch after batch; GROUP tile rows
 * of a band of columns at a time): the stream-K launches' 1-D grid, whose tiles number < 2^31. */
template <typename T, int BM, int BN, int BK, int GROUP>
__device__ __forceinline__ BlockTile<T> tile_of(const TcArgs &p, unsigned l) {
  const unsigned tm = (unsigned)((p.m + BM - 1) / BM), tn = (unsigned)((p.n + BN - 1) / BN), z = l / (tm * tn);
  l -= z * tm * tn;
  const unsigned band = l / (GROUP * tn);
  unsigned tile_m, tile_n;
  band_tile<GROUP>(band, l - band * GROUP * tn, tm, tile_m, tile_n);
  return tile_at<T, BM, BN, BK>(p, z, tile_m, tile_n);
}

/* The copies of k tile kt: A's BM x BK tile into the stage at sa (layout AMODE), B's BK x BN tile into sb
 * (layout BMODE); no commit. */
template <typename T, int BM, int BN, int BK, int AMODE, int BMODE, int NT, bool VEC>
__device__ __forceinline__ void load_stage(const TcArgs &p, const BlockTile<T> &b, int kt, uint32_t sa, uint32_t sb,
                                           int tid) {
  constexpr int EPC = 16 / (int)sizeof(T);
  const int64_t k0 = (int64_t)kt * BK;
  const int krem = (int)(p.k - k0 < BK ? p.k - k0 : BK);
  load_tile<T, BM, BK / EPC, AMODE, NT, VEC>(sa, b.A + k0 * p.a_cs, p.a_rs, p.a_cs, b.mrem, krem, tid);
  load_tile<T, BK, BN / EPC, BMODE, NT, VEC>(sb, b.B + k0 * p.b_rs, p.b_rs, p.b_cs, krem, b.nrem, tid);
}

/* Rows after which a layout's swizzle term repeats. */
template <int CH, int MODE> constexpr int swz_period() { return MODE == SW_PAD ? 1 : MODE == SW_TF32B ? 4 : 8; }
constexpr int gcd_c(int a, int b) { return b == 0 ? a : gcd_c(b, a % b); }

/* Threads per row of a TileCopy (CPR). WIDE: the fewest (a multiple of 8, so that one 8-thread cp.async phase
 * writes 8 whole chunks of one row: conflict-free and whole 128-byte lines) that still give every thread whole
 * rows' worth of passes; CH itself when no such count exists (rows of 4 chunks, or too few rows), or when not
 * WIDE (one chunk per row per thread). */
constexpr int copy_cpr(int R, int CH, int NT, bool wide) {
  for (int c = 8; wide && c <= CH; c *= 2)
    if (CH % c == 0 && NT % c == 0 && R % (NT / c) == 0) return c;
  return CH;
}

/* The copies of one operand's R x CH-chunk tile on the VEC path (16-byte rows), from pointers computed once
 * per block. CPR threads share a row (copy_cpr): thread tid's chunks are W = CH / CPR chunks ch0 + j * CPR of
 * each of rows r0 + i * RSTEP (RSTEP = NT / CPR, i < NR), so a k tile only adds a byte offset, and the W copies
 * of a row are one pointer plus the constants j * CPR * 16 on both sides (the swizzles' XOR terms stay in the
 * low 3 bits of a chunk index, and CPR is a multiple of 8): a k tile's 64-bit address arithmetic is one add
 * per row (NR), not one per chunk. Shared offsets repeat every D rows of a thread (D * RSTEP rows: a whole
 * number of swizzle periods), so D offsets are kept (D = 1 when RSTEP is a multiple of the period).
 * copy(): the whole tile is inside the operand (no tests); copy_edge(): rows >= rrem and elements past crem
 * are zero-filled (cp.async src-size), the same per-thread pointers. */
template <typename T, int R, int CH, int MODE, int NT, bool WIDE = true> struct TileCopy {
  static constexpr int EPC = 16 / (int)sizeof(T), CPR = copy_cpr(R, CH, NT, WIDE), W = CH / CPR, RSTEP = NT / CPR,
                       NR = R / RSTEP, WB = CPR * 16; // WB: bytes from one of a thread's chunks in a row to the next
  static_assert(NT % CPR == 0 && NR * RSTEP == R && NR >= 1, "whole rows of chunks per pass, whole chunks per thread");
  static_assert(W == 1 || CPR % 8 == 0, "a row's chunk offsets past the XOR terms (low 3 bits)");
  static constexpr int PER = swz_period<CH, MODE>(), P = PER / gcd_c(RSTEP, PER), D = NR < P ? NR : P;
  static constexpr uint32_t DSTEP = (uint32_t)tile_bytes<CH, MODE>(D * RSTEP); // row i to row i + D
  const char *src;  // the thread's first chunk at k tile 0
  int64_t rstep;    // bytes between its rows
  uint32_t dst[D];  // its first D rows' first chunk offsets in a stage
  int r0, c0;       // its first row and first element column
  __device__ __forceinline__ TileCopy(const T *g, int64_t rs, int tid) {
    r0 = tid / CPR;
    const int ch = tid % CPR;
    c0 = ch * EPC;
    src = reinterpret_cast<const char *>(g + r0 * rs + c0);
    rstep = (int64_t)RSTEP * rs * (int64_t)sizeof(T);
#pragma unroll
    for (int i = 0; i < D; ++i) dst[i] = swz<CH, MODE>(r0 + i * RSTEP, ch);
  }
  __device__ __forceinline__ uint32_t at(uint32_t sbase, int i) const { return sbase + dst[i % D] + (i / D) * DSTEP; }
  /* One row's W chunks: the same two registers plus constants (cp16o). */
  template <size_t... J> __device__ __forceinline__ static void row(uint32_t d, const char *s, std::index_sequence<J...>) {
    (cp16o<(int)J * WB>(d, s), ...);
  }
  /* W == 1 and G == 4: chunks four at a time through cp16x4, their addresses in four registers: a cp.async reads
   * its address register only when the memory pipe takes it, so computing the next address into the same
   * register stalls the thread until then (write-after-read: the producer warps of the warp-specialized
   * configurations spent most of their time so, ncu). */
  template <int G = 1> __device__ __forceinline__ void copy(uint32_t sbase, int64_t off) const {
    static_assert(G == 1 || G == 4, "rows one or four at a time");
    const char *s = src + off;
    if constexpr (W > 1) {
#pragma unroll
      for (int i = 0; i < NR; ++i) row(at(sbase, i), s + i * rstep, std::make_index_sequence<W>());
    } else {
#pragma unroll
      for (int i0 = 0; i0 < NR; i0 += G) {
        if constexpr (G == 4) {
          if (i0 + 4 <= NR) {
            const uint32_t d[4] = {at(sbase, i0), at(sbase, i0 + 1), at(sbase, i0 + 2), at(sbase, i0 + 3)};
            const char *const q[4] = {s + i0 * rstep, s + (i0 + 1) * rstep, s + (i0 + 2) * rstep, s + (i0 + 3) * rstep};
            cp16x4(d, q);
            continue;
          }
        }
#pragma unroll
        for (int g = 0; g < G; ++g)
          if (i0 + g < NR) cp16(at(sbase, i0 + g), s + (i0 + g) * rstep);
      }
    }
  }
  /* origin: the tile's element (0, 0) at this k tile, a valid address for the zero-byte copies. */
  __device__ __forceinline__ void copy_edge(uint32_t sbase, int64_t off, const void *origin, int rrem, int crem) const {
    const char *s = src + off;
#pragma unroll
    for (int i = 0; i < NR; ++i) {
      const bool in = r0 + i * RSTEP < rrem;
      const char *si = s + i * rstep;
#pragma unroll
      for (int j = 0; j < W; ++j) {
        const int v = in ? min(max(crem - c0 - j * CPR * EPC, 0), EPC) * (int)sizeof(T) : 0;
        cp16z(at(sbase, i) + j * WB, v ? (const void *)(si + j * WB) : origin, v);
      }
    }
  }
};

/* load_stage for the VEC path through TileCopy: a k tile of a block whose BM x BN tile is inside C (so its A
 * rows and B columns are) and that lies wholly inside k takes copy(), any other copy_edge(). No commit.
 * G = 1 (every warp of the block copies, between its mma.sync): WIDE rows, the fewest address adds; measured
 * on rung 11 (H100, same run, two runs each): bf16 128 x 256 without producers 55.7-60.4% of cuBLAS against
 * 43.8-45.1% with one chunk per row per thread (ptxas also spilled there). G = 4 (a producer warpgroup): one
 * chunk per row per thread, four per asm statement (cp16x4). WIDE rows let the producers issue a stage's
 * copies in one burst that fills the memory-instruction queue ahead of the consumers' fragment loads ("mio
 * throttle" 4.6% -> 14.3% of the TF32 samples, ncu) and cost the TF32 configurations 1-4 points; bf16 was
 * even. */
template <typename T, int BM, int BN, int BK, int AMODE, int BMODE, int NT, int G = 1> struct StageCopy {
  static constexpr int EPC = 16 / (int)sizeof(T);
  TileCopy<T, BM, BK / EPC, AMODE, NT, G == 1> a;
  TileCopy<T, BK, BN / EPC, BMODE, NT, G == 1> b;
  int64_t bk; // bytes from one k tile of B to the next
  int kfull;  // k tiles wholly inside k, or 0 when the block's tile is not inside C
  __device__ __forceinline__ StageCopy(const TcArgs &p, const BlockTile<T> &bt, int tid)
      : a(bt.A, p.a_rs, tid), b(bt.B, p.b_rs, tid) {
    bk = (int64_t)BK * p.b_rs * (int64_t)sizeof(T);
    kfull = bt.mrem == BM && bt.nrem == BN ? (int)(p.k / BK) : 0;
  }
  __device__ __forceinline__ void issue(const TcArgs &p, const BlockTile<T> &bt, int kt, uint32_t sa, uint32_t sb) const {
    const int64_t aoff = (int64_t)kt * (BK * (int)sizeof(T)), boff = (int64_t)kt * bk;
    if (kt < kfull) {
      a.template copy<G>(sa, aoff);
      b.template copy<G>(sb, boff);
    } else {
      const int64_t k0 = (int64_t)kt * BK;
      const int krem = (int)(p.k - k0 < BK ? p.k - k0 : BK);
      a.copy_edge(sa, aoff, bt.A + k0, bt.mrem, krem);
      b.copy_edge(sb, boff, bt.B + k0 * p.b_rs, krem, bt.nrem);
    }
  }
};

// ---------------------------------------------------------------- the pipelined k loop (device)

/* Step 9's multi-stage cp.async pipeline around a rung's compute, over `ktiles` k tiles of KS k steps each:
 * issue(kt, stage) starts the copies of tile kt (no commit); load(F &f, stage, ks) fills fragments f with
 * step ks of a stage; mma(const F &f) multiplies them into the rung's accumulators.
 * PIPE 0: wait + barrier at the top of each tile, then load and multiply step after step; STAGES - 1 tiles in
 *   flight (cp.async group g holds tile g; empty groups keep the wait_group arithmetic uniform).
 * PIPE 1: fragments double-buffered in registers (step s + 1 loads while step s multiplies) and the barrier
 *   just before a tile's last step, whose fragments are then already in registers: the tile's stage is
 *   refilled at once (STAGES tiles in flight) and the next tile's first fragments load while the last step
 *   multiplies.
 * Returns with no copy in flight (the caller may reuse shared memory after a barrier). */
template <int STAGES, int PIPE, int KS, class F, class Issue, class Load, class Mma>
__device__ __forceinline__ void k_loop(int ktiles, Issue &&issue, Load &&load, Mma &&mma) {
  static_assert(STAGES >= 2, "a pipeline needs two buffers");
  if constexpr (PIPE == 0) {
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < ktiles) issue(s, s);
      cp_commit();
    }
    int st = 0, st_next = STAGES - 1; // stage computed now; stage refilled now
    for (int t = 0; t < ktiles; ++t) {
      cp_wait<STAGES - 2>(); // this thread's copies of tile t have landed ...
      __syncthreads();       // ... everyone's have, and everyone finished computing tile t - 1
      if (t + STAGES - 1 < ktiles) issue(t + STAGES - 1, st_next);
      cp_commit();
#pragma unroll
      for (int ks = 0; ks < KS; ++ks) {
        F f;
        load(f, st, ks);
        mma(f);
      }
      st = st + 1 == STAGES ? 0 : st + 1;
      st_next = st_next + 1 == STAGES ? 0 : st_next + 1;
    }
  } else {
    static_assert(PIPE == 1 && KS % 2 == 0, "fragment buffers alternate over an even number of k steps per tile");
    F f[2];
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      if (s < ktiles) issue(s, s);
      cp_commit();
    }
    cp_wait<STAGES - 1>(); // tile 0
    __syncthreads();
    load(f[0], 0, 0);
    int st = 0; // stage of tile t
    for (int t = 0; t < ktiles; ++t) {
      const int st1 = st + 1 == STAGES ? 0 : st + 1; // stage of tile t + 1
#pragma unroll
      for (int ks = 0; ks < KS; ++ks) {
        if (ks < KS - 1) {
          load(f[(ks + 1) & 1], st, ks + 1);
        } else {
          cp_wait<STAGES - 2>(); // this thread's copies of tile t + 1 have landed ...
          __syncthreads();       // ... everyone's have, and no one reads stage st any more
          if (t + STAGES < ktiles) issue(t + STAGES, st);
          cp_commit();
          if (t + 1 < ktiles) load(f[0], st1, 0);
        }
        mma(f[ks & 1]);
      }
      st = st1;
    }
  }
  cp_wait<0>();
}

/* The same pipeline with the roles split (warp-specialized configurations): a producer warp only copies, the
 * consumer warps only load fragments and multiply, and no block-wide barrier is left in the k loop. Stage s
 * has two mbarriers in shared memory at bars: full[s] (bars + 8 s; one arrival per producer thread, when its
 * copies of the stage have landed: cp.async.mbarrier.arrive.noinc) and empty[s]
 * (bars + 8 (STAGES + s); one arrival per consumer thread once it has read the stage). Round n = t / STAGES of
 * stage s waits for phase n of full[s] (parity n & 1); the producer refills it for round n + 1 after phase n
 * of empty[s]. Warps no longer meet once per k tile, so one warp's fragment loads can run beside another's
 * mma.sync instead of every warp of a scheduler reaching them together.
 * ws_init: thread 0 sets up the barriers (the caller syncs the block once before the roles split). */
template <int STAGES> __device__ __forceinline__ void ws_init(uint32_t bars, int producers, int consumers) {
#pragma unroll
  for (int s = 0; s < STAGES; ++s) mbar_init(bars + 8 * s, producers), mbar_init(bars + 8 * (STAGES + s), consumers);
}

/* Register budgets of a warp-specialized block on sm_90a (setmaxnreg; a no-op elsewhere): the producer warps
 * give registers back, the consumers take them. Every warp of a warpgroup must run the same one. */
template <int N> __device__ __forceinline__ void setmaxnreg_dec() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <int N> __device__ __forceinline__ void setmaxnreg_inc() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

/* The register split of a block with one producer warpgroup (rung 11's WS configurations, rungs 13 and 14):
 * kRegsProducer per producer thread after setmaxnreg, and ws_regs per consumer thread: what a thread had at
 * launch (65536 / (NT * MINB), a multiple of 8) plus its share of what the producers gave back, at most 256
 * (NT threads, CT of them consumers: 384 and 256 give 40 / 232). */
constexpr int kRegsProducer = 40;
template <int NT, int CT, int MINB> constexpr int ws_regs() {
  constexpr int r0 = 65536 / (NT * MINB) / 8 * 8, rc = (r0 * NT - kRegsProducer * (NT - CT)) / CT / 8 * 8;
  return rc > 256 ? 256 : rc;
}
static_assert(ws_regs<384, 256, 1>() == 232, "two consumer warpgroups beside one producer warpgroup");

/* Where a warp role stands in the ring of stages: the stage of its next k tile, the parity of the phase it
 * waits for there, and how many tiles it has passed through the ring (the producer's first STAGES tiles wait
 * for nothing). It carries on from one run of k tiles to the next (stream-K: a block may take two tiles'
 * runs), so the producers fill the next run's stages while the consumers store the last one's results. */
struct WsRing {
  int st = 0, n = 0;
  uint32_t par = 0;
};

/* The producer warps: issue(kt, stage) starts k tile kt's copies (no commit), for kt in [kt0, kt1). The
 * caller waits for its copies to land (cp_wait<0>) after its last run. */
template <int STAGES, class Issue>
__device__ __forceinline__ void ws_produce(WsRing &r, int kt0, int kt1, uint32_t bars, Issue &&issue) {
  for (int kt = kt0; kt < kt1; ++kt) {
    if (r.n >= STAGES) mbar_wait(bars + 8 * (STAGES + r.st), r.par);
    issue(kt, r.st);
    cp_arrive(bars + 8 * r.st);
    if (++r.st == STAGES) {
      r.st = 0;
      if (r.n >= STAGES) r.par ^= 1;
    }
    ++r.n;
  }
}

/* The consumer warps, over the next `ktiles` tiles of the ring: load(F &f, stage, ks) and mma(const F &f) as in
 * k_loop; PIPE 1 double-buffers the fragments in registers (the stage is released once its last step's
 * fragments are loaded, and the next tile's first step loads while that step multiplies), PIPE 0 loads and
 * multiplies step after step. */
template <int STAGES, int PIPE, int KS, class F, class Load, class Mma>
__device__ __forceinline__ void ws_consume(WsRing &r, int ktiles, uint32_t bars, Load &&load, Mma &&mma) {
  int st = r.st;
  uint32_t par = r.par; // parity of full[st]'s phase of this round
  if constexpr (PIPE == 0) {
    for (int t = 0; t < ktiles; ++t) {
      mbar_wait(bars + 8 * st, par);
#pragma unroll
      for (int ks = 0; ks < KS; ++ks) {
        F f;
        load(f, st, ks);
        mma(f);
      }
      mbar_arrive(bars + 8 * (STAGES + st));
      if (++st == STAGES) st = 0, par ^= 1;
    }
  } else {
    static_assert(PIPE == 1 && KS % 2 == 0, "fragment buffers alternate over an even number of k steps per tile");
    F f[2];
    if (ktiles > 0) {
      mbar_wait(bars + 8 * st, par);
      load(f[0], st, 0);
    }
    for (int t = 0; t < ktiles; ++t) {
      const int st1 = st + 1 == STAGES ? 0 : st + 1;
      const uint32_t par1 = st1 == 0 ? par ^ 1 : par;
#pragma unroll
      for (int ks = 0; ks < KS; ++ks) {
        if (ks < KS - 1) {
          load(f[(ks + 1) & 1], st, ks + 1);
        } else {
          mbar_arrive(bars + 8 * (STAGES + st));
          if (t + 1 < ktiles) {
            mbar_wait(bars + 8 * st1, par1);
            load(f[0], st1, 0);
          }
        }
        mma(f[ks & 1]);
      }
      st = st1, par = par1;
    }
  }
  r.st = st, r.par = par;
}

/* A run's place in the stream-K tail (for_runs; rel < 0: a whole tile): it is part of tail tile rel
 * (tile sk_dp + rel), whose runs belong to units lo .. hi; this block is unit u. Unit v keeps its partial sums
 * of the tile in slot 2 v, or 2 v + 1 when the tile is its second one (only unit lo's can be: every later
 * unit starts inside the tile), lo1 says which for lo. */
struct SkRun {
  int rel = -1, u = 0, lo = 0, hi = 0, lo1 = 0;
};

/* Where stream-K unit u's k tiles start: floor(u I / U) without 64-bit arithmetic (u r < U^2 < 2^32). */
__device__ __forceinline__ unsigned sk_start(const TcArgs &p, unsigned u) {
  return u * (unsigned)p.sk_q + u * (unsigned)p.sk_r / (unsigned)p.sk_units;
}
/* The unit whose k tiles hold flattened k tile x: a float guess, corrected exactly. */
__device__ __forceinline__ int sk_unit_of(const TcArgs &p, unsigned x) {
  int v = min(p.sk_units - 1, (int)((float)(x + 1) * p.sk_uoi));
  while (v > 0 && sk_start(p, v) > x) --v;
  while (v + 1 < p.sk_units && sk_start(p, v + 1) <= x) ++v;
  return v;
}

/* The runs of k tiles a block takes, f(tile, kt0, kt1, run) for each: with no stream-K (p.sk_units == 0) its
 * one tile of the 2-D grid whole; in a stream-K launch (1-D grid) block l < sk_dp takes tile l whole, and unit
 * u = l - sk_dp the flattened k tiles [sk_start(u), sk_start(u + 1)) of the tail tiles: at most two runs (the
 * host keeps a unit's share under a tile's k tiles and at least 2). INFO: fill run (the consumers; the
 * producers need only the tiles and k ranges). */
template <typename T, int BM, int BN, int BK, int GROUP, bool INFO, class F>
__device__ __forceinline__ void for_runs(const TcArgs &p, int64_t y0, int64_t z0, F &&f) {
  const int ktiles = (int)((p.k + BK - 1) / BK);
  unsigned it = 0, end = (unsigned)ktiles, u = 0;
  int base = -1; // the tile of flattened k tile 0; -1: this block's tile of the 2-D grid
  bool tail = false;
  if (p.sk_units > 0) {
    const int l = (int)blockIdx.x;
    if (l < p.sk_dp) base = l;
    else u = l - p.sk_dp, base = p.sk_dp, tail = true, it = sk_start(p, u), end = sk_start(p, u + 1);
  }
  do {
    SkRun run;
    const unsigned kt = (unsigned)ktiles, r = tail ? it / kt : 0, kt0 = it - r * kt, kt1 = min(kt, kt0 + (end - it));
    if (INFO && tail) {
      run.rel = (int)r, run.u = (int)u, run.lo = sk_unit_of(p, r * kt), run.hi = sk_unit_of(p, (r + 1) * kt - 1);
      run.lo1 = sk_start(p, run.lo) < r * kt;
    }
    const BlockTile<T> bt = base < 0 ? block_tile<T, BM, BN, BK, GROUP>(p, y0, z0) : tile_of<T, BM, BN, BK, GROUP>(p, base + r);
    f(bt, (int)kt0, (int)kt1, run);
    it += kt1 - kt0;
  } while (it < end);
}

/* Stream-K unit run.u's run of tail tile run.rel ended: its partial sums go to its slot, and the last of the
 * tile's units to arrive (counted in sk_cnt) adds every unit's partial sums from the slots in unit order (so
 * the sum does not depend on which unit finishes last) into acc and returns true: it stores the tile. CT consumer threads (ct:
 * this one) take part; they meet on named barrier 1 (the producers do not), flag is a shared int. */
template <int CT, int BM, int BN, int FI, int FJ>
__device__ __forceinline__ bool sk_finish(const TcArgs &p, float (&acc)[FI][FJ][4], const SkRun &run, int ct, int *flag) {
  static_assert(FI * FJ * 4 * CT == BM * BN, "the consumers hold the tile's accumulators");
  constexpr int SLOT = BM * BN / 4; // float4s per slot
  float4 *const part = reinterpret_cast<float4 *>(p.sk_part) + ct;
  auto slot = [&](int v) { return part + (size_t)(2 * v + (v == run.lo ? run.lo1 : 0)) * SLOT; };
  float4 *mine = slot(run.u);
#pragma unroll
  for (int i = 0; i < FI; ++i)
#pragma unroll
    for (int j = 0; j < FJ; ++j)
      __stcg(mine + (i * FJ + j) * CT, make_float4(acc[i][j][0], acc[i][j][1], acc[i][j][2], acc[i][j][3]));
  __threadfence();
  named_sync(1, CT);
  if (ct == 0) *flag = atomicAdd(p.sk_cnt + run.rel, 1);
  named_sync(1, CT);
  if (*(volatile int *)flag != run.hi - run.lo) return false;
  __threadfence();
  // Every unit's partial sums from the slots, this unit's own included, in unit order, QC float4s at a time:
  // the accumulators not reached yet are dead (their values are in the own slot), so a chunk's sums and its
  // loads in flight fit beside the finished ones (holding all 32 float4s of a 64 x 64 warp tile live while
  // ptxas hoists the next unit's loads made it spill).
  constexpr int Q = FI * FJ, QC = Q < 16 ? Q : 16;
  static_assert(Q % QC == 0, "whole chunks");
#pragma unroll
  for (int q0 = 0; q0 < Q; q0 += QC) {
    float4 s[QC];
#pragma unroll
    for (int q = 0; q < QC; ++q) s[q] = __ldcg(slot(run.lo) + (q0 + q) * CT);
    for (int v = run.lo + 1; v <= run.hi; ++v) {
      const float4 *src = slot(v);
#pragma unroll
      for (int q = 0; q < QC; ++q) {
        const float4 x = __ldcg(src + (q0 + q) * CT);
        s[q].x += x.x, s[q].y += x.y, s[q].z += x.z, s[q].w += x.w;
      }
    }
#pragma unroll
    for (int q = 0; q < QC; ++q) {
      float *c = acc[(q0 + q) / FJ][(q0 + q) % FJ];
      c[0] = s[q].x, c[1] = s[q].y, c[2] = s[q].z, c[3] = s[q].w;
    }
  }
  return true;
}

// ---------------------------------------------------------------- epilogue (device)

__device__ __forceinline__ float ld_c(const TcArgs &p, const void *c, int64_t off) {
  if (p.c_dtype == CK_F16) return __half2float(((const __half *)c)[off]);
  if (p.c_dtype == CK_BF16) return __bfloat162float(((const __nv_bfloat16 *)c)[off]);
  return ((const float *)c)[off];
}
__device__ __forceinline__ void st_c(const TcArgs &p, void *c, int64_t off, float v) {
  if (p.c_dtype == CK_F16) ((__half *)c)[off] = __float2half_rn(v);
  else if (p.c_dtype == CK_BF16) ((__nv_bfloat16 *)c)[off] = __float2bfloat16_rn(v);
  else ((float *)c)[off] = v;
}

/* Results v0, v1 of row i, columns j and j + 1 (local to the tile: mrem / nrem valid) of the batch's C at cb:
 * alpha * v + beta * C, converted to c_dtype; beta == 0 never reads C. One 2-element store when C allows it
 * (p.cpair; j is even) and both columns are inside. */
__device__ __forceinline__ void store_pair(const TcArgs &p, void *cb, int i, int j, int mrem, int nrem, float v0, float v1) {
  if (i >= mrem || j >= nrem) return;
  const int64_t off = (int64_t)i * p.c_rs + (int64_t)j * p.c_cs;
  v0 *= p.alpha, v1 *= p.alpha;
  if (p.cpair && j + 1 < nrem) {
    if (p.beta != 0.f) v0 += p.beta * ld_c(p, cb, off), v1 += p.beta * ld_c(p, cb, off + 1);
    if (p.c_dtype == CK_F16) *(__half2 *)((__half *)cb + off) = __floats2half2_rn(v0, v1);
    else if (p.c_dtype == CK_BF16) *(__nv_bfloat162 *)((__nv_bfloat16 *)cb + off) = __floats2bfloat162_rn(v0, v1);
    else *(float2 *)((float *)cb + off) = make_float2(v0, v1);
    return;
  }
  if (p.beta != 0.f) v0 += p.beta * ld_c(p, cb, off);
  st_c(p, cb, off, v0);
  if (j + 1 < nrem) {
    const int64_t off1 = off + p.c_cs;
    if (p.beta != 0.f) v1 += p.beta * ld_c(p, cb, off1);
    st_c(p, cb, off1, v1);
  }
}

template <int MT, int N8> __device__ __forceinline__ void zero_acc(float (&acc)[MT][N8][4]) {
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < N8; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;
}

/* Two results as one 8-byte (f32) or 4-byte (f16/bf16) store, rounded to nearest even. */
__device__ __forceinline__ void st2(float *c, float v0, float v1) { *(float2 *)c = make_float2(v0, v1); }
__device__ __forceinline__ void st2(__half *c, float v0, float v1) { *(__half2 *)c = __floats2half2_rn(v0, v1); }
__device__ __forceinline__ void st2(__nv_bfloat16 *c, float v0, float v1) {
  *(__nv_bfloat162 *)c = __floats2bfloat162_rn(v0, v1);
}

/* Layouts of a warp's accumulator tiles acc[FI][FJ][4] (g = lane / 4, t = lane % 4):
 *   ACC_MN  m16n8 tiles (i: 16 rows, j: 8 columns), mma.sync's own: c0, c1 at row 16i + g, columns 8j + 2t and
 *           + 1; c2, c3 at row 16i + g + 8;
 *   ACC_NM  the tiles of the transposed product C^T = B^T A^T (the TF32 kernel; i: 16 columns, j: 8 rows), its
 *           fragment rows g and g + 8 being C's columns 16i + 2g and + 1: c0, c2 at row 8j + 2t, columns 16i + 2g
 *           and + 1; c1, c3 at row 8j + 2t + 1.
 * acc_lane: the lane's first row and column; acc_pair: pair h (0, 1) of tile (i, j), its row and column from
 * there and its two registers, every pair two adjacent columns; acc_pairs walks them all. */
enum { ACC_MN, ACC_NM };
template <int L> __device__ __forceinline__ void acc_lane(int lane, int &r, int &c) {
  const int g = lane >> 2, t4 = lane & 3;
  if constexpr (L == ACC_MN) r = g, c = 2 * t4;
  else r = 2 * t4, c = 2 * g;
}
template <int L> __device__ __forceinline__ void acc_pair(int i, int j, int h, int &r, int &c, int &q0, int &q1) {
  if constexpr (L == ACC_MN) r = 16 * i + 8 * h, c = 8 * j, q0 = 2 * h, q1 = 2 * h + 1;
  else r = 8 * j + h, c = 16 * i, q0 = h, q1 = h + 2;
}
/* f(r, c, v0, v1) for every pair of the warp's accumulators: row r, columns c and c + 1 from the lane's origin. */
template <int L, int FI, int FJ, class F> __device__ __forceinline__ void acc_pairs(const float (&acc)[FI][FJ][4], F &&f) {
#pragma unroll
  for (int i = 0; i < FI; ++i)
#pragma unroll
    for (int j = 0; j < FJ; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        int r, c, q0, q1;
        acc_pair<L>(i, j, h, r, c, q0, q1);
        f(r, c, acc[i][j][q0], acc[i][j][q1]);
      }
}

/* store_acc's common case: the warp's tile lies inside C, C takes pair stores (p.cpair) and beta == 0. One
 * pair store per two accumulators, at constant offsets from one lane pointer: no tests and no dtype switch per
 * pair, so the epilogue is a few hundred instructions instead of thousands (measured on rung 11: the generic
 * path's code, run once per block from a cold instruction cache, took 8% of the warp samples at 8192^3). */
template <typename TC, int L, int FI, int FJ>
__device__ __forceinline__ void store_acc_inside(const TcArgs &p, void *cb, const float (&acc)[FI][FJ][4], int row0,
                                                 int col0, int lane) {
  int lr, lc;
  acc_lane<L>(lane, lr, lc);
  TC *c = (TC *)cb + (int64_t)(row0 + lr) * p.c_rs + col0 + lc;
  const float al = p.alpha;
  acc_pairs<L>(acc, [&](int r, int cc, float v0, float v1) { st2(c + r * p.c_rs + cc, al * v0, al * v1); });
}

/* A warp's accumulator tiles in layout L, the warp tile's top-left at (row0, col0) of the block tile at cb. C's
 * dtype is f32 or TI (the input dtype): store_acc_inside when it can, else store_pair per pair (bounds, beta, any
 * dtype and stride). */
template <typename TI, int L, int FI, int FJ>
__device__ __forceinline__ void store_acc(const TcArgs &p, void *cb, const float (&acc)[FI][FJ][4], int row0, int col0,
                                          int lane, int mrem, int nrem) {
  constexpr int WR = L == ACC_MN ? 16 * FI : 8 * FJ, WC = L == ACC_MN ? 8 * FJ : 16 * FI; // the warp tile
  if (p.cpair && p.beta == 0.f && row0 + WR <= mrem && col0 + WC <= nrem) {
    if (p.c_dtype == CK_F32) return store_acc_inside<float, L>(p, cb, acc, row0, col0, lane);
    if constexpr (!std::is_same<TI, float>::value) return store_acc_inside<TI, L>(p, cb, acc, row0, col0, lane);
  }
  int lr, lc;
  acc_lane<L>(lane, lr, lc);
  acc_pairs<L>(acc, [&](int r, int c, float v0, float v1) {
    store_pair(p, cb, row0 + lr + r, col0 + lc + c, mrem, nrem, v0, v1);
  });
}

/* The batch's C base, in bytes. */
__device__ __forceinline__ void *c_base(const TcArgs &p, int64_t z, int64_t m0, int64_t n0) {
  const int64_t es = p.c_dtype == CK_F32 ? 4 : 2;
  return (char *)p.c + (z * p.c_bs + m0 * p.c_rs + n0 * p.c_cs) * es;
}

// ---------------------------------------------------------------- launches (host)

/* One block per BM x BN tile (mm_common.cuh: split_tiles: several launches when y or z would pass 65535, the
 * kernel gets the first row tile and batch of its launch); SMEM bytes of dynamic shared memory, opted in
 * once per kernel past 48 KB. `raised` is the caller's per-kernel flag. */
template <int BM, int BN, int NT, int SMEM>
int launch_tiles(const ck_mm_desc *d, const ck_env *env, void (*kern)(TcArgs, int64_t, int64_t), bool &raised) {
  if (int e = ckmm::raise_smem(kern, SMEM, raised)) return e;
  const TcArgs p = tc_args(d);
  ck_note(env, kern, NT, SMEM);
  return ckmm::split_tiles(d, BM, BN, [&](dim3 grid, int64_t y0, int64_t z0) {
    kern<<<grid, NT, SMEM, (cudaStream_t)env->stream>>>(p, y0, z0);
  });
}

/* Stream-K tail (Osama et al., "Stream-K", PPoPP 2023; CUTLASS's "data-parallel + stream-K" split) for the
 * warp-specialized configurations, which hold one block per SM (BPS blocks per SM in general): T tiles on S SMs
 * take ceil(T / S) rounds of one tile each, and the last round's R = T mod S tiles leave S - R SMs idle
 * (8192^3 at 128 x 256: 2048 tiles on 132 SMs, 15 rounds and 68 tiles; ~3% of the time). Here the first T - R
 * tiles go to one block each (whole rounds) and S more blocks split the tail's R * KT k tiles into equal runs
 * (under a tile's KT, so a unit touches at most two tiles); the last unit to finish a tile adds the others'
 * partial sums (sk_finish; an f32 slot per unit and tile in a workspace, and an arrival counter per tile) and
 * stores it, so the result is the same whichever unit finishes last. Used when the tail leaves at least a
 * fifth of the SMs idle (R <= 4 S / 5) and every unit gets >= 2 k tiles; CUKERN_MM_SK=0 turns it off, =1 uses
 * it wherever a launch can (also under S tiles: measurements and checks). Otherwise, or when the workspace
 * cannot be had, launch_tiles. */
inline int sk_env() {
  const char *s = getenv("CUKERN_MM_SK");
  return s && (s[0] == '0' || s[0] == '1') && s[1] == 0 ? s[0] - '0' : -1;
}

template <int BM, int BN, int BK, int NT, int SMEM, int BPS>
int launch_tiles_sk(const ck_mm_desc *d, const ck_env *env, void (*kern)(TcArgs, int64_t, int64_t), bool &raised) {
  const int64_t T = ((d->m + BM - 1) / BM) * ((d->n + BN - 1) / BN) * d->batch, kt = (d->k + BK - 1) / BK;
  const int64_t S = (int64_t)(env->sm_count > 0 ? env->sm_count : 0) * BPS, R = S > 0 ? T % S : 0;
  const int mode = sk_env();
  const bool sk = mode != 0 && R > 0 && R * kt >= 2 * S && T + S <= 0x7fffffff && R * kt <= 0x7fffffff &&
                  S <= 0xffff && (mode == 1 || (T >= S && 5 * R <= 4 * S));
  void *w = nullptr;
  const size_t part = (size_t)S * 2 * BM * BN * sizeof(float), cnt = (size_t)R * sizeof(int);
  if (sk) w = env->ws_alloc(env->owner, part + cnt);
  if (!w) return launch_tiles<BM, BN, NT, SMEM>(d, env, kern, raised);
  int e = ckmm::raise_smem(kern, SMEM, raised);
  if (e == 0) {
    TcArgs p = tc_args(d);
    p.sk_part = (float *)w, p.sk_cnt = (int *)((char *)w + part);
    p.sk_dp = (int)(T - R), p.sk_iters = (int)(R * kt), p.sk_units = (int)S;
    p.sk_q = p.sk_iters / p.sk_units, p.sk_r = p.sk_iters % p.sk_units, p.sk_uoi = (float)S / (float)(R * kt);
    const cudaStream_t st = (cudaStream_t)env->stream;
    e = (int)cudaMemsetAsync(p.sk_cnt, 0, cnt, st);
    if (e == 0) {
      ck_note(env, kern, NT, SMEM);
      kern<<<(unsigned)(T - R + S), NT, SMEM, st>>>(p, 0, 0);
      e = (int)cudaGetLastError();
    }
  }
  env->ws_free(env->owner, w); // stream order: the next user of this memory runs after the kernel
  return e;
}

using ckmm::forced_cfg; // CUKERN_MM_CFG=<i> forces configuration i of a rung

} // namespace cktc

#endif
