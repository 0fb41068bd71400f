/*
 * store_test_ranks.c — the rendezvous store's checks with several ranks, each rank a forked process (run_ranks in
 * store_test.c): set/get across ranks, waiting and timing out, counters, barriers, agreement and disagreement,
 * ranks that never arrive, 1 MiB values, signals interrupting every call, and the tcp server's own rules.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "store_test.h"

#define U __attribute__((unused))
/* A rank body that gets its store opened (timeout T) and closed around it. */
#define BODY(name, T)                                                                                              \
  static int name##_body(ck_store *s, const char *url, int rank, int world, char *why, size_t whyn);                \
  static int name(const char *url, int rank, int world, char *why, size_t whyn) {                                  \
    ck_store *s = open_store(url, rank, world, T, why, whyn);                                                      \
    if (!s) return 1;                                                                                              \
    int rc = name##_body(s, url, rank, world, why, whyn);                                                          \
    ck_store_close(s);                                                                                             \
    return rc;                                                                                                     \
  }                                                                                                                \
  static int name##_body(ck_store *s, U const char *url, U int rank, U int world, char *why, U size_t whyn)

BODY(set_get, opt_timeout) {
  char key[32], val[64], buf[64];
  size_t n = 0;
  int len = snprintf(val, sizeof val, "value of rank %d", rank) + 2; /* with a NUL and a '!' after it */
  val[len - 1] = '!';
  snprintf(key, sizeof key, "v/%d", rank);
  if (ck_store_set(s, key, val, (size_t)len, why, whyn) != 0) return 1;
  snprintf(key, sizeof key, "empty/%d", rank);
  if (ck_store_set(s, key, NULL, 0, why, whyn) != 0) return 1;
  for (int k = 0; k < world; k++) {
    len = snprintf(val, sizeof val, "value of rank %d", k) + 2;
    val[len - 1] = '!';
    snprintf(key, sizeof key, "v/%d", k);
    if (ck_store_get(s, key, buf, sizeof buf, &n, why, whyn) != 0) return 1;
    if (n != (size_t)len || memcmp(buf, val, n) != 0) return fail(why, whyn, "%s: wrong value (%zu bytes)", key, n);
    snprintf(key, sizeof key, "empty/%d", k);
    if (ck_store_get(s, key, buf, sizeof buf, &n, why, whyn) != 0) return 1;
    if (n != 0) return fail(why, whyn, "%s: %zu bytes, wanted 0", key, n);
  }
  return 0;
}

BODY(late_set, opt_timeout) {
  char buf[8];
  size_t n;
  if (rank == 1) {
    sleep_s(0.3);
    return ck_store_set(s, "late", "yes", 3, why, whyn);
  }
  double t0 = now_s();
  if (ck_store_get(s, "late", buf, sizeof buf, &n, why, whyn) != 0) return 1;
  if (now_s() - t0 < 0.25) return fail(why, whyn, "get returned after %.3f s, before the set", now_s() - t0);
  return n == 3 && memcmp(buf, "yes", 3) == 0 ? 0 : fail(why, whyn, "wrong value");
}

BODY(get_timeout, 0.5) {
  char buf[8], err[1024] = "";
  size_t n;
  if (rank == 0) { /* (its close waits for rank 1 only up to the 0.5 s timeout) */
    sleep_s(1);
    return 0;
  }
  double t0 = now_s();
  if (ck_store_get(s, "never/set", buf, sizeof buf, &n, err, sizeof err) == 0) return fail(why, whyn, "it was set");
  double dt = now_s() - t0;
  if (dt < 0.45 || dt > 5) return fail(why, whyn, "gave up after %.3f s, not 0.5 s", dt);
  if (!has(err, "\"never/set\"") || !has(err, "rank 1 of 2") || !has(err, url) || !has(err, "not set within 0.5 s"))
    return fail(why, whyn, "message: %s", err);
  return 0;
}

BODY(small_buffer, opt_timeout) {
  char big[100] = {0}, buf[10], err[1024] = "";
  size_t n = 0;
  if (rank == 0 && ck_store_set(s, "hundred", big, sizeof big, why, whyn) != 0) return 1;
  if (ck_store_get(s, "hundred", buf, sizeof buf, &n, err, sizeof err) == 0) return fail(why, whyn, "it fit");
  if (n != 100 || !has(err, "100 bytes") || !has(err, "holds only 10")) return fail(why, whyn, "n %zu: %s", n, err);
  return 0;
}

