/*
 * la_small.cu — CK_LA_GESV_SMALL: solve a batch of small square systems (n <= 32 f32, 16 f64) in ONE kernel: LU with
 * partial pivoting, both triangular solves, the pivots and info, and the NaN/Inf check of A, all in registers.
 * CK_LA_POTRF_SMALL (n <= 64, f32 and f64; to 32 in registers, then block_potrf_kernel): the Cholesky factors of a
 * batch the same way (small_potrf_kernel below:
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
 * Operands: A and B are read through ck_la_in (any strides: the caller's array in place when its batch is one stride,
 * so a solve of row-major matrices copies nothing; B NULL is the identity, ck.inv's, made in registers); x is written
 * column-major at b + e * sb (ldb, nrhs columns; it may be B's own buffer), ipiv + e * sp (n 1-based swaps; NULL for
 * ck.solve, which does not return them), info + e. On an H200 (round 3 session 15, lab/linalg_host.lua) ck.inv of
 * 10^4 x 8 x 8 f32 took 174 us against PyTorch's 155 when A was first copied into a column-major buffer (a tiled
 * transpose of 64 x 64 tiles, 8 x 8 of each used) and an identity expanded into another.
 * Launch: 256 threads, 256 / W systems a block; every lane of a warp runs the loops (the shuffles take the full mask)
 * and only live systems read or write.
 * Orders 33 to 64 of the Cholesky factor: block_potrf_kernel, one block a matrix (below).
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "../ck_kernels.h"
#include "linalg.h"

namespace {

constexpr int THREADS = 256;

template <typename T, int W>
__global__ void __launch_bounds__(THREADS) small_gesv_kernel(ck_la_in ain, ck_la_in bin, int n, T *b, int64_t sb, int ldb,
                                                            int nrhs, int32_t *ipiv, int64_t sp, int32_t *info,
                                                            int64_t batch, volatile long long *flag) {
  const int lane = threadIdx.x % W;
  const int64_t e = ((int64_t)blockIdx.x * THREADS + threadIdx.x) / W;
  const bool live = e < batch, mine = live && lane < n;
  T row[W];
  bool finite = true;
  const T *A = (const T *)ain.p + (live ? e : 0) * ain.sb;
#pragma unroll
  for (int j = 0; j < W; ++j) {
    row[j] = mine && j < n ? A[lane * ain.rs + j * ain.cs] : T(0);
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
  if (ipiv) {
#pragma unroll
    for (int c = 0; c < W; ++c)
      if (live && lane == c && c < n) ipiv[e * sp + c] = piv_of[c] + 1;
  }
  const T *Bin = (const T *)bin.p + (live ? e : 0) * bin.sb; /* (bin.p NULL: the identity) */
  T *B = b + (live ? e : 0) * sb;
  for (int r = 0; r < nrhs; ++r) {
    T x = !mine ? T(0) : bin.p ? Bin[lane * bin.rs + r * bin.cs] : T(lane == r);
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
__global__ void __launch_bounds__(THREADS) small_potrf_kernel(ck_la_in ain, T *a, int64_t sa, int lda, int n, bool upper,
                                                             int32_t *info, int64_t batch, volatile long long *flag) {
  const int lane = threadIdx.x % W;
  const int64_t e = ((int64_t)blockIdx.x * THREADS + threadIdx.x) / W;
  const bool live = e < batch, mine = live && lane < n;
  T row[W];
  bool finite = true;
  const T *In = (const T *)ain.p + (live ? e : 0) * ain.sb;
#pragma unroll
  for (int j = 0; j < W; ++j) {
    const T v = mine && j < n ? In[lane * ain.rs + j * ain.cs] : T(0); /* row `lane` of A, every entry (the scan) */
    const T t = mine && j < n ? In[j * ain.rs + lane * ain.cs] : T(0); /* column `lane`: row `lane` of A^T */
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
  T *A = a + e * sa;
#pragma unroll
  for (int j = 0; j < W; ++j) /* lower: row `lane` of L; upper: column `lane` of U = L^T; zeros beyond */
    if (j < n) A[upper ? j + (int64_t)lane * lda : lane + (int64_t)j * lda] = j <= lane ? row[j] : T(0);
}

/* CK_LA_POTRF_SMALL at orders 33 to 64 (BIG): one block of THREADS a matrix, its lower triangle (upper: A^T's) in
 * shared memory, column-major with a padded leading dim (LD: lanes step along rows, and the load's row-major
 * reads step along columns, without bank conflicts). Per column c, one phase and one barrier: every thread reads
 * d = S(c, c); the threads of group 0 write column c of the factor (final now: S(i, c) / sqrt(d)) straight to the
 * result, and thread (i, g) updates S(i, j) -= L(i, c) L(j, c) for the columns j > c, j = c + 1 + g (mod 4), i >= j:
 * the phase reads column c and writes only columns past it. info, the NaN/Inf scan (-1) and the check word as in
 * small_potrf_kernel; the other triangle is written as zeros. Why not registers: a lane holding two rows of 64
 * doubles is 256 registers. Why: cusolverDn<t>potrfBatched took 175 / 226 us (f32 / f64) for 1000 x 64 x 64 on an
 * H200 (round 3 session 15) against PyTorch's 171 / 181. */
constexpr int BIG = 64, LD = BIG + 1, GROUPS = THREADS / BIG;

template <typename T>
__global__ void __launch_bounds__(THREADS) block_potrf_kernel(ck_la_in ain, T *a, int64_t sa, int lda, int n, bool upper,
                                                             int32_t *info, volatile long long *flag) {
  __shared__ T S[BIG * LD];
  const int64_t e = blockIdx.x;
  const T *In = (const T *)ain.p + e * ain.sb;
  T *A = a + e * sa;
  const int t = threadIdx.x;
  /* entry k of the load: (i, j) with i fastest when A's rows are the nearer in memory (column-major), else j */
  const bool colfast = (ain.rs < 0 ? -ain.rs : ain.rs) <= (ain.cs < 0 ? -ain.cs : ain.cs);
  bool fin = true;
  for (int k = t; k < BIG * BIG; k += THREADS) { /* (BIG a power of 2: no division) */
    const int i = colfast ? k % BIG : k / BIG, j = colfast ? k / BIG : k % BIG;
    if (i >= n || j >= n) continue;
    const T v = In[i * ain.rs + j * ain.cs];
    fin = fin && isfinite(v);
    if (upper ? i <= j : i >= j) S[upper ? i * LD + j : j * LD + i] = v; /* L's (r, c), r >= c, at S[c * LD + r] */
  }
  const bool finite = __syncthreads_and(fin);
  const int i = t % BIG, g = t / BIG;
  int32_t inf = 0;
  for (int c = 0; c < n; ++c) {
    const T d = S[c * LD + c];
    if (!(d > T(0)) && inf == 0) inf = c + 1;
    const T r = sqrt(d), rinv = T(1) / r; /* one division a column: the updates multiply (the divisions were 3/4 of
                                             the time: 163 us for 1000 x 64 x 64 f32, H200) */
    const T lic = i >= c && i < n ? S[c * LD + i] * rinv : T(0); /* L(i, c) (only the triangle is there) */
    if (g == 0 && i >= c && i < n) A[upper ? c + (int64_t)i * lda : i + (int64_t)c * lda] = i == c ? r : lic;
    if (i < n)
      for (int j = c + 1 + g; j <= i; j += GROUPS) S[j * LD + i] -= lic * (S[c * LD + j] * rinv);
    __syncthreads();
  }
  for (int k = t; k < BIG * BIG; k += THREADS) { /* the other triangle: zeros (column-major order, coalesced) */
    const int i = k % BIG, j = k / BIG;
    if (i < n && j < n && (upper ? i > j : i < j)) A[i + (int64_t)j * lda] = T(0);
  }
  if (t == 0) {
    info[e] = finite ? inf : -1;
    if (flag && (!finite || inf)) *flag = e; /* over the bus, on the error path only */
  }
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
    return launch_groups(j, env, w.value, small_gesv_kernel<T, decltype(w)::value>, j->ain, j->bin, j->n, (T *)j->b,
                         j->sb, j->ldb, j->nrhs, j->ipiv, j->sp, j->info, j->batch, (volatile long long *)j->flag);
  });
}

