/*
 * dist_env.c — ck_dist_env: where this process is in a multi-process run, read from the variables its launcher
 * set: bin/ckrun's CUKERN_*, Open MPI's OMPI_COMM_WORLD_*, MPICH's PMI_*; else a single process. The rules and
 * the errors are in store.h.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* the variable as a non-negative int: 1 parsed, 0 not set, -1 not an integer (message in err) */
static int env_int(const char *name, int *out, char *err, size_t errn) {
  const char *v = getenv(name);
  if (!v) return 0;
  char q[64];
  cks_quote(q, sizeof q, v, strlen(v), 40);
  const char *p = v;
  while (isspace((unsigned char)*p)) p++;
  errno = 0;
  char *end;
  long x = isdigit((unsigned char)*p) ? strtol(p, &end, 10) : -1;
  if (x >= 0) {
    while (isspace((unsigned char)*end)) end++;
  }
  if (x < 0 || errno != 0 || *end != '\0' || x > 0x7fffffff) {
    cks_fmt(err, errn, "ck_dist_env: %s=\"%s\" is not a non-negative integer", name, q);
    return -1;
  }
  *out = (int)x;
  return 1;
}

int ck_dist_env(int *rank, int *world, int *local_rank, char *store_url, size_t urln, char *err, size_t errn) {
  static const struct {
    const char *rank, *world, *local, *who;
  } SOURCES[] = {
      {"CUKERN_RANK", "CUKERN_WORLD_SIZE", "CUKERN_LOCAL_RANK", "bin/ckrun"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "Open MPI"},
      {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPICH"},
  };
  if (!rank || !world || !local_rank || (!store_url && urln > 0)) {
    cks_fmt(err, errn, "ck_dist_env: an output pointer is NULL");
    return 1;
  }
  int r = 0, w = 1, l = 0;
  const char *who = NULL;
  for (size_t i = 0; i < sizeof SOURCES / sizeof SOURCES[0] && !who; i++) {
    int hr = env_int(SOURCES[i].rank, &r, err, errn), hw = env_int(SOURCES[i].world, &w, err, errn);
    if (hr < 0 || hw < 0) return 1;
    if (!hr && !hw) continue;
    if (!hr || !hw) {
      cks_fmt(err, errn, "ck_dist_env: %s is set but %s is not (%s sets both)", hr ? SOURCES[i].rank : SOURCES[i].world,
              hr ? SOURCES[i].world : SOURCES[i].rank, SOURCES[i].who);
      return 1;
    }
    who = SOURCES[i].who;
    int hl = env_int(SOURCES[i].local, &l, err, errn);
    if (hl < 0) return 1;
    if (!hl) l = r; /* one node */
    if (w < 1) {
      cks_fmt(err, errn, "ck_dist_env: %s=%d: the world size must be at least 1", SOURCES[i].world, w);
      return 1;
    }
    if (r >= w) {
      cks_fmt(err, errn, "ck_dist_env: %s=%d is not below %s=%d (ranks are 0..%d)", SOURCES[i].rank, r,
              SOURCES[i].world, w, w - 1);
      return 1;
    }
    if (l >= w) {
      cks_fmt(err, errn, "ck_dist_env: %s=%d is not below %s=%d", SOURCES[i].local, l, SOURCES[i].world, w);
      return 1;
    }
  }
  if (!who) r = 0, w = 1, l = 0;
  const char *url = getenv("CUKERN_STORE");
  if (!url) url = "";
  if (!url[0] && w > 1) {
    cks_fmt(err, errn, "ck_dist_env: rank %d of %d (from %s) but CUKERN_STORE is not set: set it to the same url "
            "in every rank, e.g. CUKERN_STORE=tcp://<rank 0's host>:29500 (or file:///shared/dir)", r, w, who);
    return 1;
  }
  if (strlen(url) >= urln) {
    cks_fmt(err, errn, "ck_dist_env: CUKERN_STORE is %zu characters; the buffer holds %zu", strlen(url),
            urln ? urln - 1 : 0);
    return 1;
  }
  memcpy(store_url, url, strlen(url) + 1);
  *rank = r;
  *world = w;
  *local_rank = l;
  return 0;
}
