/*
 * tensor.c — dtypes, shapes, strides and offsets; views that share storage.
 *
 * A view never copies: it takes a new reference on the storage and rewrites shape/stride/offset. Dims are
 * 0-based here (the binding converts from Lua's 1-based). Every function checks its arguments and reports
 * the op, the shape and the offending value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck.h"

// ---------------------------------------------------------------- dtypes

enum { CLASS_FLOAT, CLASS_INT, CLASS_HALF, CLASS_UINT, CLASS_BOOL, CLASS_COMPLEX };
static const struct {
  const char *name, *aliases;
  size_t size;
  int cls, bits;
} DTYPES[CK_NDTYPES] = {
#define CK_DTYPE(ID, NAME, CTYPE, SIZE, CLASS, BITS, NCCL, ALIASES)                                                        \
  [CK_##ID] = {NAME, ALIASES, SIZE, CLASS_##CLASS, BITS},
#include "dtypes.def"
#undef CK_DTYPE
};

size_t ck_dtype_size(ck_dtype dt) { return (unsigned)dt < CK_NDTYPES ? DTYPES[dt].size : 0; }
const char *ck_dtype_name(ck_dtype dt) { return (unsigned)dt < CK_NDTYPES ? DTYPES[dt].name : "?"; }
bool ck_dtype_is_float(ck_dtype dt) {
  return (unsigned)dt < CK_NDTYPES && (DTYPES[dt].cls == CLASS_FLOAT || DTYPES[dt].cls == CLASS_HALF);
}
bool ck_dtype_is_signed(ck_dtype dt) { return (unsigned)dt < CK_NDTYPES && DTYPES[dt].cls == CLASS_INT; }
bool ck_dtype_is_complex(ck_dtype dt) { return (unsigned)dt < CK_NDTYPES && DTYPES[dt].cls == CLASS_COMPLEX; }
ck_dtype ck_complex_part(ck_dtype dt) { return dt == CK_C128 ? CK_F64 : dt == CK_C64 ? CK_F32 : dt; }
const char *ck_dev_name(ck_devkind d) { return d == CK_CUDA ? "cuda" : "host"; }

char *ck_dtype_list(char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  for (int d = 0; d < CK_NDTYPES && k < n; ++d) k += (size_t)snprintf(buf + k, n - k, "%s%s", d ? ", " : "", DTYPES[d].name);
  return buf;
}

/* A name or one of its space-separated aliases (dtypes.def). */
bool ck_dtype_parse(const char *s, ck_dtype *out) {
  const size_t n = strlen(s);
  for (int d = 0; d < CK_NDTYPES; ++d) {
    bool hit = strcmp(s, DTYPES[d].name) == 0;
    for (const char *a = DTYPES[d].aliases; !hit && *a;) {
      const size_t k = strcspn(a, " ");
      hit = n > 0 && k == n && strncmp(a, s, n) == 0;
      a += k + (a[k] == ' ');
    }
    if (hit) {
      *out = (ck_dtype)d;
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------- complex pairs

/* A complex array seen as its real pairs: [..., 2] of the component dtype, sharing storage (NumPy's
 * view_as_real). Every move and cast of complex data goes through it (copy.c), so no kernel knows complex. */
ck_status ck_pair_view(ck_ctx *ctx, ck_tensor *out, const ck_tensor *z) {
  ck_status st;
  char d[96];
  if ((st = ck_check_live(ctx, "view_as_real", z))) return st;
  if (!ck_dtype_is_complex(z->dtype))
    return ck_error(ctx, CK_ERR_DTYPE, "view_as_real: %s is not complex", ck_describe(z, d, sizeof d));
  if (z->ndim == CK_MAX_DIMS)
    return ck_error(ctx, CK_ERR_SHAPE, "view_as_real: %s has %d dims already; its pair view would have %d (the most is %d)",
                    ck_describe(z, d, sizeof d), z->ndim, z->ndim + 1, CK_MAX_DIMS);
  ck_view_of(out, z);
  out->dtype = ck_complex_part(z->dtype);
  out->offset = 2 * z->offset;
  for (int i = 0; i < z->ndim; ++i) out->stride[i] = 2 * z->stride[i];
  out->shape[z->ndim] = 2;
  out->stride[z->ndim] = 1;
  out->ndim = z->ndim + 1;
  return CK_OK;
}

/* The inverse (torch.view_as_complex): a real f32/f64 array whose last dim is 2 with stride 1, and every other
 * stride even, seen as c64/c128. */
ck_status ck_complex_view(ck_ctx *ctx, ck_tensor *out, const ck_tensor *r) {
  ck_status st;
  char d[96];
  if ((st = ck_check_live(ctx, "view_as_complex", r))) return st;
  if (r->dtype != CK_F32 && r->dtype != CK_F64)
    return ck_error(ctx, CK_ERR_DTYPE, "view_as_complex: %s is not f32 or f64", ck_describe(r, d, sizeof d));
  bool ok = r->ndim >= 1 && r->shape[r->ndim - 1] == 2 && r->stride[r->ndim - 1] == 1 && r->offset % 2 == 0;
  for (int i = 0; ok && i < r->ndim - 1; ++i) ok = r->stride[i] % 2 == 0 || r->shape[i] == 1;
  if (!ok)
    return ck_error(ctx, CK_ERR_SHAPE,
                    "view_as_complex: %s must end in a dim of 2 with stride 1, its other strides and offset even "
                    "(copy it first: a:contiguous())", ck_describe(r, d, sizeof d));
  ck_view_of(out, r);
  out->dtype = r->dtype == CK_F64 ? CK_C128 : CK_C64;
  out->ndim = r->ndim - 1;
  out->offset = r->offset / 2;
  for (int i = 0; i < out->ndim; ++i) out->stride[i] = r->stride[i] / 2; /* (exact but on size-1 dims) */
  return CK_OK;
}

// ---------------------------------------------------------------- shapes

int64_t ck_numel(const ck_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

bool ck_is_contiguous(const ck_tensor *t) {
  int64_t expect = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] == 0) return true;
    if (t->shape[i] != 1 && t->stride[i] != expect) return false;
    expect *= t->shape[i];
  }
  return true;
}

char *ck_shape_str(int ndim, const int64_t *shape, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < ndim && k < n; ++i) k += (size_t)snprintf(buf + k, n - k, i ? "x%lld" : "%lld", (long long)shape[i]);
  if (k < n) snprintf(buf + k, n - k, "]");
  return buf;
}

