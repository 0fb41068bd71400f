/*
 * 00_cublas.cu — matmul ladder, step 0: the library reference, cublasSgemm / cublasDgemm, and cublasGemmEx for
 * f16, bf16 and TF32.
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
 * c64 and c128 (issue 35: cgemm/zgemm, the complex reference) go through the same Ex calls with CUDA_C_32F /
 * CUDA_C_64F and f32 / f64 compute.
 * f16 and bf16 inputs go through cublasGemmEx / cublasGemmStridedBatchedEx with CUBLAS_COMPUTE_32F (f32
 * accumulation; alpha, beta in f32) and C of c_dtype (the input dtype or f32), with reduced-precision
 * reductions disallowed for the call. f32 with precision == CK_MM_TF32 (an explicit opt-in, never implied)
 * goes through the same calls with CUBLAS_COMPUTE_32F_FAST_TF32; f32 without it stays on cublasSgemm.
 * Changed: this is the reference every rung is measured against (DESIGN.md: 51.5 TFLOP/s SGEMM at 4096²
 * on an H200).
 * Launch: whatever cuBLAS chooses, on the handle's stream (bound to the context's stream by the core).
 * Limits (CK_VF_BLAS): the dispatcher guarantees that each operand has a unit stride in one of its two dims
 * with a leading dimension >= the other extent; otherwise this launcher reports CUBLAS_STATUS_INVALID_VALUE.
 * Operands: A [m,k], B [k,n], C [m,n] per batch at element strides (rs, cs), batch strides a_bs, b_bs, c_bs;
 * f32 and f64 (c_dtype = dtype), f16 and bf16 (c_dtype = dtype or f32), f32 with TF32 (c_dtype f32); k == 0
 * gives C = beta*C (cuBLAS scales C).
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

/* The column-major problem cuBLAS solves: C' = op(X) op(Y), C' M x N with leading dimension ldc. */
struct Plan {
  bool ok;
  const void *x, *y;
  int64_t M, N, ldx, ldy, sx, sy, ldc;
  cublasOperation_t opx, opy;
};

Plan plan(const ck_mm_desc *d) {
  Plan P = {};
  const View va = col_major_view(d->m, d->k, d->a_rs, d->a_cs);
  const View vb = col_major_view(d->k, d->n, d->b_rs, d->b_cs);
  const View vc = col_major_view(d->m, d->n, d->c_rs, d->c_cs);
  P.ok = va.ok && vb.ok && vc.ok;
  if (!P.ok) return P;
  P.ldc = vc.ld;
  if (vc.trans) { // C stored row-major: C^T = B^T A^T, with B^T: n x k and A^T: k x m
    P.M = d->n, P.N = d->m;
    P.x = d->b, P.ldx = vb.ld, P.sx = d->b_bs, P.opx = vb.trans ? CUBLAS_OP_N : CUBLAS_OP_T;
    P.y = d->a, P.ldy = va.ld, P.sy = d->a_bs, P.opy = va.trans ? CUBLAS_OP_N : CUBLAS_OP_T;
  } else { // C stored column-major: C = A B
    P.M = d->m, P.N = d->n;
    P.x = d->a, P.ldx = va.ld, P.sx = d->a_bs, P.opx = va.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    P.y = d->b, P.ldy = vb.ld, P.sy = d->b_bs, P.opy = vb.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  }
  return P;
}

template <typename T> cublasStatus_t run(cublasHandle_t h, const ck_mm_desc *d) {
  const T alpha = (T)d->alpha, beta = (T)d->beta;
  const Plan P = plan(d);
  if (!P.ok) return CUBLAS_STATUS_INVALID_VALUE;
  const T *X = (const T *)P.x, *Y = (const T *)P.y;
  T *C = (T *)d->c;
  if (d->batch == 1) return Blas<T>::gemm(h, P.opx, P.opy, P.M, P.N, d->k, &alpha, X, P.ldx, Y, P.ldy, &beta, C, P.ldc);
  return Blas<T>::gemm_sb(h, P.opx, P.opy, P.M, P.N, d->k, &alpha, X, P.ldx, P.sx, Y, P.ldy, P.sy, &beta, C, P.ldc,
                          d->c_bs, d->batch);
}

/* f16/bf16 inputs (f32 compute, output f16/bf16/f32 per c_dtype), f32 with TF32 and the complex dtypes (Cgemm and
 * Zgemm's arithmetic: f32 / f64 compute): cublasGemmEx / cublasGemmStridedBatchedEx, alpha and beta of the
 * compute type (real numbers, as complex ones with im = 0 for c64/c128). */
cudaDataType ex_type(int dt) {
  switch (dt) {
  case CK_F16: return CUDA_R_16F;
  case CK_BF16: return CUDA_R_16BF;
  case CK_C64: return CUDA_C_32F;
  case CK_C128: return CUDA_C_64F;
  default: return CUDA_R_32F;
  }
}

