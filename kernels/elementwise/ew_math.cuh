/*
 * ew_math.cuh — the per-element math of every CK_EW_* op, shared by the elementwise variants
 * (01_strided.cu, 02_contiguous.cu).
 *
 * The semantics match the host reference (src/host/host_elementwise.c) expression for expression, so that
 * results agree bitwise for exact ops and to a few ulp for the transcendental ones (CUDA's expf/logf/...
 * are within 1-2 ulp of glibc's):
 *  - f32 computes in float, f64 in double. f16/bf16 (ck_f16_t/ck_bf16_t, 2-byte storage from half.h) are
 *    widened to float exactly, the row's float expression runs in float and the result is rounded once to
 *    the dtype (nearest even, the host's conversion code); generators compute in double and round once
 *    from there, RAND with as many bits as the dtype holds. The f32/f64/i32 instances are unchanged. MAXIMUM/MINIMUM propagate NaN; SIGN(NaN) = NaN, SIGN(+-0) =
 *    +-0; RELU(NaN) = NaN; SIGMOID = 1/(1+exp(-x)); CLAMP = min(max(x, lo), hi) in double.
 *  - i32: ADD SUB MUL NEG ABS wrap (unsigned arithmetic); DIV truncates, x/0 = 0, INT32_MIN/-1 =
 *    INT32_MIN; POW/POWS/CLAMP go through double and back with f2i (integral exponents by exact
 *    repeated squaring); FLOOR/CEIL are the identity.
 *  - float -> i32 (COPY, FILL, ARANGE, POW): truncate toward zero, NaN/out of range -> INT32_MIN. The
 *    hardware cvt.rzi saturates and maps NaN to 0, so the rule is spelled out here.
 *  - Generators see LIN (row-major linear index), and for EYE the last two indices (RI, J).
 */
#ifndef CK_EW_MATH_CUH
#define CK_EW_MATH_CUH

#include <stdint.h>

#include <type_traits>

#include "ck_kernels.h"
#include "half.h"
#include "philox.h"

