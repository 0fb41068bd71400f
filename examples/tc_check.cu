/*
 * tc_check.cu — standalone correctness and speed check of the matmul ladder's tensor-core rungs
 * (kernels/matmul/10_wmma.cu, 11_mma_sync.cu) and of the cuBLAS reference (00_cublas.cu) for f16, bf16 and
 * TF32, without Lua: it links the launchers directly and calls them as the dispatcher would (ck_mm_desc +
 * ck_env), so a rung can be validated and timed before the dispatcher knows it. Build and run:
 * examples/tc_check.sh (nvcc, sm_90a).
 *
 * Part 1, correctness. Inputs are random, never zero (|x| in [1/16, 1], random sign), generated on the GPU
 * and rounded there to the input dtype; the reference is the host f64 product of exactly those rounded values
 * (TF32: of the f32 values; the rounding to TF32 is in the tolerance). C is poisoned (all bits set: NaN in
 * every dtype) before each launch, padding columns of C must still hold the poison afterwards, and beta == 0
 * must never read the NaN. Shapes: 1x1x1, 17x33x65, 127x129x31, tails on every side, transposed operands
 * (given by strides a_rs = 1, a_cs = m), padded leading dimensions, batch 3 (and a broadcast B with
 * b_bs = 0), alpha/beta, k = 0; every configuration of each rung on a tail-heavy shape; small shapes are
 * checked in full, larger ones on a sample of elements.
 *
 * Tolerance (per element). The rungs and cuBLAS form s = sum_p a_p b_p with f32 accumulators, then
 * y = alpha*s + beta*c in f32, then round y to c_dtype. With S = sum_p |a_p b_p|:
 *   - products of f16/bf16 inputs are exact in f32 (11 + 11 or 8 + 8 significant bits <= 24);
 *   - K - 1 additions in f32 each commit at most one rounding error relative to the partial sum:
 *     |fl(s) - s| <= gamma_K * S, gamma_K = K u / (1 - K u) with u = 2^-24 for round-to-nearest. The tensor
 *     cores align and add in blocks and may truncate instead of rounding, which doubles u, so we take
 *     2 K 2^-24 * S (first order);
 *   - TF32 (cvt.rna of both f32 inputs, u_tf32 = 2^-11): each product gains a relative error
 *     <= (1 + u_tf32)^2 - 1 ~ 2 u_tf32 = 2^-10; a library that truncates to TF32 instead doubles that, so we
 *     take 2^-9 * S;
 *   - alpha*s and + beta*c in f32: <= 2 * 2^-24 * (|alpha| S + |beta c|);
 *   - the final rounding to c_dtype: u_out * |y| with u_out = 2^-8 (bf16), 2^-11 (f16), 2^-24 (f32), plus
 *     half the subnormal spacing for f16 (2^-25) where |y| underflows.
 *   tol = |alpha| (2 K 2^-24 + [tf32] 2^-9) S + 2^-23 (|alpha| S + |beta c|) + u_out (|ref| + that) + f16 floor.
 * With random signs the actual error is far smaller (~ sqrt(K) u S), so a failure means a real bug.
 *
 * Part 2, speed: C = A B at 4096^3 and 8192^3 in bf16, f16 (C in the input dtype) and TF32 (f32 in and out),
 * cuBLAS first, then each rung's default configuration and every forced one (CUKERN_MM_CFG=<i>); CUDA
 * events around each launch, 3 warm-ups, median of 10, TFLOP/s = 2 M N K / t, and % of cuBLAS measured in
 * the same run; every timed configuration is also checked on 64 sampled elements. Ends with a table.
 * --quick times the forced configurations at 8192^3 only. --prof KIND N RUNG CFG [REPS]: a few launches of one
 * configuration for a profiler. Exit status 1 when any check failed.
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ck_kernels.h"

extern "C" {
int ck_matmul_cublas(const void *desc, const ck_env *env);
int ck_matmul_wmma(const void *desc, const ck_env *env);
const char *ck_matmul_wmma_supports(const void *desc);
int ck_matmul_mma_sync(const void *desc, const ck_env *env);
const char *ck_matmul_mma_sync_supports(const void *desc);
}

#define CK(x)                                                                                                   \
  do {                                                                                                          \
    cudaError_t e_ = (x);                                                                                       \
    if (e_ != cudaSuccess) {                                                                                    \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                       \
      exit(2);                                                                                                  \
    }                                                                                                           \
  } while (0)

// ---------------------------------------------------------------- dtypes

enum Kind { K_F16, K_BF16, K_TF32 };
static const char *kind_name(Kind k) { return k == K_F16 ? "f16" : k == K_BF16 ? "bf16" : "tf32"; }
static int in_dt(Kind k) { return k == K_F16 ? CK_F16 : k == K_BF16 ? CK_BF16 : CK_F32; }
static const char *dt_name(int dt) { return dt == CK_F16 ? "f16" : dt == CK_BF16 ? "bf16" : "f32"; }
static size_t dt_size(int dt) { return dt == CK_F32 ? 4 : 2; }

static double f16_to_d(uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp((double)(1024 + m), e - 25);
  return s ? -v : v;
}
static double bits_to_d(const void *p, int dt) {
  if (dt == CK_F16) return f16_to_d(*(const uint16_t *)p);
  float f;
  if (dt == CK_BF16) {
    const uint32_t u = (uint32_t)(*(const uint16_t *)p) << 16;
    memcpy(&f, &u, 4);
  } else {
    memcpy(&f, p, 4);
  }
  return f;
}

// ---------------------------------------------------------------- device fill: random, never zero

__device__ __forceinline__ float rnd(uint64_t e, uint32_t seed) {
  uint64_t x = e * 0x9E3779B97F4A7C15ull + ((uint64_t)seed << 32 | seed) + 0x632BE59BD9B4E019ull;
  x ^= x >> 30, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 27, x *= 0x94D049BB133111EBull, x ^= x >> 31;
  const float u = (float)(x >> 40) * (1.f / 16777216.f); // [0, 1)
  const float v = 0.0625f + 0.9375f * u;                   // [1/16, 1)
  return (x >> 39) & 1 ? -v : v;
}
__device__ __forceinline__ void put(__half *p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void put(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }
__device__ __forceinline__ void put(float *p, float v) { *p = v; }

/* Element (b, r, c) of a batch x rows x cols operand, at b*bs + r*rs + c*cs, gets rnd(linear index). */
template <typename T>
__global__ void fill_kernel(T *p, int64_t batch, int64_t rows, int64_t cols, int64_t bs, int64_t rs, int64_t cs,
                            uint32_t seed) {
  const int64_t total = batch * rows * cols;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t b = e / (rows * cols), r = (e / cols) % rows, c = e % cols;
    put(p + b * bs + r * rs + c * cs, rnd((uint64_t)e, seed));
  }
}
static void fill(void *p, int dt, int64_t batch, int64_t rows, int64_t cols, int64_t bs, int64_t rs, int64_t cs,
                 uint32_t seed) {
  const int64_t total = batch * rows * cols;
  if (total == 0) return;
  const int blocks = (int)std::min<int64_t>((total + 255) / 256, 65536);
  if (dt == CK_F16) fill_kernel<<<blocks, 256>>>((__half *)p, batch, rows, cols, bs, rs, cs, seed);
  else if (dt == CK_BF16) fill_kernel<<<blocks, 256>>>((__nv_bfloat16 *)p, batch, rows, cols, bs, rs, cs, seed);
  else fill_kernel<<<blocks, 256>>>((float *)p, batch, rows, cols, bs, rs, cs, seed);
  CK(cudaGetLastError());
}

