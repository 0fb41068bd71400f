/*
 * la_cuda.c — one ck_la_job (kernels/linalg/linalg.h) on the GPU: cuSOLVER (loaded at run time: cusolver_dl.h),
 * cuBLAS (trsm, and getrf/getrs batched for many small matrices) and the layer's two kernels (la_aux.cu), all
 * inside ONE launcher run by ck_submit (so queued small ops run first and the order check sees it).
 *
 * Paths:
 *   getrf / getrs   batch >= 2 and n <= CK_LA_SMALL (square): cublas<t>getrfBatched / getrsBatched, one call for the
 *                   whole batch (pointer arrays made on the device); otherwise cusolverDn<t>getrs per entry, and
 *                   getrf by the LU ladder's rung 0 (kernels/lu/00_cusolver.c, the same call, one implementation).
 *                   c64/c128 (solve, inv): the C/Z forms of the same calls; complex getrf runs here (the ladder's
 *                   rungs are real).
 *   potrf           batch >= 2 and n <= CK_LA_POTRF_BATCHED (128): cusolverDn<t>potrfBatched, one call for the batch (its
 *                   other triangle is scratch: the layer zeroes it anyway). The loop below ran 10^4 Cholesky factors of
 *                   8 x 8 in 147 ms on an H100 where PyTorch took 0.09 (round 3 session 12, lab/linalg_host.lua).
 *   potrf, potrs, geqrf, orgqr, ormqr, gesvd (m >= n: the layer transposes otherwise), syevd: cusolverDn<t>... per
 *                   entry, one workspace (sized once: every entry has the same shape), on the context's stream.
 *                   c64/c128: the C/Z forms, with ungqr, unmqr and heevd for orgqr, ormqr and syevd (gesvd's S and
 *                   heevd's W are real arrays: their entries step by the part's size); trans 'C' is CUBLAS_OP_C.
 *   gesvd           by default cusolverDn<t>gesvdj (one-sided Jacobi: several times faster than gesvd's QR
 *                   iteration on a GPU, and what PyTorch runs first), V transposed (conjugated) into gesvd's V^H by
 *                   cuBLAS geam so the layer sees one result; info > 0 where it did not converge, and the layer then
 *                   runs gesvd (qr_svd = 1), as PyTorch falls back.
 *   potrf_small     Cholesky of f32/f64 matrices of order <= 32 (any batch): la_small.cu's one kernel (the factor, the
 *                   other triangle zeroed, info and the NaN/Inf check of A), no library call.
 *   gesv_small      solve of f32/f64 systems of order <= 32 (any batch): la_small.cu's one kernel (LU, both solves,
 *                   pivots, info and the NaN/Inf check of A), no library call.
 *   trsm            cublas<t>trsm per entry (left side: the layer turns a right-side solve around); C/Z too.
 *   gesv_irs        cusolverDnD{H,B,X,S}gesv: LU in f16 / bf16 / tf32 / f32 on the tensor cores, refined to f64.
 *   geev            cusolverDnXgeev on c64/c128 buffers, per entry (the layer made A complex).
 * A loop over entries issues its calls back to back on one stream: cuSOLVER's per-call work is what a batch of
 * large matrices costs anyway; the batched calls are for the small ones, where the launch is the cost.
 *
 * A failed library call is recorded in the job's `fail` fields and the launcher returns 0; ck_la_cuda then raises
 * it with the routine's name and cuSOLVER's status (ck_submit's codes know cuBLAS and CUDA, not cuSOLVER).
 * info stays on the device: the layer reads it (or not: {check = false}).
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_linalg.h"
#include "la_int.h"
#include "linalg/cusolver_dl.h"
#include "lu/lu.h"

/* The job and where its launcher records a library failure. */
typedef struct la_run {
  ck_la_job *j;
  const char *fail_call; /* "cusolverDnDgetrf", or NULL */
  int fail_status;
  char why[160]; /* no cuSOLVER handle in the launch's environment (ck_submit reports a failed load or create) */
} la_run;