namespace ckew {

// ---------------------------------------------------------------- conversions

__device__ __forceinline__ int32_t f2i(double x) {
  return (x > -2147483649.0 && x < 2147483648.0) ? (int32_t)x : INT32_MIN;
}

template <typename T> constexpr bool is_half_v = std::is_same_v<T, ck_f16_t> || std::is_same_v<T, ck_bf16_t>;

/* f16/bf16 <-> float/double, the same integer code as the host (half.h) */
__device__ __forceinline__ float widen(ck_f16_t h) { return ck_f16_to_f32(h.bits); }
__device__ __forceinline__ float widen(ck_bf16_t h) { return ck_bf16_to_f32(h.bits); }
template <typename T> __device__ __forceinline__ T narrow(float v) {
  T r;
  if constexpr (std::is_same_v<T, ck_f16_t>) r.bits = ck_f32_to_f16(v);
  else r.bits = ck_f32_to_bf16(v);
  return r;
}
template <typename T> __device__ __forceinline__ T narrow(double v) {
  T r;
  if constexpr (std::is_same_v<T, ck_f16_t>) r.bits = ck_f64_to_f16(v);
  else r.bits = ck_f64_to_bf16(v);
  return r;
}

/* double -> T with the library's rules */
template <typename T> __device__ __forceinline__ T from_double(double v) {
  if constexpr (std::is_same_v<T, int32_t>) return f2i(v);
  else if constexpr (is_half_v<T>) return narrow<T>(v);
  else return (T)v;
}

/* COPY: TI -> TO. Through double like the host; same-type copies move bits (NaN payloads kept). */
template <typename TO, typename TI> __device__ __forceinline__ TO cast(TI v) {
  if constexpr (std::is_same_v<TO, TI>) return v;
  else if constexpr (is_half_v<TI>) return from_double<TO>((double)widen(v));
  else return from_double<TO>((double)v);
}

/* Same as ck_ew_seed() in src/core/ew_ops.h: the RNG seed/offset from a double. */
__host__ __device__ __forceinline__ uint64_t seed_of(double s) {
  if (!(s == s)) return 0;
  if (s >= 18446744073709551616.0) return UINT64_MAX;
  if (s >= 9223372036854775808.0) return (uint64_t)s;
  if (s <= -9223372036854775808.0) return (uint64_t)INT64_MIN;
  return (uint64_t)(int64_t)s;
}

// ---------------------------------------------------------------- float/double overloads

__device__ __forceinline__ float m_exp(float x) { return expf(x); }
__device__ __forceinline__ double m_exp(double x) { return exp(x); }
__device__ __forceinline__ float m_log(float x) { return logf(x); }
__device__ __forceinline__ double m_log(double x) { return log(x); }
__device__ __forceinline__ float m_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double m_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float m_sin(float x) { return sinf(x); }
__device__ __forceinline__ double m_sin(double x) { return sin(x); }
__device__ __forceinline__ float m_cos(float x) { return cosf(x); }
__device__ __forceinline__ double m_cos(double x) { return cos(x); }
__device__ __forceinline__ float m_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double m_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float m_fabs(float x) { return fabsf(x); }
__device__ __forceinline__ double m_fabs(double x) { return fabs(x); }
__device__ __forceinline__ float m_floor(float x) { return floorf(x); }
__device__ __forceinline__ double m_floor(double x) { return floor(x); }
__device__ __forceinline__ float m_ceil(float x) { return ceilf(x); }
__device__ __forceinline__ double m_ceil(double x) { return ceil(x); }
__device__ __forceinline__ float m_pow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double m_pow(double x, double y) { return pow(x, y); }
__device__ __forceinline__ float m_atan2(float x, float y) { return atan2f(x, y); }
__device__ __forceinline__ double m_atan2(double x, double y) { return atan2(x, y); }
__device__ __forceinline__ float m_hypot(float x, float y) { return hypotf(x, y); }
__device__ __forceinline__ double m_hypot(double x, double y) { return hypot(x, y); }
__device__ __forceinline__ float m_fmod(float x, float y) { return fmodf(x, y); }
__device__ __forceinline__ double m_fmod(double x, double y) { return fmod(x, y); }
/* Lua 5.4's float modulo: a - floor(a/b)*b, computed as fmod (exact) moved to the divisor's sign. */
template <typename T> __device__ __forceinline__ T ew_fmod_lua(T x, T y) {
  T m = m_fmod(x, y);
  if (m != 0 && ((m < 0) != (y < 0))) m += y;
  return m;
}

// ---------------------------------------------------------------- i32 helpers (wrap, no UB)

__device__ __forceinline__ int32_t iw_neg(int32_t x) { return (int32_t)(0u - (uint32_t)x); }
__device__ __forceinline__ int32_t iw_abs(int32_t x) { return x < 0 ? iw_neg(x) : x; }
__device__ __forceinline__ int32_t iw_add(int32_t x, int32_t y) { return (int32_t)((uint32_t)x + (uint32_t)y); }
__device__ __forceinline__ int32_t iw_sub(int32_t x, int32_t y) { return (int32_t)((uint32_t)x - (uint32_t)y); }
__device__ __forceinline__ int32_t iw_mul(int32_t x, int32_t y) { return (int32_t)((uint32_t)x * (uint32_t)y); }
__device__ __forceinline__ int32_t iw_div(int32_t x, int32_t y) {
  if (y == 0) return 0;
  if (y == -1) return iw_neg(x);
  return x / y;
}
/* Lua's // and % on integers (floor division; the remainder takes the divisor's sign); y == 0 gives 0. */
__device__ __forceinline__ int32_t iw_idiv(int32_t x, int32_t y) {
  if (y == 0) return 0;
  if (y == -1) return iw_neg(x);
  const int32_t q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}
__device__ __forceinline__ int32_t iw_mod(int32_t x, int32_t y) {
  if (y == 0 || y == -1) return 0;
  const int32_t m = x % y;
  return (m != 0 && ((m ^ y) < 0)) ? m + y : m;
}
/* i32 POW/POWS: integral exponents by exact repeated squaring (CUDA's pow(19.0, 3.0) is 6858.999...,
 * which would truncate to 6858); other exponents through pow. Same loop as the host. */
__device__ __forceinline__ int32_t ew_ipow(double x, double y) {
  if (y == floor(y) && fabs(y) <= 1024.0) {
    int64_t n = (int64_t)fabs(y);
    double r = 1.0, b = x;
    while (n) {
      if (n & 1) r *= b;
      b *= b;
      n >>= 1;
    }
    return f2i(y < 0 ? 1.0 / r : r);
  }
  return f2i(pow(x, y));
}
__device__ __forceinline__ double ew_clamp(double x, double lo, double hi) {
  double t = x < lo ? lo : x;
  return t > hi ? hi : t;
}

// ---------------------------------------------------------------- op properties (compile time, from the table)

#define CKEW_KIND_COPY CK_EWK_COPY
#define CKEW_KIND_UNARY CK_EWK_UNARY
#define CKEW_KIND_BINARY CK_EWK_BINARY
#define CKEW_KIND_GEN CK_EWK_GEN
#define CKEW_DT_ALL false
#define CKEW_DT_FLOAT true
__host__ __device__ constexpr int kind_of(int op) {
  switch (op) {
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR) \
  case CK_EW_##ID: return CKEW_KIND_##KIND;
#include "ew_ops.def"
#undef CK_EW_OP
    default: return -1;
  }
}
__host__ __device__ constexpr bool float_only(int op) {
  switch (op) {
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR) \
  case CK_EW_##ID: return CKEW_DT_##DTYPES;
#include "ew_ops.def"
#undef CK_EW_OP
    default: return false;
  }
}
__host__ __device__ constexpr bool is_binary(int op) { return kind_of(op) == CK_EWK_BINARY; }
__host__ __device__ constexpr bool is_generator(int op) { return kind_of(op) == CK_EWK_GEN; }
__host__ __device__ constexpr int arity(int op) { return is_generator(op) ? 0 : (is_binary(op) ? 2 : 1); }
/* Whether (op, T) has a kernel: float-only ops are not instantiated for i32 (f16/bf16 have every op). */
template <int OP, typename T> __host__ __device__ constexpr bool valid() { return !(float_only(OP) && std::is_same_v<T, int32_t>); }

