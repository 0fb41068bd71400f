/*
 * 01_unblocked.cu — LU ladder, step 1: right-looking, one column per step (LAPACK's getf2 on the GPU).
 * Idea: for each column j: one block finds the pivot (the largest |a(i, j)|, i >= j), swaps rows j and p across
 * the whole matrix and scales the column below the diagonal (pivot_kernel); then one pass updates the whole
 * trailing matrix by the rank-1 product of that column and row (rank1_kernel).
 * Changed: the starting point. Each of the min(m, n) steps reads and writes the whole trailing matrix: about
 * 2/3 n^3 element reads and writes from memory (BLAS-2 speed), and 2 launches per column.
 * Launch: pivot 1 block x 512 threads; rank-1 (rows / 64) x (columns / 4) blocks of 256 threads.
 * Limits: any m x n; f32 and f64; info as getrf (the first exact zero pivot, left unscaled).
 */
#include "lu_common.cuh"

namespace {
template <typename T> int factor(const ck_env *env, T *a, int lda, int m, int n, int32_t *ipiv, int32_t *info) {
  return lu::unblocked<T>(env, a, lda, m, 0, n, 0, n, ipiv, info);
}
} // namespace

CK_LU_LAUNCHER(unblocked, factor)
