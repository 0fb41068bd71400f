/*
 * op_index.c — the index ops (issue 32): selection (gather, index_select, take), scatters (scatter, scatter_add,
 * index_add, index_copy, put), where, the compactions (count, masked_select, nonzero) and cat, as one ck_opdef
 * of the one dispatcher. The ladder is kernels/index/ (cub, strided, vec); the oracle src/host/host_index.c.
 *
 * Operands of a ck_call with kind CK_OP_INDEX (fn = CK_IX_*; dims 0-based; ix: 1-based i32 or i64):
 *   GATHER        out = new [ix shape];  a: source (ix has a's ndim, ix.shape[k] <= a.shape[k] for k != dim)
 *   INDEX_SELECT  out = new (a's shape, dim -> #ix);  a: source; ix: 1-D
 *   TAKE          out = new [ix shape];  a: source, indexed as its row-major flattening
 *   SCATTER, SCATTER_ADD   out: the destination (written in place); ix: out's ndim, ix.shape[k] <= b.shape[k]
 *                 and, for k != dim, <= out.shape[k]; b: the source (or 0-d: one value)
 *   INDEX_ADD, INDEX_COPY  out: destination; ix 1-D; b: out's shape with dim -> #ix (or 0-d)
 *   PUT           out: destination, indexed as its row-major flattening; b: #ix elements (any shape) or 0-d
 *   WHERE         out = new broadcast of (ix, a, b), or given (in place: masked_fill_); ix: a bool mask
 *   COUNT         out = new 0-d i64: the number of nonzero elements of ix (any dtype)
 *   MASKED_SELECT out: given [n] (n = COUNT of ix); a: source of ix's shape
 *   NONZERO       out: given [n] (positions) or [n, ndim of ix] (subscripts), i64, 1-based, row-major
 *   CAT           out = new (or a given view: chunks of more than CK_CAT_MAX inputs); list: nlist arrays of one
 *                 dtype and device, contiguous, shapes equal but along dim
 * The checks here are the core's; lua/cukern/select.lua and assembly.lua check the user's arguments first.
 * Every index is checked on both backends: the host oracle before it writes; CUDA in the kernels, where a scatter
 * writes nothing when its check pass found anything. A report is formatted from a host copy of the index by
 * the oracle's own scan, so both backends say the same thing.
 *
 * How CUDA's check comes back (one synchronisation per checked op, and no more):
 *   - gathers (gather, index_select, take) flag a bad index in the device's check word (ck_check_word: pinned host
 *     memory the kernel writes over the bus). The host sets it before the launch and reads it after waiting for the
 *     stream: no memset before the kernel and no copy after it, so the op costs its kernel plus the wait. Under a
 *     graph capture they use device flags as the scatters do (a replay must not leave the shared word set), and so
 *     they do where the driver refuses mapped pinned memory (ck_check_word fails: the op goes on without it).
 *   - scatters keep two device words (their writing kernel reads them on the device, so they cannot live across
 *     the bus), set here by one memset launch and read back with a copy.
 *   Why not check later, at the next synchronisation, as PyTorch's device asserts do: an error must point at the
 *   caller's line and name the op, and by the next synchronisation the script is elsewhere (and a scatter would
 *   have written). Why not a min/max pass over the index before the gather, with one small readback: it is still
 *   one synchronisation, now before the launch, and it reads the index twice — for gather's index, the size of
 *   the output, that is a third more traffic. A bad index is rare; its cost is on the error path only.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_op.h"

static const char *const IX_NAMES[CK_IX_NFNS] = {"gather", "index_select", "take", "scatter", "scatter_add",
                                                 "index_add", "index_copy", "put", "where", "count_nonzero",
                                                 "masked_select", "nonzero", "cat"};
const char *ck_index_fn_name(int fn) { return fn >= 0 && fn < CK_IX_NFNS ? IX_NAMES[fn] : "index"; }

/* A check flag with nothing found (both words; kernels/index/ix_common.cuh's NONE, the memset byte 0x7f). */
#define IX_NONE ((int64_t)0x7f7f7f7f7f7f7f7fLL)

