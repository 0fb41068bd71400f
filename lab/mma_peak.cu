/*
 * mma_peak.cu — measured ceilings of the warp-level tensor-core instructions on this GPU (track `mmapeak`,
 * run by lab/mmapeak.sh), beside cuBLAS at 8192^3 in the same run.
 *
 * Register-only loops: each warp holds its A and B operands in registers and issues CH independent
 * accumulator chains of one instruction kind, ITERS times; nothing touches memory inside the timed loop, the
 * accumulators are summed and written once at the end (so nothing is dead). Kinds:
 *   bf16  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32   4096 flop per instruction
 *   f16   mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32     4096
 *   tf32  mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32    2048
 *   wmma_bf16 / wmma_f16  nvcuda::wmma::mma_sync m16n16k16, f32 accumulators (8192 flop = 2 HMMA.16816)
 * and operand-load variants (ldsm_*): a warp tile of FM x FN16 16x16 blocks, per k step FM + FN16
 * ldmatrix.x4 from shared memory (conflict-free addresses) into double-buffered registers, then 2 FM FN16
 * mma.sync; this is the k loop of rung 11 without the global->shared copies and barriers.
 * One block per SM (the block asks for 150 KB of dynamic shared memory, so two never fit), W warps per block.
 * Per configuration: TFLOP/s from CUDA events (median of 5 after 1 warm-up), flop/clk/SM from clock64()
 * deltas inside the kernel (per SM: the block's flop / its cycles; median over SMs), the cycles per
 * instruction per SM sub-partition (4 per SM: cycles * 4 / instructions issued on the SM; for wmma counted
 * per HMMA.16816, two per mma_sync) and the SM clock (cycles / event time).
 * Validation: one instruction per kind on a single fragment product against a host reference (inputs small
 * multiples of 1/8, exact in every format, so the comparison is exact up to f32 summation order).
 * cuBLAS: cublasGemmEx 8192^3, bf16 and f16 in/out with CUBLAS_COMPUTE_32F, f32 in/out with
 * CUBLAS_COMPUTE_32F_FAST_TF32; 3 warm-ups, median of 12.
 * Spec per-clock peaks quoted for reference (H100 SXM, dense): f16/bf16 4096 flop/clk/SM, tf32 2048
 * (989.4 / 494.7 TFLOP/s at 1830 MHz with 132 SMs).
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

namespace wmma = nvcuda::wmma;

#define CK(x)                                                                                                  \
  do {                                                                                                         \
    cudaError_t e_ = (x);                                                                                      \
    if (e_ != cudaSuccess) {                                                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                     \
      exit(1);                                                                                                 \
    }                                                                                                          \
  } while (0)

static const int kSmem = 150 * 1024; // > half an SM's shared memory: one block per SM

// ---------------------------------------------------------------- instructions

struct OpBF16 {
  static constexpr double FLOP = 2.0 * 16 * 8 * 16;
  static constexpr int KS = 16; // k per instruction
  static const char *name() { return "bf16 mma.sync m16n8k16"; }
  __device__ static __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};
struct OpF16 {
  static constexpr double FLOP = 2.0 * 16 * 8 * 16;
  static constexpr int KS = 16;
  static const char *name() { return "f16 mma.sync m16n8k16"; }
  __device__ static __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};
struct OpTF32 {
  static constexpr double FLOP = 2.0 * 16 * 8 * 8;
  static constexpr int KS = 8;
  static const char *name() { return "tf32 mma.sync m16n8k8"; }
  __device__ static __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ uint32_t smid() {
  uint32_t s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// ---------------------------------------------------------------- throughput kernels

// clk[3 * block] = start, end, smid
__device__ __forceinline__ void record(long long *clk, long long t0, long long t1) {
  if (threadIdx.x == 0) {
    clk[3 * blockIdx.x] = t0;
    clk[3 * blockIdx.x + 1] = t1;
    clk[3 * blockIdx.x + 2] = smid();
  }
}

template <class Op, int CH>
__global__ void __launch_bounds__(1024) peak_kernel(const uint32_t *seed, float *out, long long *clk, int iters) {
  uint32_t a[4], b0, b1;
  const int t = threadIdx.x;
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = seed[(t * 7 + i) & 255];
  b0 = seed[(t * 5 + 1) & 255], b1 = seed[(t * 3 + 2) & 255];
  float d[CH][4];
#pragma unroll
  for (int c = 0; c < CH; ++c)
#pragma unroll
    for (int i = 0; i < 4; ++i) d[c][i] = 0.f;
  __syncthreads();
  const long long t0 = clock64();
#pragma unroll 4
  for (int it = 0; it < iters; ++it)
#pragma unroll
    for (int c = 0; c < CH; ++c) Op::mma(d[c], a, b0, b1);
  __syncthreads();
  const long long t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < CH; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  out[blockIdx.x * blockDim.x + t] = s;
  record(clk, t0, t1);
}

template <typename T> __device__ __forceinline__ T from_bits(uint32_t v);
template <> __device__ __forceinline__ __half from_bits<__half>(uint32_t v) { return __ushort_as_half((unsigned short)v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_bits<__nv_bfloat16>(uint32_t v) {
  return __ushort_as_bfloat16((unsigned short)v);
}

template <typename T, int CH>
__global__ void __launch_bounds__(1024) wmma_peak_kernel(const uint32_t *seed, float *out, long long *clk, int iters) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[CH];
  const int t = threadIdx.x;
  for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = from_bits<T>(seed[(t * 7 + i) & 255] & 0xffff);
  for (int i = 0; i < fb.num_elements; ++i) fb.x[i] = from_bits<T>(seed[(t * 5 + i) & 255] >> 16);
#pragma unroll
  for (int c = 0; c < CH; ++c) wmma::fill_fragment(acc[c], 0.f);
  __syncthreads();
  const long long t0 = clock64();
#pragma unroll 4
  for (int it = 0; it < iters; ++it)
#pragma unroll
    for (int c = 0; c < CH; ++c) wmma::mma_sync(acc[c], fa, fb, acc[c]);
  __syncthreads();
  const long long t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < CH; ++c)
    for (int i = 0; i < acc[c].num_elements; ++i) s += acc[c].x[i];
  out[blockIdx.x * blockDim.x + t] = s;
  record(clk, t0, t1);
}

/* Operand loads every k step: a warp tile of FM x FN16 16x16 blocks (in units of the instruction's k:
 * 16 for f16/bf16, 8 for tf32, where one ldmatrix.x4 of 32-bit data is the tf32 16x8 A fragment or two 8x8 B
 * fragments stored n-major). Per step FM + FN16 ldmatrix.x4 (lane l reads 16 bytes at l*16 of a 512-byte
 * block: no bank conflicts), 2 FM FN16 mma.sync; registers double-buffered (loads of step s+1 before the mma
 * of step s), as a real k loop does. */
