/*
 * host_reduce.c — the reduction oracle: ck_host_reduce over host arrays of any strides.
 *
 * Straight loops, one output at a time, in the logical order of the kept dims; the reduced dim is walked
 * with its own stride (dim == -1: every element in logical order, positions counted as flat indices).
 * Floats accumulate in double (f32, f16 and bf16 results are rounded once at the end), so the reference is
 * more accurate than any f32-accumulating kernel; integer and bool SUM/PROD accumulate in uint64 (wrapping modulo
 * 2^64) and give i64, as the kernels do; MAX/MIN of integers compare the exact values. Same rules as
 * the kernels (ck_kernels.h): SUM/PROD/MEAN propagate NaN, MAX/MIN give NaN if any element is NaN,
 * ARGMAX/ARGMIN (and MAX/MIN with indices) take NaN as the extreme and the first NaN wins, ties go to the
 * first index. Indices are 1-based i64.
 *
 * Takes what the dispatcher validated (op_reduce.c): dim normalised (-1: all), len >= 1 elements per output,
 * out/idx allocated (any strides, the result shape with or without the reduced dims kept as 1) and not
 * overlapping x. Empty reductions never get here.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ck.h"
#include "half.h"
#include "reduce_ops.h"

// ---------------------------------------------------------------- helpers

/* Walks the elements of an nd-d index space in row-major order, tracking one element offset. */
typedef struct {
  int nd;
  int64_t shape[CK_MAX_DIMS], stride[CK_MAX_DIMS], i[CK_MAX_DIMS];
  int64_t off;
} walker;

static void walk_init(walker *w, int nd, const int64_t *shape, const int64_t *stride, int64_t off) {
  w->nd = nd;
  for (int k = 0; k < nd; ++k) {
    w->shape[k] = shape[k];
    w->stride[k] = stride[k];
    w->i[k] = 0;
  }
  w->off = off;
}

static void walk_next(walker *w) {
  for (int k = w->nd - 1; k >= 0; --k) {
    w->off += w->stride[k];
    if (++w->i[k] < w->shape[k]) return;
    w->off -= w->stride[k] * w->shape[k];
    w->i[k] = 0;
  }
}

static double rd_f(const void *base, ck_dtype dt, int64_t off) {
  switch (dt) {
  case CK_F32: return (double)((const float *)base)[off];
  case CK_F16: return (double)ck_f16_to_f32(((const uint16_t *)base)[off]);
  case CK_BF16: return (double)ck_bf16_to_f32(((const uint16_t *)base)[off]);
  default: return ((const double *)base)[off];
  }
}

/* An integer dtype's element (bool, u8, i8, i16, i32, u32, i64) as an exact int64. */
static int64_t rd_i(const void *base, ck_dtype dt, int64_t off) {
  switch (dt) {
  case CK_BOOL: return ((const uint8_t *)base)[off] != 0;
  case CK_U8: return ((const uint8_t *)base)[off];
  case CK_I8: return ((const int8_t *)base)[off];
  case CK_I16: return ((const int16_t *)base)[off];
  case CK_U32: return ((const uint32_t *)base)[off];
  case CK_I64: return ((const int64_t *)base)[off];
  default: return ((const int32_t *)base)[off];
  }
}

/* A result into out: floats from v (rounded once), integers from the exact iv (the result dtype holds it:
 * i64 for sums and products, the input's dtype for MAX/MIN). */
static void wr_val(void *base, ck_dtype dt, int64_t off, double v, int64_t iv) {
  switch (dt) {
  case CK_F32: ((float *)base)[off] = (float)v; break;
  case CK_F64: ((double *)base)[off] = v; break;
  case CK_F16: ((uint16_t *)base)[off] = ck_f64_to_f16(v); break; /* rounded once */
  case CK_BF16: ((uint16_t *)base)[off] = ck_f64_to_bf16(v); break;
  case CK_BOOL: ((uint8_t *)base)[off] = iv != 0; break;
  case CK_U8: ((uint8_t *)base)[off] = (uint8_t)iv; break;
  case CK_I8: ((int8_t *)base)[off] = (int8_t)iv; break;
  case CK_I16: ((int16_t *)base)[off] = (int16_t)iv; break;
  case CK_U32: ((uint32_t *)base)[off] = (uint32_t)iv; break;
  case CK_I32: ((int32_t *)base)[off] = (int32_t)iv; break;
  default: ((int64_t *)base)[off] = iv; break;
  }
}

/* Is a better than the current best b for an indexed op (strictly, so the first of equals stays)? */
static bool beats_f(double a, double b, bool is_max) {
  if (isnan(b)) return false;
  if (isnan(a)) return true;
  return is_max ? a > b : a < b;
}

// ---------------------------------------------------------------- one output

typedef struct {
  double v;    /* float result */
  int64_t iv;  /* integer result */
  int64_t pos; /* 0-based position of the winner (indexed ops) */
} red_result;

/* An ARITH row's accumulation over the len elements w visits, in the accumulator type A_T from loads A_LOAD
 * (defined where the table is included): the table's IDENT and COMBINE, compiled here as on the device, one
 * loop per row (chosen once per output, not per element). */
