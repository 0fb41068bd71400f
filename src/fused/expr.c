/*
 * expr.c — the expression language of ck.map and ck.reduce_map: lexer, parser (to a post-order node array),
 * type checking, the host evaluator (the oracle), and the CUDA generator.
 *
 * One source of truth for the arithmetic: CKX_MATH below lists every scalar helper once, as C text. The host
 * compiles it as static inline functions; the generator pastes the same text (stringified) into every NVRTC
 * program with __device__ in front. So ckx_div_i (i32 division: truncation, x/0 = 0) or ckx_max_f (NaN
 * propagating) cannot drift between the oracle and the kernel; only libm vs CUDA's math library differ
 * (a few ulps for transcendental functions).
 */
#define _POSIX_C_SOURCE 200809L
#include "expr.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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
static const char preamble[] = "/* cukern expression helpers (src/fused/expr.c: CKX_MATH, shared with the host) */\n"
                               CKX_MATH(CKX_DEV);
#undef CKX_DEV
#pragma GCC diagnostic pop
const char *ck_expr_preamble(void) { return preamble; }

// ---------------------------------------------------------------- the op table

enum { XF_INT = 1, XF_FLOAT = 2, XF_CMP = 4 }; /* XF_INT: has an i32 form; XF_CMP: ct = promoted, dt = ct */
typedef void (*xfn)(void);
typedef struct xopinfo {
  const char *name; /* function name in the language and helper stem; NULL for syntax-only ops */
  int arity, flags;
  xfn f, d, i;
} xopinfo;

#define F1(n) {#n, 1, XF_FLOAT, (xfn)ckx_##n##_f, (xfn)ckx_##n##_d, NULL}
#define I1(n) {#n, 1, XF_INT | XF_FLOAT, (xfn)ckx_##n##_f, (xfn)ckx_##n##_d, (xfn)ckx_##n##_i}
#define F2(n) {#n, 2, XF_FLOAT, (xfn)ckx_##n##_f, (xfn)ckx_##n##_d, NULL}
#define I2(n) {#n, 2, XF_INT | XF_FLOAT, (xfn)ckx_##n##_f, (xfn)ckx_##n##_d, (xfn)ckx_##n##_i}
#define C2(n) {#n, 2, XF_INT | XF_FLOAT | XF_CMP, (xfn)ckx_##n##_f, (xfn)ckx_##n##_d, (xfn)ckx_##n##_i}
static const xopinfo OPS[XOP_N] = {
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
static const char *op_symbol(int op) {
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
  default: return OPS[op].name ? OPS[op].name : "?";
  }
}

/* Function names of the language (besides the op table): aliases and casts. */
static int lookup_function(const char *name, int *cast) {
  *cast = -1;
  if (!strcmp(name, "f32") || !strcmp(name, "float")) return *cast = CK_F32, XOP_CAST;
  if (!strcmp(name, "f64") || !strcmp(name, "double")) return *cast = CK_F64, XOP_CAST;
  if (!strcmp(name, "i32") || !strcmp(name, "int")) return *cast = CK_I32, XOP_CAST;
  if (!strcmp(name, "fmin")) return XOP_MIN;
  if (!strcmp(name, "fmax")) return XOP_MAX;
  if (!strcmp(name, "fabs")) return XOP_ABS;
  if (!strcmp(name, "fmod")) return XOP_MOD;
  for (int op = XOP_NEG; op < XOP_N; ++op)
    if (OPS[op].name && !strcmp(OPS[op].name, name)) return op;
  if (!strcmp(name, "where")) return XOP_SELECT;
  return -1;
}

static bool is_constant(const char *name) { return !strcmp(name, "pi") || !strcmp(name, "inf") || !strcmp(name, "nan"); }

// ---------------------------------------------------------------- errors

static void caret_lines(char *buf, size_t n, const char *text, int pos) {
  /* one line of the text around pos (at most ~100 characters) with a caret under pos */
  int len = (int)strlen(text), p = pos - 1;
  if (p < 0) p = 0;
  if (p > len) p = len;
  int lo = p, hi = p;
  while (lo > 0 && text[lo - 1] != '\n' && p - lo < 60) --lo;
  while (hi < len && text[hi] != '\n' && hi - p < 40) ++hi;
  int k = snprintf(buf, n, "\n  %.*s\n  ", hi - lo, text + lo);
  for (int i = lo; i < p && k < (int)n - 2; ++i) buf[k++] = text[i] == '\t' ? '\t' : ' ';
  if (k < (int)n - 1) buf[k++] = '^';
  buf[k < (int)n ? k : (int)n - 1] = 0;
}

