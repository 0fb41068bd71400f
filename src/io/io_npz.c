/*
 * io_npz.c — NumPy .npz archives (np.savez / np.savez_compressed / np.load) through libzip.
 *
 * An .npz is a zip whose members are "<name>.npy" files, stored or deflate-compressed (Python's zipfile
 * writes zip64 records when needed; libzip reads and writes them). Each member is read with the .npy reader
 * over a libzip stream, then one more read checks that the member ends there, which is also where libzip
 * verifies the member's CRC. Saving hands libzip each member as two fragments, the .npy header and the
 * array's host data, so nothing is copied into an intermediate buffer; libzip writes the archive on
 * zip_close, into our temporary file, which is then synced and renamed into place.
 *
 * Built only when mk/io.mk found libzip (CK_HAVE_LIBZIP); otherwise .npz raises an error saying so.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ck_io.h"

#ifndef CK_HAVE_LIBZIP

bool ck_io_have_npz(void) { return false; }

ck_status ck_npz_save(ck_ctx *ctx, const char *path, int n, const char *const *names, const ck_tensor *const *ts,
                      int level) {
  return ck_io_lacks(ctx, path, ".npz", "libzip");
}
ck_status ck_npz_load(ck_ctx *ctx, const char *path, ck_device dev, ck_io_list *out) {
  return ck_io_lacks(ctx, path, ".npz", "libzip");
}

#else
#include <zip.h>

bool ck_io_have_npz(void) { return true; }

static ck_status zip_fail(ck_ctx *ctx, const char *what, const char *doing, zip_error_t *ze) {
  return ck_error(ctx, CK_ERR_IO, "%s: %s: %s", what, doing, zip_error_strerror(ze));
}

// ---------------------------------------------------------------- reading

static ck_status member_read(ck_ctx *ctx, ck_io_src *s, void *buf, size_t n, size_t *got) {
  zip_file_t *zf = s->ud;
  size_t k = 0;
  while (k < n) {
    zip_int64_t r = zip_fread(zf, (char *)buf + k, (zip_uint64_t)(n - k));
    if (r < 0) return ck_error(ctx, CK_ERR_IO, "%s: %s", s->what, zip_error_strerror(zip_file_get_error(zf)));
    if (r == 0) break;
    k += (size_t)r;
  }
  *got = k;
  return CK_OK;
}

ck_status ck_npz_load(ck_ctx *ctx, const char *path, ck_device dev, ck_io_list *out) {
  int err = 0, fd;
  ck_status st;
  memset(out, 0, sizeof *out);
  if ((st = ck_io_open_read(ctx, path, &fd))) return st; /* "cannot open: No such file" before libzip's words */
  close(fd);
  zip_t *z = zip_open(path, ZIP_RDONLY, &err);
  if (!z) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    st = zip_fail(ctx, path, err == ZIP_ER_NOZIP ? "not an .npz file, or truncated (no zip directory at its end)"
                                                     : "cannot open it as an .npz (zip) archive", &ze);
    zip_error_fini(&ze);
    return st;
  }
  zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n && !st; ++i) {
    zip_stat_t zs;
    char what[4400], name[256];
    if (zip_stat_index(z, (zip_uint64_t)i, 0, &zs) != 0) {
      st = zip_fail(ctx, path, "reading the member list", zip_get_error(z));
      break;
    }
    size_t nl = strlen(zs.name);
    snprintf(what, sizeof what, "%s: member '%s'", path, zs.name);
    if (nl < 5 || strcmp(zs.name + nl - 4, ".npy") != 0 || nl - 4 >= sizeof name) {
      st = ck_error(ctx, CK_ERR_IO, "%s is not a .npy array (an .npz holds only <name>.npy members)", what);
      break;
    }
    if ((zs.valid & ZIP_STAT_COMP_SIZE) && (zs.valid & ZIP_STAT_SIZE) && zs.size / 1032 > zs.comp_size + 1) {
      /* deflate packs at most ~1032 bytes into one: a larger claim is a corrupt directory entry */
      st = ck_error(ctx, CK_ERR_IO, "%s: claims %llu bytes from %llu compressed (corrupt archive?)", what,
                    (unsigned long long)zs.size, (unsigned long long)zs.comp_size);
      break;
    }
    memcpy(name, zs.name, nl - 4);
    name[nl - 4] = 0;
    /* libzip opens an archive with two entries of one name (and np.load would silently take one of them):
     * refuse it before reading either's data */
    if ((st = ck_io_list_check_name(ctx, what, out, name))) break;
    zip_file_t *zf = zip_fopen_index(z, (zip_uint64_t)i, 0);
    if (!zf) {
      st = zip_fail(ctx, what, "cannot read it", zip_get_error(z));
      break;
    }
    ck_io_src s = {what, (int64_t)zs.size, 0, member_read, zf};
    ck_tensor t = {0};
    ck_io_info info;
    if (!(st = ck_npy_read(ctx, &s, dev, &t, &info))) {
      char extra;
      size_t got = 0;
      if (!(st = member_read(ctx, &s, &extra, 1, &got)) && got) /* also makes libzip check the CRC */
        st = ck_error(ctx, CK_ERR_IO, "%s: longer than its zip entry says", what);
      if (!st) st = ck_io_list_add(ctx, what, out, name, &t, &info);
    }
    ck_release(&t);
    zip_fclose(zf);
  }
  zip_discard(z);
  if (st) ck_io_list_free(out);
  return st;
}

