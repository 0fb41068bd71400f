/*
 * io_mat.c — Octave/MATLAB Level 5 MAT files through libmatio.
 *
 * Level 5 is what Octave writes with `save -mat`/`-v6` (uncompressed) and `-v7` (zlib-compressed
 * variables) and what MATLAB writes with `-v6`/`-v7`; libmatio reads and writes both (and reads -v7.3, the
 * HDF5 container, where Debian's build has HDF5). Data is column-major on file: a variable of dims
 * [d1 .. dn] loads as a permuted view of an array of dims [dn .. d1] holding the data as stored, i.e. the
 * correct logical array without a copy. Saving writes each array's elements in column-major order (a host
 * array already lying column-major is handed to libmatio as it is), as double, single or int32.
 *
 * Loading takes real numeric classes and logical (converted as ck_io.h states) and refuses complex,
 * sparse, char, cell, struct and object variables by name. libmatio reports problems through a log
 * function: ours keeps the last message for the error instead of letting the library print.
 *
 * Built only when mk/io.mk found libmatio (CK_HAVE_MATIO); otherwise .mat raises an error saying so.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ck_io.h"

#ifndef CK_HAVE_MATIO

bool ck_io_have_mat(void) { return false; }

ck_status ck_mat_save(ck_ctx *ctx, const char *path, int n, const char *const *names, const ck_tensor *const *ts,
                      bool compress) {
  return ck_io_lacks(ctx, path, ".mat", "libmatio");
}
ck_status ck_mat_load(ck_ctx *ctx, const char *path, ck_device dev, ck_io_list *out) {
  return ck_io_lacks(ctx, path, ".mat", "libmatio");
}

#else
#include <matio.h>
#include <zlib.h>

bool ck_io_have_mat(void) { return true; }

// ---------------------------------------------------------------- libmatio's messages

static _Thread_local char last_msg[512];

static void keep_message(int level, char *message) {
  (void)level;
  snprintf(last_msg, sizeof last_msg, "%s", message ? message : "");
}

static void quiet_matio(void) {
  static int done;
  if (!done) Mat_LogInitFunc("cukern", keep_message);
  done = 1;
  last_msg[0] = 0;
}

static const char *matio_says(void) { return last_msg[0] ? last_msg : "no details from libmatio"; }

// ---------------------------------------------------------------- classes

static const struct {
  enum matio_classes cls;
  ck_ftype ft;
  const char *name;
} CLASSES[] = {{MAT_C_DOUBLE, CK_FT_F64, "double"}, {MAT_C_SINGLE, CK_FT_F32, "single"}, {MAT_C_INT8, CK_FT_I8, "int8"},
               {MAT_C_UINT8, CK_FT_U8, "uint8"},     {MAT_C_INT16, CK_FT_I16, "int16"},   {MAT_C_UINT16, CK_FT_U16, "uint16"},
               {MAT_C_INT32, CK_FT_I32, "int32"},    {MAT_C_UINT32, CK_FT_U32, "uint32"}, {MAT_C_INT64, CK_FT_I64, "int64"},
               {MAT_C_UINT64, CK_FT_U64, "uint64"}};

/* The MATLAB class a dtype is saved as (bool: uint8 with the logical flag; f16 was widened to single before). */
static void mat_class_of(ck_dtype dt, enum matio_classes *cls, enum matio_types *typ) {
  switch (dt) {
  case CK_F64: *cls = MAT_C_DOUBLE, *typ = MAT_T_DOUBLE; break;
  case CK_I32: *cls = MAT_C_INT32, *typ = MAT_T_INT32; break;
  case CK_BOOL: case CK_U8: *cls = MAT_C_UINT8, *typ = MAT_T_UINT8; break;
  case CK_I8: *cls = MAT_C_INT8, *typ = MAT_T_INT8; break;
  case CK_I16: *cls = MAT_C_INT16, *typ = MAT_T_INT16; break;
  case CK_U32: *cls = MAT_C_UINT32, *typ = MAT_T_UINT32; break;
  case CK_I64: *cls = MAT_C_INT64, *typ = MAT_T_INT64; break;
  default: *cls = MAT_C_SINGLE, *typ = MAT_T_SINGLE; break;
  }
}

