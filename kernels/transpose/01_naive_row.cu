/*
 * 01_naive_row.cu — transpose, step 1: one element per thread, read along rows.
 *
 * Idea: thread (x, y) of a 32 x 8 block copies in(r, c) to out(c, r) with c = c0 + x. A warp reads 32
 * neighbours of one input row (coalesced: one 128-byte line for f32) and writes them down a column of out,
 * 32 different lines for one instruction (the seed's naiveGmem: gst_efficiency 12.5 %).
 * Changed from step 0 (cuBLAS geam): our own kernel; any strides, i32 too, no per-matrix launches.
 * Launch: block 32 x 8, one 8-row x 32-col tile per block; grid x = tiles (flattened, looping past 2^31-1),
 * grid z = batch (looping past 65535).
 * Limits: none — any rows, cols >= 0, any element strides, 2-, 4- or 8-byte elements.
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
static void launch(const ck_tr_desc *d, const ck_env *env) {
  tr_launch_tiles(d, env, NR_TR, NR_TC, dim3(NR_TC, NR_TR), transpose_naive_row_kernel<T, true>,
                  transpose_naive_row_kernel<T, false>);
}

extern "C" const char *ck_transpose_naive_row_supports(const void *desc) {
  return tr_supports_common((const ck_tr_desc *)desc);
}

CK_TR_LAUNCHER(ck_transpose_naive_row, launch)