char *ck_describe(const ck_tensor *t, char *buf, size_t n) {
  char sh[96];
  snprintf(buf, n, "%s%s %s", ck_dtype_name(t->dtype), ck_shape_str(t->ndim, t->shape, sh, sizeof sh),
           t->st ? ck_device_name(t->st->dev).s : "freed");
  return buf;
}

ck_status ck_check_shape(ck_ctx *ctx, const char *op, int ndim, const int64_t *shape, ck_dtype dt) {
  if (ndim < 0 || ndim > CK_MAX_DIMS)
    return ck_error(ctx, CK_ERR_SHAPE, "%s: %d dims requested, at most %d supported", op, ndim, CK_MAX_DIMS);
  if (ck_dtype_size(dt) == 0) return ck_error(ctx, CK_ERR_DTYPE, "%s: invalid dtype %d", op, (int)dt);
  int64_t limit = ((int64_t)1 << 62) / (int64_t)ck_dtype_size(dt), n = 1;
  char sh[96];
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0)
      return ck_error(ctx, CK_ERR_SHAPE, "%s: dim %d of shape %s is negative", op, i + 1,
                      ck_shape_str(ndim, shape, sh, sizeof sh));
    /* zero dims count as 1 here: strides are products of the other dims and must not overflow either */
    int64_t d = shape[i] ? shape[i] : 1;
    if (n > limit / d)
      return ck_error(ctx, CK_ERR_SHAPE, "%s: shape %s has too many elements (the product of dims overflows)", op,
                      ck_shape_str(ndim, shape, sh, sizeof sh));
    n *= d;
  }
  return CK_OK;
}

void ck_set_contiguous(ck_tensor *t, int ndim, const int64_t *shape) {
  int64_t n = 1;
  t->ndim = ndim;
  for (int i = ndim - 1; i >= 0; --i) {
    t->shape[i] = shape[i];
    t->stride[i] = n;
    n *= shape[i] ? shape[i] : 1;
  }
}

