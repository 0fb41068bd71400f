/*
 * expr_ops.c — the operations of the expression language of ck.map and ck.reduce_map: where each one's math
 * comes from, the names the language reserves, and the type rules.
 *
 * ONE MATH SOURCE. Every operator and function that means what an elementwise op means is that op's row of
 * kernels/elementwise/ew_ops.def (the ROW entries of the table below): its arity and dtype rule (ALL or FLOAT)
 * come from the row (ck_ew_op_arity, ck_ew_op_float_only); the host evaluates it with the host backend's own
 * row function (ck_host_ew_run); the generator pastes the row's expressions, stringified, into every NVRTC
 * program with the table's helpers (kernels/elementwise/ew_helpers.h, the text the host backend compiles). So `max` in
 * an expression is `ck.maximum`, `x / y` on integers is the DIV row's iw_div, and an op fixed in the table is fixed
 * in ck.map.
 *
 * The language is C, and keeps C's meanings where Lua's differ (docs/map.md): `/` is the DIV row (integer
 * division truncates, as the ops' `div`; Lua's `/` on integers would give a float), `%` is C's fmod and
 * remainder (the MOD row is Lua's floor modulo, so `%` is expression-only, below), and comparisons and
 * `&& || !` give 1/0 in their operands' type (the EQ..GE rows; Lua's give booleans).
 *
 * EXPRESSION-ONLY functions (CKX_MATH, in the same text for host and device as before), each for a reason:
 *   mod (`%`, fmod)  C's remainder, truncated toward zero, x % 0 = 0; the table's MOD is Lua's floor modulo.
 *   clamp(x, lo, hi) bounds are per-element operands computed in the operands' type; the table's CLAMP takes
 *                    two scalar bounds per call (S1, S2).
 *   round trunc exp2 expm1 log2 log10 log1p rsqrt cbrt tan asin acos atan sinh cosh erf erfc fma
 *                    no row: adding one would recompile every elementwise kernel and add the op everywhere,
 *                    for the ops a row is the way (one row in ew_ops.def, then a ROW entry here).
 *   f2i              the conversion rule of casts and outputs (ck_ew_f2i's), not an op.
 */
#include "expr_ops.h"

#include <math.h>
#include <string.h>

#include "elementwise/ew_helpers.h"
#include "ew_ops.h"

// ---------------------------------------------------------------- expression-only helpers (host and device)

/* X(return type, name, (params), body...). Suffixes: _f float (f32, and f16/bf16 computed in float), _d double,
 * _l long long (every integer dtype and bool, computed in 64 bits as the table's integer column; the caller
 * wraps the value to the node's dtype). Plain C that both gcc and NVRTC accept: no headers, no int32_t. The f2*
 * are the float -> integer rule of casts and outputs (ew_ops.h's ck_ew_f2*: truncate; NaN and out of range give
 * the dtype's minimum, 0 for unsigned dtypes); the host uses ew_ops.h's, the device these. */