template <class Op, int FM, int FN, int MAXT>
__global__ void __launch_bounds__(MAXT) ldsm_peak_kernel(const uint32_t *seed, float *out, long long *clk, int iters) {
  extern __shared__ __align__(128) uint32_t sm[];
  const int t = threadIdx.x, lane = t & 31;
  for (int i = t; i < 2 * 8 * 8 * 128; i += blockDim.x) sm[i] = seed[i & 255]; // 64 KB: A at 0, B at 32 KB
  __syncthreads();
  const uint32_t base = (uint32_t)__cvta_generic_to_shared(sm) + lane * 16;
  float d[FM][2 * FN][4];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < 2 * FN; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) d[i][j][q] = 0.f;
  uint32_t fa[2][FM][4], fb[2][FN][4];
  auto load = [&](int buf, int step) {
    const uint32_t off = (uint32_t)(step & 7) * (8 * 512);
#pragma unroll
    for (int i = 0; i < FM; ++i) ldsm_x4(fa[buf][i], base + off + i * 512);
#pragma unroll
    for (int j = 0; j < FN; ++j) ldsm_x4(fb[buf][j], base + 32768 + off + j * 512);
  };
  auto mma = [&](int buf) {
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
      for (int j = 0; j < FN; ++j) {
        Op::mma(d[i][2 * j], fa[buf][i], fb[buf][j][0], fb[buf][j][1]);
        Op::mma(d[i][2 * j + 1], fa[buf][i], fb[buf][j][2], fb[buf][j][3]);
      }
  };
  __syncthreads();
  const long long t0 = clock64();
  load(0, 0);
  for (int it = 0; it < iters; it += 2) {
    load(1, it + 1);
    mma(0);
    load(0, it + 2);
    mma(1);
  }
  __syncthreads();
  const long long t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < 2 * FN; ++j) s += d[i][j][0] + d[i][j][1] + d[i][j][2] + d[i][j][3];
  out[blockIdx.x * blockDim.x + t] = s;
  record(clk, t0, t1);
}

