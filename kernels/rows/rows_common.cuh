/*
 * rows_common.cuh — what every rung of the row-op ladder shares (issue 37): the four ops as statistics plus a
 * per-element formula, the warp and block merges, and the register engine of rungs 3 and 5.
 *
 * An op type Op (RowOp<T, FN>) has
 *   T, A          the element and the arithmetic type (f32 for f32/f16/bf16, f64 for f64)
 *   Stat          what one pass collects: MaxSum (softmax: the running max and the sum of exp relative to it,
 *                 Milakov & Gimelshein's online normaliser), Welford (layer_norm: count, mean, M2; merged with
 *                 Chan's formula) or SumSq (rms_norm). Each has init(), add(x), merge(o) and shfl(lane mask).
 *   finish(s, len, eps) -> Par    the two numbers the write pass needs (max and 1/sum; mean and 1/std; ...)
 *   y(x, par, w, b)               the output element (w, b: the norms' weight and bias, 1 and 0 if absent)
 * dispatch(d, f) calls f(RowOp<T, FN>{}) for the descriptor's dtype and op.
 *
 * The rungs differ only in who holds which elements and how often memory is read: a thread per line
 * (01_naive, 02_online), a warp or a block per row with the row in registers (rows_regs below: 03_warp with
 * scalar loads, 05_vectorized with 16-byte ones), or a block streaming a long row twice (04_block).
 */
#ifndef CK_ROWS_COMMON_CUH
#define CK_ROWS_COMMON_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <type_traits>

#include "ck_kernels.h"
#include "half.h"

