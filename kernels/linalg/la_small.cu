/*
 * la_small.cu — CK_LA_GESV_SMALL: solve a batch of small square systems (n <= 32 f32, 16 f64) in ONE kernel: LU with
 * partial pivoting, both triangular solves, the pivots and info, and the NaN/Inf check of A, all in registers.
 * CK_LA_POTRF_SMALL (n <= 32, f32 and f64): the Cholesky factors of a batch the same way (small_potrf_kernel below:
 * the factor, the zeroed other triangle, info and the NaN/Inf check in one kernel). On an H200 (session 13,
 * lab/linalg_host.lua) ck.cholesky of 10^4 x 8 x 8 f32 took 193 us, PyTorch 106: potrfBatched behind a scan of A
 * with its own read, info's read and the tri kernel.
 * Orders: f32 to 32; f64 to 16 (at 32 a lane holds 32 doubles, 212 registers: one block an SM, and 10^4 systems ran
 * at 0.75x PyTorch's batched route on an H100, so larger f64 systems keep cuBLAS's batched path).
 * Why: cuBLAS's batched path is a pointer-array kernel, getrfBatched, a read of info, another pointer array and
 * getrsBatched, behind a separate scan of A for NaN/Inf with its own read: at 10^4 systems of 8 x 8 the launches
 * and the two reads are the time, not the 2/3 n^3 flops. Here one launch does the work and the layer reads info
 * once.
 * Layout: a group of W lanes (W = 8, 16 or 32, the least >= n; several groups a warp) per system; lane i holds row i
 * of A (W registers, columns past n zero) and row i of the current right-hand side. Per column c: the group's first
 * largest |a(i, c)|, i >= c (idamax's choice) by an xor-shuffle reduction, the swap of rows c and p by shuffles,
 * the multipliers a(i, c) / piv and the rank-1 update of the rows below. Then, per right-hand side: the row swaps
 * in order, forward substitution with the unit lower L, back substitution with U. An exact zero pivot is left
 * unscaled (getrf's rule) and info gets the first such column; info is -1 when A has a NaN or an Inf (the layer
 * raises that first, as its scan did). With a check word (job.flag: pinned mapped memory) a system with info != 0
 * also writes its index there, so the layer reads info only when the word says there is something to report.
 * Operands: column-major, entry e of the batch at a + e * sa (lda), b + e * sb (ldb, nrhs columns, overwritten with
 * x), ipiv + e * sp (n 1-based swaps), info + e.
 * Launch: 256 threads, 256 / W systems a block; every lane of a warp runs the loops (the shuffles take the full mask)
 * and only live systems read or write.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "../ck_kernels.h"
#include "linalg.h"

namespace {

constexpr int THREADS = 256;

template <typename T, int W>
__global__ void __launch_bounds__(THREADS) small_gesv_kernel(const T *__restrict__ a, int64_t sa, int lda, int n,
                                                            T *b, int64_t sb, int ldb, int nrhs, int32_t *ipiv,
                                                            int64_t sp, int32_t *info, int64_t batch,
                                                            volatile long long *flag) {
  const int lane = threadIdx.x % W;
  const int64_t e = ((int64_t)blockIdx.x * THREADS + threadIdx.x) / W;
  const bool live = e < batch, mine = live && lane < n;
  T row[W];
  bool finite = true;
  const T *A = a + (live ? e : 0) * sa;
#pragma unroll
  for (int j = 0; j < W; ++j) {
    row[j] = mine && j < n ? A[lane + (int64_t)j * lda] : T(0);
    finite = finite && isfinite(row[j]);
  }
  int piv_of[W];
  int32_t inf = 0;
#pragma unroll
  for (int c = 0; c < W; ++c) {
    piv_of[c] = c;
    if (c >= n) continue; /* n is the same for every lane */
    const T ax = row[c] < T(0) ? -row[c] : row[c];
    T v = lane >= c && lane < n && ax == ax ? ax : T(-1); /* NaN is no candidate: every lane agrees on p */
    int i = lane;
