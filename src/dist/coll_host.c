/*
 * coll_host.c — the collectives on host:N devices: the oracle for NCCL's results and the hand-written rungs, and
 * what CI runs (CUKERN_HOST_DEVICES=N). The store path of several processes (pcomm.c) combines with the same
 * functions, so one rule decides every host result.
 *
 * The rule: arrays are combined in list (rank) order, floats in double and rounded to the dtype once at the end,
 * integers in 64 bits wrapped to the dtype's width (as the device's two's-complement arithmetic
 * does, so that a wrapped i32 sum is the same in any order). NCCL rounds floats after every step of its ring or
 * tree, so specs compare floats with a tolerance derived from n and the dtype, integers exactly. Inputs and outputs
 * are packed host arrays; a NULL output is not written (the store path computes one rank's).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ck_dist.h"

static bool is_float(ck_dtype dt) { return ck_dtype_is_float(dt); }
/* The wide dtype values are combined in: f64 for floats, i64 for integers (wrapping modulo 2^64; the cast back
 * to the dtype wraps to its width, which gives the same sums and products as wrapping after every step, and
 * the same extremes, since the inputs are in range). */
static ck_dtype wide_of(ck_dtype dt) { return is_float(dt) ? CK_F64 : CK_I64; }

void ck_coll_combine(int op, ck_dtype dt, void *acc, const void *x, int64_t n) {
  if (is_float(dt)) {
    double *a = (double *)acc;
    const double *b = (const double *)x;
    for (int64_t i = 0; i < n; ++i) {
      switch (op) {
      case CK_COLL_PROD: a[i] *= b[i]; break;
      case CK_COLL_MAX: a[i] = fmax(a[i], b[i]); break; /* (a NaN loses to a number, as fmaxf on the device) */
      case CK_COLL_MIN: a[i] = fmin(a[i], b[i]); break;
      default: a[i] += b[i]; break; /* sum, avg */
      }
    }
    return;
  }
  int64_t *a = (int64_t *)acc;
  const int64_t *b = (const int64_t *)x;
  for (int64_t i = 0; i < n; ++i) {
    switch (op) {
    case CK_COLL_PROD: a[i] = (int64_t)((uint64_t)a[i] * (uint64_t)b[i]); break;
    case CK_COLL_MAX: a[i] = a[i] > b[i] ? a[i] : b[i]; break;
    case CK_COLL_MIN: a[i] = a[i] < b[i] ? a[i] : b[i]; break;
    default: a[i] = (int64_t)((uint64_t)a[i] + (uint64_t)b[i]); break;
    }
  }
}

void ck_coll_scale(ck_dtype dt, void *acc, int64_t n, int k) {
  if (!is_float(dt)) return;
  double *a = (double *)acc;
  for (int64_t i = 0; i < n; ++i) a[i] /= k;
}

/* x's values as a fresh wide buffer (double or int64) of numel elements; NULL with an error in ctx. */
static void *widen(ck_ctx *ctx, const ck_tensor *x) {
  const int64_t n = ck_numel(x);
  ck_tensor w = {0};
  void *buf = malloc((size_t)(n ? n : 1) * 8);
  if (!buf) {
    ck_error(ctx, CK_ERR_OOM, "out of host memory (%lld elements)", (long long)n);
    return NULL;
  }
  if (ck_to(ctx, &w, x, CK_DEV_HOST, wide_of(x->dtype))) {
    free(buf);
    return NULL;
  }
  memcpy(buf, ck_data(&w), (size_t)n * 8);
  ck_release(&w);
  return buf;
}

/* The wide buffer back to dtype dt, into the packed host array out (numel n). */
static ck_status narrow_into(ck_ctx *ctx, const void *wide, ck_tensor *out) {
  const int64_t n = ck_numel(out);
  ck_tensor w = {0};
  const int64_t shape[1] = {n};
  ck_status st = ck_empty(ctx, &w, wide_of(out->dtype), 1, shape, CK_DEV_HOST);
  if (st) return st;
  memcpy(ck_data(&w), wide, (size_t)n * 8);
  ck_tensor view = *out; /* out's memory seen as 1-D (it is packed) */
  ck_set_contiguous(&view, 1, shape);
  view.offset = out->offset;
  st = ck_copy(ctx, &view, &w);
  ck_release(&w);
  return st;
}

/* op over every input, wide; NULL with an error in ctx. */
static void *reduce_all(ck_ctx *ctx, const ck_coll *c) {
  const int64_t n = ck_numel(c->in[0]);
  void *acc = widen(ctx, c->in[0]);
  for (int i = 1; acc && i < c->n; ++i) {
    void *x = widen(ctx, c->in[i]);
    if (!x) {
      free(acc);
      return NULL;
    }
    ck_coll_combine(c->op, c->in[0]->dtype, acc, x, n);
    free(x);
  }
  if (acc && c->op == CK_COLL_AVG) ck_coll_scale(c->in[0]->dtype, acc, n, c->n);
  return acc;
}

ck_status ck_coll_host(ck_ctx *ctx, const ck_coll *c) {
  ck_status st = CK_OK;
  const ck_tensor *in0 = c->in[0];
  const size_t esz = ck_dtype_size(in0->dtype), bytes = (size_t)ck_numel(in0) * esz;
  switch (c->kind) {
  case CK_COLL_ALL_GATHER: /* block j of every output is input j */
    for (int i = 0; i < c->n; ++i)
      for (int j = 0; c->out[i] && j < c->n; ++j)
        memcpy((char *)ck_data(c->out[i]) + (size_t)j * bytes, ck_data(c->in[j]), bytes);
    return CK_OK;
  case CK_COLL_BROADCAST: /* (an in-place root copies onto itself: memmove) */
    for (int i = 0; i < c->n; ++i)
      if (c->out[i]) memmove(ck_data(c->out[i]), ck_data(c->in[c->root]), bytes);
    return CK_OK;
  default: break;
  }
  void *acc = reduce_all(ctx, c);
  if (!acc) return CK_ERR_OOM;
  ck_tensor full = {0};
  if (c->kind == CK_COLL_REDUCE_SCATTER) { /* the full result, then block i to output i */
    if (!(st = ck_empty(ctx, &full, in0->dtype, in0->ndim, in0->shape, CK_DEV_HOST)) && !(st = narrow_into(ctx, acc, &full))) {
      const size_t part = bytes / (size_t)c->n;
      for (int i = 0; i < c->n; ++i)
        if (c->out[i]) memcpy(ck_data(c->out[i]), (const char *)ck_data(&full) + (size_t)i * part, part);
    }
  } else {
    for (int i = 0; i < c->n && !st; ++i)
      if (c->out[i] && (c->kind == CK_COLL_ALL_REDUCE || i == c->root)) st = narrow_into(ctx, acc, c->out[i]);
  }
  ck_release(&full);
  free(acc);
  return st;
}
