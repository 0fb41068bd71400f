/*
 * op_reduce.c — the reduction dispatcher: ck_reduce (sum, prod, max, min, mean, argmax, argmin).
 *
 * Checks the arguments (op, dtype, dim, which outputs the op needs), allocates out/idx when they are empty,
 * follows NumPy on empty reductions (sum -> 0, prod -> 1, mean -> NaN, max/min/argmax/argmin over an empty
 * dim -> error), and runs the host reference for host arrays. On CUDA it describes the work as
 * [outer, len, inner] over contiguous memory (ck_red_desc):
 *   - x contiguous: used as is;
 *   - x a dense permutation of a contiguous layout (a transposed matrix, a permuted 3-D array): reduced in
 *     its physical layout, without a copy, when the kept dims come out in the output's logical order (the
 *     column sums of a:t() are the row sums of a); for a whole-array sum/prod/max/min/mean any dense layout
 *     will do, since the order of the elements does not matter there;
 *   - anything else (slices with gaps, expanded views, awkward permutations): a contiguous copy first.
 * Then ck_pick_variant chooses the variant (the requested one if it can run the case, else the preferred
 * order in kernels/reduce/variants.c) and the launcher runs on the context's stream. A whole-array reduction
 * gives a 0-d array and does not synchronise.
 *
 * Dims are 0-based in this API and printed 1-based in messages (the Lua API's convention).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ck.h"
#include "reduce_ops.h"

// ---------------------------------------------------------------- names

static const char *const RED_NAMES[CK_RED_NOPS] = {"sum", "prod", "max", "min", "mean", "argmax", "argmin"};

const char *ck_reduce_op_name(int op) { return (op >= 0 && op < CK_RED_NOPS) ? RED_NAMES[op] : NULL; }

int ck_reduce_op_parse(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < CK_RED_NOPS; ++i)
    if (strcmp(name, RED_NAMES[i]) == 0) return i;
  return -1;
}

static bool is_arg(int op) { return op == CK_RED_ARGMAX || op == CK_RED_ARGMIN; }

// ---------------------------------------------------------------- shared checks (also used by host_reduce.c)

ck_status ck_reduce_check(ck_ctx *ctx, int op, const ck_tensor *out, const ck_tensor *idx, const ck_tensor *x,
                          int *dim, int64_t *len) {
  const char *name = ck_reduce_op_name(op);
  char d[128], sh[96];
  ck_status st;
  if (!name) return ck_error(ctx, CK_ERR_ARG, "reduce: unknown op %d (sum, prod, max, min, mean, argmax, argmin)", op);
  if ((st = ck_check_live(ctx, name, x))) return st;
  if (x->dtype != CK_F32 && x->dtype != CK_F64 && x->dtype != CK_I32)
    return ck_error(ctx, CK_ERR_DTYPE, "%s: dtype %s is not supported by reductions (f32, f64, i32) [%s]", name,
                    ck_dtype_name(x->dtype), ck_describe(x, d, sizeof d));
  if (op == CK_RED_MEAN && x->dtype == CK_I32)
    return ck_error(ctx, CK_ERR_DTYPE, "mean: not defined for i32 (the mean of integers is not an integer); "
                                       "convert with :to(\"f32\") or :to(\"f64\") first [%s]",
                    ck_describe(x, d, sizeof d));
  if (x->ndim == 0 && *dim == 0) *dim = -1; /* a 0-d array has one element: reducing "dim 1" is reducing it all */
  if (*dim < -1 || *dim >= x->ndim)
    return ck_error(ctx, CK_ERR_ARG, "%s: dim %d is out of range for %s (dims 1..%d)", name, *dim + 1,
                    ck_describe(x, d, sizeof d), x->ndim);
  if (!is_arg(op) && !out) return ck_error(ctx, CK_ERR_ARG, "%s: no output array given for the values", name);
  if (is_arg(op) && !idx) return ck_error(ctx, CK_ERR_ARG, "%s: no output array given for the indices", name);
  if (idx && (op == CK_RED_SUM || op == CK_RED_PROD || op == CK_RED_MEAN))
    return ck_error(ctx, CK_ERR_ARG, "%s: gives no indices (only max, min, argmax and argmin do)", name);
  *len = *dim < 0 ? ck_numel(x) : x->shape[*dim];
  if (*len == 0 && (op == CK_RED_MAX || op == CK_RED_MIN || is_arg(op))) {
    if (*dim < 0)
      return ck_error(ctx, CK_ERR_SHAPE, "%s: cannot reduce an empty array (shape %s)", name,
                      ck_shape_str(x->ndim, x->shape, sh, sizeof sh));
    return ck_error(ctx, CK_ERR_SHAPE, "%s: cannot reduce an empty dimension (shape %s, dim %d)", name,
                    ck_shape_str(x->ndim, x->shape, sh, sizeof sh), *dim + 1);
  }
  if (idx && *len > INT32_MAX)
    return ck_error(ctx, CK_ERR_SHAPE, "%s: %lld elements along the reduced dim of %s: 1-based i32 indices stop at "
                                       "2^31-1", name, (long long)*len, ck_describe(x, d, sizeof d));
  return CK_OK;
}

