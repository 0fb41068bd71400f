/*
 * cusolver_dl.h — cuSOLVER loaded at run time (cusolver_dl.c), for the linalg layer (src/linalg/la_cuda.c) and the
 * LU ladder's reference rung (kernels/lu/00_cusolver.c).
 *
 * Why not linked: libcusolver (with the libcusparse and libnvJitLink it pulls in) adds ~0.1 s to every
 * `require "cukern"` (measured on the build host), which every script and spec process would pay whether it solves
 * anything or not; NCCL is loaded the same way for the same reason (src/dist/nccl_dl.c). The fields have the exact
 * types of cusolverDn.h's declarations (__typeof__), so a wrong signature is a compile error.
 */
#ifndef CK_CUSOLVER_DL_H
#define CK_CUSOLVER_DL_H

#include <cusolverDn.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every routine the layer calls, without the cusolverDn prefix. */
#define CK_CUSOLVER_SYMS(X)                                                                                          \
  X(Create) X(Destroy) X(SetStream)                                                                                  \
  X(Sgetrf_bufferSize) X(Dgetrf_bufferSize) X(Sgetrf) X(Dgetrf) X(Sgetrs) X(Dgetrs)                                  \
  X(Cgetrf_bufferSize) X(Zgetrf_bufferSize) X(Cgetrf) X(Zgetrf) X(Cgetrs) X(Zgetrs)                                  \
  X(Cpotrf_bufferSize) X(Zpotrf_bufferSize) X(Cpotrf) X(Zpotrf) X(Cpotrs) X(Zpotrs)                                  \
  X(Spotrf_bufferSize) X(Dpotrf_bufferSize) X(Spotrf) X(Dpotrf) X(Spotrs) X(Dpotrs)                                  \
  X(SpotrfBatched) X(DpotrfBatched) X(CpotrfBatched) X(ZpotrfBatched)                                              \
  X(Sgeqrf_bufferSize) X(Dgeqrf_bufferSize) X(Sgeqrf) X(Dgeqrf)                                                      \
  X(Cgeqrf_bufferSize) X(Zgeqrf_bufferSize) X(Cgeqrf) X(Zgeqrf)                                                      \
  X(Sorgqr_bufferSize) X(Dorgqr_bufferSize) X(Sorgqr) X(Dorgqr)                                                      \
  X(Cungqr_bufferSize) X(Zungqr_bufferSize) X(Cungqr) X(Zungqr)                                                      \
  X(Sormqr_bufferSize) X(Dormqr_bufferSize) X(Sormqr) X(Dormqr)                                                      \
  X(Cunmqr_bufferSize) X(Zunmqr_bufferSize) X(Cunmqr) X(Zunmqr)                                                      \
  X(Sgesvd_bufferSize) X(Dgesvd_bufferSize) X(Sgesvd) X(Dgesvd)                                                      \
  X(Cgesvd_bufferSize) X(Zgesvd_bufferSize) X(Cgesvd) X(Zgesvd)                                                      \
  X(Ssyevd_bufferSize) X(Dsyevd_bufferSize) X(Ssyevd) X(Dsyevd)                                                      \
  X(Cheevd_bufferSize) X(Zheevd_bufferSize) X(Cheevd) X(Zheevd)                                                      \
  X(DHgesv_bufferSize) X(DBgesv_bufferSize) X(DXgesv_bufferSize) X(DSgesv_bufferSize)                                \
  X(DHgesv) X(DBgesv) X(DXgesv) X(DSgesv)                                                                            \
  X(CreateParams) X(DestroyParams) X(Xgeev_bufferSize) X(Xgeev)                                                     \
  X(Sgesvdj_bufferSize) X(Dgesvdj_bufferSize) X(Cgesvdj_bufferSize) X(Zgesvdj_bufferSize)                            \
  X(Sgesvdj) X(Dgesvdj) X(Cgesvdj) X(Zgesvdj) X(CreateGesvdjInfo) X(DestroyGesvdjInfo)

typedef struct ck_cusolver_api {
#define CK_CUSOLVER_FIELD(n) __typeof__(&cusolverDn##n) n;
  CK_CUSOLVER_SYMS(CK_CUSOLVER_FIELD)
#undef CK_CUSOLVER_FIELD
} ck_cusolver_api;

/* The loaded API, or NULL with the reason in *why (a static string). Loaded once per process, never unloaded. */
const ck_cusolver_api *ck_cusolver(const char **why);
/* There is no handle here: each device context owns one (ck_env.cusolver, bound to the launch's stream, for a launch
 * whose ck_launch_req sets needs_cusolver; made with this table's Create, destroyed with the context). */
/* "CUSOLVER_STATUS_NOT_INITIALIZED" ... for messages. */
const char *ck_cusolver_status_name(int status);
/* The error code a launcher returns for a cuSOLVER status (ck_kernels.h's codes: cudaError_t below 100000, cuBLAS
 * at 100000 + status, cuSOLVER at 200000 + status). */
#define CK_KERR_CUSOLVER(s) (200000 + (int)(s))

#ifdef __cplusplus
}
#endif
#endif