ck_status ck_expr_error_at(ck_ctx *ctx, const ck_expr *e, ck_status st, int pos, const char *fmt, ...) {
  char msg[512], car[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  caret_lines(car, sizeof car, e->text, pos);
  if (strlen(e->text) > 160) /* the caret line shows the neighbourhood; the whole text would not fit */
    return ck_error(ctx, st, "%s: %s at position %d of the expression%s", e->what, msg, pos, car);
  return ck_error(ctx, st, "%s: %s at position %d of \"%s\"%s", e->what, msg, pos, e->text, car);
}

/* An assigned name that is also an input: found by the parser (the expression reads it) or when binding (the
 * inputs table has it); one message for both, since either way the input would be hidden or overwritten. */
static ck_status assign_clash(ck_ctx *ctx, const ck_expr *e, const char *name, int pos, bool bare) {
  return ck_expr_error_at(ctx, e, CK_ERR_ARG, pos, "'%s' is an input and cannot also be assigned%s", name,
                          bare ? " (a bare expression's result is the output 'out')" : "");
}

// ---------------------------------------------------------------- lexer and parser

enum { TK_END, TK_NUM, TK_NAME, TK_OP };
typedef struct parser {
  ck_ctx *ctx;
  ck_expr *e;
  const char *s;
  int p;       /* current offset */
  int tk, tpos; /* current token kind and its start offset */
  char tname[XNAME_MAX + 1];
  char top[3];
  double tnum;
  int tint;
  const char *const *fixed;
  int nfixed;
  /* assigned names so far (statement roots) */
  xassign *asg;
  int na;
  int depth; /* nesting, bounded so that the C stack is */
  ck_status st;
} parser;

#define PFAIL(P, pos, ...)                                                                                    \
  do {                                                                                                        \
    if (!(P)->st) (P)->st = ck_expr_error_at((P)->ctx, (P)->e, CK_ERR_ARG, (pos), __VA_ARGS__);             \
    return -1;                                                                                                \
  } while (0)

static void next(parser *P) {
  const char *s = P->s;
  while (isspace((unsigned char)s[P->p])) ++P->p;
  P->tpos = P->p;
  char c = s[P->p];
  if (!c) {
    P->tk = TK_END;
    return;
  }
  if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)s[P->p + 1]))) {
    char *end;
    P->tnum = strtod(s + P->p, &end);
    int q = P->p;
    P->tint = 1;
    for (; s + q < end; ++q)
      if (s[q] == '.' || s[q] == 'e' || s[q] == 'E') P->tint = 0;
    P->p = (int)(end - s);
    /* a C suffix (1.0f) is accepted and ignored */
    if (s[P->p] == 'f' || s[P->p] == 'F') {
      P->tint = 0;
      ++P->p;
    }
    P->tk = TK_NUM;
    return;
  }
  if (isalpha((unsigned char)c) || c == '_') {
    int q = P->p, k = 0;
    while (isalnum((unsigned char)s[q]) || s[q] == '_') {
      if (k < XNAME_MAX) P->tname[k++] = s[q];
      ++q;
    }
    P->tname[k] = 0;
    P->p = q;
    P->tk = TK_NAME;
    if (q - P->tpos > XNAME_MAX) { /* cut short, two long names could become one input */
      if (!P->st)
        P->st = ck_expr_error_at(P->ctx, P->e, CK_ERR_ARG, P->tpos + 1, "name '%.20s...' is longer than %d characters",
                                 P->tname, XNAME_MAX);
      P->tk = TK_END; /* the parser stops; the first error stands */
    }
    return;
  }
  static const char *two[] = {"<=", ">=", "==", "!=", "&&", "||"};
  for (size_t i = 0; i < sizeof two / sizeof *two; ++i)
    if (c == two[i][0] && s[P->p + 1] == two[i][1]) {
      memcpy(P->top, two[i], 3);
      P->p += 2;
      P->tk = TK_OP;
      return;
    }
  P->top[0] = c;
  P->top[1] = 0;
  P->p += 1;
  P->tk = TK_OP;
}

static bool is_op(parser *P, const char *op) { return P->tk == TK_OP && !strcmp(P->top, op); }

static const char *tok_desc(parser *P, char *buf, size_t n) {
  switch (P->tk) {
  case TK_END: return "the end";
  case TK_NUM: snprintf(buf, n, "number %.*s", P->p - P->tpos, P->s + P->tpos); return buf;
  case TK_NAME: snprintf(buf, n, "'%s'", P->tname); return buf;
  default: snprintf(buf, n, "'%s'", P->top); return buf;
  }
}