// ---------------------------------------------------------------- validation kernels (one warp)

/* A [16 x K] row-major, B [K x 8] row-major (K = Op::KS), D [16 x 8] row-major, element indices as floats
 * (converted here), per the PTX ISA fragment layouts (g = lane / 4, t = lane % 4). */
template <typename T> __device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <> __device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi) {
  return (uint32_t)__half_as_ushort(__float2half(lo)) | ((uint32_t)__half_as_ushort(__float2half(hi)) << 16);
}
template <> __device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  return (uint32_t)__bfloat16_as_ushort(__float2bfloat16(lo)) | ((uint32_t)__bfloat16_as_ushort(__float2bfloat16(hi)) << 16);
}

template <class Op, typename T> __global__ void check16_kernel(const float *A, const float *B, float *D) {
  const int l = threadIdx.x, g = l >> 2, t = l & 3;
  uint32_t a[4];
  a[0] = pack2<T>(A[g * 16 + 2 * t], A[g * 16 + 2 * t + 1]);
  a[1] = pack2<T>(A[(g + 8) * 16 + 2 * t], A[(g + 8) * 16 + 2 * t + 1]);
  a[2] = pack2<T>(A[g * 16 + 2 * t + 8], A[g * 16 + 2 * t + 9]);
  a[3] = pack2<T>(A[(g + 8) * 16 + 2 * t + 8], A[(g + 8) * 16 + 2 * t + 9]);
  const uint32_t b0 = pack2<T>(B[(2 * t) * 8 + g], B[(2 * t + 1) * 8 + g]);
  const uint32_t b1 = pack2<T>(B[(2 * t + 8) * 8 + g], B[(2 * t + 9) * 8 + g]);
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  Op::mma(d, a, b0, b1);
  D[g * 8 + 2 * t] = d[0], D[g * 8 + 2 * t + 1] = d[1], D[(g + 8) * 8 + 2 * t] = d[2], D[(g + 8) * 8 + 2 * t + 1] = d[3];
}

__global__ void check_tf32_kernel(const float *A, const float *B, float *D) {
  const int l = threadIdx.x, g = l >> 2, t = l & 3;
  uint32_t a[4];
  a[0] = __float_as_uint(A[g * 8 + t]), a[1] = __float_as_uint(A[(g + 8) * 8 + t]);
  a[2] = __float_as_uint(A[g * 8 + t + 4]), a[3] = __float_as_uint(A[(g + 8) * 8 + t + 4]);
  const uint32_t b0 = __float_as_uint(B[t * 8 + g]), b1 = __float_as_uint(B[(t + 4) * 8 + g]);
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  OpTF32::mma(d, a, b0, b1);
  D[g * 8 + 2 * t] = d[0], D[g * 8 + 2 * t + 1] = d[1], D[(g + 8) * 8 + 2 * t] = d[2], D[(g + 8) * 8 + 2 * t + 1] = d[3];
}

/* wmma: A [16 x 16] row-major, B [16 x 16] col-major (element (k, n) at n * 16 + k), D [16 x 16] row-major. */
template <typename T> __global__ void check_wmma_kernel(const T *A, const T *B, float *D) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.f);
  wmma::load_matrix_sync(fa, A, 16);
  wmma::load_matrix_sync(fb, B, 16);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(D, acc, 16, wmma::mem_row_major);
}

// ---------------------------------------------------------------- host

static int g_sms;
static uint32_t *g_seed;
static float *g_out;
static long long *g_clk;


static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  fflush(stdout);
}

struct Res {
  double tflops, fpc, cpi, mhz;
};

