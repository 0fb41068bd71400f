/*
 * op_transpose.c — the transpose dispatcher (ck_transpose) and the tiled fast path of ck_copy
 * (ck_copy_permuted).
 *
 * ck_transpose materialises the transpose of the last two dims of x into a new (or given) array; leading
 * dims are a batch. Host arrays run the host reference: a strided copy of the transposed view. On CUDA the
 * work is one ck_tr_desc: in = x's last two dims with x's own strides (any view: sliced, already transposed,
 * expanded), out = out's, the leading dims a batch with both tensors' strides. Size-1 batch dims are dropped
 * and batch dims that are contiguous in both in and out are merged, so the kernels' per-block batch
 * decomposition is short; strides of size-1 matrix dims are normalised (they never address anything, and
 * the launchers' alignment and leading-dimension checks should not trip on them).
 *
 * ck_copy_permuted is the same kernel family used for copies: a same-dtype CUDA copy into a contiguous dst
 * whose source is a permuted layout (a:t(), permute(3, 1, 2) of a contiguous array, ...) is a batched
 * transpose between the source's unit-stride dim (read along it) and the destination's last dim (written
 * along it), all other dims being batch dims. It declines (CK_NOT_APPLICABLE, no error) when that is not
 * the shape of the copy or would not pay: either of the two dims shorter than CK_TR_MIN_EDGE or the 64 x 64 tiles
 * less than a quarter used on average (below: a tile mostly idle costs a block, and the elementwise copy does better
 * there), the source's last dim already unit
 * stride (the elementwise copy is coalesced both ways), or src and dst sharing storage. 2-byte dtypes
 * (f16, bf16) go through the rungs that take them (08_aligned declines them; 06_wide runs).
 *
 * Variant selection: ck_pick_variant with the registry's preferred order (kernels/transpose/variants.c).
 * The "memcpy" row is a bench-only bound: asking ck_transpose for it is an error (CK_ERR_ARG), never a
 * silent fallback, because its result is not a transpose.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_op.h"

#define CK_TR_MIN_EDGE 8 /* ck_copy_permuted: shortest transposed dim worth a tiled transpose */

// ---------------------------------------------------------------- descriptor helpers

/* Strides of size-1 dims never address an element: give them the values a dense layout would have. */
static void tr_normalise(ck_tr_desc *d) {
  if (d->rows <= 1) d->in_rs = d->cols > 1 ? d->cols : 1;
  if (d->cols <= 1) d->in_cs = 1;
  if (d->cols <= 1) d->out_rs = d->rows > 1 ? d->rows : 1;
  if (d->rows <= 1) d->out_cs = 1;
}

/* Append batch dim (n, in stride, out stride), skipping size-1 dims and merging into the previous (outer)
 * dim when both tensors step over it contiguously. */
static void tr_push_batch(ck_tr_desc *d, int64_t n, int64_t sin, int64_t sout) {
  if (n == 1) return;
  if (d->nb > 0) {
    const int k = d->nb - 1;
    if (d->bin_st[k] == sin * n && d->bout_st[k] == sout * n) {
      d->bshape[k] *= n;
      d->bin_st[k] = sin;
      d->bout_st[k] = sout;
      return;
    }
  }
  d->bshape[d->nb] = n;
  d->bin_st[d->nb] = sin;
  d->bout_st[d->nb] = sout;
  d->nb++;
}

/* "op (variant) operands" names the launch in any error. */
static ck_status tr_launch(ck_ctx *ctx, const ck_variant *v, const ck_tr_desc *d, const char *op,
                           const char *operands) {
  char what[400];
  snprintf(what, sizeof what, "%s (%s) %s", op, v->name, operands);
  const ck_launch_req r = {.fn = v->launch, .arg = d, .what = what};
  return ck_submit(ctx, &r);
}

// ---------------------------------------------------------------- the op definition

static ck_status tr_check(ck_ctx *ctx, ck_plan *p) {
  const ck_tensor *x = p->call->a;
  char dx[128];
  p->name = "transpose";
  if (!x) return ck_error(ctx, CK_ERR_ARG, "transpose: needs an array");
  if (x->ndim < 2)
    return ck_error(ctx, CK_ERR_SHAPE, "transpose: needs an array of 2 or more dims, got %s",
                    ck_describe(x, dx, sizeof dx));
  p->nin = 1;
  p->in[0] = x;
  p->in_dt = p->dt = x->dtype;
  p->nd = x->ndim;
  memcpy(p->shape, x->shape, sizeof(int64_t) * (size_t)p->nd);
  p->shape[p->nd - 2] = x->shape[p->nd - 1];
  p->shape[p->nd - 1] = x->shape[p->nd - 2];
  p->has_out = true;
  return CK_OK;
}

/* The reference: a strided copy of the transposed view. */
static ck_status tr_host(ck_ctx *ctx, ck_plan *p) {
  ck_tensor tv = {0};
  const int nd = p->in[0]->ndim;
  ck_status st = ck_view_transpose(ctx, &tv, p->in[0], nd - 2, nd - 1);
  if (!st) st = ck_host_copy(ctx, p->out, &tv);
  ck_release(&tv);
  return st;
}