static int add_node(parser *P, int op, int a, int b, int c, int pos) {
  ck_expr *e = P->e;
  if (e->n == e->cap) {
    int nc = e->cap ? 2 * e->cap : 32;
    xnode *nn = realloc(e->nodes, (size_t)nc * sizeof *nn);
    if (!nn) PFAIL(P, pos, "out of host memory");
    e->nodes = nn;
    e->cap = nc;
  }
  if (e->n >= 4096) PFAIL(P, pos, "expression too long (4096 nodes)");
  xnode *x = &e->nodes[e->n];
  memset(x, 0, sizeof *x);
  x->op = op, x->a = a, x->b = b, x->c = c, x->pos = pos, x->input = -1, x->cast = -1;
  return e->n++;
}

static int add_name(char ***names, int **pos, int *n, const char *name, int p) {
  for (int i = 0; i < *n; ++i)
    if (!strcmp((*names)[i], name)) return i;
  char **nn = realloc(*names, (size_t)(*n + 1) * sizeof *nn);
  if (!nn) return -1;
  *names = nn;
  if (pos) {
    int *np = realloc(*pos, (size_t)(*n + 1) * sizeof *np);
    if (!np) return -1;
    *pos = np;
    np[*n] = p;
  }
  if (!(nn[*n] = strdup(name))) return -1;
  return (*n)++;
}

static int p_expr(parser *P);
static int p_ternary(parser *P);

static int p_primary(parser *P) {
  int pos = P->tpos + 1;
  char d[80];
  if (P->tk == TK_NUM) {
    int n = add_node(P, XOP_CONST, -1, -1, -1, pos);
    if (n < 0) return -1;
    P->e->nodes[n].k = P->tnum;
    P->e->nodes[n].kint = P->tint && P->tnum <= 2147483647.0;
    next(P);
    return n;
  }
  if (is_op(P, "(")) {
    next(P);
    int x = p_expr(P);
    if (x < 0) return -1;
    if (!is_op(P, ")")) PFAIL(P, P->tpos + 1, "expected ')' (to close the '(' at %d), found %s", pos, tok_desc(P, d, sizeof d));
    next(P);
    return x;
  }
  if (P->tk == TK_NAME) {
    char name[XNAME_MAX + 1];
    memcpy(name, P->tname, sizeof name);
    next(P);
    if (is_op(P, "(")) { /* a function call */
      int cast, op = lookup_function(name, &cast);
      if (op < 0)
        PFAIL(P, pos, "unknown function '%s' (functions: f32 f64 i32 abs floor ceil round trunc sign relu min max "
                      "pow clamp where exp exp2 expm1 log log2 log10 log1p sqrt rsqrt cbrt sin cos tan asin acos "
                      "atan sinh cosh tanh erf erfc sigmoid atan2 hypot fma)", name);
      int want = OPS[op].arity, args[3] = {-1, -1, -1}, n = 0;
      next(P);
      if (!is_op(P, ")")) {
        for (;;) {
          int a = p_expr(P);
          if (a < 0) return -1;
          if (n < 3) args[n] = a;
          ++n;
          if (is_op(P, ",")) {
            next(P);
            continue;
          }
          break;
        }
      }
      if (!is_op(P, ")")) PFAIL(P, P->tpos + 1, "expected ',' or ')' in the call of %s, found %s", name, tok_desc(P, d, sizeof d));
      next(P);
      if (n != want) PFAIL(P, pos, "%s takes %d argument%s, got %d", name, want, want == 1 ? "" : "s", n);
      int x = add_node(P, op, args[0], args[1], args[2], pos);
      if (x >= 0) P->e->nodes[x].cast = cast;
      return x;
    }
    /* an earlier statement's result? */
    for (int i = P->na - 1; i >= 0; --i)
      if (!strcmp(P->asg[i].name, name)) return P->asg[i].root;
    if (is_constant(name)) { /* constants, never inputs (an input of that name is refused) */
      int n = add_node(P, XOP_CONST, -1, -1, -1, pos);
      if (n < 0) return -1;
      P->e->nodes[n].k = name[0] == 'p' ? 3.14159265358979323846 : name[0] == 'i' ? HUGE_VAL : NAN;
      return n;
    }
    if (P->fixed) {
      bool ok = false;
      for (int i = 0; i < P->nfixed; ++i) ok |= !strcmp(P->fixed[i], name);
      if (!ok) {
        char list[128] = "";
        for (int i = 0; i < P->nfixed; ++i) {
          strncat(list, P->fixed[i], sizeof list - strlen(list) - 3);
          if (i + 1 < P->nfixed) strncat(list, ", ", sizeof list - strlen(list) - 1);
        }
        PFAIL(P, pos, "unknown name '%s' (this expression can use: %s)", name, list);
      }
    }
    int k = add_name(&P->e->in_names, &P->e->in_pos, &P->e->nin, name, pos);
    if (k < 0) PFAIL(P, pos, "out of host memory");
    int n = add_node(P, XOP_INPUT, -1, -1, -1, pos);
    if (n >= 0) P->e->nodes[n].input = k;
    return n;
  }
  if (is_op(P, "^")) PFAIL(P, pos, "'^' is not an operator here (use pow(x, y))");
  PFAIL(P, pos, "expected a number, a name, a call or '(', found %s", tok_desc(P, d, sizeof d));
}

