/*
 * op_sort.c — sorting as the dispatcher sees it (ck_opdef_sort): sort, argsort and topk along a dim (issue 33).
 *
 * What is sort-specific: the outputs (values in out when the caller gives one — sort, topk — and the indices,
 * 1-based i64 positions along the dim, in idx when the caller gives one: the plan's idx_dt; a sort without
 * indices, {indices = false}, gives out only), k (topk keeps the first k of each
 * descending line; k larger than the dim is an error; k == 0 is an empty result), the dim (0-based; a 0-d
 * array sorts as its one element) and the layout: on CUDA x is a contiguous [outer, len, inner] (a view is
 * copied first, CK_NEED_A) and the outputs are contiguous [outer, k, inner] (temporaries otherwise); the rungs
 * read and write lines `inner` apart themselves, so no dim is ever transposed. The host oracle
 * (src/host/host_sort.c) takes the same descriptor over host memory.
 */
#include <stdio.h>
#include <string.h>

#include "ck_op.h"

// ---------------------------------------------------------------- the op definition

static ck_status sort_check(ck_ctx *ctx, ck_plan *p) {
  const ck_call *c = p->call;
  const ck_tensor *x = c->a;
  char d[128];
  p->name = c->k > 0 ? "topk" : c->out ? "sort" : "argsort";
  if (!x) return ck_error(ctx, CK_ERR_ARG, "%s: needs an array to sort", p->name);
  p->nin = 1;
  p->in[0] = x;
  p->in_dt = p->dt = x->dtype;
  p->idx_dt = CK_I64;
  int dim = c->dim;
  if (x->ndim == 0 && (dim == 0 || dim == -1)) dim = -1;
  else if (dim < 0 || dim >= x->ndim)
    return ck_error(ctx, CK_ERR_ARG, "%s: dim %d is out of range for %s (dims 1..%d)", p->name, dim + 1,
                    ck_describe(x, d, sizeof d), x->ndim);
  p->dim = dim;
  p->len = dim < 0 ? 1 : x->shape[dim];
  if (c->k < 0) return ck_error(ctx, CK_ERR_ARG, "%s: k = %lld is negative", p->name, (long long)c->k);
  if (c->k > p->len)
    return ck_error(ctx, CK_ERR_SHAPE, "%s: k = %lld is larger than the %lld elements along dim %d of %s", p->name,
                    (long long)c->k, (long long)p->len, dim + 1, ck_describe(x, d, sizeof d));
  if (!c->out && !c->idx) return ck_error(ctx, CK_ERR_ARG, "%s: needs an output for the values or the indices", p->name);
  p->has_out = c->out != NULL;
  p->has_idx = c->idx != NULL;
  p->nd = x->ndim;
  memcpy(p->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  if (c->k > 0 && dim >= 0) p->shape[dim] = c->k;
  return CK_OK;
}

static void sort_describe(const ck_plan *p, void *desc) {
  ck_sort_desc *d = (ck_sort_desc *)desc;
  const ck_tensor *x = p->in[0];
  memset(d, 0, sizeof *d);
  d->dtype = x->dtype;
  d->descending = p->call->descending || p->call->k > 0; /* topk: the largest first */
  d->outer = d->inner = 1;
  d->len = p->len;
  for (int i = 0; i < x->ndim; ++i) {
    if (i < p->dim) d->outer *= x->shape[i];
    else if (i > p->dim) d->inner *= x->shape[i];
  }
  d->k = p->call->k > 0 ? p->call->k : p->len;
  d->x = ck_data(x);
  d->out = p->out ? ck_data(p->out) : NULL;
  d->idx = p->idx ? (int64_t *)ck_data(p->idx) : NULL;
}

/* The oracle takes the descriptor too, on contiguous host operands (ck_host_contiguous). */
static ck_status sort_oracle(ck_ctx *ctx, const ck_plan *q) {
  ck_sort_desc d;
  sort_describe(q, &d);
  return ck_host_sort(ctx, &d);
}
static ck_status sort_host(ck_ctx *ctx, ck_plan *p) { return ck_host_contiguous(ctx, p, sort_oracle); }

static unsigned sort_layout(const ck_plan *p, const ck_variant *v) {
  return v ? CK_NEED_OUT | CK_NEED_IDX : CK_NEED_A;
}

/* A sort of integers without indices: CUB's values-only sort first. topk keeping at most half of each line: radix select first (a few reads of the line and a sort of k items,
 * against a sort of all of it; kernels/sort/05_radix_select.cu); sorts and larger k: the default order. Except
 * contiguous lines of 256..1024, where rows_block's whole sort in one kernel was faster still (H100, same run:
 * 65536 x 1024, k = 10: 1.04 ms against radix select's 1.30; k = 256: 1.06 against 2.03; but 16384 x 4096,
 * k = 10: 1.07 against 0.91), so they take the default order, rows_block first. */
static const int *sort_preferred_for(const void *desc) {
  const ck_sort_desc *d = (const ck_sort_desc *)desc;
  /* integers sorted without indices along one line or lines longer than rows_block takes: CUB sorts the values
   * themselves (00_cub.cu), where every other rung still sorts (key, position) pairs and gathers */
  if (!d->idx && d->out && d->inner == 1 && d->k == d->len && (d->outer == 1 || d->len > 4096) &&
      !ck_dtype_is_float((ck_dtype)d->dtype))
    return ck_sort_preferred_values;
  const bool rows_block_wins = d->inner == 1 && d->len >= 256 && d->len <= 1024;
  return d->k <= d->len / 2 && !rows_block_wins ? ck_sort_preferred_topk : ck_sort_preferred;
}

static void sort_what(const ck_plan *p, const ck_variant *v, char *buf, size_t n) {
  char d[128];
  snprintf(buf, n, "%s%s (%s) %s dim %d", p->name, p->call->descending ? " (descending)" : "", v->name,
           ck_describe(p->call->a, d, sizeof d), p->dim + 1);
}

ck_status ck_sort(ck_ctx *ctx, ck_tensor *out, ck_tensor *idx, const ck_tensor *x, int dim, bool descending,
                  int64_t k, const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_SORT, .a = x, .out = out, .idx = idx, .dim = dim, .descending = descending,
                        .k = k, .variant = variant};
  return ck_run(ctx, &call, ran);
}

const ck_opdef ck_opdef_sort = {CK_LADDER("sort", ck_sort), .host_dtypes = CK_DT_COMPUTE, .check = sort_check,
                                .host = sort_host, .layout = sort_layout, .describe = sort_describe,
                                .preferred_for = sort_preferred_for, .what = sort_what};
