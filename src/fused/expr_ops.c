/*
 * expr_ops.c — the operations of the expression language of ck.map and ck.reduce_map: the scalar helpers
 * (host and device), the op table, the names the language reserves, and the type rules.
 *
 * One source of truth for the arithmetic: CKX_MATH below lists every scalar helper once, as C text. The host
 * compiles it as static inline functions; the generator pastes the same text (stringified) into every NVRTC
 * program with __device__ in front. So ckx_div_i (i32 division: truncation, x/0 = 0) or ckx_max_f (NaN
 * propagating) cannot drift between the oracle and the kernel; only libm vs CUDA's math library differ
 * (a few ulps for transcendental functions).
 */
#include "expr_ops.h"

#include <math.h>
#include <string.h>

// ---------------------------------------------------------------- the scalar helpers (host and device)

/* X(return type, name, (params), body...). Suffixes: _f float, _d double, _i int (i32). Plain C that both gcc and
 * NVRTC accept: no headers, no int32_t, no INT32_MIN. */
#define CKX_MATH(X)                                                                                               \
  X(int, f2i, (double x), return (x > -2147483649.0 && x < 2147483648.0) ? (int)x : (-2147483647 - 1);)          \
  X(double, ipow, (double x, double y), if (y == floor(y) && fabs(y) <= 1024.0) {                                 \
    long long n = (long long)fabs(y);                                                                             \
    double r = 1.0, b = x;                                                                                        \
    while (n) {                                                                                                   \
      if (n & 1) r *= b;                                                                                          \
      b *= b;                                                                                                     \
      n >>= 1;                                                                                                    \
    }                                                                                                             \
    return y < 0 ? 1.0 / r : r;                                                                                   \
  } return pow(x, y);)                                                                                            \
  X(float, neg_f, (float x), return -x;)                                                                          \
  X(double, neg_d, (double x), return -x;)                                                                        \
  X(int, neg_i, (int x), return (int)(0u - (unsigned)x);)                                                         \
  X(float, add_f, (float x, float y), return x + y;)                                                              \
  X(double, add_d, (double x, double y), return x + y;)                                                           \
  X(int, add_i, (int x, int y), return (int)((unsigned)x + (unsigned)y);)                                         \
  X(float, sub_f, (float x, float y), return x - y;)                                                              \
  X(double, sub_d, (double x, double y), return x - y;)                                                           \
  X(int, sub_i, (int x, int y), return (int)((unsigned)x - (unsigned)y);)                                         \
  X(float, mul_f, (float x, float y), return x * y;)                                                              \
  X(double, mul_d, (double x, double y), return x * y;)                                                           \
  X(int, mul_i, (int x, int y), return (int)((unsigned)x * (unsigned)y);)                                         \
  X(float, div_f, (float x, float y), return x / y;)                                                              \
  X(double, div_d, (double x, double y), return x / y;)                                                           \
  X(int, div_i, (int x, int y), return y == 0 ? 0 : (y == -1 ? (int)(0u - (unsigned)x) : x / y);)                \
  X(float, mod_f, (float x, float y), return fmodf(x, y);)                                                        \
  X(double, mod_d, (double x, double y), return fmod(x, y);)                                                      \
  X(int, mod_i, (int x, int y), return (y == 0 || y == -1) ? 0 : x % y;)                                          \
  X(float, lt_f, (float x, float y), return (float)(x < y);)                                                      \
  X(double, lt_d, (double x, double y), return (double)(x < y);)                                                  \
  X(int, lt_i, (int x, int y), return x < y;)                                                                     \
  X(float, le_f, (float x, float y), return (float)(x <= y);)                                                     \
  X(double, le_d, (double x, double y), return (double)(x <= y);)                                                 \
  X(int, le_i, (int x, int y), return x <= y;)                                                                    \
  X(float, gt_f, (float x, float y), return (float)(x > y);)                                                      \
  X(double, gt_d, (double x, double y), return (double)(x > y);)                                                  \
  X(int, gt_i, (int x, int y), return x > y;)                                                                     \
  X(float, ge_f, (float x, float y), return (float)(x >= y);)                                                     \
  X(double, ge_d, (double x, double y), return (double)(x >= y);)                                                 \
  X(int, ge_i, (int x, int y), return x >= y;)                                                                    \
  X(float, eq_f, (float x, float y), return (float)(x == y);)                                                     \
  X(double, eq_d, (double x, double y), return (double)(x == y);)                                                 \
  X(int, eq_i, (int x, int y), return x == y;)                                                                    \
  X(float, ne_f, (float x, float y), return (float)(x != y);)                                                     \
  X(double, ne_d, (double x, double y), return (double)(x != y);)                                                 \
  X(int, ne_i, (int x, int y), return x != y;)                                                                    \
  X(float, abs_f, (float x), return fabsf(x);)                                                                    \
  X(double, abs_d, (double x), return fabs(x);)                                                                   \
  X(int, abs_i, (int x), return x < 0 ? (int)(0u - (unsigned)x) : x;)                                             \
  X(float, floor_f, (float x), return floorf(x);)                                                                 \
  X(double, floor_d, (double x), return floor(x);)                                                                \
  X(int, floor_i, (int x), return x;)                                                                             \
  X(float, ceil_f, (float x), return ceilf(x);)                                                                   \
  X(double, ceil_d, (double x), return ceil(x);)                                                                  \
  X(int, ceil_i, (int x), return x;)                                                                              \
  X(float, round_f, (float x), return roundf(x);)                                                                 \
  X(double, round_d, (double x), return round(x);)                                                                \
  X(int, round_i, (int x), return x;)                                                                             \
  X(float, trunc_f, (float x), return truncf(x);)                                                                 \
  X(double, trunc_d, (double x), return trunc(x);)                                                                \
  X(int, trunc_i, (int x), return x;)                                                                             \
  X(float, sign_f, (float x), return x > 0 ? 1.0f : (x < 0 ? -1.0f : x);)                                         \
  X(double, sign_d, (double x), return x > 0 ? 1.0 : (x < 0 ? -1.0 : x);)                                         \
  X(int, sign_i, (int x), return (x > 0) - (x < 0);)                                                              \
  X(float, relu_f, (float x), return x < 0 ? 0.0f : x;)                                                           \
  X(double, relu_d, (double x), return x < 0 ? 0.0 : x;)                                                          \
  X(int, relu_i, (int x), return x < 0 ? 0 : x;)                                                                  \
  X(float, min_f, (float x, float y), return (x != x || y != y) ? x + y : (x < y ? x : y);)                       \
  X(double, min_d, (double x, double y), return (x != x || y != y) ? x + y : (x < y ? x : y);)                    \
  X(int, min_i, (int x, int y), return x < y ? x : y;)                                                            \
  X(float, max_f, (float x, float y), return (x != x || y != y) ? x + y : (x > y ? x : y);)                       \
  X(double, max_d, (double x, double y), return (x != x || y != y) ? x + y : (x > y ? x : y);)                    \
  X(int, max_i, (int x, int y), return x > y ? x : y;)                                                            \
  X(float, pow_f, (float x, float y), return powf(x, y);)                                                         \
  X(double, pow_d, (double x, double y), return pow(x, y);)                                                       \
  X(int, pow_i, (int x, int y), return ckx_f2i(ckx_ipow((double)x, (double)y));)                                  \
  X(float, clamp_f, (float x, float lo, float hi), float t = x < lo ? lo : x; return t > hi ? hi : t;)           \
  X(double, clamp_d, (double x, double lo, double hi), double t = x < lo ? lo : x; return t > hi ? hi : t;)      \
  X(int, clamp_i, (int x, int lo, int hi), int t = x < lo ? lo : x; return t > hi ? hi : t;)                     \
  X(float, exp_f, (float x), return expf(x);)                                                                     \
  X(double, exp_d, (double x), return exp(x);)                                                                    \
  X(float, exp2_f, (float x), return exp2f(x);)                                                                   \
  X(double, exp2_d, (double x), return exp2(x);)                                                                  \
  X(float, expm1_f, (float x), return expm1f(x);)                                                                 \
  X(double, expm1_d, (double x), return expm1(x);)                                                                \
  X(float, log_f, (float x), return logf(x);)                                                                     \
  X(double, log_d, (double x), return log(x);)                                                                    \
  X(float, log2_f, (float x), return log2f(x);)                                                                   \
  X(double, log2_d, (double x), return log2(x);)                                                                  \
  X(float, log10_f, (float x), return log10f(x);)                                                                 \
  X(double, log10_d, (double x), return log10(x);)                                                                \
  X(float, log1p_f, (float x), return log1pf(x);)                                                                 \
  X(double, log1p_d, (double x), return log1p(x);)                                                                \
  X(float, sqrt_f, (float x), return sqrtf(x);)                                                                   \
  X(double, sqrt_d, (double x), return sqrt(x);)                                                                  \
  X(float, rsqrt_f, (float x), return 1.0f / sqrtf(x);)                                                           \
  X(double, rsqrt_d, (double x), return 1.0 / sqrt(x);)                                                           \
  X(float, cbrt_f, (float x), return cbrtf(x);)                                                                   \
  X(double, cbrt_d, (double x), return cbrt(x);)                                                                  \
  X(float, sin_f, (float x), return sinf(x);)                                                                     \
  X(double, sin_d, (double x), return sin(x);)                                                                    \
  X(float, cos_f, (float x), return cosf(x);)                                                                     \
  X(double, cos_d, (double x), return cos(x);)                                                                    \
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
  X(float, tanh_f, (float x), return tanhf(x);)                                                                   \
  X(double, tanh_d, (double x), return tanh(x);)                                                                  \
  X(float, erf_f, (float x), return erff(x);)                                                                     \
  X(double, erf_d, (double x), return erf(x);)                                                                    \
  X(float, erfc_f, (float x), return erfcf(x);)                                                                   \
  X(double, erfc_d, (double x), return erfc(x);)                                                                  \
  X(float, sigmoid_f, (float x), return 1.0f / (1.0f + expf(-x));)                                                \
  X(double, sigmoid_d, (double x), return 1.0 / (1.0 + exp(-x));)                                                 \
  X(float, atan2_f, (float x, float y), return atan2f(x, y);)                                                     \
  X(double, atan2_d, (double x, double y), return atan2(x, y);)                                                   \
  X(float, hypot_f, (float x, float y), return hypotf(x, y);)                                                     \
  X(double, hypot_d, (double x, double y), return hypot(x, y);)                                                   \
  X(float, fma_f, (float x, float y, float z), return fmaf(x, y, z);)                                             \
  X(double, fma_d, (double x, double y, double z), return fma(x, y, z);)

