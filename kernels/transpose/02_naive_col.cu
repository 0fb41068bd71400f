/*
 * 02_naive_col.cu — transpose, step 2: one element per thread, read along columns.
 *
 * Idea: the mirror of step 1. Thread (x, y) copies in(r, c) to out(c, r) with r = r0 + x, so a warp writes
 * 32 neighbours of one output row (coalesced stores) and gathers them from 32 different input rows. Loads
 * that miss only cost their own sectors and can be served by L1/L2 for the neighbouring warps, while
 * scattered stores cost a partial-line write each, which is why reading along columns usually wins on
 * older GPUs; the ladder measures which wins on this one.
 * Changed from step 1: the roles of x and y are swapped (strided loads, coalesced stores).
 * Launch: block 32 x 8, one 32-row x 8-col tile per block; grid x = tiles (flattened, looping), z = batch.
 * Limits: none — any rows, cols >= 0, any element strides, 2-, 4- or 8-byte elements.
 * Operands: in rows x cols, out cols x rows, per batch matrix (ck_tr_desc).
 */
#include "tr_common.cuh"

#define NC_TR 32 /* tile rows = block x = warp width */
#define NC_TC 8  /* tile cols = block y */

// ---------------------------------------------------------------- kernel

template <typename T, bool UNIT>
__global__ void __launch_bounds__(NC_TR *NC_TC) transpose_naive_col_kernel(const ck_tr_desc d, const tr_walk w) {
  const T *__restrict__ in = (const T *)d.in;
  T *__restrict__ out = (T *)d.out;
  const int64_t ics = UNIT ? 1 : d.in_cs, ocs = UNIT ? 1 : d.out_cs;
  for (int64_t b = blockIdx.z; b < w.nbatch; b += gridDim.z) {
    int64_t oi, oo;
    tr_batch_offsets(d, b, oi, oo);
    for (int64_t t = blockIdx.x; t < w.ntiles; t += gridDim.x) {
      int64_t tr, tc;
      tr_tile_coords(t, w.ntc, tr, tc);
      const int64_t r = tr * NC_TR + threadIdx.x, c = tc * NC_TC + threadIdx.y;
      if (r < d.rows && c < d.cols) out[oo + c * d.out_rs + r * ocs] = in[oi + r * d.in_rs + c * ics];
    }
  }
}

// ---------------------------------------------------------------- launcher

template <typename T>
static void launch(const ck_tr_desc *d, const ck_env *env) {
  tr_launch_tiles(d, env, NC_TR, NC_TC, dim3(NC_TR, NC_TC), transpose_naive_col_kernel<T, true>,
                  transpose_naive_col_kernel<T, false>);
}

extern "C" const char *ck_transpose_naive_col_supports(const void *desc) {
  return tr_supports_common((const ck_tr_desc *)desc);
}

CK_TR_LAUNCHER(ck_transpose_naive_col, launch)