ck_status ck_empty(ck_ctx *ctx, ck_tensor *out, ck_dtype dt, int ndim, const int64_t *shape, ck_device dev) {
  ck_status st = ck_check_shape(ctx, "empty", ndim, shape, dt);
  if (st) return st;
  if (dev.kind == CK_CUDA && !ck_has_cuda(ctx)) {
    ck_devinfo info;
    ck_device_info(ctx, dev, &info);
    return ck_error(ctx, CK_ERR_DEVICE, "cannot place an array on cuda: %s", info.why_host);
  }
  if (ck_check_device(ctx, dev)) return ck_error_prefix(ctx, CK_ERR_DEVICE, "cannot place an array there");
  ck_tensor t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  ck_set_contiguous(&t, ndim, shape);
  int64_t numel = ck_numel(&t);
  if ((st = ck_storage_new(ctx, dev, (size_t)numel * ck_dtype_size(dt), &t.st))) return st;
  *out = t;
  return CK_OK;
}

bool ck_dense_order(const ck_tensor *t, int *perm) {
  for (int i = 0; i < t->ndim; ++i) perm[i] = i;
  for (int i = 1; i < t->ndim; ++i) { /* stable insertion sort by stride, largest first */
    int p = perm[i], j = i;
    while (j > 0 && t->stride[perm[j - 1]] < t->stride[p]) {
      perm[j] = perm[j - 1];
      --j;
    }
    perm[j] = p;
  }
  int64_t expect = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    int d = perm[i];
    if (t->shape[d] == 1) continue;
    if (t->shape[d] == 0) return false;
    if (t->stride[d] != expect) return false;
    expect *= t->shape[d];
  }
  return true;
}

ck_status ck_empty_layout(ck_ctx *ctx, ck_tensor *out, ck_dtype dt, int ndim, const int64_t *shape, ck_device dev,
                          const ck_tensor *like) {
  int perm[CK_MAX_DIMS];
  ck_status st = ck_empty(ctx, out, dt, ndim, shape, dev);
  if (st || !like || !like->st || like->ndim != ndim || ck_is_contiguous(like)) return st;
  if (memcmp(like->shape, shape, sizeof(int64_t) * (size_t)ndim) != 0 || !ck_dense_order(like, perm)) return CK_OK;
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    out->stride[perm[i]] = s;
    s *= shape[perm[i]] ? shape[perm[i]] : 1;
  }
  return CK_OK;
}

ck_status ck_empty_like(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t) {
  return ck_empty(ctx, out, t->dtype, t->ndim, t->shape, ck_dev(t));
}

void ck_release(ck_tensor *t) {
  if (t && t->st) {
    ck_storage_release(t->st);
    t->st = NULL;
  }
}

void ck_view_of(ck_tensor *dst, const ck_tensor *src) {
  *dst = *src;
  ck_storage_retain(dst->st);
}

ck_status ck_check_live(ck_ctx *ctx, const char *op, const ck_tensor *t) {
  if (!t || !t->st) return ck_error(ctx, CK_ERR_FREED, "%s: use of a freed array", op);
  return CK_OK;
}

ck_status ck_check_same_device(ck_ctx *ctx, const char *op, const ck_tensor *a, const ck_tensor *b) {
  if (!ck_dev_eq(ck_dev(a), ck_dev(b))) {
    char da[128], db[128];
    return ck_error(ctx, CK_ERR_DEVICE, "%s: operands on different devices (%s and %s); move one with :to(\"%s\")", op,
                    ck_describe(a, da, sizeof da), ck_describe(b, db, sizeof db), ck_device_name(ck_dev(a)).s);
  }
  return CK_OK;
}

// ---------------------------------------------------------------- aliasing

void ck_aligned_strides(int64_t *dst, int nd, const ck_tensor *t) {
  for (int i = 0; i < nd; ++i) {
    int it = i - (nd - t->ndim);
    dst[i] = (it < 0 || t->shape[it] == 1) ? 0 : t->stride[it];
  }
}

/* Element range [lo, hi] of t in its storage (numel > 0). */
static void elem_range(const ck_tensor *t, int64_t *lo, int64_t *hi) {
  *lo = *hi = t->offset;
  for (int i = 0; i < t->ndim; ++i) {
    int64_t ext = (t->shape[i] - 1) * t->stride[i];
    if (ext < 0) *lo += ext;
    else *hi += ext;
  }
}