/* Call cuSOLVER routine NAME in the job's precision: s->S##NAME(args) or s->D##NAME(args), with float * or double *
 * for the data (the same argument list, cast by the routine's own type). */
#define CUSOLVER(NAME, ...)                                                                                          \
  (dbl ? (r->fail_call = "cusolverDnD" #NAME, (int)s->D##NAME(__VA_ARGS__))                                          \
       : (r->fail_call = "cusolverDnS" #NAME, (int)s->S##NAME(__VA_ARGS__)))
/* The same for the routines whose complex forms keep the name (getrf, getrs, potrf, potrs, geqrf, gesvd): C##NAME or
 * Z##NAME on c64/c128 jobs, with cuComplex * / cuDoubleComplex * for the data. */
#define CUSOLVER_CX(NAME, ...)                                                                                       \
  (j->dtype == CK_C128 ? (r->fail_call = "cusolverDnZ" #NAME, (int)s->Z##NAME(__VA_ARGS__))                          \
   : j->dtype == CK_C64 ? (r->fail_call = "cusolverDnC" #NAME, (int)s->C##NAME(__VA_ARGS__))                         \
                        : CUSOLVER(NAME, __VA_ARGS__))
/* The same where the complex routine has the unitary name: geqrf's Q (orgqr / ungqr), Q b (ormqr / unmqr), the
 * symmetric / Hermitian eigensolver (syevd / heevd). The argument lists match (gesvd's S and rwork and heevd's W are
 * real pointers in every form). */
#define CUSOLVER_CU(NAME, CNAME, ...)                                                                               \
  (j->dtype == CK_C128 ? (r->fail_call = "cusolverDnZ" #CNAME, (int)s->Z##CNAME(__VA_ARGS__))                        \
   : j->dtype == CK_C64 ? (r->fail_call = "cusolverDnC" #CNAME, (int)s->C##CNAME(__VA_ARGS__))                       \
                        : CUSOLVER(NAME, __VA_ARGS__))
#define FAILED(st) ((st) != 0 ? (r->fail_status = (st), 1) : (r->fail_call = NULL, 0))

static void *elem(void *base, int64_t stride, int64_t i, size_t es) {
  return base ? (char *)base + (size_t)(i * stride) * es : NULL;
}

/* op(A) for cuBLAS and cuSOLVER from the job's letter: 'T' transpose, 'C' conjugate transpose (complex jobs) */
static cublasOperation_t op_of(char trans) {
  return trans == 'C' ? CUBLAS_OP_C : trans == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/* Batched getrf/getrs through cuBLAS for many small square matrices. */
static int small_lu(la_run *r, const ck_env *env) {
  ck_la_job *j = r->j;
  const bool dbl = j->dtype == CK_F64;
  const size_t es = ck_dtype_size((ck_dtype)j->dtype);
  const int64_t nb = j->batch;
  void **pa = (void **)env->ws_alloc(env->owner, (size_t)nb * sizeof(void *) * 2);
  if (!pa) return (int)cudaErrorMemoryAllocation;
  void **pb = pa + nb;
  int rc = ck_la_ptrs(pa, j->a, j->sa * (int64_t)es, nb, env);
  if (!rc && j->op == CK_LA_GETRS) rc = ck_la_ptrs(pb, j->b, j->sb * (int64_t)es, nb, env);
  cublasHandle_t h = (cublasHandle_t)env->cublas;
  int st = 0, hinfo = 0;
  if (rc) goto done;
  ck_order_check(env);
  if (j->op == CK_LA_GETRF && ck_dtype_is_complex((ck_dtype)j->dtype)) {
    const bool z = j->dtype == CK_C128;
    r->fail_call = z ? "cublasZgetrfBatched" : "cublasCgetrfBatched";
    st = z ? (int)cublasZgetrfBatched(h, j->n, (cuDoubleComplex *const *)pa, j->lda, j->ipiv, j->info, (int)nb)
           : (int)cublasCgetrfBatched(h, j->n, (cuComplex *const *)pa, j->lda, j->ipiv, j->info, (int)nb);
  } else if (j->op == CK_LA_GETRS && ck_dtype_is_complex((ck_dtype)j->dtype)) {
    const bool z = j->dtype == CK_C128;
    const cublasOperation_t op = op_of(j->trans);
    r->fail_call = z ? "cublasZgetrsBatched" : "cublasCgetrsBatched";
    st = z ? (int)cublasZgetrsBatched(h, op, j->n, j->nrhs, (const cuDoubleComplex *const *)pa, j->lda, j->ipiv,
                                      (cuDoubleComplex *const *)pb, j->ldb, &hinfo, (int)nb)
           : (int)cublasCgetrsBatched(h, op, j->n, j->nrhs, (const cuComplex *const *)pa, j->lda, j->ipiv,
                                      (cuComplex *const *)pb, j->ldb, &hinfo, (int)nb);
  } else if (j->op == CK_LA_GETRF) {
    r->fail_call = dbl ? "cublasDgetrfBatched" : "cublasSgetrfBatched";
    st = dbl ? (int)cublasDgetrfBatched(h, j->n, (double *const *)pa, j->lda, j->ipiv, j->info, (int)nb)
             : (int)cublasSgetrfBatched(h, j->n, (float *const *)pa, j->lda, j->ipiv, j->info, (int)nb);
  } else {
    r->fail_call = dbl ? "cublasDgetrsBatched" : "cublasSgetrsBatched";
    const cublasOperation_t op = op_of(j->trans);
    st = dbl ? (int)cublasDgetrsBatched(h, op, j->n, j->nrhs, (const double *const *)pa, j->lda, j->ipiv,
                                        (double *const *)pb, j->ldb, &hinfo, (int)nb)
             : (int)cublasSgetrsBatched(h, op, j->n, j->nrhs, (const float *const *)pa, j->lda, j->ipiv,
                                        (float *const *)pb, j->ldb, &hinfo, (int)nb);
  }
  if (st) rc = CK_KERR_CUBLAS(st);
  else r->fail_call = NULL;
done:
  env->ws_free(env->owner, pa);
  return rc;
}

static int trsm(la_run *r, const ck_env *env) {
  ck_la_job *j = r->j;
  const int dt = j->dtype;
  const size_t es = ck_dtype_size((ck_dtype)dt);
  cublasHandle_t h = (cublasHandle_t)env->cublas;
  const cublasFillMode_t uplo = j->uplo == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  const cublasOperation_t op = op_of(j->trans);
  const cublasDiagType_t dg = j->diag == 'U' ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
  const cublasSideMode_t L = CUBLAS_SIDE_LEFT;
  const double one = 1;
  const float onef = 1;
  const cuComplex onec = {1, 0};
  const cuDoubleComplex onez = {1, 0};
  ck_order_check(env);
  for (int64_t i = 0; i < j->batch; ++i) {
    void *a = elem(j->a, j->sa, i, es), *b = elem(j->b, j->sb, i, es);
    const int m = j->m, n = j->nrhs, lda = j->lda, ldb = j->ldb;
    const int st = dt == CK_C128 ? (int)cublasZtrsm(h, L, uplo, op, dg, m, n, &onez, a, lda, b, ldb)
                   : dt == CK_C64 ? (int)cublasCtrsm(h, L, uplo, op, dg, m, n, &onec, a, lda, b, ldb)
                   : dt == CK_F64 ? (int)cublasDtrsm(h, L, uplo, op, dg, m, n, &one, a, lda, b, ldb)
                                  : (int)cublasStrsm(h, L, uplo, op, dg, m, n, &onef, a, lda, b, ldb);
    if (st) return CK_KERR_CUBLAS(st);
  }
  return 0;
}

/* Iterative refinement: x = A^-1 b with the LU in a lower precision, refined to f64. */
static int irs(la_run *r, const ck_env *env, const ck_cusolver_api *s, cusolverDnHandle_t h) {
  ck_la_job *j = r->j;
  size_t ws = 0;
  int st;
  typedef cusolverStatus_t (*bs_f)(cusolverDnHandle_t, cusolver_int_t, cusolver_int_t, double *, cusolver_int_t,
                                   cusolver_int_t *, double *, cusolver_int_t, double *, cusolver_int_t, void *,
                                   size_t *);
  bs_f bsz = j->refine == CK_LA_IRS_F16 ? s->DHgesv_bufferSize : j->refine == CK_LA_IRS_BF16 ? s->DBgesv_bufferSize
             : j->refine == CK_LA_IRS_TF32 ? s->DXgesv_bufferSize : s->DSgesv_bufferSize;
  __typeof__(s->DHgesv) run = j->refine == CK_LA_IRS_F16 ? s->DHgesv : j->refine == CK_LA_IRS_BF16 ? s->DBgesv
                              : j->refine == CK_LA_IRS_TF32 ? s->DXgesv : s->DSgesv;
  r->fail_call = j->refine == CK_LA_IRS_F16 ? "cusolverDnDHgesv" : j->refine == CK_LA_IRS_BF16 ? "cusolverDnDBgesv"
                 : j->refine == CK_LA_IRS_TF32 ? "cusolverDnDXgesv" : "cusolverDnDSgesv";
  if (FAILED((int)bsz(h, j->n, j->nrhs, NULL, j->lda, NULL, NULL, j->ldb, NULL, j->ldu, NULL, &ws))) return 0;
  void *w = ws ? env->ws_alloc(env->owner, ws) : NULL;
  if (ws && !w) return (int)cudaErrorMemoryAllocation;
  for (int64_t i = 0; i < j->batch; ++i) {
    int it = 0;
    st = (int)run(h, j->n, j->nrhs, (double *)elem(j->a, j->sa, i, 8), j->lda, j->ipiv + i * j->sp,
                  (double *)elem(j->b, j->sb, i, 8), j->ldb, (double *)elem(j->u, j->su, i, 8), j->ldu, w, ws, &it,
                  j->info + i);
    if (FAILED(st)) break;
    j->iters = it;
  }
  if (w) env->ws_free(env->owner, w);
  return 0;
}

/* The general eigenproblem on complex buffers: cusolverDnXgeev (64-bit API), right eigenvectors only (cuSOLVER has
 * no left ones). Its host workspace is freed after a stream sync, since the call may still read it. */
static int geev(la_run *r, const ck_env *env, const ck_cusolver_api *s, cusolverDnHandle_t h) {
  ck_la_job *j = r->j;
  const cudaDataType t = j->dtype == CK_C128 ? CUDA_C_64F : CUDA_C_32F;
  const size_t es = j->dtype == CK_C128 ? 16 : 8;
  const cusolverEigMode_t none = CUSOLVER_EIG_MODE_NOVECTOR;
  const cusolverEigMode_t jv = j->jobu == 'V' ? CUSOLVER_EIG_MODE_VECTOR : none;
  const int64_t ldu = j->ldu > 0 ? j->ldu : 1;
  cusolverDnParams_t p = NULL;
  size_t dws = 0, hws = 0;
  void *dw = NULL, *hw = NULL;
  int rc = 0;
  r->fail_call = "cusolverDnCreateParams";
  if (FAILED((int)s->CreateParams(&p))) return 0;
  r->fail_call = "cusolverDnXgeev_bufferSize";
  if (FAILED((int)s->Xgeev_bufferSize(h, p, none, jv, j->n, t, j->a, j->lda, t, j->s, t, NULL, 1, t, j->u, ldu, t, &dws,
                                      &hws)))
    goto done;
  if (dws && !(dw = env->ws_alloc(env->owner, dws))) { rc = (int)cudaErrorMemoryAllocation; goto done; }
  if (hws && !(hw = malloc(hws))) { rc = (int)cudaErrorMemoryAllocation; goto done; }
  for (int64_t i = 0; i < j->batch; ++i) {
    r->fail_call = "cusolverDnXgeev";
    if (FAILED((int)s->Xgeev(h, p, none, jv, j->n, t, elem(j->a, j->sa, i, es), j->lda, t, elem(j->s, j->ss, i, es), t,
                             NULL, 1, t, elem(j->u, j->su, i, es), ldu, t, dw, dws, hw, hws, j->info + i)))
      break;
  }
done:
  if (hw) {
    const int e = (int)cudaStreamSynchronize((cudaStream_t)env->stream);
    if (e && !rc) rc = e;
    free(hw);
  }
  if (dw) env->ws_free(env->owner, dw);
  s->DestroyParams(p);
  return rc;
}

/* V^H (k x k, into vt) from V (k x k, ld k): cuBLAS geam, C = op(A) with beta 0 (B is C itself, not read). */
static int geam_h(const ck_la_job *j, const ck_env *env, const void *v, void *vt, int k) {
  cublasHandle_t h = (cublasHandle_t)env->cublas;
  const int ld = j->ldvt;
  const float of[2] = {1, 0}, zf[2] = {0, 0};
  const double od[2] = {1, 0}, zd[2] = {0, 0};
  int st;
  switch (j->dtype) {
  case CK_C128:
    st = (int)cublasZgeam(h, CUBLAS_OP_C, CUBLAS_OP_N, k, k, (const cuDoubleComplex *)od, v, k, (const cuDoubleComplex *)zd,
                          vt, ld, vt, ld);
    break;
  case CK_C64:
    st = (int)cublasCgeam(h, CUBLAS_OP_C, CUBLAS_OP_N, k, k, (const cuComplex *)of, v, k, (const cuComplex *)zf, vt, ld,
                          vt, ld);
    break;
  case CK_F64: st = (int)cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, k, k, od, v, k, zd, vt, ld, vt, ld); break;
  default: st = (int)cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, k, k, of, v, k, zf, vt, ld, vt, ld); break;
  }
  return st ? CK_KERR_CUBLAS(st) : 0;
}

/* The SVD by one-sided Jacobi (the layer gives m >= n): gesvdj per entry with econ for jobu 'S', V into a scratch
 * matrix and then, as V^H, into vt (gesvd's form). Default tolerance (the dtype's eps) and sweeps (100). Without
 * vectors (jobu 'N') U and V still get scratch matrices (econ): gesvdj wrote through NULL ones on the H100 (an
 * illegal address, round 3 session 6), whatever its documentation says of NOVECTOR. */
static int gesvdj(la_run *r, const ck_env *env, const ck_cusolver_api *s, cusolverDnHandle_t h) {
  ck_la_job *j = r->j;
  const bool dbl = j->dtype == CK_F64, vec = j->jobu != 'N';
  const size_t es = ck_dtype_size((ck_dtype)j->dtype), rs = ck_dtype_size(ck_complex_part((ck_dtype)j->dtype));
  const cusolverEigMode_t jz = vec ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int econ = j->jobu != 'A', k = j->n, m1 = j->m > 1 ? j->m : 1, k1 = k > 1 ? k : 1;
  const int ldu = vec && j->ldu > 0 ? j->ldu : m1, ldv = k1;
  gesvdjInfo_t p = NULL;
  int lwork = 0, rc = 0;
  void *w = NULL, *v = NULL, *us = NULL, *u0; /* us: U's scratch without vectors */
  r->fail_call = "cusolverDnCreateGesvdjInfo";
  if (FAILED((int)s->CreateGesvdjInfo(&p))) return 0;
  if (!(v = env->ws_alloc(env->owner, (size_t)ldv * (size_t)k1 * es)) ||
      (!vec && !(us = env->ws_alloc(env->owner, (size_t)m1 * (size_t)k1 * es)))) {
    rc = (int)cudaErrorMemoryAllocation;
    goto done;
  }
  u0 = vec ? j->u : us;
  if (FAILED(CUSOLVER_CX(gesvdj_bufferSize, h, jz, econ, j->m, j->n, j->a, j->lda, j->s, u0, ldu, v, ldv, &lwork, p)))
    goto done;
  if (!(w = env->ws_alloc(env->owner, (size_t)(lwork > 0 ? lwork : 1) * es))) {
    rc = (int)cudaErrorMemoryAllocation;
    goto done;
  }
  for (int64_t i = 0; i < j->batch; ++i) {
    if (FAILED(CUSOLVER_CX(gesvdj, h, jz, econ, j->m, j->n, elem(j->a, j->sa, i, es), j->lda, elem(j->s, j->ss, i, rs),
                           vec ? elem(j->u, j->su, i, es) : us, ldu, v, ldv, w, lwork, j->info + i, p)))
      break;
    if (vec && j->vt && (rc = geam_h(j, env, v, elem(j->vt, j->svt, i, es), k))) break;
  }
done:
  if (us) env->ws_free(env->owner, us);
  if (v) env->ws_free(env->owner, v);
  if (w) env->ws_free(env->owner, w);
  s->DestroyGesvdjInfo(p);
  return rc;
}

/* potrf of a batch of small matrices: one cusolverDn<t>potrfBatched call over a device array of pointers, info per
 * entry in j->info as the loop's calls write it. */
static bool la_small_potrf(const ck_la_job *j) {
  return j->op == CK_LA_POTRF && j->batch >= 2 && j->n <= CK_LA_POTRF_BATCHED && j->batch <= 0x7fffffff;
}
static int small_potrf(la_run *r, const ck_env *env, const ck_cusolver_api *s, cusolverDnHandle_t h) {
  ck_la_job *j = r->j;
  const int64_t nb = j->batch;
  void **pa = (void **)env->ws_alloc(env->owner, (size_t)nb * sizeof(void *));
  if (!pa) return (int)cudaErrorMemoryAllocation;
  int rc = ck_la_ptrs(pa, j->a, j->sa * (int64_t)ck_dtype_size((ck_dtype)j->dtype), nb, env);
  if (!rc) {
    const cublasFillMode_t uplo = j->uplo == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    int st;
    switch (j->dtype) {
    case CK_F32:
      r->fail_call = "cusolverDnSpotrfBatched";
      st = (int)s->SpotrfBatched(h, uplo, j->n, (float **)pa, j->lda, j->info, (int)nb);
      break;
    case CK_F64:
      r->fail_call = "cusolverDnDpotrfBatched";
      st = (int)s->DpotrfBatched(h, uplo, j->n, (double **)pa, j->lda, j->info, (int)nb);
      break;
    case CK_C64:
      r->fail_call = "cusolverDnCpotrfBatched";
      st = (int)s->CpotrfBatched(h, uplo, j->n, (cuComplex **)pa, j->lda, j->info, (int)nb);
      break;
    default:
      r->fail_call = "cusolverDnZpotrfBatched";
      st = (int)s->ZpotrfBatched(h, uplo, j->n, (cuDoubleComplex **)pa, j->lda, j->info, (int)nb);
      break;
    }
    (void)FAILED(st);
  }
  env->ws_free(env->owner, pa);
  return rc;
}

/* getrf / getrs of many small square matrices: cuBLAS's batched calls (small_lu), no cuSOLVER */
static bool la_small_lu(const ck_la_job *j) {
  return (j->op == CK_LA_GETRF || j->op == CK_LA_GETRS) && j->batch >= 2 && j->m == j->n && j->n <= CK_LA_SMALL &&
         j->batch <= 0x7fffffff;
}

static int la_launch(const void *arg, const ck_env *env) {
  la_run *r = (la_run *)arg;
  ck_la_job *j = r->j;
  if (j->op == CK_LA_TRI) return ck_la_tri(j, env);
  if (j->op == CK_LA_TRSM) return trsm(r, env);
  if (j->op == CK_LA_GESV_SMALL) return ck_la_small_gesv(j, env);
  if (j->op == CK_LA_POTRF_SMALL) return ck_la_small_potrf(j, env);
  if (la_small_lu(j)) return small_lu(r, env);
  /* (ck_submit loaded cuSOLVER and bound the device's handle to the stream: needs_cusolver in ck_la_cuda) */
  const ck_cusolver_api *s = ck_cusolver(NULL);
  cusolverDnHandle_t h = (cusolverDnHandle_t)env->cusolver;
  if (!s || !h) {
    snprintf(r->why, sizeof r->why, "no cuSOLVER handle on cuda:%d", env->device);
    return 0;
  }
  ck_order_check(env);
  if (j->op == CK_LA_GESV_IRS) return irs(r, env, s, h);
  if (j->op == CK_LA_GEEV) return geev(r, env, s, h);
  if (j->op == CK_LA_GESVD && !j->qr_svd) return gesvdj(r, env, s, h);
  if (la_small_potrf(j)) return small_potrf(r, env, s, h);
  const bool dbl = j->dtype == CK_F64;
  const size_t es = ck_dtype_size((ck_dtype)j->dtype);
  const size_t rs = ck_dtype_size(ck_complex_part((ck_dtype)j->dtype)); /* gesvd's S, heevd's W: real */
  const cublasFillMode_t uplo = j->uplo == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  const cublasOperation_t op = op_of(j->trans);
  int lwork = 0; /* elements */
  switch (j->op) {  /* one workspace for the batch: every entry has the same shape */
  case CK_LA_GETRF: /* (complex only: real getrf is the LU ladder's rung 0, ck_la_cuda) */
    if (FAILED(CUSOLVER_CX(getrf_bufferSize, h, j->m, j->n, j->a, j->lda, &lwork))) return 0;
    break;
  case CK_LA_POTRF: if (FAILED(CUSOLVER_CX(potrf_bufferSize, h, uplo, j->n, j->a, j->lda, &lwork))) return 0; break;
  case CK_LA_GEQRF: if (FAILED(CUSOLVER_CX(geqrf_bufferSize, h, j->m, j->n, j->a, j->lda, &lwork))) return 0; break;
  case CK_LA_ORGQR:
    if (FAILED(CUSOLVER_CU(orgqr_bufferSize, ungqr_bufferSize, h, j->m, j->n, j->nrhs, j->a, j->lda, j->tau, &lwork)))
      return 0;
    break;
  case CK_LA_ORMQR:
    if (FAILED(CUSOLVER_CU(ormqr_bufferSize, unmqr_bufferSize, h, CUBLAS_SIDE_LEFT, op, j->m, j->nrhs, j->n, j->a,
                           j->lda, j->tau, j->b, j->ldb, &lwork)))
      return 0;
    break;
  case CK_LA_GESVD: if (FAILED(CUSOLVER_CX(gesvd_bufferSize, h, j->m, j->n, &lwork))) return 0; break;
  case CK_LA_SYEVD: {
    const cusolverEigMode_t jz = j->jobu == 'V' ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    if (FAILED(CUSOLVER_CU(syevd_bufferSize, heevd_bufferSize, h, jz, uplo, j->n, j->a, j->lda, j->s, &lwork))) return 0;
    break;
  }
  default: break;
  }
  /* gesvd's rwork (unconverged superdiagonals) is not kept: info says how many */
  void *w = env->ws_alloc(env->owner, (size_t)(lwork > 0 ? lwork : 1) * es);
  if (!w) return (int)cudaErrorMemoryAllocation;
  for (int64_t i = 0; i < j->batch; ++i) {
    void *a = elem(j->a, j->sa, i, es), *b = elem(j->b, j->sb, i, es), *tau = elem(j->tau, j->stau, i, es);
    int32_t *ipiv = j->ipiv ? j->ipiv + i * j->sp : NULL, *info = j->info + i;
    int st = 0;
    switch (j->op) {
    case CK_LA_GETRF: st = CUSOLVER_CX(getrf, h, j->m, j->n, a, j->lda, w, ipiv, info); break;
    case CK_LA_GETRS: st = CUSOLVER_CX(getrs, h, op, j->n, j->nrhs, a, j->lda, ipiv, b, j->ldb, info); break;
    case CK_LA_POTRF: st = CUSOLVER_CX(potrf, h, uplo, j->n, a, j->lda, w, lwork, info); break;
    case CK_LA_POTRS: st = CUSOLVER_CX(potrs, h, uplo, j->n, j->nrhs, a, j->lda, b, j->ldb, info); break;
    case CK_LA_GEQRF: st = CUSOLVER_CX(geqrf, h, j->m, j->n, a, j->lda, tau, w, lwork, info); break;
    case CK_LA_ORGQR: st = CUSOLVER_CU(orgqr, ungqr, h, j->m, j->n, j->nrhs, a, j->lda, tau, w, lwork, info); break;
    case CK_LA_ORMQR:
      st = CUSOLVER_CU(ormqr, unmqr, h, CUBLAS_SIDE_LEFT, op, j->m, j->nrhs, j->n, a, j->lda, tau, b, j->ldb, w, lwork,
                       info);
      break;
    case CK_LA_GESVD: {
      const signed char ju = (signed char)j->jobu;
      st = CUSOLVER_CX(gesvd, h, ju, ju, j->m, j->n, a, j->lda, elem(j->s, j->ss, i, rs), elem(j->u, j->su, i, es),
                       j->ldu > 0 ? j->ldu : 1, elem(j->vt, j->svt, i, es), j->ldvt > 0 ? j->ldvt : 1, w, lwork, NULL,
                       info);
      break;
    }
    case CK_LA_SYEVD: {
      const cusolverEigMode_t jz = j->jobu == 'V' ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
      st = CUSOLVER_CU(syevd, heevd, h, jz, uplo, j->n, a, j->lda, elem(j->s, j->ss, i, rs), w, lwork, info);
      break;
    }
    default: st = -1; r->fail_call = ck_la_op_name(j->op); break;
    }
    if (FAILED(st)) break;
  }
  env->ws_free(env->owner, w);
  return 0;
}

static void describe(const void *ud, char *buf, size_t n) {
  const la_run *r = (const la_run *)ud;
  snprintf(buf, n, "linalg (cuda, %s %s, batch %lld of %dx%d)", ck_la_op_name(r->j->op), ck_dtype_name((ck_dtype)r->j->dtype),
           (long long)r->j->batch, r->j->m, r->j->n);
}

ck_status ck_la_cuda(ck_ctx *ctx, ck_la_job *j, const char *name) {
  const bool small = j->batch >= 2 && j->m == j->n && j->n <= CK_LA_SMALL;
  if (j->op == CK_LA_GETRF && !ck_dtype_is_complex((ck_dtype)j->dtype) && !small)
    return la_lu_rung(ctx, &ck_lu_variants[0], j, name, NULL); /* cuSOLVER getrf: the LU ladder's reference rung */
  la_run r = {.j = j};
  ck_launch_req req = {.fn = la_launch, .arg = &r, .describe = describe, .describe_ud = &r,
                       .needs_cusolver = j->op != CK_LA_TRI && j->op != CK_LA_TRSM && j->op != CK_LA_GESV_SMALL &&
                                         j->op != CK_LA_POTRF_SMALL && !la_small_lu(j)};
  ck_status st = ck_submit(ctx, &req);
  if (st) return ck_error_prefix(ctx, st, "%s", name);
  if (r.why[0]) return ck_error(ctx, CK_ERR_UNSUPPORTED, "%s: %s", name, r.why);
  if (r.fail_call)
    return ck_error(ctx, CK_ERR_CUBLAS, "%s: %s failed: %s (%s, %dx%d, batch %lld)", name, r.fail_call,
                    ck_cusolver_status_name(r.fail_status), ck_dtype_name((ck_dtype)j->dtype), j->m, j->n,
                    (long long)j->batch);
  return CK_OK;
}
