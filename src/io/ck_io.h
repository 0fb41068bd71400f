/*
 * ck_io.h — arrays to and from files: NumPy .npy/.npz and Octave/MATLAB Level 5 .mat (core; no lua.h).
 *
 *   io_common.c  what every format shares: file-format dtypes and their conversion on load, writing to a
 *                temporary file beside the target and renaming it into place, layouts for saving
 *   io_npy.c     .npy, written by hand: the format is a magic string, a version, a Python-dict header of
 *                three keys and the raw data, so a library would only add a dependency
 *   io_npz.c     .npz (a zip of .npy members) through libzip, when the build found it (CK_HAVE_LIBZIP)
 *   io_mat.c     .mat (Level 5, as Octave's -v6/-v7 and MATLAB's -v7 write it) through libmatio
 *                (CK_HAVE_MATIO)
 *
 * Loading: every numeric dtype NumPy or Octave writes is accepted; types cukern lacks are converted exactly
 * or refused (ck_io_info.converted says which conversion ran): bool/i8/u8/i16/u16 -> i32; i64/u32/u64 ->
 * i32 when every value fits, else an error naming the value; f16 -> f16 when the build's dtypes have f16,
 * else f32. Column-major data (Fortran order, MATLAB) loads as a permuted view of the data as stored,
 * never a copy. Errors name the file (and the member or variable) and what is wrong.
 *
 * Saving: any array (views, any strides, either device) is written in logical order; a host array whose
 * layout is exactly column-major is written as it lies (.npy fortran_order) instead of being copied first.
 * Files are written to a temporary file in the target's directory, synced and renamed into place: a failed
 * save leaves the old file (or none), never a half-written one.
 */
#ifndef CK_IO_H
#define CK_IO_H

#include "ck.h"

/* What the loader found and did, per array. */
typedef struct ck_io_info {
  char format[8];     /* "npy", "mat" */
  char version[8];    /* .npy "1.0"/"2.0"/"3.0"; .mat "5" or "7.3" */
  char stored[64];    /* the file's element type: "<f4", ">i8", "|b1"; "double", "int8" for .mat */
  char converted[40]; /* "" or "i64 -> i32" etc. */
  bool fortran;       /* column-major on file (loaded as a permuted view) */
} ck_io_info;

/* A named array (.npz member, .mat variable). Longer names are refused, never cut: two cut names could
 * collide. */
#define CK_IO_NAME_MAX 255
typedef struct ck_io_item {
  char name[CK_IO_NAME_MAX + 1];
  ck_tensor t;
  ck_io_info info;
} ck_io_item;

/* A list of named arrays produced by a loader; ck_io_list_free releases the tensors and the list. */
typedef struct ck_io_list {
  int n, cap;
  ck_io_item *items;
} ck_io_list;
void ck_io_list_free(ck_io_list *l);

/* Which formats this build can read and write (.npy always). */
bool ck_io_have_npz(void);
bool ck_io_have_mat(void);

/* .npy: one array. */
ck_status ck_npy_save(ck_ctx *ctx, const char *path, const ck_tensor *t);
ck_status ck_npy_load(ck_ctx *ctx, const char *path, ck_device dev, ck_tensor *out, ck_io_info *info);

/* .npz: named arrays; members are "<name>.npy", stored (level 0) or deflate-compressed at zlib level 1..9
 * (-1: zlib's default, 6, as np.savez_compressed). */
ck_status ck_npz_save(ck_ctx *ctx, const char *path, int n, const char *const *names, const ck_tensor *const *ts,
                      int level);
ck_status ck_npz_load(ck_ctx *ctx, const char *path, ck_device dev, ck_io_list *out);

/* .mat (Level 5; compress = the -v7 zlib compression): named real numeric arrays, at least 2-D on file
 * (0-d saves as 1x1, 1-D [n] as a 1xn row like SciPy's savemat), loaded with MATLAB's dims. */
ck_status ck_mat_save(ck_ctx *ctx, const char *path, int n, const char *const *names, const ck_tensor *const *ts,
                      bool compress);
ck_status ck_mat_load(ck_ctx *ctx, const char *path, ck_device dev, ck_io_list *out);


// ---------------------------------------------------------------- shared by src/io_*.c only

/* Element types found in files. Each loads as ck_ftype_target()'s dtype (see the conversions above). */
typedef enum {
  CK_FT_BOOL, CK_FT_I8, CK_FT_U8, CK_FT_I16, CK_FT_U16, CK_FT_I32, CK_FT_U32, CK_FT_I64, CK_FT_U64,
  CK_FT_F16, CK_FT_F32, CK_FT_F64, CK_FT_C64, CK_FT_C128, CK_NFTYPES
} ck_ftype;
size_t ck_ftype_size(ck_ftype ft);
const char *ck_ftype_name(ck_ftype ft); /* "i64" */
ck_dtype ck_ftype_target(ck_ftype ft);
/* The file type that holds dtype dt exactly (for saving). */
ck_ftype ck_ftype_of(ck_dtype dt);
/* Convert n elements of type ft at src (byte-swapped there first when swap) into dst of dtype dt. Values that do
 * not fit (i64 -> i32) fail naming `what` and the element's index (first = index of src[0]). */
