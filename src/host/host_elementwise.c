/*
 * host_elementwise.c — the host (CPU) reference for every CK_EW_* op: the oracle the GPU variants are
 * checked against, and the host backend itself.
 *
 * Shape of the code: each (op, dtype) is one small "row" function generated from a single expression in
 * the op table below (an X-macro); one generic odometer walks the outer dims and calls the row function on
 * the innermost dim. Dims are coalesced first (ck_ew_coalesce) so that contiguous and broadcast operands
 * reduce to long rows the compiler can vectorise.
 *
 * Semantics (the GPU kernels in kernels/elementwise/ew_math.cuh implement the same expressions):
 *  - f32 is computed in float (expf, powf, ...; <tgmath.h> picks them), f64 in double. f16 and bf16 are
 *    stored as their bits (kernels/half.h converts): each value is widened to float exactly, the row's
 *    float expression runs in float and the result is rounded once to the dtype (nearest even). The
 *    generators FILL, ARANGE and EYE compute in double and round once from there (no double rounding
 *    through f32); RAND and RANDN draw in float precision like f32.
 *  - MAXIMUM/MINIMUM propagate NaN; SIGN(NaN) = NaN, SIGN(+-0) = +-0; RELU(NaN) = NaN;
 *    SIGMOID = 1/(1+exp(-x)); CLAMP = min(max(x, lo), hi) (NaN passes through; lo > hi gives hi).
 *  - Integers (i32, u8, i8, i16, u32, i64; bool as an input of the TOBOOL and bit ops) compute in 64 bits with
 *    the helpers of kernels/elementwise/ew_helpers.h and store modulo 2^bits of the result: ADD SUB MUL NEG
 *    ABS wrap; DIV truncates toward zero with x/0 = 0 and MIN/-1 = MIN; POW is exact modulo 2^64 for
 *    exponents >= 0 (x^-n is 1 // x^n: 1, +-1 or 0); a fractional POWS exponent and CLAMP's bounds go through
 *    double and back by the float -> integer rule; FLOOR/CEIL are the identity; SIGN gives -1/0/1. EXP LOG
 *    SQRT SIN COS TANH SIGMOID RAND RANDN are refused (CK_ERR_DTYPE), and so are bit ops on floats.
 *  - Comparisons, logical ops and isnan/isinf/isfinite (TOBOOL rows) compute in the operands' dtype and
 *    store value != 0 into bool.
 *  - COPY converts a_dtype -> out_dtype (every pair of the 11 dtypes; the rules above ew_cast_table): float -> int
 *    truncates, NaN/out of range give the dtype's minimum (INT32_MIN for i32); int -> int wraps; x -> bool is x != 0.
 *  - Generators: FILL s1; ARANGE s1 + s2*lin (computed in double, rounded once); EYE 1 where the last two
 *    indices are equal (missing leading indices count as 0, so a 1-d EYE is e0 and a 0-d one is 1);
 *    RAND/RANDN = ck_rand_uniform / ck_rand_normal(seed s1, offset s2, lin). lin is the row-major logical
 *    index of the element.
 */
#include <math.h>
#include <string.h>
#include <tgmath.h>

#include "fp8.h"
#include "half.h"
#include "philox.h"
#include "ck.h"
#include "elementwise/ew_helpers.h"
#include "ew_ops.h"

// ---------------------------------------------------------------- coalescing

void ck_ew_coalesce(ck_ew_desc *d) {
  if (d->op == CK_EW_EYE) return;
  int64_t numel = 1;
  for (int k = 0; k < d->ndim; ++k) numel *= d->shape[k];
  if (numel == 0) return;
  const int arity = ck_ew_op_arity(d->op);
  const bool use_a = arity >= 1;
  const bool use_b = arity == 2 && !d->b_scalar;
  int64_t *const st[3] = {d->out_st, d->a_st, d->b_st}; /* the operands read must merge; the others move along */
  const int n = ck_coalesce_dims(d->ndim, d->shape, 3, st, 1 + use_a + use_b);
  for (int k = n; k < CK_MAX_DIMS; ++k) d->shape[k] = 1, d->out_st[k] = d->a_st[k] = d->b_st[k] = 0;
  d->ndim = n;
  d->numel = numel;
}