#define CKX_MATH(X)                                                                                               \
  X(int, f2i, (double x), return (x > -2147483649.0 && x < 2147483648.0) ? (int)x : (-2147483647 - 1);)          \
  X(long long, f2i8, (double x), return (x > -129.0 && x < 128.0) ? (long long)x : -128;)                        \
  X(long long, f2i16, (double x), return (x > -32769.0 && x < 32768.0) ? (long long)x : -32768;)                 \
  X(long long, f2u8, (double x), return (x > -1.0 && x < 256.0) ? (long long)x : 0;)                             \
  X(long long, f2u32, (double x), return (x > -1.0 && x < 4294967296.0) ? (long long)x : 0;)                     \
  X(long long, f2i64, (double x),                                                                                 \
    return (x > -9223372036854777856.0 && x < 9223372036854775808.0) ? (long long)x : (-9223372036854775807ll - 1);) \
  X(float, mod_f, (float x, float y), return fmodf(x, y);)                                                        \
  X(double, mod_d, (double x, double y), return fmod(x, y);)                                                      \
  X(long long, mod_l, (long long x, long long y), return (y == 0 || y == -1) ? 0 : x % y;)                        \
  X(float, round_f, (float x), return roundf(x);)                                                                 \
  X(double, round_d, (double x), return round(x);)                                                                \
  X(long long, round_l, (long long x), return x;)                                                                 \
  X(float, trunc_f, (float x), return truncf(x);)                                                                 \
  X(double, trunc_d, (double x), return trunc(x);)                                                                \
  X(long long, trunc_l, (long long x), return x;)                                                                 \
  X(float, clamp_f, (float x, float lo, float hi), float t = x < lo ? lo : x; return t > hi ? hi : t;)           \
  X(double, clamp_d, (double x, double lo, double hi), double t = x < lo ? lo : x; return t > hi ? hi : t;)      \
  X(long long, clamp_l, (long long x, long long lo, long long hi), long long t = x < lo ? lo : x; return t > hi ? hi : t;) \
  X(float, exp2_f, (float x), return exp2f(x);)                                                                   \
  X(double, exp2_d, (double x), return exp2(x);)                                                                  \
  X(float, expm1_f, (float x), return expm1f(x);)                                                                 \
  X(double, expm1_d, (double x), return expm1(x);)                                                                \
  X(float, log2_f, (float x), return log2f(x);)                                                                   \
  X(double, log2_d, (double x), return log2(x);)                                                                  \
  X(float, log10_f, (float x), return log10f(x);)                                                                 \
  X(double, log10_d, (double x), return log10(x);)                                                                \
  X(float, log1p_f, (float x), return log1pf(x);)                                                                 \
  X(double, log1p_d, (double x), return log1p(x);)                                                                \
  X(float, rsqrt_f, (float x), return 1.0f / sqrtf(x);)                                                           \
  X(double, rsqrt_d, (double x), return 1.0 / sqrt(x);)                                                           \
  X(float, cbrt_f, (float x), return cbrtf(x);)                                                                   \
  X(double, cbrt_d, (double x), return cbrt(x);)                                                                  \
  X(float, tan_f, (float x), return tanf(x);)                                                                     \
  X(double, tan_d, (double x), return tan(x);)                                                                    \
  X(float, asin_f, (float x), return asinf(x);)                                                                   \
  X(double, asin_d, (double x), return asin(x);)                                                                  \
  X(float, acos_f, (float x), return acosf(x);)                                                                   \
  X(double, acos_d, (double x), return acos(x);)                                                                  \
  X(float, atan_f, (float x), return atanf(x);)                                                                   \
  X(double, atan_d, (double x), return atan(x);)                                                                  \
  X(float, sinh_f, (float x), return sinhf(x);)                                                                   \
  X(double, sinh_d, (double x), return sinh(x);)                                                                  \
  X(float, cosh_f, (float x), return coshf(x);)                                                                   \
  X(double, cosh_d, (double x), return cosh(x);)                                                                  \
  X(float, erf_f, (float x), return erff(x);)                                                                     \
  X(double, erf_d, (double x), return erf(x);)                                                                    \
  X(float, erfc_f, (float x), return erfcf(x);)                                                                   \
  X(double, erfc_d, (double x), return erfc(x);)                                                                  \
  X(float, fma_f, (float x, float y, float z), return fmaf(x, y, z);)                                             \
  X(double, fma_d, (double x, double y, double z), return fma(x, y, z);)

#define CKX_HOST(ret, name, params, ...) static inline __attribute__((unused)) ret ckx_##name params { __VA_ARGS__ }
CKX_MATH(CKX_HOST)
#undef CKX_HOST

// ---------------------------------------------------------------- the device text (every NVRTC program)

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#define CKX_DEV(ret, name, params, ...) "__device__ __forceinline__ " #ret " ckx_" #name #params " { " #__VA_ARGS__ " }\n"
#define EWH_DEV(ret, name, params, ...) "__device__ __forceinline__ " #ret " " #name #params " { " #__VA_ARGS__ " }\n"
#define LIBM_1(n) "__device__ __forceinline__ float m_" #n "(float x) { return " #n "f(x); }\n" \
                  "__device__ __forceinline__ double m_" #n "(double x) { return " #n "(x); }\n"
#define LIBM_2(n) "__device__ __forceinline__ float m_" #n "(float x, float y) { return " #n "f(x, y); }\n" \
                  "__device__ __forceinline__ double m_" #n "(double x, double y) { return " #n "(x, y); }\n"
#define LIBM_DEV(n, arity) LIBM_##arity(n)
/* f16 and bf16 in generated code: kernels/half.h's conversions (the same integer code, so rounding, subnormals
 * and NaNs agree with the host bit for bit), spelled for NVRTC without headers. A half node's value is a float
 * holding a value of the dtype: ckx_rh/ckx_rb round a float result as the host's f16 rows do (ck_f32_to_f16);
 * casts round from double (ck_f64_to_f16: once, NaN canonical), as the host's COPY does. */
