/*
 * lu_common.cuh — the LU ladder's shared plumbing (not a rung): the column step of rung 1 (pivot + swap + scale,
 * rank-1 update), the row swaps of a block of pivots (laswp), the triangular solve for U12 (cuBLAS trsm: the
 * ladder teaches where the flops go, which is the trailing update) and that update on cukern's own matmul rungs.
 * Matrices are column-major: element (i, j) of a at a[i + j * lda].
 */
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "lu.h"

namespace lu {

constexpr int PIV_THREADS = 512;

/* Column j: the row p >= j with the largest |a(p, j)| (the first on ties), pivot row j <-> p over columns [c0, c1),
 * then a(j+1:m, j) /= a(j, j). An exact zero pivot is left unscaled and info gets j + 1 (the first one). */
template <typename T>
__global__ void __launch_bounds__(PIV_THREADS) pivot_kernel(T *a, int lda, int m, int j, int c0, int c1, int32_t *ipiv,
                                                            int32_t *info) {
  __shared__ T sv[PIV_THREADS];
  __shared__ int si[PIV_THREADS];
  T *col = a + (int64_t)j * lda;
  T best = T(-1);
  int bi = j;
  for (int i = j + threadIdx.x; i < m; i += blockDim.x) {
    const T v = col[i] < T(0) ? -col[i] : col[i];
    if (v > best) best = v, bi = i;
  }
  sv[threadIdx.x] = best, si[threadIdx.x] = bi;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      const T o = sv[threadIdx.x + s];
      const int oi = si[threadIdx.x + s];
      if (o > sv[threadIdx.x] || (o == sv[threadIdx.x] && oi < si[threadIdx.x])) sv[threadIdx.x] = o, si[threadIdx.x] = oi;
    }
    __syncthreads();
  }
  const int p = si[0];
  const T piv = col[p];
  if (threadIdx.x == 0) {
    ipiv[j] = p + 1;
    if (piv == T(0) && *info == 0) *info = j + 1;
  }
  if (p != j)
    for (int c = c0 + threadIdx.x; c < c1; c += blockDim.x) {
      T *x = a + (int64_t)c * lda;
      const T t = x[j];
      x[j] = x[p], x[p] = t;
    }
  __syncthreads();
  if (piv != T(0))
    for (int i = j + 1 + threadIdx.x; i < m; i += blockDim.x) col[i] /= piv;
}

/* a(j+1:m, j+1:c1) -= a(j+1:m, j) a(j, j+1:c1): x over rows (coalesced down a column), y over columns. */
template <typename T> __global__ void __launch_bounds__(256) rank1_kernel(T *a, int lda, int m, int j, int c1) {
  const int i = j + 1 + blockIdx.x * 64 + (threadIdx.x & 63);
  if (i >= m) return;
  const T l = a[i + (int64_t)j * lda];
  for (int c = j + 1 + blockIdx.y * 4 + (threadIdx.x >> 6); c < c1; c += gridDim.y * 4)
    a[i + (int64_t)c * lda] -= l * a[j + (int64_t)c * lda];
}

/* Rows k <-> ipiv[k] - 1 for k in [k0, k1), in order, over columns [c0, c1): a thread per column. */
template <typename T>
__global__ void __launch_bounds__(256) laswp_kernel(T *a, int lda, int k0, int k1, const int32_t *ipiv, int c0, int c1) {
  const int c = c0 + blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= c1) return;
  T *x = a + (int64_t)c * lda;
  for (int k = k0; k < k1; ++k) {
    const int p = ipiv[k] - 1;
    if (p != k) {
      const T t = x[k];
      x[k] = x[p], x[p] = t;
    }
  }
}

/* Columns [j0, j1) factored a column at a time (rung 1's step); swaps over columns [s0, s1). */
template <typename T>
int unblocked(const ck_env *env, T *a, int lda, int m, int j0, int j1, int s0, int s1, int32_t *ipiv, int32_t *info) {
  cudaStream_t st = (cudaStream_t)env->stream;
  for (int j = j0; j < j1 && j < m; ++j) {
    ck_note(env, pivot_kernel<T>, PIV_THREADS, 0);
    pivot_kernel<T><<<1, PIV_THREADS, 0, st>>>(a, lda, m, j, s0, s1, ipiv, info);
    const int rows = m - j - 1, cols = j1 - j - 1;
    if (rows > 0 && cols > 0) {
      const unsigned gy = (unsigned)((cols + 3) / 4 < 2048 ? (cols + 3) / 4 : 2048);
      ck_note(env, rank1_kernel<T>, 256, 0);
      rank1_kernel<T><<<dim3((unsigned)((rows + 63) / 64), gy), 256, 0, st>>>(a, lda, m, j, j1);
    }
  }
  return (int)cudaGetLastError();
}

template <typename T> int laswp(const ck_env *env, T *a, int lda, int k0, int k1, const int32_t *ipiv, int c0, int c1) {
  if (c1 <= c0 || k1 <= k0) return 0;
  ck_note(env, laswp_kernel<T>, 256, 0);
  laswp_kernel<T><<<(unsigned)((c1 - c0 + 255) / 256), 256, 0, (cudaStream_t)env->stream>>>(a, lda, k0, k1, ipiv, c0, c1);
  return (int)cudaGetLastError();
}

