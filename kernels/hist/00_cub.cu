/*
 * 00_cub.cu — library reference: CUB's DeviceHistogram::HistogramEven.
 *
 * CUB computes bins from the samples with its own arithmetic in the sample type, which can put a value on a
 * boundary in a different bin than the host oracle does; so its samples are our bin numbers (a transform
 * iterator applying hist_bin.h's rule), counted with bins + 1 levels over [0, bins): the same counts as the
 * other rungs by construction, CUB doing the counting (privatised histograms, its tuning). -1 (outside, NaN)
 * falls below the lowest level and is not counted.
 * Limits: supports() takes up to 2^31 - 2 bins and fewer than 2^31 elements (CUB's int levels and offsets).
 * Operands: x contiguous [n], out [bins] i64.
 */
#include <cub/device/device_histogram.cuh>
#include <thrust/iterator/transform_iterator.h>

#include "hist_common.cuh"

using namespace ckhist;

extern "C" int ck_hist_cub(const void *desc, const ck_env *env) {
  const ck_hist_desc &d = *(const ck_hist_desc *)desc;
  cudaStream_t s = (cudaStream_t)env->stream;
  int err = (int)cudaMemsetAsync(d.out, 0, (size_t)d.bins * sizeof(int64_t), s);
  if (err) return err;
  ck_order_check(env);
  return dispatch(d, [&](auto x) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(x)>>;
    auto bins = thrust::make_transform_iterator(x, BinOf<T>{d.lo, d.hi, d.bins});
    auto *out = reinterpret_cast<unsigned long long *>(d.out);
    return with_temp(env, [&](void *t, size_t &b) {
      return cub::DeviceHistogram::HistogramEven(t, b, bins, out, (int)d.bins + 1, 0, (int)d.bins, (int)d.n, s);
    });
  });
}

extern "C" const char *ck_hist_cub_supports(const void *desc) {
  const ck_hist_desc *d = (const ck_hist_desc *)desc;
  if (d->bins > 2147483646) return "CUB takes up to 2^31 - 2 bins (int levels)";
  if (d->n > 2147483647) return "CUB's histogram takes fewer than 2^31 elements (int offsets)";
  return nullptr;
}