static const char halftext[] =
    "__device__ __forceinline__ float ckx_h2f(unsigned short h) {\n"
    "  const unsigned int sign = (unsigned int)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n"
    "  if (e == 0x1fu) return __uint_as_float(sign | 0x7f800000u | (m << 13));\n"
    "  if (e == 0) return __uint_as_float(sign | __float_as_uint((float)m * 5.9604644775390625e-8f));\n"
    "  return __uint_as_float(sign | ((e + 112u) << 23) | (m << 13));\n}\n"
    "__device__ __forceinline__ unsigned short ckx_f2h(float f) {\n"
    "  const unsigned int x = __float_as_uint(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;\n"
    "  if (ax > 0x7f800000u) return (unsigned short)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));\n"
    "  if (ax >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);\n"
    "  if (ax >= 0x38800000u) { const unsigned int m = ax - 0x38000000u;\n"
    "    return (unsigned short)(sign | ((m + 0xfffu + ((m >> 13) & 1u)) >> 13)); }\n"
    "  if (ax <= 0x33000000u) return (unsigned short)sign;\n"
    "  const unsigned int e = ax >> 23, mant = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e;\n"
    "  unsigned int q = mant >> shift;\n"
    "  const unsigned int rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);\n"
    "  if (rem > halfway || (rem == halfway && (q & 1u))) ++q;\n"
    "  return (unsigned short)(sign | q);\n}\n"
    "__device__ __forceinline__ float ckx_b2f(unsigned short h) { return __uint_as_float((unsigned int)h << 16); }\n"
    "__device__ __forceinline__ unsigned short ckx_f2b(float f) {\n"
    "  const unsigned int x = __float_as_uint(f);\n"
    "  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);\n"
    "  return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);\n}\n"
    "__device__ __forceinline__ float ckx_odd(double d) {\n"
    "  const float f = (float)d;\n  if ((double)f == d) return f;\n"
    "  const unsigned int b = __float_as_uint(f);\n  if (b & 1u) return f;\n"
    "  const int above = (f < 0 ? -(double)f : (double)f) > (d < 0 ? -d : d);\n"
    "  return __uint_as_float(above ? b - 1u : b + 1u);\n}\n"
    "__device__ __forceinline__ unsigned short ckx_d2h(double d) {\n"
    "  if (d != d) return (unsigned short)(__double_as_longlong(d) < 0 ? 0xfe00u : 0x7e00u);\n"
    "  return ckx_f2h(ckx_odd(d));\n}\n"
    "__device__ __forceinline__ unsigned short ckx_d2b(double d) {\n"
    "  if (d != d) return (unsigned short)(__double_as_longlong(d) < 0 ? 0xffc0u : 0x7fc0u);\n"
    "  return ckx_f2b(ckx_odd(d));\n}\n"
    "__device__ __forceinline__ float ckx_rh(float x) { return ckx_h2f(ckx_f2h(x)); }\n"
    "__device__ __forceinline__ float ckx_rb(float x) { return ckx_b2f(ckx_f2b(x)); }\n";

static const char preamble[] =
    "/* cukern expression helpers (src/fused/expr_ops.c: CKX_MATH, shared with the host) */\n" CKX_MATH(CKX_DEV)
    "/* the op table's helpers (kernels/elementwise/ew_helpers.h, the host backend's text) and rows (ew_ops.def) */\n"
    "#define ew_f2i(v) ckx_f2i(v)\n#define NAN2(x, y) ((x) + (y))\n" CK_EW_LIBM(LIBM_DEV) CK_EW_HELPERS(EWH_DEV);
#pragma GCC diagnostic pop

/* The rows' expressions as text: the float column and the integer column. */
static const struct {
  const char *f, *i;
} ROWTEXT[CK_EW_NOPS] = {
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR) [CK_EW_##ID] = {#FEXPR, #IEXPR},
#include "elementwise/ew_ops.def"
#undef CK_EW_OP
};

void xgen_preamble(xsb *b) {
  xsb_printf(b, "%s%s", preamble, halftext);
  for (int op = 0; op < XOP_N; ++op) {
    const xopinfo *o = &ck_xops[op];
    if (o->row < 0) continue;
    for (int v = 0; v < 3; ++v) { /* float (f32, f16, bf16), double, long long (every integer dtype, bool) */
      if (v == 2 && !ck_xop_int(op)) continue;
      const char *T = v == 0 ? "float" : v == 1 ? "double" : "long long", *sfx = v == 0 ? "f" : v == 1 ? "d" : "l";
      xsb_printf(b, "__device__ __forceinline__ %s ckx_%s_%s(const %s x%s%s%s) { typedef %s T; return (T)(%s); }\n", T,
                 o->name, sfx, T, ck_xop_arity(op) == 2 ? ", const " : "", ck_xop_arity(op) == 2 ? T : "",
                 ck_xop_arity(op) == 2 ? " y" : "", T, v == 2 ? ROWTEXT[o->row].i : ROWTEXT[o->row].f);
    }
  }
}

