/*
 * ar_common.cuh — plumbing shared by the all-reduce ladder (kernels/allreduce/NN_*.cu).
 *
 *   ar_t<DT>             a dtype's storage type S and compute type C (f16/bf16: f32 through kernels/half.h;
 *                        i32: int32_t whose sum and product wrap, done in uint32_t)
 *   ar_op<DT, OP>        one combine step in C; ar_fin: AVG's division by n (once, at the last step)
 *   ar_combine_kernel    dst[e] = op(dst[e], src[e]) (then / div for AVG): the one combine kernel of rungs 1
 *                        and 3, 16-byte loads and stores when both pointers are 16-byte aligned, grid-stride
 *   ar_dispatch          the dtype x op switch: calls f(dtype tag, op tag) (no i32 AVG instantiation)
 *   ar_record, ar_wait,  cross-device ordering with the caller's one event per device. One event is enough:
 *   ar_barrier           a cudaStreamWaitEvent waits for the record that was last issued *when the wait is
 *                        issued*, so an event may be recorded again as soon as its waits are queued.
 *   CK_AR_LAUNCHER       every rung's extern "C" launcher: checks, n == 1 / count == 0 as no-ops, the caller's
 *                        current device saved and restored, dispatch to the rung's run<DT, OP>(ar_ctx&).
 * Every CUDA call is checked (AR_TRY returns its error); the launchers never synchronise or allocate.
 */
#ifndef CK_AR_COMMON_CUH
#define CK_AR_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "allreduce.h"
#include "ck_kernels.h"
#include "half.h"

#define AR_THREADS 256      /* threads per block of every kernel of the ladder */
#define AR_BLOCKS_PER_SM 8  /* grid cap = SMs x this (2048 threads per SM: full occupancy at <= 32 registers) */

#define AR_TRY(call)                                                                                           \
  do {                                                                                                         \
    const cudaError_t ar_e_ = (call);                                                                          \
    if (ar_e_ != cudaSuccess) return (int)ar_e_;                                                               \
  } while (0)
#define AR_TRYI(call)                                                                                          \
  do {                                                                                                         \
    const int ar_r_ = (call);                                                                                  \
    if (ar_r_ != 0) return ar_r_;                                                                              \
  } while (0)

// ---------------------------------------------------------------- dtypes and ops

template <int DT> struct ar_t;
template <> struct ar_t<CK_F32> {
  typedef float S;
  typedef float C;
  static constexpr bool is_float = true;
  static __device__ __forceinline__ C ld(S v) { return v; }
  static __device__ __forceinline__ S st(C v) { return v; }
  static __device__ __forceinline__ C mx(C a, C b) { return fmaxf(a, b); }
  static __device__ __forceinline__ C mn(C a, C b) { return fminf(a, b); }
};
template <> struct ar_t<CK_F64> {
  typedef double S;
  typedef double C;
  static constexpr bool is_float = true;
  static __device__ __forceinline__ C ld(S v) { return v; }
  static __device__ __forceinline__ S st(C v) { return v; }
  static __device__ __forceinline__ C mx(C a, C b) { return fmax(a, b); }
  static __device__ __forceinline__ C mn(C a, C b) { return fmin(a, b); }
};
template <> struct ar_t<CK_I32> {
  typedef int32_t S;
  typedef int32_t C;
  static constexpr bool is_float = false;
  static __device__ __forceinline__ C ld(S v) { return v; }
  static __device__ __forceinline__ S st(C v) { return v; }
  static __device__ __forceinline__ C mx(C a, C b) { return a > b ? a : b; }
  static __device__ __forceinline__ C mn(C a, C b) { return a < b ? a : b; }
};
template <> struct ar_t<CK_F16> {
  typedef uint16_t S;
  typedef float C;
  static constexpr bool is_float = true;
  static __device__ __forceinline__ C ld(S v) { return ck_f16_to_f32(v); }
  static __device__ __forceinline__ S st(C v) { return ck_f32_to_f16(v); }
  static __device__ __forceinline__ C mx(C a, C b) { return fmaxf(a, b); }
  static __device__ __forceinline__ C mn(C a, C b) { return fminf(a, b); }
};
template <> struct ar_t<CK_BF16> {
  typedef uint16_t S;
  typedef float C;
  static constexpr bool is_float = true;
  static __device__ __forceinline__ C ld(S v) { return ck_bf16_to_f32(v); }
  static __device__ __forceinline__ S st(C v) { return ck_f32_to_bf16(v); }
  static __device__ __forceinline__ C mx(C a, C b) { return fmaxf(a, b); }
  static __device__ __forceinline__ C mn(C a, C b) { return fminf(a, b); }
};

