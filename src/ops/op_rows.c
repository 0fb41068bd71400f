/*
 * op_rows.c — the row ops as the dispatcher sees them (ck_opdef_rows, issue 37): softmax, log_softmax,
 * layer_norm and rms_norm along one dim.
 *
 * What is row-specific: the names (this file's table), the dim (0-based; a 0-d array is one row of one), the
 * norms' weight and bias (the call's b and c: vectors as long as the dim, converted to x's dtype by the
 * dispatcher like any input) and the layout: the work is [outer, len, inner] over a contiguous x (a strided
 * view is copied first, CK_NEED_A) into a contiguous out (a temporary otherwise). A non-last dim needs no
 * transpose: the ladder's thread-per-line rungs read it coalesced (kernels/rows/02_online.cu says why).
 * The host oracle (src/host/host_rows.c) takes the same descriptor over contiguous host copies
 * (ck_host_contiguous, dispatch.c: the oracles of scan, sort, histc, fft and attention use it too).
 */
#include <stdio.h>
#include <string.h>

#include "ck_op.h"

// ---------------------------------------------------------------- names

static const char *const ROWS_NAMES[CK_ROWS_NFNS] = {"softmax", "log_softmax", "layer_norm", "rms_norm"};

int ck_rows_fn_parse(const char *name) {
  for (int i = 0; i < CK_ROWS_NFNS; ++i)
    if (name && strcmp(name, ROWS_NAMES[i]) == 0) return i;
  return -1;
}

const char *ck_rows_fn_name(int fn) { return fn >= 0 && fn < CK_ROWS_NFNS ? ROWS_NAMES[fn] : NULL; }

// ---------------------------------------------------------------- the op definition

static ck_status check_vec(ck_ctx *ctx, const ck_plan *p, const ck_tensor *t, const char *what) {
  char d[128], dx[128];
  if (t->ndim == 1 && t->shape[0] == p->len) return CK_OK;
  return ck_error(ctx, CK_ERR_SHAPE, "%s: %s must be a vector of %lld elements (the length of dim %d of %s), got %s",
                  p->name, what, (long long)p->len, p->dim + 1, ck_describe(p->call->a, dx, sizeof dx),
                  ck_describe(t, d, sizeof d));
}

static ck_status rows_check(ck_ctx *ctx, ck_plan *p) {
  const ck_call *c = p->call;
  const ck_tensor *x = c->a;
  char d[128];
  if (!(p->name = ck_rows_fn_name(c->fn)))
    return ck_error(ctx, CK_ERR_ARG, "rows: unknown op %d (softmax, log_softmax, layer_norm, rms_norm)", c->fn);
  if (!x) return ck_error(ctx, CK_ERR_ARG, "%s: needs an array", p->name);
  int dim = c->dim;
  if (x->ndim == 0 && (dim == 0 || dim == -1)) dim = -1; /* one element */
  else if (dim < 0 || dim >= x->ndim)
    return ck_error(ctx, CK_ERR_ARG, "%s: dim %d is out of range for %s (dims 1..%d)", p->name, dim + 1,
                    ck_describe(x, d, sizeof d), x->ndim);
  p->dim = dim;
  p->len = dim < 0 ? 1 : x->shape[dim];
  const bool norm = c->fn == CK_ROWS_LAYER_NORM || c->fn == CK_ROWS_RMS_NORM;
  if (!norm && (c->b || c->c)) return ck_error(ctx, CK_ERR_ARG, "%s: takes no weight or bias", p->name);
  if (c->fn == CK_ROWS_RMS_NORM && c->c) return ck_error(ctx, CK_ERR_ARG, "%s: takes no bias", p->name);
  if (norm && !(c->s1 >= 0)) return ck_error(ctx, CK_ERR_ARG, "%s: eps must be a number >= 0, got %g", p->name, c->s1);
  ck_status st;
  if (c->b && (st = check_vec(ctx, p, c->b, "the weight"))) return st;
  if (c->c && (st = check_vec(ctx, p, c->c, "the bias"))) return st;
  p->nin = 0;
  p->in[p->nin++] = x;
  if (c->b) p->in[p->nin++] = c->b;
  if (c->c) p->in[p->nin++] = c->c;
  p->in_dt = p->dt = x->dtype;
  p->has_out = true;
  p->nd = x->ndim;
  memcpy(p->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  return CK_OK;
}

static void rows_describe(const ck_plan *p, void *desc) {
  ck_rows_desc *d = (ck_rows_desc *)desc;
  const ck_tensor *x = p->in[0];
  memset(d, 0, sizeof *d);
  d->fn = p->call->fn;
  d->dtype = x->dtype;
  d->outer = d->inner = 1;
  d->len = p->len;
  for (int i = 0; i < x->ndim; ++i)
    if (i < p->dim) d->outer *= x->shape[i];
    else if (i > p->dim) d->inner *= x->shape[i];
  d->x = ck_data(x);
  d->out = ck_data(p->out);
  int k = 1;
  if (p->call->b) d->w = ck_data(p->in[k++]);
  if (p->call->c) d->b = ck_data(p->in[k++]);
  d->eps = p->call->s1;
}

static ck_status rows_host_run(ck_ctx *ctx, const ck_plan *q) {
  ck_rows_desc d;
  rows_describe(q, &d);
  return ck_host_rows(ctx, &d);
}

static ck_status rows_host(ck_ctx *ctx, ck_plan *p) { return ck_host_contiguous(ctx, p, rows_host_run); }

static unsigned rows_layout(const ck_plan *p, const ck_variant *v) {
  return v ? CK_NEED_OUT : CK_NEED_A | CK_NEED_B | CK_NEED_C; /* kernels read [outer, len, inner] and [len] densely */
}

static void rows_what(const ck_plan *p, const ck_variant *v, char *buf, size_t n) {
  char d[128];
  snprintf(buf, n, "%s (%s) %s dim %d", p->name, v->name, ck_describe(p->call->a, d, sizeof d), p->dim + 1);
}

ck_status ck_rows(ck_ctx *ctx, int fn, ck_tensor *out, const ck_tensor *x, int dim, const ck_tensor *w,
                  const ck_tensor *b, double eps, const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_ROWS, .fn = fn, .a = x, .b = w, .c = b, .out = out, .dim = dim, .s1 = eps,
                        .variant = variant};
  return ck_run(ctx, &call, ran);
}

const ck_opdef ck_opdef_rows = {CK_LADDER("rows", ck_rows), .host_dtypes = CK_DT_FLOATS | CK_DT_HALVES,
                                .check = rows_check, .host = rows_host, .layout = rows_layout,
                                .describe = rows_describe, .what = rows_what};
