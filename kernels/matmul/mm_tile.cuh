/*
 * mm_tile.cuh — the operand tiles of the tensor-core rungs: their shared-memory layouts (padded or XOR-swizzled
 * 16-byte chunks), the tile loader that fills one pipeline stage (cp.async when the operand allows 16-byte
 * copies, plain loads and 16-byte shared stores otherwise: any strides, any alignment), the grouped tile order
 * (BlockTile: where a block's tile lies) and the copies of interior tiles from per-block pointers (TileCopy,
 * StageCopy). Part of mm_tc.cuh.
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
#ifndef CK_MM_TILE_CUH
#define CK_MM_TILE_CUH

#include <stdint.h>

#include <type_traits>
#include <utility>

#include "mm_ptx.cuh"
#include "mm_tc_host.cuh"

namespace cktc {

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

} // namespace cktc

#endif