/* insts_per_warp_iter: hardware mma instructions per warp per loop iteration (for cycles per instruction). */
static Res run_cfg(void (*kern)(const uint32_t *, float *, long long *, int), int warps, int iters, double flop_per_warp,
                   double insts_per_warp) {
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ts;
  for (int r = 0; r < 6; ++r) {
    CK(cudaEventRecord(e0));
    kern<<<g_sms, warps * 32, kSmem>>>(g_seed, g_out, g_clk, iters);
    CK(cudaEventRecord(e1));
    CK(cudaGetLastError());
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r > 0) ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  const double ms = ts[ts.size() / 2];
  std::vector<long long> clk(3 * g_sms);
  CK(cudaMemcpy(clk.data(), g_clk, clk.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  std::vector<double> cyc(g_sms);
  std::vector<int> seen(4096, 0);
  int dup = 0;
  for (int b = 0; b < g_sms; ++b) {
    cyc[b] = (double)(clk[3 * b + 1] - clk[3 * b]);
    const int s = (int)clk[3 * b + 2];
    if (s >= 0 && s < 4096 && seen[s]++) dup++;
  }
  if (dup) say("  (warning: %d blocks shared an SM)\n", dup);
  std::sort(cyc.begin(), cyc.end());
  const double c = cyc[g_sms / 2];
  const double flop_sm = flop_per_warp * warps;
  Res r;
  r.tflops = flop_sm * g_sms / (ms * 1e-3) / 1e12;
  r.fpc = flop_sm / c;
  r.cpi = c * 4.0 / (insts_per_warp * warps);
  r.mhz = c / (ms * 1e-3) / 1e6;
  return r;
}

struct Best {
  const char *kind;
  Res r;
  int warps, ch;
  double spec;
};
static std::vector<Best> g_best;

template <class Op, int CH> static void sweep_one(int warps, double spec, Best &best, const char *kind) {
  // ~2^20 instructions per SM sub-partition: a few ms whatever the rate
  const int per_warp = (1 << 22) / warps; // 4 sub-partitions: 2^20 per SMSP
  int iters = per_warp / CH;
  iters -= iters % 4;
  Res r = run_cfg(peak_kernel<Op, CH>, warps, iters, Op::FLOP * iters * CH, (double)iters * CH);
  say("peak %-5s %-26s warps/SM %2d chains %d: %7.1f TFLOP/s %6.0f flop/clk/SM (%5.1f%% of spec) %5.2f clk/inst/SMSP %5.0f MHz\n",
      kind, Op::name(), warps, CH, r.tflops, r.fpc, 100 * r.fpc / spec, r.cpi, r.mhz);
  if (r.fpc > best.r.fpc) best.r = r, best.warps = warps, best.ch = CH;
}

template <class Op> static void sweep(const char *kind, double spec) {
  Best best{kind, {0, 0, 0, 0}, 0, 0, spec};
  for (int w : {4, 8, 16, 32}) {
    sweep_one<Op, 1>(w, spec, best, kind);
    sweep_one<Op, 2>(w, spec, best, kind);
    sweep_one<Op, 4>(w, spec, best, kind);
    sweep_one<Op, 8>(w, spec, best, kind);
  }
  g_best.push_back(best);
}

template <typename T, int CH> static void wsweep_one(int warps, double spec, Best &best, const char *kind) {
  const int per_warp = (1 << 21) / warps; // 2 HMMA per mma_sync
  int iters = per_warp / CH;
  iters -= iters % 4;
  Res r = run_cfg(wmma_peak_kernel<T, CH>, warps, iters, 8192.0 * iters * CH, 2.0 * iters * CH);
  say("peak %-5s %-26s warps/SM %2d chains %d: %7.1f TFLOP/s %6.0f flop/clk/SM (%5.1f%% of spec) %5.2f clk/HMMA/SMSP %5.0f MHz\n",
      kind, "wmma::mma_sync m16n16k16", warps, CH, r.tflops, r.fpc, 100 * r.fpc / spec, r.cpi, r.mhz);
  if (r.fpc > best.r.fpc) best.r = r, best.warps = warps, best.ch = CH;
}

template <typename T> static void wsweep(const char *kind, double spec) {
  Best best{kind, {0, 0, 0, 0}, 0, 0, spec};
  for (int w : {4, 8, 16, 32}) {
    wsweep_one<T, 1>(w, spec, best, kind);
    wsweep_one<T, 2>(w, spec, best, kind);
    wsweep_one<T, 4>(w, spec, best, kind); // 4 wmma chains = 8 HMMA chains; 8 would spill under 64 registers
  }
  g_best.push_back(best);
}

template <class Op, int FM, int FN, int MAXT> static void lsweep(const char *kind, double spec, std::initializer_list<int> ws) {
  Best best{kind, {0, 0, 0, 0}, 0, 0, spec};
  for (int w : ws) {
    const int mmas = 2 * FM * FN; // per k step
    int iters = (1 << 22) / w / mmas;
    iters -= iters % 2;
    Res r = run_cfg(ldsm_peak_kernel<Op, FM, FN, MAXT>, w, iters, Op::FLOP * mmas * iters, (double)mmas * iters);
    say("peak %-5s %-26s warps/SM %2d tile %dx%d: %7.1f TFLOP/s %6.0f flop/clk/SM (%5.1f%% of spec) %5.2f clk/inst/SMSP %5.0f MHz\n",
        kind, Op::name(), w, 16 * FM, 16 * FN, r.tflops, r.fpc, 100 * r.fpc / spec, r.cpi, r.mhz);
    if (r.fpc > best.r.fpc) best.r = r, best.warps = w, best.ch = FM * 100 + FN;
  }
  g_best.push_back(best);
}

// ---- validation

static float small_val(uint32_t &s) { // multiples of 1/8 in [-2, 2): exact in tf32, bf16, f16
  s = s * 1664525u + 1013904223u;
  return (float)((int)((s >> 16) % 32) - 16) / 8.f;
}

static bool check_report(const char *what, const std::vector<float> &D, const std::vector<double> &ref) {
  double maxerr = 0;
  for (size_t i = 0; i < D.size(); ++i) maxerr = std::max(maxerr, fabs((double)D[i] - ref[i]));
  const bool ok = maxerr <= 1e-4;
  say("check %-26s %s (max |err| %.2g over %zu outputs)\n", what, ok ? "ok" : "FAILED", maxerr, D.size());
  return ok;
}

template <class Op, typename T> static bool check16(const char *what) {
  uint32_t s = 12345;
  std::vector<float> A(16 * 16), B(16 * 8), D(16 * 8);
  for (auto &v : A) v = small_val(s);
  for (auto &v : B) v = small_val(s);
  std::vector<double> ref(16 * 8, 0.0);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < 16; ++k) ref[i * 8 + j] += (double)A[i * 16 + k] * B[k * 8 + j];
  float *dA, *dB, *dD;
  CK(cudaMalloc(&dA, 1024 * 4)); CK(cudaMalloc(&dB, 1024 * 4)); CK(cudaMalloc(&dD, 1024 * 4));
  CK(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemset(dD, 0xff, 1024 * 4));
  check16_kernel<Op, T><<<1, 32>>>(dA, dB, dD);
  CK(cudaGetLastError());
  CK(cudaMemcpy(D.data(), dD, D.size() * 4, cudaMemcpyDeviceToHost));
  cudaFree(dA), cudaFree(dB), cudaFree(dD);
  return check_report(what, D, ref);
}

static bool check_tf32() {
  uint32_t s = 777;
  std::vector<float> A(16 * 8), B(8 * 8), D(16 * 8);
  for (auto &v : A) v = small_val(s);
  for (auto &v : B) v = small_val(s);
  std::vector<double> ref(16 * 8, 0.0);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < 8; ++k) ref[i * 8 + j] += (double)A[i * 8 + k] * B[k * 8 + j];
  float *dA, *dB, *dD;
  CK(cudaMalloc(&dA, 1024 * 4)); CK(cudaMalloc(&dB, 1024 * 4)); CK(cudaMalloc(&dD, 1024 * 4));
  CK(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemset(dD, 0xff, 1024 * 4));
  check_tf32_kernel<<<1, 32>>>(dA, dB, dD);
  CK(cudaGetLastError());
  CK(cudaMemcpy(D.data(), dD, D.size() * 4, cudaMemcpyDeviceToHost));
  cudaFree(dA), cudaFree(dB), cudaFree(dD);
  return check_report("tf32 mma.sync m16n8k8", D, ref);
}

