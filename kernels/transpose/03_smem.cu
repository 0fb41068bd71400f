/*
 * 03_smem.cu — transpose, step 3: stage a 32 x 32 tile in shared memory (the seed's transposeSmem).
 *
 * Idea: read a tile with coalesced loads (warp = one input row segment), store it row by row into shared
 * memory, synchronise, then write output rows — which are shared-memory columns — with coalesced stores.
 * Both global directions are now coalesced. The price: a warp reading a column of an unpadded 32-wide tile
 * hits one bank 32 times (32-way bank conflict; 16-way per half-warp for 8-byte elements).
 * Changed from steps 1-2: global stores coalesced via a shared tile.
 * Launch: block 32 x 32 (one element per thread), one 32 x 32 tile per block; grid x = tiles (flattened,
 * looping), z = batch (looping). Shared: 4 KB (f32/i32) or 8 KB (f64).
 * Limits: none — any rows, cols >= 0 (edge tiles guarded), any element strides, 2-, 4- or 8-byte elements.
 * Operands: in rows x cols, out cols x rows, per batch matrix (ck_tr_desc).
 */
#include "tr_common.cuh"

#define SM_T 32 /* tile edge = block x = block y */
#define SM_PAD 0 /* extra columns per shared row */

// ---------------------------------------------------------------- kernel

template <typename T, bool UNIT>
__global__ void __launch_bounds__(SM_T *SM_T) transpose_smem_kernel(const ck_tr_desc d, const tr_walk w) {
  __shared__ T tile[SM_T][SM_T + SM_PAD];
  const T *__restrict__ in = (const T *)d.in;
  T *__restrict__ out = (T *)d.out;
  const int64_t ics = UNIT ? 1 : d.in_cs, ocs = UNIT ? 1 : d.out_cs;
  const int x = threadIdx.x, y = threadIdx.y;
  for (int64_t b = blockIdx.z; b < w.nbatch; b += gridDim.z) {
    int64_t oi, oo;
    tr_batch_offsets(d, b, oi, oo);
    for (int64_t t = blockIdx.x; t < w.ntiles; t += gridDim.x) {
      int64_t tr, tc;
      tr_tile_coords(t, w.ntc, tr, tc);
      const int64_t r0 = tr * SM_T, c0 = tc * SM_T;
      // coalesced load of input row r0 + y into shared row y
      if (r0 + y < d.rows && c0 + x < d.cols) tile[y][x] = in[oi + (r0 + y) * d.in_rs + (c0 + x) * ics];
      __syncthreads();
      // output row c0 + y is shared column y: the warp walks down a column of the tile
      if (c0 + y < d.cols && r0 + x < d.rows) out[oo + (c0 + y) * d.out_rs + (r0 + x) * ocs] = tile[x][y];
      __syncthreads(); // the next tile overwrites the shared rows still being read
    }
  }
}

// ---------------------------------------------------------------- launcher

template <typename T>
static void launch(const ck_tr_desc *d, const ck_env *env) {
  tr_launch_tiles(d, env, SM_T, SM_T, dim3(SM_T, SM_T), transpose_smem_kernel<T, true>, transpose_smem_kernel<T, false>);
}

extern "C" const char *ck_transpose_smem_supports(const void *desc) {
  return tr_supports_common((const ck_tr_desc *)desc);
}

CK_TR_LAUNCHER(ck_transpose_smem, launch)
