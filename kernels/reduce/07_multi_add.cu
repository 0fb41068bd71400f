/*
 * 07_multi_add.cu — Harris step 7: multiple elements per thread (algorithm cascading).
 *
 * Idea: Brent's theorem — a tree over n elements with n/2 threads costs O(n log n) work-time; folding
 * O(log n) elements sequentially per thread before the tree brings it back to O(n). Each block now walks
 * its row with a grid-stride loop (two loads per trip, blockDim apart, as Harris wrote it) and only then runs
 * step 6's unrolled tree. The grid no longer grows with n: it is a few waves of the device
 * (env->sm_count x resident blocks per SM), split over the rows.
 * Launch: 256 threads. per_row blocks per row (1 when outer fills the grid; else target/outer, each
 * folding >= 2048 elements), grid = outer * per_row; with per_row > 1 the shared finisher reduces partials.
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]; any len >= 1.
 */
#include "red_ops.cuh"

using namespace ckred;

// ---------------------------------------------------------------- kernel

template <class O, int BS>
__global__ void __launch_bounds__(BS) reduce_multi_add_kernel(const typename O::value_t *__restrict__ x,
                                                              int64_t outer, int64_t len, int64_t per_row,
                                                              typename O::acc_t *part, typename O::out_t *out,
                                                              int64_t *idx) {
  using acc_t = typename O::acc_t;
  __shared__ acc_t sdata[BS];
  const unsigned tid = threadIdx.x;
  for (int64_t b = blockIdx.x; b < outer * per_row; b += gridDim.x) {
    const int64_t row = b / per_row, c = b - row * per_row;
    const typename O::value_t *xr = x + row * len;
    const int64_t step = 2 * BS * per_row; /* the row's "grid size" */
    acc_t a = O::identity();
    for (int64_t r = c * 2 * BS + tid; r < len; r += step) {
      a = O::combine(a, O::make(xr[r], r));
      if (r + BS < len) a = O::combine(a, O::make(xr[r + BS], r + BS));
    }
    sdata[tid] = a;
    __syncthreads();
    tree_unrolled<O, BS>(sdata, tid);
    // put_result<O>(sdata[0], ...) spelled out: through the helper the ArgOp kernels get other register counts
    if (tid == 0) {
      if (part) part[b] = sdata[0];
      else O::store(sdata[0], out, idx, row, len);
    }
    __syncthreads();
  }
}

// ---------------------------------------------------------------- launcher

template <class O>
static int launch(const ck_red_desc &d, const ck_env *env) {
  constexpr int BS = 256;
  static ck_devcache occs; /* per instantiation and device; a benign race if two threads fill it */
  int &occ = occs.v[env->device];
  if (!occ) occ = occupancy((const void *)reduce_multi_add_kernel<O, BS>, BS, 0);
  const Plan p = plan_rows(d.outer, d.len, (int64_t)env->sm_count * occ, 8 * BS, 1);
  return run_chunk_kernel<O>(d, env, reduce_multi_add_kernel<O, BS>, p.per_row, BS, 0); // p.items blocks
}

CK_RED_LAUNCHER(ck_reduce_multi_add, launch)

extern "C" const char *ck_reduce_multi_add_supports(const void *desc) {
  return check_rows((const ck_red_desc *)desc);
}