template <typename T> static T to_t(float v);
template <> __half to_t<__half>(float v) { return __float2half(v); }
template <> __nv_bfloat16 to_t<__nv_bfloat16>(float v) { return __float2bfloat16(v); }

template <typename T> static bool check_wmma(const char *what) {
  uint32_t s = 4242;
  std::vector<float> A(256), B(256), D(256);
  for (auto &v : A) v = small_val(s);
  for (auto &v : B) v = small_val(s); // B col-major: (k, n) at n * 16 + k
  std::vector<T> At(256), Bt(256);
  for (int i = 0; i < 256; ++i) At[i] = to_t<T>(A[i]), Bt[i] = to_t<T>(B[i]);
  std::vector<double> ref(256, 0.0);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j)
      for (int k = 0; k < 16; ++k) ref[i * 16 + j] += (double)A[i * 16 + k] * B[j * 16 + k];
  T *dA, *dB;
  float *dD;
  CK(cudaMalloc(&dA, 512)); CK(cudaMalloc(&dB, 512)); CK(cudaMalloc(&dD, 1024));
  CK(cudaMemcpy(dA, At.data(), 512, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dB, Bt.data(), 512, cudaMemcpyHostToDevice));
  CK(cudaMemset(dD, 0xff, 1024));
  check_wmma_kernel<T><<<1, 32>>>(dA, dB, dD);
  CK(cudaGetLastError());
  CK(cudaMemcpy(D.data(), dD, 1024, cudaMemcpyDeviceToHost));
  cudaFree(dA), cudaFree(dB), cudaFree(dD);
  return check_report(what, D, ref);
}