#define CKX_HOST(ret, name, params, ...) static inline ret ckx_##name params { __VA_ARGS__ }
CKX_MATH(CKX_HOST)
#undef CKX_HOST

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#define CKX_DEV(ret, name, params, ...) "__device__ __forceinline__ " #ret " ckx_" #name #params " { " #__VA_ARGS__ " }\n"
static const char preamble[] = "/* cukern expression helpers (src/fused/expr_ops.c: CKX_MATH, shared with the host) */\n"
                               CKX_MATH(CKX_DEV);
#undef CKX_DEV
#pragma GCC diagnostic pop
const char *ck_expr_preamble(void) { return preamble; }

// ---------------------------------------------------------------- the op table

#define F1(n) {#n, 1, XF_FLOAT, (xfn)ckx_##n##_f, (xfn)ckx_##n##_d, NULL}
#define I1(n) {#n, 1, XF_INT | XF_FLOAT, (xfn)ckx_##n##_f, (xfn)ckx_##n##_d, (xfn)ckx_##n##_i}
#define F2(n) {#n, 2, XF_FLOAT, (xfn)ckx_##n##_f, (xfn)ckx_##n##_d, NULL}
#define I2(n) {#n, 2, XF_INT | XF_FLOAT, (xfn)ckx_##n##_f, (xfn)ckx_##n##_d, (xfn)ckx_##n##_i}
#define C2(n) {#n, 2, XF_INT | XF_FLOAT | XF_CMP, (xfn)ckx_##n##_f, (xfn)ckx_##n##_d, (xfn)ckx_##n##_i}
const xopinfo ck_xops[XOP_N] = {
    [XOP_CONST] = {NULL, 0, XF_INT | XF_FLOAT, 0, 0, 0},
    [XOP_INPUT] = {NULL, 0, XF_INT | XF_FLOAT, 0, 0, 0},
    [XOP_CAST] = {NULL, 1, XF_INT | XF_FLOAT, 0, 0, 0},
    [XOP_SELECT] = {"where", 3, XF_INT | XF_FLOAT, 0, 0, 0},
    [XOP_AND] = {NULL, 2, XF_INT | XF_FLOAT, 0, 0, 0},
    [XOP_OR] = {NULL, 2, XF_INT | XF_FLOAT, 0, 0, 0},
    [XOP_NOT] = {NULL, 1, XF_INT | XF_FLOAT, 0, 0, 0},
    [XOP_NEG] = I1(neg), [XOP_ADD] = I2(add), [XOP_SUB] = I2(sub), [XOP_MUL] = I2(mul), [XOP_DIV] = I2(div),
    [XOP_MOD] = I2(mod), [XOP_LT] = C2(lt), [XOP_LE] = C2(le), [XOP_GT] = C2(gt), [XOP_GE] = C2(ge),
    [XOP_EQ] = C2(eq), [XOP_NE] = C2(ne),
    [XOP_ABS] = I1(abs), [XOP_FLOOR] = I1(floor), [XOP_CEIL] = I1(ceil), [XOP_ROUND] = I1(round),
    [XOP_TRUNC] = I1(trunc), [XOP_SIGN] = I1(sign), [XOP_RELU] = I1(relu), [XOP_MIN] = I2(min),
    [XOP_MAX] = I2(max), [XOP_POW] = I2(pow),
    [XOP_CLAMP] = {"clamp", 3, XF_INT | XF_FLOAT, (xfn)ckx_clamp_f, (xfn)ckx_clamp_d, (xfn)ckx_clamp_i},
    [XOP_EXP] = F1(exp), [XOP_EXP2] = F1(exp2), [XOP_EXPM1] = F1(expm1), [XOP_LOG] = F1(log),
    [XOP_LOG2] = F1(log2), [XOP_LOG10] = F1(log10), [XOP_LOG1P] = F1(log1p), [XOP_SQRT] = F1(sqrt),
    [XOP_RSQRT] = F1(rsqrt), [XOP_CBRT] = F1(cbrt), [XOP_SIN] = F1(sin), [XOP_COS] = F1(cos), [XOP_TAN] = F1(tan),
    [XOP_ASIN] = F1(asin), [XOP_ACOS] = F1(acos), [XOP_ATAN] = F1(atan), [XOP_SINH] = F1(sinh),
    [XOP_COSH] = F1(cosh), [XOP_TANH] = F1(tanh), [XOP_ERF] = F1(erf), [XOP_ERFC] = F1(erfc),
    [XOP_SIGMOID] = F1(sigmoid), [XOP_ATAN2] = F2(atan2), [XOP_HYPOT] = F2(hypot),
    [XOP_FMA] = {"fma", 3, XF_FLOAT, (xfn)ckx_fma_f, (xfn)ckx_fma_d, NULL},
};
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
  if (!strcmp(name, "f32") || !strcmp(name, "float")) return *cast = CK_F32, XOP_CAST;
  if (!strcmp(name, "f64") || !strcmp(name, "double")) return *cast = CK_F64, XOP_CAST;
  if (!strcmp(name, "i32") || !strcmp(name, "int")) return *cast = CK_I32, XOP_CAST;
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

