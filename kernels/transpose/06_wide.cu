/*
 * 06_wide.cu — transpose, step 6: 64 x 64 padded tile, 16 elements per thread.
 *
 * Idea: a memory-bound kernel runs at the speed of the bytes it keeps in flight. Each thread of a 32 x 8
 * block first issues all 16 of its loads (tile rows y + 8i, columns x and x + 32), then stores them to a
 * 64 x 65 shared tile, synchronises and writes 16 output elements the same way. A block moves 16 KB per
 * tile (f32), the index arithmetic and the barrier are shared by 16 elements, and full interior tiles skip
 * the bounds checks. The pad keeps both shared phases conflict-free: row-wise stores hit banks x + const,
 * column-wise loads banks (65x + y) mod 32 = x + y (8-byte elements: slot (x + y) mod 16 per half-warp).
 * Changed from step 5: tile 64 x 64 instead of 32 x 32, 16 elements per thread instead of 2, a separate
 * unguarded path for full tiles (one predicated path for both cost 2-3 points of memcpy: the compiler
 * then evaluates 64-bit bounds checks per element), grouped tile order (tr_common.cuh).
 * Measured on the H200: 94 % of memcpy (3.98 TB/s) at 16384^2 f32, but 71 % at 16383 x 4097, where output
 * rows do not start on 32-byte sectors — step 8 fixes that.
 * Launch: block 32 x 8 (256 threads), one 64 x 64 tile per block; grid x = tiles (flattened, grouped,
 * looping), z = batch (looping). Shared: 16.6 KB (f32/i32) or 33.3 KB (f64), static.
 * Limits: none — any rows, cols >= 0 (edge tiles guarded), any element strides, 2-, 4- or 8-byte elements.
 * Operands: in rows x cols, out cols x rows, per batch matrix (ck_tr_desc).
 */
#include "tr_common.cuh"

#define WD_T 64  /* tile edge */
#define WD_BX 32 /* block x: a warp spans 32 columns */
#define WD_BY 8  /* block y */
#define WD_PAD 1
#define WD_NI (WD_T / WD_BY) /* rows per thread: 8 */
#define WD_NH (WD_T / WD_BX) /* columns per thread: 2 */

// ---------------------------------------------------------------- kernel

template <typename T, bool UNIT>
__global__ void __launch_bounds__(WD_BX *WD_BY) transpose_wide_kernel(const ck_tr_desc d, const tr_walk w) {
  __shared__ T tile[WD_T][WD_T + WD_PAD];
  const T *__restrict__ in = (const T *)d.in;
  T *__restrict__ out = (T *)d.out;
  const int64_t ics = UNIT ? 1 : d.in_cs, ocs = UNIT ? 1 : d.out_cs;
  const int x = threadIdx.x, y = threadIdx.y;
  for (int64_t b = blockIdx.z; b < w.nbatch; b += gridDim.z) {
    int64_t oi, oo;
    tr_batch_offsets(d, b, oi, oo);
    for (int64_t t = blockIdx.x; t < w.ntiles; t += gridDim.x) {
      int64_t tr, tc;
      tr_tile_coords_grouped(t, w.ntr, w.ntc, tr, tc);
      const int64_t r0 = tr * WD_T, c0 = tc * WD_T;
      const int64_t nr = d.rows - r0, nc = d.cols - c0; // valid rows/cols of this tile (may exceed 64)
      const bool full = nr >= WD_T && nc >= WD_T;
      // thread's first element of the tile: input (r0 + y, c0 + x), output (c0 + y, r0 + x)
      const T *src = in + oi + (r0 + y) * d.in_rs + (c0 + x) * ics;
      T *dst = out + oo + (c0 + y) * d.out_rs + (r0 + x) * ocs;
      T v[WD_NI][WD_NH];
      if (full) {
#pragma unroll
        for (int i = 0; i < WD_NI; ++i)
#pragma unroll
          for (int h = 0; h < WD_NH; ++h) v[i][h] = src[(int64_t)(i * WD_BY) * d.in_rs + (int64_t)(h * WD_BX) * ics];
      } else {
#pragma unroll
        for (int i = 0; i < WD_NI; ++i)
#pragma unroll
          for (int h = 0; h < WD_NH; ++h) {
            v[i][h] = 0;
            if (y + i * WD_BY < nr && x + h * WD_BX < nc)
              v[i][h] = src[(int64_t)(i * WD_BY) * d.in_rs + (int64_t)(h * WD_BX) * ics];
          }
      }
#pragma unroll
      for (int i = 0; i < WD_NI; ++i)
#pragma unroll
        for (int h = 0; h < WD_NH; ++h) tile[y + i * WD_BY][x + h * WD_BX] = v[i][h];
      __syncthreads();
      // output row c0 + y + 8i, columns r0 + x + 32h = shared column y + 8i, rows x + 32h
      if (full) {
#pragma unroll
        for (int i = 0; i < WD_NI; ++i)
#pragma unroll
          for (int h = 0; h < WD_NH; ++h)
            dst[(int64_t)(i * WD_BY) * d.out_rs + (int64_t)(h * WD_BX) * ocs] = tile[x + h * WD_BX][y + i * WD_BY];
      } else {
#pragma unroll
        for (int i = 0; i < WD_NI; ++i)
#pragma unroll
          for (int h = 0; h < WD_NH; ++h)
            if (y + i * WD_BY < nc && x + h * WD_BX < nr)
              dst[(int64_t)(i * WD_BY) * d.out_rs + (int64_t)(h * WD_BX) * ocs] = tile[x + h * WD_BX][y + i * WD_BY];
      }
      __syncthreads(); // the next tile overwrites the shared rows still being read
    }
  }
}

// ---------------------------------------------------------------- launcher

template <typename T>
static void launch(const ck_tr_desc *d, const ck_env *env) {
  tr_launch_tiles(d, env, WD_T, WD_T, dim3(WD_BX, WD_BY), transpose_wide_kernel<T, true>,
                  transpose_wide_kernel<T, false>);
}

extern "C" const char *ck_transpose_wide_supports(const void *desc) {
  return tr_supports_common((const ck_tr_desc *)desc);
}

CK_TR_LAUNCHER(ck_transpose_wide, launch)