static const char *class_name(enum matio_classes c) {
  switch (c) {
  case MAT_C_CELL: return "cell array";
  case MAT_C_STRUCT: return "struct";
  case MAT_C_OBJECT: return "object";
  case MAT_C_CHAR: return "char array";
  case MAT_C_SPARSE: return "sparse matrix";
  case MAT_C_FUNCTION: return "function handle";
  case MAT_C_OPAQUE: return "opaque object";
  case MAT_C_EMPTY: return "empty value";
  default: return "value of an unknown class";
  }
}

// ---------------------------------------------------------------- dims against the data, before libmatio reads

/* libmatio sizes a numeric variable's data by its dims alone and reads that many elements, whatever the data
 * element says it holds: dims edited to 1x1 load the first element of a 3x4 array, dims edited to 0xN an empty
 * array, both without a word. So before libmatio reads anything, each numeric variable's dims are checked
 * against the byte count in its data element's tag, read from the file here.
 *
 * Level 5 layout (as libmatio walks it): a 128-byte header ending in the endian mark "IM" (as written on a
 * little-endian machine), then elements, each a tag (type, byte count) and its bytes; the next element follows
 * right after. A variable is an miMATRIX element -- array flags (tag + 8 bytes), dims (miINT32 tag + int32s
 * padded to 8 bytes), name (miINT8; up to 4 bytes packed into the tag), then the real data element -- or (-v7)
 * such an element zlib-compressed inside an miCOMPRESSED element. Only the first KiB of each variable is read
 * (inflated) here: it holds everything up to the data tag for any variable that the checks after this pass
 * accept (at most 8 dims, a name of at most CK_IO_NAME_MAX bytes). Dims and name tags claiming more than that
 * are refused here already, before libmatio allocates what they claim. */

enum { MI_INT8 = 1, MI_INT32 = 5, MI_UINT32 = 6, MI_MATRIX = 14, MI_COMPRESSED = 15 };
enum { MX_DOUBLE = 6, MX_UINT64 = 15, MX_OPAQUE = 17 }; /* the numeric classes are 6..15 */
enum { HEAD_BYTES = 1024 };

static size_t mi_size(uint32_t type) {
  static const unsigned char SIZES[] = {0, 1, 1, 2, 2, 4, 4, 4, 0, 8, 0, 0, 8, 8}; /* miINT8 .. miUINT64 */
  return type < sizeof SIZES ? SIZES[type] : 0;
}

static uint32_t rd32(const unsigned char *p, bool swap) {
  uint32_t v;
  memcpy(&v, p, 4);
  return swap ? __builtin_bswap32(v) : v;
}

static size_t pad8(size_t n) { return (n + 7) / 8 * 8; }

/* Up to n bytes of the start of the zlib stream at [at, at + len) of the file, inflated. */
static size_t inflate_head(int fd, int64_t at, int64_t len, unsigned char *out, size_t n) {
  z_stream z;
  unsigned char in[4096];
  memset(&z, 0, sizeof z);
  if (inflateInit(&z) != Z_OK) return 0;
  z.next_out = out;
  z.avail_out = (uInt)n;
  int r = Z_OK;
  while (z.avail_out && len > 0 && r == Z_OK) {
    ssize_t got = pread(fd, in, len < (int64_t)sizeof in ? (size_t)len : sizeof in, at);
    if (got <= 0) break;
    at += got;
    len -= got;
    z.next_in = in;
    z.avail_in = (uInt)got;
    r = inflate(&z, Z_NO_FLUSH);
  }
  size_t done = n - z.avail_out;
  inflateEnd(&z);
  return done;
}

/* The variable whose miMATRIX content (after its tag) starts b: `have` bytes of it here, `all` (or more) in the
 * file. Non-numeric classes, and headers longer than what was read, are left to libmatio and check_var. */
