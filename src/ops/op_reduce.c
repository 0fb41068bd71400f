/*
 * op_reduce.c — reductions as the dispatcher sees them (ck_opdef_reduce): sum, prod, max, min, mean, argmax,
 * argmin along a dim or over every element.
 *
 * What is reduction-specific: the dim (0-based here, printed 1-based; a 0-d array reduced along "dim 1" is
 * reduced whole), which outputs the op writes (values; indices for argmax/argmin, and for max/min when the
 * caller gives idx), mean needs a float, NumPy's empty reductions (sum -> 0, prod -> 1, mean -> NaN; max,
 * min, argmax, argmin over nothing is an error), i32 indices stop at 2^31-1, and a given out/idx may have
 * the result shape with or without the reduced dims kept as 1 (both list the outputs in the same order).
 * On CUDA the work is [outer, len, inner] over contiguous memory (ck_red_desc):
 *   - x contiguous: used as is;
 *   - x a dense permutation of a contiguous layout (a transposed matrix, a permuted 3-D array): reduced in
 *     its physical layout, without a copy, when the kept dims come out in the output's logical order (the
 *     column sums of a:t() are the row sums of a); for a whole-array sum/prod/max/min/mean any dense layout
 *     will do, since the order of the elements does not matter there;
 *   - anything else (slices with gaps, expanded views, awkward permutations): a contiguous copy first
 *     (layout need CK_NEED_A before the variant is picked);
 * and the kernels write contiguous out/idx (CK_NEED_OUT/IDX: temporaries otherwise). Whole-array reductions
 * prefer CUB (ck_reduce_preferred_full) except small ones (up to 16 KiB: one launch of ours, no CUB call and
 * no workspace; ck_reduce_preferred_tiny/_small), the rest our kernels.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ck_op.h"
#include "reduce_ops.h"

// ---------------------------------------------------------------- names

static bool is_arg(int op) { return ck_reduce_op_indexed(op); }

// ---------------------------------------------------------------- layout

/* Maps reducing x along dim (-1: all) to [outer, len, inner] over x's own memory, starting at ck_data(x),
 * if x is a dense permutation of a contiguous layout and the kept dims, in memory order, are in logical
 * order (so out, contiguous, receives them in the right order). `any_order`: the element order within the
 * reduction does not matter (a whole-array reduction without indices). False if a copy is needed. */
static bool physical_layout(const ck_tensor *x, int dim, bool any_order, int64_t *outer, int64_t *len,
                            int64_t *inner) {
  int p[CK_MAX_DIMS], n = 0;
  for (int i = 0; i < x->ndim; ++i)
    if (x->shape[i] > 1) {
      if (x->stride[i] <= 0) return false;
      p[n++] = i;
    }
  /* memory order: strides descending (insertion sort; n <= 8) */
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && x->stride[p[j]] > x->stride[p[j - 1]]; --j) {
      int t = p[j];
      p[j] = p[j - 1];
      p[j - 1] = t;
    }
  int64_t expect = 1;
  for (int i = n - 1; i >= 0; --i) {
    if (x->stride[p[i]] != expect) return false; /* gaps or overlaps: not dense */
    expect *= x->shape[p[i]];
  }
  if (dim < 0) {
    if (!any_order) {
      for (int i = 1; i < n; ++i)
        if (p[i] < p[i - 1]) return false;
    }
    *outer = 1;
    *len = expect;
    *inner = 1;
    return true;
  }
  int last = -1;
  *outer = 1;
  *inner = 1;
  bool after = false;
  for (int i = 0; i < n; ++i) {
    if (p[i] == dim) {
      after = true;
      continue;
    }
    if (p[i] < last) return false; /* kept dims out of logical order */
    last = p[i];
    if (after) *inner *= x->shape[p[i]];
    else *outer *= x->shape[p[i]];
  }
  *len = x->shape[dim];
  if (!after) { /* dim has extent 1 (not in p): put it innermost */
    *outer *= *inner;
    *inner = 1;
  }
  return true;
}

// ---------------------------------------------------------------- the op definition

static int result_shape(const ck_tensor *x, int dim, bool keepdim, int64_t *shape) {
  int nd = 0;
  for (int i = 0; i < x->ndim; ++i) {
    if (dim < 0 || i == dim) {
      if (keepdim) shape[nd++] = 1;
    } else {
      shape[nd++] = x->shape[i];
    }
  }
  return nd;
}