/* a op b, in the compute type; i32 sum and product wrap (unsigned arithmetic, converted back). */
template <int DT, int OP>
__device__ __forceinline__ typename ar_t<DT>::C ar_op(typename ar_t<DT>::C a, typename ar_t<DT>::C b) {
  typedef ar_t<DT> A;
  if constexpr (OP == CK_AR_SUM || OP == CK_AR_AVG) {
    if constexpr (DT == CK_I32) return (int32_t)((uint32_t)a + (uint32_t)b);
    else return a + b;
  } else if constexpr (OP == CK_AR_PROD) {
    if constexpr (DT == CK_I32) return (int32_t)((uint32_t)a * (uint32_t)b);
    else return a * b;
  } else if constexpr (OP == CK_AR_MAX) {
    return A::mx(a, b);
  } else {
    return A::mn(a, b);
  }
}

/* The last step of an element: AVG divides the sum by div (= n; 1 on every earlier step). Correctly rounded
 * division (nvcc's default -prec-div=true), so f32/f64 AVG is round(sum / n). */
template <int DT, int OP>
__device__ __forceinline__ typename ar_t<DT>::C ar_fin(typename ar_t<DT>::C v, int div) {
  if constexpr (OP == CK_AR_AVG) {
    typedef typename ar_t<DT>::C C;
    return div > 1 ? v / (C)div : v;
  } else {
    (void)div;
    return v;
  }
}

/* 16 bytes seen as a vector of V storage elements. */
template <typename S> union ar_pack {
  uint4 v;
  S e[16 / sizeof(S)];
};

// ---------------------------------------------------------------- the combine kernel (rungs 1 and 3)

/* dst[e] = fin(op(dst[e], src[e])) for e < count. VEC: both pointers 16-byte aligned; vectors of V elements,
 * the count % V tail element by element. Grid-stride, any count. */
template <int DT, int OP, bool VEC>
__global__ void __launch_bounds__(AR_THREADS) ar_combine_kernel(typename ar_t<DT>::S *__restrict__ dst,
                                                                const typename ar_t<DT>::S *__restrict__ src,
                                                                int64_t count, int div) {
  typedef ar_t<DT> A;
  typedef typename A::S S;
  constexpr int V = 16 / sizeof(S);
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t e0 = 0;
  if (VEC) {
    const int64_t nv = count / V;
    for (int64_t v = t; v < nv; v += stride) {
      ar_pack<S> a, b;
      a.v = ((const uint4 *)dst)[v];
      b.v = ((const uint4 *)src)[v];
#pragma unroll
      for (int k = 0; k < V; ++k) a.e[k] = A::st(ar_fin<DT, OP>(ar_op<DT, OP>(A::ld(a.e[k]), A::ld(b.e[k])), div));
      ((uint4 *)dst)[v] = a.v;
    }
    e0 = nv * V;
  }
  for (int64_t e = e0 + t; e < count; e += stride)
    dst[e] = A::st(ar_fin<DT, OP>(ar_op<DT, OP>(A::ld(dst[e]), A::ld(src[e])), div));
}

// ---------------------------------------------------------------- host side

static inline bool ar_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

static inline size_t ar_dtype_size(int dtype) {
  switch (dtype) {
  case CK_F32: return 4;
  case CK_F64: return 8;
  case CK_I32: return 4;
  case CK_F16: return 2;
  case CK_BF16: return 2;
  default: return 0;
  }
}

