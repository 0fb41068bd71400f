/*
 * expr.h — the expression language of ck.map / ck.reduce_map (private to the fused layer: expr_ops.c (the op
 * table, types), expr_parse.c (lexer, parser), expr_eval.c (host evaluator), expr_gen.c (CUDA generator), map.c).
 *
 * A program is one or more statements separated by ';':  "s = a + b; d = a - b"  or a bare expression
 * (its output is called "out"). Names assigned are outputs; names beginning with '_' are temporaries.
 * The parser turns the text into a node array in post-order (children before parents), so every pass
 * (typing, host evaluation, CUDA generation) is one loop over the nodes.
 *
 * Types: every node has a dtype (any real dtype: bool u8 i8 i16 i32 u32 i64 f16 bf16 f32 f64) and may be
 * "weak" (numbers and literals: i64 for an integer, f64 otherwise; a weak value takes the type of the array it
 * meets, so `x * 0.5` stays f32; an integer array with a number that is not a value of its dtype gives f64, the
 * ops' rule). Casts (f32() u8() i64() ...) are the only way to change a strong type downwards.
 * Node values: integers in their dtype (wrapped), f16/bf16 as their bits on the host and as a float holding
 * the rounded value in generated code (expr_gen.c).
 */
#ifndef CK_EXPR_H
#define CK_EXPR_H

#include "ck.h"

enum {
  XOP_CONST, XOP_INPUT, XOP_CAST, XOP_SELECT, XOP_AND, XOP_OR, XOP_NOT,
  /* arithmetic and comparisons (int and float) */
  XOP_NEG, XOP_ADD, XOP_SUB, XOP_MUL, XOP_DIV, XOP_MOD, XOP_LT, XOP_LE, XOP_GT, XOP_GE, XOP_EQ, XOP_NE,
  /* functions, int and float */
  XOP_ABS, XOP_FLOOR, XOP_CEIL, XOP_ROUND, XOP_TRUNC, XOP_SIGN, XOP_RELU, XOP_MIN, XOP_MAX, XOP_POW,
  XOP_CLAMP,
  /* functions, float only */
  XOP_EXP, XOP_EXP2, XOP_EXPM1, XOP_LOG, XOP_LOG2, XOP_LOG10, XOP_LOG1P, XOP_SQRT, XOP_RSQRT, XOP_CBRT,
  XOP_SIN, XOP_COS, XOP_TAN, XOP_ASIN, XOP_ACOS, XOP_ATAN, XOP_SINH, XOP_COSH, XOP_TANH, XOP_ERF, XOP_ERFC,
  XOP_SIGMOID, XOP_ATAN2, XOP_HYPOT, XOP_FMA,
  XOP_N
};

typedef struct xnode {
  int op;
  int a, b, c;   /* children (node indices) or -1 */
  int pos;       /* 1-based character position in the text (for errors) */
  int input;     /* XOP_INPUT: index into in_names */
  int cast;      /* XOP_CAST: target dtype */
  double k;      /* XOP_CONST: value */
  int kint;      /* XOP_CONST: written as an integer literal */
} xnode;

/* A statement's assigned name: an output, or a temporary ('_' first); bare: the statement was a bare
 * expression, whose name is "out". pos: where the statement starts (for messages). */
typedef struct xassign {
  char *name;
  int pos, root;
  bool bare;
} xassign;

typedef struct ck_expr {
  char *text;
  char what[32]; /* "ck.map", "reduce_map reduce", ... (for messages) */
  int n, cap;
  xnode *nodes;
  int nin;
  char **in_names; /* free names, in order of first use */
  int *in_pos;     /* position of the first use */
  int nout;
  char **out_names;
  int *out_root;
  int na;
  xassign *asg; /* every assigned name, outputs and temporaries, in statement order */
} ck_expr;