#define ADDS 100
BODY(add_counter, opt_timeout) {
  int64_t res[ADDS], total = 0;
  char key[32], buf[32], err[1024] = "";
  size_t n;
  for (int i = 0; i < ADDS; i++)
    if (ck_store_add(s, "ctr", 1, &res[i], why, whyn) != 0) return 1;
  snprintf(key, sizeof key, "res/%d", rank);
  if (ck_store_set(s, key, res, sizeof res, why, whyn) != 0 || ck_store_barrier(s, "added", why, whyn) != 0 ||
      ck_store_add(s, "ctr", 0, &total, why, whyn) != 0)
    return 1;
  if (total != world * ADDS) return fail(why, whyn, "the counter is %" PRId64 ", not %d", total, world * ADDS);
  if (ck_store_get(s, "ctr", buf, sizeof buf - 1, &n, why, whyn) != 0) return 1;
  buf[n] = '\0';
  if (atoi(buf) != world * ADDS) return fail(why, whyn, "get(\"ctr\") is \"%s\"", buf);
  if (rank != 0) return ck_store_barrier(s, "checked", why, whyn);
  char *seen = calloc((size_t)world * ADDS + 1, 1);
  for (int k = 0; k < world && seen; k++) {
    snprintf(key, sizeof key, "res/%d", k);
    if (ck_store_get(s, key, res, sizeof res, &n, why, whyn) != 0) break;
    for (int i = 0; i < ADDS; i++) {
      if (res[i] < 1 || res[i] > world * ADDS || seen[res[i]]++) {
        fail(why, whyn, "add returned %" PRId64 " twice or out of range (rank %d)", res[i], k);
        break;
      }
    }
    if (why[0]) break;
  }
  free(seen);
  if (why[0]) return 1;
  if (ck_store_set(s, "text", "hello", 5, why, whyn) != 0) return 1;
  if (ck_store_add(s, "text", 1, NULL, err, sizeof err) == 0 || !has(err, "not a counter"))
    return fail(why, whyn, "adding to \"hello\": %s", err[0] ? err : "it worked");
  return ck_store_barrier(s, "checked", why, whyn);
}

BODY(barrier_waits, opt_timeout) {
  for (int round = 0; round < 3; round++) {
    char key[32];
    int64_t v = 0;
    snprintf(key, sizeof key, "arrive/%d", round);
    sleep_s(0.03 * rank);
    if (ck_store_add(s, key, 1, NULL, why, whyn) != 0 || ck_store_barrier(s, "round", why, whyn) != 0 ||
        ck_store_add(s, key, 0, &v, why, whyn) != 0)
      return 1;
    if (v != world) return fail(why, whyn, "round %d: %" PRId64 " of %d ranks had arrived", round, v, world);
  }
  return 0;
}

BODY(barrier_names, opt_timeout) {
  char err[1024] = "";
  if (ck_store_barrier(s, rank == 2 ? "other" : "same", err, sizeof err) == 0) return fail(why, whyn, "passed");
  if (!has(err, "rank 2") || !has(err, "\"other\"") || !has(err, "\"same\"") || !has(err, "barrier #1"))
    return fail(why, whyn, "message: %s", err);
  return 0;
}

static int count_files(const char *url, const char *part) {
  DIR *d = opendir(url + strlen("file://"));
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d)) != NULL;) n += strstr(e->d_name, part) != NULL;
  if (d) closedir(d);
  return n;
}

BODY(agree_ok, opt_timeout) {
  char sig[64];
  for (uint64_t seq = 0; seq < 60; seq++) {
    snprintf(sig, sizeof sig, "all_reduce f32[%d] sum", (int)(seq % 7) * 1024);
    if (ck_store_agree(s, seq, sig, why, whyn) != 0) return 1;
  }
  if (ck_store_barrier(s, "end", why, whyn) != 0) return 1;
  int left = strncmp(url, "file://", 7) == 0 ? count_files(url, "agree") : 0;
  if (left > world + 1) return fail(why, whyn, "%d files of agreement remain (the old seqs were not removed)", left);
  return 0;
}