static bool is_gather(int fn) { return fn == CK_IX_GATHER || fn == CK_IX_INDEX_SELECT || fn == CK_IX_TAKE; }
static bool is_scatter(int fn) { return fn >= CK_IX_SCATTER && fn <= CK_IX_PUT; }
static bool along_dim(int fn) { return fn == CK_IX_INDEX_SELECT || fn == CK_IX_INDEX_ADD || fn == CK_IX_INDEX_COPY; }
static bool flat(int fn) { return fn == CK_IX_TAKE || fn == CK_IX_PUT; }

static ck_status need(ck_ctx *ctx, const ck_plan *p, const ck_tensor *t, const char *what) {
  if (!t || !t->st) return ck_error(ctx, CK_ERR_ARG, "%s: needs %s", p->name, what);
  return CK_OK;
}

static ck_status shape_err(ck_ctx *ctx, const ck_plan *p, const char *msg) {
  char o[400];
  return ck_error(ctx, CK_ERR_SHAPE, "%s: %s [%s]", p->name, msg, ck_plan_operands(p, o, sizeof o));
}

static ck_status ix_check(ck_ctx *ctx, ck_plan *p) {
  const ck_call *c = p->call;
  const int fn = c->fn;
  const ck_tensor *ix = c->ix, *a = c->a, *b = c->b;
  char d1[128], d2[128];
  ck_status st;
  if (fn < 0 || fn >= CK_IX_NFNS) return ck_error(ctx, CK_ERR_ARG, "index: unknown op %d", fn);
  p->name = IX_NAMES[fn];
  if (fn == CK_IX_CAT) {
    if (c->nlist < 1 || c->nlist > CK_CAT_MAX) return ck_error(ctx, CK_ERR_ARG, "cat: 1..%d inputs per call", CK_CAT_MAX);
    const ck_tensor *x0 = c->list[0];
    if ((st = need(ctx, p, x0, "a list of arrays"))) return st;
    if (c->dim < 0 || c->dim >= x0->ndim) return ck_error(ctx, CK_ERR_ARG, "cat: dim out of range");
    p->nd = x0->ndim;
    memcpy(p->shape, x0->shape, sizeof(int64_t) * (size_t)p->nd);
    p->shape[c->dim] = 0;
    for (int i = 0; i < c->nlist; ++i) {
      const ck_tensor *x = c->list[i];
      if ((st = ck_check_live(ctx, p->name, x))) return st;
      if (!ck_dev_eq(ck_dev(x), p->dev))
        return ck_error(ctx, CK_ERR_DEVICE, "cat: list[%d] is on %s and the output on %s; move it with :to(\"%s\")", i + 1,
                        ck_device_name(ck_dev(x)).s, ck_device_name(p->dev).s, ck_device_name(p->dev).s);
      if (x->dtype != x0->dtype || x->ndim != x0->ndim || !ck_is_contiguous(x))
        return ck_error(ctx, CK_ERR_ARG, "cat: list[%d] is %s: the core takes contiguous inputs of one dtype and ndim",
                        i + 1, ck_describe(x, d1, sizeof d1));
      for (int k = 0; k < p->nd; ++k)
        if (k != c->dim && x->shape[k] != x0->shape[k]) return shape_err(ctx, p, "the shapes must agree but along dim");
      p->shape[c->dim] += x->shape[c->dim];
    }
    p->in_dt = p->dt = x0->dtype;
    p->has_out = true;
    return CK_OK;
  }
  if ((st = need(ctx, p, ix, fn == CK_IX_WHERE ? "a condition (bool array)" : "an index or mask array"))) return st;
  const bool compaction = fn == CK_IX_COUNT || fn == CK_IX_MASKED_SELECT || fn == CK_IX_NONZERO;
  if (fn == CK_IX_WHERE && ix->dtype != CK_BOOL)
    return ck_error(ctx, CK_ERR_DTYPE, "where: the condition is %s; it must be bool (a comparison, or c:astype(\"bool\"))",
                    ck_describe(ix, d1, sizeof d1));
  if (!compaction && fn != CK_IX_WHERE && ix->dtype != CK_I32 && ix->dtype != CK_I64)
    return ck_error(ctx, CK_ERR_DTYPE, "%s: the index is %s; indices are 1-based i32 or i64 arrays", p->name,
                    ck_describe(ix, d1, sizeof d1));
  p->has_out = true;
  if (is_gather(fn)) {
    if ((st = need(ctx, p, a, "a source array"))) return st;
    p->nin = 1, p->in[0] = a, p->in_dt = p->dt = a->dtype;
    if (fn == CK_IX_TAKE) {
      if (ck_numel(a) == 0 && ck_numel(ix) > 0) return shape_err(ctx, p, "the source is empty");
      p->nd = ix->ndim;
      memcpy(p->shape, ix->shape, sizeof(int64_t) * (size_t)p->nd);
      return CK_OK;
    }
    if (c->dim < 0 || c->dim >= (a->ndim ? a->ndim : 1)) return ck_error(ctx, CK_ERR_ARG, "%s: dim out of range", p->name);
    if (fn == CK_IX_INDEX_SELECT) {
      if (ix->ndim > 1) return shape_err(ctx, p, "the index must be 1-D");
      p->nd = a->ndim;
      memcpy(p->shape, a->shape, sizeof(int64_t) * (size_t)p->nd);
      p->shape[c->dim] = ck_numel(ix);
      return CK_OK;
    }
    if (ix->ndim != a->ndim) return shape_err(ctx, p, "the index must have the source's number of dims");
    for (int k = 0; k < a->ndim; ++k)
      if (k != c->dim && ix->shape[k] > a->shape[k])
        return shape_err(ctx, p, "the index may not be larger than the source along a dim other than dim");
    p->nd = ix->ndim;
    memcpy(p->shape, ix->shape, sizeof(int64_t) * (size_t)p->nd);
    return CK_OK;
  }
  if (is_scatter(fn)) {
    const ck_tensor *out = c->out;
    if ((st = need(ctx, p, out, "a destination array")) || (st = need(ctx, p, b, "a source array or value"))) return st;
    p->nin = 1, p->in[0] = b, p->in_dt = p->dt = out->dtype, p->out_reads = true;
    p->nd = out->ndim;
    memcpy(p->shape, out->shape, sizeof(int64_t) * (size_t)p->nd);
    const bool one = b->ndim == 0;
    if (fn == CK_IX_PUT) {
      if (!one && ck_numel(b) != ck_numel(ix)) return shape_err(ctx, p, "the source must have one element per index");
      if (ck_numel(out) == 0 && ck_numel(ix) > 0) return shape_err(ctx, p, "the destination is empty");
      return CK_OK;
    }
    if (c->dim < 0 || c->dim >= (out->ndim ? out->ndim : 1)) return ck_error(ctx, CK_ERR_ARG, "%s: dim out of range", p->name);
    if (along_dim(fn)) {
      if (ix->ndim > 1) return shape_err(ctx, p, "the index must be 1-D");
      if (!one) {
        bool ok = b->ndim == out->ndim;
        for (int k = 0; ok && k < out->ndim; ++k)
          ok = b->shape[k] == (k == c->dim ? ck_numel(ix) : out->shape[k]);
        if (!ok) return shape_err(ctx, p, "the source must have the destination's shape with #index along dim");
      }
      return CK_OK;
    }
    if (ix->ndim != out->ndim || (!one && b->ndim != out->ndim))
      return shape_err(ctx, p, "the index and the source must have the destination's number of dims");
    for (int k = 0; k < out->ndim; ++k)
      if ((!one && ix->shape[k] > b->shape[k]) || (k != c->dim && ix->shape[k] > out->shape[k]))
        return shape_err(ctx, p, "the index may not be larger than the source, nor than the destination but along dim");
    return CK_OK;
  }
  if (fn == CK_IX_WHERE) {
    if ((st = need(ctx, p, a, "x")) || (st = need(ctx, p, b, "y"))) return st;
    p->nin = 2, p->in[0] = a, p->in[1] = b, p->in_dt = p->dt = ck_promote(a->dtype, b->dtype);
    int nd;
    int64_t sh[CK_MAX_DIMS];
    if ((st = ck_broadcast_shape(ctx, "where", a, b, &nd, sh))) return st;
    ck_tensor t = {0};
    t.ndim = nd;
    memcpy(t.shape, sh, sizeof sh);
    t.st = ix->st;
    if ((st = ck_broadcast_shape(ctx, "where", ix, &t, &p->nd, p->shape))) return st;
    p->inplace_ok = true; /* each element's cond, x and y are read by the thread that writes it */
    return CK_OK;
  }
  /* compactions */
  if (fn == CK_IX_COUNT) {
    p->in_dt = p->dt = CK_I64, p->nd = 0;
    return CK_OK;
  }
  const ck_tensor *out = c->out;
  if ((st = need(ctx, p, out, "an output of the count's size"))) return st;
  if (fn == CK_IX_MASKED_SELECT) {
    if ((st = need(ctx, p, a, "a source array"))) return st;
    if (a->ndim != ix->ndim || memcmp(a->shape, ix->shape, sizeof(int64_t) * (size_t)a->ndim))
      return ck_error(ctx, CK_ERR_SHAPE, "masked_select: the mask is %s and the array %s; they must have one shape",
                      ck_describe(ix, d1, sizeof d1), ck_describe(a, d2, sizeof d2));
    p->nin = 1, p->in[0] = a, p->in_dt = p->dt = a->dtype;
  } else {
    p->in_dt = p->dt = CK_I64;
  }
  p->nd = out->ndim;
  memcpy(p->shape, out->shape, sizeof(int64_t) * (size_t)p->nd);
  return CK_OK;
}

