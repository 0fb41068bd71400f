/*
 * 03_sequential.cu — Harris step 3: sequential addressing.
 *
 * Idea: instead of pairing neighbours at a growing stride, the first half of the block adds the second half
 * (sdata[tid] += sdata[tid + s], s = blockDim/2, /4, ...). Each warp reads 32 consecutive words: no bank
 * conflicts, and the active threads stay contiguous. New problem: half the threads idle from the first round,
 * right after the load.
 * Launch: as step 1 (256 threads, one block per 256-element chunk of a row, shared finisher for partials).
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]; any len >= 1 (identity for the tail).
 */
#include "red_ops.cuh"

using namespace ckred;

// ---------------------------------------------------------------- kernel

template <class O>
__global__ void reduce_sequential_kernel(const typename O::value_t *__restrict__ x, int64_t outer, int64_t len,
                                         int64_t nch, typename O::acc_t *part, typename O::out_t *out,
                                         int64_t *idx) {
  using acc_t = typename O::acc_t;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  acc_t *sdata = reinterpret_cast<acc_t *>(smem_raw);
  const unsigned tid = threadIdx.x;
  for (int64_t b = blockIdx.x; b < outer * nch; b += gridDim.x) {
    const int64_t row = b / nch, c = b - row * nch;
    const int64_t r = c * blockDim.x + tid;
    sdata[tid] = r < len ? O::make(x[row * len + r], r) : O::identity();
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
  return run_chunk_kernel<O>(d, env, reduce_sequential_kernel<O>, cdiv(d.len, BS), BS, BS * sizeof(typename O::acc_t));
}

CK_RED_LAUNCHER(ck_reduce_sequential, launch)

extern "C" const char *ck_reduce_sequential_supports(const void *desc) {
  return check_rows((const ck_red_desc *)desc);
}