// ---------------------------------------------------------------- environment

/* Workspace (mma_sync's stream-K tail): freed blocks are kept and reused, as the library's caching allocator
 * does (a cudaFree per launch would synchronise the device inside the timed launches). */
static std::vector<std::pair<void *, size_t>> g_ws_free, g_ws_used;
static void *ws_alloc(void *, size_t bytes) {
  for (size_t i = 0; i < g_ws_free.size(); ++i)
    if (g_ws_free[i].second >= bytes) {
      g_ws_used.push_back(g_ws_free[i]);
      g_ws_free.erase(g_ws_free.begin() + i);
      return g_ws_used.back().first;
    }
  void *p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) return nullptr;
  g_ws_used.push_back({p, bytes});
  return p;
}
static void ws_free(void *, void *p) {
  for (size_t i = 0; i < g_ws_used.size(); ++i)
    if (g_ws_used[i].first == p) {
      g_ws_free.push_back(g_ws_used[i]);
      g_ws_used.erase(g_ws_used.begin() + i);
      return;
    }
}

static ck_env g_env;
static cudaStream_t g_stream;

static void env_init() {
  CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetStream(h, g_stream) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "cublas init failed\n");
    exit(2);
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  memset(&g_env, 0, sizeof g_env);
  g_env.stream = g_stream, g_env.cublas = h;
  g_env.sm_count = prop.multiProcessorCount, g_env.cc_major = prop.major, g_env.cc_minor = prop.minor;
  g_env.smem_optin = prop.sharedMemPerBlockOptin, g_env.l2_bytes = prop.l2CacheSize;
  g_env.ws_alloc = ws_alloc, g_env.ws_free = ws_free, g_env.owner = nullptr;
  printf("device: %s, cc %d.%d, %d SMs, L2 %d MB, smem opt-in %zu KB\n", prop.name, prop.major, prop.minor,
         prop.multiProcessorCount, prop.l2CacheSize >> 20, prop.sharedMemPerBlockOptin >> 10);
}

// ---------------------------------------------------------------- rungs

struct Rung {
  const char *name;
  int (*launch)(const void *, const ck_env *);
  const char *(*supports)(const void *);
  int ncfg_half, ncfg_tf32; // configurations CUKERN_MM_CFG can force (0: none)
};
static const Rung kRungs[] = {
    {"cublas", ck_matmul_cublas, nullptr, 0, 0},
    {"wmma", ck_matmul_wmma, ck_matmul_wmma_supports, 5, 0},
    {"mma_sync", ck_matmul_mma_sync, ck_matmul_mma_sync_supports, 8, 8},
};

static void set_cfg(int cfg) {
  if (cfg < 0) unsetenv("CUKERN_MM_CFG");
  else setenv("CUKERN_MM_CFG", std::to_string(cfg).c_str(), 1);
}
/* mma_sync's stream-K tail (warp-specialized configurations): -1 as the launcher decides, 0 off, 1 wherever a
 * launch can take it. */