/* Scalars every element needs (precomputed once per launch). */
struct Scal {
  double s1, s2;
  uint64_t seed, offs;
};

// ---------------------------------------------------------------- the math

/* The math of every op, generated from the table: OpMath<OP>::f<T> evaluates the row's float expression
 * (T float or double) or its i32 expression. The expressions' free names are this function's parameters.
 * RB overrides the RAND precision code IS64 (philox.h: 2 for f16, 3 for bf16; -1: from T). */
#define NAN2(x, y) ((x) + (y)) /* NaN if either is NaN */
/* a + b*i in double with both roundings, as the host computes it (nvcc would fuse it into an fma) */
__device__ __forceinline__ double ew_axpb(double a, double b, int64_t i) { return __dadd_rn(a, __dmul_rn(b, (double)i)); }
#define ew_f2i f2i
template <int OP> struct OpMath;
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR)                                                  \
  template <> struct OpMath<CK_EW_##ID> {                                                                   \
    template <typename T, int RB = -1>                                                                      \
    __device__ __forceinline__ static T f(T x, T y, double S1, double S2, uint64_t SEED, uint64_t OFFS,     \
                                          int64_t LIN, int64_t RI, int64_t J) {                             \
      constexpr int IS64 = RB >= 0 ? RB : (std::is_same_v<T, double> ? 1 : 0);                             \
      (void)x, (void)y, (void)S1, (void)S2, (void)SEED, (void)OFFS, (void)LIN, (void)RI, (void)J, (void)IS64; \
      if constexpr (std::is_same_v<T, int32_t>) return IEXPR;                                               \
      else return FEXPR;                                                                                    \
    }                                                                                                       \
  };
#include "ew_ops.def"
#undef CK_EW_OP

/* out = op(x, y); lin/ri/j are only read by generators. */
template <int OP, typename T>
__device__ __forceinline__ T apply(T x, T y, const Scal &s, int64_t lin, int64_t ri, int64_t j) {
  return OpMath<OP>::template f<T>(x, y, s.s1, s.s2, s.seed, s.offs, lin, ri, j);
}

