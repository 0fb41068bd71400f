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
 *    from there, RAND with as many bits as the dtype holds. MAXIMUM/MINIMUM propagate NaN; SIGN(NaN) = NaN,
 *    SIGN(+-0) = +-0; RELU(NaN) = NaN; SIGMOID = 1/(1+exp(-x)); CLAMP = min(max(x, lo), hi) in double.
 *  - Integers (i32 and the issue-32 dtypes, bool as an input of TOBOOL and bit ops) compute in 64 bits with
 *    the helpers of ew_helpers.h and store modulo the result's width: ADD SUB MUL NEG ABS wrap; DIV
 *    truncates, x/0 = 0, MIN/-1 = MIN; POW is exact modulo 2^64 for exponents >= 0; FLOOR/CEIL are the
 *    identity. TOBOOL ops (comparisons, logic, isnan ...) store value != 0 into bool.
 *  - float -> integer (COPY, ARANGE, POWS with a fractional exponent): truncate toward zero, NaN/out of range
 *    -> the dtype's minimum (f2s). The hardware cvt.rzi saturates and maps NaN to 0, so the rule is spelled out.
 *  - Generators see LIN (row-major linear index), and for EYE the last two indices (RI, J).
 */
#ifndef CK_EW_MATH_CUH
#define CK_EW_MATH_CUH

#include <stdint.h>

#include <type_traits>

#include "ck_kernels.h"
#include "ew_helpers.h"
#include "half.h"
#include "philox.h"

namespace ckew {

// ---------------------------------------------------------------- dtypes and conversions

/* bool's storage: one byte, 0 or 1; its own type so that storing into it means "!= 0", not "modulo 256". */
struct b8 {
  uint8_t v;
  b8() = default;
  __host__ __device__ constexpr b8(int x) : v(x != 0) {}
};

template <typename T> constexpr bool is_half_v = std::is_same_v<T, ck_f16_t> || std::is_same_v<T, ck_bf16_t>;
template <typename T> constexpr bool is_b8_v = std::is_same_v<T, b8>;
/* the integer dtypes and bool: they compute in 64 bits (ew_helpers.h says why) */
template <typename T> constexpr bool is_int_v = std::is_integral_v<T> || is_b8_v<T>;
template <typename T> constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;

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

/* An integer or bool value as the 64-bit integer its expressions compute on. */
template <typename T> __device__ __forceinline__ long long to_ll(T x) {
  if constexpr (is_b8_v<T>) return x.v != 0;
  else return (long long)x;
}
/* A 64-bit result stored into an integer dtype: modulo 2^bits (bool: != 0). */
template <typename T> __device__ __forceinline__ T store_ll(long long r) {
  if constexpr (is_b8_v<T>) return b8{(uint8_t)(r != 0)};
  else return (T)(std::make_unsigned_t<T>)(unsigned long long)r;
}
/* double -> an integer dtype, as a 64-bit value: truncate toward zero; NaN and values out of the dtype's range
 * give its minimum (0 for the unsigned ones; the host's ck_ew_f2i* in src/core/ew_ops.h); bool: != 0. The
 * hardware cvt.rzi saturates and maps NaN to 0, so the rule is spelled out. */
template <typename T> __device__ __forceinline__ long long f2s(double x) {
  if constexpr (is_b8_v<T>) return x != 0;
  else if constexpr (std::is_same_v<T, int64_t>)
    return (x > -9223372036854777856.0 && x < 9223372036854775808.0) ? (long long)x : (long long)INT64_MIN;
  else {
    constexpr long long mn = std::is_signed_v<T> ? -(1ll << (8 * sizeof(T) - 1)) : 0;
    constexpr double lo = (double)mn - 1.0, hi = (double)(std::is_signed_v<T> ? -mn : 2 * (1ll << (8 * sizeof(T) - 1)));
    return (x > lo && x < hi) ? (long long)x : mn;
  }
}
__device__ __forceinline__ int32_t f2i(double x) { return (int32_t)f2s<int32_t>(x); }

/* The conversions around an f16 op's arithmetic (elem below; casts keep widen/narrow): the hardware's cvt both
 * ways, one instruction each. Finite values and infinities convert exactly as widen/narrow do (the GPU spec of
 * spec/half_spec.lua checks the cvt against the integer rule over every pattern); a NaN stays a NaN, with the
 * hardware's payload instead of the integer rule's. That payload is not kept by the arithmetic itself either: an
 * NVIDIA GPU's f32 ops return its canonical NaN and x86's their own, which is why the specs compare NaN results as
 * NaN, not by their bits. The integer rule's NaN handling cost f16 a third of its speed in the tiled rung: about
 * 17 more instructions per element than bf16 (ncu, session 14, H200: 409M against 263M executed; 66.7% against
 * 97.4% of memcpy). bf16's conversions are a shift and an integer rounding already, and stay as they are. */
__device__ __forceinline__ float widen_op(ck_f16_t h) {
#ifdef __CUDA_ARCH__
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)h.bits));
  return f;