/* Could writing `out` clobber an element of `in` that is still to be read? Not when the storages or the
 * byte ranges are disjoint, nor when in is exactly out (same offset, dtype and strides on out's dims). */
bool ck_overlaps(const ck_tensor *x, const ck_tensor *y) {
  if (!x || !y || !x->st || x->st != y->st || ck_numel(x) == 0 || ck_numel(y) == 0) return false;
  const int64_t xs = (int64_t)ck_dtype_size(x->dtype), ys = (int64_t)ck_dtype_size(y->dtype);
  int64_t xl, xh, yl, yh;
  elem_range(x, &xl, &xh);
  elem_range(y, &yl, &yh);
  return !((xh + 1) * xs <= yl * ys || (yh + 1) * ys <= xl * xs);
}

bool ck_unsafe_alias(const ck_tensor *out, const ck_tensor *in) {
  if (!ck_overlaps(out, in)) return false;
  if (out->dtype != in->dtype || out->offset != in->offset) return true;
  int64_t st[CK_MAX_DIMS];
  ck_aligned_strides(st, out->ndim, in);
  for (int i = 0; i < out->ndim; ++i)
    if (out->shape[i] > 1 && st[i] != out->stride[i]) return true;
  return false;
}

/* A destination whose elements share memory with each other (stride 0 on a dim of extent > 1) or with the
 * rest of the expanded view it was taken from (ck_tensor.shared) cannot be written: the one message of every
 * write path (index assignment, fill, copy_, in-place ops, out=, gemm's C, map's out, load into). */
ck_status ck_check_writable(ck_ctx *ctx, const char *name, const ck_tensor *out) {
  char d[128];
  bool expanded = false;
  for (int i = 0; i < out->ndim; ++i) expanded = expanded || (out->shape[i] > 1 && out->stride[i] == 0);
  if (expanded || out->shared)
    return ck_error(ctx, CK_ERR_ARG, "%s: destination %s is %s expanded view, whose elements share memory; write "
                                     "into a copy instead (a:contiguous() or a:clone())",
                    name, ck_describe(out, d, sizeof d), expanded ? "an" : "part of an");
  return CK_OK;
}

// ---------------------------------------------------------------- views

static ck_status check_dim(ck_ctx *ctx, const char *op, const ck_tensor *t, int d) {
  if (d < 0 || d >= t->ndim) {
    char sh[96];
    return ck_error(ctx, CK_ERR_ARG, "%s: dim %d out of range for shape %s (1..%d)", op, d + 1,
                    ck_shape_str(t->ndim, t->shape, sh, sizeof sh), t->ndim);
  }
  return CK_OK;
}

ck_status ck_view_transpose(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, int d1, int d2) {
  ck_status st;
  if ((st = ck_check_live(ctx, "transpose", t)) || (st = check_dim(ctx, "transpose", t, d1)) ||
      (st = check_dim(ctx, "transpose", t, d2)))
    return st;
  ck_view_of(out, t);
  int64_t s = out->shape[d1];
  out->shape[d1] = out->shape[d2];
  out->shape[d2] = s;
  s = out->stride[d1];
  out->stride[d1] = out->stride[d2];
  out->stride[d2] = s;
  return CK_OK;
}

ck_status ck_view_permute(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, const int *perm) {
  ck_status st;
  if ((st = ck_check_live(ctx, "permute", t))) return st;
  bool seen[CK_MAX_DIMS] = {false};
  for (int i = 0; i < t->ndim; ++i) {
    if ((st = check_dim(ctx, "permute", t, perm[i]))) return st;
    if (seen[perm[i]]) return ck_error(ctx, CK_ERR_ARG, "permute: dim %d repeated", perm[i] + 1);
    seen[perm[i]] = true;
  }
  ck_view_of(out, t);
  for (int i = 0; i < t->ndim; ++i) {
    out->shape[i] = t->shape[perm[i]];
    out->stride[i] = t->stride[perm[i]];
  }
  return CK_OK;
}

