/*
 * 00_cublas.cu — matmul ladder, step 0: the library reference, cublasSgemm / cublasDgemm.
 *
 * Idea: cuBLAS is column-major; cukern arrays are row-major views with arbitrary strides. A matrix whose
 * column stride is 1 is, to cuBLAS, its own transpose stored column-major with leading dimension = its row
 * stride; a matrix whose row stride is 1 is column-major as it stands. So, as TH/THC and CuPy do:
 *   C row-major (c_cs == 1): compute C^T = B^T A^T with C^T column-major (ldc = c_rs), m and n swapped;
 *   C column-major (c_rs == 1): compute C = A B directly (ldc = c_cs);
 * and each of A, B becomes OP_N or OP_T depending on which of its strides is 1. A stride along a dimension
 * of extent 1 is never used, so such a dimension counts as unit-stride and its leading dimension is set to
 * whatever cuBLAS accepts. Batches use the strided-batched call (a batch stride of 0 broadcasts a 2-D
 * operand). The math mode is forced to CUBLAS_DEFAULT_MATH for the call (plain fp32/fp64 FMA, no TF32) and
 * restored afterwards, since the handle is shared. Sizes past 2^31 - 1 use the 64-bit-integer API.
 * Changed: this is the reference every rung is measured against (DESIGN.md: 51.5 TFLOP/s SGEMM at 4096²
 * on an H200).
 * Launch: whatever cuBLAS chooses, on the handle's stream (bound to the context's stream by the core).
 * Limits (CK_VF_BLAS): the dispatcher guarantees that each operand has a unit stride in one of its two dims
 * with a leading dimension >= the other extent; otherwise this launcher reports CUBLAS_STATUS_INVALID_VALUE.
 * Operands: A [m,k], B [k,n], C [m,n] per batch at element strides (rs, cs), batch strides a_bs, b_bs, c_bs;
 * f32 and f64; k == 0 gives C = beta*C (cuBLAS scales C).
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "ck_kernels.h"

namespace {

// ---------------------------------------------------------------- layouts

/* How cuBLAS sees one row-major-indexed operand X (rows x cols, strides rs, cs): as a column-major matrix
 * that is X itself (trans = false, ld = cs) or X^T (trans = true, ld = rs). `ok` is false when neither
 * stride can serve. */
struct View {
  bool ok, trans;
  int64_t ld;
};

View col_major_view(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  View v = {false, false, 1};
  const int64_t r1 = rows > 1 ? rows : 1, c1 = cols > 1 ? cols : 1;
  // X column-major: unit step down a column (rs == 1, or only one row), ld = cs >= rows
  const bool col_unit = rs == 1 || rows <= 1;
  const int64_t col_ld = cols <= 1 ? r1 : cs;
  // X row-major = X^T column-major: unit step along a row, ld = rs >= cols
  const bool row_unit = cs == 1 || cols <= 1;
  const int64_t row_ld = rows <= 1 ? c1 : rs;
  if (row_unit && row_ld >= c1) v.ok = true, v.trans = true, v.ld = row_ld;
  else if (col_unit && col_ld >= r1) v.ok = true, v.trans = false, v.ld = col_ld;
  return v;
}

const int64_t I32 = 0x7fffffff;