// ---------------------------------------------------------------- the op table

/* ROW: the table's op (name in the language, its row); E1..E3: expression-only, with (EI) or without an integer form */
#define ROW(n, id) {#n, CK_EW_##id, 0, 0, NULL, NULL, NULL}
#define E1(n) {#n, -1, 1, XF_FLOAT, (xfn)ckx_##n##_f, (xfn)ckx_##n##_d, NULL}
#define EI1(n) {#n, -1, 1, XF_INT | XF_FLOAT, (xfn)ckx_##n##_f, (xfn)ckx_##n##_d, (xfn)ckx_##n##_l}
#define EI2(n) {#n, -1, 2, XF_INT | XF_FLOAT, (xfn)ckx_##n##_f, (xfn)ckx_##n##_d, (xfn)ckx_##n##_l}
#define SYNTAX(name, arity) {name, -1, arity, XF_INT | XF_FLOAT, NULL, NULL, NULL}
const xopinfo ck_xops[XOP_N] = {
    [XOP_CONST] = SYNTAX(NULL, 0), [XOP_INPUT] = SYNTAX(NULL, 0), [XOP_CAST] = SYNTAX(NULL, 1),
    [XOP_SELECT] = SYNTAX("where", 3), [XOP_AND] = SYNTAX(NULL, 2), [XOP_OR] = SYNTAX(NULL, 2),
    [XOP_NOT] = SYNTAX(NULL, 1),
    /* the table's ops: operators (their names are functions of the language too: add(x, y) is x + y) */
    [XOP_NEG] = ROW(neg, NEG), [XOP_ADD] = ROW(add, ADD), [XOP_SUB] = ROW(sub, SUB), [XOP_MUL] = ROW(mul, MUL),
    [XOP_DIV] = ROW(div, DIV), [XOP_LT] = ROW(lt, LT), [XOP_LE] = ROW(le, LE), [XOP_GT] = ROW(gt, GT),
    [XOP_GE] = ROW(ge, GE), [XOP_EQ] = ROW(eq, EQ), [XOP_NE] = ROW(ne, NE),
    /* the table's ops: functions (min and max are the rows minimum and maximum) */
    [XOP_ABS] = ROW(abs, ABS), [XOP_FLOOR] = ROW(floor, FLOOR), [XOP_CEIL] = ROW(ceil, CEIL),
    [XOP_SIGN] = ROW(sign, SIGN), [XOP_RELU] = ROW(relu, RELU), [XOP_MIN] = ROW(min, MINIMUM),
    [XOP_MAX] = ROW(max, MAXIMUM), [XOP_POW] = ROW(pow, POW), [XOP_EXP] = ROW(exp, EXP), [XOP_LOG] = ROW(log, LOG),
    [XOP_SQRT] = ROW(sqrt, SQRT), [XOP_SIN] = ROW(sin, SIN), [XOP_COS] = ROW(cos, COS), [XOP_TANH] = ROW(tanh, TANH),
    [XOP_SIGMOID] = ROW(sigmoid, SIGMOID), [XOP_ATAN2] = ROW(atan2, ATAN2), [XOP_HYPOT] = ROW(hypot, HYPOT),
    /* expression-only (why: the header comment) */
    [XOP_MOD] = EI2(mod), [XOP_ROUND] = EI1(round), [XOP_TRUNC] = EI1(trunc),
    [XOP_CLAMP] = {"clamp", -1, 3, XF_INT | XF_FLOAT, (xfn)ckx_clamp_f, (xfn)ckx_clamp_d, (xfn)ckx_clamp_l},
    [XOP_EXP2] = E1(exp2), [XOP_EXPM1] = E1(expm1), [XOP_LOG2] = E1(log2), [XOP_LOG10] = E1(log10),
    [XOP_LOG1P] = E1(log1p), [XOP_RSQRT] = E1(rsqrt), [XOP_CBRT] = E1(cbrt), [XOP_TAN] = E1(tan),
    [XOP_ASIN] = E1(asin), [XOP_ACOS] = E1(acos), [XOP_ATAN] = E1(atan), [XOP_SINH] = E1(sinh),
    [XOP_COSH] = E1(cosh), [XOP_ERF] = E1(erf), [XOP_ERFC] = E1(erfc),
    [XOP_FMA] = {"fma", -1, 3, XF_FLOAT, (xfn)ckx_fma_f, (xfn)ckx_fma_d, NULL},
};