/* The descriptor of the plan's current operands (host pointers on the host: the oracle reads the same one). */
static void ix_describe(const ck_plan *p, void *desc) {
  ck_ix_desc *d = (ck_ix_desc *)desc;
  const ck_call *c = p->call;
  const int fn = c->fn;
  memset(d, 0, offsetof(ck_ix_desc, in));
  d->fn = fn;
  d->dtype = (int)p->dt;
  d->es = (int)ck_dtype_size(p->dt);
  d->flag = p->hflag_dev ? (int64_t *)p->hflag_dev : p->tflag.st ? (int64_t *)ck_data(&p->tflag) : NULL;
  d->out = ck_data(p->out);
  if (fn == CK_IX_CAT) {
    const int dim = c->dim;
    int64_t inner = 1, rows = 1;
    for (int k = dim + 1; k < p->nd; ++k) inner *= p->shape[k];
    for (int k = 0; k < dim; ++k) rows *= p->shape[k];
    d->rows = rows;
    d->out_pitch = (dim > 0 ? p->out->stride[dim - 1] : 0) * d->es;
    if (dim > 0) /* a given view (a chunk): its rows' pitch */
      for (int k = dim - 1; k >= 0; --k)
        if (p->shape[k] != 1) {
          d->out_pitch = p->out->stride[k] * d->es;
          break;
        }
    int64_t off = 0;
    d->n = c->nlist;
    for (int i = 0; i < c->nlist; ++i) {
      const ck_tensor *x = c->list[i];
      const int64_t len = x->shape[dim];
      d->in[i].src = ck_numel(x) ? ck_data(x) : NULL;
      d->in[i].row_bytes = len * inner * d->es;
      d->in[i].src_pitch = len * inner * d->es;
      d->in[i].dst_off = off * p->out->stride[dim] * d->es;
      off += len;
    }
    return;
  }
  const ck_tensor *ix = c->ix, *out = p->out;
  d->ix = ck_data(ix);
  d->ix_dt = (int)ix->dtype;
  d->ix_es = (int)ck_dtype_size(ix->dtype);
  d->dim = c->dim;
  if (fn == CK_IX_COUNT || fn == CK_IX_MASKED_SELECT || fn == CK_IX_NONZERO) {
    d->nd = ix->ndim;
    memcpy(d->shape, ix->shape, sizeof(int64_t) * (size_t)ix->ndim);
    memcpy(d->ix_st, ix->stride, sizeof(int64_t) * (size_t)ix->ndim);
    d->numel = ck_numel(ix);
    const int cls = ix->dtype; /* floats: -0.0 is zero, so the sign bit does not count */
    const bool fl = cls == CK_F32 || cls == CK_F64 || cls == CK_F16 || cls == CK_BF16;
    d->nz_mask = d->ix_es >= 8 ? ~0ull : ((1ull << (8 * d->ix_es)) - 1);
    if (fl) d->nz_mask &= ~(1ull << (8 * d->ix_es - 1));
    if (fn == CK_IX_MASKED_SELECT) {
      d->src = ck_data(p->in[0]);
      memcpy(d->src_st, p->in[0]->stride, sizeof(int64_t) * (size_t)ix->ndim);
    }
    d->bound = out->ndim ? out->shape[0] : 1;
    d->dim_st = fn == CK_IX_NONZERO && out->ndim == 2;
    return;
  }
  if (fn == CK_IX_WHERE) {
    d->nd = p->nd;
    memcpy(d->shape, p->shape, sizeof(int64_t) * (size_t)p->nd);
    d->numel = ck_numel(out);
    memcpy(d->out_st, out->stride, sizeof(int64_t) * (size_t)p->nd);
    ck_aligned_strides(d->ix_st, p->nd, ix);
    ck_aligned_strides(d->src_st, p->nd, p->in[0]);
    ck_aligned_strides(d->y_st, p->nd, p->in[1]);
    d->src = ck_data(p->in[0]);
    d->y = ck_data(p->in[1]);
    return;
  }
  /* gathers and scatters: the index space S, the data side (the source of a gather, the destination of a
   * scatter) indexed along dim, the other side walked with S */
  const ck_tensor *data = is_gather(fn) ? p->in[0] : out, *other = is_gather(fn) ? out : p->in[0];
  int64_t *data_st = is_gather(fn) ? d->src_st : d->out_st, *other_st = is_gather(fn) ? d->out_st : d->src_st;
  d->src = ck_data(p->in[0]);
  if (flat(fn)) { /* the data side as its row-major flattening: contiguous here (layout) */
    d->nd = ix->ndim;
    memcpy(d->shape, ix->shape, sizeof(int64_t) * (size_t)ix->ndim);
    memcpy(d->ix_st, ix->stride, sizeof(int64_t) * (size_t)ix->ndim);
    d->dim_st = 1;
    d->bound = ck_numel(data);
    d->dup_dim_st = 1;
    if (fn == CK_IX_TAKE) memcpy(other_st, other->stride, sizeof(int64_t) * (size_t)ix->ndim);
    else if (other->ndim) { /* put's source: any shape with #ix elements, read in row-major order */
      int64_t s = 1;
      for (int k = ix->ndim - 1; k >= 0; --k) other_st[k] = s, s *= ix->shape[k];
    }
  } else if (along_dim(fn)) {
    d->nd = data->ndim ? data->ndim : 1;
    for (int k = 0; k < d->nd; ++k) d->shape[k] = data->ndim ? data->shape[k] : 1;
    d->shape[c->dim] = ck_numel(ix);
    for (int k = 0; k < data->ndim; ++k) data_st[k] = k == c->dim ? 0 : data->stride[k];
    d->ix_st[c->dim] = ix->ndim ? ix->stride[0] : 0;
    if (other->ndim) memcpy(other_st, other->stride, sizeof(int64_t) * (size_t)other->ndim);
    d->dim_st = data->ndim ? data->stride[c->dim] : 1;
    d->bound = data->ndim ? data->shape[c->dim] : 1;
  } else { /* gather, scatter, scatter_add */
    d->nd = ix->ndim ? ix->ndim : 1;
    for (int k = 0; k < d->nd; ++k) d->shape[k] = ix->ndim ? ix->shape[k] : 1;
    memcpy(d->ix_st, ix->stride, sizeof(int64_t) * (size_t)ix->ndim);
    for (int k = 0; k < data->ndim; ++k) data_st[k] = k == c->dim ? 0 : data->stride[k];
    if (other->ndim) memcpy(other_st, other->stride, sizeof(int64_t) * (size_t)other->ndim);
    d->dim_st = data->ndim ? data->stride[c->dim] : 1;
    d->bound = data->ndim ? data->shape[c->dim] : 1;
  }
  d->numel = 1;
  for (int k = 0; k < d->nd; ++k) d->numel *= d->shape[k];
  if (is_scatter(fn)) { /* the destination's elements numbered row-major, for the repeat check */
    d->dup_numel = ck_numel(out);
    if (!flat(fn)) {
      int64_t s = 1;
      for (int k = out->ndim - 1; k >= 0; --k) {
        if (k == c->dim) d->dup_dim_st = s;
        else d->dup_st[k] = s;
        s *= out->shape[k];
      }
      if (out->ndim == 0) d->dup_dim_st = 1;
    }
    bool one = true; /* the source is one value: repeats write the same value, so they are allowed */
    for (int k = 0; k < d->nd; ++k)
      if (d->shape[k] > 1 && d->src_st[k] != 0) one = false;
    d->dup_check = (fn == CK_IX_SCATTER || fn == CK_IX_INDEX_COPY || fn == CK_IX_PUT) && !one && !c->distinct;
  }
}