/* Why a descriptor cannot run (NULL: it can). Shared by every rung's supports(). */
static inline const char *ar_supports(const ck_ar_desc *d) {
  if (!d) return "no descriptor";
  if (d->n < 1 || d->n > CK_AR_MAX_DEV) return "needs 1..64 devices (n)";
  const size_t es = ar_dtype_size(d->dtype);
  if (es == 0) return "needs dtype f32, f64, i32, f16 or bf16";
  if (d->op < 0 || d->op >= CK_AR_NOPS) return "needs op CK_AR_SUM, PROD, MAX, MIN or AVG";
  if (d->op == CK_AR_AVG && d->dtype == CK_I32) return "avg needs a float dtype (f32, f64, f16, bf16)";
  if (d->count < 0) return "needs count >= 0";
  if ((uint64_t)d->count > (uint64_t)INT64_MAX / es) return "count * element size overflows";
  if (d->count > 0 && d->n > 1)
    for (int i = 0; i < d->n; ++i)
      if (!d->buf[i] || !d->scratch[i] || !d->event[i]) return "needs buf, scratch and event for every device";
  return NULL;
}

/* What a rung's run<DT, OP> gets: the descriptor and the SM count of each device (for grid sizes). */
struct ar_ctx {
  const ck_ar_desc *d;
  size_t esize;
  int sm[CK_AR_MAX_DEV];
  cudaStream_t stream(int i) const { return (cudaStream_t)d->stream[i]; }
  cudaEvent_t event(int i) const { return (cudaEvent_t)d->event[i]; }
  char *buf(int i) const { return (char *)d->buf[i]; }
  char *scratch(int i) const { return (char *)d->scratch[i]; }
  int next(int i) const { return i + 1 == d->n ? 0 : i + 1; }
};

static inline int ar_ctx_init(ar_ctx &c, const ck_ar_desc *d) {
  c.d = d;
  c.esize = ar_dtype_size(d->dtype);
  for (int i = 0; i < d->n; ++i)
    AR_TRY(cudaDeviceGetAttribute(&c.sm[i], cudaDevAttrMultiProcessorCount, d->device[i]));
  return 0;
}

/* Device i's stream records event i (current device set to device i). */
static inline int ar_record(const ar_ctx &c, int i) {
  AR_TRY(cudaSetDevice(c.d->device[i]));
  AR_TRY(cudaEventRecord(c.event(i), c.stream(i)));
  return 0;
}
/* Device i's stream waits for event j's last record. */
static inline int ar_wait(const ar_ctx &c, int i, int j) {
  AR_TRY(cudaSetDevice(c.d->device[i]));
  AR_TRY(cudaStreamWaitEvent(c.stream(i), c.event(j), 0));
  return 0;
}
/* Every stream waits until every stream has reached this point (n records, n x (n-1) waits). */
static inline int ar_barrier(const ar_ctx &c) {
  for (int i = 0; i < c.d->n; ++i) AR_TRYI(ar_record(c, i));
  for (int i = 0; i < c.d->n; ++i)
    for (int j = 0; j < c.d->n; ++j)
      if (j != i) AR_TRYI(ar_wait(c, i, j));
  return 0;
}

/* Blocks for `units` work items of one thread each: enough to cover them, at most AR_BLOCKS_PER_SM per SM. */
static inline unsigned ar_blocks(int64_t units, int sm) {
  int64_t b = (units + AR_THREADS - 1) / AR_THREADS;
  const int64_t cap = (int64_t)(sm > 0 ? sm : 1) * AR_BLOCKS_PER_SM;
  if (b > cap) b = cap;
  return (unsigned)(b < 1 ? 1 : b);
}

