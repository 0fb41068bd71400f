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
 * Built only when src/io.mk found libmatio (CK_HAVE_MATIO); otherwise .mat raises an error saying so.
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
ck_status ck_mat_load(ck_ctx *ctx, const char *path, ck_devkind dev, ck_io_list *out) {
  return ck_io_lacks(ctx, path, ".mat", "libmatio");
}

#else
#include <matio.h>

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

// ---------------------------------------------------------------- reading

/* Is v a variable cukern loads, with dims the file can hold? k = its CLASSES row. libmatio believes the
 * dims it reads and allocates (and reads) that much, so a corrupt file could claim gigabytes: each element
 * takes at least a byte on file, and deflate packs at most ~1032 bytes into one. */
static ck_status check_var(ck_ctx *ctx, const char *what, const matvar_t *v, int64_t file_bytes, int *k) {
  *k = -1;
  for (int i = 0; i < (int)(sizeof CLASSES / sizeof *CLASSES); ++i)
    if (CLASSES[i].cls == v->class_type) *k = i;
  if (*k < 0) return ck_error(ctx, CK_ERR_IO, "%s is a %s; only real numeric and logical arrays load", what, class_name(v->class_type));
  if (v->isComplex) return ck_error(ctx, CK_ERR_IO, "%s is complex (%s); cukern arrays are real", what, CLASSES[*k].name);
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

static ck_status load_var(ck_ctx *ctx, const char *path, matvar_t *v, int64_t file_bytes, ck_devkind dev, ck_io_list *out) {
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
  if ((st = ck_empty(ctx, &h, dt, nd, stored, CK_HOST))) return st;
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

ck_status ck_mat_load(ck_ctx *ctx, const char *path, ck_devkind dev, ck_io_list *out) {
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
  for (int i = 0; i < n && !st; ++i) { /* every array column-major on the host first */
    bool fortran;
    ck_tensor h = {0};
    if ((st = ck_io_host_layout(ctx, ts[i], 'F', &h, &fortran))) break;
    if (h.dtype != CK_F64 && h.dtype != CK_F32 && h.dtype != CK_I32) { /* f16: MAT has no half; single holds it */
      st = ck_to(ctx, &hs[i], &h, CK_HOST, CK_F32);
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
    enum matio_classes cls = hs[i].dtype == CK_F64 ? MAT_C_DOUBLE : hs[i].dtype == CK_I32 ? MAT_C_INT32 : MAT_C_SINGLE;
    enum matio_types typ = hs[i].dtype == CK_F64 ? MAT_T_DOUBLE : hs[i].dtype == CK_I32 ? MAT_T_INT32 : MAT_T_SINGLE;
    static double none;
    matvar_t *v = Mat_VarCreate(names[i], cls, typ, rank, dims, ck_numel(&hs[i]) ? ck_data(&hs[i]) : &none,
                                MAT_F_DONT_COPY_DATA);
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