#pragma unroll
    for (int o = W / 2; o; o >>= 1) { /* every lane ends with the first largest */
      const T ov = __shfl_xor_sync(~0u, v, o, W);
      const int oi = __shfl_xor_sync(~0u, i, o, W);
      if (ov > v || (ov == v && oi < i)) v = ov, i = oi;
    }
    const int p = v < T(0) ? c : i; /* no candidate (NaN only): no swap */
    piv_of[c] = p;
    const int src = lane == c ? p : lane == p ? c : lane; /* the swap: one shuffle a column */
#pragma unroll
    for (int j = 0; j < W; ++j) row[j] = __shfl_sync(~0u, row[j], src, W);
    const T piv = __shfl_sync(~0u, row[c], c, W);
    if (piv == T(0) && inf == 0) inf = c + 1;
    const bool below = lane > c && lane < n && piv != T(0);
    if (below) row[c] /= piv;
#pragma unroll
    for (int j = c + 1; j < W; ++j) {
      const T u = __shfl_sync(~0u, row[j], c, W);
      if (below) row[j] -= row[c] * u;
    }
  }
#pragma unroll
  for (int o = W / 2; o; o >>= 1) finite = __shfl_xor_sync(~0u, (int)finite, o, W) && finite;
  if (live && lane == 0) {
    info[e] = finite ? inf : -1;
    if (flag && (!finite || inf)) *flag = e; /* over the bus, on the error path only */
  }
#pragma unroll
  for (int c = 0; c < W; ++c)
    if (live && lane == c && c < n) ipiv[e * sp + c] = piv_of[c] + 1;
  T *B = b + (live ? e : 0) * sb;
  for (int r = 0; r < nrhs; ++r) {
    T x = mine ? B[lane + (int64_t)r * ldb] : T(0);
#pragma unroll
    for (int c = 0; c < W; ++c) { /* P b: the swaps in order */
      if (c >= n) continue;
      const int p = piv_of[c];
      x = __shfl_sync(~0u, x, lane == c ? p : lane == p ? c : lane, W);
    }
#pragma unroll
    for (int c = 0; c < W; ++c) { /* L y = P b */
      if (c >= n) continue;
      const T y = __shfl_sync(~0u, x, c, W);
      if (lane > c) x -= row[c] * y;
    }
#pragma unroll
    for (int c = W - 1; c >= 0; --c) { /* U x = y */
      if (c >= n) continue;
      if (lane == c) x /= row[c];
      const T xv = __shfl_sync(~0u, x, c, W);
      if (lane < c) x -= row[c] * xv;
    }
    if (mine) B[lane + (int64_t)r * ldb] = x;
  }
}

/* CK_LA_POTRF_SMALL: the Cholesky factor of a batch of small symmetric positive definite matrices, one group of W
 * lanes a matrix as above; lane i holds row i of the lower triangle (uplo 'L': A(i, j), j <= i; uplo 'U': A(j, i),
 * the upper triangle read as its transpose, so the kernel computes L with A = L L^T either way and U = L^T is
 * written back). Per column c (right-looking, as potf2): d = the trailing diagonal entry (lane c's), L(c, c) =
 * sqrt(d), the column below divided by it, and the rank-1 update of the trailing lower triangle. info is the
 * first c + 1 whose d is not positive (potrf's "leading minor of order c + 1 is not positive"; the factor is then
 * not defined, as LAPACK leaves it partial), or -1 where any entry of A is NaN or Inf (the layer's scan of A, done
 * here: a NaN compares as not positive too, so without the scan a NaN would be named a minor). The result is the
 * factor in uplo's triangle and zeros in the other (the layer's tri step, done here), in place. */
