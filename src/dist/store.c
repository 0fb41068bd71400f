/*
 * store.c — the rendezvous store's API (store.h): parses the url and opens the backend it names, checks keys and
 * values before any backend sees them, and turns the backends' short reasons into messages that name the call,
 * the key, this rank, the world size and the url. Barriers and agreement are in store_agree.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store_int.h"

// ---------------------------------------------------------------- helpers shared by the store's files

double cks_now(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0; /* cannot fail for CLOCK_MONOTONIC on POSIX systems */
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cks_sleep(double seconds) {
  if (!(seconds > 0)) return;
  struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

void cks_vfmt(char *buf, size_t n, const char *fmt, va_list ap) {
  if (!buf || n == 0) return;
  if (vsnprintf(buf, n, fmt, ap) < 0) buf[0] = '\0';
}

void cks_fmt(char *buf, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cks_vfmt(buf, n, fmt, ap);
  va_end(ap);
}

void cks_quote(char *dst, size_t dstn, const void *s, size_t len, size_t max) {
  if (!dst || dstn == 0) return;
  const unsigned char *p = s;
  size_t o = 0;
  for (size_t i = 0; i < len && i < max; i++) {
    char tmp[8];
    if (isprint(p[i]) && p[i] != '\\' && p[i] != '"') {
      tmp[0] = (char)p[i];
      tmp[1] = '\0';
    } else {
      snprintf(tmp, sizeof tmp, "\\x%02x", p[i]);
    }
    size_t k = strlen(tmp);
    if (o + k + 4 >= dstn) break; /* room for "..." */
    memcpy(dst + o, tmp, k);
    o += k;
  }
  if (len > max && o + 4 <= dstn) {
    memcpy(dst + o, "...", 3);
    o += 3;
  }
  dst[o] = '\0';
}

int cks_fail(const ck_store *s, const char *op, const char *what, char *err, size_t errn, const char *fmt, ...) {
  char detail[1024];
  va_list ap;
  va_start(ap, fmt);
  cks_vfmt(detail, sizeof detail, fmt, ap);
  va_end(ap);
  if (s)
    cks_fmt(err, errn, "ck_store_%s%s%s (rank %d of %d, %s%s): %s", op, what ? ": " : "", what ? what : "",
            s->rank, s->world, s->url && s->url[0] ? "store " : "no store url: in memory",
            s->url && s->url[0] ? s->url : "", detail);
  else
    cks_fmt(err, errn, "ck_store_%s: %s%s%s", op, what ? what : "", what ? ": " : "", detail);
  return 1;
}

bool cks_full_key(const ck_store *s, const char *name, char *out, size_t outn) {
  int k = snprintf(out, outn, "%s%s", s->prefix, name);
  return k >= 0 && (size_t)k < outn;
}

bool cks_parse_counter(const void *val, size_t n, int64_t *out) {
  char buf[32];
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, val, n);
  buf[n] = '\0';
  for (size_t i = 0; i < n; i++)
    if (!(isdigit((unsigned char)buf[i]) || (i == 0 && buf[i] == '-' && n > 1))) return false;
  errno = 0;
  char *end;
  long long v = strtoll(buf, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = (int64_t)v;
  return true;
}

bool cks_add_checked(int64_t a, int64_t b, int64_t *sum) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return false;
  *sum = a + b;
  return true;
}

// ---------------------------------------------------------------- checks

const char *cks_bad_key(const char *name, char *buf, size_t n) {
  if (!name) return "is NULL";
  size_t len = strlen(name);
  char q[96];
  cks_quote(q, sizeof q, name, len, 48);
  if (len == 0) return "is empty";
  if (len > CK_STORE_KEY_MAX) {
    cks_fmt(buf, n, "\"%s\" is %zu characters; the limit is %d", q, len, CK_STORE_KEY_MAX);
    return buf;
  }
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)name[i];
    if (!(isalnum(c) && c < 128) && c != '_' && c != '.' && c != '/' && c != '-') {
      char cq[16];
      cks_quote(cq, sizeof cq, &name[i], 1, 1);
      cks_fmt(buf, n, "\"%s\" has '%s' at position %zu; keys use only A-Z a-z 0-9 _ . / -", q, cq, i + 1);
      return buf;
    }
  }
  return NULL;
}

/* "key \"k\"" for messages */
static void key_what(char *buf, size_t n, const char *key) {
  char q[96];
  cks_quote(q, sizeof q, key, strlen(key), 64);
  cks_fmt(buf, n, "key \"%s\"", q);
}

static int check_store(const ck_store *s, const char *op, char *err, size_t errn) {
  if (!s) return cks_fail(NULL, op, NULL, err, errn, "the store is NULL (not opened, or closed)");
  return 0;
}

