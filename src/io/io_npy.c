/*
 * io_npy.c — NumPy .npy files, written by hand.
 *
 * Why no library: a .npy file is the magic "\x93NUMPY", a version byte pair, a 2-byte (1.0) or 4-byte
 * (2.0, 3.0) little-endian header length, a Python dict literal of three keys, and the raw elements:
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }      padded with spaces, ends in '\n'
 * (3.0 only allows UTF-8 in the header, which matters for structured dtypes, refused here anyway).
 * Reading that needs a small literal parser and writing it one snprintf; the data then goes straight
 * between the file and the array's memory, with no copy in between.
 *
 * Reading accepts 1.0-3.0, either byte order ('<', '>', '|', '='), C or Fortran order (Fortran loads as a
 * permuted view of the data as stored), every real numeric dtype (converted as ck_io.h states) and complex64/128
 * (as stored; issue 35). It refuses, naming the file: bad magic or version, a malformed header, object/string/structured
 * dtypes, more dims than cukern has, and a data size that differs from what the header promises (either
 * way). Writing uses version 1.0 (2.0 if the header outgrows 64 KiB), little-endian, C order, or Fortran
 * order when the array already lies column-major, with the header padded to 64 bytes as NumPy does.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ck_io.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAX_HEADER (1 << 20) /* NumPy's own limit is 10000 bytes; anything near this is not a header */

