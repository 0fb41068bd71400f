/*
 * 00_geam.cu — transpose, step 0: the library reference, cuBLAS geam (C = alpha op(A) + beta op(B)).
 *
 * Idea: cuBLAS has no transpose of its own; geam with alpha = 1, op(A) = A^T and beta = 0 is the usual
 * library way to materialise one. In column-major terms our row-major input (rows x cols, row stride
 * in_rs) is a cols x rows matrix with lda = in_rs, and the output (cols x rows, row stride out_rs) is a
 * rows x cols matrix with ldc = out_rs, so C = A^T with m = rows, n = cols. With beta = 0, B is not read
 * (cuBLAS documents B need not be valid); we pass C itself with ldb = ldc, its documented in-place form.
 * Launch: one cublas<S|D>geam per batch matrix on env->cublas (bound to the context's stream), host
 * pointer mode for alpha/beta (set and restored if the handle was in device mode).
 * Limits (supports() says which): f32/f64 only (the registry's dtype mask; geam multiplies by alpha, so
 * it is not a bit move for i32), in_cs == 1 and out_cs == 1 (size-1 dims exempt), rows, cols, in_rs,
 * out_rs <= INT_MAX, at most CK_TR_GEAM_MAX_BATCH matrices (one call each).
 * Operands: in rows x cols, out cols x rows, per batch matrix (ck_tr_desc).
 */
#include <cublas_v2.h>
#include <limits.h>

#include "tr_common.cuh"

#define CK_TR_GEAM_MAX_BATCH 4096

// ---------------------------------------------------------------- launcher

extern "C" const char *ck_transpose_geam_supports(const void *desc) {
  const ck_tr_desc *d = (const ck_tr_desc *)desc;
  const char *why = tr_supports_common(d);
  if (why) return why;
  if (d->elem_size != 4 && d->elem_size != 8) return "needs f32 or f64";
  if (d->in_cs != 1 && d->cols > 1) return "needs unit column stride in the input (cuBLAS leading dimension)";
  if (d->out_cs != 1 && d->rows > 1) return "needs unit column stride in the output (cuBLAS leading dimension)";
  if (d->rows > INT_MAX || d->cols > INT_MAX) return "needs rows, cols <= INT_MAX (cuBLAS int sizes)";
  if ((d->rows > 1 && (d->in_rs < d->cols || d->in_rs > INT_MAX)) ||
      (d->cols > 1 && (d->out_rs < d->rows || d->out_rs > INT_MAX)))
    return "needs row strides in [width, INT_MAX] (cuBLAS leading dimensions)";
  if (tr_nbatch(d) > CK_TR_GEAM_MAX_BATCH) return "needs at most 4096 batch matrices (one cuBLAS call each)";
  return NULL;
}

extern "C" int ck_transpose_geam(const void *desc, const ck_env *env) {
  const ck_tr_desc *d = (const ck_tr_desc *)desc;
  ck_order_check(env); /* a library call notes no kernel of ours: check the issue order here */
  if (tr_empty(d)) return 0;
  cublasHandle_t h = (cublasHandle_t)env->cublas;
  cublasPointerMode_t mode;
  cublasStatus_t s = cublasGetPointerMode(h, &mode);
  if (s == CUBLAS_STATUS_SUCCESS && mode != CUBLAS_POINTER_MODE_HOST)
    s = cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
  if (s != CUBLAS_STATUS_SUCCESS) return CK_KERR_CUBLAS(s);
  // size-1 dims may carry any stride; cuBLAS wants ld >= max(1, rows of its column-major view)
  const int m = (int)d->rows, n = (int)d->cols;
  const int lda = (int)(d->rows > 1 ? d->in_rs : (d->cols > 1 ? d->cols : 1));
  const int ldc = (int)(d->cols > 1 ? d->out_rs : (d->rows > 1 ? d->rows : 1));
  const int64_t nb = tr_nbatch(d);
  for (int64_t b = 0; b < nb && s == CUBLAS_STATUS_SUCCESS; ++b) {
    int64_t oi, oo;
    tr_batch_offsets(*d, b, oi, oo);
    if (d->elem_size == 4) {
      const float one = 1.0f, zero = 0.0f;
      float *c = (float *)d->out + oo;
      s = cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, (const float *)d->in + oi, lda, &zero, c, ldc, c, ldc);
    } else {
      const double one = 1.0, zero = 0.0;
      double *c = (double *)d->out + oo;
      s = cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, (const double *)d->in + oi, lda, &zero, c, ldc, c, ldc);
    }
  }
  if (mode != CUBLAS_POINTER_MODE_HOST) cublasSetPointerMode(h, mode);
  if (s != CUBLAS_STATUS_SUCCESS) return CK_KERR_CUBLAS(s);
  return (int)cudaGetLastError();
}