ck_status ck_view_narrow(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, int dim, int64_t start, int64_t len) {
  ck_status st;
  if ((st = ck_check_live(ctx, "narrow", t)) || (st = check_dim(ctx, "narrow", t, dim))) return st;
  /* start + len is never formed before both are known to lie in [0, shape]: no signed overflow */
  if (start < 0 || len < 0 || start > t->shape[dim] || len > t->shape[dim] - start) {
    char sh[96];
    if (start < 0 || len < 0)
      return ck_error(ctx, CK_ERR_ARG, "narrow: start %lld and length %lld must not be negative (dim %d of shape %s)",
                      (long long)start, (long long)len, dim + 1, ck_shape_str(t->ndim, t->shape, sh, sizeof sh));
    /* 1-based inclusive range as the user wrote it; unsigned, so that it cannot overflow */
    return ck_error(ctx, CK_ERR_ARG, "narrow: range %llu..%llu out of bounds for dim %d of shape %s (1..%lld)",
                    (unsigned long long)start + 1, (unsigned long long)start + (unsigned long long)len, dim + 1,
                    ck_shape_str(t->ndim, t->shape, sh, sizeof sh), (long long)t->shape[dim]);
  }
  ck_view_of(out, t);
  out->offset += start * t->stride[dim];
  out->shape[dim] = len;
  return CK_OK;
}

ck_status ck_view_select(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, int dim, int64_t index) {
  ck_status st;
  if ((st = ck_check_live(ctx, "select", t)) || (st = check_dim(ctx, "select", t, dim))) return st;
  if (index < 0 || index >= t->shape[dim]) {
    char sh[96];
    /* printed 1-based without a signed index + 1 (index may be INT64_MAX) */
    char ix[32];
    if (index < 0) snprintf(ix, sizeof ix, "%lld", (long long)index + 1);
    else snprintf(ix, sizeof ix, "%llu", (unsigned long long)index + 1);
    return ck_error(ctx, CK_ERR_ARG, "select: index %s out of bounds for dim %d of shape %s (1..%lld)", ix, dim + 1,
                    ck_shape_str(t->ndim, t->shape, sh, sizeof sh), (long long)t->shape[dim]);
  }
  ck_view_of(out, t);
  out->offset += index * t->stride[dim];
  for (int i = dim; i < t->ndim - 1; ++i) {
    out->shape[i] = t->shape[i + 1];
    out->stride[i] = t->stride[i + 1];
  }
  out->ndim--;
  return CK_OK;
}

/* One -1 in a reshape's shape is inferred from numel. Integer-safe for any int64 dims: the product of the
 * known dims is never formed past numel (so A:reshape(2^62, 4, -1) is an error, not a signed overflow). */
static ck_status infer_shape(ck_ctx *ctx, const char *op, int64_t numel, int ndim, const int64_t *shape, int64_t *out) {
  if (ndim < 0 || ndim > CK_MAX_DIMS)
    return ck_error(ctx, CK_ERR_SHAPE, "%s: %d dims requested, at most %d supported", op, ndim, CK_MAX_DIMS);
  int infer = -1;
  int64_t known = 1;
  bool zero = false;
  char sh[96];
  for (int i = 0; i < ndim; ++i) {
    out[i] = shape[i];
    if (shape[i] == -1) {
      if (infer >= 0) return ck_error(ctx, CK_ERR_SHAPE, "%s: only one dim can be -1 (dims %d and %d are)", op, infer + 1, i + 1);
      infer = i;
    } else if (shape[i] < 0) {
      return ck_error(ctx, CK_ERR_SHAPE, "%s: dim %d is negative (%lld)", op, i + 1, (long long)shape[i]);
    } else if (shape[i] == 0) {
      zero = true;
    } else if (!zero) {
      /* the product of the known dims must divide numel, so it can stop growing once it passes numel */
      if (known > numel / shape[i]) known = numel + 1;
      else known *= shape[i];
    }
  }
  if (infer < 0) return CK_OK;
  if (zero)
    return ck_error(ctx, CK_ERR_SHAPE, "%s: cannot infer the -1 in %s: another dim is 0, any size would do", op,
                    ck_shape_str(ndim, shape, sh, sizeof sh));
  if (known > numel || numel % known != 0)
    return ck_error(ctx, CK_ERR_SHAPE, "%s: cannot view %lld elements as %s", op, (long long)numel,
                    ck_shape_str(ndim, shape, sh, sizeof sh));
  out[infer] = numel / known;
  return CK_OK;
}

