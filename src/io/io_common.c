/*
 * io_common.c — what every file format shares: the element types files hold and their exact conversion to
 * cukern's dtypes, reading raw data from a file or a zip member, placing loaded data on a device (as a
 * permuted view for column-major files), choosing the layout to save, and saving through a temporary file
 * that is synced and renamed into place (see ck_io.h for the rules).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ck_io.h"

// ---------------------------------------------------------------- element types and conversions

static const struct {
  const char *name;
  size_t size;
} FTYPES[CK_NFTYPES] = {{"bool", 1}, {"i8", 1},  {"u8", 1},  {"i16", 2}, {"u16", 2},  {"i32", 4},
                        {"u32", 4},  {"i64", 8}, {"u64", 8}, {"f16", 2}, {"f32", 4}, {"f64", 8},
                        {"c64", 8},  {"c128", 16}};

size_t ck_ftype_size(ck_ftype ft) { return (unsigned)ft < CK_NFTYPES ? FTYPES[ft].size : 0; }
const char *ck_ftype_name(ck_ftype ft) { return (unsigned)ft < CK_NFTYPES ? FTYPES[ft].name : "?"; }

/* f16 stays f16 once the dtype is usable (ck_dtype_parse knows it); until then it widens to f32. */
static bool have_f16(void) {
  ck_dtype d;
  return ck_dtype_parse("f16", &d) && d == CK_F16;
}

ck_dtype ck_ftype_target(ck_ftype ft) {
  switch (ft) {
  case CK_FT_F64: return CK_F64;
  case CK_FT_F32: return CK_F32;
  case CK_FT_C64: return CK_C64;
  case CK_FT_C128: return CK_C128;
  case CK_FT_F16: return have_f16() ? CK_F16 : CK_F32;
  case CK_FT_BOOL: return CK_BOOL; /* (issue 32: these five kept their type; before, they widened to i32) */
  case CK_FT_I8: return CK_I8;
  case CK_FT_U8: return CK_U8;
  case CK_FT_I16: return CK_I16;
  case CK_FT_U32: return CK_U32;
  case CK_FT_I64: case CK_FT_U64: return CK_I64; /* u64: exact below 2^63, else an error */
  default: return CK_I32;                        /* i32, and u16 widened (exact) */
  }
}

ck_ftype ck_ftype_of(ck_dtype dt) {
  switch (dt) {
  case CK_F64: return CK_FT_F64;
  case CK_C64: return CK_FT_C64;
  case CK_C128: return CK_FT_C128;
  case CK_I32: return CK_FT_I32;
  case CK_F16: return CK_FT_F16;
  case CK_BOOL: return CK_FT_BOOL;
  case CK_U8: return CK_FT_U8;
  case CK_I8: return CK_FT_I8;
  case CK_I16: return CK_FT_I16;
  case CK_U32: return CK_FT_U32;
  case CK_I64: return CK_FT_I64;
  default: return CK_FT_F32;
  }
}

/* n elements of `size` bytes reversed in place; a complex element is two numbers, each reversed (size is the
 * component's: swap_unit). */
static size_t swap_unit(ck_ftype ft) { return ck_ftype_size(ft) / (ft == CK_FT_C64 || ft == CK_FT_C128 ? 2 : 1); }
static void swap_bytes(void *p, size_t size, size_t n) {
  unsigned char *b = p;
  if (size == 2)
    for (size_t i = 0; i < n; ++i) { uint16_t v; memcpy(&v, b + 2 * i, 2); v = __builtin_bswap16(v); memcpy(b + 2 * i, &v, 2); }
  else if (size == 4)
    for (size_t i = 0; i < n; ++i) { uint32_t v; memcpy(&v, b + 4 * i, 4); v = __builtin_bswap32(v); memcpy(b + 4 * i, &v, 4); }
  else if (size == 8)
    for (size_t i = 0; i < n; ++i) { uint64_t v; memcpy(&v, b + 8 * i, 8); v = __builtin_bswap64(v); memcpy(b + 8 * i, &v, 8); }
}