static xtype promote(xtype a, xtype b) {
  xtype r = {0, 0, 0};
  if (a.weak && b.weak) {
    r.weak = 1;
    r.dt = (a.dt == CK_F64 || b.dt == CK_F64) ? CK_F64 : CK_I32;
  } else if (a.weak || b.weak) {
    xtype s = a.weak ? b : a, w = a.weak ? a : b;
    r.dt = s.dt;
    if (s.dt == CK_I32 && w.dt != CK_I32) r.dt = CK_F32; /* i32 array with a non-integral number -> f32 */
  } else {
    r.dt = (a.dt == CK_F64 || b.dt == CK_F64) ? CK_F64 : (a.dt == CK_F32 || b.dt == CK_F32) ? CK_F32 : CK_I32;
  }
  r.ct = r.dt;
  return r;
}

int ck_xtype_final(xtype t) { return t.weak ? (t.dt == CK_I32 ? CK_I32 : CK_F32) : t.dt; }

ck_status ck_expr_type(ck_ctx *ctx, const ck_expr *e, const xtype *in, xtype *ty) {
  for (int i = 0; i < e->n; ++i) {
    const xnode *x = &e->nodes[i];
    xtype t = {0, 0, 0};
    switch (x->op) {
    case XOP_CONST:
      t.weak = 1;
      t.dt = t.ct = x->kint && x->k >= -2147483648.0 ? CK_I32 : CK_F64;
      break;
    case XOP_INPUT: t = in[x->input]; t.ct = t.dt; break;
    case XOP_CAST: t.dt = (signed char)x->cast; t.ct = ty[x->a].dt; t.weak = 0; break;
    case XOP_NOT: t = ty[x->a]; t.ct = t.dt; break;
    case XOP_AND:
    case XOP_OR: t = promote(ty[x->a], ty[x->b]); break;
    case XOP_SELECT: t = promote(ty[x->b], ty[x->c]); break;
    default: {
      const xopinfo *o = &ck_xops[x->op];
      t = ty[x->a];
      if (o->arity >= 2) t = promote(t, ty[x->b]);
      if (o->arity >= 3) t = promote(t, ty[x->c]);
      if (!(o->flags & XF_INT) && t.dt == CK_I32) {
        if (t.weak) t.dt = CK_F64;
        else
          return ck_expr_error_at(ctx, e, CK_ERR_DTYPE, x->pos,
                                  "%s takes floats, not i32 (cast first: %s(f32(x)) or %s(f64(x)))", ck_xop_symbol(x->op),
                                  o->name, o->name);
      }
      t.ct = t.dt;
    }
    }
    ty[i] = t;
  }
  return CK_OK;
}

