/*
 * ckrun_rank.c — one rank of the launcher's end-to-end check (spec/ckrun_test.sh): what ck.dist.init{} will do,
 * in C. Reads its place from the environment bin/ckrun sets (ck_dist_env), opens the store it names, and shares
 * a 128-byte id the way NCCL's unique id is shared: rank 0 sets it, every other rank gets it; then every rank
 * agrees on a signature and meets at a barrier. Prints "rank R of W: id <checksum>" and exits 0, or prints the
 * store's error and exits 1. bin/ckrun runs it as LUA=<this program> (the script argument is ignored).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

int main(void) {
  char err[1024] = "", url[1024];
  int rank, world, local;
  ck_store *s = NULL;
  const char *t = getenv("CUKERN_STORE_TIMEOUT");
  double timeout = t ? atof(t) : 30;
  unsigned char id[128];
  size_t n = 0;
  if (ck_dist_env(&rank, &world, &local, url, sizeof url, err, sizeof err) != 0 ||
      ck_store_open(url, rank, world, timeout, &s, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  int rc = 0;
  if (rank == 0) {
    for (size_t i = 0; i < sizeof id; i++) id[i] = (unsigned char)(i * 7 + 3);
    rc = ck_store_set(s, "nccl_id", id, sizeof id, err, sizeof err);
  } else {
    rc = ck_store_get(s, "nccl_id", id, sizeof id, &n, err, sizeof err);
    if (rc == 0 && n != sizeof id) rc = (snprintf(err, sizeof err, "the id is %zu bytes", n), 1);
  }
  if (rc == 0) rc = ck_store_agree(s, 1, "all_reduce f32[1048576] sum", err, sizeof err);
  if (rc == 0) rc = ck_store_barrier(s, "done", err, sizeof err);
  unsigned sum = 0;
  for (size_t i = 0; i < sizeof id; i++) sum = sum * 31 + id[i];
  ck_store_close(s);
  if (rc != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  printf("rank %d of %d (local %d): id %08x\n", rank, world, local, sum);
  return 0;
}