static void set_sk(int mode) {
  if (mode < 0) unsetenv("CUKERN_MM_SK");
  else setenv("CUKERN_MM_SK", mode ? "1" : "0", 1);
}

// ---------------------------------------------------------------- one problem: device buffers + host copies

struct Problem {
  Kind kind;
  int cdt;
  int64_t m, n, k, batch;
  bool ta, tb, bcast_b;
  int64_t a_bs, a_rs, a_cs, b_bs, b_rs, b_cs, c_bs, c_rs, c_cs;
  double alpha, beta;
  size_t a_elems, b_elems, c_elems;
  void *da = nullptr, *db = nullptr, *dc = nullptr, *dc0 = nullptr;
  std::vector<unsigned char> ha, hb, hc0; // raw bytes of A, B and the initial C
};

static int64_t up8(int64_t v) { return (v + 7) / 8 * 8; }

/* pad: leading dimensions rounded up to 8 elements (16-byte rows: the rungs' cp.async path); else tight. */
static Problem make_problem(Kind kind, int cdt, int64_t m, int64_t n, int64_t k, int64_t batch, bool ta, bool tb,
                            bool pad, bool bcast_b, double alpha, double beta, uint32_t seed, bool host_copy) {
  Problem P;
  P.kind = kind, P.cdt = cdt, P.m = m, P.n = n, P.k = k, P.batch = batch, P.ta = ta, P.tb = tb, P.bcast_b = bcast_b;
  P.alpha = alpha, P.beta = beta;
  const int idt = in_dt(kind);
  const size_t es = dt_size(idt), ces = dt_size(cdt);
  // A: m x k, row-major (rs = lda, cs = 1) or transposed storage (rs = 1, cs = ldm)
  auto ld = [&](int64_t v) { return pad ? up8(std::max<int64_t>(v, 1)) : std::max<int64_t>(v, 1); };
  if (!ta) P.a_rs = ld(k), P.a_cs = 1, P.a_bs = m * P.a_rs;
  else P.a_rs = 1, P.a_cs = ld(m), P.a_bs = k * P.a_cs;
  if (!tb) P.b_rs = ld(n), P.b_cs = 1, P.b_bs = k * P.b_rs;
  else P.b_rs = 1, P.b_cs = ld(k), P.b_bs = n * P.b_cs;
  if (bcast_b) P.b_bs = 0;
  P.c_rs = n + 3, P.c_cs = 1, P.c_bs = m * P.c_rs; // 3 poisoned padding columns per row
  P.a_elems = (size_t)std::max<int64_t>(P.a_bs * batch, 1) + 8;
  P.b_elems = (size_t)std::max<int64_t>(bcast_b ? P.b_bs + (tb ? n * P.b_cs : k * P.b_rs) : P.b_bs * batch, 1) + 8;
  P.c_elems = (size_t)std::max<int64_t>(P.c_bs * batch, 1) + 8;
  CK(cudaMalloc(&P.da, P.a_elems * es));
  CK(cudaMalloc(&P.db, P.b_elems * es));
  CK(cudaMalloc(&P.dc, P.c_elems * ces));
  CK(cudaMalloc(&P.dc0, P.c_elems * ces));
  CK(cudaMemset(P.da, 0xff, P.a_elems * es)); // padding of A and B: NaN, which no product may touch
  CK(cudaMemset(P.db, 0xff, P.b_elems * es));
  CK(cudaMemset(P.dc0, 0xff, P.c_elems * ces));
  fill(P.da, idt, batch, m, k, P.a_bs, P.a_rs, P.a_cs, seed);
  fill(P.db, idt, bcast_b ? 1 : batch, k, n, P.b_bs, P.b_rs, P.b_cs, seed + 1);
  if (beta != 0) fill(P.dc0, cdt, batch, m, n, P.c_bs, P.c_rs, P.c_cs, seed + 2);
  CK(cudaDeviceSynchronize());
  if (host_copy) {
    P.ha.resize(P.a_elems * es), P.hb.resize(P.b_elems * es), P.hc0.resize(P.c_elems * ces);
    CK(cudaMemcpy(P.ha.data(), P.da, P.ha.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(P.hb.data(), P.db, P.hb.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(P.hc0.data(), P.dc0, P.hc0.size(), cudaMemcpyDeviceToHost));
  }
  return P;
}

static void free_problem(Problem &P) {
  cudaFree(P.da), cudaFree(P.db), cudaFree(P.dc), cudaFree(P.dc0);
  P.da = P.db = P.dc = P.dc0 = nullptr;
}

static ck_mm_desc desc_of(const Problem &P) {
  ck_mm_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = in_dt(P.kind), d.c_dtype = P.cdt, d.precision = P.kind == K_TF32 ? CK_MM_TF32 : CK_MM_EXACT;
  d.batch = P.batch, d.m = P.m, d.n = P.n, d.k = P.k;
  d.a = P.da, d.a_bs = P.a_bs, d.a_rs = P.a_rs, d.a_cs = P.a_cs;
  d.b = P.db, d.b_bs = P.b_bs, d.b_rs = P.b_rs, d.b_cs = P.b_cs;
  d.c = P.dc, d.c_bs = P.c_bs, d.c_rs = P.c_rs, d.c_cs = P.c_cs;
  d.alpha = P.alpha, d.beta = P.beta;
  return d;
}

/* C := initial C (poison, or the beta test's values), on the stream. */
static void reset_c(const Problem &P) {
  CK(cudaMemcpyAsync(P.dc, P.dc0, P.c_elems * dt_size(P.cdt), cudaMemcpyDeviceToDevice, g_stream));
}

// ---------------------------------------------------------------- checking

struct CheckResult {
  int64_t checked = 0, bad = 0, pad_bad = 0;
  double max_ratio = 0; // max |err| / tol
  char first[256] = "";
};

static double tol_of(const Problem &P, double S, double ref, double bc) {
  const double u32 = ldexp(1.0, -24);
  const double uo = P.cdt == CK_BF16 ? ldexp(1.0, -8) : P.cdt == CK_F16 ? ldexp(1.0, -11) : u32;
  const double aS = fabs(P.alpha) * S;
  const double acc = aS * (2.0 * (double)P.k * u32 + (P.kind == K_TF32 ? ldexp(1.0, -9) : 0.0)) +
                     2 * u32 * (aS + fabs(bc));
  return acc + uo * (fabs(ref) + acc) + (P.cdt == CK_F16 ? ldexp(1.0, -25) : 0.0) + 1e-300;
}

/* Check C (copied to hc) against the f64 product; every element when the product is small, else `sample`
 * elements (and always the four corners of each batch). Padding columns must hold the poison. */
static CheckResult check(const Problem &P, const std::vector<unsigned char> &hc, int64_t sample, bool pad_check = true) {
  CheckResult R;
  const int idt = in_dt(P.kind);
  const size_t es = dt_size(idt), ces = dt_size(P.cdt);
  auto A = [&](int64_t b, int64_t i, int64_t p) {
    return bits_to_d(&P.ha[(size_t)(b * P.a_bs + i * P.a_rs + p * P.a_cs) * es], idt);
  };
  auto B = [&](int64_t b, int64_t p, int64_t j) {
    return bits_to_d(&P.hb[(size_t)(b * P.b_bs + p * P.b_rs + j * P.b_cs) * es], idt);
  };
  auto one = [&](int64_t b, int64_t i, int64_t j) {
    double s = 0, S = 0;
    for (int64_t p = 0; p < P.k; ++p) {
      const double x = A(b, i, p) * B(P.bcast_b ? 0 : b, p, j);
      s += x, S += fabs(x);
    }
    const size_t off = (size_t)(b * P.c_bs + i * P.c_rs + j * P.c_cs) * ces;
    const double c0 = P.beta != 0 ? bits_to_d(&P.hc0[off], P.cdt) : 0.0;
    const double ref = P.alpha * s + P.beta * c0;
    const double got = bits_to_d(&hc[off], P.cdt);
    const double tol = tol_of(P, S, ref, P.beta * c0), err = fabs(got - ref);
    R.checked++;
    if (!(err <= tol)) {
      if (!R.bad)
        snprintf(R.first, sizeof R.first, "C[%lld,%lld,%lld] = %.9g, want %.9g (tol %.3g)", (long long)b, (long long)i,
                 (long long)j, got, ref, tol);
      R.bad++;
    } else if (tol > 0) {
      R.max_ratio = std::max(R.max_ratio, err / tol);
    }
  };
  const bool full = (double)P.m * P.n * std::max<int64_t>(P.k, 1) * P.batch <= 4e7;
  uint64_t x = 12345;
  for (int64_t b = 0; b < P.batch; ++b) {
    if (full) {
      for (int64_t i = 0; i < P.m; ++i)
        for (int64_t j = 0; j < P.n; ++j) one(b, i, j);
    } else {
      one(b, 0, 0), one(b, P.m - 1, P.n - 1), one(b, 0, P.n - 1), one(b, P.m - 1, 0);
      for (int64_t s = 0; s < sample / P.batch; ++s) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        one(b, (int64_t)((x >> 33) % (uint64_t)P.m), (int64_t)((x >> 13) % (uint64_t)P.n));
      }
    }
    // padding columns n .. n+2 of each row (the kernel must not write them)
    const int64_t rows = !pad_check ? 0 : full ? P.m : std::min<int64_t>(P.m, 64);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = P.n; j < P.n + 3; ++j) {
        const size_t off = (size_t)(b * P.c_bs + i * P.c_rs + j) * ces;
        if (memcmp(&hc[off], &P.hc0[off], ces)) R.pad_bad++;
      }
  }
  return R;
}

