/*
 * store_map.c — the store's keys in this process's memory: a hash table under a mutex, with a condition variable
 * (on CLOCK_MONOTONIC) that waiting gets sleep on. Rank 0 of a tcp store reads and writes it directly while its
 * server thread (store_server.c) serves the other ranks from it; with world == 1 and no url it is the whole store
 * (cks_memory_backend).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store_int.h"

#define NBUCKETS 1024

typedef struct entry {
  struct entry *next;
  char *key;
  unsigned char *val;
  size_t n;
} entry;

struct cks_map {
  pthread_mutex_t mu;
  pthread_cond_t changed;
  entry *buckets[NBUCKETS];
  void (*on_change)(void *ud);
  void *on_change_ud;
};

static size_t hash(const char *k) {
  size_t h = 1469598103934665603u; /* FNV-1a */
  for (; *k; k++) h = (h ^ (unsigned char)*k) * 1099511628211u;
  return h % NBUCKETS;
}

cks_map *cks_map_new(void) {
  cks_map *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  pthread_condattr_t ca;
  if (pthread_mutex_init(&m->mu, NULL) != 0) {
    free(m);
    return NULL;
  }
  int ok = pthread_condattr_init(&ca) == 0;
  if (ok) {
    ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&m->changed, &ca) == 0;
    pthread_condattr_destroy(&ca);
  }
  if (!ok) {
    pthread_mutex_destroy(&m->mu);
    free(m);
    return NULL;
  }
  return m;
}

void cks_map_free(cks_map *m) {
  if (!m) return;
  for (size_t b = 0; b < NBUCKETS; b++) {
    for (entry *e = m->buckets[b], *next; e; e = next) {
      next = e->next;
      free(e->key);
      free(e->val);
      free(e);
    }
  }
  pthread_cond_destroy(&m->changed);
  pthread_mutex_destroy(&m->mu);
  free(m);
}

void cks_map_on_change(cks_map *m, void (*fn)(void *ud), void *ud) {
  pthread_mutex_lock(&m->mu);
  m->on_change = fn;
  m->on_change_ud = ud;
  pthread_mutex_unlock(&m->mu);
}

static entry *find(cks_map *m, const char *key) {
  for (entry *e = m->buckets[hash(key)]; e; e = e->next)
    if (strcmp(e->key, key) == 0) return e;
  return NULL;
}

/* the value of key becomes val[0..n) (a new entry if absent); under the lock; false when out of memory */
static int put(cks_map *m, const char *key, const void *val, size_t n) {
  unsigned char *copy = malloc(n ? n : 1);
  if (!copy) return 1;
  if (n) memcpy(copy, val, n);
  entry *e = find(m, key);
  if (!e) {
    e = calloc(1, sizeof *e);
    char *k = strdup(key);
    if (!e || !k) {
      free(e);
      free(k);
      free(copy);
      return 1;
    }
    e->key = k;
    size_t b = hash(key);
    e->next = m->buckets[b];
    m->buckets[b] = e;
  }
  free(e->val);
  e->val = copy;
  e->n = n;
  return 0;
}

/* after a change: wake the waiting gets, then (outside the lock) the server */
static void changed(cks_map *m) {
  void (*fn)(void *) = m->on_change;
  void *ud = m->on_change_ud;
  pthread_cond_broadcast(&m->changed);
  pthread_mutex_unlock(&m->mu);
  if (fn) fn(ud);
}

int cks_map_set(cks_map *m, const char *key, const void *val, size_t n, char *why, size_t whyn) {
  pthread_mutex_lock(&m->mu);
  if (put(m, key, val, n) != 0) {
    pthread_mutex_unlock(&m->mu);
    cks_fmt(why, whyn, "out of memory storing %zu bytes", n);
    return CKS_ERR;
  }
  changed(m);
  return CKS_OK;
}

