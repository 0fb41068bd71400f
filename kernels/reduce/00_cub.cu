/*
 * 00_cub.cu — library reference: CUB.
 *
 * Full reductions (outer == 1) run cub::DeviceReduce::Reduce, row reductions (outer > 1)
 * cub::DeviceSegmentedReduce::Reduce with uniform segments [o*len, (o+1)*len), both with our op's combine()
 * so that NaN and tie rules match the ladder. Plain ops read x directly (i32 SUM/PROD read it as uint32, the
 * same bits, so the sum wraps); indexed ops read (value, position) pairs through a transform iterator over a
 * counting iterator. Results land in out directly when no finalize is needed, else in workspace followed by
 * a small store kernel (MEAN's division, the pair's split into out/idx). Temporary storage comes from
 * env->ws_alloc.
 * Limits: supports() refuses inner > 1 (CUB has no strided segments; 'cols' handles them).
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]; any len >= 1.
 */
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "red_ops.cuh"

using namespace ckred;

// ---------------------------------------------------------------- functors

template <class O>
struct CombineFn {
  __host__ __device__ __forceinline__ typename O::acc_t operator()(const typename O::acc_t &a,
                                                                   const typename O::acc_t &b) const {
    return O::combine(a, b);
  }
};

/* Element k of the flattened [outer, len] array as (value, position in its row). */
template <class O>
struct MakeAcc {
  const typename O::value_t *x;
  int64_t len;
  __host__ __device__ __forceinline__ typename O::acc_t operator()(int64_t k) const {
    return O::make(x[k], k % len);
  }
};

struct RowStart {
  int64_t len;
  __host__ __device__ __forceinline__ int64_t operator()(int64_t o) const { return o * len; }
};

// ---------------------------------------------------------------- launcher

/* Runs the CUB call `run(temp, bytes)` twice: once to size the temporary storage, once for real. */
template <class R>
static int with_temp(const ck_env *env, R &&run) {
  size_t bytes = 0;
  int err = (int)run((void *)nullptr, bytes);
  if (err) return err;
  Ws w(env, bytes ? bytes : 1);
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  return (int)run(w.p, bytes);
}

template <class O, class In, class Out>
static int cub_reduce(const ck_red_desc &d, const ck_env *env, In in, Out out) {
  cudaStream_t s = (cudaStream_t)env->stream;
  const CombineFn<O> op;
  const typename O::acc_t init = O::identity();
  if (d.outer == 1)
    return with_temp(env, [&](void *t, size_t &b) {
      return cub::DeviceReduce::Reduce(t, b, in, out, d.len, op, init, s);
    });
  auto begins = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), RowStart{d.len});
  return with_temp(env, [&](void *t, size_t &b) {
    return cub::DeviceSegmentedReduce::Reduce(t, b, in, out, d.outer, begins, begins + 1, op, init, s);
  });
}

template <class O>
static int launch(const ck_red_desc &d, const ck_env *env) {
  using acc_t = typename O::acc_t;
  using T = typename O::value_t;
  /* straight into out when the accumulator is the value type (f32, f64, and i32 MAX/MIN); integer sums
   * accumulate in uint64 and halves in f32, so they (and the indexed ops) go through MakeAcc */
  constexpr bool same = std::is_same_v<acc_t, T> && std::is_same_v<typename O::out_t, T>;
  if constexpr (same) {
    if (d.op != CK_RED_MEAN) return cub_reduce<O>(d, env, (const T *)d.x, (T *)d.out);
  }
  Ws w(env, (size_t)d.outer * sizeof(acc_t));
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  int err;
  if constexpr (O::indexed || !same) {
    auto in = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), MakeAcc<O>{(const T *)d.x, d.len});
    err = cub_reduce<O>(d, env, in, (acc_t *)w.p);
  } else {
    err = cub_reduce<O>(d, env, (const T *)d.x, (acc_t *)w.p);
  }
  if (err) return err;
  ck_note(env, red_store_kernel<O>, 256, 0); /* ours; CUB's own kernels are the library's */
  red_store_kernel<O><<<grid_for(cdiv(d.outer, 256)), 256, 0, (cudaStream_t)env->stream>>>(
      (const acc_t *)w.p, d.outer, (typename O::out_t *)d.out, d.idx, d.len);
  return (int)cudaGetLastError();
}

CK_RED_LAUNCHER(ck_reduce_cub, launch)

extern "C" const char *ck_reduce_cub_supports(const void *desc) {
  const ck_red_desc *d = (const ck_red_desc *)desc;
  if (d->inner != 1) return "CUB reduces contiguous rows only (inner == 1); 'cols' reduces leading dims";
  return check_common(d);
}