namespace ckrows {

#define CKR_D __device__ __forceinline__

// ---------------------------------------------------------------- element types

template <class T> using acc_of = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class A, class T> CKR_D A ld(T x) {
  if constexpr (std::is_same_v<T, ck_f16_t>) return ck_f16_to_f32(x.bits);
  else if constexpr (std::is_same_v<T, ck_bf16_t>) return ck_bf16_to_f32(x.bits);
  else return (A)x;
}
template <class T, class A> CKR_D T st(A v) {
  if constexpr (std::is_same_v<T, ck_f16_t> || std::is_same_v<T, ck_bf16_t>) {
    T r;
    r.bits = std::is_same_v<T, ck_f16_t> ? ck_f32_to_f16(v) : ck_f32_to_bf16(v);
    return r;
  } else {
    return (T)v;
  }
}

CKR_D float ex(float x) { return expf(x); }
CKR_D double ex(double x) { return exp(x); }
CKR_D float lg(float x) { return logf(x); }
CKR_D double lg(double x) { return log(x); }
CKR_D float rsq(float x) { return rsqrtf(x); }
CKR_D double rsq(double x) { return rsqrt(x); }
CKR_D float fdiv(float a, float b) { return __fdividef(a, b); }
CKR_D double fdiv(double a, double b) { return a / b; }
template <class A> CKR_D A shx(A v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }

// ---------------------------------------------------------------- statistics

/* The online normaliser: m is the largest value seen (never NaN: comparisons skip it), s the sum of exp(x - m).
 * -inf elements add nothing (a masked score), so a row of -inf and finite values is not poisoned by inf - inf. */
template <class A> struct MaxSum {
  A m, s;
  CKR_D void init() { m = -INFINITY, s = 0; }
  CKR_D void add(A x) {
    if (x > m) s = s * ex(m - x) + 1, m = x;
    else if (x != -INFINITY) s += ex(x - m);
  }
  /* (a side with m = -inf saw only -inf and NaN: its s is 0 or NaN, and s * 0 keeps a NaN, so a lane holding the
   * row's NaN alone still poisons the row) */
  CKR_D void merge(const MaxSum &o) {
    const A M = o.m > m ? o.m : m;
    s = (m == -INFINITY ? s * 0 : s * ex(m - M)) + (o.m == -INFINITY ? o.s * 0 : o.s * ex(o.m - M));
    m = M;
  }
  CKR_D MaxSum shfl(int lm) const { return {shx(m, lm), shx(s, lm)}; }
};

/* Welford's running mean and sum of squared deviations; merge is Chan et al.'s pairwise formula. */
template <class A> struct Welford {
  A n, mean, m2;
  CKR_D void init() { n = 0, mean = 0, m2 = 0; }
  CKR_D void add(A x) {
    n += 1;
    const A d = x - mean;
    mean += fdiv(d, n);
    m2 += d * (x - mean);
  }
  CKR_D void merge(const Welford &o) {
    const A N = n + o.n;
    if (o.n == 0) return;
    const A d = o.mean - mean, f = fdiv(o.n, N);
    mean += d * f;
    m2 += o.m2 + d * d * n * f;
    n = N;
  }
  CKR_D Welford shfl(int lm) const { return {shx(n, lm), shx(mean, lm), shx(m2, lm)}; }
};

template <class A> struct SumSq {
  A s;
  CKR_D void init() { s = 0; }
  CKR_D void add(A x) { s += x * x; }
  CKR_D void merge(const SumSq &o) { s += o.s; }
  CKR_D SumSq shfl(int lm) const { return {shx(s, lm)}; }
};

// ---------------------------------------------------------------- the ops

template <class T_, int FN> struct RowOp {
  using T = T_;
  using A = acc_of<T>;
  static constexpr bool softmax = FN == CK_ROWS_SOFTMAX || FN == CK_ROWS_LOG_SOFTMAX;
  static constexpr bool layer = FN == CK_ROWS_LAYER_NORM;
  using Stat = std::conditional_t<softmax, MaxSum<A>, std::conditional_t<FN == CK_ROWS_LAYER_NORM, Welford<A>, SumSq<A>>>;
  struct Par {
    A a, c;
  };
  CKR_D static Par finish(const Stat &s, int64_t len, double eps) {
    if constexpr (FN == CK_ROWS_SOFTMAX) return {s.m, (A)1 / s.s};
    else if constexpr (FN == CK_ROWS_LOG_SOFTMAX) return {s.m, s.m + lg(s.s)};
    else if constexpr (FN == CK_ROWS_LAYER_NORM) return {s.mean, rsq(s.m2 / (A)len + (A)eps)};
    else return {0, rsq(s.s / (A)len + (A)eps)};
  }
  CKR_D static A y(A x, const Par &p, A w, A b) {
    if constexpr (FN == CK_ROWS_SOFTMAX) return ex(x - p.a) * p.c;
    else if constexpr (FN == CK_ROWS_LOG_SOFTMAX) return x - p.c;
    else if constexpr (FN == CK_ROWS_LAYER_NORM) return (x - p.a) * p.c * w + b;
    else return x * p.c * w;
  }
};

/* Weight and bias element r (1 and 0 where the norm has none). */
template <class Op> CKR_D void wb(const ck_rows_desc &d, int64_t r, typename Op::A &w, typename Op::A &b) {
  using T = typename Op::T;
  using A = typename Op::A;
  w = d.w ? ld<A>(((const T *)d.w)[r]) : (A)1;
  b = d.b ? ld<A>(((const T *)d.b)[r]) : (A)0;
}

template <class Op, class F> int by_fn(const ck_rows_desc &d, F &f) {
  using T = typename Op::T;
  switch (d.fn) {
  case CK_ROWS_SOFTMAX: return f(RowOp<T, CK_ROWS_SOFTMAX>{});
  case CK_ROWS_LOG_SOFTMAX: return f(RowOp<T, CK_ROWS_LOG_SOFTMAX>{});
  case CK_ROWS_LAYER_NORM: return f(RowOp<T, CK_ROWS_LAYER_NORM>{});
  case CK_ROWS_RMS_NORM: return f(RowOp<T, CK_ROWS_RMS_NORM>{});
  default: return (int)cudaErrorInvalidValue;
  }
}

template <class F> int dispatch(const ck_rows_desc &d, F &&f) {
  switch (d.dtype) {
  case CK_F32: return by_fn<RowOp<float, 0>>(d, f);
  case CK_F64: return by_fn<RowOp<double, 0>>(d, f);
  case CK_F16: return by_fn<RowOp<ck_f16_t, 0>>(d, f);
  case CK_BF16: return by_fn<RowOp<ck_bf16_t, 0>>(d, f);
  default: return (int)cudaErrorInvalidValue;
  }
}

// ---------------------------------------------------------------- a thread per line (rungs 1 and 2)

/* Line l of [outer, len, inner]: its first element's offset; elements follow at stride inner. */
CKR_D int64_t line_base(const ck_rows_desc &d, int64_t l) { return (l / d.inner) * d.len * d.inner + l % d.inner; }

/* The write pass of one line: y from each element, the statistics' Par and the norms' w, b. */
template <class Op> CKR_D void write_line(const ck_rows_desc &d, int64_t base, const typename Op::Par &p) {
  using T = typename Op::T;
  using A = typename Op::A;
  const T *x = (const T *)d.x + base;
  T *out = (T *)d.out + base;
  for (int64_t r = 0; r < d.len; ++r) {
    A w, b;
    wb<Op>(d, r, w, b);
    out[r * d.inner] = st<T>(Op::y(ld<A>(x[r * d.inner]), p, w, b));
  }
}

// ---------------------------------------------------------------- merges

template <class S> CKR_D S warp_merge(S s) {
#pragma unroll
  for (int m = 16; m; m >>= 1) s.merge(s.shfl(m));
  return s;
}

/* Every thread of the block gets the block's merged statistics. sh holds one per warp; the barrier at the end
 * lets a grid-stride loop reuse it for the next row. */
template <class S> CKR_D S block_merge(S s, S *sh) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  s = warp_merge(s);
  if (lane == 0) sh[warp] = s;
  __syncthreads();
  if (warp == 0) {
    S t;
    if (lane < nw) t = sh[lane];
    else t.init();
    t = warp_merge(t);
    if (lane == 0) sh[0] = t;
  }
  __syncthreads();
  s = sh[0];
  __syncthreads();
  return s;
}

