/*
 * wmma_bf16.cu — experiment (lab/mmapeak.sh part 2): WMMA formulations of rung 10 in bf16.
 *
 * Why bf16 WMMA is slow: nvcc 13.0's front end emits wmma.load.{a,b}...bf16 with a GENERIC address (f16 gets
 * wmma.load...shared.f16: see the PTX of 10_wmma.cu), and ptxas then lowers the bf16 loads to LDS + MOVM
 * (register transposes for row-major B) instead of LDSM / LDSM.T. No source form found changes that (tried in
 * PTX: __builtin_assume(__isShared(p)), a static __shared__ array, col_major B, m32n8k16: all stay generic).
 * Candidates, all the rung's kernel (same configuration W3: 128 x 128 x 64, 4 warps of 64 x 64, 3 stages,
 * same copies, guards and epilogue) with another fragment load:
 *   rung   the rung itself (ck_matmul_wmma, default configuration);
 *   colB   B column-major in memory (b_rs == 1, a transposed view): B staged n-major ([BN][BK+8], cp.async
 *          along k) and loaded as col_major matrix_b fragments: no transpose is needed, so no MOVM (LDS only);
 *          documented API, any m, n, k; only for that operand layout (timed against cuBLAS on the same one);
 *   hB     UNDOCUMENTED LAYOUT: B loaded as an f16 fragment (load_matrix_sync on the same bits as __half:
 *          LDSM.T), its elements copied bit for bit into a bf16 fragment (element i of the bf16 fragment =
 *          element kPermB[i] of the f16 one); relies on both fragments mapping lanes/elements alike;
 *   hAB    UNDOCUMENTED LAYOUT: the same for A (LDSM) and B.
 * The "calib" line prints, per fragment kind, the f16 element index holding the (row, col) of each bf16
 * element if one index works for all 32 lanes ("perm A: ..."), or "inconsistent".
 * Each candidate is validated (sampled elements vs a host f64 reference, plus one awkward shape 1000 x 1100 x
 * 1030 in full) before it is timed (median of 10 after 3 warm-ups, % of cuBLAS bf16 in the same run).
 */
#include <cublas_v2.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "10_wmma.cu" // the rung: Cfg, W3, k_loop, StageCopy, ... (one translation unit)