ck_status ck_view_reshape(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, int ndim, const int64_t *shape_in) {
  ck_status st;
  char s1[96], s2[96];
  int64_t shape[CK_MAX_DIMS];
  if ((st = ck_check_live(ctx, "reshape", t))) return st;
  if ((st = infer_shape(ctx, "reshape", ck_numel(t), ndim, shape_in, shape))) return st;
  if ((st = ck_check_shape(ctx, "reshape", ndim, shape, t->dtype))) return st;
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= shape[i];
  if (n != ck_numel(t))
    return ck_error(ctx, CK_ERR_SHAPE, "reshape: cannot view %s (%lld elements) as %s (%lld elements)",
                    ck_shape_str(t->ndim, t->shape, s1, sizeof s1), (long long)ck_numel(t),
                    ck_shape_str(ndim, shape, s2, sizeof s2), (long long)n);
  if (!ck_is_contiguous(t))
    return ck_error(ctx, CK_ERR_SHAPE,
                    "reshape: array %s is not contiguous; call :contiguous() first (reshape never copies)",
                    ck_shape_str(t->ndim, t->shape, s1, sizeof s1));
  ck_view_of(out, t);
  ck_set_contiguous(out, ndim, shape);
  return CK_OK;
}

ck_status ck_view_expand(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, int ndim, const int64_t *shape) {
  ck_status st;
  char s1[96], s2[96];
  if ((st = ck_check_live(ctx, "expand", t))) return st;
  if ((st = ck_check_shape(ctx, "expand", ndim, shape, t->dtype))) return st;
  if (ndim < t->ndim)
    return ck_error(ctx, CK_ERR_SHAPE, "expand: cannot expand %s to fewer dims %s",
                    ck_shape_str(t->ndim, t->shape, s1, sizeof s1), ck_shape_str(ndim, shape, s2, sizeof s2));
  ck_tensor r = *t;
  r.ndim = ndim;
  int lead = ndim - t->ndim;
  for (int i = 0; i < ndim; ++i) {
    int j = i - lead;
    int64_t have = j >= 0 ? t->shape[j] : 1, hs = j >= 0 ? t->stride[j] : 0;
    if (have == shape[i]) {
      r.shape[i] = have;
      r.stride[i] = hs;
    } else if (have == 1) {
      r.shape[i] = shape[i];
      r.stride[i] = 0;
      r.shared = r.shared || shape[i] > 1;
    } else {
      return ck_error(ctx, CK_ERR_SHAPE, "expand: cannot expand %s to %s (dim %d is %lld, not 1)",
                      ck_shape_str(t->ndim, t->shape, s1, sizeof s1), ck_shape_str(ndim, shape, s2, sizeof s2),
                      j + 1, (long long)have);
    }
  }
  ck_view_of(out, &r);
  return CK_OK;
}

int ck_broadcast_dims(int na, const int64_t *sa, int nb, const int64_t *sb, int *nd, int64_t *shape) {
  int64_t r[CK_MAX_DIMS];
  const int n = na > nb ? na : nb;
  for (int i = 0; i < n; ++i) {
    const int ia = i - (n - na), ib = i - (n - nb);
    const int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
    if (da != db && da != 1 && db != 1) return i;
    r[i] = da == 1 ? db : da;
  }
  memcpy(shape, r, sizeof(int64_t) * (size_t)n);
  *nd = n;
  return -1;
}

ck_status ck_broadcast_shape(ck_ctx *ctx, const char *op, const ck_tensor *a, const ck_tensor *b, int *ndim,
                             int64_t *shape) {
  const int i = ck_broadcast_dims(a->ndim, a->shape, b->ndim, b->shape, ndim, shape);
  if (i >= 0) {
    const int n = a->ndim > b->ndim ? a->ndim : b->ndim, ia = i - (n - a->ndim), ib = i - (n - b->ndim);
    char s1[96], s2[96];
    return ck_error(ctx, CK_ERR_SHAPE, "%s: shapes %s and %s cannot be broadcast (dim %d: %lld vs %lld)", op,
                    ck_shape_str(a->ndim, a->shape, s1, sizeof s1), ck_shape_str(b->ndim, b->shape, s2, sizeof s2),
                    i + 1, (long long)(ia >= 0 ? a->shape[ia] : 1), (long long)(ib >= 0 ? b->shape[ib] : 1));
  }
  return CK_OK;
}

// ---------------------------------------------------------------- dim ordering and coalescing