static int p_unary(parser *P) {
  int pos = P->tpos + 1;
  if (is_op(P, "-") || is_op(P, "!") || is_op(P, "+")) {
    char c = P->top[0];
    next(P);
    if (++P->depth > 256) PFAIL(P, pos, "expression nested too deeply (256 levels)");
    int a = p_unary(P);
    --P->depth;
    if (a < 0) return -1;
    if (c == '+') return a;
    /* fold -literal so that -2147483648 and -0.5 stay literals */
    xnode *x = &P->e->nodes[a];
    if (c == '-' && x->op == XOP_CONST) {
      x->k = -x->k;
      x->pos = pos;
      return a;
    }
    return add_node(P, c == '-' ? XOP_NEG : XOP_NOT, a, -1, -1, pos);
  }
  return p_primary(P);
}

typedef struct {
  const char *sym;
  int op;
} binop;
static int p_binary(parser *P, int level);
static const binop LEVELS[][5] = {
    {{"||", XOP_OR}, {0, 0}},
    {{"&&", XOP_AND}, {0, 0}},
    {{"==", XOP_EQ}, {"!=", XOP_NE}, {0, 0}},
    {{"<", XOP_LT}, {"<=", XOP_LE}, {">", XOP_GT}, {">=", XOP_GE}, {0, 0}},
    {{"+", XOP_ADD}, {"-", XOP_SUB}, {0, 0}},
    {{"*", XOP_MUL}, {"/", XOP_DIV}, {"%", XOP_MOD}, {0, 0}},
};
#define NLEVELS ((int)(sizeof LEVELS / sizeof *LEVELS))

static int p_binary(parser *P, int level) {
  if (level == NLEVELS) return p_unary(P);
  int a = p_binary(P, level + 1);
  if (a < 0) return -1;
  for (;;) {
    int op = -1;
    for (const binop *b = LEVELS[level]; b->sym; ++b)
      if (is_op(P, b->sym)) op = b->op;
    if (op < 0) return a;
    int pos = P->tpos + 1;
    next(P);
    int b = p_binary(P, level + 1);
    if (b < 0) return -1;
    if ((a = add_node(P, op, a, b, -1, pos)) < 0) return -1;
  }
}

static int p_expr(parser *P) {
  if (++P->depth > 256) PFAIL(P, P->tpos + 1, "expression nested too deeply (256 levels)");
  int r = p_ternary(P);
  --P->depth;
  return r;
}

static int p_ternary(parser *P) {
  int c = p_binary(P, 0);
  if (c < 0) return -1;
  if (!is_op(P, "?")) return c;
  int pos = P->tpos + 1;
  char d[80];
  next(P);
  int a = p_expr(P);
  if (a < 0) return -1;
  if (!is_op(P, ":")) PFAIL(P, P->tpos + 1, "expected ':' of the '?' at %d, found %s", pos, tok_desc(P, d, sizeof d));
  next(P);
  int b = p_expr(P);
  if (b < 0) return -1;
  return add_node(P, XOP_SELECT, c, a, b, pos);
}

static int p_program(parser *P) {
  char d[80];
  next(P);
  if (P->tk == TK_END) PFAIL(P, 1, "empty expression");
  while (P->tk != TK_END) {
    /* NAME '=' (not '==') starts an assignment */
    int save_p = P->p, save_tpos = P->tpos, stmt_pos = P->tpos + 1;
    char name[64] = "";
    if (P->tk == TK_NAME) {
      memcpy(name, P->tname, sizeof name);
      next(P);
      if (!is_op(P, "=")) { /* not an assignment: rewind */
        P->p = save_p, P->tpos = save_tpos;
        P->tk = TK_NAME;
        memcpy(P->tname, name, sizeof name);
        name[0] = 0;
      } else {
        next(P);
      }
    }
    int root = p_expr(P);
    if (root < 0) return -1;
    const bool bare = !name[0];
    if (bare) {
      if (P->tk != TK_END && !(is_op(P, ";"))) {
        if (is_op(P, "="))
          PFAIL(P, P->tpos + 1, "'=' assigns to a name only (use '==' to compare)");
        PFAIL(P, P->tpos + 1, "expected an operator, ';' or the end, found %s", tok_desc(P, d, sizeof d));
      }
      strcpy(name, "out");
    } else {
      int cast;
      if (lookup_function(name, &cast) >= 0) PFAIL(P, stmt_pos, "'%s' is a function; pick another output name", name);
      if (is_constant(name)) PFAIL(P, stmt_pos, "'%s' is a constant; pick another output name", name);
    }
    for (int i = 0; i < P->e->nin; ++i)
      if (!strcmp(P->e->in_names[i], name)) {
        if (!P->st) P->st = assign_clash(P->ctx, P->e, name, stmt_pos, bare);
        return -1;
      }
    for (int i = 0; i < P->na; ++i)
      if (!strcmp(P->asg[i].name, name)) PFAIL(P, stmt_pos, "'%s' is assigned twice", name);
    xassign *na = realloc(P->asg, (size_t)(P->na + 1) * sizeof *na);
    if (!na) PFAIL(P, stmt_pos, "out of host memory");
    P->asg = na;
    if (!(na[P->na].name = strdup(name))) PFAIL(P, stmt_pos, "out of host memory");
    na[P->na].pos = stmt_pos, na[P->na].root = root, na[P->na].bare = bare;
    P->na++;
    if (is_op(P, ";")) {
      next(P);
      continue;
    }
    if (P->tk != TK_END) {
      if (is_op(P, "=")) PFAIL(P, P->tpos + 1, "'=' assigns to a name only (use '==' to compare)");
      PFAIL(P, P->tpos + 1, "expected an operator, ';' or the end, found %s", tok_desc(P, d, sizeof d));
    }
  }
  return 0;
}