static int g_fail = 0, g_pass = 0, g_refused = 0;

/* Run one rung (cfg: -1 default, else forced) on P, check it; returns false when it failed. */
static bool run_check(const Rung &r, int cfg, Problem &P, int64_t sample, const char *label) {
  const ck_mm_desc d = desc_of(P);
  char name[64];
  snprintf(name, sizeof name, cfg < 0 ? "%s" : "%s/c%d", r.name, cfg);
  const char *why = r.supports ? r.supports(&d) : nullptr;
  if (why) {
    printf("  %-12s %-44s refused: %s\n", name, label, why);
    g_refused++;
    return true;
  }
  reset_c(P);
  set_cfg(cfg);
  const int rc = r.launch(&d, &g_env);
  set_cfg(-1);
  cudaError_t e = cudaStreamSynchronize(g_stream);
  if (rc != 0 || e != cudaSuccess) {
    printf("  %-12s %-44s FAIL: launcher returned %d, sync: %s\n", name, label, rc, cudaGetErrorString(e));
    g_fail++;
    if (e != cudaSuccess) exit(3); // the context is gone
    return false;
  }
  std::vector<unsigned char> hc(P.c_elems * dt_size(P.cdt));
  CK(cudaMemcpy(hc.data(), P.dc, hc.size(), cudaMemcpyDeviceToHost));
  const CheckResult R = check(P, hc, sample);
  const bool ok = R.bad == 0 && R.pad_bad == 0;
  if (ok) {
    g_pass++;
    printf("  %-12s %-44s ok   (%lld checked, max err/tol %.3f)\n", name, label, (long long)R.checked, R.max_ratio);
  } else {
    g_fail++;
    printf("  %-12s %-44s FAIL (%lld of %lld wrong, %lld padding overwritten) %s\n", name, label, (long long)R.bad,
           (long long)R.checked, (long long)R.pad_bad, R.first);
  }
  return ok;
}

