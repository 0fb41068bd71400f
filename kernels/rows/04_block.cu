/*
 * 04_block.cu — rung 4: a block per row, for long rows.
 *
 * Idea: a row of 100k elements is far too much for one warp's registers, and a warp per row leaves the GPU
 * idle when rows are few. A block of 512 threads streams its row: each thread folds elements t, t + 512, ...
 * into its own online statistics (rung 2's update), the block merges the 512 partial statistics (shuffles
 * within warps, one value per warp through shared memory), and a second pass reads the row again to write.
 * Change from rung 3: any length, any number of rows; the price is the second read, which comes from L2 while
 * the resident blocks' rows fit there (132 SMs x 4 blocks x a 32 KiB row = 17 MB < 50 MB).
 * Launch: 512 threads, a block per row, grid-stride over rows.
 * Limits: rows only (inner == 1). Operands: x, out contiguous [outer, len]; w, b [len] or NULL.
 */
#include "rows_common.cuh"

using namespace ckrows;

#define BLOCK_THREADS 512

// ---------------------------------------------------------------- kernel

template <class Op> __global__ void __launch_bounds__(BLOCK_THREADS) rows_block_kernel(const ck_rows_desc d) {
  using T = typename Op::T;
  using A = typename Op::A;
  using S = typename Op::Stat;
  __shared__ S sh[32];
  for (int64_t row = blockIdx.x; row < d.outer; row += gridDim.x) {
    const T *x = (const T *)d.x + row * d.len;
    T *out = (T *)d.out + row * d.len;
    S s;
    s.init();
    for (int64_t r = threadIdx.x; r < d.len; r += BLOCK_THREADS) s.add(ld<A>(x[r]));
    s = block_merge(s, sh);
    const typename Op::Par p = Op::finish(s, d.len, d.eps);
    for (int64_t r = threadIdx.x; r < d.len; r += BLOCK_THREADS) {
      A w, b;
      wb<Op>(d, r, w, b);
      out[r] = st<T>(Op::y(ld<A>(x[r]), p, w, b));
    }
  }
}

// ---------------------------------------------------------------- launcher

template <class Op> static int launch(const ck_rows_desc &d, const ck_env *env) {
  ck_note(env, rows_block_kernel<Op>, BLOCK_THREADS, 0);
  rows_block_kernel<Op><<<grid_for(d.outer), BLOCK_THREADS, 0, (cudaStream_t)env->stream>>>(d);
  return (int)cudaGetLastError();
}

CK_ROWS_LAUNCHER(ck_rows_block, launch)

extern "C" const char *ck_rows_block_supports(const void *desc) {
  const ck_rows_desc *d = (const ck_rows_desc *)desc;
  return d->inner != 1 ? "rows only (the last dim); 'online' takes a leading dim" : nullptr;
}