/* IEEE binary16 -> binary32, exact (subnormals, infinities and NaN payloads included). */
static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0x1f) bits = sign | 0x7f800000u | (man << 13);
  else if (exp) bits = sign | ((exp + 112) << 23) | (man << 13);
  else if (!man) bits = sign;
  else { /* subnormal: normalise */
    int e = -1;
    do { ++e; man <<= 1; } while (!(man & 0x400));
    bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static bool fits_signed(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }
static bool fits_unsigned(uint64_t v) { return v <= (uint64_t)INT32_MAX; }

/* Integers of every width into i32: exact, or an error naming the first value that does not fit. */
#define TO_I32(T, SIGNED)                                                                                     \
  for (size_t i = 0; i < n; ++i) {                                                                            \
    T v;                                                                                                      \
    memcpy(&v, s + i * sizeof(T), sizeof(T));                                                                 \
    if (SIGNED ? !fits_signed((int64_t)v) : !fits_unsigned((uint64_t)v)) {                                    \
      bad = (int64_t)i;                                                                                       \
      if (SIGNED) snprintf(val, sizeof val, "%lld", (long long)v);                                            \
      else snprintf(val, sizeof val, "%llu", (unsigned long long)v);                                          \
      goto range;                                                                                             \
    }                                                                                                         \
    d[i] = (int32_t)v;                                                                                        \
  }

ck_status ck_io_convert(ck_ctx *ctx, const char *what, void *dst, ck_dtype dt, void *src, ck_ftype ft, bool swap,
                        size_t n, int64_t first) {
  size_t fs = ck_ftype_size(ft);
  const unsigned char *s = src;
  char val[32];
  int64_t bad = -1;
  if (swap && fs > 1) swap_bytes(src, swap_unit(ft), n * (fs / swap_unit(ft))); /* the caller's scratch, in place */
  if (dt == CK_BOOL && ft == CK_FT_BOOL) { /* any non-zero byte is true; cukern's bools are 0 or 1 */
    for (size_t i = 0; i < n; ++i) ((unsigned char *)dst)[i] = s[i] != 0;
    return CK_OK;
  }
  if (dt == CK_I64 && ft == CK_FT_U64) {
    int64_t *d = dst;
    for (size_t i = 0; i < n; ++i) {
      uint64_t v;
      memcpy(&v, s + 8 * i, 8);
      if (v > (uint64_t)INT64_MAX) {
        snprintf(val, sizeof val, "%llu", (unsigned long long)v);
        bad = (int64_t)i;
        goto range;
      }
      d[i] = (int64_t)v;
    }
    return CK_OK;
  }
  if (ck_ftype_of(dt) == ft && ck_dtype_size(dt) == fs) {
    if (dst != src) memcpy(dst, src, n * fs);
    return CK_OK;
  }
  if (dt == CK_I32) {
    int32_t *d = dst;
    switch (ft) {
    case CK_FT_BOOL: for (size_t i = 0; i < n; ++i) d[i] = s[i] != 0; return CK_OK;
    case CK_FT_I8: for (size_t i = 0; i < n; ++i) d[i] = (int8_t)s[i]; return CK_OK;
    case CK_FT_U8: for (size_t i = 0; i < n; ++i) d[i] = s[i]; return CK_OK;
    case CK_FT_I16: for (size_t i = 0; i < n; ++i) { int16_t v; memcpy(&v, s + 2 * i, 2); d[i] = v; } return CK_OK;
    case CK_FT_U16: for (size_t i = 0; i < n; ++i) { uint16_t v; memcpy(&v, s + 2 * i, 2); d[i] = v; } return CK_OK;
    case CK_FT_U32: TO_I32(uint32_t, 0) return CK_OK;
    case CK_FT_I64: TO_I32(int64_t, 1) return CK_OK;
    case CK_FT_U64: TO_I32(uint64_t, 0) return CK_OK;
    default: break;
    }
  } else if (dt == CK_F32 && ft == CK_FT_F16) {
    float *d = dst;
    for (size_t i = 0; i < n; ++i) {
      uint16_t v;
      memcpy(&v, s + 2 * i, 2);
      d[i] = half_to_float(v);
    }
    return CK_OK;
  }
  return ck_error(ctx, CK_ERR_INTERNAL, "%s: no conversion from %s to %s", what, ck_ftype_name(ft), ck_dtype_name(dt));
range:
  return ck_error(ctx, CK_ERR_IO,
                  "%s: %s value %s at element %lld does not fit in %s; convert it first "
                  "(NumPy: a.astype(np.float64), Octave: double(a))",
                  what, ck_ftype_name(ft), val, (long long)(first + bad + 1), ck_dtype_name(dt));
}

// ---------------------------------------------------------------- reading

ck_status ck_io_read_exact(ck_ctx *ctx, ck_io_src *s, void *buf, size_t n, const char *part) {
  size_t got = 0;
  ck_status st = s->read(ctx, s, buf, n, &got);
  if (st) return st;
  s->pos += (int64_t)got;
  if (got < n)
    return ck_error(ctx, CK_ERR_IO, "%s: truncated: %s needs %zu more bytes at offset %lld, the file ends after %zu",
                    s->what, part, n, (long long)(s->pos - (int64_t)got), got);
  return CK_OK;
}

ck_status ck_io_read_data(ck_ctx *ctx, ck_io_src *s, void *dst, ck_dtype dt, ck_ftype ft, bool swap, int64_t count) {
  size_t fs = ck_ftype_size(ft), ds = ck_dtype_size(dt);
  ck_status st;
  char part[96];
  snprintf(part, sizeof part, "the data (%lld elements of %zu bytes)", (long long)count, fs);
  if (fs == ds && ck_ftype_of(dt) == ft) { /* as stored: straight into the array */
    if ((st = ck_io_read_exact(ctx, s, dst, (size_t)count * fs, part))) return st;
    if (swap && fs > 1) swap_bytes(dst, swap_unit(ft), (size_t)count * (fs / swap_unit(ft)));
    return CK_OK;
  }
  enum { CHUNK = 1 << 16 }; /* elements per chunk */
  unsigned char *scratch = malloc(CHUNK * fs);
  if (!scratch) return ck_error(ctx, CK_ERR_OOM, "%s: out of host memory for a conversion buffer", s->what);
  st = CK_OK;
  for (int64_t done = 0; done < count && !st; done += CHUNK) {
    size_t k = (size_t)(count - done < CHUNK ? count - done : CHUNK);
    if (!(st = ck_io_read_exact(ctx, s, scratch, k * fs, part)))
      st = ck_io_convert(ctx, s->what, (char *)dst + (size_t)done * ds, dt, scratch, ft, swap, k, done);
  }
  free(scratch);
  return st;
}

static ck_status fd_read(ck_ctx *ctx, ck_io_src *s, void *buf, size_t n, size_t *got) {
  int fd = (int)(intptr_t)s->ud;
  size_t k = 0;
  while (k < n) {
    size_t want = n - k > ((size_t)1 << 30) ? (size_t)1 << 30 : n - k;
    ssize_t r = read(fd, (char *)buf + k, want);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ck_error(ctx, CK_ERR_IO, "%s: read failed: %s", s->what, strerror(errno));
    if (r == 0) break;
    k += (size_t)r;
  }
  *got = k;
  return CK_OK;
}

ck_status ck_io_src_fd(ck_ctx *ctx, ck_io_src *s, int fd, const char *what) {
  struct stat sb;
  memset(s, 0, sizeof *s);
  s->what = what;
  if (fstat(fd, &sb) != 0) return ck_error(ctx, CK_ERR_IO, "%s: %s", what, strerror(errno));
  if (S_ISDIR(sb.st_mode)) return ck_error(ctx, CK_ERR_IO, "%s: is a directory", what);
  s->size = (int64_t)sb.st_size;
  s->read = fd_read;
  s->ud = (void *)(intptr_t)fd;
  return CK_OK;
}

ck_status ck_io_open_read(ck_ctx *ctx, const char *path, int *fd) {
  *fd = open(path, O_RDONLY | O_CLOEXEC);
  if (*fd < 0) return ck_error(ctx, CK_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  return CK_OK;
}

// ---------------------------------------------------------------- layouts

static void reverse_perm(int nd, int *perm) {
  for (int i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
}

ck_status ck_io_place(ck_ctx *ctx, ck_tensor *h, bool fortran, ck_device dev, ck_tensor *out) {
  ck_status st = CK_OK;
  ck_tensor d = {0};
  if (!ck_dev_eq(dev, CK_DEV_HOST)) {
    st = ck_to(ctx, &d, h, dev, h->dtype);
    ck_release(h);
    if (st) return st;
  } else {
    d = *h;
    memset(h, 0, sizeof *h);
  }
  if (!fortran || d.ndim < 2) {
    *out = d;
    return CK_OK;
  }
  int perm[CK_MAX_DIMS];
  reverse_perm(d.ndim, perm);
  st = ck_view_permute(ctx, out, &d, perm);
  ck_release(&d);
  return st;
}

static ck_status host_layout(ck_ctx *ctx, const ck_tensor *t, char order, ck_tensor *out, bool *fortran) {
  ck_status st;
  ck_tensor rev = {0};
  int perm[CK_MAX_DIMS];
  *fortran = false;
  if (order != 'C' && t->ndim >= 2) {
    reverse_perm(t->ndim, perm);
    if ((st = ck_view_permute(ctx, &rev, t, perm))) return st;
    if (order == 'F' || (ck_is_contiguous(&rev) && !ck_is_contiguous(t))) {
      *fortran = true;
      st = ck_to(ctx, out, &rev, CK_DEV_HOST, t->dtype);
      ck_release(&rev);
      return st;
    }
    ck_release(&rev);
  }
  return ck_to(ctx, out, t, CK_DEV_HOST, t->dtype);
}

ck_status ck_io_host_layout(ck_ctx *ctx, const ck_tensor *t, char order, ck_tensor *out, bool *fortran) {
  ck_status st;
  ck_tensor h = {0};
  if ((st = ck_check_live(ctx, "save", t)) || (st = host_layout(ctx, t, order, &h, fortran))) return st;
  if (h.dtype != CK_BF16) {
    *out = h;
    return CK_OK;
  }
  st = ck_to(ctx, out, &h, CK_DEV_HOST, CK_F32); /* no file format here has bfloat16: f32 holds it exactly */
  ck_release(&h);
  return st;
}

// ---------------------------------------------------------------- saving through a temporary file

ck_status ck_io_tmp_open(ck_ctx *ctx, const char *path, ck_io_tmp *t) {
  t->fd = -1;
  if (!*path) return ck_error(ctx, CK_ERR_IO, "save: empty file name");
  if (snprintf(t->path, sizeof t->path, "%s.tmp-XXXXXX", path) >= (int)sizeof t->path)
    return ck_error(ctx, CK_ERR_IO, "%s: file name too long", path);
  t->fd = mkstemp(t->path);
  if (t->fd < 0) return ck_error(ctx, CK_ERR_IO, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
  mode_t mask = umask(022); /* mkstemp makes 0600; the result should get the usual 0666 & ~umask */
  umask(mask);
  if (fchmod(t->fd, 0666 & ~mask) != 0) {
    int e = errno;
    ck_io_tmp_abort(t);
    return ck_error(ctx, CK_ERR_IO, "%s: %s", path, strerror(e));
  }
  return CK_OK;
}

ck_status ck_io_write_all(ck_ctx *ctx, const char *path, int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n) {
    size_t want = n > ((size_t)1 << 30) ? (size_t)1 << 30 : n;
    ssize_t w = write(fd, p, want);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return ck_error(ctx, CK_ERR_IO, "%s: write failed: %s", path, w < 0 ? strerror(errno) : "no progress");
    p += w;
    n -= (size_t)w;
  }
  return CK_OK;
}

ck_status ck_io_tmp_commit(ck_ctx *ctx, const char *path, ck_io_tmp *t) {
  int e = 0;
  if (t->fd >= 0 && fsync(t->fd) != 0) e = errno;
  if (t->fd >= 0 && close(t->fd) != 0 && !e) e = errno;
  t->fd = -1;
  if (!e && rename(t->path, path) != 0) e = errno;
  if (e) {
    unlink(t->path);
    return ck_error(ctx, CK_ERR_IO, "%s: could not write it: %s (the previous file, if any, is unchanged)", path,
                    strerror(e));
  }
  return CK_OK;
}

void ck_io_tmp_abort(ck_io_tmp *t) {
  if (t->fd >= 0) close(t->fd);
  t->fd = -1;
  unlink(t->path);
}

ck_status ck_io_lacks(ck_ctx *ctx, const char *path, const char *ext, const char *lib) {
  return ck_error(ctx, CK_ERR_UNSUPPORTED,
                  "%s: %s needs %s, which this build of cukern lacked (install %s-dev and rebuild; .npy works "
                  "without it)",
                  path, ext, lib, lib);
}

// ---------------------------------------------------------------- lists of named arrays

ck_status ck_io_list_check_name(ck_ctx *ctx, const char *what, const ck_io_list *l, const char *name) {
  size_t n = strlen(name);
  if (n > CK_IO_NAME_MAX)
    return ck_error(ctx, CK_ERR_IO, "%s: a name of %zu bytes; at most %d are supported", what, n, CK_IO_NAME_MAX);
  for (int i = 0; i < l->n; ++i)
    if (strcmp(l->items[i].name, name) == 0)
      return ck_error(ctx, CK_ERR_IO, "%s appears twice in the file; which one is meant cannot be told (corrupt "
                                      "or hand-made file?)", what);
  return CK_OK;
}

ck_status ck_io_list_add(ck_ctx *ctx, const char *what, ck_io_list *l, const char *name, ck_tensor *t,
                         const ck_io_info *info) {
  ck_status st = ck_io_list_check_name(ctx, what, l, name);
  if (st) return st;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 8;
    ck_io_item *p = realloc(l->items, (size_t)cap * sizeof *p);
    if (!p) return ck_error(ctx, CK_ERR_OOM, "load: out of host memory");
    l->items = p;
    l->cap = cap;
  }
  ck_io_item *it = &l->items[l->n++];
  memset(it, 0, sizeof *it);
  snprintf(it->name, sizeof it->name, "%s", name);
  ck_view_of(&it->t, t);
  if (info) it->info = *info;
  return CK_OK;
}

void ck_io_list_free(ck_io_list *l) {
  for (int i = 0; i < l->n; ++i) ck_release(&l->items[i].t);
  free(l->items);
  memset(l, 0, sizeof *l);
}