/* ---------------------------------------------------------------- reports */

/* "idx[2, 3]" for index-space position pos (1-D index ops: the position along dim). */
static void ix_where(const ck_ix_desc *d, int64_t pos, char *buf, size_t n) {
  int64_t sub[CK_MAX_DIMS];
  for (int k = d->nd - 1; k >= 0; --k) sub[k] = pos % d->shape[k], pos /= d->shape[k];
  if (along_dim(d->fn)) {
    snprintf(buf, n, "idx[%lld]", (long long)sub[d->dim] + 1);
    return;
  }
  size_t w = (size_t)snprintf(buf, n, "idx[");
  for (int k = 0; k < d->nd && w < n; ++k) w += (size_t)snprintf(buf + w, n - w, "%s%lld", k ? ", " : "", (long long)sub[k] + 1);
  if (w < n) snprintf(buf + w, n - w, "]");
}

/* Scan the index (host memory in d->ix) as the oracle does; on a finding, the error. */
static ck_status ix_report(ck_ctx *ctx, const ck_plan *p, const ck_ix_desc *d) {
  int64_t bad, dup, first;
  ck_host_index_check(d, &bad, &dup, &first);
  char w1[96], w2[96];
  if (bad >= 0) {
    int64_t v = 0, sub_pos = bad;
    int64_t o = 0;
    for (int k = d->nd - 1; k >= 0; --k) o += (sub_pos % d->shape[k]) * d->ix_st[k], sub_pos /= d->shape[k];
    v = d->ix_dt == CK_I64 ? ((const int64_t *)d->ix)[o] : ((const int32_t *)d->ix)[o];
    ix_where(d, bad, w1, sizeof w1);
    const ck_tensor *data = is_gather(d->fn) ? p->call->a : p->call->out;
    char dd[128];
    if (flat(d->fn))
      return ck_error(ctx, CK_ERR_ARG, "%s: index %lld at %s is out of range: the %s has %lld elements (indices are 1-based) [%s]",
                      p->name, (long long)v, w1, is_gather(d->fn) ? "source" : "destination", (long long)d->bound,
                      ck_describe(data, dd, sizeof dd));
    return ck_error(ctx, CK_ERR_ARG, "%s: index %lld at %s is out of range for dim %d of the %s (size %lld; indices are 1-based) [%s]",
                    p->name, (long long)v, w1, d->dim + 1, is_gather(d->fn) ? "source" : "destination",
                    (long long)d->bound, ck_describe(data, dd, sizeof dd));
  }
  if (dup >= 0) {
    ix_where(d, dup, w1, sizeof w1);
    ix_where(d, first, w2, sizeof w2);
    return ck_error(ctx, CK_ERR_ARG, "%s: %s and %s write the same element of the destination with values of the source: "
                    "the result would depend on the write order; use %s to accumulate, or indices without repeats",
                    p->name, w2, w1, d->fn == CK_IX_PUT ? "index_add on a flattened copy" : d->fn == CK_IX_INDEX_COPY ? "index_add" : "scatter_add");
  }
  return CK_OK;
}