cublasStatus_t run_ex(cublasHandle_t h, const ck_mm_desc *d, cublasComputeType_t ct) {
  // (alpha and beta: a float, or a {re, im} pair of floats or doubles; cuBLAS reads the compute type's)
  const float af[2] = {(float)d->alpha, 0.f}, bf[2] = {(float)d->beta, 0.f};
  const double ad[2] = {d->alpha, 0.0}, bd[2] = {d->beta, 0.0};
  const void *alpha = d->dtype == CK_C128 ? (const void *)ad : (const void *)af;
  const void *beta = d->dtype == CK_C128 ? (const void *)bd : (const void *)bf;
  const Plan P = plan(d);
  if (!P.ok) return CUBLAS_STATUS_INVALID_VALUE;
  const cudaDataType ti = ex_type(d->dtype), tc = ex_type(d->c_dtype);
  const bool small = P.M <= I32 && P.N <= I32 && d->k <= I32 && P.ldx <= I32 && P.ldy <= I32 && P.ldc <= I32 &&
                     d->batch <= I32;
  if (d->batch == 1) {
    if (small)
      return cublasGemmEx(h, P.opx, P.opy, (int)P.M, (int)P.N, (int)d->k, alpha, P.x, ti, (int)P.ldx, P.y, ti,
                          (int)P.ldy, beta, d->c, tc, (int)P.ldc, ct, CUBLAS_GEMM_DEFAULT);
    return cublasGemmEx_64(h, P.opx, P.opy, P.M, P.N, d->k, alpha, P.x, ti, P.ldx, P.y, ti, P.ldy, beta, d->c, tc,
                           P.ldc, ct, CUBLAS_GEMM_DEFAULT);
  }
  if (small)
    return cublasGemmStridedBatchedEx(h, P.opx, P.opy, (int)P.M, (int)P.N, (int)d->k, alpha, P.x, ti, (int)P.ldx,
                                      P.sx, P.y, ti, (int)P.ldy, P.sy, beta, d->c, tc, (int)P.ldc, d->c_bs,
                                      (int)d->batch, ct, CUBLAS_GEMM_DEFAULT);
  return cublasGemmStridedBatchedEx_64(h, P.opx, P.opy, P.M, P.N, d->k, alpha, P.x, ti, P.ldx, P.sx, P.y, ti, P.ldy,
                                       P.sy, beta, d->c, tc, P.ldc, d->c_bs, d->batch, ct, CUBLAS_GEMM_DEFAULT);
}

} // namespace

// ---------------------------------------------------------------- launcher

extern "C" int ck_matmul_cublas(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  ck_order_check(env); /* a library call notes no kernel of ours: check the issue order here */
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  cublasHandle_t h = (cublasHandle_t)env->cublas;
  if (!h) return CK_KERR_CUBLAS(CUBLAS_STATUS_NOT_INITIALIZED);
  const bool half = d->dtype == CK_F16 || d->dtype == CK_BF16;
  const bool tf32 = d->dtype == CK_F32 && d->precision == CK_MM_TF32;
  if ((half && d->c_dtype != d->dtype && d->c_dtype != CK_F32) || (tf32 && d->c_dtype != CK_F32))
    return CK_KERR_CUBLAS(CUBLAS_STATUS_NOT_SUPPORTED);
  // f16/bf16: reductions (split k) stay in f32 even when C is f16/bf16, so the error bound is f32's
  const cublasMath_t want =
      half ? (cublasMath_t)(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) : CUBLAS_DEFAULT_MATH;
  cublasMath_t mode;
  cublasStatus_t st = cublasGetMathMode(h, &mode);
  if (st != CUBLAS_STATUS_SUCCESS) return CK_KERR_CUBLAS(st);
  if (mode != want && (st = cublasSetMathMode(h, want)) != CUBLAS_STATUS_SUCCESS) return CK_KERR_CUBLAS(st);
  if (half) st = run_ex(h, d, CUBLAS_COMPUTE_32F);
  else if (tf32) st = run_ex(h, d, CUBLAS_COMPUTE_32F_FAST_TF32);
  else if (d->dtype == CK_C64) st = run_ex(h, d, CUBLAS_COMPUTE_32F);
  else if (d->dtype == CK_C128) st = run_ex(h, d, CUBLAS_COMPUTE_64F);
  else if (d->dtype == CK_F32) st = run<float>(h, d);
  else if (d->dtype == CK_F64) st = run<double>(h, d);
  else st = CUBLAS_STATUS_NOT_SUPPORTED;
  if (mode != want) cublasSetMathMode(h, mode);
  if (st != CUBLAS_STATUS_SUCCESS) return CK_KERR_CUBLAS(st);
  return (int)cudaGetLastError();
}