// ---------------------------------------------------------------- writing

ck_status ck_npz_save(ck_ctx *ctx, const char *path, int n, const char *const *names, const ck_tensor *const *ts,
                      int level) {
  ck_status st = CK_OK;
  ck_io_tmp tmp;
  int err = 0;
  zip_t *z = NULL;
  ck_tensor *hs = calloc((size_t)(n ? n : 1), sizeof *hs);
  struct {
    char text[512];
    size_t len;
  } *hdrs = calloc((size_t)(n ? n : 1), sizeof *hdrs);
  if (!hs || !hdrs) {
    st = ck_error(ctx, CK_ERR_OOM, "%s: out of host memory", path);
    goto cleanup;
  }
  for (int i = 0; i < n && !st; ++i) /* every array on the host first: a failure here leaves no file */
    if (!*names[i]) st = ck_error(ctx, CK_ERR_ARG, "%s: empty array name", path);
  for (int i = 0; i < n && !st; ++i) {
    bool fortran;
    if ((st = ck_io_host_layout(ctx, ts[i], 'A', &hs[i], &fortran))) break;
    hdrs[i].len = ck_npy_header(hdrs[i].text, sizeof hdrs[i].text, hs[i].dtype, ts[i]->ndim, ts[i]->shape, fortran);
    if (!hdrs[i].len)
      st = ck_error(ctx, CK_ERR_INTERNAL, "%s: .npy header too long", path);
  }
  if (st || (st = ck_io_tmp_open(ctx, path, &tmp))) goto cleanup;
  if (n == 0) { /* libzip deletes an archive with no members; NumPy writes the bare end record */
    static const unsigned char EMPTY_ZIP[22] = {'P', 'K', 5, 6};
    if ((st = ck_io_write_all(ctx, path, tmp.fd, EMPTY_ZIP, sizeof EMPTY_ZIP))) ck_io_tmp_abort(&tmp);
    else st = ck_io_tmp_commit(ctx, path, &tmp);
    goto cleanup;
  }
  close(tmp.fd); /* libzip writes the file itself (to its own temporary, renamed onto ours) */
  tmp.fd = -1;
  z = zip_open(tmp.path, ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!z) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    st = zip_fail(ctx, path, "cannot create the archive", &ze);
    zip_error_fini(&ze);
    ck_io_tmp_abort(&tmp);
    goto cleanup;
  }
  for (int i = 0; i < n && !st; ++i) {
    char member[320];
    snprintf(member, sizeof member, "%s.npy", names[i]);
    zip_buffer_fragment_t frag[2] = {{(zip_uint8_t *)hdrs[i].text, hdrs[i].len},
                                     {ck_numel(&hs[i]) ? ck_data(&hs[i]) : NULL,
                                      (zip_uint64_t)ck_numel(&hs[i]) * ck_dtype_size(hs[i].dtype)}};
    zip_source_t *src = zip_source_buffer_fragment(z, frag, frag[1].length ? 2 : 1, 0);
    zip_int64_t idx = src ? zip_file_add(z, member, src, ZIP_FL_ENC_UTF_8) : -1;
    if (idx < 0) {
      if (src) zip_source_free(src);
      st = zip_fail(ctx, path, member, zip_get_error(z));
    } else if (zip_set_file_compression(z, (zip_uint64_t)idx, level ? ZIP_CM_DEFLATE : ZIP_CM_STORE,
                                      level > 0 ? (zip_uint32_t)level : 0) != 0)
      st = zip_fail(ctx, path, "setting the compression", zip_get_error(z));
  }
  if (st) {
    zip_discard(z);
    ck_io_tmp_abort(&tmp);
    goto cleanup;
  }
  if (zip_close(z) != 0) {
    st = zip_fail(ctx, path, "writing the archive", zip_get_error(z));
    zip_discard(z);
    ck_io_tmp_abort(&tmp);
    goto cleanup;
  }
  tmp.fd = open(tmp.path, O_RDONLY | O_CLOEXEC); /* to fsync what libzip wrote before the rename */
  st = ck_io_tmp_commit(ctx, path, &tmp);
cleanup:
  if (hs)
    for (int i = 0; i < n; ++i) ck_release(&hs[i]);
  free(hs);
  free(hdrs);
  return st;
}

#endif
