/*
 * 00_cub.cu — index ladder, rung 0, the library reference: CUB for the compactions.
 *   count:          cub::DeviceReduce::Sum over the mask's "nonzero" flags (one i64 result);
 *   masked_select:  cub::DeviceSelect::Flagged(values, flags) -> the selected values in row-major order;
 *   nonzero:        cub::DeviceSelect::Flagged(1, 2, 3, ..., flags) -> 1-based row-major positions, then (for the
 *                   [count, ndim] form) one kernel that unravels them into 1-based subscripts.
 * Operands of any strides are read through transform iterators (position -> strided element), so views and
 * broadcast masks need no copy; an element is "nonzero" when any bit of it but a float's sign bit is set
 * (nz_mask), so -0.0 counts as zero and NaN as nonzero, for every dtype by its size.
 * The caller knows the count (it allocated the output from it), so CUB's own count goes to a scratch word.
 */
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "ix_common.cuh"

using namespace ckix;

namespace {

struct Geo {
  int nd, contig;
  int64_t shape[CK_MAX_DIMS], st[CK_MAX_DIMS];
  __host__ __device__ __forceinline__ int64_t off(int64_t p) const {
    if (contig) return p;
    int64_t o = 0;
    for (int k = nd - 1; k >= 0; --k) {
      o += (p % shape[k]) * st[k];
      p /= shape[k];
    }
    return o;
  }
};

Geo geo_of(const ck_ix_desc &d, const int64_t *st) {
  Geo g;
  g.nd = d.nd;
  int64_t want = 1;
  g.contig = 1;
  for (int k = d.nd - 1; k >= 0; --k) {
    g.shape[k] = d.shape[k];
    g.st[k] = st[k];
    if (d.shape[k] != 1 && st[k] != want) g.contig = 0;
    want *= d.shape[k];
  }
  return g;
}

struct FlagFn {
  const uint8_t *base;
  int es;
  uint64_t mask;
  Geo g;
  __host__ __device__ __forceinline__ bool operator()(int64_t p) const {
    const uint8_t *e = base + g.off(p) * es;
    uint64_t v;
    switch (es) {
    case 1: v = *e; break;
    case 2: v = *(const uint16_t *)e; break;
    case 4: v = *(const uint32_t *)e; break;
    case 8: v = *(const uint64_t *)e; break;
    default: v = ((const uint64_t *)e)[0] | ((const uint64_t *)e)[1]; break;
    }
    return (v & mask) != 0;
  }
};
struct CountFn {
  FlagFn f;
  __host__ __device__ __forceinline__ int64_t operator()(int64_t p) const { return f(p) ? 1 : 0; }
};
/* The dense fast path: a contiguous 1-byte mask read directly (a small functor: the strided ones carry a 136-byte
 * geometry, which CUB's agents copy per item; that path measured 20-40x slower on the H100). */
struct ByteNz {
  const uint8_t *p;
  __host__ __device__ __forceinline__ int64_t operator()(int64_t i) const { return p[i] != 0; }
};
template <class T> struct ValFn {
  const T *base;
  Geo g;
  __host__ __device__ __forceinline__ T operator()(int64_t p) const { return base[g.off(p)]; }
};

template <class R> int with_temp(const ck_env *env, R &&run) {
  size_t bytes = 0;
  int err = (int)run((void *)nullptr, bytes);
  if (err) return err;
  void *t = env->ws_alloc(env->owner, bytes ? bytes : 1);
  if (!t) return (int)cudaErrorMemoryAllocation;
  err = (int)run(t, bytes);
  env->ws_free(env->owner, t);
  return err;
}

} // namespace

extern "C" const char *ck_index_cub_supports(const void *desc) {
  const ck_ix_desc *d = (const ck_ix_desc *)desc;
  if (d->fn != CK_IX_COUNT && d->fn != CK_IX_MASKED_SELECT && d->fn != CK_IX_NONZERO)
    return "cub runs the compactions only (count, masked_select, nonzero)";
  return nullptr;
}