static ck_status ix_host(ck_ctx *ctx, ck_plan *p) {
  ck_status st = CK_OK;
  const int fn = p->call->fn;
  if (fn == CK_IX_TAKE && !ck_is_contiguous(p->in[0])) { /* the flattening of a view: a contiguous copy */
    ck_tensor c = {0};
    if ((st = ck_contiguous(ctx, &c, p->in[0]))) return st;
    ck_release(&p->tin[0]);
    p->tin[0] = c;
    p->in[0] = &p->tin[0];
  }
  ck_tensor *given = p->out;
  if (fn == CK_IX_PUT && !ck_is_contiguous(p->out)) {
    if ((st = ck_empty(ctx, &p->tout, p->out->dtype, p->out->ndim, p->out->shape, p->dev)) ||
        (st = ck_copy(ctx, &p->tout, p->out)))
      return st;
    p->out = &p->tout;
  }
  ck_ix_desc *d = (ck_ix_desc *)malloc(sizeof *d);
  if (!d) return ck_error(ctx, CK_ERR_OOM, "%s: out of host memory", p->name);
  ix_describe(p, d);
  if (is_gather(d->fn) || is_scatter(d->fn)) st = ix_report(ctx, p, d);
  if (!st) ck_host_index(d);
  free(d);
  if (!st && p->out != given) st = ck_copy(ctx, given, p->out);
  p->out = given;
  return st;
}