int ck_xop_arity(int op) { return ck_xops[op].row >= 0 ? ck_ew_op_arity(ck_xops[op].row) : ck_xops[op].arity; }
bool ck_xop_int(int op) {
  return ck_xops[op].row >= 0 ? !ck_ew_op_float_only(ck_xops[op].row) : (ck_xops[op].flags & XF_INT) != 0;
}

/* Operators spelled as symbols: their names in messages. */
const char *ck_xop_symbol(int op) {
  switch (op) {
  case XOP_NEG: return "unary -";
  case XOP_ADD: return "+";
  case XOP_SUB: return "-";
  case XOP_MUL: return "*";
  case XOP_DIV: return "/";
  case XOP_MOD: return "%";
  case XOP_LT: return "<";
  case XOP_LE: return "<=";
  case XOP_GT: return ">";
  case XOP_GE: return ">=";
  case XOP_EQ: return "==";
  case XOP_NE: return "!=";
  case XOP_AND: return "&&";
  case XOP_OR: return "||";
  case XOP_NOT: return "!";
  case XOP_SELECT: return "?:";
  default: return ck_xops[op].name ? ck_xops[op].name : "?";
  }
}

/* Function names of the language (besides the op table): aliases and casts. */
int ck_xop_lookup(const char *name, int *cast) {
  *cast = -1;
  /* casts: every real dtype by its name, and C's names of f32, f64, i32 */
  static const struct {
    const char *name;
    int dt;
  } casts[] = {{"f32", CK_F32}, {"float", CK_F32}, {"f64", CK_F64}, {"double", CK_F64}, {"i32", CK_I32},
               {"int", CK_I32}, {"f16", CK_F16}, {"bf16", CK_BF16}, {"bool", CK_BOOL}, {"u8", CK_U8},
               {"i8", CK_I8}, {"i16", CK_I16}, {"u32", CK_U32}, {"i64", CK_I64}};
  for (size_t k = 0; k < sizeof casts / sizeof casts[0]; ++k)
    if (!strcmp(name, casts[k].name)) return *cast = casts[k].dt, XOP_CAST;
  if (!strcmp(name, "fmin")) return XOP_MIN;
  if (!strcmp(name, "fmax")) return XOP_MAX;
  if (!strcmp(name, "fabs")) return XOP_ABS;
  if (!strcmp(name, "fmod")) return XOP_MOD;
  for (int op = XOP_NEG; op < XOP_N; ++op)
    if (ck_xops[op].name && !strcmp(ck_xops[op].name, name)) return op;
  if (!strcmp(name, "where")) return XOP_SELECT;
  return -1;
}

bool ck_xop_is_constant(const char *name) { return !strcmp(name, "pi") || !strcmp(name, "inf") || !strcmp(name, "nan"); }

// ---------------------------------------------------------------- types

/* The dtypes an expression computes in: every real dtype (fp8 is storage for casts only in the library, complex
 * has no order for min, max and comparisons). */
bool ck_xdtype_ok(int dt) {
  return dt == CK_F32 || dt == CK_F64 || dt == CK_F16 || dt == CK_BF16 || dt == CK_BOOL || dt == CK_U8 || dt == CK_I8 ||
         dt == CK_I16 || dt == CK_I32 || dt == CK_U32 || dt == CK_I64;
}

unsigned short ck_xfits(long long v) {
  unsigned short m = 1u << CK_I64;
  if (v >= -2147483647ll - 1 && v <= 2147483647ll) m |= 1u << CK_I32;
  if (v >= 0 && v <= 4294967295ll) m |= 1u << CK_U32;
  if (v >= -32768 && v <= 32767) m |= 1u << CK_I16;
  if (v >= -128 && v <= 127) m |= 1u << CK_I8;
  if (v >= 0 && v <= 255) m |= 1u << CK_U8;
  if (v >= 0 && v <= 1) m |= 1u << CK_BOOL;
  return m;
}

