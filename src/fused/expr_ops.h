/*
 * expr_ops.h — private to the expression language's files (expr_ops.c, expr_parse.c, expr_eval.c, expr_gen.c):
 * the op table (what each XOP_* is called, which elementwise op of ew_ops.def it is, or its own host functions;
 * its arity and dtype rule) and the names the language reserves.
 */
#ifndef CK_EXPR_OPS_H
#define CK_EXPR_OPS_H

#include <stdbool.h>

#include "expr.h"

enum { XF_INT = 1, XF_FLOAT = 2 }; /* XF_INT: has an integer form (long long, every integer dtype) */
typedef void (*xfn)(void);
typedef struct xopinfo {
  const char *name; /* function name in the language and helper stem; NULL for syntax-only ops */
  int row;          /* the op table's row (CK_EW_*) it is, or -1: expression-only or syntax */
  int arity, flags; /* expression-only and syntax ops (a row's come from the table: ck_xop_arity, ck_xop_int) */
  xfn f, d, i;      /* expression-only ops: the host functions */
} xopinfo;
extern const xopinfo ck_xops[XOP_N];
int ck_xop_arity(int op);
bool ck_xop_int(int op); /* has an integer form (else floats only) */
/* A dtype expressions take (every real dtype; not complex, not fp8). */
bool ck_xdtype_ok(int dt);

/* The op's name in messages: the operator's symbol ("+", "unary -", "?:") or the function's name. */
const char *ck_xop_symbol(int op);
/* The XOP_* a function name calls (aliases and casts included; *cast = the cast's dtype or -1), or -1. */
int ck_xop_lookup(const char *name, int *cast);
/* pi, inf, nan. */
bool ck_xop_is_constant(const char *name);

#endif