/* the checks every keyed call makes; fills full (the key with its prefix) and what ("key \"k\"") */
static int check_key(const ck_store *s, const char *op, const char *key, char *full, char *what, size_t whatn,
                     char *err, size_t errn) {
  if (check_store(s, op, err, errn)) return 1;
  char buf[256];
  const char *why = cks_bad_key(key, buf, sizeof buf);
  if (why) return cks_fail(s, op, NULL, err, errn, "the key %s", why);
  key_what(what, whatn, key);
  if (!cks_full_key(s, key, full, CKS_FULLKEY_MAX + 1))
    return cks_fail(s, op, what, err, errn, "the key with its prefix is too long"); /* cannot happen */
  return 0;
}

// ---------------------------------------------------------------- open / close

static int parse_tcp(const char *rest, char *host, size_t hostn, char *port, size_t portn, char *why,
                     size_t whyn) {
  const char *colon;
  const char *h = rest;
  size_t hl;
  if (rest[0] == '[') { /* [v6 address]:port */
    const char *close = strchr(rest, ']');
    if (!close || close[1] != ':') {
      cks_fmt(why, whyn, "an IPv6 host is written [address]:port");
      return 1;
    }
    h = rest + 1;
    hl = (size_t)(close - h);
    colon = close + 1;
  } else {
    colon = strrchr(rest, ':');
    if (!colon) {
      cks_fmt(why, whyn, "no port: write tcp://host:port (e.g. tcp://127.0.0.1:29500)");
      return 1;
    }
    hl = (size_t)(colon - rest);
  }
  if (hl == 0 || hl >= hostn) {
    cks_fmt(why, whyn, hl == 0 ? "no host: write tcp://host:port" : "the host name is too long");
    return 1;
  }
  memcpy(host, h, hl);
  host[hl] = '\0';
  const char *p = colon + 1;
  size_t pl = strlen(p);
  long v = 0;
  for (size_t i = 0; i < pl; i++) {
    if (!isdigit((unsigned char)p[i]) || v > 65535) {
      v = -1;
      break;
    }
    v = v * 10 + (p[i] - '0');
  }
  if (pl == 0 || v < 0 || v > 65535 || pl >= portn) {
    cks_fmt(why, whyn, "the port \"%.16s\" is not a number in 1..65535", p);
    return 1;
  }
  if (v == 0) {
    cks_fmt(why, whyn, "port 0 is not allowed: rank 0 serves on a fixed port that every rank knows "
                       "(bin/ckrun picks a free one)");
    return 1;
  }
  snprintf(port, portn, "%ld", v);
  return 0;
}

static int read_prefix(ck_store *s, char *why, size_t whyn) {
  const char *p = getenv("CUKERN_STORE_PREFIX");
  s->prefix[0] = '\0';
  if (!p || !p[0]) return 0;
  size_t len = strlen(p);
  char q[96];
  cks_quote(q, sizeof q, p, len, 64);
  if (len > CK_STORE_PREFIX_MAX) {
    cks_fmt(why, whyn, "CUKERN_STORE_PREFIX \"%s\" is %zu characters; the limit is %d", q, len,
            CK_STORE_PREFIX_MAX);
    return 1;
  }
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)p[i];
    if (!(isalnum(c) && c < 128) && c != '_' && c != '.' && c != '-') {
      cks_fmt(why, whyn, "CUKERN_STORE_PREFIX \"%s\" may use only A-Z a-z 0-9 _ . -", q);
      return 1;
    }
  }
  snprintf(s->prefix, sizeof s->prefix, "%s/", p);
  return 0;
}

