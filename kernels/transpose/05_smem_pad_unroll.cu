/*
 * 05_smem_pad_unroll.cu — transpose, step 5: padded tile, two elements per thread (the seed's
 * transposeSmemUnrollPad).
 *
 * Idea: half as many threads per tile, each moving two elements. Both of a thread's loads are issued
 * before either is stored to shared memory, so twice as many bytes are in flight per thread and the
 * per-element index arithmetic and barrier cost are shared. The seed unrolls along x (a 16 x 64 tile);
 * unrolling along y keeps the tile square, so the output side is unchanged.
 * Changed from step 4: block 32 x 16 instead of 32 x 32; thread (x, y) handles tile rows y and y + 16.
 * Launch: block 32 x 16, one 32 x 32 tile per block (padded to 33 columns); grid x = tiles (flattened,
 * looping), z = batch (looping). Shared: 4.1 KB (f32/i32) or 8.3 KB (f64).
 * Limits: none — any rows, cols >= 0 (edge tiles guarded), any element strides, 2-, 4- or 8-byte elements.
 * Operands: in rows x cols, out cols x rows, per batch matrix (ck_tr_desc).
 */
#include "tr_common.cuh"

#define SU_T 32 /* tile edge = block x */
#define SU_BY 16 /* block y: SU_T / SU_BY = 2 elements per thread */
#define SU_PAD 1

// ---------------------------------------------------------------- kernel

template <typename T, bool UNIT>
__global__ void __launch_bounds__(SU_T *SU_BY) transpose_smem_pad_unroll_kernel(const ck_tr_desc d, const tr_walk w) {
  __shared__ T tile[SU_T][SU_T + SU_PAD];
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
      const int64_t r0 = tr * SU_T, c0 = tc * SU_T;
      const bool cin = c0 + x < d.cols, cout = r0 + x < d.rows;
      T v[SU_T / SU_BY] = {};
#pragma unroll
      for (int i = 0; i < SU_T / SU_BY; ++i) {
        const int64_t r = r0 + y + i * SU_BY;
        if (cin && r < d.rows) v[i] = in[oi + r * d.in_rs + (c0 + x) * ics];
      }
#pragma unroll
      for (int i = 0; i < SU_T / SU_BY; ++i) tile[y + i * SU_BY][x] = v[i];
      __syncthreads();
#pragma unroll
      for (int i = 0; i < SU_T / SU_BY; ++i) {
        const int64_t c = c0 + y + i * SU_BY;
        if (cout && c < d.cols) out[oo + c * d.out_rs + (r0 + x) * ocs] = tile[x][y + i * SU_BY];
      }
      __syncthreads(); // the next tile overwrites the shared rows still being read
    }
  }
}

// ---------------------------------------------------------------- launcher

template <typename T>
static void launch(const ck_tr_desc *d, const ck_env *env) {
  tr_launch_tiles(d, env, SU_T, SU_T, dim3(SU_T, SU_BY), transpose_smem_pad_unroll_kernel<T, true>,
                  transpose_smem_pad_unroll_kernel<T, false>);
}

extern "C" const char *ck_transpose_smem_pad_unroll_supports(const void *desc) {
  return tr_supports_common((const ck_tr_desc *)desc);
}

CK_TR_LAUNCHER(ck_transpose_smem_pad_unroll, launch)