template <typename T> struct Blas;
template <> struct Blas<float> {
  static cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                             int64_t k, const float *alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                             const float *beta, float *c, int64_t ldc) {
    if (m <= I32 && n <= I32 && k <= I32 && lda <= I32 && ldb <= I32 && ldc <= I32)
      return cublasSgemm(h, ta, tb, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
    return cublasSgemm_64(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  static cublasStatus_t gemm_sb(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                                int64_t k, const float *alpha, const float *a, int64_t lda, int64_t sa, const float *b,
                                int64_t ldb, int64_t sb, const float *beta, float *c, int64_t ldc, int64_t sc,
                                int64_t count) {
    if (m <= I32 && n <= I32 && k <= I32 && lda <= I32 && ldb <= I32 && ldc <= I32 && count <= I32)
      return cublasSgemmStridedBatched(h, ta, tb, (int)m, (int)n, (int)k, alpha, a, (int)lda, sa, b, (int)ldb, sb,
                                       beta, c, (int)ldc, sc, (int)count);
    return cublasSgemmStridedBatched_64(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count);
  }
};
template <> struct Blas<double> {
  static cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                             int64_t k, const double *alpha, const double *a, int64_t lda, const double *b,
                             int64_t ldb, const double *beta, double *c, int64_t ldc) {
    if (m <= I32 && n <= I32 && k <= I32 && lda <= I32 && ldb <= I32 && ldc <= I32)
      return cublasDgemm(h, ta, tb, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
    return cublasDgemm_64(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  static cublasStatus_t gemm_sb(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                                int64_t k, const double *alpha, const double *a, int64_t lda, int64_t sa,
                                const double *b, int64_t ldb, int64_t sb, const double *beta, double *c, int64_t ldc,
                                int64_t sc, int64_t count) {
    if (m <= I32 && n <= I32 && k <= I32 && lda <= I32 && ldb <= I32 && ldc <= I32 && count <= I32)
      return cublasDgemmStridedBatched(h, ta, tb, (int)m, (int)n, (int)k, alpha, a, (int)lda, sa, b, (int)ldb, sb,
                                       beta, c, (int)ldc, sc, (int)count);
    return cublasDgemmStridedBatched_64(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count);
  }
};

// ---------------------------------------------------------------- launcher body

template <typename T> cublasStatus_t run(cublasHandle_t h, const ck_mm_desc *d) {
  const T alpha = (T)d->alpha, beta = (T)d->beta;
  const T *A = (const T *)d->a, *B = (const T *)d->b;
  T *C = (T *)d->c;
  const View va = col_major_view(d->m, d->k, d->a_rs, d->a_cs);
  const View vb = col_major_view(d->k, d->n, d->b_rs, d->b_cs);
  const View vc = col_major_view(d->m, d->n, d->c_rs, d->c_cs);
  if (!va.ok || !vb.ok || !vc.ok) return CUBLAS_STATUS_INVALID_VALUE;
  // cuBLAS computes (column-major) C' = op(X) op(Y).
  const T *X, *Y;
  int64_t M, N, ldx, ldy, sx, sy;
  cublasOperation_t opx, opy;
  if (vc.trans) { // C stored row-major: C^T = B^T A^T, with B^T: n x k and A^T: k x m
    M = d->n, N = d->m;
    X = B, ldx = vb.ld, sx = d->b_bs, opx = vb.trans ? CUBLAS_OP_N : CUBLAS_OP_T;
    Y = A, ldy = va.ld, sy = d->a_bs, opy = va.trans ? CUBLAS_OP_N : CUBLAS_OP_T;
  } else { // C stored column-major: C = A B
    M = d->m, N = d->n;
    X = A, ldx = va.ld, sx = d->a_bs, opx = va.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    Y = B, ldy = vb.ld, sy = d->b_bs, opy = vb.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  }
  if (d->batch == 1) return Blas<T>::gemm(h, opx, opy, M, N, d->k, &alpha, X, ldx, Y, ldy, &beta, C, vc.ld);
  return Blas<T>::gemm_sb(h, opx, opy, M, N, d->k, &alpha, X, ldx, sx, Y, ldy, sy, &beta, C, vc.ld, d->c_bs,
                          d->batch);
}

} // namespace

// ---------------------------------------------------------------- launcher

extern "C" int ck_matmul_cublas(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  cublasHandle_t h = (cublasHandle_t)env->cublas;
  if (!h) return CK_KERR_CUBLAS(CUBLAS_STATUS_NOT_INITIALIZED);
  cublasMath_t mode;
  cublasStatus_t st = cublasGetMathMode(h, &mode);
  if (st != CUBLAS_STATUS_SUCCESS) return CK_KERR_CUBLAS(st);
  if (mode != CUBLAS_DEFAULT_MATH && (st = cublasSetMathMode(h, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS)
    return CK_KERR_CUBLAS(st);
  if (d->dtype == CK_F32) st = run<float>(h, d);
  else if (d->dtype == CK_F64) st = run<double>(h, d);
  else st = CUBLAS_STATUS_NOT_SUPPORTED;
  if (mode != CUBLAS_DEFAULT_MATH) cublasSetMathMode(h, mode);
  if (st != CUBLAS_STATUS_SUCCESS) return CK_KERR_CUBLAS(st);
  return (int)cudaGetLastError();
}