static ck_status check_head(ck_ctx *ctx, const char *path, const unsigned char *b, size_t have, uint64_t all,
                            bool swap, bool compressed) {
  if (have < 24) return CK_OK;
  uint32_t ftype = rd32(b, swap), cls = rd32(b + 8, swap) & 0xff;
  /* libmatio takes the flags from an miUINT32 tag (uncompressed also miINT32); otherwise the class is empty */
  if (!(ftype == MI_UINT32 || (!compressed && ftype == MI_INT32))) cls = 0;
  if (compressed && cls == MX_OPAQUE) return CK_OK; /* no dims or name where libmatio reads those */
  if (rd32(b + 16, swap) != MI_INT32) return CK_OK; /* libmatio refuses such dims itself */
  /* libmatio allocates and reads whatever the dims and name tags claim before anything else looks at them */
  uint32_t dbytes = rd32(b + 20, swap);
  if (dbytes > HEAD_BYTES)
    return ck_error(ctx, CK_ERR_IO, "%s: a variable's dims claim %u bytes (%u dims; corrupt file?)", path, dbytes,
                    dbytes / 4);
  int rank = (int)(dbytes / 4);
  size_t at = 24 + pad8(dbytes);
  if (at + 8 > have) return CK_OK;
  char name[CK_IO_NAME_MAX + 1] = "?";
  uint32_t ntag = rd32(b + at, swap);
  size_t nlen = 0;
  const unsigned char *np = NULL;
  if (ntag == MI_INT8) { /* the name in its own element, padded to 8 bytes */
    uint32_t len = rd32(b + at + 4, swap);
    if (len > CK_IO_NAME_MAX)
      return ck_error(ctx, CK_ERR_IO, "%s: a variable's name claims %u bytes; at most %d are supported (corrupt "
                                      "file?)", path, len, CK_IO_NAME_MAX);
    np = b + at + 8;
    nlen = len;
    at += 8 + pad8(len);
  } else { /* packed into the tag (1-4 bytes), or no name libmatio knows: either way 8 bytes */
    if ((ntag & 0xffff) == MI_INT8 && (ntag >> 16) >= 1 && (ntag >> 16) <= 4) np = b + at + 4, nlen = ntag >> 16;
    at += 8;
  }
  if (at + 8 > have || (np && np + nlen > b + have)) {
    if (have < all) return CK_OK; /* a header longer than was read: check_var refuses such dims */
    return ck_error(ctx, CK_ERR_IO, "%s: a variable's header runs past its end (corrupt file?)", path);
  }
  if (cls < MX_DOUBLE || cls > MX_UINT64 || rank > CK_MAX_DIMS) return CK_OK; /* check_var refuses these by name */
  int64_t dims[CK_MAX_DIMS];
  for (int i = 0; i < rank; ++i) dims[i] = (int32_t)rd32(b + 24 + 4 * i, swap);
  for (size_t i = 0; np && i < nlen; ++i) name[i] = isprint(np[i]) ? (char)np[i] : '?';
  if (np) name[nlen] = 0;
  /* the data tag: type and byte count, or (small data element) both packed into one word */
  uint32_t w = rd32(b + at, swap), type = w & 0xff;
  uint64_t bytes = (w >> 16) ? (w >> 16) : rd32(b + at + 4, swap);
  size_t es = mi_size(type);
  char sh[160];
  ck_shape_str(rank, dims, sh, sizeof sh);
  if (!compressed && at + 8 + bytes > all)
    return ck_error(ctx, CK_ERR_IO, "%s: variable '%s': its data element claims %llu bytes, past the variable's end "
                                    "(corrupt file?)", path, name, (unsigned long long)bytes);
  if (!es)
    return ck_error(ctx, CK_ERR_IO, "%s: variable '%s': its data element has type %u, not a numeric MAT type (corrupt "
                                    "file?)", path, name, type);
  int64_t numel = 1, limit = ((int64_t)1 << 62) / (int64_t)es;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 0)
      return ck_error(ctx, CK_ERR_IO, "%s: variable '%s': its dims %s are implausible (a negative dim); its data "
                                      "element holds %llu bytes (corrupt file?)", path, name, sh, (unsigned long long)bytes);
    if (dims[i] && numel > limit / dims[i])
      return ck_error(ctx, CK_ERR_IO, "%s: variable '%s': its dims %s are implausible (more than 2^62 bytes); its "
                                      "data element holds %llu bytes (corrupt file?)", path, name, sh,
                      (unsigned long long)bytes);
    numel *= dims[i];
  }
  if ((uint64_t)numel * es != bytes)
    return ck_error(ctx, CK_ERR_IO, "%s: variable '%s': its dims claim %lld element%s (%s of %zu bytes: %lld bytes), "
                                    "but its data element holds %llu bytes (corrupt file?)", path, name,
                    (long long)numel, numel == 1 ? "" : "s", sh, es, (long long)numel * (long long)es,
                    (unsigned long long)bytes);
  return CK_OK;
}

/* Every variable of a Level 5 file, walked as libmatio walks it; elements that run past the end of the file are
 * left to libmatio, which reports the truncation. */
