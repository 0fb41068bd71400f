/*
 * 06_complete_unroll.cu — Harris step 6: completely unrolled, block size as a template parameter.
 *
 * Idea: with the block size known at compile time the whole shared-memory tree unrolls (tree_unrolled in
 * red_ops.cuh): no loop, no loop-carried index math, dead rounds removed by the compiler. The launcher
 * switches over the supported sizes so each gets its own instantiation; short rows use smaller blocks so
 * fewer threads sit on identity elements.
 * Launch: BS in {64, 128, 256} threads (smallest power of two >= len/2, at most 256), 2*BS elements per
 * block, grid = outer * ceil(len / (2*BS)); partials go through the shared finisher.
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]; any len >= 1.
 */
#include "red_ops.cuh"

using namespace ckred;

// ---------------------------------------------------------------- kernel

template <class O, int BS>
__global__ void __launch_bounds__(BS) reduce_complete_unroll_kernel(const typename O::value_t *__restrict__ x,
                                                                    int64_t outer, int64_t len, int64_t nch,
                                                                    typename O::acc_t *part,
                                                                    typename O::out_t *out, int64_t *idx) {
  using acc_t = typename O::acc_t;
  __shared__ acc_t sdata[BS];
  const unsigned tid = threadIdx.x;
  for (int64_t b = blockIdx.x; b < outer * nch; b += gridDim.x) {
    const int64_t row = b / nch, c = b - row * nch;
    const int64_t r = c * (2 * BS) + tid, r2 = r + BS;
    const typename O::value_t *xr = x + row * len;
    acc_t a = r < len ? O::make(xr[r], r) : O::identity();
    if (r2 < len) a = O::combine(a, O::make(xr[r2], r2));
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

template <class O, int BS>
static int launch_bs(const ck_red_desc &d, const ck_env *env) {
  return run_chunk_kernel<O>(d, env, reduce_complete_unroll_kernel<O, BS>, cdiv(d.len, 2 * BS), BS, 0);
}

template <class O>
static int launch(const ck_red_desc &d, const ck_env *env) {
  const int64_t half = cdiv(d.len, 2);
  if (half <= 64) return launch_bs<O, 64>(d, env);
  if (half <= 128) return launch_bs<O, 128>(d, env);
  return launch_bs<O, 256>(d, env);
}

CK_RED_LAUNCHER(ck_reduce_complete_unroll, launch)

extern "C" const char *ck_reduce_complete_unroll_supports(const void *desc) {
  return check_rows((const ck_red_desc *)desc);
}