// ---- cuBLAS

__global__ void fill_kernel(void *p, size_t n, int dt, uint32_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    const float v = ((float)(h & 0xffff) / 65536.f - 0.5f) * 2.f;
    if (dt == 0) ((float *)p)[i] = v;
    else if (dt == 1) ((__nv_bfloat16 *)p)[i] = __float2bfloat16(v);
    else ((__half *)p)[i] = __float2half(v);
  }
}

/* dt: 0 f32 (TF32 compute), 1 bf16, 2 f16. Returns the median TFLOP/s of 12 after 3 warm-ups. */
static double cublas_tflops(cublasHandle_t h, int dt, int n) {
  const size_t es = dt == 0 ? 4 : 2, cnt = (size_t)n * n;
  void *A, *B, *C;
  CK(cudaMalloc(&A, cnt * es)); CK(cudaMalloc(&B, cnt * es)); CK(cudaMalloc(&C, cnt * es));
  fill_kernel<<<1024, 256>>>(A, cnt, dt, 1), fill_kernel<<<1024, 256>>>(B, cnt, dt, 2);
  const cudaDataType ty = dt == 0 ? CUDA_R_32F : dt == 1 ? CUDA_R_16BF : CUDA_R_16F;
  const cublasComputeType_t ct = dt == 0 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float alpha = 1.f, beta = 0.f;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  std::vector<float> ts;
  for (int r = 0; r < 15; ++r) {
    CK(cudaEventRecord(e0));
    cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A, ty, n, B, ty, n, &beta, C, ty, n, ct,
                                     CUBLAS_GEMM_DEFAULT);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    if (st != CUBLAS_STATUS_SUCCESS) {
      say("cublasGemmEx failed (%d)\n", (int)st);
      return 0;
    }
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r >= 3) ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  cudaFree(A), cudaFree(B), cudaFree(C);
  const double ms = ts[ts.size() / 2];
  return 2.0 * n * (double)n * n / (ms * 1e-3) / 1e12;
}