static ck_status check_data_sizes(ck_ctx *ctx, const char *path) {
  unsigned char head[128], tag[8], b[HEAD_BYTES];
  struct stat sb;
  ck_status st = CK_OK;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return CK_OK; /* libmatio opened it: it reports what went wrong since */
  int64_t size = fstat(fd, &sb) == 0 ? (int64_t)sb.st_size : 0, pos = 128;
  const uint16_t one = 1;
  bool little_host = *(const unsigned char *)&one == 1, swap;
  if (pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head) goto done;
  if (head[126] == 'I' && head[127] == 'M') swap = !little_host;
  else if (head[126] == 'M' && head[127] == 'I') swap = little_host;
  else goto done;
  while (!st && pos + 8 <= size && pread(fd, tag, 8, pos) == 8) {
    uint32_t type = rd32(tag, swap);
    int64_t n = rd32(tag + 4, swap);
    if (n > size - pos - 8) break;
    if (type == MI_MATRIX) {
      size_t have = (size_t)(n < HEAD_BYTES ? n : HEAD_BYTES);
      if (pread(fd, b, have, pos + 8) != (ssize_t)have) break;
      st = check_head(ctx, path, b, have, (uint64_t)n, swap, false);
    } else if (type == MI_COMPRESSED) {
      size_t have = inflate_head(fd, pos + 8, n, b, sizeof b);
      if (have >= 8 && rd32(b, swap) == MI_MATRIX) /* inside: an miMATRIX tag, then its content */
        st = check_head(ctx, path, b + 8, have - 8, (uint64_t)rd32(b + 4, swap), swap, true);
    } else break; /* libmatio stops here with an error of its own */
    pos += 8 + n;
  }
done:
  close(fd);
  return st;
}

// ---------------------------------------------------------------- reading

/* Is v a variable cukern loads, with dims the file can hold? k = its CLASSES row. libmatio believes the
 * dims it reads and allocates (and reads) that much, so a corrupt file could claim gigabytes: each element
 * takes at least a byte on file, and deflate packs at most ~1032 bytes into one. */
static ck_status check_var(ck_ctx *ctx, const char *what, const matvar_t *v, int64_t file_bytes, int *k) {
  *k = -1;
  for (int i = 0; i < (int)(sizeof CLASSES / sizeof *CLASSES); ++i)
    if (CLASSES[i].cls == v->class_type) *k = i;
  if (*k < 0) return ck_error(ctx, CK_ERR_IO, "%s is a %s; only real numeric and logical arrays load", what, class_name(v->class_type));
  if (v->isComplex)
    return ck_error(ctx, CK_ERR_IO, "%s is complex (%s); complex .mat variables are not supported yet (.npy is)", what,
                    CLASSES[*k].name);
  if (v->name && strlen(v->name) > CK_IO_NAME_MAX)
    return ck_error(ctx, CK_ERR_IO, "%s: a name of %zu bytes; at most %d are supported", what, strlen(v->name),
                    CK_IO_NAME_MAX);
  if (v->rank < 0 || v->rank > CK_MAX_DIMS)
    return ck_error(ctx, CK_ERR_IO, "%s has %d dims, more than cukern's %d", what, v->rank, CK_MAX_DIMS);
  double numel = 1, room = (double)file_bytes * (v->compression == MAT_COMPRESSION_NONE ? 1 : 1032);
  for (int i = 0; i < v->rank; ++i) numel *= (double)v->dims[i];
  if (numel > room)
    return ck_error(ctx, CK_ERR_IO, "%s: its dims claim %.0f elements, more than the %lld-byte file can hold (corrupt file?)",
                    what, numel, (long long)file_bytes);
  return CK_OK;
}

