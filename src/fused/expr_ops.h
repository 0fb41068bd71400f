/*
 * expr_ops.h — private to the expression language's files (expr_ops.c, expr_parse.c, expr_eval.c, expr_gen.c):
 * the op table (what each XOP_* is called, its arity, its dtype rule, its host functions) and the names the
 * language reserves.
 */
#ifndef CK_EXPR_OPS_H
#define CK_EXPR_OPS_H

#include <stdbool.h>

#include "expr.h"

enum { XF_INT = 1, XF_FLOAT = 2, XF_CMP = 4 }; /* XF_INT: has an i32 form; XF_CMP: ct = promoted, dt = ct */
typedef void (*xfn)(void);
typedef struct xopinfo {
  const char *name; /* function name in the language and helper stem; NULL for syntax-only ops */
  int arity, flags;
  xfn f, d, i;
} xopinfo;
extern const xopinfo ck_xops[XOP_N];

/* The op's name in messages: the operator's symbol ("+", "unary -", "?:") or the function's name. */
const char *ck_xop_symbol(int op);
/* The XOP_* a function name calls (aliases and casts included; *cast = the cast's dtype or -1), or -1. */
int ck_xop_lookup(const char *name, int *cast);
/* pi, inf, nan. */
bool ck_xop_is_constant(const char *name);

#endif