int cks_map_get(cks_map *m, const char *key, double deadline, void *val, size_t cap, size_t *n, char *why,
                size_t whyn) {
  pthread_mutex_lock(&m->mu);
  for (;;) {
    entry *e = find(m, key);
    if (e) {
      *n = e->n;
      int rc = e->n > cap ? CKS_TOOSMALL : CKS_OK;
      if (rc == CKS_OK && e->n) memcpy(val, e->val, e->n);
      pthread_mutex_unlock(&m->mu);
      return rc;
    }
    double left = deadline - cks_now();
    if (left <= 0) break;
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) break;
    double end = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + left;
    ts.tv_sec = (time_t)end;
    ts.tv_nsec = (long)((end - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
    int rc = pthread_cond_timedwait(&m->changed, &m->mu, &ts);
    if (rc != 0 && rc != ETIMEDOUT && rc != EINTR) {
      pthread_mutex_unlock(&m->mu);
      cks_fmt(why, whyn, "waiting failed: %s", strerror(rc));
      return CKS_ERR;
    }
  }
  pthread_mutex_unlock(&m->mu);
  return CKS_TIMEOUT;
}

int cks_map_add(cks_map *m, const char *key, int64_t delta, int64_t *result, char *why, size_t whyn) {
  pthread_mutex_lock(&m->mu);
  entry *e = find(m, key);
  int64_t v = 0, sum;
  if (e && !cks_parse_counter(e->val, e->n, &v)) {
    char q[64];
    cks_quote(q, sizeof q, e->val, e->n, 32);
    pthread_mutex_unlock(&m->mu);
    cks_fmt(why, whyn, "it holds \"%s\" (%zu bytes), not a counter (decimal text)", q, e->n);
    return CKS_ERR;
  }
  if (!cks_add_checked(v, delta, &sum)) {
    pthread_mutex_unlock(&m->mu);
    cks_fmt(why, whyn, "%" PRId64 " + %" PRId64 " overflows a 64-bit counter", v, delta);
    return CKS_ERR;
  }
  char text[32];
  int k = snprintf(text, sizeof text, "%" PRId64, sum);
  if (put(m, key, text, (size_t)k) != 0) {
    pthread_mutex_unlock(&m->mu);
    cks_fmt(why, whyn, "out of memory");
    return CKS_ERR;
  }
  *result = sum;
  changed(m);
  return CKS_OK;
}

int cks_map_del(cks_map *m, const char *key) {
  pthread_mutex_lock(&m->mu);
  for (entry **pe = &m->buckets[hash(key)]; *pe; pe = &(*pe)->next) {
    if (strcmp((*pe)->key, key) == 0) {
      entry *e = *pe;
      *pe = e->next;
      free(e->key);
      free(e->val);
      free(e);
      break;
    }
  }
  pthread_mutex_unlock(&m->mu);
  return CKS_OK;
}

int cks_map_copy(cks_map *m, const char *key, unsigned char **val, size_t *n, char *why, size_t whyn) {
  pthread_mutex_lock(&m->mu);
  entry *e = find(m, key);
  if (!e) {
    pthread_mutex_unlock(&m->mu);
    return CKS_TIMEOUT;
  }
  unsigned char *copy = malloc(e->n ? e->n : 1);
  if (!copy) {
    pthread_mutex_unlock(&m->mu);
    cks_fmt(why, whyn, "out of memory");
    return CKS_ERR;
  }
  if (e->n) memcpy(copy, e->val, e->n);
  *val = copy;
  *n = e->n;
  pthread_mutex_unlock(&m->mu);
  return CKS_OK;
}

// ---------------------------------------------------------------- the in-memory store (world 1; tcp rank 0)

static int mem_set(ck_store *s, const char *key, const void *val, size_t n, char *why, size_t whyn) {
  return cks_map_set(s->map, key, val, n, why, whyn);
}
static int mem_get(ck_store *s, const char *key, double deadline, void *val, size_t cap, size_t *n, char *why,
                   size_t whyn) {
  return cks_map_get(s->map, key, deadline, val, cap, n, why, whyn);
}
static int mem_add(ck_store *s, const char *key, int64_t delta, double deadline, int64_t *result, char *why,
                   size_t whyn) {
  (void)deadline;
  return cks_map_add(s->map, key, delta, result, why, whyn);
}
static int mem_del(ck_store *s, const char *key, char *why, size_t whyn) {
  (void)why;
  (void)whyn;
  return cks_map_del(s->map, key);
}
static void mem_close(ck_store *s, double deadline) {
  if (s->server) cks_server_stop(s->server, deadline); /* tcp rank 0: the thread goes before the map */
  s->server = NULL;
  cks_map_free(s->map);
  s->map = NULL;
}

const cks_backend cks_memory_backend = {"memory", mem_set, mem_get, mem_add, mem_del, mem_close};

int cks_memory_open(ck_store *s, char *why, size_t whyn) {
  s->map = cks_map_new();
  if (!s->map) {
    cks_fmt(why, whyn, "out of memory (or no mutex)");
    return 1;
  }
  s->be = &cks_memory_backend;
  return 0;
}
