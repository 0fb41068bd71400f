/*
 * red_ops.cuh — the reduction ops, written once for every step of the ladder.
 *
 * Each step file (kernels/reduce/NN_*.cu) is about *how* a block or a grid reduces; *what* it reduces lives
 * here: an op type O with
 *   acc_t                     the accumulator (f32 accumulates in f32, f64 in f64, f16/bf16 in f32, i32
 *                             SUM/PROD in uint32 so that they wrap modulo 2^32, and a (value, index) pair for
 *                             the indexed ops)
 *   identity()                the neutral element, used for tails and idle threads
 *   make(x, r)                the accumulator of element x at position r (0-based) of its row
 *   combine(a, b)             associative and commutative (ties broken by index, not by order), so any tree
 *                             or fold order gives the same indexed result
 *   store(a, out, idx, o, len) finalize: MEAN divides by len, indexed ops write 1-based idx[o] (and out[o] when
 *                             out != NULL)
 * MAX/MIN with idx != NULL run as ARGMAX/ARGMIN (same values, same NaN rule), so a descriptor's op maps to one
 * of seven op types; dispatch() instantiates a step's launcher for each (dtype, op) pair.
 *
 * NaN rules (ck_kernels.h): SUM/PROD/MEAN propagate NaN by arithmetic; MAX/MIN pick NaN over anything; the
 * indexed ops treat NaN as the extreme and keep the first NaN. Ties go to the smaller index.
 *
 * Also here, shared by several steps: 16-byte vector loads over an arbitrary (misaligned) range with a scalar
 * head and tail, warp/block shuffle reductions, a block's partial-or-output epilogue (put_result), the
 * multi-level finisher for [outer, m] partials and the launch of the block-per-chunk steps around it
 * (run_chunk_kernel), the finisher for column partials, the work-splitting plan for "a grid of a few waves"
 * and the supports() check of the row steps (check_rows).
 */
#ifndef CK_RED_OPS_CUH
#define CK_RED_OPS_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <type_traits>

#include "ck_kernels.h"
#include "ck_ws.cuh"
#include "half.h"

