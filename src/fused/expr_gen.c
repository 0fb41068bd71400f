/*
 * expr_gen.c — the CUDA generator of the expression language: a growing string buffer, and the statements
 * computing every node of an expression with the device functions of expr_ops.c's preamble (ckx_*).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_ops.h"

const char *xctype(int dt) { return dt == CK_F32 ? "float" : dt == CK_F64 ? "double" : "int"; }


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
      const xopinfo *o = &ck_xops[x->op];
      xsb_printf(b, "ckx_%s_%s(", o->name, sfx(t.ct));
      arg(b, ty, x->a, t.ct);
      if (ck_xop_arity(x->op) >= 2) xsb_printf(b, ", "), arg(b, ty, x->b, t.ct);
      if (ck_xop_arity(x->op) >= 3) xsb_printf(b, ", "), arg(b, ty, x->c, t.ct);
      xsb_printf(b, ")");
    }
    }
    xsb_printf(b, ";\n");
  }
}