static ck_status load_var(ck_ctx *ctx, const char *path, matvar_t *v, int64_t file_bytes, ck_device dev, ck_io_list *out) {
  char what[4400];
  ck_status st;
  int k;
  snprintf(what, sizeof what, "%s: variable '%s'", path, v->name ? v->name : "?");
  if ((st = check_var(ctx, what, v, file_bytes, &k))) return st;
  ck_ftype ft = v->isLogical ? CK_FT_BOOL : CLASSES[k].ft;
  ck_dtype dt = ck_ftype_target(ft);
  int nd = v->rank;
  int64_t dims[CK_MAX_DIMS], stored[CK_MAX_DIMS], numel = 1;
  for (int i = 0; i < nd; ++i) {
    dims[i] = (int64_t)v->dims[i];
    stored[nd - 1 - i] = dims[i];
    numel *= dims[i];
  }
  if ((st = ck_check_shape(ctx, what, nd, dims, dt))) return st;
  if (numel && (!v->data || v->data_size != (int)ck_ftype_size(CLASSES[k].ft) ||
                v->nbytes != (size_t)numel * (size_t)v->data_size))
    return ck_error(ctx, CK_ERR_IO, "%s: its data could not be read (truncated or corrupt file?): %s", what, matio_says());
  ck_tensor h = {0}, t = {0};
  if ((st = ck_empty(ctx, &h, dt, nd, stored, CK_DEV_HOST))) return st;
  if (numel && (st = ck_io_convert(ctx, what, ck_data(&h), dt, v->data, ft, false, (size_t)numel, 0))) {
    ck_release(&h);
    return st;
  }
  ck_io_info info;
  memset(&info, 0, sizeof info);
  snprintf(info.format, sizeof info.format, "mat");
  snprintf(info.stored, sizeof info.stored, "%s", v->isLogical ? "logical" : CLASSES[k].name);
  if (strcmp(ck_ftype_name(ft), ck_dtype_name(dt)) != 0)
    snprintf(info.converted, sizeof info.converted, "%s -> %s", ck_ftype_name(ft), ck_dtype_name(dt));
  info.fortran = true;
  if ((st = ck_io_place(ctx, &h, true, dev, &t))) return st;
  st = ck_io_list_add(ctx, what, out, v->name ? v->name : "", &t, &info);
  ck_release(&t);
  return st;
}

static ck_status walk_error(ck_ctx *ctx, const char *path, int done) {
  return ck_error(ctx, CK_ERR_IO, "%s: truncated or corrupt after %d variable(s): %s", path, done, last_msg);
}

ck_status ck_mat_load(ck_ctx *ctx, const char *path, ck_device dev, ck_io_list *out) {
  int fd;
  ck_status st;
  unsigned char head[128];
  struct stat sb;
  memset(out, 0, sizeof *out);
  if ((st = ck_io_open_read(ctx, path, &fd))) return st;
  ssize_t got = read(fd, head, sizeof head);
  int64_t file_bytes = fstat(fd, &sb) == 0 ? (int64_t)sb.st_size : 0;
  close(fd);
  if (got < (ssize_t)sizeof head)
    return ck_error(ctx, CK_ERR_IO, "%s: not a MAT file: %zd bytes, shorter than the 128-byte MAT header", path, got);
  quiet_matio();
  mat_t *m = Mat_Open(path, MAT_ACC_RDONLY);
  if (!m) return ck_error(ctx, CK_ERR_IO, "%s: not a MAT file libmatio can read (%s)", path, matio_says());
  const char *ver = Mat_GetVersion(m) == MAT_FT_MAT73 ? "7.3" : Mat_GetVersion(m) == MAT_FT_MAT4 ? "4" : "5";
  matvar_t *v;
  int n = 0, k;
  /* HDF5 (7.3) sizes each dataset's data by its dims itself; Level 5 needs the check */
  if (Mat_GetVersion(m) == MAT_FT_MAT5) st = check_data_sizes(ctx, path);
  /* first every variable's header (cheap, and before libmatio allocates anything), then the data */
  while (!st && (v = Mat_VarReadNextInfo(m)) != NULL) {
    char what[4400];
    snprintf(what, sizeof what, "%s: variable '%s'", path, v->name ? v->name : "?");
    st = check_var(ctx, what, v, file_bytes, &k);
    Mat_VarFree(v);
    ++n;
  }
  if (!st && last_msg[0]) st = walk_error(ctx, path, n);
  if (!st && Mat_Rewind(m) != 0) st = ck_error(ctx, CK_ERR_IO, "%s: %s", path, matio_says());
  while (!st && (v = Mat_VarReadNext(m)) != NULL) {
    st = load_var(ctx, path, v, file_bytes, dev, out);
    if (!st) snprintf(out->items[out->n - 1].info.version, sizeof out->items[0].info.version, "%s", ver);
    Mat_VarFree(v);
  }
  if (!st && last_msg[0]) st = walk_error(ctx, path, out->n); /* the walk stopped on an error, not at the end */
  Mat_Close(m);
  if (st) ck_io_list_free(out);
  return st;
}

