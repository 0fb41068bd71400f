/*
 * 11_rows_block.cu — layout variant: one block per row, for many long rows.
 *
 * Idea: when there are enough rows to fill the device several times over, give each row to one block:
 * no partials, no second pass, no atomics, and the hardware block scheduler balances the load (a persistent
 * grid would leave some SMs a row short at the end). The block streams its row with 16-byte loads, U = 4 in
 * flight per thread (16 KB per block per trip for f32), then one shuffle block reduction.
 * Launch: 256 threads, grid = outer (capped; blocks loop).
 * Limits: supports() wants outer >= 1024 rows of >= 512 elements: with fewer rows a block per row leaves SMs
 * idle (single_pass cuts rows into chunks), and short rows are rows_warp's.
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]; any len >= 1, any alignment.
 */
#include "red_ops.cuh"

using namespace ckred;

// ---------------------------------------------------------------- kernel

template <class O, int BS, int U>
__global__ void __launch_bounds__(BS) reduce_rows_block_kernel(const typename O::value_t *__restrict__ x,
                                                               int64_t outer, int64_t len, typename O::out_t *out,
                                                               int64_t *idx) {
  for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
    typename O::acc_t a = fold_range_vec<O, U>(x + row * len, 0, len, threadIdx.x, BS, O::identity());
    a = block_reduce<O, BS>(a);
    if (threadIdx.x == 0) O::store(a, out, idx, row, len);
    __syncthreads();
  }
}

// ---------------------------------------------------------------- launcher

template <class O>
static int launch(const ck_red_desc &d, const ck_env *env) {
  constexpr int BS = 256, U = 4;
  ck_note(env, reduce_rows_block_kernel<O, BS, U>, BS, 0);
  reduce_rows_block_kernel<O, BS, U><<<grid_for(d.outer), BS, 0, (cudaStream_t)env->stream>>>(
      (const typename O::value_t *)d.x, d.outer, d.len, (typename O::out_t *)d.out, d.idx);
  return (int)cudaGetLastError();
}

CK_RED_LAUNCHER_H(ck_reduce_rows_block, launch)

extern "C" const char *ck_reduce_rows_block_supports(const void *desc) {
  const ck_red_desc *d = (const ck_red_desc *)desc;
  if (d->inner != 1) return "reduces contiguous rows only (inner == 1); 'cols' reduces leading dims";
  if (d->outer < 1024) return "needs >= 1024 rows to fill the GPU (single_pass splits fewer, longer rows)";
  if (d->len < 512) return "long rows only (len >= 512): shorter rows go to rows_warp";
  return check_common(d);
}