void ck_expr_free(ck_expr *e) {
  if (!e) return;
  for (int i = 0; i < e->nin; ++i) free(e->in_names[i]);
  for (int i = 0; i < e->nout; ++i) free(e->out_names[i]);
  free(e->in_names);
  free(e->in_pos);
  free(e->out_names);
  free(e->out_root);
  for (int i = 0; i < e->na; ++i) free(e->asg[i].name);
  free(e->asg);
  free(e->nodes);
  free(e->text);
  free(e);
}

ck_status ck_expr_parse(ck_ctx *ctx, const char *what, const char *text, const char *const *fixed, int nfixed,
                        bool single, ck_expr **out) {
  *out = NULL;
  ck_expr *e = calloc(1, sizeof *e);
  if (!e || !(e->text = strdup(text))) {
    free(e);
    return ck_error(ctx, CK_ERR_OOM, "out of host memory");
  }
  snprintf(e->what, sizeof e->what, "%s", what);
  parser P = {.ctx = ctx, .e = e, .s = e->text, .fixed = fixed, .nfixed = nfixed};
  int r = p_program(&P);
  ck_status st = P.st;
  if (r < 0 && !st) st = ck_error(ctx, CK_ERR_INTERNAL, "%s: parse failed", what);
  if (!st) {
    /* outputs: assigned names not starting with '_' (a lone temporary program is an error) */
    for (int i = 0; i < P.na; ++i) {
      if (P.asg[i].name[0] == '_') continue;
      char **nn = realloc(e->out_names, (size_t)(e->nout + 1) * sizeof *nn);
      int *nr = nn ? realloc(e->out_root, (size_t)(e->nout + 1) * sizeof *nr) : NULL;
      if (nn) e->out_names = nn;
      if (!nr) {
        st = ck_error(ctx, CK_ERR_OOM, "out of host memory");
        break;
      }
      e->out_root = nr;
      if (!(nn[e->nout] = strdup(P.asg[i].name))) {
        st = ck_error(ctx, CK_ERR_OOM, "out of host memory");
        break;
      }
      nr[e->nout++] = P.asg[i].root;
    }
    if (!st && e->nout == 0)
      st = ck_expr_error_at(ctx, e, CK_ERR_ARG, 1, "no outputs (names beginning with '_' are temporaries)");
    if (!st && single && e->nout != 1)
      st = ck_expr_error_at(ctx, e, CK_ERR_ARG, 1, "this expression must have exactly one result, it has %d", e->nout);
  }
  e->asg = P.asg, e->na = P.na; /* kept: binding checks the inputs table against them */
  if (st) {
    ck_expr_free(e);
    return st;
  }
  *out = e;
  return CK_OK;
}

/* A name for messages: at most `max` bytes of it, control characters as \ddd (Lua's %q shows them so). */
static void show_name(char *buf, size_t n, const char *name, size_t max) {
  size_t k = 0, i = 0;
  for (; name[i] && i < max && k + 5 < n; ++i) {
    unsigned char c = (unsigned char)name[i];
    if (c < 32 || c == 127) k += (size_t)snprintf(buf + k, n - k, "\\%d", c);
    else buf[k++] = (char)c;
  }
  if (name[i] && k + 4 < n) memcpy(buf + k, "...", 3), k += 3;
  buf[k] = 0;
}