/* On device i's stream (current device must be device i): dst = op(dst, src) over count elements. */
template <int DT, int OP>
static int ar_launch_combine(const ar_ctx &c, int i, void *dst, const void *src, int64_t count, int div) {
  typedef typename ar_t<DT>::S S;
  constexpr int V = 16 / sizeof(S);
  if (count <= 0) return 0;
  const bool vec = ar_aligned16(dst) && ar_aligned16(src);
  const unsigned grid = ar_blocks(vec ? (count + V - 1) / V : count, c.sm[i]);
  if (vec)
    ar_combine_kernel<DT, OP, true><<<grid, AR_THREADS, 0, c.stream(i)>>>((S *)dst, (const S *)src, count, div);
  else
    ar_combine_kernel<DT, OP, false><<<grid, AR_THREADS, 0, c.stream(i)>>>((S *)dst, (const S *)src, count, div);
  AR_TRY(cudaGetLastError());
  return 0;
}

/* f(dtype tag, op tag) for the descriptor's dtype and op; the tags are std::integral_constant<int, ...>. */
template <int DT> using ar_dt_tag = std::integral_constant<int, DT>;
template <int OP> using ar_op_tag = std::integral_constant<int, OP>;
template <int DT, class F> static int ar_dispatch_op(int op, F &&f) {
  switch (op) {
  case CK_AR_SUM: return f(ar_dt_tag<DT>(), ar_op_tag<CK_AR_SUM>());
  case CK_AR_PROD: return f(ar_dt_tag<DT>(), ar_op_tag<CK_AR_PROD>());
  case CK_AR_MAX: return f(ar_dt_tag<DT>(), ar_op_tag<CK_AR_MAX>());
  case CK_AR_MIN: return f(ar_dt_tag<DT>(), ar_op_tag<CK_AR_MIN>());
  case CK_AR_AVG:
    if constexpr (ar_t<DT>::is_float) return f(ar_dt_tag<DT>(), ar_op_tag<CK_AR_AVG>());
    else return (int)cudaErrorInvalidValue;
  default: return (int)cudaErrorInvalidValue;
  }
}
template <class F> static int ar_dispatch(int dtype, int op, F &&f) {
  switch (dtype) {
  case CK_F32: return ar_dispatch_op<CK_F32>(op, f);
  case CK_F64: return ar_dispatch_op<CK_F64>(op, f);
  case CK_I32: return ar_dispatch_op<CK_I32>(op, f);
  case CK_F16: return ar_dispatch_op<CK_F16>(op, f);
  case CK_BF16: return ar_dispatch_op<CK_BF16>(op, f);
  default: return (int)cudaErrorInvalidValue;
  }
}

/* The launcher of every rung: declined descriptors give cudaErrorInvalidValue; one device or no elements queue
 * nothing (the result is the input: AVG divides by 1); else run_tpl<DT, OP>(ctx) with the caller's current
 * device restored afterwards (its error reported only when the run itself succeeded). Also the rung's
 * supports() in the house form. */
#define CK_AR_LAUNCHER(name, run_tpl)                                                                           \
  extern "C" const char *ck_allreduce_##name##_supports(const void *desc) {                                    \
    return ar_supports((const ck_ar_desc *)desc);                                                               \
  }                                                                                                             \
  extern "C" int ck_allreduce_##name(const ck_ar_desc *d) {                                                     \
    if (ar_supports(d)) return (int)cudaErrorInvalidValue;                                                      \
    if (d->n == 1 || d->count == 0) return 0;                                                                   \
    int saved = 0;                                                                                              \
    AR_TRY(cudaGetDevice(&saved));                                                                              \
    ar_ctx c;                                                                                                   \
    int rc = ar_ctx_init(c, d);                                                                                 \
    if (rc == 0)                                                                                                \
      rc = ar_dispatch(d->dtype, d->op, [&](auto dt, auto op) {                                                 \
        return run_tpl<decltype(dt)::value, decltype(op)::value>(c);                                            \
      });                                                                                                       \
    const cudaError_t back = cudaSetDevice(saved);                                                              \
    return rc != 0 ? rc : (int)back;                                                                            \
  }

#endif
