/*
 * search_common.cuh — what searchsorted's rungs share (issue 33): the comparison is on the sort ladder's keys
 * (kernels/sort/sort_common.cuh: NaN the largest, -0 == +0), so searchsorted agrees with ck.sort's order.
 */
#ifndef CK_SEARCH_COMMON_CUH
#define CK_SEARCH_COMMON_CUH

#include "../sort/sort_common.cuh"

namespace cksearch {

using namespace cksort;

/* The key of element i of the bits array p. */
template <class K, int KIND, int EB> struct KeyAt {
  const K *p;
  __host__ __device__ __forceinline__ K operator()(int64_t i) const {
#ifdef __CUDA_ARCH__
    return key_of<K, KIND, EB>(p[i], false);
#else
    return (K)i; /* never called on the host (thrust runs the iterator on the device) */
#endif
  }
};

} // namespace cksearch

#endif
