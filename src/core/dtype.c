/*
 * dtype.c — the dtypes: the table of kernels/dtypes.def (names, sizes, aliases, classes), NumPy's promotion
 * between them, and the views that show an array's storage as another dtype (a complex array as its real pairs
 * and back, any array as bytes). Split from tensor.c (shapes, strides and views) when the complex and FP8 rows
 * came (issues 35, 37).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck.h"

// ---------------------------------------------------------------- dtypes

enum { CLASS_FLOAT, CLASS_INT, CLASS_HALF, CLASS_UINT, CLASS_BOOL, CLASS_COMPLEX, CLASS_FP8 };
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
  return (unsigned)dt < CK_NDTYPES && (DTYPES[dt].cls == CLASS_FLOAT || DTYPES[dt].cls == CLASS_HALF || DTYPES[dt].cls == CLASS_FP8);
}
bool ck_dtype_is_signed(ck_dtype dt) { return (unsigned)dt < CK_NDTYPES && DTYPES[dt].cls == CLASS_INT; }
bool ck_dtype_is_complex(ck_dtype dt) { return (unsigned)dt < CK_NDTYPES && DTYPES[dt].cls == CLASS_COMPLEX; }
ck_dtype ck_complex_part(ck_dtype dt) { return dt == CK_C128 ? CK_F64 : dt == CK_C64 ? CK_F32 : dt; }

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

/* Any array as its bytes (NumPy's a.view(np.uint8)): u8, the same shape for 1-byte dtypes, else one more dim of
 * the element's size; shared storage. FP8 copies move as it (copy.c); specs compare bit patterns with it. */
ck_status ck_byte_view(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t) {
  ck_status st;
  char d[96];
  if ((st = ck_check_live(ctx, "view_as_bytes", t))) return st;
  const int64_t size = (int64_t)ck_dtype_size(t->dtype);
  if (size > 1 && t->ndim == CK_MAX_DIMS)
    return ck_error(ctx, CK_ERR_SHAPE, "view_as_bytes: %s has %d dims already (the most is %d)", ck_describe(t, d, sizeof d),
                    t->ndim, CK_MAX_DIMS);
  ck_view_of(out, t);
  out->dtype = CK_U8;
  if (size == 1) return CK_OK;
  out->offset = size * t->offset;
  for (int i = 0; i < t->ndim; ++i) out->stride[i] = size * t->stride[i];
  out->shape[t->ndim] = size;
  out->stride[t->ndim] = 1;
  out->ndim = t->ndim + 1;
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
  /* the complex kernels load an element whole (8 or 16 bytes): memory cukern allocated always is aligned so, but
   * memory wrapped from elsewhere (DLPack) may start mid-pair */
  if (ck_numel(r) > 0 && (uintptr_t)ck_data(r) % (2 * ck_dtype_size(r->dtype)) != 0)
    return ck_error(ctx, CK_ERR_SHAPE, "view_as_complex: %s starts at an address that is not a multiple of %zu bytes "
                    "(memory from outside cukern, e.g. DLPack); copy it first: a:contiguous()",
                    ck_describe(r, d, sizeof d), 2 * ck_dtype_size(r->dtype));
  ck_view_of(out, r);
  out->dtype = r->dtype == CK_F64 ? CK_C128 : CK_C64;
  out->ndim = r->ndim - 1;
  out->offset = r->offset / 2;
  for (int i = 0; i < out->ndim; ++i) out->stride[i] = r->stride[i] / 2; /* (exact but on size-1 dims) */
  return CK_OK;
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
