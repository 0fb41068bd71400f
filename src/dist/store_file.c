/*
 * store_file.c — the file store (file:///abs/dir): a directory every rank sees. A key is the file "k.<key>" ('/'
 * written as '%', which keys cannot hold, so names stay one path component and distinct); a value is written to a
 * temporary file "t.<rank>.<pid>.<n>" and renamed over the key's file, so readers see all of it or nothing. gets
 * poll with a growing sleep (1 ms to 50 ms). add() takes the lock file "l.<key>" (open O_CREAT|O_EXCL, retried
 * with backoff until the timeout), reads, writes the new sum the same way, and removes the lock: correct between
 * processes and hosts (O_EXCL is atomic on local file systems and NFSv3+). A rank that dies holding the lock
 * leaves it; the others then time out naming the lock file. On NFS, a client may cache "no such file" for a
 * moment (lookupcache), which delays gets, never corrupts them.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_int.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* dir/<c>.<key with '/' as '%'> */
static int path_of(const ck_store *s, char c, const char *key, char *out, size_t outn, char *why, size_t whyn) {
  int k = snprintf(out, outn, "%s/%c.", s->dir, c);
  if (k < 0 || (size_t)k + strlen(key) >= outn) {
    cks_fmt(why, whyn, "the path of the key's file in %s is too long", s->dir);
    return 1;
  }
  char *p = out + k;
  for (const char *q = key; *q; q++) *p++ = *q == '/' ? '%' : *q;
  *p = '\0';
  return 0;
}

static void backoff(double *delay, double deadline) {
  double left = deadline - cks_now();
  cks_sleep(*delay < left ? *delay : left);
  *delay = *delay * 2 > 0.05 ? 0.05 : *delay * 2;
}

static int write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w == 0 ? (errno = EIO, -1) : -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* writes val to a temporary file and renames it to `path` */
static int write_file(ck_store *s, const char *path, const void *val, size_t n, char *why, size_t whyn) {
  char tmp[PATH_MAX];
  int k = snprintf(tmp, sizeof tmp, "%s/t.%d.%ld.%lu", s->dir, s->rank, (long)getpid(), s->tmp_count++);
  if (k < 0 || (size_t)k >= sizeof tmp) {
    cks_fmt(why, whyn, "the directory's path is too long");
    return CKS_ERR;
  }
  int fd;
  while ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644)) < 0 && errno == EINTR) {}
  if (fd < 0) {
    cks_fmt(why, whyn, "cannot create %s: %s", tmp, strerror(errno));
    return CKS_ERR;
  }
  int werr = write_all(fd, val, n) != 0 ? errno : 0;
  int cerr = close(fd) != 0 ? errno : 0; /* NFS reports write errors at close */
  if (werr || (cerr && cerr != EINTR)) {
    cks_fmt(why, whyn, "cannot write %zu bytes to %s: %s", n, tmp, strerror(werr ? werr : cerr));
    unlink(tmp);
    return CKS_ERR;
  }
  if (rename(tmp, path) != 0) {
    cks_fmt(why, whyn, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    unlink(tmp);
    return CKS_ERR;
  }
  return CKS_OK;
}

/* reads the key's file once: CKS_TIMEOUT when it does not exist (yet) */
static int read_file(const char *path, void *val, size_t cap, size_t *n, char *why, size_t whyn) {
  int fd;
  while ((fd = open(path, O_RDONLY)) < 0 && errno == EINTR) {}
  if (fd < 0) {
    if (errno == ENOENT) return CKS_TIMEOUT;
    cks_fmt(why, whyn, "cannot open %s: %s", path, strerror(errno));
    return CKS_ERR;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    cks_fmt(why, whyn, "cannot stat %s: %s", path, strerror(errno));
    close(fd);
    return CKS_ERR;
  }
  if (st.st_size < 0 || (uintmax_t)st.st_size > CK_STORE_VALUE_MAX) {
    cks_fmt(why, whyn, "%s is %jd bytes, more than any value (was it written by something else?)", path,
            (intmax_t)st.st_size);
    close(fd);
    return CKS_ERR;
  }
  size_t size = (size_t)st.st_size;
  *n = size;
  if (size > cap) {
    close(fd);
    return CKS_TOOSMALL;
  }
  size_t got = 0;
  while (got < size) {
    ssize_t r = read(fd, (char *)val + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      cks_fmt(why, whyn, "cannot read %s: %s", path, r == 0 ? "it is shorter than its size" : strerror(errno));
      close(fd);
      return CKS_ERR;
    }
    got += (size_t)r;
  }
  close(fd); /* read-only: nothing to lose */
  return CKS_OK;
}

static int file_set(ck_store *s, const char *key, const void *val, size_t n, char *why, size_t whyn) {
  char path[PATH_MAX];
  if (path_of(s, 'k', key, path, sizeof path, why, whyn)) return CKS_ERR;
  return write_file(s, path, val, n, why, whyn);
}

