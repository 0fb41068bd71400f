/*
 * 04_radix8.cu — FFT step 4: Stockham with radix-8 passes, 8 points per thread in registers.
 *
 * Idea: a radix-R pass reads R points spaced n/R apart, multiplies them by W_(Ns R)^(r k) and does an R-point DFT
 * in registers (fft_common.cuh's dft_reg: unrolled, constant twiddles), then writes them Ns apart (Stockham's
 * autosort). Radix 8 needs log8 n passes instead of log2 n, so a 4096-point line makes 4 trips through shared
 * memory instead of 12 and a thread does 3 stages of butterflies per trip; the first pass reads global memory and
 * the last writes it directly (both coalesced: consecutive threads, consecutive elements), so the line touches
 * DRAM once each way and shared memory only between passes. A pass's twiddles are one sincospi per thread (its
 * argument k / (Ns R) in float: exact, the divisor a power of two), the other R - 2 powers by multiplication, all in
 * registers. Lines shorter than 8^k end with a radix-4 or -2 pass;
 * short lines share a block (256 / (n / 8) of them), so blocks stay full at n = 256.
 * Change from step 3: radix 8 instead of 2, twiddles in registers, global memory read and written by the first
 * and last passes, several lines per block, a kernel per length.
 * One kernel per length (8, 16, ..., 4096, a template parameter), as the libraries do: the passes, their strides and
 * masks are constants, and c64 fits 64 registers without spilling (the one kernel for every length took 64 with 84
 * bytes spilled). H100, one run (session 11, lab/fft_r8_probe.cu, 2^28 c64, % of cuFFT at n = 256 ... 4096): 79.8,
 * 81.6, 63.5, 66.9, 59.6 with the runtime length; 101.2, 101.6, 97.2, 98.1, 84.3 with a kernel per length.
 * Launch: (n/8, F) threads (512 at n = 4096), F = max(1, 256 / (n/8)) lines per block; F n sizeof(complex) bytes of
 * shared memory. c64 is capped at 64 registers (R8_MINB blocks of 512 an SM, so more lines' loads in flight: from
 * 58-60% of cuFFT to 80-82% at 256 and 512 in session 8), c128 at 128.
 * Limits: complex-to-complex rows (inner == 1), n a power of two, 8 <= n <= 4096.
 * Operands: x, out contiguous complex [outer, n].
 */
#include "fft_common.cuh"

using namespace ckfft;

/* Knobs for lab/fft_r8_probe.cu: the blocks an SM the registers of the c64 kernel are capped for (c128 keeps 1),
 * and the twiddle's form (1: the quotient in float, exact for a power-of-two divisor; 0: in double). Measured on
 * an H100 (round 3 session 8, 2^28 c64 in lines of 256..4096, % of cuFFT): 1/0 (108 registers, two blocks of 256
 * an SM, one of 512) 58, 60, 45, 48, 40; 2/1 (64 registers, 76 bytes spilled, four blocks, two of 512) 80, 82,
 * 64, 67, 60; 2/0 and 3/x (more spills) 39-60. */
#ifndef R8_MINB
#define R8_MINB 2
#endif
#ifndef R8_TWP2
#define R8_TWP2 1
#endif

#define R8_MAX_N 4096
#define R8_THREADS 256     /* threads a block of short lines fills */
#define R8_MAX_THREADS 512 /* n / 8 at n = 4096: one line per block */

// ---------------------------------------------------------------- kernel

/* A swizzle of the shared buffer, off by default: with R8_SWZ = 1 element i of a block's buffer lives at
 * i ^ ((i >> 3) & 15). A pass writes a warp's points Ns * R apart; 8 complex values (64 bytes) apart puts a c64
 * half-warp on 2 of the 16 bank pairs, so the first pass's stores are 8-way conflicted and the second's 2-way: three
 * times the shared-memory wavefronts of a conflict-free ladder at n = 256..4096 (lab/fft_swizzle.py counts them with
 * the half-warp model of 8-byte accesses). The XOR spreads every pass over all 16 pairs at every length with no
 * extra memory (it only moves bits below the ones it reads: a permutation of each aligned 128 elements). Measured on
 * an H100 (session 11, one run, lab/fft_r8_probe.cu, % of cuFFT at n = 1024, 2048, 4096): swizzled 94.2-94.4,
 * 96.0-96.2, 84.5-84.7; plain 97.2, 98.1, 84.3, the same within 1% at 32..512. The conflicts cost less than the
 * XOR's index arithmetic: the passes wait on DRAM, not on shared memory, once the kernel stopped spilling. */
#ifndef R8_SWZ
#define R8_SWZ 0
#endif
template <bool SH> __device__ __forceinline__ int at(int i) { return SH && R8_SWZ ? i ^ ((i >> 3) & 15) : i; }

/* One radix-R pass over a line of N points, the Ns-th (Ns = 1, R, R^2, ...): each of the N/8 threads does 8/R
 * butterflies. All loads come before the block's barrier and all stores after it, so src and dst may be the same
 * shared buffer. SRC_SH / DST_SH say which side is the shared buffer (indexed from the block's buffer with the
 * line's offset `off`, swizzled) and which is the line in global memory (natural order, coalesced). N and Ns are
 * compile-time constants: j / Ns and j % Ns are shifts and masks, and the last pass's scale is the only one. */
