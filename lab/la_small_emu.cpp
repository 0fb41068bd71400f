// lab/la_small_emu.cpp — the linear-algebra layer's one-kernel Cholesky (CK_LA_POTRF_SMALL, kernels/linalg/la_small.cu)
// and solve (CK_LA_GESV_SMALL, below: B or the identity, A column- or row-major, ipiv or none)
// on the CPU, through the stand-in CUDA of lab/issue37_emu/cuda_runtime.h: f32 and f64, lower and upper, orders 1 ... 64
// across the three group widths and the block kernel (33 ... 64), A read in place row-major or from the buffer, batches that end mid-block, a leading dim above n; against a plain right-looking
// Cholesky in double on the same triangle. Also: the other triangle (filled with finite garbage first) ends as zeros,
// a matrix that is not positive definite gets info = its first failing minor (as the plain loop finds it) and sets the
// check word, a NaN or an Inf anywhere gets info = -1 (before any minor). What this cannot see: timing, the real
// instructions. Run: sh lab/la_small_emu.sh
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "ck_kernels.h"
#include "linalg/linalg.h"

static std::mt19937 rng(34);

// plain Cholesky of the lower-triangle view L0 (n x n, row-major doubles): returns info (0 or the failing order)
static int plain(std::vector<double> &l, int n) {
  for (int c = 0; c < n; ++c) {
    double d = l[c * n + c];
    for (int k = 0; k < c; ++k) d -= l[c * n + k] * l[c * n + k];
    if (!(d > 0)) return c + 1;
    const double r = std::sqrt(d);
    l[c * n + c] = r;
    for (int i = c + 1; i < n; ++i) {
      double s = l[i * n + c];
      for (int k = 0; k < c; ++k) s -= l[i * n + k] * l[c * n + k];
      l[i * n + c] = s / r;
    }
  }
  return 0;
}

