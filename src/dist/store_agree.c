/*
 * store_agree.c — ck_store_barrier and ck_store_agree: one rendezvous through the store's keys.
 *
 * Every rank sets "#<kind>/<seq>/<rank>" to its signature (agree: the caller's; barrier: the barrier's name, seq
 * its count of barriers). Rank 0 reads all of them (waiting up to the timeout, then only looking, so the ranks
 * still missing are all named) and sets "#<kind>/<seq>/v", the verdict: "ok", "mismatch", or "missing r,r,...".
 * The others wait for the verdict; on a mismatch each reads the signatures itself to name the first rank that
 * differs from its own; when no verdict comes in time (rank 0 itself is missing, say), each looks at which
 * ranks' keys are there and names those that are not. '#' cannot be in a user's key, so these never collide.
 *
 * Cleanup: when rank 0 has every rank's key of seq N, every rank has finished the call before it (each sets its
 * key only after reading the previous verdict), so rank 0 then removes that call's keys. Two rounds of keys at
 * most stay in the store per kind.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

typedef struct round {
  const char *op;   /* "agree" / "barrier" */
  const char *kind; /* key part: "agree" / "barrier" */
  const char *verb; /* "passed" / "is at barrier" */
  uint64_t seq;
  const char *sig;
  size_t siglen;
  char what[160]; /* "seq 5" / "\"name\" (barrier #3 of this store)" */
} round;

static void key_of(const ck_store *s, const round *r, int rank, char *out, size_t n) {
  char name[96];
  if (rank < 0) snprintf(name, sizeof name, "#%s/%" PRIu64 "/v", r->kind, r->seq);
  else snprintf(name, sizeof name, "#%s/%" PRIu64 "/%d", r->kind, r->seq, rank);
  if (!cks_full_key(s, name, out, n)) out[0] = '\0'; /* cannot happen: prefix <= 48, name < 96 */
}

/* "rank 3" / "ranks 2, 3, 5 and 4 more" of the ranks in list[0..n) */
static void rank_list(char *out, size_t outn, const int *list, int n) {
  size_t o = 0;
  int shown = n < 8 ? n : 8;
  cks_fmt(out, outn, "rank%s ", n > 1 ? "s" : "");
  o = strlen(out);
  for (int i = 0; i < shown && o < outn; i++) {
    cks_fmt(out + o, outn - o, "%s%d", i == 0 ? "" : i == n - 1 ? " and " : ", ", list[i]);
    o += strlen(out + o);
  }
  if (n > shown && o < outn) cks_fmt(out + o, outn - o, " and %d more", n - shown);
}

static int missing_error(ck_store *s, const round *r, const int *list, int n, bool from_rank0, char *err,
                         size_t errn) {
  char ranks[128], q[160];
  rank_list(ranks, sizeof ranks, list, n);
  cks_quote(q, sizeof q, r->sig, r->siglen, 120);
  return cks_fail(s, r->op, r->what, err, errn, "%s%s never arrived within %g s (this is rank %d, which %s "
                  "\"%s\")", from_rank0 ? "rank 0 reports that " : "", ranks, s->timeout_s, s->rank, r->verb, q);
}

/* Reads rank `rank`'s signature into s->sigbuf (*n); CKS_TIMEOUT if absent at the deadline. */
static int read_sig(ck_store *s, const round *r, int rank, double deadline, size_t *n, char *why, size_t whyn) {
  char key[CKS_FULLKEY_MAX + 1];
  key_of(s, r, rank, key, sizeof key);
  int rc = s->be->get(s, key, deadline, s->sigbuf, CK_STORE_SIG_MAX, n, why, whyn);
  if (rc == CKS_TOOSMALL) {
    cks_fmt(why, whyn, "rank %d's signature is %zu bytes, more than %d", rank, *n, CK_STORE_SIG_MAX);
    return CKS_ERR;
  }
  return rc;
}

static bool same(const round *r, const ck_store *s, size_t n) {
  return n == r->siglen && memcmp(s->sigbuf, r->sig, n) == 0;
}

