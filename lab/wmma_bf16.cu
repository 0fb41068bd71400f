/*
 * wmma_bf16.cu — experiment (lab/mmapeak.sh part 2): rung 10 (kernels/matmul/10_wmma.cu) in bf16 beside f16.
 * The rung is compiled here as it is (this file #includes it: one translation unit, so mmapeak.sh's SASS census
 * sees the rung's own kernels); no kernel of the rung is copied.
 *
 * Question: why was bf16 WMMA slower than f16? nvcc 13.0's front end emits wmma.load.{a,b}...bf16 with a
 * GENERIC address (f16 gets wmma.load...shared.f16), and ptxas lowered the bf16 loads to LDS + MOVM (register
 * transposes for row-major B) instead of LDSM / LDSM.T. The rung now issues the bf16 loads in PTX with the
 * .shared state space (10_wmma.cu: wmma_ld_*_bf16, since 8c95728); the census of its W3 kernels ("rung" bf16,
 * "rung_f16") shows whether both k loops load with LDSM and no MOVM.
 * The first version (b9c44ff, last changed in 8c95728: `git show 8c95728:bench/exp/wmma_bf16.cu`) also held
 * four other fragment loads, each a copy of the rung's kernel: colB (B column-major, col_major fragments; crashed
 * with a misaligned address, left unfixed), hB / hAB (bf16 operands loaded as f16 fragments and copied bit for
 * bit: an UNDOCUMENTED layout, hence the calib line) and ptx.shared (the form the rung adopted). The copies went
 * when the lab left the product (issue 30); lab/results/2026-11-24-mmapeak-run1.txt has their census.
 *
 * Output: "calib" lines (per fragment kind, the f16 fragment element holding the (row, col) of each bf16
 * element, if one index works for all 32 lanes), "check" lines (1000 x 1100 x 1030 in full and 2048^3 on
 * sampled elements, against a host f64 reference), "speed" lines (4096^3 and 8192^3, median of 10 after 3
 * warm-ups, % of cuBLAS in the same dtype and run).
 */
#include <cublas_v2.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "10_wmma.cu" // the rung itself (kernels/matmul/, on the include path)

namespace {

// calibration: which f16 fragment element holds the (row, col) of each bf16 fragment element
template <class Use, class L> __global__ void calib_kernel(int *out) {
  __shared__ __half hs[256];
  __shared__ __nv_bfloat16 bs[256];
  for (int i = threadIdx.x; i < 256; i += 32) hs[i] = __int2half_rn(i), bs[i] = __int2bfloat16_rn(i & 255);
  __syncwarp();
  wmma::fragment<Use, 16, 16, 16, __half, L> h;
  wmma::fragment<Use, 16, 16, 16, __nv_bfloat16, L> b;
  wmma::load_matrix_sync(h, hs, 16);
  wmma::load_matrix_sync(b, bs, 16);
  for (int i = 0; i < 8; ++i) {
    int found = -1;
    const int want = (int)__bfloat162float(b.x[i]);
    for (int j = 0; j < 16; ++j)
      if (found < 0 && (int)__half2float(h.x[j]) == want) found = j;
    out[threadIdx.x * 8 + i] = found;
  }
}

} // namespace

// ---------------------------------------------------------------- host

#define CK(x)                                                                                                  \
  do {                                                                                                         \
    cudaError_t e_ = (x);                                                                                      \
    if (e_ != cudaSuccess) {                                                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                     \
      exit(1);                                                                                                 \
    }                                                                                                          \
  } while (0)