ck_status ck_expr_check_input(ck_ctx *ctx, const ck_expr *e, const char *name) {
  char shown[96];
  show_name(shown, sizeof shown, name, 40);
  bool ident = isalpha((unsigned char)name[0]) || name[0] == '_';
  size_t len = 0;
  for (; name[len]; ++len) ident = ident && (isalnum((unsigned char)name[len]) || name[len] == '_');
  if (!ident)
    return ck_error(ctx, CK_ERR_ARG, "%s: input name \"%s\" is not a name (a letter or '_', then letters, digits or '_')",
                    e->what, shown);
  if (len > XNAME_MAX)
    return ck_error(ctx, CK_ERR_ARG, "%s: input name \"%s\" is longer than %d characters", e->what, shown, XNAME_MAX);
  /* the expression reads these names as the language's own, so such an input could never be read */
  int cast;
  if (is_constant(name))
    return ck_error(ctx, CK_ERR_ARG, "%s: input name '%s' is a constant of the expression language (pi, inf, nan); "
                    "rename the input", e->what, name);
  if (lookup_function(name, &cast) >= 0)
    return ck_error(ctx, CK_ERR_ARG, "%s: input name '%s' is a function of the expression language; rename the input",
                    e->what, name);
  for (int i = 0; i < e->na; ++i)
    if (!strcmp(e->asg[i].name, name)) return assign_clash(ctx, e, name, e->asg[i].pos, e->asg[i].bare);
  return CK_OK;
}

// ---------------------------------------------------------------- types

const char *xctype(int dt) { return dt == CK_F32 ? "float" : dt == CK_F64 ? "double" : "int"; }

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
      const xopinfo *o = &OPS[x->op];
      t = ty[x->a];
      if (o->arity >= 2) t = promote(t, ty[x->b]);
      if (o->arity >= 3) t = promote(t, ty[x->c]);
      if (!(o->flags & XF_INT) && t.dt == CK_I32) {
        if (t.weak) t.dt = CK_F64;
        else
          return ck_expr_error_at(ctx, e, CK_ERR_DTYPE, x->pos,
                                  "%s takes floats, not i32 (cast first: %s(f32(x)) or %s(f64(x)))", op_symbol(x->op),
                                  o->name, o->name);
      }
      t.ct = t.dt;
    }
    }
    ty[i] = t;
  }
  return CK_OK;
}

// ---------------------------------------------------------------- host evaluation

void xconvert(void *dst, int dd, const void *src, int ds, int n) {
#define CONV(TD, TS, EXPR)                                                                                    \
  do {                                                                                                        \
    TD *o = dst;                                                                                              \
    const TS *s = src;                                                                                        \
    for (int j = 0; j < n; ++j) o[j] = EXPR;                                                                  \
  } while (0)
  if (dd == ds) {
    memmove(dst, src, (size_t)n * ck_dtype_size((ck_dtype)dd));
    return;
  }
  switch (dd * 3 + ds) {
  case CK_F32 * 3 + CK_F64: CONV(float, double, (float)s[j]); break;
  case CK_F32 * 3 + CK_I32: CONV(float, int, (float)s[j]); break;
  case CK_F64 * 3 + CK_F32: CONV(double, float, (double)s[j]); break;
  case CK_F64 * 3 + CK_I32: CONV(double, int, (double)s[j]); break;
  case CK_I32 * 3 + CK_F32: CONV(int, float, ckx_f2i((double)s[j])); break;
  case CK_I32 * 3 + CK_F64: CONV(int, double, ckx_f2i(s[j])); break;
  default: break;
  }
#undef CONV
}

ck_status xeval_init(ck_ctx *ctx, xeval *ev, const ck_expr *e, const xtype *ty) {
  memset(ev, 0, sizeof *ev);
  ev->e = e, ev->ty = ty;
  /* node values + 3 scratch operands + inputs, XBLK doubles each */
  size_t slots = (size_t)e->n + 3 + (size_t)e->nin;
  ev->mem = aligned_alloc(64, (slots * XBLK * sizeof(double) + slots * 2 * sizeof(void *) + 127) / 64 * 64);
  if (!ev->mem) return ck_error(ctx, CK_ERR_OOM, "%s: out of host memory", e->what);
  char *p = ev->mem + slots * XBLK * sizeof(double);
  ev->val = (void **)p;
  ev->in_buf = ev->val + e->n + 3;
  for (size_t i = 0; i < (size_t)e->n + 3; ++i) ev->val[i] = ev->mem + i * XBLK * sizeof(double);
  for (int k = 0; k < e->nin; ++k) ev->in_buf[k] = ev->mem + ((size_t)e->n + 3 + (size_t)k) * XBLK * sizeof(double);
  for (int i = 0; i < e->n; ++i) {
    const xnode *x = &e->nodes[i];
    if (x->op == XOP_INPUT) ev->val[i] = ev->in_buf[x->input];
    if (x->op == XOP_CONST) { /* filled once: constants never change */
      if (ty[i].dt == CK_I32) {
        int *o = ev->val[i];
        for (int j = 0; j < XBLK; ++j) o[j] = (int)x->k;
      } else {
        double *o = ev->val[i];
        for (int j = 0; j < XBLK; ++j) o[j] = x->k;
      }
    }
  }
  return CK_OK;
}