namespace ckred {

// ---------------------------------------------------------------- f16 / bf16 values

/* f16/bf16 (2-byte storage, half.h) reduce in float: wide_t is the type the math sees (T itself for f32,
 * f64 and i32, whose code is unchanged), wide() widens exactly, narrow_to() rounds once to nearest even. */
template <typename T> constexpr bool is_half_v = std::is_same_v<T, ck_f16_t> || std::is_same_v<T, ck_bf16_t>;
template <typename T> struct Wide { using type = T; };
template <> struct Wide<ck_f16_t> { using type = float; };
template <> struct Wide<ck_bf16_t> { using type = float; };
template <typename T> using wide_t = typename Wide<T>::type;
template <typename T> __host__ __device__ __forceinline__ wide_t<T> wide(T x) {
  if constexpr (std::is_same_v<T, ck_f16_t>) return ck_f16_to_f32(x.bits);
  else if constexpr (std::is_same_v<T, ck_bf16_t>) return ck_bf16_to_f32(x.bits);
  else return x;
}
template <typename T> __host__ __device__ __forceinline__ T narrow_to(wide_t<T> v) {
  if constexpr (is_half_v<T>) {
    T r;
    r.bits = std::is_same_v<T, ck_f16_t> ? ck_f32_to_f16(v) : ck_f32_to_bf16(v);
    return r;
  } else return v;
}
/* Read-only-path load of one element (__ldg has no overload for the 2-byte structs). */
template <typename T> __device__ __forceinline__ T ldg(const T *p) {
  if constexpr (is_half_v<T>) {
    T r;
    r.bits = __ldg(reinterpret_cast<const unsigned short *>(p));
    return r;
  } else return __ldg(p);
}

// ---------------------------------------------------------------- op types

template <typename T>
struct Pair {
  T v;
  int64_t i; /* 0-based position in the row; INT64_MAX for the identity so that any real element wins a tie */
};

/* the extremes of T (floats: the infinities; integers: the type's range, computed without <limits>, whose
 * members are host functions) */
template <typename T>
__host__ __device__ __forceinline__ T lowest() {
  if constexpr (std::is_floating_point<T>::value) return (T)-INFINITY;
  else if constexpr (std::is_signed<T>::value) return (T)((unsigned long long)1 << (8 * sizeof(T) - 1));
  else return (T)0;
}
template <typename T>
__host__ __device__ __forceinline__ T highest() {
  if constexpr (std::is_floating_point<T>::value) return (T)INFINITY;
  else return (T)~lowest<T>();
}
#define CKR_HD __host__ __device__ __forceinline__

template <typename T>
CKR_HD bool is_nan(T v) {
  if constexpr (std::is_floating_point<T>::value) return v != v;
  else return false;
}

/* The ARITH accumulator: integers (and bool, stored as uint8_t) accumulate in uint64, which wraps modulo 2^64
 * without UB, and their sums and products are i64 (NumPy's rule: a sum of bools counts); halves in f32. */
template <typename T> struct SumAcc {
  using type = std::conditional_t<std::is_integral<T>::value, uint64_t, T>;
  using out = std::conditional_t<std::is_integral<T>::value, int64_t, T>;
};
template <> struct SumAcc<ck_f16_t> { using type = float; using out = ck_f16_t; };  /* halves accumulate in f32 */
template <> struct SumAcc<ck_bf16_t> { using type = float; using out = ck_bf16_t; };

/* One row of reduce_ops.def as compile-time facts: family, max-like, mean, float-only, the op with indices,
 * and the ARITH identity and combine (the table's C expressions, compiled for the accumulator type). */
template <int K> struct Row;
#define CK_RED_OP(ID, NAME, FAMILY, IDENT, COMBINE, MEAN, EMPTY, MAXLIKE, FLOAT, WITH_IDX)                            \
  template <> struct Row<CK_RED_##ID> {                                                                               \
    static constexpr int family = CK_REDF_##FAMILY;                                                                   \
    static constexpr bool maxlike = MAXLIKE, mean = MEAN, float_only = FLOAT;                                         \
    static constexpr int with_idx = CK_RED_##WITH_IDX;                                                                \
    template <class A> CKR_HD static A ident() { return (A)(IDENT); }                                                 \
    template <class A> CKR_HD static A combine(A a, A b) { (void)b; return COMBINE; }                                 \
  };
#include "reduce_ops.def"
#undef CK_RED_OP

/* The ARITH family: sum, prod, mean */
template <typename T, int K>
struct ArithOp {
  using value_t = T;
  using acc_t = typename SumAcc<T>::type;
  using out_t = typename SumAcc<T>::out;
  static constexpr bool indexed = false;
  CKR_HD static acc_t identity() { return Row<K>::template ident<acc_t>(); }
  CKR_HD static acc_t make(T x, int64_t) {
    if constexpr (is_half_v<T>) return wide(x);
    else return (acc_t)x;
  }
  CKR_HD static acc_t combine(acc_t a, acc_t b) { return Row<K>::combine(a, b); }
  CKR_HD static void store(acc_t a, out_t *out, int64_t *, int64_t o, int64_t len) {
    if constexpr (is_half_v<T>) out[o] = narrow_to<T>(Row<K>::mean ? a / (acc_t)len : a);
    else if constexpr (Row<K>::mean) out[o] = (out_t)(a / (acc_t)len);
    else out[o] = (out_t)a;
  }
};

/* MAX, MIN without indices: NaN wins. */
template <typename T, bool IS_MAX>
struct ExtOp {
  using value_t = T;
  using acc_t = wide_t<T>;
  using out_t = T;
  static constexpr bool indexed = false;
  CKR_HD static acc_t identity() { return IS_MAX ? lowest<acc_t>() : highest<acc_t>(); }
  CKR_HD static acc_t make(T x, int64_t) { return wide(x); }
  CKR_HD static acc_t combine(acc_t a, acc_t b) {
    /* b NaN: the comparison fails and b is returned; a NaN: a is returned. */
    return ((IS_MAX ? a > b : a < b) || is_nan(a)) ? a : b;
  }
  CKR_HD static void store(acc_t a, T *out, int64_t *, int64_t o, int64_t) { out[o] = narrow_to<T>(a); }
};