#else
  return widen(h); // (lab/ew_tiled_emu: the CPU stand-in)
#endif
}
__device__ __forceinline__ float widen_op(ck_bf16_t h) { return widen(h); }
template <typename T> __device__ __forceinline__ T narrow_op(float v) {
#ifdef __CUDA_ARCH__
  if constexpr (std::is_same_v<T, ck_f16_t>) {
    unsigned short r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(v));
    T t;
    t.bits = r;
    return t;
  }
#endif
  return narrow<T>(v);
}
template <typename T> __device__ __forceinline__ T narrow_op(double v) { return narrow<T>(v); }

/* double -> T with the library's rules */
template <typename T> __device__ __forceinline__ T from_double(double v) {
  if constexpr (is_int_v<T>) return store_ll<T>(f2s<T>(v));
  else if constexpr (is_half_v<T>) return narrow<T>(v);
  else return (T)v;
}

/* COPY: TI -> TO, the host's rules (host_elementwise.c, above ew_cast_table): int -> int wraps, int -> float
 * rounds once (i64 -> f16/bf16 through f64), float -> int by f2s, x -> bool is x != 0, float -> float through
 * double. Same-type copies move bits (NaN payloads kept). */
template <typename TO, typename TI> __device__ __forceinline__ TO cast(TI v) {
  if constexpr (std::is_same_v<TO, TI>) return v;
  else if constexpr (is_int_v<TI>) {
    const long long i = to_ll(v);
    if constexpr (is_int_v<TO>) return store_ll<TO>(i);
    else if constexpr (is_half_v<TO>) return narrow<TO>((double)i);
    else return (TO)i;
  } else {
    double d;
    if constexpr (is_half_v<TI>) d = (double)widen(v);
    else d = (double)v;
    if constexpr (is_b8_v<TO>) return b8{(uint8_t)(d != 0)};
    else return from_double<TO>(d);
  }
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

// ---------------------------------------------------------------- integer helpers (64-bit, wrap, no UB)

/* The text the host and ck.map's programs compile too (ew_helpers.h). */
#define CKEW_HELPER(ret, name, params, ...) __device__ __forceinline__ ret name params { __VA_ARGS__ }
CK_EW_HELPERS(CKEW_HELPER)
#undef CKEW_HELPER

// ---------------------------------------------------------------- op properties (compile time, from the table)

#define CKEW_KIND_COPY CK_EWK_COPY
#define CKEW_KIND_UNARY CK_EWK_UNARY
#define CKEW_KIND_BINARY CK_EWK_BINARY
#define CKEW_KIND_GEN CK_EWK_GEN
__host__ __device__ constexpr int kind_of(int op) {
  switch (op) {
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR) \
  case CK_EW_##ID: return CKEW_KIND_##KIND;
#include "ew_ops.def"
#undef CK_EW_OP
    default: return -1;
  }
}
__host__ __device__ constexpr int dtypes_of(int op) {
  switch (op) {
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR) \
  case CK_EW_##ID: return CK_EWD_##DTYPES;
#include "ew_ops.def"
#undef CK_EW_OP
    default: return -1;
  }
}
__host__ __device__ constexpr bool float_only(int op) { return dtypes_of(op) == CK_EWD_FLOAT; }
__host__ __device__ constexpr bool to_bool(int op) { return dtypes_of(op) == CK_EWD_TOBOOL; }
__host__ __device__ constexpr bool is_binary(int op) { return kind_of(op) == CK_EWK_BINARY; }
__host__ __device__ constexpr bool is_generator(int op) { return kind_of(op) == CK_EWK_GEN; }
__host__ __device__ constexpr int arity(int op) { return is_generator(op) ? 0 : (is_binary(op) ? 2 : 1); }
/* Whether (op, TO, TI) has a kernel. COPY: every pair. TOBOOL ops: a bool result from any input. The others
 * compute in their result dtype (TI == TO): float-only ops on floats, bit operations on integers and bool,
 * the rest on every dtype but bool (bool operands of arithmetic are promoted to i32 first), generators on
 * every dtype. */