// ---------------------------------------------------------------- the register engine (rungs 3 and 5)

/* One row per group (a warp, or the whole block when BLOCK), held in registers: thread g of G holds the VEC-element
 * vectors c*G + g for c < N (consecutive threads, consecutive vectors: coalesced), so memory is read once and
 * written once. VEC > 1 moves 16 bytes per access and needs len % VEC == 0 and 16-byte aligned rows (supports()). */
template <class Op, int N, int VEC, bool BLOCK>
__global__ void __launch_bounds__(BLOCK ? 1024 : 256) rows_regs_kernel(const ck_rows_desc d) {
  using T = typename Op::T;
  using A = typename Op::A;
  using S = typename Op::Stat;
  __shared__ S sh[32];
  const int G = BLOCK ? (int)blockDim.x : 32;
  const int g = BLOCK ? (int)threadIdx.x : (int)(threadIdx.x & 31);
  const int64_t per_block = BLOCK ? 1 : blockDim.x >> 5;
  const int64_t first = (int64_t)blockIdx.x * per_block + (BLOCK ? 0 : threadIdx.x >> 5);
  for (int64_t row = first; row < d.outer; row += (int64_t)gridDim.x * per_block) {
    const T *xr = (const T *)d.x + row * d.len;
    T *orow = (T *)d.out + row * d.len;
    T v[N][VEC];
    S s;
    s.init();
#pragma unroll
    for (int c = 0; c < N; ++c) {
      const int64_t e0 = ((int64_t)c * G + g) * VEC;
      if (e0 >= d.len) continue;
      if constexpr (VEC > 1) {
        const uint4 q = *(const uint4 *)(xr + e0);
        memcpy(v[c], &q, 16);
      } else {
        v[c][0] = xr[e0];
      }
#pragma unroll
      for (int k = 0; k < VEC; ++k) s.add(ld<A>(v[c][k]));
    }
    if constexpr (BLOCK) s = block_merge(s, sh);
    else s = warp_merge(s);
    const typename Op::Par p = Op::finish(s, d.len, d.eps);
#pragma unroll
    for (int c = 0; c < N; ++c) {
      const int64_t e0 = ((int64_t)c * G + g) * VEC;
      if (e0 >= d.len) continue;
      T y[VEC];
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        A w, b;
        wb<Op>(d, e0 + k, w, b);
        y[k] = st<T>(Op::y(ld<A>(v[c][k]), p, w, b));
      }
      if constexpr (VEC > 1) {
        uint4 q;
        memcpy(&q, y, 16);
        *(uint4 *)(orow + e0) = q;
      } else {
        orow[e0] = y[0];
      }
    }
  }
}

static inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline unsigned grid_for(int64_t blocks) { return (unsigned)(blocks < 65535 * 32 ? blocks : 65535 * 32); }

/* Launch rows_regs_kernel<Op, N, VEC, BLOCK>: warps of 8 rows per block, or one block of `threads` per row. */
template <class Op, int N, int VEC, bool BLOCK> int launch_regs(const ck_rows_desc &d, const ck_env *env, int threads) {
  const int64_t blocks = BLOCK ? d.outer : cdiv(d.outer, threads / 32);
  ck_note(env, rows_regs_kernel<Op, N, VEC, BLOCK>, (unsigned)threads, 0);
  rows_regs_kernel<Op, N, VEC, BLOCK><<<grid_for(blocks), threads, 0, (cudaStream_t)env->stream>>>(d);
  return (int)cudaGetLastError();
}

/* A warp per row with the smallest N in {1, 2, 4, ..., NMAX} whose 32*N vectors cover the row. */
template <class Op, int VEC, int N, int NMAX> int launch_warp_rows(const ck_rows_desc &d, const ck_env *env) {
  if constexpr (N < NMAX) {
    if (32 * N * VEC < d.len) return launch_warp_rows<Op, VEC, 2 * N, NMAX>(d, env);
  }
  return launch_regs<Op, N, VEC, false>(d, env, 256);
}

} // namespace ckrows

/* extern "C" launcher NAME(desc, env): FN<Op>(d, env) for the descriptor's dtype and op. */
#define CK_ROWS_LAUNCHER(NAME, FN)                                                                                   \
  extern "C" int NAME(const void *desc, const ck_env *env) {                                                        \
    const ck_rows_desc &d = *(const ck_rows_desc *)desc;                                                            \
    return ckrows::dispatch(d, [&](auto op) { return FN<decltype(op)>(d, env); });                                  \
  }

#endif