// ---------------------------------------------------------------- part 1: awkward shapes

struct Shape {
  int64_t m, n, k, batch;
  bool ta, tb, pad, bcast;
  double alpha, beta;
};

static bool g_tune = false; // --tune: part 1 checks mma_sync only (every configuration on more shapes); tune() times

static void part1() {
  printf("\n== correctness: every rung on awkward shapes (C poisoned with NaN; padding columns must survive)\n");
  const Shape shapes[] = {
      {1, 1, 1, 1, false, false, false, false, 1, 0},        {17, 33, 65, 1, false, false, false, false, 1, 0},
      {127, 129, 31, 1, false, false, false, false, 1, 0},   {128, 256, 64, 1, false, false, true, false, 1, 0},
      {300, 520, 200, 1, false, false, true, false, 1, 0},   {127, 129, 31, 1, false, false, true, false, 1, 0},
      {67, 45, 99, 1, true, false, false, false, 1, 0},      {67, 45, 99, 1, false, true, false, false, 1, 0},
      {96, 80, 72, 1, true, true, true, false, 1, 0},        {33, 70, 129, 3, false, false, false, false, 1, 0},
      {40, 72, 136, 3, false, false, true, true, 1, 0},      {65, 130, 70, 1, false, false, true, false, 0.5, -1.5},
      {20, 24, 0, 1, false, false, true, false, 1, 0},       {2100, 1100, 136, 1, false, false, true, false, 1, 0},
      {1000, 700, 1030, 2, false, false, true, false, 0.75, 0.25},
  };
  struct KC {
    Kind kind;
    int cdt;
  } kcs[] = {{K_BF16, CK_BF16}, {K_BF16, CK_F32}, {K_F16, CK_F16}, {K_F16, CK_F32}, {K_TF32, CK_F32}};
  uint32_t seed = 1;
  for (const KC &kc : kcs) {
    printf("-- %s in, %s out\n", kind_name(kc.kind), dt_name(kc.cdt));
    for (const Shape &s : shapes) {
      Problem P = make_problem(kc.kind, kc.cdt, s.m, s.n, s.k, s.batch, s.ta, s.tb, s.pad, s.bcast, s.alpha, s.beta,
                               seed += 7, true);
      char label[96];
      snprintf(label, sizeof label, "%lldx%lldx%lld b%lld%s%s%s%s a=%g b=%g", (long long)s.m, (long long)s.n,
               (long long)s.k, (long long)s.batch, s.ta ? " At" : "", s.tb ? " Bt" : "", s.pad ? " ld8" : "",
               s.bcast ? " Bbcast" : "", s.alpha, s.beta);
      for (const Rung &r : kRungs)
        if (!g_tune || !strcmp(r.name, "mma_sync")) run_check(r, -1, P, 4096, label);
      free_problem(P);
    }
    // every configuration on a tail-heavy shape with 16-byte rows (the fast path), and a 2-block-wide one
    const Shape cs[] = {{300, 520, 200, 1, false, false, true, false, 1, 0},
                        {257, 515, 1000, 2, false, false, true, false, 1, 0.5},
                        {400, 784, 104, 1, false, false, true, false, 1, 0},
                        {193, 257, 24, 1, false, false, true, false, -2, 0},
                        {585, 300, 360, 1, false, false, true, false, 1, 0}};
    for (int si = 0; si < (g_tune ? 5 : 2); ++si) {
      const Shape &s = cs[si];
      Problem P = make_problem(kc.kind, kc.cdt, s.m, s.n, s.k, s.batch, false, false, true, false, s.alpha, s.beta,
                               seed += 7, true);
      char label[96];
      snprintf(label, sizeof label, "%lldx%lldx%lld b%lld ld8 (forced cfg) b=%g", (long long)s.m, (long long)s.n,
               (long long)s.k, (long long)s.batch, s.beta);
      for (const Rung &r : kRungs) {
        if (g_tune && strcmp(r.name, "mma_sync")) continue;
        const int nc = kc.kind == K_TF32 ? r.ncfg_tf32 : r.ncfg_half;
        for (int c = 0; c < nc; ++c) run_check(r, c, P, 4096, label);
      }
      free_problem(P);
    }
    // mma_sync's stream-K tail forced on (CUKERN_MM_SK=1): every configuration (those with producer warps take
    // it) on shapes whose tiles split into many units' runs (k long against the tile count: 9 tiles of 79 k
    // tiles over 132 units), with a batch, alpha/beta and tails, and one with whole tiles before the tail
    // (306 tiles: 264 whole, 42 shared); 20000 sampled elements each (a unit's wrong partial spoils a tile).
    const Shape ks[] = {{300, 520, 5000, 1, false, false, true, false, 1, 0},
                        {1000, 700, 1030, 2, false, false, true, false, 0.75, 0.25},
                        {2100, 4400, 520, 1, false, false, true, false, 1, 0}};
    for (const Shape &s : ks) {
      Problem P = make_problem(kc.kind, kc.cdt, s.m, s.n, s.k, s.batch, false, false, true, false, s.alpha, s.beta,
                               seed += 7, true);
      char label[96];
      snprintf(label, sizeof label, "%lldx%lldx%lld b%lld ld8 stream-K a=%g b=%g", (long long)s.m, (long long)s.n,
               (long long)s.k, (long long)s.batch, s.alpha, s.beta);
      const Rung &r = kRungs[2];
      const int nc = kc.kind == K_TF32 ? r.ncfg_tf32 : r.ncfg_half;
      set_sk(1);
      for (int c = -1; c < (g_tune ? nc : 0); ++c) run_check(r, c, P, 20000, label);
      set_sk(-1);
      free_problem(P);
    }
  }
}