/* the first rank whose signature differs from this rank's, named in the error */
static int mismatch_error(ck_store *s, const round *r, double deadline, char *err, size_t errn) {
  char why[512] = "";
  for (int k = 0; k < s->world; k++) {
    if (k == s->rank) continue;
    size_t n = 0;
    int rc = read_sig(s, r, k, deadline, &n, why, sizeof why);
    if (rc == CKS_TIMEOUT) cks_fmt(why, sizeof why, "rank %d's signature is gone", k);
    if (rc != CKS_OK) return cks_fail(s, r->op, r->what, err, errn, "the ranks disagree, and %s", why);
    if (!same(r, s, n)) {
      char mine[160], theirs[160];
      cks_quote(mine, sizeof mine, r->sig, r->siglen, 120);
      cks_quote(theirs, sizeof theirs, s->sigbuf, n, 120);
      return cks_fail(s, r->op, r->what, err, errn, "the ranks disagree: this rank, rank %d, %s \"%s\" but "
                      "rank %d %s \"%s\"", s->rank, r->verb, mine, k, r->verb, theirs);
    }
  }
  return cks_fail(s, r->op, r->what, err, errn, "rank 0 found the ranks disagree, but all agree with this rank "
                  "(rank %d): was a key changed meanwhile?", s->rank);
}

static int remove_round(ck_store *s, const char *kind, uint64_t seq, char *err, size_t errn) {
  round old = {kind, kind, "", seq, "", 0, ""};
  char key[CKS_FULLKEY_MAX + 1], why[512] = "";
  for (int k = -1; k < s->world; k++) {
    key_of(s, &old, k, key, sizeof key);
    if (s->be->del(s, key, why, sizeof why) != CKS_OK)
      return cks_fail(s, kind, NULL, err, errn, "removing the keys of seq %" PRIu64 ": %s", seq, why);
  }
  return 0;
}

static int rank0(ck_store *s, round *r, double deadline, bool *prev, uint64_t *prev_seq, char *err, size_t errn) {
  char why[512] = "", key[CKS_FULLKEY_MAX + 1];
  int *missing = malloc((size_t)s->world * sizeof *missing);
  if (!missing) return cks_fail(s, r->op, r->what, err, errn, "out of memory");
  int nmiss = 0, bad = -1;
  for (int k = 1; k < s->world; k++) {
    size_t n = 0;
    int rc = read_sig(s, r, k, nmiss ? 0 : deadline, &n, why, sizeof why);
    if (rc == CKS_TIMEOUT) missing[nmiss++] = k;
    else if (rc != CKS_OK) {
      free(missing);
      return cks_fail(s, r->op, r->what, err, errn, "%s", why);
    } else if (bad < 0 && !same(r, s, n)) bad = k;
  }
  /* the verdict; rank lists stop at a few hundred ranks (the others then time out and look for themselves) */
  char verdict[1024] = "ok";
  if (nmiss) {
    size_t o = (size_t)snprintf(verdict, sizeof verdict, "missing ");
    for (int i = 0; i < nmiss && o + 12 < sizeof verdict; i++)
      o += (size_t)snprintf(verdict + o, sizeof verdict - o, "%s%d", i ? "," : "", missing[i]);
  } else if (bad >= 0) {
    snprintf(verdict, sizeof verdict, "mismatch");
  }
  key_of(s, r, -1, key, sizeof key);
  if (s->be->set(s, key, verdict, strlen(verdict), why, sizeof why) != CKS_OK) {
    free(missing);
    return cks_fail(s, r->op, r->what, err, errn, "%s", why);
  }
  if (nmiss) {
    int rc = missing_error(s, r, missing, nmiss, false, err, errn);
    free(missing);
    return rc;
  }
  free(missing);
  if (bad >= 0) return mismatch_error(s, r, deadline, err, errn);
  if (*prev && *prev_seq != r->seq && remove_round(s, r->kind, *prev_seq, err, errn) != 0) return 1;
  *prev = true;
  *prev_seq = r->seq;
  return 0;
}