static unsigned ix_layout(const ck_plan *p, const ck_variant *v) {
  if (v) return 0;
  const int fn = p->call->fn; /* take and put index the row-major flattening: a contiguous source, destination */
  return fn == CK_IX_TAKE ? CK_NEED_A : fn == CK_IX_PUT ? CK_NEED_OUT : 0;
}

static ck_status ix_trivial(ck_ctx *ctx, ck_plan *p, bool *done, char *note, size_t n) {
  const ck_call *c = p->call;
  if (is_scatter(c->fn) && ck_numel(c->ix) == 0) {
    *done = true;
    snprintf(note, n, "no index: nothing written");
  }
  if (p->dev.kind != CK_CUDA || *done || !(is_gather(c->fn) || is_scatter(c->fn))) return CK_OK;
  ck_status st;
  /* the check word, set here by the host (see the top); where mapped pinned memory is refused, device flags */
  if (is_gather(c->fn) && !ck_capturing(ctx) && ck_check_word(ctx, p->dev, &p->hflag, &p->hflag_dev) == CK_OK) {
    ((volatile int64_t *)p->hflag)[0] = ((volatile int64_t *)p->hflag)[1] = IX_NONE;
    return CK_OK;
  }
  p->hflag = NULL, p->hflag_dev = NULL;
  const int64_t two = 2;
  if ((st = ck_empty(ctx, &p->tflag, CK_I64, 1, &two, p->dev))) return st;
  return ck_memset(ctx, ck_data(&p->tflag), 0x7f, 2 * sizeof(int64_t), "index: the check flags");
}