static ck_status red_check(ck_ctx *ctx, ck_plan *p) {
  const ck_call *c = p->call;
  const ck_tensor *x = c->a;
  char d[128], sh[96];
  if (!(p->name = ck_reduce_op_name(c->fn)))
    return ck_error(ctx, CK_ERR_ARG, "reduce: unknown op %d (%s)", c->fn, ck_reduce_op_list(sh, sizeof sh));
  if (!x) return ck_error(ctx, CK_ERR_ARG, "%s: needs an array to reduce", p->name);
  p->nin = 1;
  p->in[0] = x;
  p->in_dt = p->dt = x->dtype;
  if (!ck_dtype_is_float(x->dtype)) {
    /* NumPy's rules: the mean of integers (or bools) is f64; integer and bool sums and products accumulate in
     * and return i64 (a sum of bools counts) */
    if (ck_reduce_op_float_only(c->fn)) p->in_dt = p->dt = CK_F64;
    else if (ck_reduce_op_family(c->fn) == CK_REDF_ARITH) p->dt = CK_I64;
  }
  int dim = c->dim;
  if (x->ndim == 0 && dim == 0) dim = -1; /* a 0-d array has one element: reducing "dim 1" is reducing it all */
  if (dim < -1 || dim >= x->ndim)
    return ck_error(ctx, CK_ERR_ARG, "%s: dim %d is out of range for %s (dims 1..%d)", p->name, dim + 1,
                    ck_describe(x, d, sizeof d), x->ndim);
  p->dim = dim;
  p->has_out = !is_arg(c->fn);
  p->has_idx = is_arg(c->fn) || c->idx != NULL;
  if (c->idx && !ck_reduce_op_gives_indices(c->fn))
    return ck_error(ctx, CK_ERR_ARG, "%s: gives no indices (only max, min, argmax and argmin do)", p->name);
  if (is_arg(c->fn) && c->out)
    return ck_error(ctx, CK_ERR_ARG, "%s: gives indices only: pass the output as idx, not out", p->name);
  p->len = dim < 0 ? ck_numel(x) : x->shape[dim];
  double empty;
  if (p->len == 0 && !ck_reduce_op_empty(c->fn, &empty)) {
    if (dim < 0)
      return ck_error(ctx, CK_ERR_SHAPE, "%s: cannot reduce an empty array (shape %s)", p->name,
                      ck_shape_str(x->ndim, x->shape, sh, sizeof sh));
    return ck_error(ctx, CK_ERR_SHAPE, "%s: cannot reduce an empty dimension (shape %s, dim %d)", p->name,
                    ck_shape_str(x->ndim, x->shape, sh, sizeof sh), dim + 1);
  }
  p->nd = result_shape(x, dim, c->keepdim, p->shape);
  return CK_OK;
}

/* out/idx may have the result shape with or without the reduced dims kept as 1. */
static bool red_out_shape_ok(const ck_plan *p, const ck_tensor *t) {
  int64_t other[CK_MAX_DIMS];
  const int nd = result_shape(p->call->a, p->dim, !p->call->keepdim, other);
  return t->ndim == nd && memcmp(t->shape, other, sizeof(int64_t) * (size_t)nd) == 0;
}

/* Empty reductions: NumPy's identities (the table's EMPTY column; the ops without one are refused in
 * red_check). */
static ck_status red_trivial(ck_ctx *ctx, ck_plan *p, bool *done, char *note, size_t n) {
  if (p->len != 0) return CK_OK;
  *done = true;
  double v = NAN;
  (void)ck_reduce_op_empty(p->call->fn, &v);
  if (isnan(v)) snprintf(note, n, "empty reduction: filled with NaN");
  else snprintf(note, n, "empty reduction: filled with %g", v);
  return ck_ew_generate(ctx, CK_EW_FILL, p->out, v, 0);
}

static ck_status red_host(ck_ctx *ctx, ck_plan *p) {
  return ck_host_reduce(ctx, p->call->fn, p->out, p->idx, p->in[0], p->dim, p->len);
}

static unsigned red_layout(const ck_plan *p, const ck_variant *v) {
  if (v) return CK_NEED_OUT | CK_NEED_IDX; /* kernels write contiguous outputs */
  int64_t o, l, i;
  return physical_layout(p->in[0], p->dim, p->dim < 0 && !p->idx, &o, &l, &i) ? 0 : CK_NEED_A;
}

static void red_describe(const ck_plan *p, void *desc) {
  ck_red_desc *d = (ck_red_desc *)desc;
  memset(d, 0, sizeof *d);
  d->dtype = p->in[0]->dtype;
  d->op = p->call->fn;
  physical_layout(p->in[0], p->dim, p->dim < 0 && !p->idx, &d->outer, &d->len, &d->inner);
  d->x = ck_data(p->in[0]);
  d->out = p->out ? ck_data(p->out) : NULL;
  d->idx = p->idx ? (int64_t *)ck_data(p->idx) : NULL;
}

/* Whole arrays: by size (kernels/reduce/variants.c says why); rows and columns: the shape-picking order. */
#define RED_TINY_BYTES 2048  /* one warp's single round of 16-byte loads (rows_warp: 32 lanes x U = 4) */
#define RED_SMALL_BYTES 16384 /* single_pass's one chunk per row: 256 threads x U = 4 x 16 bytes */
static const int *red_preferred_for(const void *desc) {
  const ck_red_desc *d = (const ck_red_desc *)desc;
  if (d->outer != 1 || d->inner != 1) return ck_reduce_preferred;
  const int64_t bytes = d->len * (int64_t)ck_dtype_size((ck_dtype)d->dtype);
  return bytes <= RED_TINY_BYTES ? ck_reduce_preferred_tiny : bytes <= RED_SMALL_BYTES ? ck_reduce_preferred_small
                                                                                        : ck_reduce_preferred_full;
}

static void red_what(const ck_plan *p, const ck_variant *v, char *buf, size_t n) {
  char d[128];
  if (p->dim < 0) snprintf(buf, n, "%s (%s) %s, all elements", p->name, v->name, ck_describe(p->call->a, d, sizeof d));
  else snprintf(buf, n, "%s (%s) %s dim %d", p->name, v->name, ck_describe(p->call->a, d, sizeof d), p->dim + 1);
}

const ck_opdef ck_opdef_reduce = {CK_LADDER("reduce", ck_reduce), .host_dtypes = CK_DT_REAL, .check = red_check,
                                  .out_shape_ok = red_out_shape_ok, .trivial = red_trivial, .host = red_host,
                                  .layout = red_layout, .describe = red_describe, .preferred_for = red_preferred_for,
                                  .what = red_what};