/* ARGMAX, ARGMIN, and MAX/MIN with indices: NaN is the extreme, first NaN wins, ties to the smaller index. */
template <typename T, bool IS_MAX>
struct ArgOp {
  using value_t = T;
  using acc_t = Pair<wide_t<T>>;
  using out_t = T;
  static constexpr bool indexed = true;
  CKR_HD static acc_t identity() { return acc_t{IS_MAX ? lowest<wide_t<T>>() : highest<wide_t<T>>(), INT64_MAX}; }
  CKR_HD static acc_t make(T x, int64_t r) { return acc_t{wide(x), r}; }
  CKR_HD static acc_t combine(acc_t a, acc_t b) {
    if constexpr (std::is_floating_point<wide_t<T>>::value) {
      const bool an = is_nan(a.v), bn = is_nan(b.v);
      if (an | bn) return (an & bn) ? (a.i <= b.i ? a : b) : (an ? a : b);
    }
    if (IS_MAX ? a.v > b.v : a.v < b.v) return a;
    if (a.v == b.v) return a.i <= b.i ? a : b;
    return b;
  }
  CKR_HD static void store(acc_t a, T *out, int64_t *idx, int64_t o, int64_t) {
    if (out) out[o] = narrow_to<T>(a.v);
    if (idx) idx[o] = a.i + 1;
  }
};

/* The op type of row K: its family's template. */
template <typename T, int K>
using Op = std::conditional_t<Row<K>::family == CK_REDF_ARITH, ArithOp<T, K>,
                              std::conditional_t<Row<K>::family == CK_REDF_EXT, ExtOp<T, Row<K>::maxlike>,
                                                 ArgOp<T, Row<K>::maxlike>>>;

template <class O> struct Tag { using type = O; };

/* The op a descriptor really asks for: an op with idx is its indexed op (max with idx is argmax). */
static inline int effective_op(const ck_red_desc *d) {
  if (!d->idx) return d->op;
  switch (d->op) {
#define CK_RED_OP(ID, NAME, FAMILY, IDENT, COMBINE, MEAN, EMPTY, MAXLIKE, FLOAT, WITH_IDX)                            \
  case CK_RED_##ID: return CK_RED_##WITH_IDX;
#include "reduce_ops.def"
#undef CK_RED_OP
  default: return d->op;
  }
}

/* f(Tag<Op<T, k>>{}) for the run-time id k: one case per row (float-only rows are not instantiated for
 * integer types; the dispatcher refuses those before a launcher runs). */