void xeval_free(xeval *ev) {
  free(ev->mem);
  ev->mem = NULL;
}

/* The operand `child` converted to dtype ct, in scratch slot s if needed. */
static const void *operand(xeval *ev, int child, int ct, int s, int n) {
  if (ev->ty[child].dt == ct) return ev->val[child];
  void *dst = ev->val[ev->e->n + s];
  xconvert(dst, ct, ev->val[child], ev->ty[child].dt, n);
  return dst;
}

/* 1 where v is nonzero (NaN counts as true, as in C). */
static void truth(int *o, const void *v, int dt, int n) {
  if (dt == CK_F32)
    for (int j = 0; j < n; ++j) o[j] = ((const float *)v)[j] != 0;
  else if (dt == CK_F64)
    for (int j = 0; j < n; ++j) o[j] = ((const double *)v)[j] != 0;
  else
    for (int j = 0; j < n; ++j) o[j] = ((const int *)v)[j] != 0;
}

static void from_truth(void *o, int dt, const int *t, int n) {
  if (dt == CK_F32)
    for (int j = 0; j < n; ++j) ((float *)o)[j] = (float)t[j];
  else if (dt == CK_F64)
    for (int j = 0; j < n; ++j) ((double *)o)[j] = (double)t[j];
  else
    memcpy(o, t, (size_t)n * sizeof(int));
}

#define APPLY(T, F, ARITY)                                                                                     \
  do {                                                                                                         \
    T *po = out;                                                                                                \
    const T *x0 = a0, *x1 = a1, *x2 = a2;                                                                      \
    if (ARITY == 1) {                                                                                          \
      T (*f)(T) = (T(*)(T))F;                                                                                  \
      for (int j = 0; j < n; ++j) po[j] = f(x0[j]);                                                             \
    } else if (ARITY == 2) {                                                                                   \
      T (*f)(T, T) = (T(*)(T, T))F;                                                                            \
      for (int j = 0; j < n; ++j) po[j] = f(x0[j], x1[j]);                                                      \
    } else {                                                                                                   \
      T (*f)(T, T, T) = (T(*)(T, T, T))F;                                                                      \
      for (int j = 0; j < n; ++j) po[j] = f(x0[j], x1[j], x2[j]);                                               \
    }                                                                                                          \
  } while (0)

#define FAST(T)                                                                                               \
  do {                                                                                                        \
    T *restrict po = out;                                                                                     \
    const T *restrict x0 = a0, *restrict x1 = a1;                                                             \
    switch (x->op) {                                                                                          \
    case XOP_ADD: for (int j = 0; j < n; ++j) po[j] = x0[j] + x1[j]; break;                                  \
    case XOP_SUB: for (int j = 0; j < n; ++j) po[j] = x0[j] - x1[j]; break;                                  \
    case XOP_MUL: for (int j = 0; j < n; ++j) po[j] = x0[j] * x1[j]; break;                                  \
    default: for (int j = 0; j < n; ++j) po[j] = x0[j] / x1[j]; break;                                       \
    }                                                                                                         \
  } while (0)