static ck_status ix_after(ck_ctx *ctx, ck_plan *p) {
  int64_t f[2];
  ck_status st;
  if (p->hflag) { /* the kernel wrote the check word itself: wait for its stream, then look */
    if ((st = ck_stream_sync_current(ctx, p->dev))) return st;
    f[0] = ((volatile int64_t *)p->hflag)[0], f[1] = ((volatile int64_t *)p->hflag)[1];
  } else {
    if (!p->tflag.st || ck_capturing(ctx)) return CK_OK; /* a graph cannot read back: bad indices write nothing */
    if ((st = ck_read(ctx, &p->tflag, f))) return st;
  }
  if (f[0] == IX_NONE && f[1] == IX_NONE) return CK_OK;
  ck_tensor hix = {0};
  if ((st = ck_to(ctx, &hix, p->call->ix, CK_DEV_HOST, p->call->ix->dtype))) return st;
  ck_ix_desc *d = (ck_ix_desc *)malloc(sizeof *d);
  if (!d) {
    ck_release(&hix);
    return ck_error(ctx, CK_ERR_OOM, "%s: out of host memory", p->name);
  }
  ix_describe(p, d);
  d->ix = ck_data(&hix);
  memcpy(d->ix_st, (int64_t[CK_MAX_DIMS]){0}, sizeof d->ix_st);
  { /* the host copy is contiguous: its strides over the index space */
    const ck_tensor *ix = p->call->ix;
    if (along_dim(d->fn)) d->ix_st[d->dim] = 1;
    else if (ix->ndim) memcpy(d->ix_st, hix.stride, sizeof(int64_t) * (size_t)ix->ndim);
  }
  st = ix_report(ctx, p, d);
  if (!st) st = ck_error(ctx, CK_ERR_INTERNAL, "%s: the device reported a bad index the host scan did not find", p->name);
  free(d);
  ck_release(&hix);
  return st;
}