#define CK_RED_OP(ID, NAME, FAMILY, IDENT, COMBINE, MEAN, EMPTY, MAXLIKE, FLOAT, WITH_IDX)                            \
  case CK_RED_##ID:                                                                                                   \
    if (CK_REDF_##FAMILY == CK_REDF_ARITH) {                                                                          \
      A_T a = (A_T)(IDENT);                                                                                           \
      for (int64_t k = 0; k < len; ++k, walk_next(&w)) {                                                              \
        const A_T b = A_LOAD;                                                                                         \
        (void)b; /* (EXT and ARG rows do not accumulate: their COMBINE is a) */                                       \
        a = COMBINE;                                                                                                  \
      }                                                                                                               \
      acc = a;                                                                                                        \
    }                                                                                                                 \
    break;

/* Reduce the len elements that walker w visits (positions 0..len-1 in visiting order). */
static red_result reduce_one(int op, bool indexed, ck_dtype dt, const void *base, walker w, int64_t len) {
  red_result r = {0, 0, 0};
  const bool is_max = ck_reduce_op_maxlike(op);
  const bool arith = ck_reduce_op_family(op) == CK_REDF_ARITH;
  if (!ck_dtype_is_float(dt)) {
    if (arith) { /* integers accumulate in uint64: wraps modulo 2^64 */
      uint64_t acc = 0;
#define A_T uint64_t
#define A_LOAD ((uint64_t)rd_i(base, dt, w.off))
      switch (op) {
#include "reduce/reduce_ops.def"
      default: break;
      }
#undef A_T
#undef A_LOAD
      r.iv = (int64_t)acc; /* the two's complement bits (gcc defines the conversion) */
      return r;
    }
    int64_t best = rd_i(base, dt, w.off);
    int64_t bp = 0;
    for (int64_t k = 1; k < len; ++k) {
      walk_next(&w);
      const int64_t v = rd_i(base, dt, w.off);
      if (is_max ? v > best : v < best) best = v, bp = k;
    }
    r.iv = best;
    r.pos = bp;
    return r;
  }
  if (arith) { /* floats accumulate in f64 */
    double acc = 0;
#define A_T double
#define A_LOAD rd_f(base, dt, w.off)
    switch (op) {
#include "reduce/reduce_ops.def"
    default: break;
    }
#undef A_T
#undef A_LOAD
    r.v = ck_reduce_op_mean(op) ? acc / (double)len : acc;
    return r;
  }
  double best = rd_f(base, dt, w.off);
  int64_t bp = 0;
  for (int64_t k = 1; k < len; ++k) {
    walk_next(&w);
    const double v = rd_f(base, dt, w.off);
    if (indexed) {
      if (beats_f(v, best, is_max)) best = v, bp = k;
    } else if (!isnan(best) && (isnan(v) || (is_max ? v > best : v < best))) {
      best = v; /* plain max/min: NaN sticks once seen */
    }
  }
  r.v = best;
  r.pos = bp;
  return r;
}

#undef CK_RED_OP

// ---------------------------------------------------------------- public

ck_status ck_host_reduce(ck_ctx *ctx, int op, ck_tensor *out, ck_tensor *idx, const ck_tensor *x, int dim,
                         int64_t len) {
  (void)ctx;
  const int64_t nout = out ? ck_numel(out) : ck_numel(idx);
  const bool indexed = idx != NULL;
  const void *base = x->st->ptr;
  walker ow, iw, kw, all;
  if (out) walk_init(&ow, out->ndim, out->shape, out->stride, out->offset);
  if (idx) walk_init(&iw, idx->ndim, idx->shape, idx->stride, idx->offset);
  if (dim < 0) {
    walk_init(&all, x->ndim, x->shape, x->stride, x->offset);
    const red_result r = reduce_one(op, indexed, x->dtype, base, all, len);
    if (out) wr_val(out->st->ptr, out->dtype, ow.off, r.v, r.iv);
    if (idx) ((int64_t *)idx->st->ptr)[iw.off] = r.pos + 1;
    return CK_OK;
  }
  /* kept dims of x, in logical order: the same order as out's elements (with or without keepdim) */
  int64_t kshape[CK_MAX_DIMS], kstride[CK_MAX_DIMS];
  int nk = 0;
  for (int i = 0; i < x->ndim; ++i)
    if (i != dim) kshape[nk] = x->shape[i], kstride[nk++] = x->stride[i];
  walk_init(&kw, nk, kshape, kstride, x->offset);
  for (int64_t k = 0; k < nout; ++k) {
    walker rw;
    walk_init(&rw, 1, &x->shape[dim], &x->stride[dim], kw.off);
    const red_result r = reduce_one(op, indexed, x->dtype, base, rw, len);
    if (out) {
      wr_val(out->st->ptr, out->dtype, ow.off, r.v, r.iv);
      walk_next(&ow);
    }
    if (idx) {
      ((int64_t *)idx->st->ptr)[iw.off] = r.pos + 1;
      walk_next(&iw);
    }
    walk_next(&kw);
  }
  return CK_OK;
}