static float to_f(uint16_t v, int dt) {
  if (dt == CK_F16) {
    __half_raw r;
    r.x = v;
    return __half2float(__half(r));
  }
  uint32_t u = (uint32_t)v << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint16_t from_f(float f, int dt) { // round to nearest even
  if (dt == CK_F16) return __half_raw(__float2half_rn(f)).x;
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

template <class Use, class L> static void calib(const char *what) {
  int *d;
  CK(cudaMalloc(&d, 32 * 8 * 4));
  calib_kernel<Use, L><<<1, 32>>>(d);
  CK(cudaGetLastError());
  std::vector<int> h(256);
  CK(cudaMemcpy(h.data(), d, 1024, cudaMemcpyDeviceToHost));
  cudaFree(d);
  bool same = true;
  for (int l = 1; l < 32; ++l)
    for (int i = 0; i < 8; ++i) same &= h[l * 8 + i] == h[i];
  printf("calib perm %s:", what);
  for (int i = 0; i < 8; ++i) printf(" %d", h[i]);
  printf(" (%s across lanes)\n", same ? "the same" : "INCONSISTENT");
}

struct Mat {
  int m, n, k, dt;
  uint16_t *A, *B, *C; // device, row-major
  std::vector<uint16_t> hA, hB;
};

static Mat make(int m, int n, int k, int dt) {
  Mat x{m, n, k, dt, nullptr, nullptr, nullptr, {}, {}};
  x.hA.resize((size_t)m * k), x.hB.resize((size_t)k * n);
  uint32_t s = 2024u + m + n + k;
  auto rnd = [&]() {
    s = s * 1664525u + 1013904223u;
    return ((float)(s >> 8) / 16777216.f - 0.5f) * 2.f;
  };
  for (auto &v : x.hA) v = from_f(rnd(), dt);
  for (auto &v : x.hB) v = from_f(rnd(), dt);
  CK(cudaMalloc(&x.A, x.hA.size() * 2));
  CK(cudaMalloc(&x.B, x.hB.size() * 2));
  CK(cudaMalloc(&x.C, (size_t)m * n * 2));
  CK(cudaMemcpy(x.A, x.hA.data(), x.hA.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(x.B, x.hB.data(), x.hB.size() * 2, cudaMemcpyHostToDevice));
  return x;
}
static void drop(Mat &x) { cudaFree(x.A), cudaFree(x.B), cudaFree(x.C); }

static ck_mm_desc desc_of(const Mat &x) {
  ck_mm_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = d.b_dtype = x.dt, d.c_dtype = x.dt, d.precision = CK_MM_EXACT;
  d.batch = 1, d.m = x.m, d.n = x.n, d.k = x.k;
  d.a = x.A, d.a_rs = x.k, d.a_cs = 1;
  d.b = x.B, d.b_rs = x.n, d.b_cs = 1;
  d.c = x.C, d.c_rs = x.n, d.c_cs = 1;
  d.alpha = 1.0, d.beta = 0.0;
  return d;
}

/* max relative error over `samples` elements (all when samples == 0) vs a host f64 reference */
static double check(const Mat &x, int samples) {
  std::vector<uint16_t> c((size_t)x.m * x.n);
  CK(cudaMemcpy(c.data(), x.C, c.size() * 2, cudaMemcpyDeviceToHost));
  double worst = 0;
  uint32_t s = 7;
  const size_t total = samples ? (size_t)samples : c.size();
  for (size_t t = 0; t < total; ++t) {
    size_t idx = t;
    if (samples) s = s * 1664525u + 1013904223u, idx = ((size_t)s * 2654435761u) % c.size();
    const int i = (int)(idx / x.n), j = (int)(idx % x.n);
    double ref = 0, mag = 0;
    for (int p = 0; p < x.k; ++p) {
      const double a = to_f(x.hA[(size_t)i * x.k + p], x.dt), b = to_f(x.hB[(size_t)p * x.n + j], x.dt);
      ref += a * b, mag += fabs(a * b);
    }
    const double err = fabs(to_f(c[idx], x.dt) - ref) / (mag + 1e-3);
    worst = std::max(worst, err);
  }
  return worst;
}

static ck_env g_env;

static double time_it(const std::function<void()> &f, int n) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ts;
  for (int r = 0; r < 13; ++r) {
    CK(cudaEventRecord(e0));
    f();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r >= 3) ts.push_back(ms);
  }
  CK(cudaGetLastError());
  std::sort(ts.begin(), ts.end());
  const double ms = ts[ts.size() / 2];
  return 2.0 * n * (double)n * n / (ms * 1e-3) / 1e12;
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  memset(&g_env, 0, sizeof g_env);
  g_env.stream = 0, g_env.sm_count = prop.multiProcessorCount, g_env.cc_major = prop.major, g_env.cc_minor = prop.minor;
  g_env.smem_optin = prop.sharedMemPerBlockOptin, g_env.l2_bytes = prop.l2CacheSize;
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
  printf("# wmma_bf16 on %s (rung 10 as built from kernels/matmul/10_wmma.cu)\n", prop.name);
  calib<wmma::matrix_a, wmma::row_major>("A row_major");
  calib<wmma::matrix_b, wmma::row_major>("B row_major");

  struct Cand {
    const char *name;
    int dt;
  };
  const Cand cands[] = {{"rung", CK_BF16}, {"rung_f16", CK_F16}};
  constexpr int kNC = (int)(sizeof cands / sizeof cands[0]);
  bool ok[kNC];
  int fails = 0;
  for (int c = 0; c < kNC; ++c) { // validation: an awkward shape in full, a square one sampled
    Mat x = make(1000, 1100, 1030, cands[c].dt);
    ck_mm_desc d = desc_of(x);
    CK(cudaMemset(x.C, 0xff, (size_t)x.m * x.n * 2));
    int e = ck_matmul_wmma(&d, &g_env);
    CK(cudaDeviceSynchronize());
    const double e1 = e ? 1e9 : check(x, 0);
    drop(x);
    Mat y = make(2048, 2048, 2048, cands[c].dt);
    d = desc_of(y);
    e |= ck_matmul_wmma(&d, &g_env);
    CK(cudaDeviceSynchronize());
    const double e2 = e ? 1e9 : check(y, 4096);
    drop(y);
    ok[c] = e == 0 && e1 < 1e-2 && e2 < 1e-2;
    fails += !ok[c];
    printf("check %-11s 1000x1100x1030 max rel err %.2e, 2048^3 sampled %.2e: %s\n", cands[c].name, e1, e2, ok[c] ? "ok" : "FAILED");
  }
  const float alpha = 1.f, beta = 0.f;
  for (int n : {4096, 8192}) {
    for (int c = 0; c < kNC; ++c) {
      const int dt = cands[c].dt;
      const char *dn = dt == CK_F16 ? "f16" : "bf16";
      if (!ok[c]) {
        printf("speed %d^3 %-11s FAILED validation: not timed\n", n, cands[c].name);
        continue;
      }
      Mat x = make(n, n, n, dt);
      const cudaDataType ct = dt == CK_F16 ? CUDA_R_16F : CUDA_R_16BF;
      // row-major C = A B is column-major C^T = B^T A^T
      const double cub = time_it([&] {
        cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, x.B, ct, n, x.A, ct, n, &beta, x.C, ct, n,
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      }, n);
      ck_mm_desc d = desc_of(x);
      const double tf = time_it([&] { ck_matmul_wmma(&d, &g_env); }, n);
      const double err = check(x, 256);
      printf("speed %d^3 %-11s %7.1f TFLOP/s = %5.1f%% of cuBLAS %s (%.1f TFLOP/s; sampled rel err %.1e%s)\n", n,
             cands[c].name, tf, 100 * tf / cub, dn, cub, err, err < 1e-2 ? "" : " WRONG");
      fails += err >= 1e-2;
      drop(x);
    }
  }
  cublasDestroy(h);
  return fails ? 1 : 0;
}