static int file_get(ck_store *s, const char *key, double deadline, void *val, size_t cap, size_t *n, char *why,
                    size_t whyn) {
  char path[PATH_MAX];
  if (path_of(s, 'k', key, path, sizeof path, why, whyn)) return CKS_ERR;
  double delay = 0.001;
  for (;;) {
    int rc = read_file(path, val, cap, n, why, whyn);
    if (rc != CKS_TIMEOUT || cks_now() >= deadline) return rc;
    backoff(&delay, deadline);
  }
}

static int file_add(ck_store *s, const char *key, int64_t delta, double deadline, int64_t *result, char *why,
                    size_t whyn) {
  char path[PATH_MAX], lock[PATH_MAX];
  if (path_of(s, 'k', key, path, sizeof path, why, whyn) || path_of(s, 'l', key, lock, sizeof lock, why, whyn))
    return CKS_ERR;
  double delay = 0.0005;
  int fd;
  for (;;) {
    fd = open(lock, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) break;
    if (errno == EINTR) continue;
    if (errno != EEXIST) {
      cks_fmt(why, whyn, "cannot create the lock file %s: %s", lock, strerror(errno));
      return CKS_ERR;
    }
    if (cks_now() >= deadline) {
      cks_fmt(why, whyn, "the lock file %s stays (a rank died holding it? then remove it)", lock);
      return CKS_TIMEOUT;
    }
    backoff(&delay, deadline);
  }
  char note[64];
  int k = snprintf(note, sizeof note, "rank %d pid %ld\n", s->rank, (long)getpid());
  int e = write_all(fd, note, (size_t)k) == 0 ? 0 : errno; /* for whoever finds a stale lock */
  if (close(fd) != 0 && errno != EINTR && !e) e = errno;
  int rc = e ? CKS_ERR : CKS_OK;
  if (e) cks_fmt(why, whyn, "cannot write the lock file %s: %s", lock, strerror(e));
  char text[32];
  size_t n = 0;
  int64_t v = 0, sum = 0;
  if (rc == CKS_OK) {
    rc = read_file(path, text, sizeof text - 1, &n, why, whyn);
    if (rc == CKS_TIMEOUT) { /* absent: 0 */
      rc = CKS_OK;
    } else if ((rc == CKS_OK && !cks_parse_counter(text, n, &v)) || rc == CKS_TOOSMALL) {
      char q[64];
      cks_quote(q, sizeof q, text, rc == CKS_OK ? n : 0, 32);
      cks_fmt(why, whyn, "it holds %s%s%s (%zu bytes), not a counter (decimal text)", rc == CKS_OK ? "\"" : "",
              rc == CKS_OK ? q : "a long value", rc == CKS_OK ? "\"" : "", n);
      rc = CKS_ERR;
    }
  }
  if (rc == CKS_OK && !cks_add_checked(v, delta, &sum)) {
    cks_fmt(why, whyn, "%" PRId64 " + %" PRId64 " overflows a 64-bit counter", v, delta);
    rc = CKS_ERR;
  }
  if (rc == CKS_OK) {
    k = snprintf(text, sizeof text, "%" PRId64, sum);
    rc = write_file(s, path, text, (size_t)k, why, whyn);
  }
  if (unlink(lock) != 0 && rc == CKS_OK) {
    cks_fmt(why, whyn, "cannot remove the lock file %s: %s", lock, strerror(errno));
    rc = CKS_ERR;
  }
  if (rc == CKS_OK) *result = sum;
  return rc;
}

static int file_del(ck_store *s, const char *key, char *why, size_t whyn) {
  char path[PATH_MAX];
  if (path_of(s, 'k', key, path, sizeof path, why, whyn)) return CKS_ERR;
  if (unlink(path) != 0 && errno != ENOENT) {
    cks_fmt(why, whyn, "cannot remove %s: %s", path, strerror(errno));
    return CKS_ERR;
  }
  return CKS_OK;
}

static void file_close(ck_store *s, double deadline) {
  (void)deadline;
  free(s->dir);
  s->dir = NULL;
}

static const cks_backend file_backend = {"file", file_set, file_get, file_add, file_del, file_close};

int cks_file_open(ck_store *s, const char *path, char *why, size_t whyn) {
  size_t len = strlen(path);
  while (len > 1 && path[len - 1] == '/') len--; /* file:///tmp/x/ is /tmp/x */
  if (len + 2 + CKS_FULLKEY_MAX >= PATH_MAX) {
    cks_fmt(why, whyn, "the directory's path is too long");
    return 1;
  }
  char *dir = malloc(len + 1);
  if (!dir) {
    cks_fmt(why, whyn, "out of memory");
    return 1;
  }
  memcpy(dir, path, len);
  dir[len] = '\0';
  struct stat st;
  if (stat(dir, &st) != 0) {
    if (errno != ENOENT || (mkdir(dir, 0755) != 0 && errno != EEXIST) || stat(dir, &st) != 0) {
      cks_fmt(why, whyn, "cannot use the directory %s: %s", dir, strerror(errno));
      free(dir);
      return 1;
    }
  }
  if (!S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
    cks_fmt(why, whyn, "%s is %s", dir, S_ISDIR(st.st_mode) ? "a directory this process cannot write to"
                                                           : "not a directory");
    free(dir);
    return 1;
  }
  s->dir = dir;
  s->be = &file_backend;
  return 0;
}
