/*
 * 04_first_add_load.cu — Harris step 4: first add during the global load.
 *
 * Idea: step 3 leaves half the threads idle after the load. Let each thread load two elements, blockDim
 * apart, and combine them on the way into shared memory: a block now covers 2*blockDim elements, so half as
 * many blocks do the same work and every thread does useful work in the first round.
 * Launch: 256 threads, one block per 512-element chunk of a row: grid = outer * ceil(len/512) (blocks loop
 * past 2^31-1); partials go through the shared finisher.
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]; any len >= 1 (both loads guarded).
 */
#include "red_ops.cuh"

using namespace ckred;

// ---------------------------------------------------------------- kernel

template <class O>
__global__ void reduce_first_add_load_kernel(const typename O::value_t *__restrict__ x, int64_t outer, int64_t len,
                                             int64_t nch, typename O::acc_t *part, typename O::out_t *out,
                                             int64_t *idx) {
  using acc_t = typename O::acc_t;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  acc_t *sdata = reinterpret_cast<acc_t *>(smem_raw);
  const unsigned tid = threadIdx.x;
  for (int64_t b = blockIdx.x; b < outer * nch; b += gridDim.x) {
    const int64_t row = b / nch, c = b - row * nch;
    const int64_t r = c * (2 * blockDim.x) + tid, r2 = r + blockDim.x;
    const typename O::value_t *xr = x + row * len;
    acc_t a = r < len ? O::make(xr[r], r) : O::identity();
    if (r2 < len) a = O::combine(a, O::make(xr[r2], r2));
    sdata[tid] = a;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (tid < s) sdata[tid] = O::combine(sdata[tid], sdata[tid + s]);
      __syncthreads();
    }
    if (tid == 0) put_result<O>(sdata[0], part, b, out, idx, row, len);
    __syncthreads();
  }
}

// ---------------------------------------------------------------- launcher

template <class O>
static int launch(const ck_red_desc &d, const ck_env *env) {
  constexpr int BS = 256;
  return run_chunk_kernel<O>(d, env, reduce_first_add_load_kernel<O>, cdiv(d.len, 2 * BS), BS,
                             BS * sizeof(typename O::acc_t));
}

CK_RED_LAUNCHER(ck_reduce_first_add_load, launch)

extern "C" const char *ck_reduce_first_add_load_supports(const void *desc) {
  return check_rows((const ck_red_desc *)desc);
}