// ---------------------------------------------------------------- run-time op -> compile-time op

/* Calls F::template run<OP>() for the run-time `op` (CK_EW_COPY included); returns its result, or
 * cudaErrorInvalidValue (1) for an unknown id. One switch serves both variants' launchers. */
template <typename F> __host__ inline int dispatch_op(int op, F &&f) {
  switch (op) {
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR) \
  case CK_EW_##ID: return f.template run<CK_EW_##ID>();
#include "ew_ops.def"
#undef CK_EW_OP
    default: return 1;
  }
}

/* Calls F::template run<T>() for the run-time dtype (else cudaErrorInvalidValue). */
template <typename F> __host__ inline int dispatch_dtype(int dt, F &&f) {
  switch (dt) {
    case CK_F32: return f.template run<float>();
    case CK_F64: return f.template run<double>();
    case CK_I32: return f.template run<int32_t>();
    case CK_F16: return f.template run<ck_f16_t>();
    case CK_BF16: return f.template run<ck_bf16_t>();
    default: return 1;
  }
}

/* dispatch(op, out_dtype, a_dtype, f) calls f.template run<OP, TO, TI>() for the run-time triple: TI == TO
 * except for COPY (all 25 pairs); float-only ops have no i32 instance (cudaErrorInvalidValue). */
template <typename F, typename TO> struct ByIn {
  F &f;
  template <typename TI> int run() { return f.template run<CK_EW_COPY, TO, TI>(); }
};
template <typename F, int OP> struct ByOut {
  F &f;
  int adt;
  template <typename TO> int run() {
    if constexpr (OP == CK_EW_COPY) return dispatch_dtype(adt, ByIn<F, TO>{f});
    else if constexpr (!valid<OP, TO>()) return 1;
    else return f.template run<OP, TO, TO>();
  }
};
template <typename F> struct ByOp {
  F &f;
  int odt, adt;
  template <int OP> int run() { return dispatch_dtype(odt, ByOut<F, OP>{f, adt}); }
};
template <typename F> __host__ inline int dispatch(int op, int odt, int adt, F &f) {
  return dispatch_op(op, ByOp<F>{f, odt, adt});
}

/* One element of any op: COPY casts, everything else applies the math in TO (f16/bf16: in float, or
 * double for generators, rounded once to TO). */
template <int OP, typename TO, typename TI>
__device__ __forceinline__ TO elem(TI x, TI y, const Scal &s, int64_t lin, int64_t ri, int64_t j) {
  if constexpr (OP == CK_EW_COPY) return cast<TO, TI>(x);
  else if constexpr (is_half_v<TO>) {
    using CT = std::conditional_t<is_generator(OP), double, float>;
    constexpr int RB = std::is_same_v<TO, ck_f16_t> ? 2 : 3;
    const CT r = OpMath<OP>::template f<CT, RB>((CT)widen(x), (CT)widen(y), s.s1, s.s2, s.seed, s.offs, lin, ri, j);
    return narrow<TO>(r);
  } else return apply<OP, TO>(x, y, s, lin, ri, j);
}

/* Which input a binary op reads from where: array b, scalar on the right, scalar on the left. */
enum { BM_ARRAY = 0, BM_RIGHT = 1, BM_LEFT = 2 };
__host__ inline int bmode_of(const ck_ew_desc *d) {
  return !d->b_scalar ? BM_ARRAY : (d->scalar_left ? BM_LEFT : BM_RIGHT);
}
__host__ inline Scal scal_of(const ck_ew_desc *d) { return Scal{d->s1, d->s2, seed_of(d->s1), seed_of(d->s2)}; }

/* Grid for a grid-stride loop: enough blocks for `work` items, capped at `waves` full-occupancy waves. */
__host__ inline unsigned grid_for(int64_t work, int threads, int sm_count, int blocks_per_sm) {
  int64_t want = (work + threads - 1) / threads;
  int64_t cap = (int64_t)(sm_count > 0 ? sm_count : 132) * blocks_per_sm;
  if (want > cap) want = cap;
  return (unsigned)(want < 1 ? 1 : want);
}

}  // namespace ckew

#endif
