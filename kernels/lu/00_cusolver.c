/*
 * 00_cusolver.c — LU ladder, step 0: the library reference, cusolverDn<t>getrf, one call per matrix of the batch on
 * the context's stream, one workspace for all (every entry has the same shape). Also the linalg layer's getrf for
 * matrices past the batched cuBLAS path (src/linalg/la_cuda.c). cuSOLVER is loaded at run time (cusolver_dl.h).
 * Returns 0, a cudaError_t, or CK_KERR_CUSOLVER(status) (la_cuda.c and la_lu.c name it).
 */
#include <cuda_runtime.h>

#include "../linalg/cusolver_dl.h"
#include "lu.h"

int ck_lu_cusolver(const void *desc, const ck_env *env) {
  const ck_lu_desc *d = (const ck_lu_desc *)desc;
  const ck_cusolver_api *s = ck_cusolver(NULL);
  if (!s) return CK_KERR_CUSOLVER(CUSOLVER_STATUS_NOT_INITIALIZED);
  cusolverDnHandle_t h = (cusolverDnHandle_t)env->cusolver; /* (la_lu_rung asks ck_submit for it) */
  if (!h) return CK_KERR_CUSOLVER(CUSOLVER_STATUS_NOT_INITIALIZED);
  ck_order_check(env);
  const int dbl = d->dtype == CK_F64;
  int lwork = 0;
  cusolverStatus_t st = dbl ? s->Dgetrf_bufferSize(h, d->m, d->n, (double *)d->a, d->lda, &lwork)
                            : s->Sgetrf_bufferSize(h, d->m, d->n, (float *)d->a, d->lda, &lwork);
  if (st) return CK_KERR_CUSOLVER(st);
  void *w = env->ws_alloc(env->owner, (size_t)(lwork > 0 ? lwork : 1) * (dbl ? 8 : 4));
  if (!w) return (int)cudaErrorMemoryAllocation;
  for (int64_t i = 0; i < d->batch && !st; ++i) {
    int32_t *ipiv = d->ipiv + i * d->sp, *info = d->info + i;
    st = dbl ? s->Dgetrf(h, d->m, d->n, (double *)d->a + i * d->sa, d->lda, (double *)w, ipiv, info)
             : s->Sgetrf(h, d->m, d->n, (float *)d->a + i * d->sa, d->lda, (float *)w, ipiv, info);
  }
  env->ws_free(env->owner, w);
  return st ? CK_KERR_CUSOLVER(st) : 0;
}
