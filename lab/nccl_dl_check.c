/*
 * nccl_dl_check.c — a standalone check of src/dist/nccl_dl.c: loads NCCL at run time and prints what it found
 * (loaded, path, version, or why not), then checks the op/dtype maps and the argument paths of ck_nccl_wait
 * that need no GPU. Runs on a machine without a GPU; exits 1 when a check fails (not when NCCL is missing).
 *
 *   gcc -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Ikernels -Isrc/core -Isrc/dist -I/usr/local/cuda/include \
 *       lab/nccl_dl_check.c src/dist/nccl_dl.c -o build/nccl_dl_check \
 *       -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcudart -ldl -lpthread
 *   build/nccl_dl_check                                  # loaded=1 where libnccl is found
 *   CUKERN_NCCL_LIB=/nonexistent build/nccl_dl_check     # loaded=0 and why names the path and dlerror
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_kernels.h"
#include "nccl_dl.h"

static int failed;
#define CHECK(c)                                                  \
  do {                                                            \
    if (!(c)) {                                                   \
      printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);         \
      failed++;                                                   \
    }                                                             \
  } while (0)

int main(void) {
  const ck_nccl_api *a = ck_nccl();
  CHECK(a == ck_nccl()); /* loaded once */
  printf("loaded=%d\nversion=%d\npath=%s\nwhy=%s\n", a->loaded, a->version, a->path, a->why);
  printf("NCCL_NVLS_ENABLE=%s\n", getenv("NCCL_NVLS_ENABLE") ? getenv("NCCL_NVLS_ENABLE") : "(unset)");
  CHECK(getenv("NCCL_NVLS_ENABLE") != NULL);
  if (a->loaded) {
    CHECK(a->why[0] == '\0' && a->path[0] && a->version > 0);
    CHECK(a->AllReduce && a->CommAbort && a->CommGetAsyncError && a->GroupStart && a->GroupEnd);
    printf("optional: CommInitRankConfig=%s CommFinalize=%s GetLastError=%s\n",
           a->CommInitRankConfig ? "yes" : "no", a->CommFinalize ? "yes" : "no", a->GetLastError ? "yes" : "no");
  } else {
    CHECK(a->why[0] != '\0' && a->AllReduce == NULL && a->version == 0);
  }

  /* op codes */
  for (int op = 0; op < CK_NCOLL_OPS; op++) CHECK(ck_coll_op_parse(ck_coll_op_name(op)) == op);
  CHECK(ck_coll_op_parse("mean") == -1 && ck_coll_op_parse(NULL) == -1 && strcmp(ck_coll_op_name(9), "?") == 0);
  ncclRedOp_t r;
  CHECK(ck_nccl_redop(CK_COLL_SUM, &r) && r == ncclSum);
  CHECK(ck_nccl_redop(CK_COLL_MIN, &r) && r == ncclMin);
  CHECK(ck_nccl_redop(CK_COLL_AVG, &r) && (int)r == 4); /* any NCCL found here is 2.10+ */
  CHECK(!ck_nccl_redop(CK_NCOLL_OPS, &r) && !ck_nccl_redop(-1, &r));

  /* dtypes */
  ncclDataType_t t;
  CHECK(ck_nccl_dtype(CK_F32, &t) && t == ncclFloat32);
  CHECK(ck_nccl_dtype(CK_F64, &t) && t == ncclFloat64);
  CHECK(ck_nccl_dtype(CK_I32, &t) && t == ncclInt32);
  CHECK(ck_nccl_dtype(CK_F16, &t) && t == ncclFloat16);
  CHECK(ck_nccl_dtype(CK_BF16, &t) && t == ncclBfloat16);
  CHECK(!ck_nccl_dtype(CK_NDTYPES, &t) && !ck_nccl_dtype(-1, &t));

  /* error strings, loaded or not */
  printf("strerror(ncclInvalidArgument)=%s\n", ck_nccl_strerror(ncclInvalidArgument));
  CHECK(ck_nccl_strerror((ncclResult_t)99) != NULL);

  /* ck_nccl_wait without a GPU: nothing to wait for, and bad arguments */
  char err[256];
  int rc = ck_nccl_wait(a, NULL, 0, NULL, NULL, 0, 1.0, err, sizeof err);
  printf("wait(nothing)=%d err=%s\n", rc, err);
  CHECK(a->loaded ? rc == 0 : (rc != 0 && strcmp(err, a->why) == 0));
  rc = ck_nccl_wait(a, NULL, 1, NULL, NULL, 0, 1.0, err, sizeof err);
  printf("wait(bad)=%d err=%s\n", rc, err);
  CHECK(rc != 0 && err[0]);
  CHECK(ck_nccl_wait(a, NULL, -1, NULL, NULL, 0, 1.0, NULL, 0) != 0); /* no message buffer: still fails */

  printf(failed ? "%d check(s) FAILED\n" : "all checks passed\n", failed);
  return failed ? 1 : 0;
}