/* Two operands' type. Arrays with arrays: ck_promote, the elementwise ops' rule. Numbers (weak: i64 for an
 * integer, f64 otherwise) follow the array they meet by the ops' rule too (op_elementwise.c's ew_check): a float
 * array keeps its dtype; an integer array keeps its dtype when the number is a value of it (fits), else f64
 * (`i * 0.5`, `u8 + 300`, as `i:mul(0.5)` and NumPy and torch); bool with a number computes in i32 (or f64). */
static xtype promote(xtype a, xtype b) {
  xtype r = {0, 0, 0, 0};
  if (a.weak && b.weak) {
    r.weak = 1;
    r.dt = (a.dt == CK_I64 && b.dt == CK_I64) ? CK_I64 : CK_F64;
    r.fits = r.dt == CK_I64 ? (unsigned short)(a.fits & b.fits) : 0;
  } else if (a.weak || b.weak) {
    xtype s = a.weak ? b : a, w = a.weak ? a : b;
    r.dt = s.dt;
    if (!ck_dtype_is_float((ck_dtype)s.dt)) {
      const int want = s.dt == CK_BOOL ? CK_I32 : s.dt;
      r.dt = (signed char)(w.fits & (1u << want) ? want : CK_F64); /* (fits: an integer value; -0.0 is one) */
    }
  } else {
    r.dt = (signed char)ck_promote((ck_dtype)a.dt, (ck_dtype)b.dt); /* two arrays: the ops' rule */
  }
  r.ct = r.dt;
  return r;
}

int ck_xtype_final(xtype t) {
  if (!t.weak) return t.dt;
  if (t.dt != CK_I64) return CK_F32;
  return (t.fits & (1u << CK_I32)) ? CK_I32 : CK_I64;
}

ck_status ck_expr_type(ck_ctx *ctx, const ck_expr *e, const xtype *in, xtype *ty) {
  for (int i = 0; i < e->n; ++i) {
    const xnode *x = &e->nodes[i];
    xtype t = {0, 0, 0, 0};
    switch (x->op) {
    case XOP_CONST:
      t.weak = 1;
      t.dt = t.ct = x->kint ? CK_I64 : CK_F64;
      if (x->kint) t.fits = ck_xfits((long long)x->k);
      break;
    case XOP_INPUT: t = in[x->input]; t.ct = t.dt; break;
    case XOP_CAST: t.dt = (signed char)x->cast; t.ct = ty[x->a].dt; t.weak = 0; break;
    case XOP_NOT: t = ty[x->a]; t.ct = t.dt; break;
    case XOP_AND:
    case XOP_OR: t = promote(ty[x->a], ty[x->b]); break;
    case XOP_SELECT: t = promote(ty[x->b], ty[x->c]); break;
    default: {
      const xopinfo *o = &ck_xops[x->op];
      const int arity = ck_xop_arity(x->op);
      t = ty[x->a];
      if (arity >= 2) t = promote(t, ty[x->b]);
      if (arity >= 3) t = promote(t, ty[x->c]);
      /* A weak integer computed from numbers (n - 1, a * a, -n) may hold any i64: its value is not known here,
       * since kernels are built and cached by the numbers' types (which dtypes hold each), not their values, and
       * the dtypes that hold the operands need not hold the result (65536 * 65536; 0 - 1 in u8). So it keeps only
       * an i64 array's dtype; cast it (i32(n - 1)) to keep a narrower one. */
      if (t.weak && t.dt == CK_I64) t.fits = 1u << CK_I64;
      if (t.weak && t.dt == CK_F64) t.fits = 0; /* a float computed from numbers (log(-0.0)) is no integer value */
      /* arithmetic on bool computes in i32, as the ops do (x * (x > 0) keeps working); comparisons keep bool */
      const bool cmp = o->row >= 0 && ck_ew_op_dtypes(o->row) == CK_EWD_TOBOOL;
      if (t.dt == CK_BOOL && !cmp) t.dt = CK_I32;
      if (!ck_xop_int(x->op) && !ck_dtype_is_float((ck_dtype)t.dt)) {
        if (t.weak) t.dt = CK_F64, t.fits = 0;
        else
          return ck_expr_error_at(ctx, e, CK_ERR_DTYPE, x->pos,
                                  "%s takes floats, not %s (cast first: %s(f32(x)) or %s(f64(x)))", ck_xop_symbol(x->op),
                                  ck_dtype_name((ck_dtype)t.dt), o->name, o->name);
      }
      t.ct = t.dt;
    }
    }
    ty[i] = t;
  }
  return CK_OK;
}
