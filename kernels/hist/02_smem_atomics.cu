/*
 * 02_smem_atomics.cu — histogram step 2: privatised counters in shared memory.
 *
 * Idea: step 1's atomics contend in L2. Each block keeps its own copy of the histogram in shared memory (32-bit
 * counters: shared-memory atomics are fast and contend only within the block), counts a grid-stride share of
 * the elements there, and adds its counters to the global ones at the end: one global atomic per bin and block
 * instead of one per element. A 32-bit counter holds 2^32 - 1, so the grid has at least n / 2^31 blocks.
 * Launch: 256 threads, a few blocks per SM, dynamic shared memory of bins x 4 bytes.
 * Limits: supports() takes up to 8192 bins (32 KB of counters). Operands: x contiguous [n], out [bins] i64.
 */
#include "hist_common.cuh"

using namespace ckhist;

#define HS_MAX_BINS 8192

template <class T>
__global__ void __launch_bounds__(256) hist_smem_kernel(const T *__restrict__ x, int64_t n, double lo, double hi,
                                                        int64_t bins, unsigned long long *out) {
  extern __shared__ unsigned int cnt[];
  const BinOf<T> bin{lo, hi, bins};
  for (int b = threadIdx.x; b < bins; b += blockDim.x) cnt[b] = 0;
  __syncthreads();
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const int b = bin(x[i]);
    if (b >= 0) atomicAdd(cnt + b, 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += blockDim.x)
    if (cnt[b]) atomicAdd(out + b, (unsigned long long)cnt[b]);
}

extern "C" int ck_hist_smem_atomics(const void *desc, const ck_env *env) {
  const ck_hist_desc &d = *(const ck_hist_desc *)desc;
  cudaStream_t s = (cudaStream_t)env->stream;
  int err = (int)cudaMemsetAsync(d.out, 0, (size_t)d.bins * sizeof(int64_t), s);
  if (err) return err;
  const size_t smem = (size_t)d.bins * sizeof(unsigned int);
  int64_t blocks = (int64_t)(env->sm_count > 0 ? env->sm_count : 1) * 4;
  const int64_t most = cdiv(d.n, 256), least = cdiv(d.n, (int64_t)1 << 31);
  if (blocks > most) blocks = most;
  if (blocks < least) blocks = least;
  return dispatch(d, [&](auto x) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(x)>>;
    ck_note(env, hist_smem_kernel<T>, 256, smem);
    hist_smem_kernel<T><<<grid_for(blocks), 256, smem, s>>>(x, d.n, d.lo, d.hi, d.bins, (unsigned long long *)d.out);
    return (int)cudaGetLastError();
  });
}

extern "C" const char *ck_hist_smem_atomics_supports(const void *desc) {
  const ck_hist_desc *d = (const ck_hist_desc *)desc;
  if (d->bins > HS_MAX_BINS) return "up to 8192 bins (32 KB of shared-memory counters); global_atomics takes more";
  return nullptr;
}