template <int N, int Ns, int R, bool SRC_SH, bool DST_SH, class C, class Rl>
__device__ __forceinline__ void pass(const C *src, C *dst, int off, bool active, int sign, Rl scale) {
  constexpr int Q = 8 / R, T = N / 8;
  C v[Q][R];
  if (active) {
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      const int j = threadIdx.x + q * T, k = j & (Ns - 1);
#pragma unroll
      for (int r = 0; r < R; ++r) v[q][r] = src[at<SRC_SH>((SRC_SH ? off : 0) + j + r * (N / R))];
      if (Ns > 1) {
        const C w = R8_TWP2 ? twiddle_p2(Rl(), sign, k, Ns * R) : twiddle(Rl(), sign, k, (int64_t)Ns * R);
        C wr = w;
#pragma unroll
        for (int r = 1; r < R; ++r) v[q][r] = cmul(v[q][r], wr), wr = cmul(wr, w);
      }
      dft_reg<R>(v[q], sign);
    }
  }
  if (SRC_SH || DST_SH) __syncthreads(); /* global to global (N = 8): no barrier needed */
  if (active) {
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      const int j = threadIdx.x + q * T, d = (j / Ns) * Ns * R + (j & (Ns - 1));
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const C o = Ns * R == N ? cscale(v[q][r], scale) : v[q][r];
        dst[at<DST_SH>((DST_SH ? off : 0) + d + r * Ns)] = o;
      }
    }
  }
  if (DST_SH) __syncthreads(); /* the next pass reads what this one stored */
}

/* The passes of an N-point line from the Ns-th on: radix 8 while 8 | N / Ns, then one radix-4 or -2 pass. The first
 * reads the line in global memory and the last writes it; the ones between stay in the shared buffer. */
template <int N, int Ns, class C, class Rl>
__device__ __forceinline__ void passes(const C *x, C *y, C *buf, int off, bool active, int sign, Rl scale) {
  if constexpr (Ns < N) {
    constexpr int R = N / Ns >= 8 ? 8 : N / Ns;
    constexpr bool first = Ns == 1, last = Ns * R == N;
    pass<N, Ns, R, !first, !last>(first ? x : buf, last ? y : buf, off, active, sign, scale);
    passes<N, Ns * R>(x, y, buf, off, active, sign, scale);
  }
}

/* Threads a block has for lines of N points: N / 8 threads a line, and several short lines a block. */
template <int N> struct Shape {
  static constexpr int T = N / 8, F = T >= R8_THREADS ? 1 : R8_THREADS / T, THREADS = T * F;
};

/* c64's register cap: the same 64 at every length, i.e. R8_MINB blocks of 512 threads an SM. */
template <class Rl, int N> constexpr int min_blocks() {
  return (sizeof(Rl) == 4 ? R8_MINB : 1) * R8_MAX_THREADS / Shape<N>::THREADS;
}

template <class Rl, int N>
__global__ void __launch_bounds__(Shape<N>::THREADS, (min_blocks<Rl, N>()))
    fft_radix8_kernel(const typename Cx<Rl>::T *x, typename Cx<Rl>::T *out, int64_t outer, int sign, Rl scale) {
  using C = typename Cx<Rl>::T;
  extern __shared__ __align__(16) unsigned char raw[];
  C *buf = (C *)raw;
  const int off = threadIdx.y * N; /* the line's first element in the block's buffer */
  for (int64_t base = (int64_t)blockIdx.x * blockDim.y; base < outer; base += (int64_t)gridDim.x * blockDim.y) {
    const int64_t line = base + threadIdx.y;
    const bool active = line < outer; /* inactive threads still meet every barrier */
    passes<N, 1>(x + (active ? line : 0) * N, out + (active ? line : 0) * N, buf, off, active, sign, scale);
  }
}

// ---------------------------------------------------------------- launcher

template <class R, int N> static int launch(const ck_fft_desc &d, const ck_env *env) {
  using C = typename Cx<R>::T;
  using S = Shape<N>;
  const size_t smem = N == 8 ? 0 : (size_t)S::F * N * sizeof(C); /* (one pass, global to global: no buffer) */
  if (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(fft_radix8_kernel<R, N>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return (int)e;
  }
  ck_note(env, fft_radix8_kernel<R, N>, S::THREADS, smem);
  fft_radix8_kernel<R, N><<<grid_for((d.outer + S::F - 1) / S::F, 1), dim3(S::T, S::F), smem, (cudaStream_t)env->stream>>>(
      (const C *)d.x, (C *)d.out, d.outer, d.inverse ? 1 : -1, (R)d.scale);
  return (int)cudaGetLastError();
}

/* One kernel per length (8 ... 4096), as the libraries do: supports() has checked that n is one of them. */
template <class R> static int run(const ck_fft_desc &d, const ck_env *env) {
  switch (log2i(d.n)) {
  case 3: return launch<R, 8>(d, env);
  case 4: return launch<R, 16>(d, env);
  case 5: return launch<R, 32>(d, env);
  case 6: return launch<R, 64>(d, env);
  case 7: return launch<R, 128>(d, env);
  case 8: return launch<R, 256>(d, env);
  case 9: return launch<R, 512>(d, env);
  case 10: return launch<R, 1024>(d, env);
  case 11: return launch<R, 2048>(d, env);
  case 12: return launch<R, 4096>(d, env);
  default: return (int)cudaErrorInvalidValue; /* (supports() declines these lengths) */
  }
}

CK_FFT_LAUNCHER(ck_fft_radix8, run)

extern "C" const char *ck_fft_radix8_supports(const void *desc) {
  const ck_fft_desc *d = (const ck_fft_desc *)desc;
  const char *why = c2c_rows(d, R8_MAX_N, "n > 4096: one line must fit one block's shared memory");
  if (why) return why;
  if (!pow2(d->n)) return "n is not a power of two (radix 8/4/2); cuFFT or the naive DFT take any length";
  return d->n < 8 ? "n < 8: shorter than one radix-8 butterfly (the Stockham rung takes it)" : NULL;
}
