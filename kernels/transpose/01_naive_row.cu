/*
 * 01_naive_row.cu — transpose, step 1: one element per thread, read along rows.
 *
 * Idea: thread (x, y) of a 32 x 8 block copies in(r, c) to out(c, r) with c = c0 + x. A warp reads 32
 * neighbours of one input row (coalesced: one 128-byte line for f32) and writes them down a column of out,
 * 32 different lines for one instruction (the seed's naiveGmem: gst_efficiency 12.5 %).
 * Changed from step 0 (cuBLAS geam): our own kernel; any strides, i32 too, no per-matrix launches.
 * Launch: block 32 x 8, one 8-row x 32-col tile per block; grid x = tiles (flattened, looping past 2^31-1),
 * grid z = batch (looping past 65535).
 * Limits: none — any rows, cols >= 0, any element strides, 4- or 8-byte elements.
 * Operands: in rows x cols, out cols x rows, per batch matrix (ck_tr_desc).
 */
#include "tr_common.cuh"

#define NR_TR 8  /* tile rows = block y */
#define NR_TC 32 /* tile cols = block x = warp width */

// ---------------------------------------------------------------- kernel

template <typename T, bool UNIT>
__global__ void __launch_bounds__(NR_TC *NR_TR) transpose_naive_row_kernel(const ck_tr_desc d, const tr_walk w) {
  const T *__restrict__ in = (const T *)d.in;
  T *__restrict__ out = (T *)d.out;
  const int64_t ics = UNIT ? 1 : d.in_cs, ocs = UNIT ? 1 : d.out_cs;
  for (int64_t b = blockIdx.z; b < w.nbatch; b += gridDim.z) {
    int64_t oi, oo;
    tr_batch_offsets(d, b, oi, oo);
    for (int64_t t = blockIdx.x; t < w.ntiles; t += gridDim.x) {
      int64_t tr, tc;
      tr_tile_coords(t, w.ntc, tr, tc);
      const int64_t r = tr * NR_TR + threadIdx.y, c = tc * NR_TC + threadIdx.x;
      if (r < d.rows && c < d.cols) out[oo + c * d.out_rs + r * ocs] = in[oi + r * d.in_rs + c * ics];
    }
  }
}

// ---------------------------------------------------------------- launcher

template <typename T>
static void launch(const ck_tr_desc *d, cudaStream_t s) {
  const tr_walk w = tr_walk_make(d, NR_TR, NR_TC);
  const dim3 grid = tr_grid(d, NR_TR, NR_TC), block(NR_TC, NR_TR);
  if (d->in_cs == 1 && d->out_cs == 1)
    transpose_naive_row_kernel<T, true><<<grid, block, 0, s>>>(*d, w);
  else
    transpose_naive_row_kernel<T, false><<<grid, block, 0, s>>>(*d, w);
}

extern "C" const char *ck_transpose_naive_row_supports(const void *desc) {
  return tr_supports_common((const ck_tr_desc *)desc);
}

extern "C" int ck_transpose_naive_row(const void *desc, const ck_env *env) {
  const ck_tr_desc *d = (const ck_tr_desc *)desc;
  if (tr_empty(d)) return 0;
  cudaStream_t s = (cudaStream_t)env->stream;
  if (d->elem_size == 8)
    launch<uint64_t>(d, s);
  else
    launch<uint32_t>(d, s);
  return (int)cudaGetLastError();
}
