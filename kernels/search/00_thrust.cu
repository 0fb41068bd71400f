/*
 * 00_thrust.cu — library reference for searchsorted: thrust's vectorised lower_bound / upper_bound.
 *
 * The sorted array and the values are read through transform iterators that give the sort ladder's keys
 * (search_common.cuh), so the bounds follow ck.sort's order (NaN last, -0 == +0). thrust writes 0-based
 * positions into the i64 output; a last pass adds 1 (cukern's positions are 1-based).
 * Operands: sorted contiguous [n], values contiguous [m], out [m] i64.
 */
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "search_common.cuh"

using namespace cksearch;

__global__ void __launch_bounds__(256) search_plus_one_kernel(int64_t *out, int64_t m) {
  for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < m; j += (int64_t)gridDim.x * blockDim.x) out[j] += 1;
}

extern "C" int ck_search_thrust(const void *desc, const ck_env *env) {
  const ck_search_desc &d = *(const ck_search_desc *)desc;
  cudaStream_t s = (cudaStream_t)env->stream;
  ck_order_check(env);
  const int err = by_key(d.dtype, [&](auto tag) {
    using Tg = decltype(tag);
    using K = typename Tg::key_t;
    auto sk = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0),
                                              KeyAt<K, Tg::kind, Tg::eb>{(const K *)d.sorted});
    auto vk = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0),
                                              KeyAt<K, Tg::kind, Tg::eb>{(const K *)d.values});
    if (d.right) thrust::upper_bound(thrust::cuda::par_nosync.on(s), sk, sk + d.n, vk, vk + d.m, d.out);
    else thrust::lower_bound(thrust::cuda::par_nosync.on(s), sk, sk + d.n, vk, vk + d.m, d.out);
    return (int)cudaGetLastError();
  });
  if (err) return err;
  ck_note(env, search_plus_one_kernel, 256, 0);
  search_plus_one_kernel<<<grid_for(cdiv(d.m, 256)), 256, 0, s>>>(d.out, d.m);
  return (int)cudaGetLastError();
}