template <typename T, int W>
__global__ void __launch_bounds__(THREADS) small_potrf_kernel(T *a, int64_t sa, int lda, int n, bool upper, int32_t *info,
                                                             int64_t batch, volatile long long *flag) {
  const int lane = threadIdx.x % W;
  const int64_t e = ((int64_t)blockIdx.x * THREADS + threadIdx.x) / W;
  const bool live = e < batch, mine = live && lane < n;
  T row[W];
  bool finite = true;
  T *A = a + (live ? e : 0) * sa;
#pragma unroll
  for (int j = 0; j < W; ++j) {
    const T v = mine && j < n ? A[lane + (int64_t)j * lda] : T(0); /* row `lane` of A, every entry (the scan) */
    const T t = mine && j < n ? A[j + (int64_t)lane * lda] : T(0); /* column `lane`: row `lane` of A^T */
    finite = finite && isfinite(v);
    row[j] = j <= lane ? (upper ? t : v) : T(0);
  }
  int32_t inf = 0;
#pragma unroll
  for (int c = 0; c < W; ++c) {
    if (c >= n) continue; /* n is the same for every lane */
    const T d = __shfl_sync(~0u, row[c], c, W);
    if (!(d > T(0)) && inf == 0) inf = c + 1;
    const T r = sqrt(d);
    if (lane >= c) row[c] = lane == c ? r : row[c] / r;
#pragma unroll
    for (int j = c + 1; j < W; ++j) {
      const T l = __shfl_sync(~0u, row[c], j, W);
      if (lane >= j) row[j] -= row[c] * l;
    }
  }
#pragma unroll
  for (int o = W / 2; o; o >>= 1) finite = __shfl_xor_sync(~0u, (int)finite, o, W) && finite;
  if (live && lane == 0) {
    info[e] = finite ? inf : -1;
    if (flag && (!finite || inf)) *flag = e; /* over the bus, on the error path only */
  }
  if (!mine) return;
#pragma unroll
  for (int j = 0; j < W; ++j) /* lower: row `lane` of L; upper: column `lane` of U = L^T; zeros beyond */
    if (j < n) A[upper ? j + (int64_t)lane * lda : lane + (int64_t)j * lda] = j <= lane ? row[j] : T(0);
}

/* One group of W lanes a batch entry, THREADS threads a block: the grid, the note and the launch of kern. */
template <class... P, class... A>
int launch_groups(const ck_la_job *j, const ck_env *env, int w, void (*kern)(P...), A... args) {
  const int64_t threads = j->batch * w;
  ck_note(env, kern, THREADS, 0);
  kern<<<(unsigned)((threads + THREADS - 1) / THREADS), THREADS, 0, (cudaStream_t)env->stream>>>(args...);
  return (int)cudaGetLastError();
}

/* f(W) with W the least group width >= n among 8, 16 and 32, at most MAXW (a std::integral_constant). */
template <int MAXW, class F> int by_width(int n, F f) {
  if (n <= 8) return f(std::integral_constant<int, 8>());
  if constexpr (MAXW == 16) return f(std::integral_constant<int, 16>());
  else return n <= 16 ? f(std::integral_constant<int, 16>()) : f(std::integral_constant<int, 32>());
}

template <typename T> int gesv(const ck_la_job *j, const ck_env *env) {
  /* (f64 stops at 16: no 32-lane form built) */
  return by_width<sizeof(T) == 8 ? 16 : 32>(j->n, [&](auto w) {
    return launch_groups(j, env, w.value, small_gesv_kernel<T, decltype(w)::value>, (const T *)j->a, j->sa, j->lda,
                         j->n, (T *)j->b, j->sb, j->ldb, j->nrhs, j->ipiv, j->sp, j->info, j->batch,
                         (volatile long long *)j->flag);
  });
}

template <typename T> int potrf(const ck_la_job *j, const ck_env *env) {
  return by_width<32>(j->n, [&](auto w) {
    return launch_groups(j, env, w.value, small_potrf_kernel<T, decltype(w)::value>, (T *)j->a, j->sa, j->lda, j->n,
                         j->uplo == 'U', j->info, j->batch, (volatile long long *)j->flag);
  });
}

} // namespace

extern "C" int ck_la_small_gesv(const ck_la_job *j, const ck_env *env) {
  if (j->batch <= 0 || j->n <= 0) return 0;
  if (j->n > CK_LA_GESV_SMALL_MAX(j->dtype)) return (int)cudaErrorInvalidValue;
  return j->dtype == CK_F64 ? gesv<double>(j, env) : gesv<float>(j, env);
}

extern "C" int ck_la_small_potrf(const ck_la_job *j, const ck_env *env) {
  if (j->batch <= 0 || j->n <= 0) return 0;
  if (j->n > CK_LA_POTRF_SMALL_MAX(j->dtype)) return (int)cudaErrorInvalidValue;
  return j->dtype == CK_F64 ? potrf<double>(j, env) : potrf<float>(j, env);
}
