/*
 * op_search.c — searchsorted as the dispatcher sees it (ck_opdef_search, issue 33).
 *
 * What is searchsorted-specific: two inputs of one dtype (no promotion: the keys are the dtype's bits; the
 * message says which :to makes them agree), a 1-D sorted array (ascending in ck.sort's order; not checked:
 * NumPy does not check either), any shape of values, an i64 result of the values' shape holding 1-based
 * insertion positions (NumPy's + 1), and the side (fn: 0 left, 1 right). Inputs are made contiguous
 * (CK_NEED_A | CK_NEED_B; the host oracle, in host_sort.c, copies the same way).
 */
#include <stdio.h>
#include <string.h>

#include "ck_op.h"

static ck_status search_check(ck_ctx *ctx, ck_plan *p) {
  const ck_call *c = p->call;
  char d1[128], d2[128];
  p->name = "searchsorted";
  if (!c->a || !c->b) return ck_error(ctx, CK_ERR_ARG, "searchsorted: needs a sorted array and the values to place");
  if (c->a->ndim != 1)
    return ck_error(ctx, CK_ERR_SHAPE, "searchsorted: the sorted array must be 1-D, got %s", ck_describe(c->a, d1, sizeof d1));
  if (c->a->dtype != c->b->dtype)
    return ck_error(ctx, CK_ERR_DTYPE, "searchsorted: the sorted array and the values must have one dtype (%s, %s); "
                    "convert one with :to(\"%s\")", ck_describe(c->a, d1, sizeof d1), ck_describe(c->b, d2, sizeof d2),
                    ck_dtype_name(c->a->dtype));
  p->nin = 2;
  p->in[0] = c->a;
  p->in[1] = c->b;
  p->in_dt = c->a->dtype;
  p->dt = CK_I64;
  p->has_out = true;
  p->nd = c->b->ndim;
  memcpy(p->shape, c->b->shape, sizeof(int64_t) * (size_t)c->b->ndim);
  return CK_OK;
}

static void search_describe(const ck_plan *p, void *desc) {
  ck_search_desc *d = (ck_search_desc *)desc;
  memset(d, 0, sizeof *d);
  d->dtype = p->in[0]->dtype;
  d->right = p->call->fn != 0;
  d->sorted = ck_data(p->in[0]);
  d->values = ck_data(p->in[1]);
  d->n = ck_numel(p->in[0]);
  d->m = ck_numel(p->in[1]);
  d->out = (int64_t *)ck_data(p->out);
}

static ck_status search_host(ck_ctx *ctx, ck_plan *p) {
  ck_tensor c0 = {0}, c1 = {0}, co = {0};
  ck_plan q = *p;
  ck_status st = CK_OK;
  if (!ck_is_contiguous(q.in[0])) {
    if ((st = ck_contiguous(ctx, &c0, q.in[0]))) goto done;
    q.in[0] = &c0;
  }
  if (!ck_is_contiguous(q.in[1])) {
    if ((st = ck_contiguous(ctx, &c1, q.in[1]))) goto done;
    q.in[1] = &c1;
  }
  if (!ck_is_contiguous(q.out)) {
    if ((st = ck_empty(ctx, &co, CK_I64, q.out->ndim, q.out->shape, ck_dev(q.out)))) goto done;
    q.out = &co;
  }
  ck_search_desc d;
  search_describe(&q, &d);
  if ((st = ck_host_search(ctx, &d))) goto done;
  if (q.out != p->out) st = ck_copy(ctx, p->out, q.out);
done:
  ck_release(&c0);
  ck_release(&c1);
  ck_release(&co);
  return st;
}

static unsigned search_layout(const ck_plan *p, const ck_variant *v) {
  return v ? CK_NEED_OUT : CK_NEED_A | CK_NEED_B;
}

ck_status ck_searchsorted(ck_ctx *ctx, ck_tensor *out, const ck_tensor *sorted, const ck_tensor *values, bool right,
                          const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_SEARCH, .fn = right ? 1 : 0, .a = sorted, .b = values, .out = out,
                        .variant = variant};
  return ck_run(ctx, &call, ran);
}

const ck_opdef ck_opdef_search = {CK_LADDER("searchsorted", ck_search), .host_dtypes = CK_DT_REAL,
                                  .check = search_check, .host = search_host, .layout = search_layout,
                                  .describe = search_describe};
