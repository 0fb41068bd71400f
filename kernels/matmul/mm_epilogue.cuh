/*
 * mm_epilogue.cuh — the epilogue of the tensor-core rungs: alpha * AB + beta * C converted to c_dtype (beta == 0
 * never reads C), 2-element stores where C allows them, the layouts of the mma.sync accumulators (ACC_MN, ACC_NM)
 * and store_acc with its fast path for warp tiles inside C. Part of mm_tc.cuh.
 */
#ifndef CK_MM_EPILOGUE_CUH
#define CK_MM_EPILOGUE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "mm_tc_host.cuh"

namespace cktc {

// ---------------------------------------------------------------- element types

template <typename T> struct Elem;
template <> struct Elem<__half> {
  static __device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
};
template <> struct Elem<__nv_bfloat16> {
  static __device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
};

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

} // namespace cktc

#endif