template <typename T, class F>
static int dispatch_t(int k, F &f) {
  switch (k) {
#define CK_RED_OP(ID, NAME, FAMILY, IDENT, COMBINE, MEAN, EMPTY, MAXLIKE, FLOAT, WITH_IDX)                            \
  case CK_RED_##ID:                                                                                                   \
    if constexpr (!Row<CK_RED_##ID>::float_only || std::is_floating_point<wide_t<T>>::value)                          \
      return f(Tag<Op<T, CK_RED_##ID>>{});                                                                            \
    else return (int)cudaErrorInvalidValue;
#include "reduce_ops.def"
#undef CK_RED_OP
  default: return (int)cudaErrorInvalidValue;
  }
}

/* Calls f(Tag<O>{}) with the op type for d's (dtype, op); f returns 0 or a cudaError_t. WIDE: the step also
 * instantiates f16/bf16 and the integer dtypes of issue 32 (bool as uint8_t: its values are 0 and 1) — the
 * steps whose registry row lists them; the others are not compiled for them, which keeps compile time and
 * binary size down. */
template <bool WIDE = false, class F>
static int dispatch(const ck_red_desc *d, F &&f) {
  const int k = effective_op(d);
  switch (d->dtype) {
  case CK_F32: return dispatch_t<float>(k, f);
  case CK_F64: return dispatch_t<double>(k, f);
  case CK_I32: return dispatch_t<int32_t>(k, f);
  default: break;
  }
  if constexpr (WIDE) {
    switch (d->dtype) {
    case CK_F16: return dispatch_t<ck_f16_t>(k, f);
    case CK_BF16: return dispatch_t<ck_bf16_t>(k, f);
    case CK_BOOL:
    case CK_U8: return dispatch_t<uint8_t>(k, f);
    case CK_I8: return dispatch_t<int8_t>(k, f);
    case CK_I16: return dispatch_t<int16_t>(k, f);
    case CK_U32: return dispatch_t<uint32_t>(k, f);
    case CK_I64: return dispatch_t<int64_t>(k, f);
    default: break;
    }
  }
  return (int)cudaErrorInvalidValue;
}

static inline const char *check_common(const ck_red_desc *d) {
  if (d->len < 1 || d->outer < 1 || d->inner < 1) return "needs len >= 1 and outer*inner >= 1";
  if (d->op == CK_RED_MEAN && !(d->dtype == CK_F32 || d->dtype == CK_F64 || d->dtype == CK_F16 || d->dtype == CK_BF16))
    return "mean needs a float dtype";
  return NULL;
}

/* supports() of the row steps (1-9): contiguous rows, then check_common. */
static inline const char *check_rows(const ck_red_desc *d) {
  if (d->inner != 1) return "reduces contiguous rows only (inner == 1); 'cols' reduces leading dims";
  return check_common(d);
}

} // namespace ckred

#include "red_loads.cuh" /* loads, shuffles, folds and put_result: the kernels' building blocks */

namespace ckred {

// ---------------------------------------------------------------- launch helpers (host)

static inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
/* Grid x for `items` independent work items; kernels loop when there are more (grid.x < 2^31). */
static inline unsigned grid_for(int64_t items) { return (unsigned)(items < (int64_t)INT32_MAX ? items : (int64_t)INT32_MAX); }

/* How to spread `outer` rows of `len` over a grid of about `target` blocks (a few waves of the device): each
 * row is cut into `per_row` chunks of `chunk` elements (a multiple of `align`), never smaller than
 * `min_chunk`. per_row == 1 means one block (or one persistent loop step) per row. */
struct Plan {
  int64_t per_row, chunk, items;
};
static inline Plan plan_rows(int64_t outer, int64_t len, int64_t target, int64_t min_chunk, int64_t align) {
  Plan p;
  int64_t per = outer >= target ? 1 : target / outer; /* floor: never spill into a partial extra wave */
  const int64_t most = cdiv(len, min_chunk);
  if (per > most) per = most;
  if (per < 1) per = 1;
  p.chunk = cdiv(cdiv(len, per), align) * align;
  p.per_row = cdiv(len, p.chunk);
  p.items = outer * p.per_row;
  return p;
}

/* Resident blocks of `kernel` per SM (cached by the caller per instantiation). */
static inline int occupancy(const void *kernel, int threads, size_t smem) {
  int n = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem) != cudaSuccess || n < 1) n = 1;
  return n;
}

// ---------------------------------------------------------------- finishers (shared second passes)

/* [outer, m] partial accumulators -> [outer, ceil(m/chunk)] partials, or the final outputs when one chunk
 * is left (part == NULL). One block per (row, chunk), looping when the grid is capped. */
template <class O, int BS>
__global__ void __launch_bounds__(BS) red_acc_rows_kernel(const typename O::acc_t *__restrict__ in, int64_t outer,
                                                          int64_t m, int64_t chunk, int64_t nch,
                                                          typename O::acc_t *part, typename O::out_t *out,
                                                          int64_t *idx, int64_t len) {
  using acc_t = typename O::acc_t;
  for (int64_t b = blockIdx.x; b < outer * nch; b += gridDim.x) {
    const int64_t row = b / nch, c = b - row * nch;
    const int64_t beg = c * chunk, end = beg + chunk < m ? beg + chunk : m;
    const acc_t *src = in + row * m;
    acc_t a = fold_partials<O, false>(src, beg, end, threadIdx.x, BS);
    a = block_reduce<O, BS>(a);
    if (threadIdx.x == 0) put_result<O>(a, part, b, out, idx, row, len);
    __syncthreads();
  }
}