// ---------------------------------------------------------------- part 2: speed

struct Timing {
  std::string kind, rung;
  int64_t size;
  double ms, tflops, pct;
  bool ok;
};
static std::vector<Timing> g_times;

static double time_launch(const Rung &r, const ck_mm_desc &d, int reps) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i)
    if (r.launch(&d, &g_env) != 0) return -1;
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(e0, g_stream));
    r.launch(&d, &g_env);
    CK(cudaEventRecord(e1, g_stream));
    CK(cudaEventSynchronize(e1));
    float t;
    CK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

static bool g_quick = false;

static void part2() {
  printf("\n== speed: C = A B, contiguous, median of 10 after 3 warm-ups (each configuration also checked on 64 "
         "sampled elements)\n");
  const Kind kinds[] = {K_BF16, K_F16, K_TF32};
  const int64_t sizes[] = {4096, 8192};
  for (int64_t N : sizes)
    for (Kind kind : kinds) {
      const int cdt = kind == K_TF32 ? CK_F32 : in_dt(kind);
      Problem P = make_problem(kind, cdt, N, N, N, 1, false, false, false, false, 1, 0, 777 + (uint32_t)N, true);
      P.c_rs = N, P.c_bs = N * N; // contiguous C for the timing (no padding columns)
      const ck_mm_desc d0 = desc_of(P);
      const double flop = 2.0 * N * N * N;
      double base = 0;
      for (const Rung &r : kRungs) {
        const int nc = kind == K_TF32 ? r.ncfg_tf32 : r.ncfg_half;
        for (int c = -1; c < nc; ++c) {
          if (c >= 0 && g_quick && N < 8192) break; // --quick: forced configurations at 8192^3 only
          ck_mm_desc d = d0;
          if (r.supports && r.supports(&d)) break;
          char name[64];
          snprintf(name, sizeof name, c < 0 ? "%s" : "%s/c%d", r.name, c);
          set_cfg(c);
          reset_c(P);
          const double ms = time_launch(r, d, 10);
          cudaError_t e = cudaStreamSynchronize(g_stream);
          bool ok = ms > 0 && e == cudaSuccess;
          CheckResult R;
          if (ok) {
            std::vector<unsigned char> hc(P.c_elems * dt_size(cdt));
            CK(cudaMemcpy(hc.data(), P.dc, hc.size(), cudaMemcpyDeviceToHost));
            R = check(P, hc, 64, false); // C is contiguous here: no padding columns
            ok = R.bad == 0;
          }
          set_cfg(-1);
          if (e != cudaSuccess) {
            printf("  %s %lld %s: %s\n", kind_name(kind), (long long)N, name, cudaGetErrorString(e));
            exit(3);
          }
          const double tf = ms > 0 ? flop / (ms * 1e-3) / 1e12 : 0;
          if (!strcmp(r.name, "cublas")) base = tf;
          const double pct = base > 0 ? 100 * tf / base : 0;
          printf("  %-5s %5lld^3  %-12s %8.3f ms  %7.1f TFLOP/s  %6.1f%% of cuBLAS  %s\n", kind_name(kind),
                 (long long)N, name, ms, tf, pct, ok ? "ok" : "WRONG");
          if (!ok) printf("      %s\n", R.first), g_fail++;
          g_times.push_back({kind_name(kind), name, N, ms, tf, pct, ok});
          if (!r.ncfg_half && !r.ncfg_tf32) break;
        }
      }
      free_problem(P);
    }
  printf("\n== summary (TFLOP/s, %% of cuBLAS in the same dtype and run; default configuration, and the best "
         "forced one)\n");
  printf("  %-5s %6s  %10s  %-22s %-22s %-22s %-22s\n", "dtype", "size", "cublas", "wmma", "wmma best", "mma_sync",
         "mma_sync best");
  for (int64_t N : sizes)
    for (Kind kind : kinds) {
      const char *kn = kind_name(kind);
      double cub = 0;
      const Timing *def[2] = {nullptr, nullptr}, *best[2] = {nullptr, nullptr};
      for (const Timing &t : g_times) {
        if (t.kind != kn || t.size != N) continue;
        if (t.rung == "cublas") cub = t.tflops;
        for (int i = 0; i < 2; ++i) {
          const std::string rn = i == 0 ? "wmma" : "mma_sync";
          if (t.rung == rn) def[i] = &t;
          if (t.rung.compare(0, rn.size() + 1, rn + "/") == 0 && (!best[i] || t.tflops > best[i]->tflops)) best[i] = &t;
        }
      }
      char cell[4][40];
      for (int i = 0; i < 4; ++i) {
        const Timing *t = i == 0 ? def[0] : i == 1 ? best[0] : i == 2 ? def[1] : best[1];
        if (!t) snprintf(cell[i], 40, "-");
        else if (i % 2) snprintf(cell[i], 40, "%.1f (%.0f%%) %s", t->tflops, t->pct, t->rung.c_str() + t->rung.find('/') + 1);
        else snprintf(cell[i], 40, "%.1f (%.0f%%)", t->tflops, t->pct);
      }
      printf("  %-5s %5lld^3  %10.1f  %-22s %-22s %-22s %-22s\n", kn, (long long)N, cub, cell[0], cell[1], cell[2],
             cell[3]);
    }
}


