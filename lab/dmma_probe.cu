// lab/dmma_probe.cu — a first f64 tensor-core GEMM (mma.sync.m8n8k4.f64, "DMMA") for the matmul ladder, as a
// standalone probe (round 3, session 9; written without a GPU, not run yet). Why: the ladder's best f64 rung,
// blocktile_2d, runs at 10.5 TFLOP/s on an H100 where cuBLAS's DMMA reaches 63, and LU rung 4's f64 trailing
// products (kernels/lu/04_fused_panel.cu) spend most of their time there (41% of cuSOLVER getrf at 8192).
//
// The kernel: C (m x n) = A (m x k) B (k x n), all row-major f64. A block of 4 warps (2 x 2) computes a BM x BN tile
// (64 x 64, or 128 x 64 with WM = 64), each warp WM x WN of 8 x 8 DMMA tiles; per k step of 4 a lane loads one double
// of each A fragment (row lane / 4, k lane % 4) and each B fragment (k lane % 4, column lane / 4) from shared memory
// and issues (WM / 8) x (WN / 8) mma.sync. Shared tiles are k-major (As[k][m], Bs[k][n]) with a leading dimension
// of 4 (mod 16) doubles, so a half-warp's fragment loads (k 0..3 x row or column 0..3) hit 16 different 8-byte
// bank pairs. Global -> shared by cp.async: 8-byte copies for A (transposed on the way), 16-byte copies for B,
// STAGES-deep (one barrier per k tile). Sizes must be multiples of the tile (the probe's shapes are).
//
//   nvcc -O3 -std=c++17 -arch=sm_90a -lcublas -o /tmp/dmma lab/dmma_probe.cu && /tmp/dmma
// Prints: max |C - C_ref| / (k max|A| max|B| eps) against a naive f64 kernel at 512^3 (must be < 1), then TFLOP/s and
// % of cublasDgemm in the same process at 4096^3, 8192^3 and the LU update shape 8192 x 8192 x 128.
#include <cublas_v2.h>
#include <math.h>

#include "probe_time.cuh"

namespace {

__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void cp8(void *dst, const void *src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(smem_u32(dst)), "l"(src));
}
__device__ __forceinline__ void cp16(void *dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(dst)), "l"(src));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void dmma(double &d0, double &d1, double a, double b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
               : "+d"(d0), "+d"(d1)
               : "d"(a), "d"(b));
}

template <int BM_, int BN_, int BK_, int WM_, int WN_, int ST_> struct Cfg {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = ST_;
  static constexpr int WARPS = (BM / WM) * (BN / WN), NT = WARPS * 32;
  static constexpr int LDA = BM + 4, LDB = BN + 4; /* = 4 (mod 16) doubles when BM, BN are multiples of 16 */
  static constexpr int MT = WM / 8, NTL = WN / 8;
  static constexpr int SMEM = STAGES * BK * (LDA + LDB) * 8;
  static_assert(BM % 16 == 0 && BN % 16 == 0 && BK % 4 == 0, "tile");
};

template <class C> __global__ void __launch_bounds__(C::NT) dmma_kernel(const double *A, const double *B, double *Cm,
                                                                        int m, int n, int k) {
  extern __shared__ __align__(16) double sm[];
  double *As = sm, *Bs = sm + C::STAGES * C::BK * C::LDA;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / (C::BN / C::WN), wn = warp % (C::BN / C::WN);
  const int row0 = blockIdx.y * C::BM, col0 = blockIdx.x * C::BN;
  const int ktiles = k / C::BK;
  auto load = [&](int kt, int stage) {
    double *as = As + stage * C::BK * C::LDA, *bs = Bs + stage * C::BK * C::LDB;
    const int k0 = kt * C::BK;
    for (int e = tid; e < C::BM * C::BK; e += C::NT) { /* A[row0 + r][k0 + c] -> As[c][r]: a warp reads 2 rows */
      const int r = e / C::BK, c = e % C::BK;
      cp8(as + c * C::LDA + r, A + (int64_t)(row0 + r) * k + k0 + c);
    }
    for (int e = tid; e < C::BK * C::BN / 2; e += C::NT) { /* B[k0 + r][col0 + 2c..] -> Bs[r][2c..] */
      const int r = e / (C::BN / 2), c = e % (C::BN / 2);
      cp16(bs + r * C::LDB + 2 * c, B + (int64_t)(k0 + r) * n + col0 + 2 * c);
    }
  };
  double acc[C::MT][C::NTL][2] = {};
  for (int s = 0; s < C::STAGES - 1; ++s) {
    if (s < ktiles) load(s, s);
    cp_commit();
  }
  const int ar = wm * C::WM + lane / 4, bc = wn * C::WN + lane / 4, kl = lane % 4;
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_wait<C::STAGES - 2>();
    __syncthreads(); /* tile kt is here; every warp is done with the stage the next copy refills */
    if (kt + C::STAGES - 1 < ktiles) load(kt + C::STAGES - 1, (kt + C::STAGES - 1) % C::STAGES);
    cp_commit();
    const double *as = As + (kt % C::STAGES) * C::BK * C::LDA, *bs = Bs + (kt % C::STAGES) * C::BK * C::LDB;
#pragma unroll
    for (int kk = 0; kk < C::BK; kk += 4) {
      double fa[C::MT], fb[C::NTL];
#pragma unroll
      for (int i = 0; i < C::MT; ++i) fa[i] = as[(kk + kl) * C::LDA + ar + 8 * i];
#pragma unroll
      for (int j = 0; j < C::NTL; ++j) fb[j] = bs[(kk + kl) * C::LDB + bc + 8 * j];
#pragma unroll
      for (int i = 0; i < C::MT; ++i)
#pragma unroll
        for (int j = 0; j < C::NTL; ++j) dmma(acc[i][j][0], acc[i][j][1], fa[i], fb[j]);
    }
  }
  /* D fragment: row lane / 4, columns 2 (lane % 4) + {0, 1} */