// rowmajor: A read in place from a row-major copy (ck_la_in rs = n, cs = 1, the caller's array as la_in hands it over),
// the factor written to a separate buffer; else read and written in place in the column-major buffer (lda)
template <typename T> static int one(int n, int64_t batch, int lda, bool upper, int bad_kind, bool rowmajor) {
  const int dt = sizeof(T) == 8 ? CK_F64 : CK_F32;
  const int64_t sa = (int64_t)lda * n;
  std::vector<T> a((size_t)(sa * batch));
  std::vector<std::vector<double>> ref(batch);
  std::vector<int> want(batch, 0);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t e = 0; e < batch; ++e) {
    std::vector<double> r(n * n), g(n * n);
    for (auto &v : r) v = u(rng);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double s = i == j ? n : 0;
        for (int k = 0; k < n; ++k) s += r[i * n + k] * r[j * n + k];
        g[i * n + j] = s;
      }
    if (bad_kind == 1 && e % 3 == 1) { int k = (int)(e % n); g[k * n + k] = -1; } // not positive definite
    for (int i = 0; i < lda; ++i)
      for (int j = 0; j < n; ++j) {
        const bool used = upper ? i <= j : i >= j;
        a[e * sa + i + (int64_t)j * lda] = i < n && used ? (T)g[i * n + j] : (T)(7 + u(rng)); // garbage elsewhere
      }
    if (bad_kind == 2 && e % 4 == 2) a[e * sa + (e % n) + (int64_t)((e / 2) % n) * lda] = e % 8 == 2 ? NAN : INFINITY;
    // the reference factor from the triangle the kernel reads, in T's values
    std::vector<double> l(n * n, 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) l[i * n + j] = (double)(upper ? a[e * sa + j + (int64_t)i * lda] : a[e * sa + i + (int64_t)j * lda]);
    want[e] = plain(l, n);
    bool fin = true;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) fin = fin && std::isfinite((double)a[e * sa + i + (int64_t)j * lda]);
    if (!fin) want[e] = -1;
    ref[e] = l;
  }
  std::vector<int32_t> info(batch, 12345);
  long long word = -7;
  ck_la_job j = {};
  j.op = CK_LA_POTRF_SMALL, j.dtype = dt, j.batch = batch, j.m = j.n = n, j.a = a.data(), j.sa = sa, j.lda = lda;
  j.ain = {a.data(), sa, 1, lda};
  std::vector<T> rm;
  if (rowmajor) { // the same matrices row-major (n x n each), and the output buffer refilled with garbage
    rm.resize((size_t)(n * n * batch));
    for (int64_t e = 0; e < batch; ++e)
      for (int i = 0; i < n; ++i)
        for (int k = 0; k < n; ++k) rm[e * n * n + i * n + k] = a[e * sa + i + (int64_t)k * lda];
    for (auto &v : a) v = (T)(-3 + u(rng));
    j.ain = {rm.data(), (int64_t)n * n, n, 1};
  }
  j.info = info.data(), j.uplo = upper ? 'U' : 'L', j.flag = &word;
  ck_env env = {};
  if (ck_la_small_potrf(&j, &env)) { printf("launch failed\n"); return 1; }
  int64_t wrong = 0;
  bool any = false;
  const double tol = sizeof(T) == 8 ? 1e-12 : 2e-5;
  for (int64_t e = 0; e < batch; ++e) {
    if (info[e] != want[e]) { ++wrong; if (wrong < 4) printf("  n %d entry %lld: info %d, want %d\n", n, (long long)e, info[e], want[e]); }
    if (want[e] != 0) { any = true; continue; }
    for (int i = 0; i < lda; ++i)
      for (int c = 0; c < n; ++c) {
        const T got = a[e * sa + i + (int64_t)c * lda];
        if (i >= n) continue; // rows past n: untouched (garbage stays)
        const int r = upper ? c : i, k = upper ? i : c; // L(r, k)
        const double w = k <= r ? ref[e][r * n + k] : 0.0;
        if (!(std::fabs((double)got - w) <= tol * (1 + std::fabs(w)))) {
          ++wrong;
          if (wrong < 4) printf("  n %d entry %lld (%d,%d): %.9g, want %.9g\n", n, (long long)e, i, c, (double)got, w);
        }
      }
  }
  if (any ? word < 0 || word >= batch || want[word] == 0 : word != -7) {
    ++wrong;
    printf("  n %d: check word %lld\n", n, word);
  }
  if (wrong)
    printf("potrf_small %s n %d batch %lld lda %d %s bad %d%s: %lld wrong\n", sizeof(T) == 8 ? "f64" : "f32", n,
           (long long)batch, lda, upper ? "upper" : "lower", bad_kind, rowmajor ? " row-major" : "", (long long)wrong);
  return wrong != 0;
}