/* --tune: mma_sync (every configuration at 8192^3, the default at 8192^3 and 4096^3) in bf16 and TF32, each
 * timed in alternating launches with cuBLAS (rung, cuBLAS, rung, ...: cuBLAS's rate drifts on a power-limited
 * GPU), 3 warm-up pairs then REPS pairs; reports the medians of both and the median of the per-pair ratios;
 * every timed configuration is checked on 64 sampled elements. */
static void tune(int reps) {
  printf("\n== tune: mma_sync vs cuBLAS in alternating launches, %d pairs after 3 warm-up pairs\n", reps);
  const Rung &cub = kRungs[0], &rung = kRungs[2];
  const Kind kinds[] = {K_BF16, K_TF32};
  // 8192^3 and 4096^3, and a product of 198 tiles of 128 x 256 (1.5 rounds on 132 SMs: the stream-K tail's case)
  const int64_t sizes[][3] = {{8192, 8192, 8192}, {4096, 4096, 4096}, {1408, 4608, 8192}};
  cudaEvent_t ev[4];
  for (auto &e : ev) CK(cudaEventCreate(&e));
  std::vector<std::string> summary;
  for (const auto &sz : sizes)
    for (Kind kind : kinds) {
      const int64_t N = sz[0], NN = sz[1], NK = sz[2];
      char szs[48];
      if (N == NN && N == NK) snprintf(szs, sizeof szs, "%5lld^3", (long long)N);
      else snprintf(szs, sizeof szs, "%lldx%lldx%lld", (long long)N, (long long)NN, (long long)NK);
      const int cdt = kind == K_TF32 ? CK_F32 : in_dt(kind);
      Problem P = make_problem(kind, cdt, N, NN, NK, 1, false, false, false, false, 1, 0, 777 + (uint32_t)N, true);
      P.c_rs = NN, P.c_bs = N * NN;
      const ck_mm_desc d = desc_of(P);
      const double flop = 2.0 * N * NN * NK;
      const int nc = kind == K_TF32 ? rung.ncfg_tf32 : rung.ncfg_half;
      // the default, with its stream-K tail off (sk0) and forced (sk1), then every configuration at 8192^3
      std::vector<std::pair<int, int>> runs = {{-1, -1}, {-1, 0}, {-1, 1}};
      for (int c = 0; c < (N == 8192 && NN == 8192 ? nc : 0); ++c) runs.push_back({c, -1});
      for (auto [c, skm] : runs) {
        char name[32];
        if (c < 0) snprintf(name, sizeof name, skm < 0 ? "def" : "sk%d", skm);
        else snprintf(name, sizeof name, "c%d", c);
        set_sk(skm);
        std::vector<float> tr, tc, ratio;
        bool ok = true;
        for (int i = 0; i < reps + 3 && ok; ++i) {
          set_cfg(c);
          CK(cudaEventRecord(ev[0], g_stream));
          ok = rung.launch(&d, &g_env) == 0;
          CK(cudaEventRecord(ev[1], g_stream));
          set_cfg(-1);
          ok = ok && cub.launch(&d, &g_env) == 0;
          CK(cudaEventRecord(ev[2], g_stream));
          CK(cudaEventSynchronize(ev[2]));
          float a, b;
          CK(cudaEventElapsedTime(&a, ev[0], ev[1]));
          CK(cudaEventElapsedTime(&b, ev[1], ev[2]));
          if (i >= 3) tr.push_back(a), tc.push_back(b), ratio.push_back(b / a);
        }
        set_cfg(-1);
        cudaError_t e = cudaStreamSynchronize(g_stream);
        if (e != cudaSuccess) printf("  %s %s %s: %s\n", kind_name(kind), szs, name, cudaGetErrorString(e)), exit(3);
        // the last launch wrote cuBLAS's C: run the configuration once more, then check it
        CheckResult R;
        if (ok) {
          reset_c(P);
          set_cfg(c);
          ok = rung.launch(&d, &g_env) == 0;
          set_cfg(-1);
          CK(cudaStreamSynchronize(g_stream));
          std::vector<unsigned char> hc(P.c_elems * dt_size(cdt));
          CK(cudaMemcpy(hc.data(), P.dc, hc.size(), cudaMemcpyDeviceToHost));
          R = check(P, hc, 64, false);
          ok = ok && R.bad == 0;
        }
        if (!ok) {
          printf("  %-5s %s mma_sync/%-4s FAILED %s\n", kind_name(kind), szs, name, R.first);
          g_fail++;
          char line[160];
          snprintf(line, sizeof line, "%-5s %s %-4s FAILED", kind_name(kind), szs, name);
          summary.push_back(line);
          continue;
        }
        set_sk(-1);
        auto med = [](std::vector<float> v) { std::sort(v.begin(), v.end()); return (double)v[v.size() / 2]; };
        const double mr = med(tr), mc = med(tc), rr = med(ratio);
        const double tfr = flop / (mr * 1e-3) / 1e12, tfc = flop / (mc * 1e-3) / 1e12;
        printf("  %-5s %s mma_sync/%-4s %7.3f ms %6.1f TFLOP/s | cuBLAS %7.3f ms %6.1f TFLOP/s (min %.1f max %.1f)"
               " | %5.1f%% of cuBLAS (median of pair ratios; ratio of medians %.1f%%) ok\n",
               kind_name(kind), szs, name, mr, tfr, mc, tfc, flop / (*std::max_element(tc.begin(), tc.end()) * 1e-3) / 1e12,
               flop / (*std::min_element(tc.begin(), tc.end()) * 1e-3) / 1e12, 100 * rr, 100 * mc / mr);
        char line[160];
        snprintf(line, sizeof line, "%-5s %s %-4s %6.1f TFLOP/s %5.1f%% of cuBLAS (%.0f)", kind_name(kind),
                 szs, name, tfr, 100 * rr, tfc);
        summary.push_back(line);
      }
      free_problem(P);
    }
  for (auto &e : ev) cudaEventDestroy(e);
  printf("\n== tune summary (median of %d alternating pairs; cuBLAS median in parentheses)\n", reps);
  for (const std::string &l : summary) printf("  %s\n", l.c_str());
}

