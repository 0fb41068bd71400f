/*
 * 02_blocked.cu — LU ladder, step 2: right-looking blocked (LAPACK's getrf), panels of NB = 64 columns.
 * Idea: factor a tall panel of NB columns with step 1's kernels (swaps inside the panel only), apply its row swaps
 * to the columns left and right of it (laswp), solve L11 U12 = A12 (trsm), and update the trailing matrix
 * A22 -= L21 U12 with one matrix product on cukern's own matmul rungs (double_buffer for f32, dmma for f64: lu_common.cuh).
 * Changed from step 1: the trailing update, ~all of the 2/3 n^3 flops, is a matrix-matrix product (BLAS-3: each
 * element read once per panel instead of once per column); the column steps touch only the panel.
 * Launch: the panel's 2 kernels per column, one laswp, one trsm and one matmul per panel.
 * Limits: any m x n; f32 and f64.
 */
#include "lu_common.cuh"

namespace {
constexpr int NB = 64;
template <typename T> int factor(const ck_env *env, T *a, int lda, int m, int n, int32_t *ipiv, int32_t *info) {
  const int k = m < n ? m : n;
  int rc = 0;
  for (int j = 0; j < k && !rc; j += NB) {
    const int jb = k - j < NB ? k - j : NB;
    rc = lu::panel_by_columns<T>(env, a, lda, m, n, j, jb, ipiv, info);
    if (!rc) rc = lu::trailing_update<T>(env, a, lda, m, n, j, jb);
  }
  return rc;
}
} // namespace

CK_LU_LAUNCHER(blocked, factor)