// ---------------------------------------------------------------- writing

static bool valid_name(const char *s) {
  if (!isalpha((unsigned char)*s)) return false;
  size_t n = 0;
  for (; *s; ++s, ++n)
    if (!isalnum((unsigned char)*s) && *s != '_') return false;
  return n <= 63;
}

ck_status ck_mat_save(ck_ctx *ctx, const char *path, int n, const char *const *names, const ck_tensor *const *ts,
                      bool compress) {
  ck_status st = CK_OK;
  ck_io_tmp tmp;
  mat_t *m = NULL;
  ck_tensor *hs = calloc((size_t)(n ? n : 1), sizeof *hs);
  if (!hs) return ck_error(ctx, CK_ERR_OOM, "%s: out of host memory", path);
  for (int i = 0; i < n && !st; ++i)
    if (!valid_name(names[i]))
      st = ck_error(ctx, CK_ERR_ARG,
                    "%s: '%s' is not a MATLAB variable name (a letter, then letters, digits or '_'; at most 63)", path,
                    names[i]);
  for (int i = 0; i < n && !st; ++i)
    if (ck_dtype_is_complex(ts[i]->dtype)) /* (MAT keeps the parts apart: a split copy, not built yet) */
      st = ck_error(ctx, CK_ERR_IO, "%s: '%s' is %s; .mat files of complex arrays are not supported yet "
                    "(save it as .npy, or its ck.real and ck.imag)", path, names[i], ck_dtype_name(ts[i]->dtype));
  for (int i = 0; i < n && !st; ++i) { /* every array column-major on the host first */
    bool fortran;
    ck_tensor h = {0};
    if ((st = ck_io_host_layout(ctx, ts[i], 'F', &h, &fortran))) break;
    if (h.dtype == CK_F16) { /* MAT has no half; single holds it */
      st = ck_to(ctx, &hs[i], &h, CK_DEV_HOST, CK_F32);
      ck_release(&h);
    } else hs[i] = h;
  }
  if (st || (st = ck_io_tmp_open(ctx, path, &tmp))) goto cleanup;
  close(tmp.fd); /* libmatio opens the file itself */
  tmp.fd = -1;
  quiet_matio();
  m = Mat_CreateVer(tmp.path, NULL, MAT_FT_MAT5);
  if (!m) st = ck_error(ctx, CK_ERR_IO, "%s: cannot create the MAT file (%s)", path, matio_says());
  for (int i = 0; i < n && !st; ++i) {
    const ck_tensor *t = ts[i];
    size_t dims[CK_MAX_DIMS + 2];
    int rank = t->ndim < 2 ? 2 : t->ndim;
    dims[0] = 1;
    dims[1] = t->ndim == 1 ? (size_t)t->shape[0] : 1;
    if (t->ndim >= 2)
      for (int d = 0; d < t->ndim; ++d) dims[d] = (size_t)t->shape[d];
    enum matio_classes cls;
    enum matio_types typ;
    mat_class_of(hs[i].dtype, &cls, &typ);
    static double none;
    matvar_t *v = Mat_VarCreate(names[i], cls, typ, rank, dims, ck_numel(&hs[i]) ? ck_data(&hs[i]) : &none,
                                MAT_F_DONT_COPY_DATA | (hs[i].dtype == CK_BOOL ? MAT_F_LOGICAL : 0));
    if (!v) st = ck_error(ctx, CK_ERR_IO, "%s: variable '%s': %s", path, names[i], matio_says());
    else {
      if (Mat_VarWrite(m, v, compress ? MAT_COMPRESSION_ZLIB : MAT_COMPRESSION_NONE) != 0)
        st = ck_error(ctx, CK_ERR_IO, "%s: writing variable '%s' failed: %s", path, names[i], matio_says());
      Mat_VarFree(v);
    }
  }
  if (m && Mat_Close(m) != 0 && !st) st = ck_error(ctx, CK_ERR_IO, "%s: closing the MAT file failed: %s", path, matio_says());
  if (st) ck_io_tmp_abort(&tmp);
  else {
    tmp.fd = open(tmp.path, O_RDONLY | O_CLOEXEC); /* to fsync what libmatio wrote before the rename */
    st = ck_io_tmp_commit(ctx, path, &tmp);
  }
cleanup:
  for (int i = 0; i < n; ++i) ck_release(&hs[i]);
  free(hs);
  return st;
}

#endif