ck_status ck_io_convert(ck_ctx *ctx, const char *what, void *dst, ck_dtype dt, void *src, ck_ftype ft, bool swap,
                        size_t n, int64_t first);

/* A byte source: a file or a zip member. read() returns fewer than n bytes only at the end. */
typedef struct ck_io_src {
  const char *what; /* "x.npy", "x.npz: member 'a.npy'": the name errors use */
  int64_t size;     /* total bytes */
  int64_t pos;      /* bytes consumed so far */
  ck_status (*read)(ck_ctx *ctx, struct ck_io_src *s, void *buf, size_t n, size_t *got);
  void *ud;
} ck_io_src;
/* Exactly n bytes, or an error "<what>: truncated: <part> ...". */
ck_status ck_io_read_exact(ck_ctx *ctx, ck_io_src *s, void *buf, size_t n, const char *part);
/* `count` elements of type ft from s into host memory dst of dtype dt (converting, swapping). */
ck_status ck_io_read_data(ck_ctx *ctx, ck_io_src *s, void *dst, ck_dtype dt, ck_ftype ft, bool swap, int64_t count);
/* A source over an open file descriptor (size from fstat). */
ck_status ck_io_src_fd(ck_ctx *ctx, ck_io_src *s, int fd, const char *what);
/* Open path for reading, with an error naming it. */
ck_status ck_io_open_read(ck_ctx *ctx, const char *path, int *fd);

/* Finish a load: h (host, contiguous) holds the data as stored, its shape reversed when column-major; out
 * becomes that data on dev, permuted back to the logical dims when fortran (a view, not a copy). h is
 * consumed. */
ck_status ck_io_place(ck_ctx *ctx, ck_tensor *h, bool fortran, ck_device dev, ck_tensor *out);

/* For saving: out = a host contiguous tensor holding t's elements in row-major order of t's dims (C), or of
 * its reversed dims (Fortran: then *fortran is true and out's shape is reversed). order: 'C', 'F', or 'A'
 * (Fortran only where t already lies column-major and not row-major, so that nothing is reordered). bf16,
 * which none of the formats has, becomes f32 (exact); out->dtype is what to write. */
ck_status ck_io_host_layout(ck_ctx *ctx, const ck_tensor *t, char order, ck_tensor *out, bool *fortran);

/* Saving through a temporary file beside path: open (mode 0666 & ~umask), write, commit (fsync, rename),
 * or abort (unlink). */
typedef struct ck_io_tmp {
  char path[4200];
  int fd;
} ck_io_tmp;
ck_status ck_io_tmp_open(ck_ctx *ctx, const char *path, ck_io_tmp *t);
ck_status ck_io_write_all(ck_ctx *ctx, const char *path, int fd, const void *buf, size_t n);
ck_status ck_io_tmp_commit(ck_ctx *ctx, const char *path, ck_io_tmp *t);
void ck_io_tmp_abort(ck_io_tmp *t);
/* The error of a format whose library the build lacked ("x.npz: .npz needs libzip, which ..."). */
ck_status ck_io_lacks(ck_ctx *ctx, const char *path, const char *ext, const char *lib);
/* Add a named tensor (a new reference on t) to a list; `what` names the member or variable in errors. A name
 * longer than CK_IO_NAME_MAX, or one the list already holds, is an error: a file naming two arrays alike
 * cannot say which one is meant. */
ck_status ck_io_list_add(ck_ctx *ctx, const char *what, ck_io_list *l, const char *name, ck_tensor *t,
                         const ck_io_info *info);
/* The error for a name the list already holds, or CK_OK; for checking before the data is read. */
ck_status ck_io_list_check_name(ck_ctx *ctx, const char *what, const ck_io_list *l, const char *name);

/* .npy pieces shared with .npz. */
/* The header (magic, version, dict, padding to 64 bytes) for an array; returns its length, 0 if buf is too
 * small. */
size_t ck_npy_header(char *buf, size_t n, ck_dtype dt, int ndim, const int64_t *shape, bool fortran);
/* Read one .npy (header, data, and nothing after it) from s. */
ck_status ck_npy_read(ck_ctx *ctx, ck_io_src *s, ck_device dev, ck_tensor *out, ck_io_info *info);

#endif