namespace {

// f16 fragment element -> bf16 fragment element (UNDOCUMENTED LAYOUT; the calib line says what is true)
__device__ constexpr int kPermA[8] = {0, 1, 2, 3, 4, 5, 6, 7};
__device__ constexpr int kPermB[8] = {0, 1, 2, 3, 4, 5, 6, 7};

enum { M_COLB = 1, M_HB = 2, M_HAB = 3, M_PTX = 4 };

/* PTX wmma.load with the .shared state space (documented PTX, same instruction the builtin emits but with the
 * address space given: nvcc 13.0's bf16 builtin emits a generic-address wmma.load). */
template <class F> __device__ __forceinline__ void wmma_ld_a_shared(F &f, uint32_t addr, unsigned ldm) {
  uint32_t *r = reinterpret_cast<uint32_t *>(&f.x[0]);
  asm volatile("wmma.load.a.sync.aligned.row.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr), "r"(ldm));
}
template <class F> __device__ __forceinline__ void wmma_ld_b_shared(F &f, uint32_t addr, unsigned ldm) {
  uint32_t *r = reinterpret_cast<uint32_t *>(&f.x[0]);
  asm volatile("wmma.load.b.sync.aligned.row.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr), "r"(ldm));
}

template <class C, int MODE> struct VFrags {
  using BL = typename std::conditional<MODE == M_COLB, wmma::col_major, wmma::row_major>::type;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a[C::FM];
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, BL> b[C::FN];
};

template <class FB, class FH> __device__ __forceinline__ void half_to_bf16(FB &dst, const FH &src, const int (&perm)[8]) {
#pragma unroll
  for (int i = 0; i < 8; ++i) dst.x[i] = __ushort_as_bfloat16(__half_as_ushort(src.x[perm[i]]));
}

template <class C, int MODE>
__global__ void __launch_bounds__(C::NT, C::MINB) wmma_var_kernel(const TcArgs p, int64_t y0, int64_t z0) {
  using T = __nv_bfloat16;
  constexpr int LDBT = C::BK + 8;                                                   // colB: B^T rows, padded
  constexpr int B_ST = MODE == M_COLB ? tile_bytes<C::ACH, SW_PAD>(C::BN) : C::B_ST; // colB: [BN][BK+8]
  extern __shared__ __align__(128) unsigned char smem[];
  T *const As = reinterpret_cast<T *>(smem);
  T *const Bs = reinterpret_cast<T *>(smem + C::STAGES * C::A_ST);
  const uint32_t sA = smem_u32(As), sB = smem_u32(Bs);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;
  const BlockTile<T> bt = block_tile<T, C::BM, C::BN, C::BK, C::GROUP>(p, y0, z0);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[C::FM][C::FN];
#pragma unroll
  for (int i = 0; i < C::FM; ++i)
#pragma unroll
    for (int j = 0; j < C::FN; ++j) wmma::fill_fragment(acc[i][j], 0.f);

  const StageCopy<T, C::BM, C::BN, C::BK, SW_PAD, SW_PAD, C::NT> copier(p, bt, tid);
  const TileCopy<T, C::BN, C::ACH, SW_PAD, C::NT> bcopy(bt.B, p.b_cs, tid); // colB: B^T tile, rows n, k contiguous
  const int kfull = bt.mrem == C::BM && bt.nrem == C::BN ? (int)(p.k / C::BK) : 0;
  auto issue = [&](int kt, int st) {
    if constexpr (MODE != M_COLB) {
      copier.issue(p, bt, kt, sA + st * C::A_ST, sB + st * C::B_ST);
    } else {
      const int64_t off = (int64_t)kt * (C::BK * (int)sizeof(T));
      if (kt < kfull) {
        copier.a.copy(sA + st * C::A_ST, off);
        bcopy.copy(sB + st * B_ST, off);
      } else {
        const int64_t k0 = (int64_t)kt * C::BK;
        const int krem = (int)(p.k - k0 < C::BK ? p.k - k0 : C::BK);
        copier.a.copy_edge(sA + st * C::A_ST, off, bt.A + k0, bt.mrem, krem);
        bcopy.copy_edge(sB + st * B_ST, off, bt.B + k0, bt.nrem, krem);
      }
    }
  };
  auto load = [&](VFrags<C, MODE> &f, int stage, int ks) {
    const T *as = As + stage * (C::A_ST / 2) + (wm * C::WM) * C::LDA + ks * 16;
#pragma unroll
    for (int i = 0; i < C::FM; ++i) {
      if constexpr (MODE == M_PTX) {
        wmma_ld_a_shared(f.a[i], smem_u32(as + i * 16 * C::LDA), C::LDA);
      } else if constexpr (MODE == M_HAB) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> h;
        wmma::load_matrix_sync(h, reinterpret_cast<const __half *>(as + i * 16 * C::LDA), C::LDA);
        half_to_bf16(f.a[i], h, kPermA);
      } else {
        wmma::load_matrix_sync(f.a[i], as + i * 16 * C::LDA, C::LDA);
      }
    }
    if constexpr (MODE == M_PTX) {
      const T *bs = Bs + stage * (C::B_ST / 2) + ks * 16 * C::LDB + wn * C::WN;
#pragma unroll
      for (int j = 0; j < C::FN; ++j) wmma_ld_b_shared(f.b[j], smem_u32(bs + j * 16), C::LDB);
    } else if constexpr (MODE == M_COLB) {
      const T *bs = Bs + stage * (B_ST / 2) + (wn * C::WN) * LDBT + ks * 16;
#pragma unroll
      for (int j = 0; j < C::FN; ++j) wmma::load_matrix_sync(f.b[j], bs + j * 16 * LDBT, LDBT);
    } else {
      const T *bs = Bs + stage * (C::B_ST / 2) + ks * 16 * C::LDB + wn * C::WN;
#pragma unroll
      for (int j = 0; j < C::FN; ++j) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> h;
        wmma::load_matrix_sync(h, reinterpret_cast<const __half *>(bs + j * 16), C::LDB);
        half_to_bf16(f.b[j], h, kPermB);
      }
    }
  };
  auto mma = [&](const VFrags<C, MODE> &f) {
#pragma unroll
    for (int i = 0; i < C::FM; ++i)
#pragma unroll
      for (int j = 0; j < C::FN; ++j) wmma::mma_sync(acc[i][j], f.a[i], f.b[j], acc[i][j]);
  };
  k_loop<C::STAGES, 0, C::BK / 16, VFrags<C, MODE>>(bt.ktiles, issue, load, mma);
  __syncthreads();

  float *const scratch = reinterpret_cast<float *>(smem) + warp * 256;
  void *cb = c_base(p, bt.z, bt.m0, bt.n0);
  const int sr = lane >> 1, sc = (lane & 1) * 8;
#pragma unroll
  for (int i = 0; i < C::FM; ++i)
#pragma unroll
    for (int j = 0; j < C::FN; ++j) {
      wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const int r = wm * C::WM + i * 16 + sr, c = wn * C::WN + j * 16 + sc;
      const float4 v0 = *reinterpret_cast<const float4 *>(scratch + sr * 16 + sc);
      const float4 v1 = *reinterpret_cast<const float4 *>(scratch + sr * 16 + sc + 4);
      store_pair(p, cb, r, c, bt.mrem, bt.nrem, v0.x, v0.y);
      store_pair(p, cb, r, c + 2, bt.mrem, bt.nrem, v0.z, v0.w);
      store_pair(p, cb, r, c + 4, bt.mrem, bt.nrem, v1.x, v1.y);
      store_pair(p, cb, r, c + 6, bt.mrem, bt.nrem, v1.z, v1.w);
      __syncwarp();
    }
}

template <int MODE> int launch_var(const ck_mm_desc *d, const ck_env *env) {
  using C = W3;
  constexpr int SMEM = MODE == M_COLB ? C::STAGES * (C::A_ST + tile_bytes<C::ACH, SW_PAD>(C::BN)) : C::SMEM;
  static bool raised;
  return launch_tiles<C::BM, C::BN, C::NT, SMEM>(d, env, wmma_var_kernel<C, MODE>, raised);
}

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

static float bf2f(uint16_t v) {
  uint32_t u = (uint32_t)v << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint16_t f2bf(float f) { // round to nearest even
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
  int m, n, k;
  bool colB;
  uint16_t *A, *B, *C; // device
  std::vector<uint16_t> hA, hB;
};

static Mat make(int m, int n, int k, bool colB) {
  Mat x{m, n, k, colB, nullptr, nullptr, nullptr, {}, {}};
  x.hA.resize((size_t)m * k), x.hB.resize((size_t)k * n);
  uint32_t s = 2024u + m + n + k;
  auto rnd = [&]() {
    s = s * 1664525u + 1013904223u;
    return ((float)(s >> 8) / 16777216.f - 0.5f) * 2.f;
  };
  for (auto &v : x.hA) v = f2bf(rnd());
  for (auto &v : x.hB) v = f2bf(rnd()); // B element (p, j) at colB ? j * k + p : p * n + j
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
  d.dtype = CK_BF16, d.c_dtype = CK_BF16, d.precision = CK_MM_EXACT;
  d.batch = 1, d.m = x.m, d.n = x.n, d.k = x.k;
  d.a = x.A, d.a_rs = x.k, d.a_cs = 1;
  d.b = x.B;
  if (x.colB) d.b_rs = 1, d.b_cs = x.k;
  else d.b_rs = x.n, d.b_cs = 1;
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
      const double a = bf2f(x.hA[(size_t)i * x.k + p]);
      const double b = bf2f(x.colB ? x.hB[(size_t)j * x.k + p] : x.hB[(size_t)p * x.n + j]);
      ref += a * b, mag += fabs(a * b);
    }
    const double err = fabs(bf2f(c[idx]) - ref) / (mag + 1e-3);
    worst = std::max(worst, err);
  }
  return worst;
}

