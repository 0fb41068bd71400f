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

const char *xctype(int dt) {
  switch (dt) {
  case CK_F32:
  case CK_F16:
  case CK_BF16: return "float";
  case CK_F64: return "double";
  case CK_BOOL:
  case CK_U8: return "unsigned char";
  case CK_I8: return "signed char";
  case CK_I16: return "short";
  case CK_U32: return "unsigned int";
  case CK_I64: return "long long";
  default: return "int";
  }
}

const char *xstype(int dt) { return dt == CK_F16 || dt == CK_BF16 ? "unsigned short" : xctype(dt); }

void xgen_load(xsb *b, const char *v, int dt) {
  if (dt == CK_F16) xsb_printf(b, "ckx_h2f(%s)", v);
  else if (dt == CK_BF16) xsb_printf(b, "ckx_b2f(%s)", v);
  else if (dt == CK_BOOL) xsb_printf(b, "(unsigned char)(%s != 0)", v); /* a byte other than 0/1 is true */
  else xsb_printf(b, "%s", v);
}

void xgen_store(xsb *b, const char *v, int dt) {
  if (dt == CK_F16) xsb_printf(b, "ckx_f2h(%s)", v);
  else if (dt == CK_BF16) xsb_printf(b, "ckx_f2b(%s)", v);
  else xsb_printf(b, "%s", v);
}


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

/* The helpers' suffix for a compute dtype: float (f32 and the halves), double, long long (integers, bool). */
static const char *sfx(int dt) {
  return dt == CK_F32 || dt == CK_F16 || dt == CK_BF16 ? "f" : dt == CK_F64 ? "d" : "l";
}

/* A long long value wrapped to an integer dtype (modulo 2^bits, as the host's EW_ST_KINT_*; through the unsigned
 * type, so a narrowing to a signed type never depends on the compiler). */
static void wrap(xsb *b, const char *open, int dt) {
  switch (dt) {
  case CK_I8: xsb_printf(b, "(signed char)(unsigned char)(%s", open); break;
  case CK_I16: xsb_printf(b, "(short)(unsigned short)(%s", open); break;
  case CK_I32: xsb_printf(b, "(int)(unsigned int)(%s", open); break;
  default: xsb_printf(b, "(%s)(%s", xctype(dt), open); break;
  }
}

/* The library's conversions (COPY's, host_elementwise.c), on node values: integer -> integer wraps; float ->
 * integer truncates (NaN and out of range: the dtype's minimum, 0 unsigned); x -> bool is x != 0; to f16/bf16
 * rounds once from double (a half node holds its value as a float). */
void xgen_convert(xsb *b, const char *var, int from, int to) {
  const bool ffrom = ck_dtype_is_float((ck_dtype)from);
  if (from == to) xsb_printf(b, "%s", var);
  else if (to == CK_BOOL) xsb_printf(b, "(unsigned char)(%s != 0)", var);
  else if (to == CK_F16) xsb_printf(b, "ckx_h2f(ckx_d2h((double)%s))", var);
  else if (to == CK_BF16) xsb_printf(b, "ckx_b2f(ckx_d2b((double)%s))", var);
  else if (to == CK_F32 || to == CK_F64) xsb_printf(b, "(%s)%s", xctype(to), var);
  else if (!ffrom) wrap(b, "(long long)", to), xsb_printf(b, "%s)", var);
  else {
    const char *f = to == CK_I32 ? "f2i" : to == CK_I64 ? "f2i64" : to == CK_U8 ? "f2u8" : to == CK_I8 ? "f2i8"
                  : to == CK_I16 ? "f2i16" : "f2u32";
    xsb_printf(b, "(%s)ckx_%s((double)%s)", xctype(to), f, var);
  }
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
      if (t.dt == CK_I64) xsb_printf(b, "%.0fll", x->k); /* a weak integer: integral, |k| < 2^63 */
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
      /* halves: the float result rounded to the dtype (as the table's f16 rows); integers: wrapped */
      if (t.ct == CK_F16) xsb_printf(b, "ckx_rh(");
      else if (t.ct == CK_BF16) xsb_printf(b, "ckx_rb(");
      else if (!ck_dtype_is_float((ck_dtype)t.ct)) wrap(b, "", t.ct);
      xsb_printf(b, "ckx_%s_%s(", o->name, sfx(t.ct));
      arg(b, ty, x->a, t.ct);
      if (ck_xop_arity(x->op) >= 2) xsb_printf(b, ", "), arg(b, ty, x->b, t.ct);
      if (ck_xop_arity(x->op) >= 3) xsb_printf(b, ", "), arg(b, ty, x->c, t.ct);
      xsb_printf(b, ")");
      if (t.ct != CK_F32 && t.ct != CK_F64) xsb_printf(b, ")");
    }
    }
    xsb_printf(b, ";\n");
  }
}