static int other_rank(ck_store *s, round *r, double deadline, char *err, size_t errn) {
  char why[512] = "", key[CKS_FULLKEY_MAX + 1], verdict[1024];
  size_t n = 0;
  key_of(s, r, -1, key, sizeof key);
  int rc = s->be->get(s, key, deadline, verdict, sizeof verdict - 1, &n, why, sizeof why);
  if (rc == CKS_TOOSMALL) return cks_fail(s, r->op, r->what, err, errn, "rank 0's verdict is %zu bytes", n);
  if (rc == CKS_ERR) return cks_fail(s, r->op, r->what, err, errn, "%s", why);
  if (rc == CKS_TIMEOUT) { /* look who is missing */
    int *missing = malloc((size_t)s->world * sizeof *missing), nmiss = 0;
    if (!missing) return cks_fail(s, r->op, r->what, err, errn, "out of memory");
    for (int k = 0; k < s->world; k++) {
      if (k == s->rank) continue;
      rc = read_sig(s, r, k, 0, &n, why, sizeof why);
      if (rc == CKS_TIMEOUT) missing[nmiss++] = k;
      else if (rc != CKS_OK) break;
    }
    if (rc != CKS_OK && rc != CKS_TIMEOUT) rc = cks_fail(s, r->op, r->what, err, errn, "%s", why);
    else if (nmiss) rc = missing_error(s, r, missing, nmiss, false, err, errn);
    else rc = cks_fail(s, r->op, r->what, err, errn, "every rank arrived, but rank 0 gave no verdict within %g s "
                       "(is rank 0 stuck?)", s->timeout_s);
    free(missing);
    return rc;
  }
  verdict[n] = '\0';
  if (strcmp(verdict, "ok") == 0) return 0;
  if (strcmp(verdict, "mismatch") == 0) return mismatch_error(s, r, deadline, err, errn);
  if (strncmp(verdict, "missing ", 8) == 0) {
    int *missing = malloc((size_t)s->world * sizeof *missing), nmiss = 0;
    if (!missing) return cks_fail(s, r->op, r->what, err, errn, "out of memory");
    for (char *p = verdict + 8, *end; *p && nmiss < s->world; p = *end ? end + 1 : end) {
      long v = strtol(p, &end, 10);
      if (end == p) break;
      missing[nmiss++] = (int)v;
    }
    rc = missing_error(s, r, missing, nmiss, true, err, errn);
    free(missing);
    return rc;
  }
  char q[64];
  cks_quote(q, sizeof q, verdict, n, 40);
  return cks_fail(s, r->op, r->what, err, errn, "rank 0's verdict \"%s\" makes no sense", q);
}

static int rendezvous(ck_store *s, round *r, bool *prev, uint64_t *prev_seq, char *err, size_t errn) {
  double deadline = cks_now() + s->timeout_s;
  char key[CKS_FULLKEY_MAX + 1], why[512] = "";
  key_of(s, r, s->rank, key, sizeof key);
  if (s->be->set(s, key, r->sig, r->siglen, why, sizeof why) != CKS_OK)
    return cks_fail(s, r->op, r->what, err, errn, "%s", why);
  if (s->world == 1) return 0; /* (its key is removed by the next call) */
  if (s->rank == 0) return rank0(s, r, deadline, prev, prev_seq, err, errn);
  return other_rank(s, r, deadline, err, errn);
}

int ck_store_barrier(ck_store *s, const char *name, char *err, size_t errn) {
  if (!s) return cks_fail(NULL, "barrier", NULL, err, errn, "the store is NULL (not opened, or closed)");
  char buf[256];
  const char *why = cks_bad_key(name, buf, sizeof buf);
  if (why) return cks_fail(s, "barrier", NULL, err, errn, "the barrier's name %s", why);
  round r = {"barrier", "barrier", "is at barrier", s->barriers++, name, strlen(name), ""};
  char q[96];
  cks_quote(q, sizeof q, name, r.siglen, 64);
  cks_fmt(r.what, sizeof r.what, "\"%s\" (barrier #%" PRIu64 " of this store)", q, r.seq + 1);
  if (s->world == 1) return 0;
  return rendezvous(s, &r, &s->barrier_prev, &s->barrier_prev_seq, err, errn);
}

int ck_store_agree(ck_store *s, uint64_t seq, const char *sig, char *err, size_t errn) {
  if (!s) return cks_fail(NULL, "agree", NULL, err, errn, "the store is NULL (not opened, or closed)");
  round r = {"agree", "agree", "passed", seq, sig, sig ? strlen(sig) : 0, ""};
  cks_fmt(r.what, sizeof r.what, "seq %" PRIu64, seq);
  if (!sig) return cks_fail(s, "agree", r.what, err, errn, "the signature is NULL");
  if (r.siglen > CK_STORE_SIG_MAX)
    return cks_fail(s, "agree", r.what, err, errn, "the signature is %zu bytes; the limit is %d", r.siglen,
                    CK_STORE_SIG_MAX);
  if (s->world == 1) return 0;
  return rendezvous(s, &r, &s->agree_prev, &s->agree_prev_seq, err, errn);
}
