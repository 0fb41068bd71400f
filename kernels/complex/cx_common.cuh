/*
 * cx_common.cuh — the complex ladder's shared plumbing (issue 35): each precision's complex type and math (from
 * cx_math.h, the host oracle's text), the op's result type, the run-time -> compile-time op switch and the
 * launcher shape. No rung's kernel body lives here.
 */
#ifndef CK_CX_COMMON_CUH
#define CK_CX_COMMON_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "complex.h"
#include "cx_math.h"
#include "ck_ws.cuh"

namespace ckcx {

/* The math of one precision R: C is its complex storage type. */
template <class R> struct M;
#define CKCX_M(R, CT, P)                                                                                             \
  template <> struct M<R> {                                                                                          \
    using C = CT;                                                                                                    \
    static __device__ __forceinline__ C mk(R re, R im) { return P##mk(re, im); }                                     \
    static __device__ __forceinline__ C add(C a, C b) { return P##add(a, b); }                                       \
    static __device__ __forceinline__ C sub(C a, C b) { return P##sub(a, b); }                                       \
    static __device__ __forceinline__ C mul(C a, C b) { return P##mul(a, b); }                                       \
    static __device__ __forceinline__ C div(C a, C b) { return P##div(a, b); }                                       \
    static __device__ __forceinline__ int eq(C a, C b) { return P##eq(a, b); }                                       \
    static __device__ __forceinline__ C neg(C a) { return P##neg(a); }                                               \
    static __device__ __forceinline__ C conj(C a) { return P##conj(a); }                                             \
    static __device__ __forceinline__ C exp(C a) { return P##exp(a); }                                               \
    static __device__ __forceinline__ C log(C a) { return P##log(a); }                                               \
    static __device__ __forceinline__ C sqrt(C a) { return P##sqrt(a); }                                             \
    static __device__ __forceinline__ R abs(C a) { return P##abs(a); }                                               \
    static __device__ __forceinline__ R angle(C a) { return P##angle(a); }                                           \
  };
CKCX_M(float, ck_c64_t, ckcf_)
CKCX_M(double, ck_c128_t, ckcd_)
#undef CKCX_M

/* V elements of T moved as one load or store of V * sizeof(T) bytes (16 at most). */
template <class T, int V> struct alignas(sizeof(T) * V) Vec {
  T e[V];
};

/* The result type of op FN: complex, the part type (abs, angle) or bool's byte (eq, ne). */
template <int FN, class R> struct Out {
  using T = typename M<R>::C;
};
template <class R> struct Out<CK_CX_EQ, R> { using T = uint8_t; };
template <class R> struct Out<CK_CX_NE, R> { using T = uint8_t; };
template <class R> struct Out<CK_CX_ABS, R> { using T = R; };
template <class R> struct Out<CK_CX_ANGLE, R> { using T = R; };

/* Op FN on x (and y for binary ops). */
template <int FN, class R>
__device__ __forceinline__ typename Out<FN, R>::T apply(typename M<R>::C x, typename M<R>::C y) {
  using F = M<R>;
  if constexpr (FN == CK_CX_ADD) return F::add(x, y);
  else if constexpr (FN == CK_CX_SUB) return F::sub(x, y);
  else if constexpr (FN == CK_CX_MUL) return F::mul(x, y);
  else if constexpr (FN == CK_CX_DIV) return F::div(x, y);
  else if constexpr (FN == CK_CX_EQ) return (uint8_t)F::eq(x, y);
  else if constexpr (FN == CK_CX_NE) return (uint8_t)!F::eq(x, y);
  else if constexpr (FN == CK_CX_NEG) return F::neg(x);
  else if constexpr (FN == CK_CX_CONJ) return F::conj(x);
  else if constexpr (FN == CK_CX_EXP) return F::exp(x);
  else if constexpr (FN == CK_CX_LOG) return F::log(x);
  else if constexpr (FN == CK_CX_SQRT) return F::sqrt(x);
  else if constexpr (FN == CK_CX_ABS) return F::abs(x);
  else return F::angle(x);
}

/* Every elementwise op, for the run-time switch: X(FN). */
#define CKCX_EW_FNS(X)                                                                                               \
  X(CK_CX_ADD) X(CK_CX_SUB) X(CK_CX_MUL) X(CK_CX_DIV) X(CK_CX_EQ) X(CK_CX_NE) X(CK_CX_NEG) X(CK_CX_CONJ) X(CK_CX_EXP)  \
  X(CK_CX_LOG) X(CK_CX_SQRT) X(CK_CX_ABS) X(CK_CX_ANGLE)

/* The scalar operand in the compute precision (rounded once, as the dispatcher rounds real numbers). */
template <class R> static inline typename M<R>::C scalar_of(const ck_cx_desc &d) {
  typename M<R>::C s;
  s.re = (R)d.s_re;
  s.im = (R)d.s_im;
  return s;
}

static inline unsigned grid_cap(int64_t blocks, int64_t cap) {
  if (blocks < 1) blocks = 1;
  if (blocks > cap) blocks = cap;
  return (unsigned)blocks;
}

/* A rung's launcher from template <class R> int run(const ck_cx_desc &, const ck_env *). */
#define CK_CX_LAUNCHER(fn, run)                                                                                      \
  extern "C" int fn(const void *desc, const ck_env *env) {                                                           \
    const ck_cx_desc &d = *(const ck_cx_desc *)desc;                                                                 \
    return d.fp64 ? run<double>(d, env) : run<float>(d, env);                                                        \
  }

} // namespace ckcx

#endif