/* Finish [outer, m] partials into out/idx, in as many levels as needed (each cuts m by 4096). */
template <class O>
static int finish_rows(const ck_env *env, const typename O::acc_t *part, int64_t outer, int64_t m,
                       typename O::out_t *out, int64_t *idx, int64_t len) {
  using acc_t = typename O::acc_t;
  constexpr int BS = 256;
  constexpr int64_t CH = 4096;
  cudaStream_t s = (cudaStream_t)env->stream;
  const acc_t *cur = part;
  void *held = nullptr;
  int err = 0;
  while (m > CH) {
    const int64_t nch = cdiv(m, CH);
    acc_t *nxt = (acc_t *)env->ws_alloc(env->owner, (size_t)(outer * nch) * sizeof(acc_t));
    if (!nxt) { err = (int)cudaErrorMemoryAllocation; break; }
    ck_note(env, red_acc_rows_kernel<O, BS>, BS, 0);
    red_acc_rows_kernel<O, BS><<<grid_for(outer * nch), BS, 0, s>>>(cur, outer, m, CH, nch, nxt, nullptr, nullptr, len);
    err = (int)cudaGetLastError();
    if (held) env->ws_free(env->owner, held);
    held = nxt;
    cur = nxt;
    m = nch;
    if (err) break;
  }
  if (!err) {
    ck_note(env, red_acc_rows_kernel<O, BS>, BS, 0);
    red_acc_rows_kernel<O, BS><<<grid_for(outer), BS, 0, s>>>(cur, outer, m, m, 1, nullptr, out, idx, len);
    err = (int)cudaGetLastError();
  }
  if (held) env->ws_free(env->owner, held);
  return err;
}

/* The launch pattern of the block-per-chunk steps (1-8): every row is cut into nch chunks, one block each.
 * launch(part, out, idx) starts the step's kernel: with one chunk per row it writes the outputs, else it
 * writes [outer, nch] partials to part and finish_rows() reduces them (Harris's "recursive" launches). */
template <class O, class L>
static int run_chunked(const ck_red_desc &d, const ck_env *env, int64_t nch, L &&launch) {
  using acc_t = typename O::acc_t;
  using T = typename O::value_t;
  using OT = typename O::out_t;
  if (nch == 1) {
    launch((acc_t *)nullptr, (OT *)d.out, d.idx);
    return (int)cudaGetLastError();
  }
  Ws w(env, (size_t)(d.outer * nch) * sizeof(acc_t));
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  launch((acc_t *)w.p, (OT *)nullptr, (int64_t *)nullptr);
  const int err = (int)cudaGetLastError();
  if (err) return err;
  return finish_rows<O>(env, (const acc_t *)w.p, d.outer, nch, (OT *)d.out, d.idx, d.len);
}

/* The block-per-chunk kernels of steps 1-7: (x, outer, len, chunks per row, part, out, idx). */
template <class O>
using chunk_kernel = void (*)(const typename O::value_t *, int64_t, int64_t, int64_t, typename O::acc_t *,
                              typename O::out_t *, int64_t *);

/* run_chunked with `kernel` as the launch: outer * nch blocks (grid capped; blocks loop) of bs threads and smem
 * bytes of dynamic shared memory. */
template <class O>
static int run_chunk_kernel(const ck_red_desc &d, const ck_env *env, chunk_kernel<O> kernel, int64_t nch, int bs,
                            size_t smem) {
  return run_chunked<O>(d, env, nch, [&](typename O::acc_t *part, typename O::out_t *out, int64_t *idx) {
    ck_note(env, kernel, (unsigned)bs, smem);
    kernel<<<grid_for(d.outer * nch), bs, smem, (cudaStream_t)env->stream>>>((const typename O::value_t *)d.x, d.outer,
                                                                             d.len, nch, part, out, idx);
  });
}

/* Harris's completely unrolled shared-memory tree (step 6, reused by step 7): BS is a compile-time power of
 * two in [64, 1024], so every `if (BS >= ...)` folds away. The last warp needs no __syncthreads but, since
 * Volta's independent thread scheduling, does need __syncwarp between its read and write halves (the old
 * volatile trick is a race now). sdata[0] holds the result afterwards (in thread 0). */
