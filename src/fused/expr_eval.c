/*
 * expr_eval.c — the host evaluator of the expression language (the oracle, and the backend without a GPU):
 * every node computed over blocks of XBLK values: the op table's operators and functions by the host backend's
 * row functions (ck_host_ew_run, compiled from ew_ops.def, for every real dtype), the expression-only ones by
 * expr_ops.c's (float, double, long long). Values are stored in their node's dtype (f16/bf16 as bits), so each
 * node is rounded or wrapped to its dtype as the built-in ops store their results.
 */
#include <stdlib.h>
#include <string.h>

#include "ew_ops.h"
#include "expr_ops.h"
#include "half.h"


void xconvert(void *dst, int dd, const void *src, int ds, int n) {
  if (dd == ds) memmove(dst, src, (size_t)n * ck_dtype_size((ck_dtype)dd));
  else ck_host_ew_cast((ck_dtype)dd, dst, (ck_dtype)ds, src, n);
}

/* Scratch slots after the nodes' values: 0..2 the operands in the op's dtype, 3..5 widened (expression-only ops
 * on halves compute in float, on integers in long long). */
#define XSCRATCH 6

ck_status xeval_init(ck_ctx *ctx, xeval *ev, const ck_expr *e, const xtype *ty) {
  memset(ev, 0, sizeof *ev);
  ev->e = e, ev->ty = ty;
  /* node values + scratch + inputs, XBLK values of 8 bytes (the widest dtype) each */
  size_t slots = (size_t)e->n + XSCRATCH + (size_t)e->nin;
  ev->mem = aligned_alloc(64, (slots * XBLK * sizeof(double) + slots * 2 * sizeof(void *) + 127) / 64 * 64);
  if (!ev->mem) return ck_error(ctx, CK_ERR_OOM, "%s: out of host memory", e->what);
  char *p = ev->mem + slots * XBLK * sizeof(double);
  ev->val = (void **)p;
  ev->in_buf = ev->val + e->n + XSCRATCH;
  for (size_t i = 0; i < (size_t)e->n + XSCRATCH; ++i) ev->val[i] = ev->mem + i * XBLK * sizeof(double);
  for (int k = 0; k < e->nin; ++k)
    ev->in_buf[k] = ev->mem + ((size_t)e->n + XSCRATCH + (size_t)k) * XBLK * sizeof(double);
  for (int i = 0; i < e->n; ++i) {
    const xnode *x = &e->nodes[i];
    if (x->op == XOP_INPUT) ev->val[i] = ev->in_buf[x->input];
    if (x->op == XOP_CONST) { /* filled once: constants never change (weak: i64 or f64) */
      if (ty[i].dt == CK_I64) {
        long long *o = ev->val[i];
        for (int j = 0; j < XBLK; ++j) o[j] = (long long)x->k;
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

/* 1 where v is nonzero (NaN counts as true, as in C): the cast to bool. */
static void truth(uint8_t *o, const void *v, int dt, int n) { xconvert(o, CK_BOOL, v, dt, n); }

static void from_truth(void *o, int dt, const uint8_t *t, int n) { xconvert(o, dt, t, CK_BOOL, n); }

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

void xeval_run(xeval *ev, int n) {
  const ck_expr *e = ev->e;
  uint8_t tA[XBLK], tB[XBLK];
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
      const xopinfo *oi = &ck_xops[x->op];
      const int arity = ck_xop_arity(x->op);
      const void *a0 = operand(ev, x->a, t.ct, 0, n);
      const void *a1 = arity >= 2 ? operand(ev, x->b, t.ct, 1, n) : NULL;
      const void *a2 = arity >= 3 ? operand(ev, x->c, t.ct, 2, n) : NULL;
      if (oi->row >= 0) { /* the op table's: the host backend's row function */
        ck_host_ew_run(oi->row, (ck_dtype)t.ct, out, a0, a1, n);
        break;
      }
      if (t.ct == CK_F32) {
        APPLY(float, oi->f, arity);
        break;
      }
      if (t.ct == CK_F64) {
        APPLY(double, oi->d, arity);
        break;
      }
      /* halves compute in float and round once (as the table's f16 rows); integers in long long, wrapped */
      const bool half = t.ct == CK_F16 || t.ct == CK_BF16;
      const int W = half ? CK_F32 : CK_I64;
      void *w[3] = {ev->val[e->n + 3], ev->val[e->n + 4], ev->val[e->n + 5]};
      const void *src[3] = {a0, a1, a2};
      for (int k = 0; k < arity; ++k) xconvert(w[k], W, src[k], t.ct, n);
      a0 = w[0], a1 = w[1], a2 = w[2];
      out = w[0];
      if (half) APPLY(float, oi->f, arity);
      else APPLY(long long, oi->i, arity);
      if (t.ct == CK_F16)
        for (int j = 0; j < n; ++j) ((uint16_t *)ev->val[i])[j] = ck_f32_to_f16(((const float *)w[0])[j]);
      else if (t.ct == CK_BF16)
        for (int j = 0; j < n; ++j) ((uint16_t *)ev->val[i])[j] = ck_f32_to_bf16(((const float *)w[0])[j]);
      else xconvert(ev->val[i], t.ct, w[0], CK_I64, n);
    }
    }
  }
}