static bool host_little(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

// ---------------------------------------------------------------- writing

size_t ck_npy_header(char *buf, size_t n, ck_dtype dt, int ndim, const int64_t *shape, bool fortran) {
  char dict[512], shp[256] = "(";
  size_t k = 1;
  for (int i = 0; i < ndim; ++i)
    k += (size_t)snprintf(shp + k, sizeof shp - k, i ? ", %lld" : "%lld", (long long)shape[i]);
  snprintf(shp + k, sizeof shp - k, ndim == 1 ? ",)" : ")");
  /* '<f4' ...; one-byte types have no byte order ('|b1', '|u1', '|i1', as NumPy writes them) */
  const char kind = dt == CK_BOOL ? 'b' : ck_dtype_is_complex(dt) ? 'c' : ck_dtype_is_float(dt) ? 'f' : ck_dtype_is_signed(dt) ? 'i' : 'u';
  int dl = snprintf(dict, sizeof dict, "{'descr': '%c%c%zu', 'fortran_order': %s, 'shape': %s, }",
                    ck_dtype_size(dt) == 1 ? '|' : host_little() ? '<' : '>', kind, ck_dtype_size(dt),
                    fortran ? "True" : "False", shp);
  size_t pre = 10, total = (pre + (size_t)dl + 1 + 63) / 64 * 64;
  if (total - pre > 65535) { /* version 2.0: 4-byte length */
    pre = 12;
    total = (pre + (size_t)dl + 1 + 63) / 64 * 64;
  }
  if (total > n) return 0;
  size_t hl = total - pre;
  memcpy(buf, NPY_MAGIC, 6);
  buf[6] = pre == 10 ? 1 : 2;
  buf[7] = 0;
  for (size_t i = 0; i < pre - 8; ++i) buf[8 + i] = (char)((hl >> (8 * i)) & 0xff);
  memcpy(buf + pre, dict, (size_t)dl);
  memset(buf + pre + dl, ' ', hl - (size_t)dl - 1);
  buf[total - 1] = '\n';
  return total;
}

ck_status ck_npy_save(ck_ctx *ctx, const char *path, const ck_tensor *t) {
  ck_status st;
  ck_tensor h = {0};
  ck_io_tmp tmp;
  bool fortran;
  char hdr[1024];
  if ((st = ck_io_host_layout(ctx, t, 'A', &h, &fortran))) return st;
  size_t hl = ck_npy_header(hdr, sizeof hdr, h.dtype, t->ndim, t->shape, fortran);
  if (!hl) st = ck_error(ctx, CK_ERR_INTERNAL, "%s: .npy header too long", path);
  if (!st && !(st = ck_io_tmp_open(ctx, path, &tmp))) {
    if ((st = ck_io_write_all(ctx, path, tmp.fd, hdr, hl)) ||
        (st = ck_io_write_all(ctx, path, tmp.fd, ck_numel(&h) ? ck_data(&h) : hdr,
                              (size_t)ck_numel(&h) * ck_dtype_size(h.dtype))))
      ck_io_tmp_abort(&tmp);
    else st = ck_io_tmp_commit(ctx, path, &tmp);
  }
  ck_release(&h);
  return st;
}

// ---------------------------------------------------------------- the header's dict literal

typedef struct {
  const char *p, *end, *what;
  ck_ctx *ctx;
} lexer;

static void skip_ws(lexer *x) {
  while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' || *x->p == '\n' || *x->p == '\r')) ++x->p;
}

static ck_status bad_header(lexer *x, const char *expected) {
  char near[24];
  size_t k = 0;
  for (const char *q = x->p; q < x->end && k < sizeof near - 1; ++q) near[k++] = isprint((unsigned char)*q) ? *q : '?';
  near[k] = 0;
  return ck_error(x->ctx, CK_ERR_IO, "%s: malformed .npy header: expected %s at \"%s\"", x->what, expected,
                  x->p < x->end ? near : "(end of header)");
}

static bool accept(lexer *x, char c) {
  skip_ws(x);
  if (x->p < x->end && *x->p == c) {
    ++x->p;
    return true;
  }
  return false;
}

/* A quoted string into out. `field` names it in errors ("'descr'", "a key"). The header is text: a NUL or other
 * control byte would end the C string early and let "<f4\0junk" pass as "<f4", so any byte that is not
 * printable ASCII is refused (NumPy's own headers are ASCII; 3.0's UTF-8 only serves structured dtypes,
 * refused anyway). */
static ck_status parse_string(lexer *x, const char *field, char *out, size_t n) {
  skip_ws(x);
  if (x->p >= x->end || (*x->p != '\'' && *x->p != '"')) return bad_header(x, "a quoted string");
  char q = *x->p++;
  size_t k = 0;
  while (x->p < x->end && *x->p != q) {
    unsigned char c = (unsigned char)*x->p;
    if (c < 0x20 || c > 0x7e)
      return ck_error(x->ctx, CK_ERR_IO,
                      "%s: malformed .npy header: %s holds the byte 0x%02x after \"%.*s\"; the header must be "
                      "printable text", x->what, field, c, (int)k, out);
    if (k + 1 >= n) return bad_header(x, "a shorter string");
    out[k++] = *x->p++;
  }
  if (x->p >= x->end) return bad_header(x, "a closing quote");
  ++x->p;
  out[k] = 0;
  return CK_OK;
}

static ck_status parse_shape(lexer *x, int *ndim, int64_t *shape) {
  *ndim = 0;
  if (!accept(x, '(')) return bad_header(x, "a shape tuple '(...)'");
  for (;;) {
    if (accept(x, ')')) return CK_OK;
    skip_ws(x);
    if (x->p >= x->end || !isdigit((unsigned char)*x->p)) return bad_header(x, "a non-negative integer dim");
    int64_t v = 0;
    while (x->p < x->end && isdigit((unsigned char)*x->p)) {
      if (v > ((int64_t)1 << 56)) return ck_error(x->ctx, CK_ERR_IO, "%s: .npy header: a dim is too large", x->what);
      v = v * 10 + (*x->p++ - '0');
    }
    if (x->p < x->end && (*x->p == 'L' || *x->p == 'l')) ++x->p; /* Python 2's long literals */
    if (*ndim == CK_MAX_DIMS)
      return ck_error(x->ctx, CK_ERR_IO, "%s: the array has more than %d dims (cukern's limit)", x->what, CK_MAX_DIMS);
    shape[(*ndim)++] = v;
    if (accept(x, ')')) return CK_OK;
    if (!accept(x, ',')) return bad_header(x, "',' or ')' in the shape");
  }
}

/* descr "<f8" -> file type and byte order; anything else is refused with a reason. */
static ck_status parse_descr(ck_ctx *ctx, const char *what, const char *d, ck_ftype *ft, bool *swap) {
  static const struct {
    const char *code;
    ck_ftype ft;
  } CODES[] = {{"b1", CK_FT_BOOL}, {"?", CK_FT_BOOL}, {"i1", CK_FT_I8},  {"u1", CK_FT_U8},  {"i2", CK_FT_I16},
               {"u2", CK_FT_U16},  {"i4", CK_FT_I32}, {"u4", CK_FT_U32}, {"i8", CK_FT_I64}, {"u8", CK_FT_U64},
               {"f2", CK_FT_F16},  {"f4", CK_FT_F32}, {"f8", CK_FT_F64}, {"c8", CK_FT_C64}, {"c16", CK_FT_C128}};
  const char *c = d;
  char order = '=';
  if (*c == '<' || *c == '>' || *c == '|' || *c == '=') order = *c++;
  for (size_t i = 0; i < sizeof CODES / sizeof *CODES; ++i)
    if (strcmp(c, CODES[i].code) == 0) {
      *ft = CODES[i].ft;
      *swap = ck_ftype_size(*ft) > 1 && (order == '<' || order == '>') && (order == '<') != host_little();
      return CK_OK;
    }
  const char *why = "not a numeric type cukern reads";
  switch (*c) {
  case 'O': why = "an object array (pickled Python objects) cannot be loaded"; break;
  case 'c': why = "only complex64 and complex128 are supported"; break;
  case 'U': case 'S': case 'a': why = "string data is not supported"; break;
  case 'V': why = "void/structured data is not supported"; break;
  case 'M': case 'm': why = "datetime data is not supported"; break;
  case 'f': why = "only float16/32/64 are supported"; break;
  default: break;
  }
  return ck_error(ctx, CK_ERR_IO, "%s: unsupported dtype '%s': %s", what, d, why);
}

typedef struct {
  int major, minor;
  char descr[64];
  ck_ftype ft;
  bool swap, fortran;
  int ndim;
  int64_t shape[CK_MAX_DIMS];
} npy_header;

static ck_status read_header(ck_ctx *ctx, ck_io_src *s, npy_header *h) {
  unsigned char pre[12];
  ck_status st;
  memset(h, 0, sizeof *h);
  if (s->size < 10)
    return ck_error(ctx, CK_ERR_IO, "%s: not a .npy file: only %lld bytes (a .npy header alone is at least 10)",
                    s->what, (long long)s->size);
  if ((st = ck_io_read_exact(ctx, s, pre, 8, "the magic string"))) return st;
  if (memcmp(pre, NPY_MAGIC, 6) != 0) return ck_error(ctx, CK_ERR_IO, "%s: not a .npy file (bad magic: expected \\x93NUMPY)", s->what);
  h->major = pre[6];
  h->minor = pre[7];
  if (h->major < 1 || h->major > 3 || h->minor != 0)
    return ck_error(ctx, CK_ERR_IO, "%s: unsupported .npy format version %d.%d (1.0, 2.0 and 3.0 are known)", s->what,
                    h->major, h->minor);
  size_t lb = h->major == 1 ? 2 : 4, hl = 0;
  if ((st = ck_io_read_exact(ctx, s, pre + 8, lb, "the header length"))) return st;
  for (size_t i = 0; i < lb; ++i) hl |= (size_t)pre[8 + i] << (8 * i);
  if (hl > NPY_MAX_HEADER) return ck_error(ctx, CK_ERR_IO, "%s: .npy header length %zu is implausible", s->what, hl);
  if ((int64_t)hl > s->size - s->pos)
    return ck_error(ctx, CK_ERR_IO, "%s: truncated: the .npy header is %zu bytes, the file has %lld after its start", s->what,
                    hl, (long long)(s->size - s->pos));
  char *text = malloc(hl + 1);
  if (!text) return ck_error(ctx, CK_ERR_OOM, "%s: out of host memory", s->what);
  if ((st = ck_io_read_exact(ctx, s, text, hl, "the header"))) goto done;
  text[hl] = 0;
  lexer x = {text, text + hl, s->what, ctx};
  bool seen[3] = {false, false, false};
  if (!accept(&x, '{')) { st = bad_header(&x, "'{'"); goto done; }
  while (!accept(&x, '}')) {
    char key[32], val[128];
    if ((st = parse_string(&x, "a key", key, sizeof key))) goto done;
    if (!accept(&x, ':')) { st = bad_header(&x, "':'"); goto done; }
    if (strcmp(key, "descr") == 0) {
      skip_ws(&x);
      if (x.p < x.end && *x.p == '[') {
        st = ck_error(ctx, CK_ERR_IO, "%s: unsupported dtype: a structured (record) dtype", s->what);
        goto done;
      }
      if ((st = parse_string(&x, "'descr'", h->descr, sizeof h->descr))) goto done;
      seen[0] = true;
    } else if (strcmp(key, "fortran_order") == 0) {
      skip_ws(&x);
      size_t left = (size_t)(x.end - x.p);
      if (left >= 4 && memcmp(x.p, "True", 4) == 0) h->fortran = true, x.p += 4;
      else if (left >= 5 && memcmp(x.p, "False", 5) == 0) h->fortran = false, x.p += 5;
      else { st = bad_header(&x, "True or False"); goto done; }
      seen[1] = true;
    } else if (strcmp(key, "shape") == 0) {
      if ((st = parse_shape(&x, &h->ndim, h->shape))) goto done;
      seen[2] = true;
    } else {
      snprintf(val, sizeof val, "only 'descr', 'fortran_order' and 'shape' (found '%s')", key);
      st = bad_header(&x, val);
      goto done;
    }
    if (!accept(&x, ',')) {
      if (accept(&x, '}')) break;
      st = bad_header(&x, "',' or '}'");
      goto done;
    }
  }
  skip_ws(&x);
  if (x.p != x.end) { st = bad_header(&x, "only padding after the dict"); goto done; }
  if (!seen[0] || !seen[1] || !seen[2]) {
    st = ck_error(ctx, CK_ERR_IO, "%s: malformed .npy header: the key '%s' is missing", s->what,
                  !seen[0] ? "descr" : !seen[1] ? "fortran_order" : "shape");
    goto done;
  }
  st = parse_descr(ctx, s->what, h->descr, &h->ft, &h->swap);
done:
  free(text);
  return st;
}

// ---------------------------------------------------------------- reading

ck_status ck_npy_read(ck_ctx *ctx, ck_io_src *s, ck_device dev, ck_tensor *out, ck_io_info *info) {
  npy_header h;
  ck_status st;
  ck_tensor t = {0};
  char sh[96];
  if ((st = read_header(ctx, s, &h))) return st;
  ck_dtype dt = ck_ftype_target(h.ft);
  if ((st = ck_check_shape(ctx, s->what, h.ndim, h.shape, dt))) return st;
  bool fortran = h.fortran && h.ndim >= 2;
  int64_t stored[CK_MAX_DIMS], numel = 1;
  for (int i = 0; i < h.ndim; ++i) {
    stored[i] = h.shape[fortran ? h.ndim - 1 - i : i];
    numel *= h.shape[i];
  }
  int64_t need = numel * (int64_t)ck_ftype_size(h.ft), have = s->size - s->pos;
  if (need != have)
    return ck_error(ctx, CK_ERR_IO, "%s: %s: the header says %s %s, %lld bytes of data; the file holds %lld", s->what,
                    need > have ? "truncated" : "size mismatch (bytes after the data)",
                    ck_shape_str(h.ndim, h.shape, sh, sizeof sh), h.descr, (long long)need, (long long)have);
  if ((st = ck_empty(ctx, &t, dt, h.ndim, stored, CK_DEV_HOST))) return st;
  if (numel && (st = ck_io_read_data(ctx, s, ck_data(&t), dt, h.ft, h.swap, numel))) {
    ck_release(&t);
    return st;
  }
  if (info) {
    memset(info, 0, sizeof *info);
    snprintf(info->format, sizeof info->format, "npy");
    snprintf(info->version, sizeof info->version, "%d.%d", h.major, h.minor);
    snprintf(info->stored, sizeof info->stored, "%s", h.descr);
    if (strcmp(ck_ftype_name(h.ft), ck_dtype_name(dt)) != 0)
      snprintf(info->converted, sizeof info->converted, "%s -> %s", ck_ftype_name(h.ft), ck_dtype_name(dt));
    info->fortran = h.fortran;
  }
  return ck_io_place(ctx, &t, fortran, dev, out);
}

ck_status ck_npy_load(ck_ctx *ctx, const char *path, ck_device dev, ck_tensor *out, ck_io_info *info) {
  int fd;
  ck_io_src s;
  ck_status st;
  if ((st = ck_io_open_read(ctx, path, &fd))) return st;
  if (!(st = ck_io_src_fd(ctx, &s, fd, path))) st = ck_npy_read(ctx, &s, dev, out, info);
  close(fd);
  return st;
}