/* ---------------------------------------------------------------- compactions as one call */

/* ck.nonzero / ck.find / ck.masked_select: the count (CK_IX_COUNT), the output allocated at its exact size, the
 * selection — one core call, so nothing runs in Lua between the count and the selection. On a GPU the count comes
 * back through the device's check word: CUB's reduction writes its one result straight into that pinned host memory,
 * the host waits for the stream and reads it (PyTorch's nonzero copies its count into pinned memory and waits: one
 * copy more). Under a graph capture nothing can be read back, as before. */
ck_status ck_compact(ck_ctx *ctx, int fn, ck_tensor *out, const ck_tensor *a, const ck_tensor *mask, bool linear,
                     ck_ran *ran) {
  ck_status st;
  if ((st = ck_check_live(ctx, ck_index_fn_name(fn), mask)) || (a && (st = ck_check_live(ctx, ck_index_fn_name(fn), a))))
    return st;
  if (fn != CK_IX_NONZERO && fn != CK_IX_MASKED_SELECT) return ck_error(ctx, CK_ERR_ARG, "compact: not a compaction");
  const ck_device dev = ck_dev(mask);
  ck_call c;
  memset(&c, 0, sizeof c);
  c.kind = CK_OP_INDEX, c.fn = CK_IX_COUNT, c.ix = mask;
  int64_t n = 0;
  ck_tensor cnt = {0};
  int64_t *word = NULL;
  void *word_dev = NULL;
  /* the check word, unless a graph is being captured or mapped pinned memory was refused (then a copy back) */
  if (dev.kind == CK_CUDA && !ck_capturing(ctx) && ck_check_word(ctx, dev, &word, &word_dev) == CK_OK) {
    ck_storage s; /* the word as a 0-d i64 array of the device (not an allocation: never released) */
    memset(&s, 0, sizeof s);
    s.refs = 1 << 30, s.dev = dev, s.ptr = word_dev, s.bytes = s.cap = sizeof(int64_t), s.ctx = ctx;
    cnt.st = &s, cnt.dtype = CK_I64;
    ck_set_contiguous(&cnt, 0, NULL);
    c.out = &cnt;
    if ((st = ck_run(ctx, &c, ran)) || (st = ck_stream_sync_current(ctx, dev))) return st;
    n = ((volatile int64_t *)word)[0];
  } else {
    c.out = &cnt;
    st = ck_run(ctx, &c, ran);
    if (!st) st = ck_read(ctx, &cnt, &n);
    ck_release(&cnt);
    if (st) return st;
  }
  const int64_t shape[2] = {n, mask->ndim ? mask->ndim : 1};
  if ((st = ck_empty(ctx, out, fn == CK_IX_NONZERO ? CK_I64 : a->dtype, fn == CK_IX_NONZERO && !linear ? 2 : 1, shape, dev)))
    return st;
  c.fn = fn, c.a = fn == CK_IX_MASKED_SELECT ? a : NULL, c.out = out;
  if ((st = ck_run(ctx, &c, ran))) ck_release(out);
  return st;
}

const ck_opdef ck_opdef_index = {CK_LADDER("index", ck_index), .host_dtypes = CK_DT_COMPUTE, .check = ix_check,
                                 .trivial = ix_trivial, .host = ix_host, .layout = ix_layout,
                                 .describe = ix_describe, .after = ix_after};