BODY(agree_mismatch, opt_timeout) {
  char err[1024] = "";
  if (ck_store_agree(s, 1, "broadcast u8[128] 0", why, whyn) != 0) return 1;
  const char *mine = rank == 1 ? "all_reduce f32[16] sum" : "all_reduce f32[8] sum";
  const char *theirs = rank == 1 ? "all_reduce f32[8] sum" : "all_reduce f32[16] sum";
  if (ck_store_agree(s, 2, mine, err, sizeof err) == 0) return fail(why, whyn, "passed");
  if (!has(err, "seq 2") || !has(err, "rank 1") || !has(err, mine) || !has(err, theirs))
    return fail(why, whyn, "message: %s", err);
  return 0;
}

/* rank 2 (or 0, for `absent0`) never opens the store */
static int never_arrives(const char *url, int rank, int world, int absent, char *why, size_t whyn) {
  if (rank == absent) return 0;
  char err[1024] = "", name[16];
  ck_store *s = open_store(url, rank, world, 1, err, sizeof err);
  snprintf(name, sizeof name, "rank %d", absent);
  if (!s) { /* tcp without rank 0: no server to connect to */
    if (absent == 0 && has(err, "could not connect") && has(err, url) && has(err, "within 1 s")) return 0;
    return fail(why, whyn, "open: %s", err);
  }
  double t0 = now_s();
  int rc = ck_store_barrier(s, "b", err, sizeof err);
  double dt = now_s() - t0;
  if (rc == 0) fail(why, whyn, "the barrier passed");
  else if (!has(err, name) || !has(err, "never arrived") || dt > 6) fail(why, whyn, "%.2f s: %s", dt, err);
  else if (ck_store_agree(s, 7, "sig", err, sizeof err) == 0) fail(why, whyn, "agree passed");
  else if (!has(err, name) || !has(err, "never arrived") || !has(err, "seq 7")) fail(why, whyn, "agree: %s", err);
  ck_store_close(s);
  return why[0] != 0;
}
static int never_arrives2(const char *url, int rank, int world, char *why, size_t whyn) {
  return never_arrives(url, rank, world, 2, why, whyn);
}
static int never_arrives0(const char *url, int rank, int world, char *why, size_t whyn) {
  return never_arrives(url, rank, world, 0, why, whyn);
}

BODY(big_values, opt_timeout) {
  size_t size = CK_STORE_VALUE_MAX, n = 0;
  unsigned char *mine = malloc(size), *theirs = malloc(size);
  char key[16];
  int rc = !mine || !theirs ? fail(why, whyn, "out of memory") : 0;
  for (size_t i = 0; !rc && i < size; i++) mine[i] = (unsigned char)(i * 31 + 7 * (size_t)rank);
  snprintf(key, sizeof key, "big/%d", rank);
  if (!rc) rc = ck_store_set(s, key, mine, size, why, whyn);
  snprintf(key, sizeof key, "big/%d", 1 - rank);
  if (!rc) rc = ck_store_get(s, key, theirs, size, &n, why, whyn);
  for (size_t i = 0; !rc && i < size; i++)
    if (n != size || theirs[i] != (unsigned char)(i * 31 + 7 * (size_t)(1 - rank)))
      rc = fail(why, whyn, "byte %zu of %zu differs", i, n);
  free(mine);
  free(theirs);
  return rc;
}

static void on_alarm(int sig) { (void)sig; }

BODY(signals, opt_timeout) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: every blocking call sees EINTR */
  sigemptyset(&sa.sa_mask);
  struct itimerval it = {{0, 500}, {0, 500}}, off = {{0, 0}, {0, 0}};
  if (sigaction(SIGALRM, &sa, NULL) != 0 || setitimer(ITIMER_REAL, &it, NULL) != 0)
    return fail(why, whyn, "cannot set the timer");
  int rc = 0;
  for (int i = 0; i < 30 && !rc; i++) {
    char key[32], buf[32];
    size_t n;
    snprintf(key, sizeof key, "e/%d/%d", rank, i);
    rc = ck_store_set(s, key, key, strlen(key), why, whyn);
    snprintf(key, sizeof key, "e/%d/%d", (rank + 1) % world, i);
    if (!rc) rc = ck_store_get(s, key, buf, sizeof buf, &n, why, whyn);
    if (!rc && (n != strlen(key) || memcmp(buf, key, n) != 0)) rc = fail(why, whyn, "%s: wrong value", key);
    if (!rc) rc = ck_store_add(s, "e/ctr", 1, NULL, why, whyn);
    if (!rc) rc = ck_store_barrier(s, "e", why, whyn);
    if (!rc) rc = ck_store_agree(s, (uint64_t)i, "sig", why, whyn);
  }
  setitimer(ITIMER_REAL, &off, NULL);
  return rc;
}

