/*
 * store_int.h — what the files of the rendezvous store share (not part of the API, which is store.h):
 *   store.c         the API: urls, checks of keys and values, messages that name the key, rank and url
 *   store_agree.c   ck_store_barrier and ck_store_agree (one rendezvous through keys)
 *   store_file.c    the file store (a key is a file; counters under a lock file)
 *   store_map.c     the in-memory map: the world == 1 store, and rank 0's side of the tcp store
 *   store_tcp.c     the tcp client (ranks > 0) and the wire format
 *   store_server.c  rank 0's server thread (poll-based)
 *   dist_env.c      ck_dist_env
 * Each kind of store fills a cks_backend. Backends take full keys (the generation prefix already in front) and
 * write what went wrong into `why`; store.c and store_agree.c add the call, key, rank and url.
 */
#ifndef CK_STORE_INT_H
#define CK_STORE_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* a full key: prefix "/" key, or an internal key ("#agree/<seq>/<rank>") under the prefix */
#define CKS_FULLKEY_MAX (CK_STORE_PREFIX_MAX + 1 + CK_STORE_KEY_MAX)

/* backend results */
enum { CKS_OK = 0, CKS_ERR = 1, CKS_TIMEOUT = 2, CKS_TOOSMALL = 3 };

typedef struct cks_map cks_map;       /* store_map.c */
typedef struct cks_server cks_server; /* store_server.c */

typedef struct cks_backend {
  const char *kind; /* "file", "tcp", "memory" */
  int (*set)(ck_store *s, const char *key, const void *val, size_t n, char *why, size_t whyn);
  /* Waits until `deadline` (cks_now() seconds; a past deadline looks once). CKS_TIMEOUT: not there by then;
   * CKS_TOOSMALL: there, *n bytes, more than cap (val then holds nothing useful). */
  int (*get)(ck_store *s, const char *key, double deadline, void *val, size_t cap, size_t *n, char *why,
             size_t whyn);
  /* CKS_TIMEOUT only where the backend had to wait (the file store's lock) */
  int (*add)(ck_store *s, const char *key, int64_t delta, double deadline, int64_t *result, char *why, size_t whyn);
  int (*del)(ck_store *s, const char *key, char *why, size_t whyn); /* absent keys are fine */
  void (*close)(ck_store *s, double deadline);                       /* frees what the backend holds */
} cks_backend;

struct ck_store {
  const cks_backend *be;
  int rank, world;
  double timeout_s;
  char *url;                               /* as given (for messages) */
  char prefix[CK_STORE_PREFIX_MAX + 2];    /* "" or CUKERN_STORE_PREFIX "/" */
  char *sigbuf;                            /* CK_STORE_SIG_MAX + 1 bytes, for other ranks' signatures */
  uint64_t barriers;                       /* barriers called so far (their seq) */
  bool agree_prev, barrier_prev;           /* a previous call's keys remain (removed by the next call) */
  uint64_t agree_prev_seq, barrier_prev_seq;
  /* file */
  char *dir;
  unsigned long tmp_count;
  /* memory and tcp rank 0 */
  cks_map *map;
  cks_server *server;
  /* tcp ranks > 0 */
  int fd;
};

/* ---- store.c: helpers every file uses */
double cks_now(void); /* CLOCK_MONOTONIC, seconds */
void cks_sleep(double seconds);
/* snprintf into buf (n may be 0; buf may be NULL then) */
void cks_fmt(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cks_vfmt(char *buf, size_t n, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
/* The bytes of s, quoted for a message: at most `max` of them, the rest as "..."; non-printables as \xNN. */
void cks_quote(char *dst, size_t dstn, const void *s, size_t len, size_t max);
/* "ck_store_<op>: <what> (rank R of W, store URL): " + detail, into err */
int cks_fail(const ck_store *s, const char *op, const char *what, char *err, size_t errn, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* NULL when name is a valid key (or barrier name), else why not (written into buf) */
const char *cks_bad_key(const char *name, char *buf, size_t n);
/* the full key of a user key or internal name: prefix + name; false if it does not fit */
bool cks_full_key(const ck_store *s, const char *name, char *out, size_t outn);
/* counters are decimal text: parse (strictly) and add (without overflow) */
bool cks_parse_counter(const void *val, size_t n, int64_t *out);
bool cks_add_checked(int64_t a, int64_t b, int64_t *sum);

/* ---- the backends' constructors (fill s->be and their part of s) */
int cks_file_open(ck_store *s, const char *path, char *why, size_t whyn);
int cks_memory_open(ck_store *s, char *why, size_t whyn);                                  /* world == 1 */
int cks_tcp_open(ck_store *s, const char *host, const char *port, char *why, size_t whyn); /* both sides */

/* ---- store_map.c */
cks_map *cks_map_new(void);
void cks_map_free(cks_map *m);
/* called after every change, outside the lock (the server's wake-up) */
void cks_map_on_change(cks_map *m, void (*fn)(void *ud), void *ud);
int cks_map_set(cks_map *m, const char *key, const void *val, size_t n, char *why, size_t whyn);
int cks_map_get(cks_map *m, const char *key, double deadline, void *val, size_t cap, size_t *n, char *why,
                size_t whyn);
int cks_map_add(cks_map *m, const char *key, int64_t delta, int64_t *result, char *why, size_t whyn);
int cks_map_del(cks_map *m, const char *key);
/* For the server: the value of key, copied into a new buffer (*val, *n); CKS_TIMEOUT when absent. */
int cks_map_copy(cks_map *m, const char *key, unsigned char **val, size_t *n, char *why, size_t whyn);
extern const cks_backend cks_memory_backend;

/* ---- store_server.c (rank 0 of tcp) */
int cks_server_start(cks_map *m, const char *host, const char *port, int world, cks_server **out, char *why,
                     size_t whyn);
/* Waits until every other rank has connected and gone, or the deadline; then stops the thread and frees. */
void cks_server_stop(cks_server *sv, double deadline);

/* ---- the wire (store_tcp.c and store_server.c): a 16-byte header, then the key, then the value.
 * request: op, 0, 0, 0, key length (u32), arg (u64: value length for SET, delta for ADD, wait in ms for GET,
 *          rank << 32 | world for HELLO, whose key is CKS_MAGIC)
 * reply:   status, 0, 0, 0, body length (u32: the value of GET, the message of ERROR), arg (u64: ADD's result) */
#define CKS_HDR 16
#define CKS_MAGIC "cukern-store/1"
enum { CKS_OP_HELLO = 1, CKS_OP_SET = 2, CKS_OP_GET = 3, CKS_OP_ADD = 4, CKS_OP_DEL = 5 };
enum { CKS_ST_OK = 0, CKS_ST_NOTFOUND = 1, CKS_ST_ERROR = 2 };
void cks_hdr_put(unsigned char h[CKS_HDR], int code, uint32_t len, uint64_t arg);
void cks_hdr_get(const unsigned char h[CKS_HDR], int *code, uint32_t *len, uint64_t *arg);
/* file descriptor flags (O_NONBLOCK, FD_CLOEXEC) */
int cks_fd_setup(int fd);

#endif