// ---------------------------------------------------------------- scalar math

/* The table's helpers (iw_* for the integers, ew_clamp ...): one text for the host, the rungs and ck.map's NVRTC
 * programs. */
#define EW_HELPER(ret, name, params, ...) static inline ret name params { __VA_ARGS__ }
CK_EW_HELPERS(EW_HELPER)
#undef EW_HELPER
/* Lua 5.4's float modulo: a - floor(a/b)*b, computed as fmod (exact) moved to the divisor's sign. */
static inline float ew_fmod_lua_f(float x, float y) {
  float m = fmodf(x, y);
  if (m != 0 && ((m < 0) != (y < 0))) m += y;
  return m;
}
static inline double ew_fmod_lua_d(double x, double y) {
  double m = fmod(x, y);
  if (m != 0 && ((m < 0) != (y < 0))) m += y;
  return m;
}
#define ew_fmod_lua(x, y) _Generic((x), float: ew_fmod_lua_f, default: ew_fmod_lua_d)(x, y)
/* Row context: n elements along the innermost dim. x/y are the operand values (type T), S1/S2 the
 * descriptor's scalars (double), i the index along the row, LIN the row-major linear index, RI the index
 * in the second-to-last dim (EYE). */
typedef struct ew_row {
  void *o;
  const void *a, *b;
  int64_t n, os, as, bs, lin0, ri;
  double s1, s2;
  long long si;
} ew_row;
typedef void (*ew_rowfn)(const ew_row *r);

/* loads: K is KINT (an int64_t) or KFLT (a double) */
#define EW_K_F32 KFLT
#define EW_K_F64 KFLT
#define EW_K_F16 KFLT
#define EW_K_BF16 KFLT
#define EW_K_I32 KINT
#define EW_K_BOOL KINT
#define EW_K_U8 KINT
#define EW_K_I8 KINT
#define EW_K_I16 KINT
#define EW_K_U32 KINT
#define EW_K_I64 KINT
#define EW_LD_F32(v) ((double)(v))
#define EW_LD_F64(v) ((double)(v))
#define EW_LD_F16(v) ((double)ck_f16_to_f32(v))
#define EW_LD_BF16(v) ((double)ck_bf16_to_f32(v))
#define EW_LD_BOOL(v) ((int64_t)((v) != 0))
#define EW_LD_I32(v) ((int64_t)(v))
#define EW_LD_U8 EW_LD_I32
#define EW_LD_I8 EW_LD_I32
#define EW_LD_I16 EW_LD_I32
#define EW_LD_U32 EW_LD_I32
#define EW_LD_I64 EW_LD_I32
/* stores from a double (KFLT) and from an int64_t (KINT) */
#define EW_ST_KFLT_F32(v) ((float)(v))
#define EW_ST_KFLT_F64(v) ((double)(v))
#define EW_ST_KFLT_F16(v) ck_f64_to_f16(v)
#define EW_ST_KFLT_BF16(v) ck_f64_to_bf16(v)
#define EW_ST_KFLT_I32(v) ck_ew_f2i(v)
#define EW_ST_KFLT_BOOL(v) ((uint8_t)((v) != 0))
#define EW_ST_KFLT_U8(v) ck_ew_f2u8(v)
#define EW_ST_KFLT_I8(v) ck_ew_f2i8(v)
#define EW_ST_KFLT_I16(v) ck_ew_f2i16(v)
#define EW_ST_KFLT_U32(v) ck_ew_f2u32(v)
#define EW_ST_KFLT_I64(v) ck_ew_f2i64(v)
#define EW_ST_KINT_F32(v) ((float)(v))
#define EW_ST_KINT_F64(v) ((double)(v))
#define EW_ST_KINT_F16(v) ck_f64_to_f16((double)(v))
#define EW_ST_KINT_BF16(v) ck_f64_to_bf16((double)(v))
#define EW_ST_KINT_I32(v) ((int32_t)(uint32_t)(v))
#define EW_ST_KINT_BOOL(v) ((uint8_t)((v) != 0))
#define EW_ST_KINT_U8(v) ((uint8_t)(v))
#define EW_ST_KINT_I8(v) ((int8_t)(uint8_t)(v))
#define EW_ST_KINT_I16(v) ((int16_t)(uint16_t)(v))
#define EW_ST_KINT_U32(v) ((uint32_t)(v))
#define EW_ST_KINT_I64(v) ((int64_t)(v))
/* the FP8 dtypes (kernels/fp8.h): cast only, to and from every other dtype (an i64 beyond 2^53 saturates) */
#define EW_K_E4M3 KFLT
#define EW_K_E5M2 KFLT
#define EW_LD_E4M3(v) ((double)ck_e4m3_to_f32(v))
#define EW_LD_E5M2(v) ((double)ck_e5m2_to_f32(v))
#define EW_ST_KFLT_E4M3(v) ck_f64_to_e4m3(v)
#define EW_ST_KFLT_E5M2(v) ck_f64_to_e5m2(v)
#define EW_ST_KINT_E4M3(v) ck_f64_to_e4m3((double)(v))
#define EW_ST_KINT_E5M2(v) ck_f64_to_e5m2((double)(v))
#define EW_ST2(K, TO, v) EW_ST_##K##_##TO(v)
#define EW_ST(K, TO, v) EW_ST2(K, TO, v)