#pragma unroll
  for (int i = 0; i < C::MT; ++i)
#pragma unroll
    for (int j = 0; j < C::NTL; ++j) {
      const int r = row0 + wm * C::WM + 8 * i + lane / 4, c = col0 + wn * C::WN + 8 * j + 2 * (lane % 4);
      *reinterpret_cast<double2 *>(Cm + (int64_t)r * n + c) = make_double2(acc[i][j][0], acc[i][j][1]);
    }
}

__global__ void naive_kernel(const double *A, const double *B, double *Cm, int m, int n, int k) {
  const int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;
  if (r >= m || c >= n) return;
  double s = 0;
  for (int p = 0; p < k; ++p) s = fma(A[(int64_t)r * k + p], B[(int64_t)p * n + c], s);
  Cm[(int64_t)r * n + c] = s;
}

__global__ void fill_kernel(double *x, int64_t n, unsigned seed) { /* uniform in [-1, 1), a hash per element */
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned h = (unsigned)i * 2654435761u ^ seed;
  h ^= h >> 16, h *= 0x7feb352du, h ^= h >> 15, h *= 0x846ca68bu, h ^= h >> 16;
  x[i] = h * (2.0 / 4294967296.0) - 1.0;
}

template <class C> void run(const double *A, const double *B, double *Cm, int m, int n, int k) {
  static bool set = false;
  if (!set) {
    CK(cudaFuncSetAttribute(dmma_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM));
    set = true;
  }
  dmma_kernel<C><<<dim3(n / C::BN, m / C::BM), C::NT, C::SMEM>>>(A, B, Cm, m, n, k);
  CK(cudaGetLastError());
}

using C64 = Cfg<64, 64, 16, 32, 32, 3>;   /* 4 warps of 32 x 32 */
using C128 = Cfg<128, 64, 16, 64, 32, 3>; /* 4 warps of 64 x 32 */

double *dalloc(size_t n) {
  double *p;
  CK(cudaMalloc(&p, n * sizeof(double)));
  return p;
}

} // namespace

int main() {
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return printf("cublasCreate failed\n"), 1;
  { /* correctness at 512^3 against the naive kernel (both configurations) */
    const int m = 512, n = 512, k = 512;
    double *A = dalloc((size_t)m * k), *B = dalloc((size_t)k * n), *Cd = dalloc((size_t)m * n), *Cr = dalloc((size_t)m * n);
    fill_kernel<<<(m * k + 255) / 256, 256>>>(A, (int64_t)m * k, 1u);
    fill_kernel<<<(k * n + 255) / 256, 256>>>(B, (int64_t)k * n, 2u);
    naive_kernel<<<dim3(n / 16, m / 16), dim3(16, 16)>>>(A, B, Cr, m, n, k);
    std::vector<double> hd((size_t)m * n), hr((size_t)m * n);
    CK(cudaMemcpy(hr.data(), Cr, hr.size() * 8, cudaMemcpyDeviceToHost));
    for (int cfg = 0; cfg < 2; ++cfg) {
      CK(cudaMemset(Cd, 0xff, (size_t)m * n * 8)); /* poisoned: NaN everywhere until written */
      if (cfg == 0) run<C64>(A, B, Cd, m, n, k);
      else run<C128>(A, B, Cd, m, n, k);
      CK(cudaMemcpy(hd.data(), Cd, hd.size() * 8, cudaMemcpyDeviceToHost));
      double worst = 0;
      for (size_t i = 0; i < hd.size(); ++i) worst = fmax(worst, isnan(hd[i]) ? INFINITY : fabs(hd[i] - hr[i]));
      const double bound = k * 1.0 * 1.0 * 0x1p-52; /* k max|A| max|B| eps */
      printf("check %s 512^3: max |C - C_ref| = %.3g (%.3f of k eps bound) %s\n", cfg ? "128x64" : "64x64", worst,
             worst / bound, worst < bound ? "ok" : "FAILED");
    }
    cudaFree(A), cudaFree(B), cudaFree(Cd), cudaFree(Cr);
  }
  const int shapes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 8192, 128}};
  for (const auto &s : shapes) {
    const int m = s[0], n = s[1], k = s[2];
    double *A = dalloc((size_t)m * k), *B = dalloc((size_t)k * n), *Cm = dalloc((size_t)m * n);
    fill_kernel<<<(unsigned)(((int64_t)m * k + 255) / 256), 256>>>(A, (int64_t)m * k, 3u);
    fill_kernel<<<(unsigned)(((int64_t)k * n + 255) / 256), 256>>>(B, (int64_t)k * n, 4u);
    const double one = 1, zero = 0, flop = 2.0 * m * n * k;
    /* row-major C = A B is column-major C^T = B^T A^T */
    const float tc = probe_ms([&] { cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, n, A, k, &zero, Cm, n); });
    const float t64 = probe_ms([&] { run<C64>(A, B, Cm, m, n, k); });
    const float t128 = probe_ms([&] { run<C128>(A, B, Cm, m, n, k); });
    printf("%5d x %5d x %5d  cublas %8.3f ms %6.1f TF/s | dmma 64x64 %8.3f ms %6.1f TF/s %5.1f%% | dmma 128x64 %8.3f ms "
           "%6.1f TF/s %5.1f%%\n", m, n, k, tc, flop / tc / 1e9, t64, flop / t64 / 1e9, 100 * tc / t64, t128,
           flop / t128 / 1e9, 100 * tc / t128);
    cudaFree(A), cudaFree(B), cudaFree(Cm);
  }
  cublasDestroy(h);
  return 0;
}