template <int OP, typename TO, typename TI> __host__ __device__ constexpr bool valid() {
  if constexpr (OP == CK_EW_COPY) return true;
  else if constexpr (to_bool(OP)) return is_b8_v<TO>;
  else if constexpr (!std::is_same_v<TO, TI>) return false;
  else if constexpr (dtypes_of(OP) == CK_EWD_FLOAT) return is_float_v<TO>;
  else if constexpr (dtypes_of(OP) == CK_EWD_INT) return is_int_v<TO>;
  else return !is_b8_v<TO> || is_generator(OP);
}

/* Scalars every element needs (precomputed once per launch). */
struct Scal {
  double s1, s2;
  uint64_t seed, offs;
  long long si; /* the scalar as an exact integer (integer dtypes) */
};

/* The scalar operand in the operand dtype: integers take the exact integer, floats round s1 once. */
template <typename T> __device__ __forceinline__ T scalar_of(const Scal &s) {
  if constexpr (is_int_v<T>) return store_ll<T>(s.si);
  else return from_double<T>(s.s1);
}

// ---------------------------------------------------------------- the math

/* The math of every op, generated from the table: OpMath<OP>::f<T> evaluates the row's float expression
 * (T float or double), OpMath<OP>::fi<ST> its integer expression on 64-bit values for the integer dtype (or
 * bool) ST. The expressions' free names are these functions' parameters. RB overrides the RAND precision
 * code IS64 (philox.h: 2 for f16, 3 for bf16; -1: from T). */
#define NAN2(x, y) ((x) + (y)) /* NaN if either is NaN */
/* a + b*i in double with both roundings, as the host computes it (nvcc would fuse it into an fma) */
__device__ __forceinline__ double ew_axpb(double a, double b, int64_t i) { return __dadd_rn(a, __dmul_rn(b, (double)i)); }
#define ew_f2i(v) f2s<ST>(v)
template <int OP> struct OpMath;
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR)                                                  \
  template <> struct OpMath<CK_EW_##ID> {                                                                   \
    template <typename T, int RB = -1>                                                                      \
    __device__ __forceinline__ static T f(T x, T y, double S1, double S2, uint64_t SEED, uint64_t OFFS,     \
                                          int64_t LIN, int64_t RI, int64_t J) {                             \
      constexpr int IS64 = RB >= 0 ? RB : (std::is_same_v<T, double> ? 1 : 0);                             \
      (void)x, (void)y, (void)S1, (void)S2, (void)SEED, (void)OFFS, (void)LIN, (void)RI, (void)J, (void)IS64; \
      return FEXPR;                                                                                         \
    }                                                                                                       \
    template <typename ST>                                                                                  \
    __device__ __forceinline__ static long long fi(long long x, long long y, double S1, double S2,          \
                                                   long long SI, int64_t LIN, int64_t RI, int64_t J) {     \
      constexpr int ISB = is_b8_v<ST>;                                                                      \
      (void)x, (void)y, (void)S1, (void)S2, (void)SI, (void)LIN, (void)RI, (void)J, (void)ISB;              \
      return (long long)(IEXPR);                                                                            \
    }                                                                                                       \
  };
#include "ew_ops.def"
#undef CK_EW_OP