void xeval_run(xeval *ev, int n) {
  const ck_expr *e = ev->e;
  int tA[XBLK], tB[XBLK];
  for (int i = 0; i < e->n; ++i) {
    const xnode *x = &e->nodes[i];
    const xtype t = ev->ty[i];
    void *out = ev->val[i];
    switch (x->op) {
    case XOP_CONST:
    case XOP_INPUT: break;
    case XOP_CAST: xconvert(out, t.dt, ev->val[x->a], ev->ty[x->a].dt, n); break;
    case XOP_NOT:
      truth(tA, ev->val[x->a], ev->ty[x->a].dt, n);
      for (int j = 0; j < n; ++j) tA[j] = !tA[j];
      from_truth(out, t.dt, tA, n);
      break;
    case XOP_AND:
    case XOP_OR:
      truth(tA, ev->val[x->a], ev->ty[x->a].dt, n);
      truth(tB, ev->val[x->b], ev->ty[x->b].dt, n);
      for (int j = 0; j < n; ++j) tA[j] = x->op == XOP_AND ? (tA[j] && tB[j]) : (tA[j] || tB[j]);
      from_truth(out, t.dt, tA, n);
      break;
    case XOP_SELECT: {
      truth(tA, ev->val[x->a], ev->ty[x->a].dt, n);
      const char *b = operand(ev, x->b, t.ct, 0, n), *c = operand(ev, x->c, t.ct, 1, n);
      size_t es = ck_dtype_size((ck_dtype)t.dt);
      for (int j = 0; j < n; ++j) memcpy((char *)out + j * es, (tA[j] ? b : c) + j * es, es);
      break;
    }
    default: {
      const xopinfo *oi = &OPS[x->op];
      const void *a0 = operand(ev, x->a, t.ct, 0, n);
      const void *a1 = oi->arity >= 2 ? operand(ev, x->b, t.ct, 1, n) : NULL;
      const void *a2 = oi->arity >= 3 ? operand(ev, x->c, t.ct, 2, n) : NULL;
      if (t.ct != CK_I32 && x->op >= XOP_ADD && x->op <= XOP_DIV) { /* the common ones, inlined (vectorised) */
        if (t.ct == CK_F32) FAST(float);
        else FAST(double);
        break;
      }
      if (t.ct == CK_F32) APPLY(float, oi->f, oi->arity);
      else if (t.ct == CK_F64) APPLY(double, oi->d, oi->arity);
      else APPLY(int, oi->i, oi->arity);
    }
    }
  }
}

// ---------------------------------------------------------------- CUDA generation

void xsb_printf(xsb *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->cap - b->n;
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? room : 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
      b->oom = 1;
      return;
    }
    if (b->s && (size_t)k < room) {
      b->n += (size_t)k;
      return;
    }
    size_t nc = b->cap ? b->cap * 2 : 4096;
    while (nc < b->n + (size_t)k + 1) nc *= 2;
    char *ns = realloc(b->s, nc);
    if (!ns) {
      b->oom = 1;
      return;
    }
    b->s = ns;
    b->cap = nc;
  }
}

void xsb_free(xsb *b) {
  free(b->s);
  memset(b, 0, sizeof *b);
}

static const char *sfx(int dt) { return dt == CK_F32 ? "f" : dt == CK_F64 ? "d" : "i"; }

void xgen_convert(xsb *b, const char *var, int from, int to) {
  if (from == to) xsb_printf(b, "%s", var);
  else if (to == CK_I32) xsb_printf(b, "ckx_f2i((double)%s)", var);
  else xsb_printf(b, "(%s)%s", xctype(to), var);
}

static void arg(xsb *b, const xtype *ty, int child, int ct) {
  char v[24];
  snprintf(v, sizeof v, "v%d", child);
  xgen_convert(b, v, ty[child].dt, ct);
}

void xgen_nodes(xsb *b, const ck_expr *e, const xtype *ty, const char *ind) {
  for (int i = 0; i < e->n; ++i) {
    const xnode *x = &e->nodes[i];
    const xtype t = ty[i];
    xsb_printf(b, "%sconst %s v%d = ", ind, xctype(t.dt), i);
    switch (x->op) {
    case XOP_CONST:
      if (t.dt == CK_I32) xsb_printf(b, "(int)%.17g", x->k);
      else if (x->k != x->k) xsb_printf(b, "__longlong_as_double(0x7ff8000000000000ULL)");
      else if (x->k == HUGE_VAL || x->k == -HUGE_VAL) xsb_printf(b, "%s__longlong_as_double(0x7ff0000000000000ULL)", x->k < 0 ? "-" : "");
      else xsb_printf(b, "%.17g", x->k);
      break;
    case XOP_INPUT: xsb_printf(b, "in%d", x->input); break;
    case XOP_CAST: arg(b, ty, x->a, t.dt); break;
    case XOP_NOT: xsb_printf(b, "(%s)(v%d == 0)", xctype(t.dt), x->a); break;
    case XOP_AND:
    case XOP_OR: xsb_printf(b, "(%s)((v%d != 0) %s (v%d != 0))", xctype(t.dt), x->a, x->op == XOP_AND ? "&&" : "||", x->b); break;
    case XOP_SELECT:
      xsb_printf(b, "(v%d != 0) ? ", x->a);
      arg(b, ty, x->b, t.ct);
      xsb_printf(b, " : ");
      arg(b, ty, x->c, t.ct);
      break;
    default: {
      const xopinfo *o = &OPS[x->op];
      xsb_printf(b, "ckx_%s_%s(", o->name, sfx(t.ct));
      arg(b, ty, x->a, t.ct);
      if (o->arity >= 2) xsb_printf(b, ", "), arg(b, ty, x->b, t.ct);
      if (o->arity >= 3) xsb_printf(b, ", "), arg(b, ty, x->c, t.ct);
      xsb_printf(b, ")");
    }
    }
    xsb_printf(b, ";\n");
  }
}
