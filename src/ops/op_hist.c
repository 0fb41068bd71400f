/*
 * op_hist.c — the histogram as the dispatcher sees it (ck_opdef_hist, issue 33): histc(x, bins, lo, hi).
 *
 * What is histogram-specific: the result is i64 [bins] whatever x's shape and dtype (NumPy's counts; torch.histc
 * gives floats), bins >= 1, lo < hi and both finite (the range is the caller's: ck.histogram in Lua takes the
 * data's min and max when none is given), and x is flattened (a view is copied first, CK_NEED_A; the host
 * oracle makes the same contiguous copy). The bin rule is kernels/hist/hist_bin.h, shared by host and device.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ck_op.h"

static ck_status hist_check(ck_ctx *ctx, ck_plan *p) {
  const ck_call *c = p->call;
  char d[128];
  p->name = "histc";
  if (!c->a) return ck_error(ctx, CK_ERR_ARG, "histc: needs an array to count");
  p->nin = 1;
  p->in[0] = c->a;
  p->in_dt = c->a->dtype;
  p->dt = CK_I64;
  p->has_out = true;
  if (c->k < 1) return ck_error(ctx, CK_ERR_ARG, "histc: bins = %lld must be >= 1", (long long)c->k);
  if (!(isfinite(c->s1) && isfinite(c->s2) && c->s1 < c->s2))
    return ck_error(ctx, CK_ERR_ARG, "histc: the range [%g, %g] must be finite with lo < hi [%s]", c->s1, c->s2,
                    ck_describe(c->a, d, sizeof d));
  p->nd = 1;
  p->shape[0] = c->k;
  p->dim = -1;
  return CK_OK;
}

/* out is [bins] i64 and p->dt is checked against the table's masks: i64 is in every rung's mask (CK_DT_REAL). */
static void hist_describe(const ck_plan *p, void *desc) {
  ck_hist_desc *d = (ck_hist_desc *)desc;
  memset(d, 0, sizeof *d);
  d->dtype = p->in[0]->dtype;
  d->x = ck_data(p->in[0]);
  d->n = ck_numel(p->in[0]);
  d->bins = p->call->k;
  d->lo = p->call->s1;
  d->hi = p->call->s2;
  d->out = (int64_t *)ck_data(p->out);
}

static ck_status hist_host(ck_ctx *ctx, ck_plan *p) {
  ck_tensor cx = {0}, co = {0};
  ck_plan q = *p;
  ck_status st = CK_OK;
  if (!ck_is_contiguous(q.in[0])) {
    if ((st = ck_contiguous(ctx, &cx, q.in[0]))) goto done;
    q.in[0] = &cx;
  }
  if (!ck_is_contiguous(q.out)) {
    if ((st = ck_empty(ctx, &co, CK_I64, 1, q.out->shape, ck_dev(q.out)))) goto done;
    q.out = &co;
  }
  ck_hist_desc d;
  hist_describe(&q, &d);
  if ((st = ck_host_hist(ctx, &d))) goto done;
  if (q.out != p->out) st = ck_copy(ctx, p->out, q.out);
done:
  ck_release(&cx);
  ck_release(&co);
  return st;
}

static unsigned hist_layout(const ck_plan *p, const ck_variant *v) { return v ? CK_NEED_OUT : CK_NEED_A; }

static ck_status hist_trivial(ck_ctx *ctx, ck_plan *p, bool *done, char *note, size_t n) {
  if (ck_numel(p->in[0]) != 0) return CK_OK;
  *done = true;
  snprintf(note, n, "empty input: every count is 0");
  return ck_ew_generate(ctx, CK_EW_FILL, p->out, 0, 0);
}

ck_status ck_histc(ck_ctx *ctx, ck_tensor *out, const ck_tensor *x, int64_t bins, double lo, double hi,
                   const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_HIST, .a = x, .out = out, .k = bins, .s1 = lo, .s2 = hi, .variant = variant};
  return ck_run(ctx, &call, ran);
}

const ck_opdef ck_opdef_hist = {CK_LADDER("histogram", ck_hist), .host_dtypes = CK_DT_REAL, .check = hist_check,
                                .trivial = hist_trivial, .host = hist_host, .layout = hist_layout,
                                .describe = hist_describe};
