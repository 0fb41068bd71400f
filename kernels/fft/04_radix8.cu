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
 * and last passes, several lines per block.
 * Launch: (n/8, F) threads (512 at n = 4096), F = max(1, 256 / (n/8)) lines per block; F n sizeof(complex) bytes of
 * shared memory. c64 is capped at 64 registers (__launch_bounds__(512, 2): four blocks of 256 an SM, so more lines'
 * loads in flight; 76 bytes spill), which took batched lines of 256 and 512 from 58-60% of cuFFT to 80-82% on an
 * H100 (R8_MINB below); c128 keeps 128 and spills a little (it is not what this rung is tuned for).
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

/* One radix-R pass over a line: each of the n/8 threads does 8/R butterflies. All loads come before the block's
 * barrier and all stores after it, so src and dst may be the same shared buffer. */
template <int R, class C, class Rl>
__device__ __forceinline__ void pass(const C *src, C *dst, int n, int Ns, bool active, int sign, Rl scale) {
  constexpr int Q = 8 / R;
  const int T = n / 8;
  C v[Q][R];
  if (active) {
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      const int j = threadIdx.x + q * T, k = j & (Ns - 1);
#pragma unroll
      for (int r = 0; r < R; ++r) v[q][r] = src[j + r * (n / R)];
      if (Ns > 1) {
        const C w = R8_TWP2 ? twiddle_p2(Rl(), sign, k, Ns * R) : twiddle(Rl(), sign, k, (int64_t)Ns * R);
        C wr = w;
#pragma unroll
        for (int r = 1; r < R; ++r) v[q][r] = cmul(v[q][r], wr), wr = cmul(wr, w);
      }
      dft_reg<R>(v[q], sign);
    }
  }
  __syncthreads();
  if (active) {
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      const int j = threadIdx.x + q * T, d = (j / Ns) * Ns * R + (j & (Ns - 1));
#pragma unroll
      for (int r = 0; r < R; ++r) dst[d + r * Ns] = cscale(v[q][r], scale);
    }
  }
  __syncthreads();
}

template <class Rl>
__global__ void __launch_bounds__(R8_MAX_THREADS, sizeof(Rl) == 4 ? R8_MINB : 1) fft_radix8_kernel(const typename Cx<Rl>::T *x, typename Cx<Rl>::T *out,
                                                                 int64_t outer, int n, int sign, Rl scale) {
  using C = typename Cx<Rl>::T;
  extern __shared__ __align__(16) unsigned char raw[];
  C *buf = (C *)raw + threadIdx.y * n;
  for (int64_t base = (int64_t)blockIdx.x * blockDim.y; base < outer; base += (int64_t)gridDim.x * blockDim.y) {
    const int64_t line = base + threadIdx.y;
    const bool active = line < outer; /* inactive threads still meet every barrier */
    const C *src = x + (active ? line : 0) * n;
    C *dst = out + (active ? line : 0) * n;
    for (int Ns = 1; Ns < n;) {
      const int left = n / Ns, R = left >= 8 ? 8 : left;
      const C *s = Ns == 1 ? src : buf;
      C *t = Ns * R == n ? dst : buf;
      const Rl sc = Ns * R == n ? scale : Rl(1);
      if (R == 8) pass<8>(s, t, n, Ns, active, sign, sc);
      else if (R == 4) pass<4>(s, t, n, Ns, active, sign, sc);
      else pass<2>(s, t, n, Ns, active, sign, sc);
      Ns *= R;
    }
  }
}

// ---------------------------------------------------------------- launcher

template <class R> static int run(const ck_fft_desc &d, const ck_env *env) {
  using C = typename Cx<R>::T;
  const int T = (int)(d.n / 8), F = T >= R8_THREADS ? 1 : R8_THREADS / T;
  const size_t smem = (size_t)F * (size_t)d.n * sizeof(C);
  if (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(fft_radix8_kernel<R>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return (int)e;
  }
  const dim3 block(T, F);
  ck_note(env, fft_radix8_kernel<R>, T * F, smem);
  fft_radix8_kernel<R><<<grid_for((d.outer + F - 1) / F, 1), block, smem, (cudaStream_t)env->stream>>>(
      (const C *)d.x, (C *)d.out, d.outer, (int)d.n, d.inverse ? 1 : -1, (R)d.scale);
  return (int)cudaGetLastError();
}

CK_FFT_LAUNCHER(ck_fft_radix8, run)

extern "C" const char *ck_fft_radix8_supports(const void *desc) {
  const ck_fft_desc *d = (const ck_fft_desc *)desc;
  const char *why = c2c_rows(d, R8_MAX_N, "n > 4096: one line must fit one block's shared memory");
  if (why) return why;
  if (!pow2(d->n)) return "n is not a power of two (radix 8/4/2); cuFFT or the naive DFT take any length";
  return d->n < 8 ? "n < 8: shorter than one radix-8 butterfly (the Stockham rung takes it)" : NULL;
}