void ck_sort_dims(int nd, int64_t *shape, int nops, int64_t *const *st) {
  for (int i = 1; i < nd; ++i)
    for (int j = i; j > 0 && llabs(st[0][j - 1]) < llabs(st[0][j]); --j) {
      int64_t t = shape[j];
      shape[j] = shape[j - 1], shape[j - 1] = t;
      for (int o = 0; o < nops; ++o) t = st[o][j], st[o][j] = st[o][j - 1], st[o][j - 1] = t;
    }
}

int ck_coalesce_dims(int nd, int64_t *shape, int nops, int64_t *const *st, int ncheck) {
  int n = 0;
  for (int k = 0; k < nd; ++k) {
    if (shape[k] == 1) continue;
    if (n > 0) {
      /* the previous kept dim n-1 merges with k when stepping k's full extent is one step of n-1 */
      bool ok = true;
      for (int o = 0; o < ncheck && ok; ++o) ok = st[o][n - 1] == st[o][k] * shape[k];
      if (ok) {
        shape[n - 1] *= shape[k];
        for (int o = 0; o < nops; ++o) st[o][n - 1] = st[o][k];
        continue;
      }
    }
    shape[n] = shape[k];
    for (int o = 0; o < nops; ++o) st[o][n] = st[o][k];
    ++n;
  }
  return n;
}

// ---------------------------------------------------------------- promotion

/* NumPy's table (np.result_type of two arrays), computed from CLASS, SIZE and BITS of dtypes.def:
 *   same dtype                 itself
 *   bool with x                x
 *   two floats                 the larger; f16 with bf16 (neither holds the other) -> f32
 *   two ints of one signedness the larger
 *   signed s with unsigned u   s if it is wider than u, else the signed dtype twice u's size (u8+i8 -> i16,
 *                              u32+i32 -> i64, u32+i64 -> i64)
 *   int n with float f         f if it holds every value of n (BITS), else the smallest of f32, f64 that does,
 *                              else f64 (i64: NumPy's f64); EXCEPT i32 with a float gives that float (cukern's rule
 *                              before issue 32, kept: NumPy gives f64 for i32+f32 and i32+f16)
 *   complex with x             the complex dtype whose component is the promotion of the components (x's
 *                              own for a real x): c64 with f64 or i64 -> c128, c64 with f16, i32, u8 -> c64
 * The table is in docs/api.md ("Dtypes"); spec/dtypes_spec.lua checks it. */
static ck_dtype signed_of_size(size_t size) {
  return size <= 1 ? CK_I8 : size == 2 ? CK_I16 : size == 4 ? CK_I32 : CK_I64;
}
ck_dtype ck_promote(ck_dtype a, ck_dtype b) {
  if (a == b || (unsigned)a >= CK_NDTYPES || (unsigned)b >= CK_NDTYPES) return a;
  if (ck_dtype_is_complex(a) || ck_dtype_is_complex(b)) { /* the complex dtype of the components' promotion */
    const ck_dtype r = ck_promote(ck_complex_part(a), ck_complex_part(b));
    return r == CK_F64 || (!ck_dtype_is_float(r) && r != CK_I32 && DTYPES[r].bits > 24) ? CK_C128 : CK_C64;
  }
  if (DTYPES[a].cls == CLASS_BOOL) return b;
  if (DTYPES[b].cls == CLASS_BOOL) return a;
  const bool fa = ck_dtype_is_float(a), fb = ck_dtype_is_float(b);
  if (fa && fb) {
    if (DTYPES[a].size != DTYPES[b].size) return DTYPES[a].size > DTYPES[b].size ? a : b;
    return CK_F32; /* f16 with bf16 */
  }
  if (!fa && !fb) {
    if (DTYPES[a].cls == DTYPES[b].cls) return DTYPES[a].size >= DTYPES[b].size ? a : b;
    const ck_dtype s = DTYPES[a].cls == CLASS_INT ? a : b, u = s == a ? b : a;
    if (DTYPES[s].size > DTYPES[u].size) return s;
    return signed_of_size(2 * DTYPES[u].size);
  }
  const ck_dtype f = fa ? a : b, n = fa ? b : a;
  if (n == CK_I32 || DTYPES[f].bits >= DTYPES[n].bits) return f;
  return DTYPES[CK_F32].bits >= DTYPES[n].bits ? CK_F32 : CK_F64;
}