BODY(close_early, opt_timeout) {
  char buf[8];
  size_t n;
  if (rank == 0) return ck_store_set(s, "bye", "ok", 2, why, whyn); /* and closes at once */
  sleep_s(0.5);
  return ck_store_get(s, "bye", buf, sizeof buf, &n, why, whyn);
}

/* tcp: rank 0 closes (its timeout 0.3 s) while rank 1 (5 s) waits for a key that never comes */
static int closed_while_waiting(const char *url, int rank, int world, char *why, size_t whyn) {
  char buf[8], err[1024] = "";
  size_t n;
  ck_store *s = open_store(url, rank, world, rank == 0 ? 0.3 : 5, why, whyn);
  if (!s) return 1;
  int rc = rank == 0 ? 0 : ck_store_get(s, "never", buf, sizeof buf, &n, err, sizeof err);
  ck_store_close(s);
  if (rank == 1 && (rc == 0 || !has(err, "rank 0 closed its store"))) return fail(why, whyn, "get: %s", err);
  return 0;
}

static int twice(const char *url, int rank, int world, char *why, size_t whyn) {
  char err[1024] = "";
  if (rank == 0) {
    ck_store *s = open_store(url, 0, world, 1.5, why, whyn);
    ck_store_close(s);
    return s == NULL;
  }
  if (rank == 2) sleep_s(0.3); /* the second process of rank 1 */
  ck_store *s = open_store(url, 1, world, 1, err, sizeof err);
  if (rank == 1) {
    if (!s) return fail(why, whyn, "open: %s", err);
    sleep_s(1);
    ck_store_close(s);
    return 0;
  }
  ck_store_close(s);
  return s || !has(err, "connected already") ? fail(why, whyn, "the second rank 1: %s", s ? "joined" : err) : 0;
}

static int wrong_world(const char *url, int rank, int world, char *why, size_t whyn) {
  char err[1024] = "";
  ck_store *s = open_store(url, rank, rank == 0 ? world : world + 1, 1, err, sizeof err);
  ck_store_close(s);
  if (rank == 0) return s ? 0 : fail(why, whyn, "open: %s", err);
  return s || !has(err, "world size is 3 but rank 0's is 2") ? fail(why, whyn, "%s", s ? "joined" : err) : 0;
}

void rank_checks(const char *kind) {
  double lim = 120;
  run_ranks(kind, "set/get across 4 ranks", 4, lim, set_get);
  run_ranks(kind, "get waits for a later set", 2, lim, late_set);
  run_ranks(kind, "get times out naming the key, rank and url", 2, lim, get_timeout);
  run_ranks(kind, "get into a small buffer fails saying so", 3, lim, small_buffer);
  run_ranks(kind, "add from 4 ranks counts exactly; not on text", 4, lim, add_counter);
  run_ranks(kind, "barrier waits for every rank (3 rounds)", 4, lim, barrier_waits);
  run_ranks(kind, "barrier at different names fails naming the rank", 3, lim, barrier_names);
  run_ranks(kind, "agree passes 60 equal seqs (and removes old keys)", 4, lim, agree_ok);
  run_ranks(kind, "agree mismatch on rank 1 fails on every rank, naming rank 1", 4, lim, agree_mismatch);
  run_ranks(kind, "a rank that never arrives is named (barrier, agree)", 3, lim, never_arrives2);
  run_ranks(kind, "rank 0 never arriving is named", 3, lim, never_arrives0);
  run_ranks(kind, "1 MiB values both ways", 2, lim, big_values);
  run_ranks(kind, "signals (EINTR) every 0.5 ms change nothing", 3, lim, signals);
  run_ranks(kind, "rank 0 closing first does not strand the others", 2, lim, close_early);
  if (strcmp(kind, "tcp") == 0) {
    run_ranks(kind, "rank 0 closing while a get waits tells that get why", 2, lim, closed_while_waiting);
    run_ranks(kind, "a second process of one rank is refused", 3, lim, twice);
    run_ranks(kind, "a rank with another world size is refused", 2, lim, wrong_world);
  }
}
