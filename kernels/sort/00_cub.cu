/*
 * 00_cub.cu — library reference: CUB's radix sorts.
 *
 * One line (outer * inner == 1): cub::DeviceRadixSort::SortPairs over the mapped keys (sort_common.cuh) with the
 * element numbers as values; many lines: cub::DeviceSegmentedSort::StableSortPairs with each line a segment
 * (begin offsets l * len from a counting iterator). Both are stable, so equal keys keep their order as in the
 * other rungs. Keys and values go through our make_keys and gather kernels; temporary storage from
 * env->ws_alloc. A sort of integers without indices along contiguous lines sorts the values themselves
 * (cub::DeviceRadixSort::SortKeys, DeviceSegmentedSort::SortKeys): no mapping, payload or gather.
 * Operands: x contiguous [outer, len, inner]; out, idx contiguous [outer, k, inner] (either may be NULL; the
 * values-only path needs out, inner == 1 and k == len).
 */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "sort_common.cuh"

using namespace cksort;

struct LineStart {
  int64_t len;
  __host__ __device__ __forceinline__ int64_t operator()(int64_t l) const { return l * len; }
};

struct CubSorter {
  template <class K>
  int operator()(const ck_env *env, K *keys, uint32_t *vals, K *keys2, uint32_t *vals2, int64_t n, int64_t len,
                 int64_t lines, int key_bits, uint32_t **sorted) const {
    ck_order_check(env);
    cudaStream_t s = (cudaStream_t)env->stream;
    *sorted = vals2;
    if (lines == 1)
      return with_temp(env, [&](void *t, size_t &b) {
        return cub::DeviceRadixSort::SortPairs(t, b, keys, keys2, vals, vals2, n, 0, key_bits, s);
      });
    auto begins = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LineStart{len});
    return with_temp(env, [&](void *t, size_t &b) {
      return cub::DeviceSegmentedSort::StableSortPairs(t, b, keys, keys2, vals, vals2, n, lines, begins, begins + 1, s);
    });
  }
};

/* A sort without indices ({indices = false}) of integers along contiguous lines: CUB sorts the values themselves,
 * with no key mapping, payload or gather (equal integers are indistinguishable, so stability is moot). Floats
 * keep the pair sort: -0 and +0 compare equal and keep their order, and NaNs keep their bits. */
template <class T> static int sort_values_only(const ck_sort_desc &d, const ck_env *env) {
  ck_order_check(env);
  cudaStream_t s = (cudaStream_t)env->stream;
  const T *x = (const T *)d.x;
  T *out = (T *)d.out;
  const int64_t n = d.outer * d.len;
  if (d.outer == 1)
    return with_temp(env, [&](void *t, size_t &b) {
      return d.descending ? cub::DeviceRadixSort::SortKeysDescending(t, b, x, out, n, 0, (int)sizeof(T) * 8, s)
                          : cub::DeviceRadixSort::SortKeys(t, b, x, out, n, 0, (int)sizeof(T) * 8, s);
    });
  auto begins = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LineStart{d.len});
  return with_temp(env, [&](void *t, size_t &b) {
    return d.descending ? cub::DeviceSegmentedSort::SortKeysDescending(t, b, x, out, n, d.outer, begins, begins + 1, s)
                        : cub::DeviceSegmentedSort::SortKeys(t, b, x, out, n, d.outer, begins, begins + 1, s);
  });
}

extern "C" int ck_sort_cub(const void *desc, const ck_env *env) {
  const ck_sort_desc &d = *(const ck_sort_desc *)desc;
  if (!d.idx && d.out && d.inner == 1 && d.k == d.len)
    return by_key(d.dtype, [&](auto tag) { /* the dtype's key type, signed again where the dtype is */
      using Tg = decltype(tag);
      using K = typename Tg::key_t;
      if constexpr (Tg::kind == KIND_FLOAT) return run_sort(d, env, CubSorter{});
      else return sort_values_only<std::conditional_t<Tg::kind == KIND_SIGNED, std::make_signed_t<K>, K>>(d, env);
    });
  return run_sort(d, env, CubSorter{});
}

extern "C" const char *ck_sort_cub_supports(const void *desc) { return check_n((const ck_sort_desc *)desc); }