// CK_LA_GESV_SMALL: A (diagonally weighted, random) read column-major in place or row-major, B random (column-major,
// overwritten) or the identity (bin.p NULL, x to a separate buffer: ck.inv), against Gaussian elimination with partial
// pivoting in double; ipiv NULL (ck.solve's) or written and checked as a permutation of swaps
template <typename T> static int gesv_one(int n, int64_t batch, bool rowmajor, bool ident, bool piv) {
  const int dt = sizeof(T) == 8 ? CK_F64 : CK_F32, r = ident ? n : 3;
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> a((size_t)(n * n * batch)), b((size_t)(n * r * batch));
  for (auto &v : a) v = (T)u(rng);
  for (int64_t e = 0; e < batch; ++e)
    for (int i = 0; i < n; ++i) a[e * n * n + i * n + i] += (T)(e % 2 ? 0.5 : n); // some entries need real pivoting
  for (auto &v : b) v = (T)u(rng);
  std::vector<T> x = b;
  std::vector<int32_t> info(batch, 12345), ip(piv ? n * batch : 0, -9);
  ck_la_job j = {};
  j.op = CK_LA_GESV_SMALL, j.dtype = dt, j.batch = batch, j.m = j.n = n, j.nrhs = r;
  // a holds entry e's (i, k) at e n^2 + i n + k: row-major (rs n, cs 1), or read as column-major it is A^T's
  j.ain = rowmajor ? ck_la_in{a.data(), (int64_t)n * n, n, 1} : ck_la_in{a.data(), (int64_t)n * n, 1, n};
  j.bin = ident ? ck_la_in{nullptr, 0, 0, 0} : ck_la_in{x.data(), (int64_t)n * r, 1, n};
  j.b = x.data(), j.sb = (int64_t)n * r, j.ldb = n, j.ipiv = piv ? ip.data() : nullptr, j.sp = n, j.info = info.data();
  ck_env env = {};
  if (ck_la_small_gesv(&j, &env)) { printf("launch failed\n"); return 1; }
  int64_t wrong = 0;
  const double tol = sizeof(T) == 8 ? 1e-10 : 2e-3;
  for (int64_t e = 0; e < batch; ++e) {
    std::vector<double> m(n * n), rhs(n * r);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k) m[i * n + k] = (double)a[e * n * n + (rowmajor ? i * n + k : k * n + i)];
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < r; ++c) rhs[i * r + c] = ident ? (i == c) : (double)b[e * n * r + i + c * n];
    for (int c = 0; c < n; ++c) { // elimination with partial pivoting
      int p = c;
      for (int i = c + 1; i < n; ++i) if (std::fabs(m[i * n + c]) > std::fabs(m[p * n + c])) p = i;
      for (int k = 0; k < n; ++k) std::swap(m[c * n + k], m[p * n + k]);
      for (int k = 0; k < r; ++k) std::swap(rhs[c * r + k], rhs[p * r + k]);
      if (piv && ip[e * n + c] != p + 1) { ++wrong; if (wrong < 4) printf("  gesv n %d entry %lld ipiv[%d] %d, want %d\n", n, (long long)e, c, ip[e * n + c], p + 1); }
      for (int i = c + 1; i < n; ++i) {
        const double f = m[i * n + c] / m[c * n + c];
        for (int k = c; k < n; ++k) m[i * n + k] -= f * m[c * n + k];
        for (int k = 0; k < r; ++k) rhs[i * r + k] -= f * rhs[c * r + k];
      }
    }
    for (int c = n - 1; c >= 0; --c)
      for (int k = 0; k < r; ++k) {
        double v = rhs[c * r + k];
        for (int q = c + 1; q < n; ++q) v -= m[c * n + q] * rhs[q * r + k];
        rhs[c * r + k] = v / m[c * n + c];
      }
    if (info[e] != 0) { ++wrong; if (wrong < 4) printf("  gesv n %d entry %lld: info %d\n", n, (long long)e, info[e]); }
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < r; ++c) {
        const double got = (double)x[e * n * r + i + c * n], w = rhs[i * r + c];
        if (!(std::fabs(got - w) <= tol * (1 + std::fabs(w)))) { ++wrong; if (wrong < 4) printf("  gesv n %d entry %lld x(%d,%d) %.9g, want %.9g\n", n, (long long)e, i, c, got, w); }
      }
  }
  if (wrong)
    printf("gesv_small %s n %d batch %lld%s%s%s: %lld wrong\n", sizeof(T) == 8 ? "f64" : "f32", n, (long long)batch,
           rowmajor ? " row-major" : "", ident ? " identity" : "", piv ? " ipiv" : "", (long long)wrong);
  return wrong != 0;
}

int main() {
  int runs = 0, bad = 0;
  for (int n : {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 63, 64})
    for (int64_t batch : {1, 5, 37})
      for (bool upper : {false, true})
        for (int kind : {0, 1, 2}) {
          if (n > 32 && batch == 37) continue; // (one block a matrix: 256 OS threads each)
          const int lda = kind == 0 && batch == 5 ? n + 3 : n;
          const bool rm = kind == 1 && batch != 5;
          bad += one<float>(n, batch, lda, upper, kind, rm), ++runs;
          bad += one<double>(n, batch, lda, upper, kind, rm), ++runs;
        }
  for (int n : {1, 3, 8, 13, 16, 29, 32})
    for (int64_t batch : {1, 37})
      for (int f = 0; f < 4; ++f) {
        const bool rm = f & 1, id = f & 2, piv = f == 1;
        bad += gesv_one<float>(n, batch, rm, id, piv), ++runs;
        if (n <= 16) bad += gesv_one<double>(n, batch, rm, id, piv), ++runs;
      }
  printf("la_small_emu: %d runs, %d bad\n", runs, bad);
  return bad != 0;
}