#define EW_IS64_f32 0
#define EW_IS64_f64 1
/* TOBOOL rows store value != 0 into bool (uint8_t); the others store into their own dtype */
#define EW_OB_ALL 0
#define EW_OB_FLOAT 0
#define EW_OB_INT 0
#define EW_OB_TOBOOL 1
#define EW_OUT(OB, T, o, i, v)                                                                             \
  do {                                                                                                     \
    if (OB) ((uint8_t *)(o))[i] = (uint8_t)((v) != 0);                                                     \
    else ((T *)(o))[i] = (T)(v);                                                                           \
  } while (0)

/* The names the table's expressions use (kernels/elementwise/ew_ops.def); <tgmath.h> makes each one the
 * float or double function according to T, as the device's overloads do. */
#define m_exp(x) exp(x)
#define m_log(x) log(x)
#define m_sqrt(x) sqrt(x)
#define m_sin(x) sin(x)
#define m_cos(x) cos(x)
#define m_tanh(x) tanh(x)
#define m_fabs(x) fabs(x)
#define m_floor(x) floor(x)
#define m_ceil(x) ceil(x)
#define m_pow(x, y) pow(x, y)
#define m_atan2(x, y) atan2(x, y)
#define m_hypot(x, y) hypot(x, y)
#define m_fmod(x, y) fmod(x, y)
#define NAN2(x, y) ((x) + (y)) /* NaN if either is NaN */
#define ew_axpb(a, b, i) ((a) + (b) * (double)(i)) /* ISO C (-std=c11): not contracted into an fma */

/* One float row function: out[i] = EXPR(x = a[i], y = b[i]) for i < n, strided. */
#define EW_ROW(NAME, TY, SUF, OB, EXPR)                                                                    \
  static void NAME(const ew_row *r) {                                                                      \
    typedef TY T; /* the expressions name the element type T */                                            \
    const T *pa = (const T *)r->a, *pb = (const T *)r->b;                                                  \
    const double S1 = r->s1, S2 = r->s2;                                                                   \
    const int64_t RI = r->ri, os = r->os, as = r->as, bs = r->bs, n = r->n;                                \
    const uint64_t SEED = ck_ew_seed(S1), OFFS = ck_ew_seed(S2);                                           \
    const int IS64 = EW_IS64_##SUF;                                                                        \
    (void)S1, (void)S2, (void)RI, (void)SEED, (void)OFFS, (void)IS64;                                      \
    for (int64_t i = 0; i < n; ++i) {                                                                      \
      const T x = pa[i * as], y = pb[i * bs];                                                              \
      const int64_t LIN = r->lin0 + i, J = i;                                                              \
      (void)x, (void)y, (void)LIN, (void)J;                                                                \
      EW_OUT(OB, T, r->o, i * os, (T)(EXPR));                                                              \
    }                                                                                                      \
  }