/* out = op(x, y); lin/ri/j are only read by generators. */
template <int OP, typename T>
__device__ __forceinline__ T apply(T x, T y, const Scal &s, int64_t lin, int64_t ri, int64_t j) {
  return OpMath<OP>::template f<T>(x, y, s.s1, s.s2, s.seed, s.offs, lin, ri, j);
}
/* a float result stored as TO: the same dtype, or a TOBOOL op's bool */
template <typename TO, typename T> __device__ __forceinline__ TO put(T r) {
  if constexpr (is_b8_v<TO>) return b8{(uint8_t)(r != 0)};
  else return r;
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

/* Calls F::template run<T>() for the run-time dtype (else cudaErrorInvalidValue). WIDE: every row of
 * dtypes.def; otherwise the five float/i32 dtypes only (rungs that do not instantiate the others, to keep
 * compile time and code size down: their supports() declines them). */
template <bool WIDE, typename F> __host__ inline int dispatch_dtype(int dt, F &&f) {
  switch (dt) {
    case CK_F32: return f.template run<float>();
    case CK_F64: return f.template run<double>();
    case CK_I32: return f.template run<int32_t>();
    case CK_F16: return f.template run<ck_f16_t>();
    case CK_BF16: return f.template run<ck_bf16_t>();
    default: break;
  }
  if constexpr (WIDE) {
    switch (dt) {
      case CK_BOOL: return f.template run<b8>();
      case CK_U8: return f.template run<uint8_t>();
      case CK_I8: return f.template run<int8_t>();
      case CK_I16: return f.template run<int16_t>();
      case CK_U32: return f.template run<uint32_t>();
      case CK_I64: return f.template run<int64_t>();
      default: break;
    }
  }
  return 1;
}

/* The dtype a descriptor's inputs are read in: COPY's and TOBOOL ops' own, else the result's. */
__host__ inline int in_dtype_of(const ck_ew_desc *d) {
  return (d->op == CK_EW_COPY || dtypes_of(d->op) == CK_EWD_TOBOOL) ? d->a_dtype : d->out_dtype;
}

/* dispatch<WIDE>(d, f) calls f.template run<OP, TO, TI>() for the descriptor's (op, result dtype, input
 * dtype) when valid<OP, TO, TI>() (cudaErrorInvalidValue otherwise). */
template <bool WIDE, typename F, int OP, typename TO> struct ByIn {
  F &f;
  template <typename TI> int run() {
    if constexpr (valid<OP, TO, TI>()) return f.template run<OP, TO, TI>();
    else return 1;
  }
};
template <bool WIDE, typename F, int OP> struct ByOut {
  F &f;
  int adt;
  template <typename TO> int run() {
    if constexpr (OP == CK_EW_COPY || to_bool(OP)) {
      if constexpr (OP != CK_EW_COPY && !is_b8_v<TO>) return 1;
      else return dispatch_dtype<WIDE>(adt, ByIn<WIDE, F, OP, TO>{f});
    } else if constexpr (!valid<OP, TO, TO>()) return 1;
    else return f.template run<OP, TO, TO>();
  }
};
template <bool WIDE, typename F> struct ByOp {
  F &f;
  int odt, adt;
  template <int OP> int run() { return dispatch_dtype<WIDE>(odt, ByOut<WIDE, F, OP>{f, adt}); }
};
template <bool WIDE, typename F> __host__ inline int dispatch(const ck_ew_desc *d, F &f) {
  return dispatch_op(d->op, ByOp<WIDE, F>{f, d->out_dtype, in_dtype_of(d)});
}

/* One element of any op: COPY casts; integers and bool compute in 64 bits and store modulo the result's
 * width; f16/bf16 compute in float (double for generators) and round once (widen_op/narrow_op: NaN payloads are
 * the hardware's); f32/f64 compute in their type.
 * A TOBOOL op stores value != 0. */
template <int OP, typename TO, typename TI>
__device__ __forceinline__ TO elem(TI x, TI y, const Scal &s, int64_t lin, int64_t ri, int64_t j) {
  if constexpr (OP == CK_EW_COPY) return cast<TO, TI>(x);
  else if constexpr (is_int_v<TI>) {
    return store_ll<TO>(OpMath<OP>::template fi<TI>(to_ll(x), to_ll(y), s.s1, s.s2, s.si, lin, ri, j));
  } else if constexpr (is_half_v<TI>) {
    using CT = std::conditional_t<is_generator(OP), double, float>;
    constexpr int RB = std::is_same_v<TI, ck_f16_t> ? 2 : 3;
    const CT r = OpMath<OP>::template f<CT, RB>((CT)widen_op(x), (CT)widen_op(y), s.s1, s.s2, s.seed, s.offs, lin, ri, j);
    if constexpr (is_b8_v<TO>) return put<TO>(r);
    else return narrow_op<TO>(r);
  } else return put<TO>(apply<OP, TI>(x, y, s, lin, ri, j));
}

/* Which input a binary op reads from where: array b, scalar on the right, scalar on the left. */
enum { BM_ARRAY = 0, BM_RIGHT = 1, BM_LEFT = 2 };
__host__ inline int bmode_of(const ck_ew_desc *d) {
  return !d->b_scalar ? BM_ARRAY : (d->scalar_left ? BM_LEFT : BM_RIGHT);
}
__host__ inline Scal scal_of(const ck_ew_desc *d) { return Scal{d->s1, d->s2, seed_of(d->s1), seed_of(d->s2), d->si}; }

/* Grid for a grid-stride loop: enough blocks for `work` items, capped at `waves` full-occupancy waves. */
__host__ inline unsigned grid_for(int64_t work, int threads, int sm_count, int blocks_per_sm) {
  int64_t want = (work + threads - 1) / threads;
  int64_t cap = (int64_t)(sm_count > 0 ? sm_count : 132) * blocks_per_sm;
  if (want > cap) want = cap;
  return (unsigned)(want < 1 ? 1 : want);
}

}  // namespace ckew

#endif
