/*
 * 01_global_atomics.cu — histogram step 1: one global atomic per element.
 *
 * Idea: the obvious histogram — every thread bins its elements and increments the global counter. Correct for
 * any number of bins, but the atomics of all SMs meet at the same few addresses when bins are few (every
 * element of a narrow distribution hits one counter), and each costs an L2 round trip.
 * Launch: 256 threads, grid-stride over the elements. Operands: x contiguous [n], out [bins] i64 (zeroed here).
 */
#include "hist_common.cuh"

using namespace ckhist;

template <class T>
__global__ void __launch_bounds__(256) hist_global_kernel(const T *__restrict__ x, int64_t n, double lo, double hi,
                                                          int64_t bins, unsigned long long *out) {
  const BinOf<T> bin{lo, hi, bins};
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const int b = bin(x[i]);
    if (b >= 0) atomicAdd(out + b, 1ull);
  }
}

extern "C" int ck_hist_global_atomics(const void *desc, const ck_env *env) {
  const ck_hist_desc &d = *(const ck_hist_desc *)desc;
  cudaStream_t s = (cudaStream_t)env->stream;
  int err = (int)cudaMemsetAsync(d.out, 0, (size_t)d.bins * sizeof(int64_t), s);
  if (err) return err;
  return dispatch(d, [&](auto x) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(x)>>;
    ck_note(env, hist_global_kernel<T>, 256, 0);
    hist_global_kernel<T><<<grid_for(cdiv(d.n, 256 * 8)), 256, 0, s>>>(x, d.n, d.lo, d.hi, d.bins,
                                                                       (unsigned long long *)d.out);
    return (int)cudaGetLastError();
  });
}
