/*
 * 02_interleaved_strided.cu — Harris step 2: interleaved addressing with a strided index.
 *
 * Idea: replace step 1's divergent `tid % (2*s)` test with a strided index (index = 2*s*tid), so the active
 * threads of each round are contiguous and whole warps retire early. New problem: the strided shared-memory
 * accesses hit the same bank from several threads of a warp (2-way, 4-way, ... conflicts).
 * Launch: as step 1 (256 threads, one block per 256-element chunk of a row, shared finisher for partials).
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]; any len >= 1 (identity for the tail).
 */
#include "red_ops.cuh"

using namespace ckred;

// ---------------------------------------------------------------- kernel

template <class O>
__global__ void reduce_interleaved_strided_kernel(const typename O::value_t *__restrict__ x, int64_t outer,
                                                  int64_t len, int64_t nch, typename O::acc_t *part,
                                                  typename O::out_t *out, int64_t *idx) {
  using acc_t = typename O::acc_t;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  acc_t *sdata = reinterpret_cast<acc_t *>(smem_raw);
  const unsigned tid = threadIdx.x;
  for (int64_t b = blockIdx.x; b < outer * nch; b += gridDim.x) {
    const int64_t row = b / nch, c = b - row * nch;
    const int64_t r = c * blockDim.x + tid;
    sdata[tid] = r < len ? O::make(x[row * len + r], r) : O::identity();
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
      const unsigned index = 2 * s * tid;
      if (index < blockDim.x) sdata[index] = O::combine(sdata[index], sdata[index + s]);
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
  return run_chunk_kernel<O>(d, env, reduce_interleaved_strided_kernel<O>, cdiv(d.len, BS), BS,
                             BS * sizeof(typename O::acc_t));
}

CK_RED_LAUNCHER(ck_reduce_interleaved_strided, launch)

extern "C" const char *ck_reduce_interleaved_strided_supports(const void *desc) {
  return check_rows((const ck_red_desc *)desc);
}