/* --prof KIND N RUNG CFG: REPS launches of one rung (configuration CFG, -1: its default) on C = A B, N^3, for a
 * profiler (ncu --launch-skip 1 --launch-count 1); checks the result on 64 sampled elements. */
static int prof(int argc, char **argv) {
  if (argc < 6) return fprintf(stderr, "usage: tc_check --prof bf16|f16|tf32 N RUNG CFG [REPS]\n"), 2;
  const Kind kind = !strcmp(argv[2], "tf32") ? K_TF32 : !strcmp(argv[2], "f16") ? K_F16 : K_BF16;
  const int64_t N = atoll(argv[3]);
  const int cfg = atoi(argv[5]), reps = argc > 6 ? atoi(argv[6]) : 3;
  const Rung *r = nullptr;
  for (const Rung &x : kRungs)
    if (!strcmp(x.name, argv[4])) r = &x;
  if (!r) return fprintf(stderr, "no rung %s\n", argv[4]), 2;
  const int cdt = kind == K_TF32 ? CK_F32 : in_dt(kind);
  Problem P = make_problem(kind, cdt, N, N, N, 1, false, false, false, false, 1, 0, 777 + (uint32_t)N, true);
  P.c_rs = N, P.c_bs = N * N;
  const ck_mm_desc d = desc_of(P);
  if (r->supports && r->supports(&d)) return fprintf(stderr, "%s refuses: %s\n", r->name, r->supports(&d)), 2;
  set_cfg(cfg);
  for (int i = 0; i < reps; ++i)
    if (r->launch(&d, &g_env) != 0) return fprintf(stderr, "launch failed\n"), 3;
  CK(cudaStreamSynchronize(g_stream));
  std::vector<unsigned char> hc(P.c_elems * dt_size(cdt));
  CK(cudaMemcpy(hc.data(), P.dc, hc.size(), cudaMemcpyDeviceToHost));
  const CheckResult R = check(P, hc, 64, false);
  printf("prof %s %lld^3 %s cfg %d: %d launches, %s\n", kind_name(kind), (long long)N, r->name, cfg, reps,
         R.bad ? R.first : "ok");
  free_problem(P);
  return R.bad ? 1 : 0;
}

int main(int argc, char **argv) {
  env_init();
  if (argc > 1 && !strcmp(argv[1], "--prof")) return prof(argc, argv);
  const bool speed_only = argc > 1 && !strcmp(argv[1], "--speed"), check_only = argc > 1 && !strcmp(argv[1], "--check");
  for (int i = 1; i < argc; ++i) g_quick = g_quick || !strcmp(argv[i], "--quick");
  for (int i = 1; i < argc; ++i) g_tune = g_tune || !strcmp(argv[i], "--tune");
  if (!speed_only) part1();
  if (g_tune) {
    if (!check_only) tune(15);
  } else if (!check_only) {
    part2();
  }
  printf("\n%d checks passed, %d failed, %d refused\n", g_pass, g_fail, g_refused);
  return g_fail ? 1 : 0;
}
