/*
 * 01_binary_search.cu — searchsorted: a thread per value, a binary search over the sorted keys.
 *
 * Idea: log2(n) dependent loads per value; the first levels of every search read the same few elements, which
 * stay in L1 and L2, so the cost is the last levels' scattered loads. The keys are the sort ladder's
 * (sort_common.cuh's key_of), so the positions follow ck.sort's order. One launch, no workspace, no library
 * call (thrust's vectorised bounds cost a launch or more and their own dispatch).
 * Launch: 256 threads, grid-stride over the values. Operands: sorted [n], values [m], out [m] i64 (1-based).
 */
#include "search_common.cuh"

using namespace cksearch;

template <class K, int KIND, int EB>
__global__ void __launch_bounds__(256) search_binary_kernel(const K *__restrict__ sorted, int64_t n,
                                                            const K *__restrict__ values, int64_t m, int right,
                                                            int64_t *out) {
  for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < m; j += (int64_t)gridDim.x * blockDim.x) {
    const K v = key_of<K, KIND, EB>(values[j], false);
    int64_t lo = 0, hi = n; /* the answer is in [lo, hi] */
    while (lo < hi) {
      const int64_t mid = (lo + hi) >> 1;
      const K s = key_of<K, KIND, EB>(__ldg(sorted + mid), false);
      if (right ? s <= v : s < v) lo = mid + 1;
      else hi = mid;
    }
    out[j] = lo + 1;
  }
}

extern "C" int ck_search_binary_search(const void *desc, const ck_env *env) {
  const ck_search_desc &d = *(const ck_search_desc *)desc;
  return by_key(d.dtype, [&](auto tag) {
    using Tg = decltype(tag);
    using K = typename Tg::key_t;
    const auto kernel = search_binary_kernel<K, Tg::kind, Tg::eb>;
    ck_note(env, kernel, 256, 0);
    kernel<<<grid_for(cdiv(d.m, 256)), 256, 0, (cudaStream_t)env->stream>>>((const K *)d.sorted, d.n,
                                                                            (const K *)d.values, d.m, d.right, d.out);
    return (int)cudaGetLastError();
  });
}