template <class O, int BS>
__device__ __forceinline__ void tree_unrolled(typename O::acc_t *sdata, unsigned tid) {
  static_assert(BS >= 64 && BS <= 1024 && (BS & (BS - 1)) == 0, "block size");
  if (BS >= 1024) { if (tid < 512) sdata[tid] = O::combine(sdata[tid], sdata[tid + 512]); __syncthreads(); }
  if (BS >= 512) { if (tid < 256) sdata[tid] = O::combine(sdata[tid], sdata[tid + 256]); __syncthreads(); }
  if (BS >= 256) { if (tid < 128) sdata[tid] = O::combine(sdata[tid], sdata[tid + 128]); __syncthreads(); }
  if (BS >= 128) { if (tid < 64) sdata[tid] = O::combine(sdata[tid], sdata[tid + 64]); __syncthreads(); }
  if (tid < 32) {
    typename O::acc_t v = sdata[tid];
#pragma unroll
    for (int off = 32; off > 0; off >>= 1) {
      v = O::combine(v, sdata[tid + off]);
      __syncwarp();
      sdata[tid] = v;
      __syncwarp();
    }
  }
}

/* [outer, nsplit, inner] partials -> out[outer, inner]: one thread per output, coalesced across inner. */
template <class O>
__global__ void red_acc_cols_kernel(const typename O::acc_t *__restrict__ part, int64_t outer, int64_t nsplit,
                                    int64_t inner, typename O::out_t *out, int64_t *idx, int64_t len) {
  const int64_t n = outer * inner;
  for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x) {
    const int64_t o = k / inner, i = k - o * inner;
    const typename O::acc_t *p = part + o * nsplit * inner + i;
    typename O::acc_t a = O::identity();
    for (int64_t s = 0; s < nsplit; ++s) a = O::combine(a, p[s * inner]);
    O::store(a, out, idx, k, len);
  }
}

template <class O>
static int finish_cols(const ck_env *env, const typename O::acc_t *part, int64_t outer, int64_t nsplit, int64_t inner,
                       typename O::out_t *out, int64_t *idx, int64_t len) {
  const int64_t n = outer * inner;
  ck_note(env, red_acc_cols_kernel<O>, 256, 0);
  red_acc_cols_kernel<O><<<grid_for(cdiv(n, 256)), 256, 0, (cudaStream_t)env->stream>>>(part, outer, nsplit, inner,
                                                                                        out, idx, len);
  return (int)cudaGetLastError();
}

/* One accumulator per output -> out/idx (used after library reductions that produce accumulators). */
template <class O>
__global__ void red_store_kernel(const typename O::acc_t *__restrict__ a, int64_t n, typename O::out_t *out,
                                 int64_t *idx, int64_t len) {
  for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x)
    O::store(a[k], out, idx, k, len);
}

} // namespace ckred

/* The launcher body shared by every step: decode the descriptor and call launch<O>(d, env). The _H form
 * also instantiates f16/bf16 (its registry row must list them). */
#define CK_RED_LAUNCHER(fn, launch_tpl)                                                                              \
  extern "C" int fn(const void *desc, const ck_env *env) {                                                         \
    const ck_red_desc *d = (const ck_red_desc *)desc;                                                               \
    ck_order_check(env); /* (CUB's kernels note nothing) */                                                         \
    return ckred::dispatch(d, [&](auto tag) { return launch_tpl<typename decltype(tag)::type>(*d, env); });        \
  }
#define CK_RED_LAUNCHER_H(fn, launch_tpl)                                                                            \
  extern "C" int fn(const void *desc, const ck_env *env) {                                                         \
    const ck_red_desc *d = (const ck_red_desc *)desc;                                                               \
    ck_order_check(env); /* (CUB's kernels note nothing) */                                                         \
    return ckred::dispatch<true>(d, [&](auto tag) { return launch_tpl<typename decltype(tag)::type>(*d, env); });  \
  }

#endif