int main(int argc, char **argv) {
  const bool quick = argc > 1 && !strcmp(argv[1], "--quick"); // fewer configurations
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  int clk_khz = 0;
  cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, 0);
  say("# mma_peak on %s, %d SMs, sm_%d%d, max SM clock %d MHz\n", prop.name, g_sms, prop.major, prop.minor, clk_khz / 1000);
  CK(cudaMalloc(&g_seed, 4096 * 4));
  CK(cudaMalloc(&g_out, (size_t)g_sms * 1024 * 4));
  CK(cudaMalloc(&g_clk, (size_t)g_sms * 3 * 8));
  { // operand bits: f16/bf16 pairs of small values, valid tf32 (f32) small values
    std::vector<uint32_t> s(4096);
    uint32_t r = 99;
    for (auto &v : s) {
      const float x = small_val(r) / 64.f;
      const __half hx = __float2half(x);
      const uint16_t u = *(const uint16_t *)&hx;
      uint32_t xb;
      memcpy(&xb, &x, 4);
      v = (r & 1) ? xb : (u | ((uint32_t)u << 16));
    }
    CK(cudaMemcpy(g_seed, s.data(), s.size() * 4, cudaMemcpyHostToDevice));
  }

  say("\n== validation: one instruction per kind vs a host reference\n");
  int bad = 0;
  bad += !check16<OpBF16, __nv_bfloat16>("bf16 mma.sync m16n8k16");
  bad += !check16<OpF16, __half>("f16 mma.sync m16n8k16");
  bad += !check_tf32();
  bad += !check_wmma<__nv_bfloat16>("wmma bf16 m16n16k16");
  bad += !check_wmma<__half>("wmma f16 m16n16k16");

  say("\n== cuBLAS 8192^3 (median of 12 after 3 warm-ups)\n");
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    say("cublasCreate failed\n");
    return 1;
  }
  const double cb_bf16 = cublas_tflops(h, 1, 8192), cb_f16 = cublas_tflops(h, 2, 8192), cb_tf32 = cublas_tflops(h, 0, 8192);
  say("cublas bf16 %.1f TFLOP/s, f16 %.1f, tf32 %.1f\n", cb_bf16, cb_f16, cb_tf32);

  say("\n== register-only loops (one block per SM; clk = clock64 cycles; spec = 4096 flop/clk/SM f16/bf16, 2048 tf32)\n");
  sweep<OpBF16>("bf16", 4096);
  sweep<OpF16>("f16", 4096);
  sweep<OpTF32>("tf32", 2048);
  wsweep<__nv_bfloat16>("wmma_bf16", 4096);
  if (!quick) wsweep<__half>("wmma_f16", 4096);

  say("\n== ldmatrix.x4 + mma.sync every k step (warp tile MxN, double-buffered fragments)\n");
  lsweep<OpBF16, 4, 4, 256>("ldsm_bf16", 4096, {4, 8});
  lsweep<OpBF16, 2, 4, 512>("ldsm_bf16", 4096, {4, 8, 16});
  lsweep<OpBF16, 2, 2, 512>("ldsm_bf16", 4096, {4, 8, 16});
  lsweep<OpTF32, 4, 4, 256>("ldsm_tf32", 2048, {4, 8});
  lsweep<OpTF32, 2, 4, 512>("ldsm_tf32", 2048, {4, 8, 16});

  // cuBLAS once more at the end (clocks drift with temperature): report the mean of the two
  const double cb_bf16b = cublas_tflops(h, 1, 8192), cb_tf32b = cublas_tflops(h, 0, 8192);
  say("cublas again: bf16 %.1f, tf32 %.1f TFLOP/s\n", cb_bf16b, cb_tf32b);
  const double cbb = 0.5 * (cb_bf16 + cb_bf16b), cbt = 0.5 * (cb_tf32 + cb_tf32b);

  say("\n== summary (best configuration per kind; %% of cuBLAS in TFLOP/s, same run)\n");
  for (const Best &b : g_best) {
    const bool tf = strstr(b.kind, "tf32") != nullptr, f16 = !tf && strstr(b.kind, "f16") && !strstr(b.kind, "bf16");
    const double cb = tf ? cbt : f16 ? cb_f16 : cbb;
    char cfg[32];
    if (b.ch >= 100) snprintf(cfg, sizeof cfg, "tile %dx%d", 16 * (b.ch / 100), 16 * (b.ch % 100));
    else snprintf(cfg, sizeof cfg, "chains %d", b.ch);
    say("best %-10s warps %2d %-11s %6.1f TFLOP/s %5.0f flop/clk/SM (%4.1f%% spec) %5.2f clk/inst/SMSP %4.0f MHz = %5.1f%% of cuBLAS %s\n",
        b.kind, b.warps, cfg, b.r.tflops, b.r.fpc, 100 * b.r.fpc / b.spec, b.r.cpi, b.r.mhz, 100 * b.r.tflops / cb,
        tf ? "tf32" : f16 ? "f16" : "bf16");
  }
  for (const Best &b : g_best) {
    if (!strcmp(b.kind, "bf16")) say("mma.sync ceiling = %.1f%% of cuBLAS bf16 (%.1f / %.1f TFLOP/s)\n", 100 * b.r.tflops / cbb, b.r.tflops, cbb);
    if (!strcmp(b.kind, "tf32")) say("mma.sync ceiling = %.1f%% of cuBLAS tf32 (%.1f / %.1f TFLOP/s)\n", 100 * b.r.tflops / cbt, b.r.tflops, cbt);
    if (!strcmp(b.kind, "wmma_bf16")) say("wmma ceiling = %.1f%% of cuBLAS bf16\n", 100 * b.r.tflops / cbb);
  }
  say("validation: %s\n", bad ? "FAILED (timings of the failed kinds are meaningless)" : "all ok");
  cublasDestroy(h);
  return bad ? 2 : 0;
}
