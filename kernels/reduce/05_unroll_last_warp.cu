/*
 * 05_unroll_last_warp.cu — Harris step 5: unroll the last warp.
 *
 * Idea: once s <= 32 only one warp is active, so the loop's __syncthreads and its index arithmetic are pure
 * overhead. Stop the loop at s > 32 and let warp 0 finish with six straight-line steps. Harris relied on
 * `volatile` and implicit warp lockstep; since Volta that is a race, so each step reads, __syncwarp()s,
 * writes and __syncwarp()s again (still no block-wide barrier).
 * Launch: as step 4 (256 threads, 512 elements per block, shared finisher). Needs blockDim >= 64.
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]; any len >= 1.
 */
#include "red_ops.cuh"

using namespace ckred;

// ---------------------------------------------------------------- kernel

template <class O>
__device__ __forceinline__ void last_warp(typename O::acc_t *sdata, unsigned tid) {
  typename O::acc_t v = sdata[tid];
  v = O::combine(v, sdata[tid + 32]); __syncwarp(); sdata[tid] = v; __syncwarp();
  v = O::combine(v, sdata[tid + 16]); __syncwarp(); sdata[tid] = v; __syncwarp();
  v = O::combine(v, sdata[tid + 8]);  __syncwarp(); sdata[tid] = v; __syncwarp();
  v = O::combine(v, sdata[tid + 4]);  __syncwarp(); sdata[tid] = v; __syncwarp();
  v = O::combine(v, sdata[tid + 2]);  __syncwarp(); sdata[tid] = v; __syncwarp();
  v = O::combine(v, sdata[tid + 1]);  __syncwarp(); sdata[tid] = v;
}

template <class O>
__global__ void reduce_unroll_last_warp_kernel(const typename O::value_t *__restrict__ x, int64_t outer, int64_t len,
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
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
      if (tid < s) sdata[tid] = O::combine(sdata[tid], sdata[tid + s]);
      __syncthreads();
    }
    if (tid < 32) last_warp<O>(sdata, tid);
    if (tid == 0) put_result<O>(sdata[0], part, b, out, idx, row, len);
    __syncthreads();
  }
}

// ---------------------------------------------------------------- launcher

template <class O>
static int launch(const ck_red_desc &d, const ck_env *env) {
  constexpr int BS = 256;
  return run_chunk_kernel<O>(d, env, reduce_unroll_last_warp_kernel<O>, cdiv(d.len, 2 * BS), BS,
                             BS * sizeof(typename O::acc_t));
}

CK_RED_LAUNCHER(ck_reduce_unroll_last_warp, launch)

extern "C" const char *ck_reduce_unroll_last_warp_supports(const void *desc) {
  return check_rows((const ck_red_desc *)desc);
}
