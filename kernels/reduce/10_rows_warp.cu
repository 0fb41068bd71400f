/*
 * 10_rows_warp.cu — layout variant: a warp (or a part of one) per row, for many short rows.
 *
 * Idea: for rows of a few hundred elements a block per row wastes most of its threads and pays a block-wide
 * barrier per row. Here a group of G lanes reads a row with 16-byte loads and reduces it with shuffles alone
 * — no shared memory, no __syncthreads. G is the power of two (<= 32) that gives each lane about U = 4
 * vectors, all issued before use, so a warp serves 32/G rows at once: for 256-float rows, G = 16 and a warp
 * has 2 KB in flight (H200, 1048576x256 f32: 4.1 TB/s; with G = 32, 1 KB per warp, it was 3.3 TB/s).
 * Launch: 256 threads = 256/G rows per block, grid = ceil(outer / (256/G)) (capped; blocks loop), through
 * ck_launch.cuh (the driver-API path on request): this rung is also the default for whole arrays up to 2 KiB (one warp, one
 * launch; src/ops/op_reduce.c), where CUB's sizing call, workspace and launch cost more host time than the sum.
 * Host time of a 16-element sum on the H100 host: 6.1-6.7 us per op with this path (two runs), 7.90 through
 * CUB; PyTorch's torch.sum in the same runs 13.1-14.2.
 * Limits: supports() takes rows up to 2048 elements (longer rows: rows_block / single_pass are faster).
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]; any len >= 1, any alignment.
 */
#include "red_ops.cuh"
#include "../ck_launch.cuh"

using namespace ckred;

#define ROWS_WARP_MAX_LEN 2048

// ---------------------------------------------------------------- kernel

template <class O, int U>
__global__ void __launch_bounds__(256) reduce_rows_warp_kernel(const typename O::value_t *__restrict__ x,
                                                               int64_t outer, int64_t len, int g_log2,
                                                               typename O::out_t *out, int64_t *idx) {
  const int G = 1 << g_log2;
  const int64_t rows_per_block = 256 >> g_log2;
  const int t = threadIdx.x & (G - 1);
  const int64_t sub = threadIdx.x >> g_log2;
  /* Trip count is uniform across the block, so every lane reaches the shuffles. */
  for (int64_t r0 = (int64_t)blockIdx.x * rows_per_block; r0 < outer; r0 += (int64_t)gridDim.x * rows_per_block) {
    const int64_t row = r0 + sub;
    typename O::acc_t a = O::identity();
    if (row < outer) a = fold_range_vec<O, U>(x + row * len, 0, len, t, G, a);
    a = warp_reduce<O>(a, G);
    if (t == 0 && row < outer) O::store(a, out, idx, row, len);
  }
}

// ---------------------------------------------------------------- launcher

template <class O>
static int launch(const ck_red_desc &d, const ck_env *env) {
  constexpr int N = Vec<typename O::value_t>::N;
  constexpr int U = 4;
  const int64_t per_lane = cdiv(cdiv(d.len, N), U); /* lanes needed for U vectors each */
  int g_log2 = 0;
  while (g_log2 < 5 && ((int64_t)1 << g_log2) < per_lane) ++g_log2;
  const int64_t rows_per_block = 256 >> g_log2;
  ck_note(env, reduce_rows_warp_kernel<O, U>, 256, 0);
  return ck_launch_drv(reduce_rows_warp_kernel<O, U>, dim3(grid_for(cdiv(d.outer, rows_per_block))), dim3(256), 0,
                   (cudaStream_t)env->stream, (const typename O::value_t *)d.x, d.outer, d.len, g_log2,
                   (typename O::out_t *)d.out, d.idx);
}

CK_RED_LAUNCHER_H(ck_reduce_rows_warp, launch)

extern "C" const char *ck_reduce_rows_warp_supports(const void *desc) {
  const ck_red_desc *d = (const ck_red_desc *)desc;
  if (d->inner != 1) return "reduces contiguous rows only (inner == 1); 'cols' reduces leading dims";
  if (d->len > ROWS_WARP_MAX_LEN) return "short rows only (len <= 2048): longer rows go to rows_block/single_pass";
  return check_common(d);
}