int ck_store_open(const char *url, int rank, int world, double timeout_s, ck_store **out, char *err,
                  size_t errn) {
  if (!out) return cks_fail(NULL, "open", NULL, err, errn, "out is NULL");
  *out = NULL;
  char q[1024];
  cks_quote(q, sizeof q, url ? url : "", url ? strlen(url) : 0, 400);
  if (world < 1) return cks_fail(NULL, "open", q, err, errn, "world size %d: it must be at least 1", world);
  if (rank < 0 || rank >= world)
    return cks_fail(NULL, "open", q, err, errn, "rank %d is not in 0..%d (world size %d)", rank, world - 1, world);
  if (!(timeout_s > 0) || !isfinite(timeout_s))
    return cks_fail(NULL, "open", q, err, errn, "timeout %g s: it must be a positive number of seconds", timeout_s);
  ck_store *s = calloc(1, sizeof *s);
  if (!s) return cks_fail(NULL, "open", q, err, errn, "out of memory");
  s->rank = rank;
  s->world = world;
  s->timeout_s = timeout_s;
  s->fd = -1;
  s->url = strdup(q);
  s->sigbuf = malloc(CK_STORE_SIG_MAX + 1);
  char why[512] = "";
  int rc = 1;
  if (!s->url || !s->sigbuf) {
    cks_fmt(why, sizeof why, "out of memory");
  } else if (read_prefix(s, why, sizeof why) != 0) {
  } else if (!url || !url[0]) {
    if (world != 1)
      cks_fmt(why, sizeof why, "no store url, and world size %d > 1: give file:///abs/dir or tcp://host:port "
                               "(bin/ckrun sets CUKERN_STORE)", world);
    else
      rc = cks_memory_open(s, why, sizeof why);
  } else if (strncmp(url, "file://", 7) == 0) {
    if (url[7] != '/')
      cks_fmt(why, sizeof why, "a file store is file:///absolute/dir (three slashes: the path must be absolute)");
    else
      rc = cks_file_open(s, url + 7, why, sizeof why);
  } else if (strncmp(url, "tcp://", 6) == 0) {
    char host[256], port[8];
    if (parse_tcp(url + 6, host, sizeof host, port, sizeof port, why, sizeof why) == 0)
      rc = cks_tcp_open(s, host, port, why, sizeof why);
  } else {
    cks_fmt(why, sizeof why, "the url is neither file:///abs/dir nor tcp://host:port");
  }
  if (rc != 0) {
    cks_fail(s, "open", NULL, err, errn, "%s", why);
    if (s->be) s->be->close(s, 0); /* (a backend that failed frees its part itself and leaves s->be NULL) */
    free(s->sigbuf);
    free(s->url);
    free(s);
    return 1;
  }
  *out = s;
  return 0;
}

void ck_store_close(ck_store *s) {
  if (!s) return;
  if (s->be) s->be->close(s, cks_now() + s->timeout_s);
  free(s->sigbuf);
  free(s->url);
  free(s);
}

// ---------------------------------------------------------------- set / get / add

int ck_store_set(ck_store *s, const char *key, const void *val, size_t n, char *err, size_t errn) {
  char full[CKS_FULLKEY_MAX + 1], what[128], why[512] = "";
  if (check_key(s, "set", key, full, what, sizeof what, err, errn)) return 1;
  if (!val && n > 0) return cks_fail(s, "set", what, err, errn, "the value is NULL but its size is %zu", n);
  if (n > CK_STORE_VALUE_MAX)
    return cks_fail(s, "set", what, err, errn, "the value is %zu bytes; the limit is %u (1 MiB)", n,
                    CK_STORE_VALUE_MAX);
  if (s->be->set(s, full, val ? val : "", n, why, sizeof why) != CKS_OK)
    return cks_fail(s, "set", what, err, errn, "%s", why);
  return 0;
}

int ck_store_del(ck_store *s, const char *key, char *err, size_t errn) {
  char full[CKS_FULLKEY_MAX + 1], what[128], why[512] = "";
  if (check_key(s, "del", key, full, what, sizeof what, err, errn)) return 1;
  if (s->be->del(s, full, why, sizeof why) != CKS_OK) return cks_fail(s, "del", what, err, errn, "%s", why);
  return 0;
}

int ck_store_get(ck_store *s, const char *key, void *val, size_t cap, size_t *n, char *err, size_t errn) {
  char full[CKS_FULLKEY_MAX + 1], what[128], why[512] = "";
  size_t got = 0;
  if (n) *n = 0;
  if (check_key(s, "get", key, full, what, sizeof what, err, errn)) return 1;
  if (!val && cap > 0) return cks_fail(s, "get", what, err, errn, "the buffer is NULL but its capacity is %zu", cap);
  int rc = s->be->get(s, full, cks_now() + s->timeout_s, val, cap, &got, why, sizeof why);
  if (rc == CKS_OK) {
    if (n) *n = got;
    return 0;
  }
  if (rc == CKS_TIMEOUT)
    return cks_fail(s, "get", what, err, errn, "not set within %g s (did the rank that sets it fail, or use "
                                               "another key or CUKERN_STORE_PREFIX?)", s->timeout_s);
  if (rc == CKS_TOOSMALL) {
    if (n) *n = got;
    return cks_fail(s, "get", what, err, errn, "its value is %zu bytes but the buffer holds only %zu", got, cap);
  }
  return cks_fail(s, "get", what, err, errn, "%s", why);
}

int ck_store_add(ck_store *s, const char *key, int64_t delta, int64_t *result, char *err, size_t errn) {
  char full[CKS_FULLKEY_MAX + 1], what[128], why[512] = "";
  int64_t r = 0;
  if (check_key(s, "add", key, full, what, sizeof what, err, errn)) return 1;
  int rc = s->be->add(s, full, delta, cks_now() + s->timeout_s, &r, why, sizeof why);
  if (rc == CKS_TIMEOUT)
    return cks_fail(s, "add", what, err, errn, "%s (not within %g s)", why, s->timeout_s);
  if (rc != CKS_OK) return cks_fail(s, "add", what, err, errn, "%s", why);
  if (result) *result = r;
  return 0;
}