int ck_reduce_shape(const ck_tensor *x, int dim, bool keepdim, int64_t *shape) {
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

ck_status ck_reduce_prepare(ck_ctx *ctx, const char *name, const char *what, ck_tensor *t, ck_dtype dt,
                            const ck_tensor *x, int dim, bool keepdim, bool *allocated) {
  int64_t want[CK_MAX_DIMS], other[CK_MAX_DIMS];
  char s1[96], s2[96], d[128];
  ck_status st;
  const int nd = ck_reduce_shape(x, dim, keepdim, want);
  const int nd2 = ck_reduce_shape(x, dim, !keepdim, other);
  *allocated = false;
  if (!t->st) {
    if ((st = ck_empty(ctx, t, dt, nd, want, ck_dev(x)))) return ck_error_prefix(ctx, st, "%s", name);
    *allocated = true;
    return CK_OK;
  }
  if (ck_dev(t) != ck_dev(x))
    return ck_error(ctx, CK_ERR_DEVICE, "%s: %s %s is on another device than the input %s", name, what,
                    ck_describe(t, d, sizeof d), ck_dev_name(ck_dev(x)));
  if (t->dtype != dt)
    return ck_error(ctx, CK_ERR_DTYPE, "%s: %s is %s but the result is %s", name, what, ck_dtype_name(t->dtype),
                    ck_dtype_name(dt));
  const bool same = t->ndim == nd && memcmp(t->shape, want, sizeof(int64_t) * (size_t)nd) == 0;
  const bool same2 = t->ndim == nd2 && memcmp(t->shape, other, sizeof(int64_t) * (size_t)nd2) == 0;
  if (!same && !same2)
    return ck_error(ctx, CK_ERR_SHAPE, "%s: %s has shape %s but the result is %s (input %s)", name, what,
                    ck_shape_str(t->ndim, t->shape, s1, sizeof s1), ck_shape_str(nd, want, s2, sizeof s2),
                    ck_describe(x, d, sizeof d));
  for (int i = 0; i < t->ndim; ++i)
    if (t->shape[i] > 1 && t->stride[i] == 0)
      return ck_error(ctx, CK_ERR_ARG, "%s: %s %s is an expanded view (several elements share memory)", name, what,
                      ck_describe(t, d, sizeof d));
  return CK_OK;
}

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

// ---------------------------------------------------------------- dispatcher

ck_status ck_reduce(ck_ctx *ctx, int op, ck_tensor *out, ck_tensor *idx, const ck_tensor *x, int dim,
                    bool keepdim, const char *variant, ck_ran *ran) {
  ck_status st;
  int64_t len;
  bool out_alloc = false, idx_alloc = false;
  ck_tensor xc = {0}, tout = {0}, tidx = {0};
  char d[128], what[320];
  if ((st = ck_reduce_check(ctx, op, out, idx, x, &dim, &len))) return st;
  const char *name = ck_reduce_op_name(op);
  if (out && (st = ck_reduce_prepare(ctx, name, "out", out, x->dtype, x, dim, keepdim, &out_alloc))) return st;
  if (idx && (st = ck_reduce_prepare(ctx, name, "idx", idx, CK_I32, x, dim, keepdim, &idx_alloc))) goto fail;
  if (ran) {
    memset(ran, 0, sizeof *ran);
    ran->id = -1;
    snprintf(ran->name, sizeof ran->name, "host");
  }

  const int64_t nout = out ? ck_numel(out) : ck_numel(idx);
  if (nout == 0) return CK_OK;
  if (len == 0) { /* only sum, prod and mean get here (ck_reduce_check): NumPy's identities */
    const double v = op == CK_RED_SUM ? 0.0 : op == CK_RED_PROD ? 1.0 : (double)NAN;
    if ((st = ck_ew_generate(ctx, CK_EW_FILL, out, v, 0))) goto fail;
    return CK_OK;
  }
  if (ck_dev(x) == CK_HOST) {
    if ((st = ck_host_reduce(ctx, op, out, idx, x, dim))) goto fail;
    return CK_OK;
  }

  /* CUDA: outputs the kernels can write directly (contiguous, not sharing x's memory) or temporaries. */
  ck_tensor *o = out, *ix = idx;
  if (out && (!ck_is_contiguous(out) || out->st == x->st)) {
    if ((st = ck_empty(ctx, &tout, out->dtype, out->ndim, out->shape, CK_CUDA))) goto fail;
    o = &tout;
  }
  if (idx && (!ck_is_contiguous(idx) || idx->st == x->st)) {
    if ((st = ck_empty(ctx, &tidx, CK_I32, idx->ndim, idx->shape, CK_CUDA))) goto fail;
    ix = &tidx;
  }
  ck_red_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.dtype = x->dtype;
  desc.op = op;
  const bool any_order = dim < 0 && !idx;
  if (!physical_layout(x, dim, any_order, &desc.outer, &desc.len, &desc.inner)) {
    if ((st = ck_contiguous(ctx, &xc, x))) goto fail;
    if (!physical_layout(&xc, dim, any_order, &desc.outer, &desc.len, &desc.inner)) {
      st = ck_error(ctx, CK_ERR_INTERNAL, "%s: contiguous copy of %s has no [outer, len, inner] layout", name,
                    ck_describe(x, d, sizeof d));
      goto fail;
    }
    desc.x = ck_data(&xc);
  } else {
    desc.x = ck_data(x);
  }
  desc.out = o ? ck_data(o) : NULL;
  desc.idx = ix ? (int32_t *)ck_data(ix) : NULL;

  const ck_variant *v = ck_pick_variant(ctx, name, ck_reduce_variants, ck_reduce_nvariants, variant,
                                        desc.outer == 1 && desc.inner == 1 ? ck_reduce_preferred_full
                                                                           : ck_reduce_preferred,
                                        x->dtype, &desc, ran);
  if (!v) {
    st = CK_ERR_UNSUPPORTED; /* the picker's message names the op, the variant and why */
    goto fail;
  }
  ck_env env;
  if ((st = ck_env_get(ctx, &env))) goto fail;
  if (dim < 0) snprintf(what, sizeof what, "%s (%s) %s, all elements", name, v->name, ck_describe(x, d, sizeof d));
  else snprintf(what, sizeof what, "%s (%s) %s dim %d", name, v->name, ck_describe(x, d, sizeof d), dim + 1);
  if ((st = ck_after_launch(ctx, v->launch(&desc, &env), what))) goto fail;
  if (o != out && (st = ck_copy(ctx, out, o))) goto fail;
  if (ix != idx && (st = ck_copy(ctx, idx, ix))) goto fail;
  ck_release(&xc);
  ck_release(&tout);
  ck_release(&tidx);
  return CK_OK;

fail:
  ck_release(&xc);
  ck_release(&tout);
  ck_release(&tidx);
  if (out_alloc) ck_release(out);
  if (idx_alloc) ck_release(idx);
  return st;
}