static void tr_describe(const ck_plan *p, void *desc) {
  ck_tr_desc *d = (ck_tr_desc *)desc;
  const ck_tensor *x = p->in[0], *out = p->out;
  const int nd = x->ndim;
  memset(d, 0, sizeof *d);
  d->dtype = (int)x->dtype;
  d->elem_size = (int)ck_dtype_size(x->dtype);
  d->rows = x->shape[nd - 2];
  d->cols = x->shape[nd - 1];
  d->in = ck_data(x);
  d->in_rs = x->stride[nd - 2];
  d->in_cs = x->stride[nd - 1];
  d->out = ck_data(out);
  d->out_rs = out->stride[nd - 2];
  d->out_cs = out->stride[nd - 1];
  for (int i = 0; i < nd - 2; ++i) tr_push_batch(d, x->shape[i], x->stride[i], out->stride[i]);
  tr_normalise(d);
}

const ck_opdef ck_opdef_transpose = {CK_LADDER("transpose", ck_transpose), .host_dtypes = CK_DT_WORDS,
                                     .check = tr_check, .host = tr_host, .describe = tr_describe};

// ---------------------------------------------------------------- ck_copy_permuted

ck_status ck_copy_permuted(ck_ctx *ctx, ck_tensor *dst, const ck_tensor *src) {
  if (!ck_on_cuda(dst) || !ck_on_cuda(src) || !ck_dev_eq(ck_dev(dst), ck_dev(src))) return CK_NOT_APPLICABLE;
  if (dst->dtype != src->dtype || dst->ndim != src->ndim || dst->st == src->st) return CK_NOT_APPLICABLE;
  const size_t es = ck_dtype_size(dst->dtype);
  if (es != 2 && es != 4 && es != 8) return CK_NOT_APPLICABLE;
  if (!ck_is_contiguous(dst)) return CK_NOT_APPLICABLE;

  /* Dims of size 1 address nothing: drop them. */
  int n = 0;
  int64_t sh[CK_MAX_DIMS], ss[CK_MAX_DIMS], ds[CK_MAX_DIMS];
  for (int i = 0; i < dst->ndim; ++i) {
    if (dst->shape[i] != src->shape[i]) return CK_NOT_APPLICABLE;
    if (dst->shape[i] == 0) return CK_NOT_APPLICABLE; /* nothing to copy */
    if (dst->shape[i] == 1) continue;
    sh[n] = dst->shape[i];
    ss[n] = src->stride[i];
    ds[n] = dst->stride[i];
    ++n;
  }
  if (n < 2) return CK_NOT_APPLICABLE;
  const int q = n - 1; /* dst is contiguous: its last dim has unit stride */
  if (ds[q] != 1 || ss[q] == 1) return CK_NOT_APPLICABLE;
  int u = -1;
  for (int i = n - 2; i >= 0 && u < 0; --i)
    if (ss[i] == 1) u = i;
  if (u < 0) return CK_NOT_APPLICABLE;
  if (sh[q] < CK_TR_MIN_EDGE || sh[u] < CK_TR_MIN_EDGE) return CK_NOT_APPLICABLE;
  /* Tiles mostly idle cost a block each (x:transpose(2, 3):contiguous() of 10^4 x 8 x 8 ran 1/64 of each 64 x 64
   * tile: 54.5 us where the elementwise copy took 7.8). lab/ew_small_tiles.lua (round 3 session 15, H200: this
   * ladder's default rung beside the elementwise rungs on 12 shapes x f32/f64/f16) had the ladder slower below a
   * quarter of its tiles used on average and as fast or faster from a quarter up, but for f64 whose dims fill the
   * elementwise rung's 32 x 32 tiles better (at least 3/4, which that rung takes; it has no other 8-byte dtype, so
   * i64 stays here): f64 4096 x 32 x 32 ran 22.0 us there against 28.3 here. Declined in those cases; the
   * elementwise copy picks its rung. */
  const double nx = (double)sh[q], ny = (double)sh[u];
  const double fill64 = nx * ny / (ceil(nx / 64) * ceil(ny / 64) * 4096.0);
  const double fill32 = nx * ny / (ceil(nx / 32) * ceil(ny / 32) * 1024.0);
  if (fill64 < 0.25 || (dst->dtype == CK_F64 && fill32 >= 0.75 && fill32 > fill64)) return CK_NOT_APPLICABLE;
  /* in(r, c) = src[.. dim q = r, dim u = c ..]: rows run along q, cols along src's unit-stride dim u.
   * out(i, j) = dst[.. dim u = i, dim q = j ..]: written along dst's last dim. */
  ck_tr_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = (int)dst->dtype;
  d.elem_size = (int)es;
  d.rows = sh[q];
  d.cols = sh[u];
  d.in = ck_data(src);
  d.in_rs = ss[q];
  d.in_cs = 1;
  d.out = ck_data(dst);
  d.out_rs = ds[u];
  d.out_cs = 1;
  for (int i = 0; i < n; ++i)
    if (i != u && i != q) tr_push_batch(&d, sh[i], ss[i], ds[i]);

  char dd[128], dsrc[128], operands[300];
  ck_ran ran;
  const ck_variant *v = ck_pick_variant(ctx, "copy", ck_transpose_variants, ck_transpose_nvariants, NULL,
                                        ck_transpose_preferred, dst->dtype, &d, &ran);
  snprintf(operands, sizeof operands, "%s <- %s", ck_describe(dst, dd, sizeof dd), ck_describe(src, dsrc, sizeof dsrc));
  if (!v) return ck_error_prefix(ctx, CK_ERR_UNSUPPORTED, "%s", operands);
  return tr_launch(ctx, v, &d, "copy via transpose", operands);
}