/* One integer row function (every integer dtype and bool, ID its dtypes.def row, ST its storage type): the
 * operands as 64-bit values, the integer expression in 64 bits (kernels/elementwise/ew_helpers.h), the result
 * stored modulo the dtype's width (EW_ST_KINT_*, below) or as != 0. ew_f2i converts by the dtype's own rule. */
static inline long long ew_f2s(int dt, double v) {
  switch (dt) {
  case CK_BOOL: return v != 0;
  case CK_U8: return ck_ew_f2u8(v);
  case CK_I8: return ck_ew_f2i8(v);
  case CK_I16: return ck_ew_f2i16(v);
  case CK_U32: return ck_ew_f2u32(v);
  case CK_I64: return ck_ew_f2i64(v);
  default: return ck_ew_f2i(v);
  }
}
#define ew_f2i(v) ew_f2s(EW_DT, v)
#define EW_ROWI(NAME, ID, ST, OB, EXPR)                                                                    \
  static void NAME(const ew_row *r) {                                                                      \
    const ST *pa = (const ST *)r->a, *pb = (const ST *)r->b;                                               \
    const double S1 = r->s1, S2 = r->s2;                                                                   \
    const long long SI = r->si;                                                                            \
    const int EW_DT = CK_##ID, ISB = CK_##ID == CK_BOOL;                                                   \
    const int64_t RI = r->ri, os = r->os, as = r->as, bs = r->bs, n = r->n;                                \
    (void)S1, (void)S2, (void)SI, (void)RI, (void)EW_DT, (void)ISB;                                        \
    for (int64_t i = 0; i < n; ++i) {                                                                      \
      const long long x = ISB ? pa[i * as] != 0 : (long long)pa[i * as];                                   \
      const long long y = ISB ? pb[i * bs] != 0 : (long long)pb[i * bs];                                   \
      const int64_t LIN = r->lin0 + i, J = i;                                                              \
      (void)x, (void)y, (void)LIN, (void)J;                                                                \
      const long long v = (long long)(EXPR);                                                               \
      if (OB) ((uint8_t *)r->o)[i * os] = (uint8_t)(v != 0);                                               \
      else ((ST *)r->o)[i * os] = EW_ST_KINT_##ID(v);                                                      \
    }                                                                                                      \
  }

