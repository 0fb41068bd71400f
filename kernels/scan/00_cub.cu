/*
 * 00_cub.cu — library reference: CUB's DeviceScan.
 *
 * One scan (outer == 1): cub::DeviceScan::InclusiveScan / ExclusiveScan, or InclusiveSum / ExclusiveSum for a sum
 * read and written in its own type (f32, f64: CUB's tuned path, the one CuPy and PyTorch take). Rows (outer > 1,
 * inner == 1): InclusiveScanByKey / ExclusiveScanByKey with the row number (a transform of a counting iterator) as
 * the key, so one call scans every row. Where the accumulator differs from what is read or written, the input goes
 * through a transform iterator that widens to it (uint64 for integer sums, f32 for halves) and the output through a
 * transform output iterator that rounds or reinterprets, so CUB computes exactly what the ladder computes, with our
 * combine() (NaN rule included); otherwise CUB gets the plain pointers.
 * Temporary storage comes from env->ws_alloc. Limits: supports() refuses inner > 1 (CUB has no strided
 * segments; 'cols' scans leading dims).
 * Operands: x contiguous [outer, len], out contiguous [outer, len]; any len >= 1.
 */
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>

#include "scan_common.cuh"

using namespace ckscan;

// ---------------------------------------------------------------- functors

template <class P> struct CombineFn {
  __host__ __device__ __forceinline__ typename P::acc_t operator()(const typename P::acc_t &a,
                                                                   const typename P::acc_t &b) const {
    return P::combine(a, b);
  }
};
template <class P> struct LoadFn {
  __host__ __device__ __forceinline__ typename P::acc_t operator()(const typename P::in_t &x) const { return P::load(x); }
};
template <class P> struct StoreFn {
  __host__ __device__ __forceinline__ typename P::out_t operator()(const typename P::acc_t &a) const { return P::store(a); }
};
struct RowOf {
  int64_t len;
  __host__ __device__ __forceinline__ int64_t operator()(int64_t k) const { return k / len; }
};

// ---------------------------------------------------------------- launcher

/* The scan over in/out, iterators or pointers: rows through ScanByKey; one scan of a sum on plain pointers through
 * InclusiveSum / ExclusiveSum (CUB's tuned path for its own plus: what CuPy and PyTorch call). */
template <class P, class In, class Out> static int run(const ck_scan_desc &d, const ck_env *env, In in, Out out) {
  ck_order_check(env);
  cudaStream_t s = (cudaStream_t)env->stream;
  const CombineFn<P> op;
  const typename P::acc_t init = P::identity();
  const int64_t n = d.outer * d.len;
  if (d.outer == 1) {
    if constexpr (std::is_pointer_v<In> && P::op == CK_SCAN_SUM) {
      if (d.exclusive)
        return with_temp(env, [&](void *t, size_t &b) { return cub::DeviceScan::ExclusiveSum(t, b, in, out, n, s); });
      return with_temp(env, [&](void *t, size_t &b) { return cub::DeviceScan::InclusiveSum(t, b, in, out, n, s); });
    }
    if (d.exclusive)
      return with_temp(env, [&](void *t, size_t &b) { return cub::DeviceScan::ExclusiveScan(t, b, in, out, op, init, n, s); });
    return with_temp(env, [&](void *t, size_t &b) { return cub::DeviceScan::InclusiveScan(t, b, in, out, op, n, s); });
  }
  auto keys = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), RowOf{d.len});
  const ::cuda::std::equal_to<> eq;
  if (d.exclusive)
    return with_temp(env, [&](void *t, size_t &b) {
      return cub::DeviceScan::ExclusiveScanByKey(t, b, keys, in, out, op, init, n, eq, s);
    });
  return with_temp(env, [&](void *t, size_t &b) {
    return cub::DeviceScan::InclusiveScanByKey(t, b, keys, in, out, op, n, eq, s);
  });
}

/* Plain pointers where what is read, carried and written are one type (f32, f64, and max/min of 4- and 8-byte
 * types): CUB then loads and stores as it does for its own callers. A transform iterator in front of the input
 * takes CUB off its vectorised, tuned loads: the first form wrapped every dtype and ran 2^28 f32 in 1.019 ms against
 * InclusiveSum's 0.882 (H100, lab/scan_lookback_probe.cu), which made the ladder's "% of CUB" flatter our rungs. */
template <class P> static int launch(const ck_scan_desc &d, const ck_env *env) {
  using in_t = typename P::in_t;
  using acc_t = typename P::acc_t;
  using out_t = typename P::out_t;
  if constexpr (std::is_same_v<in_t, acc_t> && std::is_same_v<out_t, acc_t>)
    return run<P>(d, env, (const acc_t *)d.x, (acc_t *)d.out);
  else
    return run<P>(d, env, thrust::make_transform_iterator((const in_t *)d.x, LoadFn<P>{}),
                  thrust::make_transform_output_iterator((out_t *)d.out, StoreFn<P>{}));
}

CK_SCAN_LAUNCHER(ck_scan_cub, true, launch)

extern "C" const char *ck_scan_cub_supports(const void *desc) { return rows_only((const ck_scan_desc *)desc); }