extern "C" int ck_index_cub(const void *desc, const ck_env *env) {
  const ck_ix_desc &d = *(const ck_ix_desc *)desc;
  cudaStream_t s = (cudaStream_t)env->stream;
  ck_order_check(env);
  const FlagFn flags{(const uint8_t *)d.ix, d.ix_es, d.nz_mask, geo_of(d, d.ix_st)};
  auto fl = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), flags);
  const int64_t n = d.numel;
  const Geo gix = geo_of(d, d.ix_st);
  if (gix.contig && d.ix_es == 1) { /* the dense fast path: pointers where CUB takes them */
    const uint8_t *mp = (const uint8_t *)d.ix;
    if (d.fn == CK_IX_COUNT) {
      auto cnt = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), ByteNz{mp});
      return with_temp(env, [&](void *t, size_t &b) { return cub::DeviceReduce::Sum(t, b, cnt, (int64_t *)d.out, n, s); });
    }
    const Geo gsrc = geo_of(d, d.src_st);
    if (d.fn == CK_IX_NONZERO || (d.fn == CK_IX_MASKED_SELECT && gsrc.contig)) {
      const bool subs = d.fn == CK_IX_NONZERO && d.dim_st == 1;
      int64_t *lin = subs ? (int64_t *)env->ws_alloc(env->owner, (size_t)(d.bound > 0 ? d.bound : 1) * sizeof(int64_t))
                          : (int64_t *)d.out;
      if (!lin) return (int)cudaErrorMemoryAllocation;
      int64_t *nsel = (int64_t *)env->ws_alloc(env->owner, 2 * sizeof(int64_t));
      if (!nsel) return (int)cudaErrorMemoryAllocation;
      int err = by_size(d.fn == CK_IX_NONZERO ? 8 : d.es, [&](auto es) {
        using T = typename Elem<es.value>::T;
        if (d.fn == CK_IX_NONZERO)
          return with_temp(env, [&](void *t, size_t &b) {
            return cub::DeviceSelect::Flagged(t, b, thrust::counting_iterator<int64_t>(1), mp, lin, nsel, n, s);
          });
        return with_temp(env, [&](void *t, size_t &b) {
          return cub::DeviceSelect::Flagged(t, b, (const T *)d.src, mp, (T *)d.out, nsel, n, s);
        });
      });
      if (!err && subs) err = unravel_launch(lin, d.bound, (int64_t *)d.out, d.nd, d.shape, env);
      if (subs) env->ws_free(env->owner, lin);
      env->ws_free(env->owner, nsel);
      return err;
    }
  }
  if (d.fn == CK_IX_COUNT) {
    auto cnt = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), CountFn{flags});
    return with_temp(env, [&](void *t, size_t &b) { return cub::DeviceReduce::Sum(t, b, cnt, (int64_t *)d.out, n, s); });
  }
  int64_t *nsel = (int64_t *)env->ws_alloc(env->owner, 2 * sizeof(int64_t));
  if (!nsel) return (int)cudaErrorMemoryAllocation;
  int err;
  if (d.fn == CK_IX_MASKED_SELECT) {
    err = by_size(d.es, [&](auto es) {
      using T = typename Elem<es.value>::T;
      auto vals = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0),
                                                  ValFn<T>{(const T *)d.src, geo_of(d, d.src_st)});
      return with_temp(env, [&](void *t, size_t &b) {
        return cub::DeviceSelect::Flagged(t, b, vals, fl, (T *)d.out, nsel, n, s);
      });
    });
  } else { /* NONZERO: positions, then subscripts when dim_st == 1 */
    const bool subs = d.dim_st == 1;
    int64_t *lin = subs ? (int64_t *)env->ws_alloc(env->owner, (size_t)(d.bound > 0 ? d.bound : 1) * sizeof(int64_t))
                        : (int64_t *)d.out;
    if (!lin) err = (int)cudaErrorMemoryAllocation;
    else {
      err = with_temp(env, [&](void *t, size_t &b) {
        return cub::DeviceSelect::Flagged(t, b, thrust::counting_iterator<int64_t>(1), fl, lin, nsel, n, s);
      });
      if (!err && subs) err = unravel_launch(lin, d.bound, (int64_t *)d.out, d.nd, d.shape, env);
      if (subs) env->ws_free(env->owner, lin);
    }
  }
  env->ws_free(env->owner, nsel);
  return err;
}
