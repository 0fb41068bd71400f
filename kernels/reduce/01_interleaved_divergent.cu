/*
 * 01_interleaved_divergent.cu — Harris step 1: interleaved addressing with a divergent branch.
 *
 * Idea: each block loads one element per thread into shared memory and halves the active set each round:
 * thread tid works when tid % (2*s) == 0. Correct, but warps stay half-active for every round (divergence)
 * and the modulo is slow. This is the baseline of the ladder.
 * Launch: 256 threads per block, one block per 256-element chunk of a row: grid = outer * ceil(len/256)
 * (capped at 2^31-1, blocks loop). With more than one chunk per row the blocks write partials to workspace
 * and the shared finisher (red_ops.cuh) reduces them, level by level, as Harris's recursive launches do.
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]. Any len >= 1: out-of-range threads
 * load the op's identity.
 */
#include "red_ops.cuh"

using namespace ckred;

// ---------------------------------------------------------------- kernel

template <class O>
__global__ void reduce_interleaved_divergent_kernel(const typename O::value_t *__restrict__ x, int64_t outer,
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
      if (tid % (2 * s) == 0) sdata[tid] = O::combine(sdata[tid], sdata[tid + s]);
      __syncthreads();
    }
    if (tid == 0) put_result<O>(sdata[0], part, b, out, idx, row, len);
    __syncthreads(); /* sdata is reused by the next chunk */
  }
}

// ---------------------------------------------------------------- launcher

template <class O>
static int launch(const ck_red_desc &d, const ck_env *env) {
  constexpr int BS = 256;
  return run_chunk_kernel<O>(d, env, reduce_interleaved_divergent_kernel<O>, cdiv(d.len, BS), BS,
                             BS * sizeof(typename O::acc_t));
}

CK_RED_LAUNCHER(ck_reduce_interleaved_divergent, launch)

extern "C" const char *ck_reduce_interleaved_divergent_supports(const void *desc) {
  return check_rows((const ck_red_desc *)desc);
}