#define EW_INT_ROWS(ID, OB, IEXPR)                                                                         \
  EW_ROWI(ew_##ID##_BOOL, BOOL, uint8_t, OB, IEXPR)                                                        \
  EW_ROWI(ew_##ID##_U8, U8, uint8_t, OB, IEXPR)                                                            \
  EW_ROWI(ew_##ID##_I8, I8, int8_t, OB, IEXPR)                                                             \
  EW_ROWI(ew_##ID##_I16, I16, int16_t, OB, IEXPR)                                                          \
  EW_ROWI(ew_##ID##_I32, I32, int32_t, OB, IEXPR)                                                          \
  EW_ROWI(ew_##ID##_U32, U32, uint32_t, OB, IEXPR)                                                         \
  EW_ROWI(ew_##ID##_I64, I64, int64_t, OB, IEXPR)
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR)                                                \
  EW_ROW(ew_##ID##_F32, float, f32, EW_OB_##DTYPES, FEXPR)                                                 \
  EW_ROW(ew_##ID##_F64, double, f64, EW_OB_##DTYPES, FEXPR)                                                \
  EW_INT_ROWS(ID, EW_OB_##DTYPES, IEXPR)
#include "elementwise/ew_ops.def"
#undef CK_EW_OP

/* f16/bf16 rows: T (the compute type) is float, or double for the generators; the operands are widened
 * exactly and the result rounded once (LD, ST from kernels/half.h), or stored as != 0 by TOBOOL rows. IS64
 * is the RAND precision code (kernels/philox.h: 2 = 11 bits for f16, 3 = 8 bits for bf16, so that every draw
 * is a value of the dtype below 1). */
#define EW_ROWH(NAME, CT, LD, ST, IS64V, OB, EXPR)                                                         \
  static void NAME(const ew_row *r) {                                                                      \
    typedef CT T;                                                                                          \
    const uint16_t *pa = (const uint16_t *)r->a, *pb = (const uint16_t *)r->b;                             \
    const double S1 = r->s1, S2 = r->s2;                                                                   \
    const int64_t RI = r->ri, os = r->os, as = r->as, bs = r->bs, n = r->n;                                \
    const uint64_t SEED = ck_ew_seed(S1), OFFS = ck_ew_seed(S2);                                           \
    const int IS64 = IS64V;                                                                                \
    (void)S1, (void)S2, (void)RI, (void)SEED, (void)OFFS, (void)IS64;                                      \
    for (int64_t i = 0; i < n; ++i) {                                                                      \
      const T x = (T)LD(pa[i * as]), y = (T)LD(pb[i * bs]);                                                \
      const int64_t LIN = r->lin0 + i, J = i;                                                              \
      (void)x, (void)y, (void)LIN, (void)J;                                                                \
      const T v = (T)(EXPR);                                                                               \
      if (OB) ((uint8_t *)r->o)[i * os] = (uint8_t)(v != 0);                                               \
      else ((uint16_t *)r->o)[i * os] = ST(v);                                                             \
    }                                                                                                      \
  }
#define EW_H_FLOAT(ID, OB, FEXPR)                                                                          \
  EW_ROWH(ew_##ID##_F16, float, ck_f16_to_f32, ck_f32_to_f16, 2, OB, FEXPR)                                 \
  EW_ROWH(ew_##ID##_BF16, float, ck_bf16_to_f32, ck_f32_to_bf16, 3, OB, FEXPR)
#define EW_H_COPY EW_H_FLOAT
#define EW_H_UNARY EW_H_FLOAT
#define EW_H_BINARY EW_H_FLOAT
#define EW_H_GEN(ID, OB, FEXPR)                                                                            \
  EW_ROWH(ew_##ID##_F16, double, ck_f16_to_f32, ck_f64_to_f16, 2, OB, FEXPR)                                \
  EW_ROWH(ew_##ID##_BF16, double, ck_bf16_to_f32, ck_f64_to_bf16, 3, OB, FEXPR)
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR) EW_H_##KIND(ID, EW_OB_##DTYPES, FEXPR)
#include "elementwise/ew_ops.def"
#undef CK_EW_OP

/* The row of (op, input dtype), NULL where the op has no meaning (ew_valid: the device's ckew::valid). */
static const ew_rowfn ew_table[CK_EW_NOPS][CK_NDTYPES] = {
#define EW_FN(ID, DT) [CK_##DT] = ew_##ID##_##DT,
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR)                                                \
  [CK_EW_##ID] = {EW_FN(ID, F32) EW_FN(ID, F64) EW_FN(ID, F16) EW_FN(ID, BF16) EW_FN(ID, BOOL) EW_FN(ID, U8)    \
                  EW_FN(ID, I8) EW_FN(ID, I16) EW_FN(ID, I32) EW_FN(ID, U32) EW_FN(ID, I64)},
#include "elementwise/ew_ops.def"
#undef CK_EW_OP
#undef EW_FN
};

/* Whether (op, input dtype) has a meaning: float-only ops on floats, bit ops on integers and bool, the other
 * arithmetic on every dtype but bool (its operands are promoted to i32 first), generators, COPY and TOBOOL
 * ops on every dtype. The same rule as ckew::valid (kernels/elementwise/ew_math.cuh). */
static bool ew_valid(int op, int dt) {
  const bool flt = ck_dtype_is_float((ck_dtype)dt);
  switch (ck_ew_op_dtypes(op)) {
  case CK_EWD_FLOAT: return flt;
  case CK_EWD_INT: return !flt;
  case CK_EWD_TOBOOL: return true;
  default: return dt != CK_BOOL || op == CK_EW_COPY || ck_ew_op_kind(op) == CK_EWK_GEN;
  }
}

/* COPY with conversion, every pair of the 11 dtypes. A source is loaded as an int64_t (bool u8 i8 i16 u32 i32
 * i64: exact) or as a double (f32 f64 f16 bf16: exact), and stored by the destination's rule for that kind:
 *   int -> int     modulo 2^bits (NumPy's wrap: 256 -> u8 0, -1 -> u32 4294967295); i64 -> i64 moves the bits
 *   int -> float   rounded once (i64 -> f32 directly; i64 -> f16/bf16 through f64, exact below 2^53)
 *   float -> int   truncated toward zero; NaN and values out of the dtype's range give the dtype's minimum
 *                  (INT32_MIN for i32 as before, INT64_MIN, -128, -32768; 0 for u8 and u32)
 *   x -> bool      x != 0 (NaN -> true); bool -> x is 0 or 1
 *   float -> float through double as before (rounded once to f32, f16, bf16; see kernels/half.h)
 * f16 -> f16 and bf16 -> bf16 move the bits (a trip through double would quiet signalling NaNs). */
#define EW_CAST(TO, TT, FROM, TF)                                                                          \
  static void ew_cast_##TO##_##FROM(const ew_row *r) {                                                     \
    TT *o = (TT *)r->o;                                                                                    \
    const TF *pa = (const TF *)r->a;                                                                       \
    for (int64_t i = 0; i < r->n; ++i) o[i * r->os] = EW_ST(EW_K_##FROM, TO, EW_LD_##FROM(pa[i * r->as])); \
  }
/* the rows of kernels/dtypes.def, as (ID, storage type) pairs for the 13 x 13 product below (complex: pairs, copy.c) */
#define EW_SOURCES(X, TO, TT)                                                                              \
  X(TO, TT, F32, float) X(TO, TT, F64, double) X(TO, TT, I32, int32_t) X(TO, TT, F16, uint16_t)            \
  X(TO, TT, BF16, uint16_t) X(TO, TT, BOOL, uint8_t) X(TO, TT, U8, uint8_t) X(TO, TT, I8, int8_t)          \
  X(TO, TT, I16, int16_t) X(TO, TT, U32, uint32_t) X(TO, TT, I64, int64_t) X(TO, TT, E4M3, uint8_t)              \
  X(TO, TT, E5M2, uint8_t)
_Static_assert(CK_NDTYPES == 15, "a new row of dtypes.def needs its line in EW_SOURCES (host_elementwise.c)");
/* (complex rows have no casts here: copy.c moves complex data as its real pairs) */
#define EW_CASTS_FLOAT(X, ID, CTYPE) EW_SOURCES(X, ID, CTYPE)
#define EW_CASTS_HALF EW_CASTS_FLOAT
#define EW_CASTS_INT EW_CASTS_FLOAT
#define EW_CASTS_UINT EW_CASTS_FLOAT
#define EW_CASTS_BOOL EW_CASTS_FLOAT
#define EW_CASTS_FP8 EW_CASTS_FLOAT
#define EW_CASTS_COMPLEX(X, ID, CTYPE)
#define CK_DTYPE(ID, NAME, CTYPE, SIZE, CLASS, BITS, NCCL, ALIASES) EW_CASTS_##CLASS(EW_CAST, ID, CTYPE)
#include "dtypes.def"
#undef CK_DTYPE
/* (the generated f16 -> f16 and bf16 -> bf16 casts would quiet signalling NaNs; the bit copy keeps them) */
static void ew_bits16(const ew_row *r) {
  uint16_t *o = (uint16_t *)r->o;
  const uint16_t *pa = (const uint16_t *)r->a;
  for (int64_t i = 0; i < r->n; ++i) o[i * r->os] = pa[i * r->as];
}
#define EW_CAST_FN(TO, TT, FROM, TF) [CK_##FROM] = ew_cast_##TO##_##FROM,
static const ew_rowfn ew_cast_table[CK_NDTYPES][CK_NDTYPES] = {
#define EW_CAST_ROW(ID, CTYPE) [CK_##ID] = {EW_SOURCES(EW_CAST_FN, ID, CTYPE)},
#define EW_CAST_ROW_COMPLEX(ID, CTYPE)
#define EW_CAST_ROW_FLOAT EW_CAST_ROW
#define EW_CAST_ROW_HALF EW_CAST_ROW
#define EW_CAST_ROW_INT EW_CAST_ROW
#define EW_CAST_ROW_UINT EW_CAST_ROW
#define EW_CAST_ROW_BOOL EW_CAST_ROW
#define EW_CAST_ROW_FP8 EW_CAST_ROW
#define CK_DTYPE(ID, NAME, CTYPE, SIZE, CLASS, BITS, NCCL, ALIASES) EW_CAST_ROW_##CLASS(ID, CTYPE)
#include "dtypes.def"
#undef CK_DTYPE
};

static ew_rowfn ew_cast_fn(int to, int from) {
  return to == from && (to == CK_F16 || to == CK_BF16) ? ew_bits16 : ew_cast_table[to][from];
}

// ---------------------------------------------------------------- the strided driver

static bool ew_dtype_ok(int dt) { return dt >= 0 && dt < CK_NDTYPES; }

static const char *ew_dt_name(int dt) {
  return (dt >= 0 && dt < CK_NDTYPES) ? ck_dtype_name((ck_dtype)dt) : "?";
}

ck_status ck_host_elementwise(ck_ctx *ctx, const ck_ew_desc *desc) {
  const int op = desc->op;
  const char *name = ck_ew_op_name(op);
  if (!name) return ck_error(ctx, CK_ERR_ARG, "elementwise: unknown op id %d", op);
  if (desc->ndim < 0 || desc->ndim > CK_MAX_DIMS)
    return ck_error(ctx, CK_ERR_ARG, "%s: ndim %d out of range 0..%d", name, desc->ndim, CK_MAX_DIMS);
  const int arity = ck_ew_op_arity(op);
  const bool tobool = ck_ew_op_dtypes(op) == CK_EWD_TOBOOL;
  const int odt = desc->out_dtype;
  /* the dtype the inputs are read (and the op computes) in: COPY's source, a TOBOOL op's operands, else out's */
  const int cdt = (op == CK_EW_COPY || tobool) ? desc->a_dtype : odt;
  if (!ew_dtype_ok(odt) || !ew_dtype_ok(cdt))
    return ck_error(ctx, CK_ERR_DTYPE, "%s: dtype %s not supported on host", name, ew_dt_name(ew_dtype_ok(odt) ? cdt : odt));
  if (tobool && odt != CK_BOOL)
    return ck_error(ctx, CK_ERR_DTYPE, "%s: the result is bool, not %s", name, ew_dt_name(odt));
  if (op != CK_EW_COPY && arity >= 1 && desc->a_dtype != cdt)
    return ck_error(ctx, CK_ERR_DTYPE, "%s: input dtype %s differs from output dtype %s", name,
                    ew_dt_name(desc->a_dtype), ew_dt_name(odt));
  if (arity == 2 && !desc->b_scalar && desc->b_dtype != cdt)
    return ck_error(ctx, CK_ERR_DTYPE, "%s: operand dtypes %s and %s differ", name, ew_dt_name(desc->a_dtype),
                    ew_dt_name(desc->b_dtype));
  if (op != CK_EW_COPY && !ew_valid(op, cdt))
    return ck_error(ctx, CK_ERR_DTYPE, "%s: not defined for %s (%s)", name, ew_dt_name(cdt),
                    ck_ew_op_float_only(op) ? "floating-point dtypes only" : "integer and bool dtypes only");

  ck_ew_desc d = *desc;
  int64_t numel = 1;
  for (int k = 0; k < d.ndim; ++k) {
    if (d.shape[k] < 0) return ck_error(ctx, CK_ERR_SHAPE, "%s: negative dimension", name);
    numel *= d.shape[k];
  }
  if (numel == 0) return CK_OK;
  if (d.out == NULL || (arity >= 1 && d.a == NULL && !(arity == 2 && d.b_scalar && d.scalar_left)) ||
      (arity == 2 && d.b == NULL && !d.b_scalar))
    return ck_error(ctx, CK_ERR_INTERNAL, "%s: NULL operand pointer", name);

  /* A scalar operand becomes a one-element buffer with stride 0 (in the compute dtype: the exact integer for
   * integers, the number rounded once for floats); scalar_left swaps it into a. */
  union {
    double d;
    int64_t i;
    unsigned char bytes[16];
  } sbuf, zero;
  memset(&zero, 0, sizeof zero);
  if (arity == 2 && d.b_scalar) {
    const bool flt = ck_dtype_is_float((ck_dtype)cdt);
    const int64_t si = d.si;
    const ew_row cv = {.o = &sbuf, .a = flt ? (const void *)&d.s1 : (const void *)&si, .n = 1};
    ew_cast_fn(cdt, flt ? CK_F64 : CK_I64)(&cv);
    memset(d.b_st, 0, sizeof d.b_st);
    if (d.scalar_left) {
      d.b = d.a;
      memcpy(d.b_st, d.a_st, sizeof d.b_st);
      d.a = &sbuf;
      memset(d.a_st, 0, sizeof d.a_st);
    } else {
      d.b = &sbuf;
    }
    d.b_scalar = 0;
  }
  if (arity < 2) d.b = &zero, memset(d.b_st, 0, sizeof d.b_st);
  if (arity < 1) d.a = &zero, memset(d.a_st, 0, sizeof d.a_st);
  ck_ew_coalesce(&d);

  const ew_rowfn fn = op == CK_EW_COPY ? ew_cast_fn(odt, d.a_dtype) : ew_table[op][cdt];
  const int64_t osz = (int64_t)ck_dtype_size((ck_dtype)odt);
  const int64_t asz = arity >= 1 ? (int64_t)ck_dtype_size((ck_dtype)d.a_dtype) : 0;
  const int64_t bsz = arity == 2 ? (int64_t)ck_dtype_size((ck_dtype)cdt) : 0;
  const int nd = d.ndim;
  const int64_t inner = nd > 0 ? d.shape[nd - 1] : 1;
  const int64_t rows = numel / inner;

  ew_row r = {.n = inner,
              .os = nd > 0 ? d.out_st[nd - 1] : 0,
              .as = nd > 0 ? d.a_st[nd - 1] : 0,
              .bs = nd > 0 ? d.b_st[nd - 1] : 0,
              .s1 = d.s1,
              .s2 = d.s2,
              .si = d.si};
  /* Odometer over dims 0..nd-2; offsets are element offsets, converted to bytes per row. */
  int64_t idx[CK_MAX_DIMS] = {0};
  int64_t oo = 0, ao = 0, bo = 0;
  for (int64_t row = 0; row < rows; ++row) {
    r.o = (char *)d.out + oo * osz;
    r.a = (const char *)d.a + ao * asz;
    r.b = (const char *)d.b + bo * bsz;
    r.lin0 = row * inner;
    r.ri = nd >= 2 ? idx[nd - 2] : 0;
    fn(&r);
    for (int k = nd - 2; k >= 0; --k) {
      oo += d.out_st[k], ao += d.a_st[k], bo += d.b_st[k];
      if (++idx[k] < d.shape[k]) break;
      oo -= d.out_st[k] * d.shape[k], ao -= d.a_st[k] * d.shape[k], bo -= d.b_st[k] * d.shape[k];
      idx[k] = 0;
    }
  }
  return CK_OK;
}

void ck_host_ew_cast(ck_dtype to, void *out, ck_dtype from, const void *a, int64_t n) {
  const ew_row r = {.o = out, .a = a, .n = n, .os = 1, .as = 1};
  ew_cast_fn(to, from)(&r);
}

void ck_host_ew_run(int op, ck_dtype dt, void *out, const void *a, const void *b, int64_t n) {
  if (ck_ew_op_dtypes(op) != CK_EWD_TOBOOL) {
    const ew_row r = {.o = out, .a = a, .b = b ? b : a, .n = n, .os = 1, .as = 1, .bs = b ? 1 : 0};
    ew_table[op][dt](&r);
    return;
  }
  /* inside an expression a comparison gives 1/0 in the operands' dtype (ck.map's rule): the bool row, then a cast */
  uint8_t flags[256];
  const size_t es = ck_dtype_size(dt);
  for (int64_t k = 0; k < n; k += 256) {
    const int64_t m = n - k < 256 ? n - k : 256;
    const char *pa = (const char *)a + k * (int64_t)es, *pb = b ? (const char *)b + k * (int64_t)es : pa;
    const ew_row r = {.o = flags, .a = pa, .b = pb, .n = m, .os = 1, .as = 1, .bs = b ? 1 : 0};
    ew_table[op][dt](&r);
    const ew_row c = {.o = (char *)out + k * (int64_t)es, .a = flags, .n = m, .os = 1, .as = 1};
    ew_cast_fn(dt, CK_BOOL)(&c);
  }
}