template <typename T> int potrf(const ck_la_job *j, const ck_env *env) {
  if (j->n > 32) {
    const auto kern = block_potrf_kernel<T>;
    ck_note(env, kern, THREADS, 0);
    kern<<<(unsigned)j->batch, THREADS, 0, (cudaStream_t)env->stream>>>(j->ain, (T *)j->a, j->sa, j->lda, j->n,
                                                                       j->uplo == 'U', j->info,
                                                                       (volatile long long *)j->flag);
    return (int)cudaGetLastError();
  }
  return by_width<32>(j->n, [&](auto w) {
    return launch_groups(j, env, w.value, small_potrf_kernel<T, decltype(w)::value>, j->ain, (T *)j->a, j->sa, j->lda,
                         j->n, j->uplo == 'U', j->info, j->batch, (volatile long long *)j->flag);
  });
}

} // namespace

extern "C" int ck_la_small_gesv(const ck_la_job *j, const ck_env *env) {
  if (j->batch <= 0 || j->n <= 0) return 0;
  if (j->n > CK_LA_GESV_SMALL_MAX(j->dtype) || !j->ain.p || j->batch > 0x7fffffff) return (int)cudaErrorInvalidValue;
  return j->dtype == CK_F64 ? gesv<double>(j, env) : gesv<float>(j, env);
}

extern "C" int ck_la_small_potrf(const ck_la_job *j, const ck_env *env) {
  if (j->batch <= 0 || j->n <= 0) return 0;
  if (j->n > CK_LA_POTRF_SMALL_MAX(j->dtype) || j->n > BIG || !j->ain.p || j->batch > 0x7fffffff)
    return (int)cudaErrorInvalidValue;
  return j->dtype == CK_F64 ? potrf<double>(j, env) : potrf<float>(j, env);
}
