/*
 * op_scan.c — scans as the dispatcher sees them (ck_opdef_scan): cumsum, cumprod, cummax, cummin along a dim,
 * inclusive or exclusive (issue 33).
 *
 * What is scan-specific: the op names (this file's table), the result dtype (sums and products of integers and
 * bool are i64, NumPy's rule; floats and every cummax/cummin keep the dtype), the dim (0-based; a 0-d array is
 * scanned as its one element) and the layout: on CUDA the work is [outer, len, inner] over a contiguous input
 * (ck_scan_desc; a strided view is copied first, CK_NEED_A) into a contiguous output (CK_NEED_OUT: a temporary
 * otherwise). The host oracle (src/host/host_scan.c) takes the same descriptor over host memory, so the host
 * hook below makes the same contiguous operands. Empty arrays launch nothing (the dispatcher's empty result).
 */
#include <stdio.h>
#include <string.h>

#include "ck_op.h"

// ---------------------------------------------------------------- names

static const char *const SCAN_NAMES[CK_SCAN_NOPS] = {"cumsum", "cumprod", "cummax", "cummin"};

int ck_scan_op_parse(const char *name) {
  for (int i = 0; i < CK_SCAN_NOPS; ++i)
    if (name && strcmp(name, SCAN_NAMES[i]) == 0) return i;
  return -1;
}

const char *ck_scan_op_name(int op) { return op >= 0 && op < CK_SCAN_NOPS ? SCAN_NAMES[op] : NULL; }

// ---------------------------------------------------------------- the op definition

/* [outer, len, inner] of a contiguous array of x's shape scanned along dim (-1: a 0-d array). */
static void split_dims(const ck_tensor *x, int dim, int64_t *outer, int64_t *len, int64_t *inner) {
  *outer = *inner = *len = 1;
  for (int i = 0; i < x->ndim; ++i) {
    if (i < dim) *outer *= x->shape[i];
    else if (i == dim) *len = x->shape[i];
    else *inner *= x->shape[i];
  }
}

static ck_status scan_check(ck_ctx *ctx, ck_plan *p) {
  const ck_call *c = p->call;
  const ck_tensor *x = c->a;
  char d[128];
  if (!(p->name = ck_scan_op_name(c->fn)))
    return ck_error(ctx, CK_ERR_ARG, "scan: unknown op %d (cumsum, cumprod, cummax, cummin)", c->fn);
  if (!x) return ck_error(ctx, CK_ERR_ARG, "%s: needs an array to scan", p->name);
  p->nin = 1;
  p->in[0] = x;
  p->in_dt = x->dtype;
  const bool acc_i64 = (c->fn == CK_SCAN_SUM || c->fn == CK_SCAN_PROD) && !ck_dtype_is_float(x->dtype);
  p->dt = acc_i64 ? CK_I64 : x->dtype;
  int dim = c->dim;
  if (x->ndim == 0 && (dim == 0 || dim == -1)) dim = -1; /* one element */
  else if (dim < 0 || dim >= x->ndim)
    return ck_error(ctx, CK_ERR_ARG, "%s: dim %d is out of range for %s (dims 1..%d)", p->name, dim + 1,
                    ck_describe(x, d, sizeof d), x->ndim);
  p->dim = dim;
  p->has_out = true;
  p->len = dim < 0 ? 1 : x->shape[dim];
  p->nd = x->ndim;
  memcpy(p->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  return CK_OK;
}

static void scan_describe(const ck_plan *p, void *desc) {
  ck_scan_desc *d = (ck_scan_desc *)desc;
  memset(d, 0, sizeof *d);
  d->dtype = p->in[0]->dtype;
  d->out_dtype = p->dt;
  d->op = p->call->fn;
  d->exclusive = p->call->exclusive;
  split_dims(p->in[0], p->dim, &d->outer, &d->len, &d->inner);
  d->x = ck_data(p->in[0]);
  d->out = ck_data(p->out);
}

/* The oracle takes the descriptor too, on contiguous host operands (ck_host_contiguous). */
static ck_status scan_oracle(ck_ctx *ctx, const ck_plan *q) {
  ck_scan_desc d;
  scan_describe(q, &d);
  return ck_host_scan(ctx, &d);
}
static ck_status scan_host(ck_ctx *ctx, ck_plan *p) { return ck_host_contiguous(ctx, p, scan_oracle); }

static unsigned scan_layout(const ck_plan *p, const ck_variant *v) {
  return v ? CK_NEED_OUT : CK_NEED_A; /* kernels read and write contiguous [outer, len, inner] */
}

/* One scan over everything (outer == inner == 1) has its own order: CUB and the single-pass rungs. Large arrays
 * along a leading dim have theirs, cols_lookback first: it reads each element once whatever the number of
 * columns, where cols reads twice (three passes) with fewer than 2^18 columns (outer x inner), and with more
 * keeps one scalar load per thread in flight where cols_lookback keeps 8 rows of 16-byte vectors. Its tiles are
 * 64 rows x 128 columns of 4-byte values, so it wants inner >= 128 (at most half a strip idle) and len >= 64 (short
 * columns leave most of a tile idle, and cols scans them in one pass anyway), and its status block and memset
 * cost a launch's worth, so it waits for 2^20 elements. Smaller, narrower or shorter cases keep cols. */
#define SCAN_COLS_LB_INNER 128
#define SCAN_COLS_LB_LEN 64
#define SCAN_COLS_LB_NUMEL ((int64_t)1 << 20)
static const int *scan_preferred_for(const void *desc) {
  const ck_scan_desc *d = (const ck_scan_desc *)desc;
  if (d->outer == 1 && d->inner == 1) return ck_scan_preferred_full;
  if (d->inner >= SCAN_COLS_LB_INNER && d->len >= SCAN_COLS_LB_LEN &&
      d->outer * d->len * d->inner >= SCAN_COLS_LB_NUMEL)
    return ck_scan_preferred_cols;
  return ck_scan_preferred;
}

static void scan_what(const ck_plan *p, const ck_variant *v, char *buf, size_t n) {
  char d[128];
  snprintf(buf, n, "%s%s (%s) %s dim %d", p->name, p->call->exclusive ? " (exclusive)" : "", v->name,
           ck_describe(p->call->a, d, sizeof d), p->dim + 1);
}

ck_status ck_scan(ck_ctx *ctx, int op, ck_tensor *out, const ck_tensor *x, int dim, bool exclusive,
                  const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_SCAN, .fn = op, .a = x, .out = out, .dim = dim, .exclusive = exclusive,
                        .variant = variant};
  return ck_run(ctx, &call, ran);
}

const ck_opdef ck_opdef_scan = {CK_LADDER("scan", ck_scan), .host_dtypes = CK_DT_COMPUTE, .check = scan_check,
                                .host = scan_host, .layout = scan_layout, .describe = scan_describe,
                                .preferred_for = scan_preferred_for, .what = scan_what};