/* B (k x n at b) = L^-1 B, L the unit lower k x k at l: cuBLAS trsm. */
template <typename T> int trsm_unit_lower(const ck_env *env, const T *l, T *b, int lda, int k, int n) {
  if (k <= 0 || n <= 0) return 0;
  ck_order_check(env);
  const T one = T(1);
  cublasStatus_t s;
  if (sizeof(T) == 8)
    s = cublasDtrsm((cublasHandle_t)env->cublas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                    CUBLAS_DIAG_UNIT, k, n, (const double *)&one, (const double *)l, lda, (double *)b, lda);
  else
    s = cublasStrsm((cublasHandle_t)env->cublas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                    CUBLAS_DIAG_UNIT, k, n, (const float *)&one, (const float *)l, lda, (float *)b, lda);
  return s ? CK_KERR_CUBLAS(s) : 0;
}

/* C (m x n at c) -= A (m x k at pa) B (k x n at pb), all column-major with lda, on cukern's own matmul rungs: in
 * the row-major terms the matmul ladder speaks, C^T -= B^T A^T with unit column strides. f32: double_buffer when it
 * takes the case (its alignment and size rules), else blocktile_2d; f64: dmma (the tensor cores, 64 x 64 tiles:
 * kernels/matmul/17_dmma.cu says why) on sm_80 and sm_90+, else blocktile_2d. */
template <typename T> int gemm_minus(const ck_env *env, const T *pa, const T *pb, T *c, int lda, int m, int n, int k) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  ck_mm_desc d = {};
  d.dtype = d.b_dtype = d.c_dtype = sizeof(T) == 8 ? CK_F64 : CK_F32;
  d.batch = 1, d.m = n, d.n = m, d.k = k;
  d.a = pb, d.a_rs = lda, d.a_cs = 1;
  d.b = pa, d.b_rs = lda, d.b_cs = 1;
  d.c = c, d.c_rs = lda, d.c_cs = 1;
  d.alpha = -1, d.beta = 1;
  if (sizeof(T) == 4 && !ck_matmul_double_buffer_supports(&d)) return ck_matmul_double_buffer(&d, env);
  /* (dmma only where f64 tensor cores run at full rate: sm_80 (A100) and sm_90+; sm_86/89 have a fraction of it) */
  const bool dmma_fast = env->cc_major >= 9 || (env->cc_major == 8 && env->cc_minor == 0);
  if (sizeof(T) == 8 && dmma_fast && !ck_matmul_dmma_supports(&d)) return ck_matmul_dmma_small_tiles(&d, env);
  return ck_matmul_blocktile_2d(&d, env);
}

/* Step 2's panel at columns [j, j + jb) of an m x n matrix: step 1's column kernels over the panel, then its row
 * swaps on the columns left and right of it. */
template <typename T>
int panel_by_columns(const ck_env *env, T *a, int lda, int m, int n, int j, int jb, int32_t *ipiv, int32_t *info) {
  int rc = unblocked<T>(env, a, lda, m, j, j + jb, j, j + jb, ipiv, info);
  if (!rc) rc = laswp<T>(env, a, lda, j, j + jb, ipiv, 0, j);
  if (!rc) rc = laswp<T>(env, a, lda, j, j + jb, ipiv, j + jb, n);
  return rc;
}

/* After the panel at columns [j, j + jb) (factored, its swaps applied everywhere): U12 = L11^-1 A12, then
 * A22 -= L21 U12. */
template <typename T> int trailing_update(const ck_env *env, T *a, int lda, int m, int n, int j, int jb) {
  T *a11 = a + j + (int64_t)j * lda, *a12 = a + j + (int64_t)(j + jb) * lda;
  int rc = trsm_unit_lower<T>(env, a11, a12, lda, jb, n - j - jb);
  if (!rc)
    rc = gemm_minus<T>(env, a + j + jb + (int64_t)j * lda, a12, a + j + jb + (int64_t)(j + jb) * lda, lda, m - j - jb,
                       n - j - jb, jb);
  return rc;
}

} // namespace lu

/* A rung's launcher: each batch entry in turn, by the rung's body factor<T>(env, a, lda, m, n, ipiv, info). */
#define CK_LU_LAUNCHER(NAME, BODY)                                                                                   \
  extern "C" int ck_lu_##NAME(const void *desc, const ck_env *env) {                                                 \
    const ck_lu_desc *d = (const ck_lu_desc *)desc;                                                                  \
    for (int64_t i = 0; i < d->batch; ++i) {                                                                         \
      const int rc = d->dtype == CK_F64                                                                              \
                         ? BODY<double>(env, (double *)d->a + i * d->sa, d->lda, d->m, d->n, d->ipiv + i * d->sp,     \
                                        d->info + i)                                                                 \
                         : BODY<float>(env, (float *)d->a + i * d->sa, d->lda, d->m, d->n, d->ipiv + i * d->sp,       \
                                       d->info + i);                                                                 \
      if (rc) return rc;                                                                                             \
    }                                                                                                                \
    return 0;                                                                                                        \
  }