/* A node's type: dt = value dtype; ct = dtype its operands are converted to before the op; weak: a number;
 * fits (weak integers): the integer dtypes (1 << dtype) whose range holds the value, for the ops' rule that a
 * number keeps an integer array's dtype only when it is a value of it (a select or logic of weak operands: the
 * dtypes both hold; arithmetic on them: i64 only, its value being unknown when the kernel is typed). */
typedef struct xtype {
  signed char dt, ct;
  unsigned char weak;
  unsigned short fits;
} xtype;
/* The integer dtypes whose range holds v (bit 1 << dtype), for xtype.fits. */
unsigned short ck_xfits(long long v);

/* Parse `text`. `fixed` (may be NULL) lists the only names allowed (e.g. {"a", "b"} for a reduce); unknown
 * names are errors there. `single`: exactly one output (reduce expressions). */
ck_status ck_expr_parse(ck_ctx *ctx, const char *what, const char *text, const char *const *fixed, int nfixed,
                        bool single, ck_expr **out);
void ck_expr_free(ck_expr *e);
/* One name of the inputs table, used by the expression or not: an identifier of at most XNAME_MAX
 * characters that is not a constant or function of the language, nor a name the expression assigns. */
ck_status ck_expr_check_input(ck_ctx *ctx, const ck_expr *e, const char *name);
#define XNAME_MAX 63

/* Type the nodes given the input types (per in_names). Fails on an operation the types cannot take. */
ck_status ck_expr_type(ck_ctx *ctx, const ck_expr *e, const xtype *in, xtype *ty);
/* The strong dtype a weak result becomes (i32, or i64 for an integer beyond i32; f32), else dt. */
int ck_xtype_final(xtype t);
/* Error text with a caret under `pos`. */
ck_status ck_expr_error_at(ck_ctx *ctx, const ck_expr *e, ck_status st, int pos, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

// ---------------------------------------------------------------- host evaluation (blocks of values)
#define XBLK 256
typedef struct xeval {
  const ck_expr *e;
  const xtype *ty;
  void **val;      /* per node: XBLK values of its dt (inputs: the caller fills in_buf) */
  void **in_buf;   /* per input: XBLK values of its dt (numbers: filled once) */
  char *mem;
} xeval;
ck_status xeval_init(ck_ctx *ctx, xeval *ev, const ck_expr *e, const xtype *ty);
void xeval_run(xeval *ev, int n);
void xeval_free(xeval *ev);
/* dst[i] = (dt_dst) src[i] with the library's conversion rules (COPY's: float -> integer truncates, NaN and out
 * of range give the dtype's minimum; integer -> integer wraps; x -> bool is x != 0). Any two real dtypes. */
void xconvert(void *dst, int dt_dst, const void *src, int dt_src, int n);

// ---------------------------------------------------------------- CUDA generation
typedef struct xsb {
  char *s;
  size_t n, cap;
  int oom;
} xsb;
void xsb_printf(xsb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void xsb_free(xsb *b);
/* Every program's helpers: the expression-only ones (ckx_mod_f, ...) and the op table's rows (ckx_add_f, ...),
 * from the same text as the host's (expr_ops.c). */
void xgen_preamble(xsb *b);
/* A node's value type in generated code: "float" (f32, f16, bf16), "double", "int", "long long", "unsigned
 * char" (u8, bool), ...; xstype: the storage type of arrays ("unsigned short" for f16 and bf16). */
const char *xctype(int dt);
const char *xstype(int dt);
/* Load: a storage value (variable or expression `v`) as a node value (f16 bits -> float, bool -> 0/1). */
void xgen_load(xsb *b, const char *v, int dt);
/* Store: a node value as storage (float -> f16 bits; exact: the value is already rounded). */
void xgen_store(xsb *b, const char *v, int dt);
/* Statements computing every node: `const T v<i> = ...;` with inputs read from variables in<k>. */
void xgen_nodes(xsb *b, const ck_expr *e, const xtype *ty, const char *indent);
/* A C expression converting variable `var` of dtype `from` to `to`. */
void xgen_convert(xsb *b, const char *var, int from, int to);

#endif
