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
                                         int64_t nch, typename O::acc_t *part, typename O::value_t *out,
                                         int32_t *idx) {
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
  const int64_t nch = cdiv(d.len, BS);
  return run_chunked<O>(d, env, nch, [&](typename O::acc_t *part, typename O::value_t *out, int32_t *idx) {
    reduce_sequential_kernel<O><<<grid_for(d.outer * nch), BS, BS * sizeof(typename O::acc_t),
                                  (cudaStream_t)env->stream>>>((const typename O::value_t *)d.x, d.outer, d.len, nch,
                                                               part, out, idx);
  });
}

CK_RED_LAUNCHER(ck_reduce_sequential, launch)

extern "C" const char *ck_reduce_sequential_supports(const void *desc) {
  const ck_red_desc *d = (const ck_red_desc *)desc;
  if (d->inner != 1) return "reduces contiguous rows only (inner == 1); 'cols' reduces leading dims";
  return check_common(d);
}