static ck_env g_env;
typedef int (*LaunchFn)(const ck_mm_desc *, const ck_env *);
static int rung_fn(const ck_mm_desc *d, const ck_env *e) { return ck_matmul_wmma(d, e); }

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
  printf("# wmma_bf16 on %s\n", prop.name);
  calib<wmma::matrix_a, wmma::row_major>("A row_major");
  calib<wmma::matrix_b, wmma::row_major>("B row_major");

  struct Cand {
    const char *name;
    LaunchFn fn;
    bool colB;
  };
  const Cand cands[] = {{"rung", rung_fn, false},
                        {"colB", launch_var<M_COLB>, true},
                        {"hB(undoc)", launch_var<M_HB>, false},
                        {"hAB(undoc)", launch_var<M_HAB>, false},
                        {"ptx.shared", launch_var<M_PTX>, false}};
  constexpr int kNC = (int)(sizeof cands / sizeof cands[0]);
  bool ok[kNC];
  for (int c = 0; c < kNC; ++c) { // validation: an awkward shape in full, a square one sampled
    Mat x = make(1000, 1100, 1030, cands[c].colB);
    ck_mm_desc d = desc_of(x);
    CK(cudaMemset(x.C, 0xff, (size_t)x.m * x.n * 2));
    int e = cands[c].fn(&d, &g_env);
    CK(cudaDeviceSynchronize());
    const double e1 = e ? 1e9 : check(x, 0);
    drop(x);
    Mat y = make(2048, 2048, 2048, cands[c].colB);
    d = desc_of(y);
    e |= cands[c].fn(&d, &g_env);
    CK(cudaDeviceSynchronize());
    const double e2 = e ? 1e9 : check(y, 4096);
    drop(y);
    ok[c] = e == 0 && e1 < 1e-2 && e2 < 1e-2;
    printf("check %-11s 1000x1100x1030 max rel err %.2e, 2048^3 sampled %.2e: %s\n", cands[c].name, e1, e2, ok[c] ? "ok" : "FAILED");
  }
  const float alpha = 1.f, beta = 0.f;
  for (int n : {4096, 8192}) {
    double cub[2] = {0, 0};
    for (int cb = 0; cb < 2; ++cb) { // cuBLAS: row-major B and column-major B (colB's operand layout)
      Mat x = make(n, n, n, cb == 1);
      // row-major C = A B is column-major C^T = B^T A^T
      cub[cb] = time_it([&] {
        cublasGemmEx(h, cb ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, x.B, CUDA_R_16BF, cb ? n : n, x.A, CUDA_R_16BF, n,
                     &beta, x.C, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      }, n);
      drop(x);
    }
    printf("speed %d^3 cublas bf16 %.1f TFLOP/s (B row-major), %.1f (B column-major)\n", n, cub[0], cub[1]);
    for (int c = 0; c < kNC; ++c) {
      if (!ok[c]) {
        printf("speed %d^3 %-11s FAILED validation: not timed\n", n, cands[c].name);
        continue;
      }
      Mat x = make(n, n, n, cands[c].colB);
      ck_mm_desc d = desc_of(x);
      const double tf = time_it([&] { cands[c].fn(&d, &g_env); }, n);
      const double err = check(x, 256);
      const double ref = cands[c].colB ? cub[1] : cub[0];
      printf("speed %d^3 %-11s %7.1f TFLOP/s = %5.1f%% of cuBLAS bf16%s (sampled rel err %.1e%s)\n", n, cands[c].name, tf,
             100 * tf / ref, cands[c].colB ? " (B col-major)" : "", err, err < 1e-2 ? "" : " WRONG");
      drop(x);
    }
  }
  cublasDestroy(h);
  return 0;
}
