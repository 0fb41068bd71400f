/*
 * 03_recursive.cu — LU ladder, step 3: recursive LU (Toledo 1997; Gustavson's recursive panel).
 * Idea: split the columns in halves; factor the left half recursively, swap its pivots into the right half,
 * solve L11 U12 = A12 (trsm), update A22 -= L21 U12 (cukern's own matmul rung), factor A22 recursively, and swap
 * the right half's pivots back into the left half. Leaves of <= 32 columns run step 1's column kernels.
 * Changed from step 2: no fixed panel width — the products are as large as the recursion makes them (half the
 * matrix at the top), and the column-at-a-time work shrinks to the 32-column leaves; the panel of step 2, which
 * is BLAS-2 over its full height, becomes mostly matrix products too.
 * Launch: per leaf 2 kernels per column; per split one laswp each way, one trsm, one matmul.
 * Limits: any m x n (n > m: the right part is swapped and solved after the m x m recursion); f32 and f64.
 */
#include "lu_common.cuh"

namespace {
constexpr int LEAF = 32;

/* columns [j0, j0 + nc) of rows [j0, m), nc <= m - j0 */
template <typename T> int rec(const ck_env *env, T *a, int lda, int m, int j0, int nc, int32_t *ipiv, int32_t *info) {
  if (nc <= LEAF) return lu::unblocked<T>(env, a, lda, m, j0, j0 + nc, j0, j0 + nc, ipiv, info);
  const int n1 = nc / 2, n2 = nc - n1;
  int rc = rec<T>(env, a, lda, m, j0, n1, ipiv, info);
  if (!rc) rc = lu::laswp<T>(env, a, lda, j0, j0 + n1, ipiv, j0 + n1, j0 + nc);
  if (!rc) rc = lu::trailing_update<T>(env, a, lda, m, j0 + nc, j0, n1); /* the right half: trsm, then its update */
  if (!rc) rc = rec<T>(env, a, lda, m, j0 + n1, n2, ipiv, info);
  if (!rc) rc = lu::laswp<T>(env, a, lda, j0 + n1, j0 + nc, ipiv, j0, j0 + n1);
  return rc;
}

template <typename T> int factor(const ck_env *env, T *a, int lda, int m, int n, int32_t *ipiv, int32_t *info) {
  const int k = m < n ? m : n;
  int rc = rec<T>(env, a, lda, m, 0, k, ipiv, info);
  if (!rc && n > k) { /* wide: U's right part */
    rc = lu::laswp<T>(env, a, lda, 0, k, ipiv, k, n);
    if (!rc) rc = lu::trsm_unit_lower<T>(env, a, a + (int64_t)k * lda, lda, k, n - k);
  }
  return rc;
}
} // namespace

CK_LU_LAUNCHER(recursive, factor)
