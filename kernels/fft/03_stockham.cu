/*
 * 03_stockham.cu — FFT step 3: Stockham's autosort radix-2 FFT, one block per transform in shared memory.
 *
 * Idea: the line is read from global memory once, transformed in shared memory and written once: two passes over
 * DRAM where step 2 made 2 + 2 log2 n. Stockham's formulation writes each stage's results in the order the next
 * stage reads them (stage Ns: a = X[j], b = X[j + n/2], out to 2 Ns floor(j / Ns) + j mod Ns and + Ns), so no
 * bit-reversal pass is needed. Each thread reads its P pairs into registers, the block synchronises, then writes
 * them back: one buffer suffices.
 * Change from step 2: shared memory instead of a kernel per stage; no bit reversal.
 * Launch: one block per line (grid-stride over lines), min(n/2, 256) threads with P = n/2 / threads pairs each
 * (P <= 8); n * sizeof(complex) bytes of dynamic shared memory (c128 at 4096: 64 KiB, opted in).
 * Limits: complex-to-complex rows (inner == 1), n a power of two <= 4096.
 * Operands: x, out contiguous complex [outer, n].
 */
#include "fft_common.cuh"

using namespace ckfft;

#define SH_THREADS 256
#define SH_MAX_N 4096

// ---------------------------------------------------------------- kernel

template <class R, int P>
__global__ void __launch_bounds__(SH_THREADS) fft_stockham_kernel(const typename Cx<R>::T *x, typename Cx<R>::T *out,
                                                                  int64_t outer, int n, int sign, R scale) {
  using C = typename Cx<R>::T;
  extern __shared__ __align__(16) unsigned char raw[];
  C *buf = (C *)raw;
  const int T = blockDim.x, half = n / 2;
  for (int64_t line = blockIdx.x; line < outer; line += gridDim.x) {
    for (int e = threadIdx.x; e < n; e += T) buf[e] = x[line * n + e];
    __syncthreads();
    for (int Ns = 1; Ns < n; Ns *= 2) {
      C a[P], b[P];
#pragma unroll
      for (int q = 0; q < P; ++q) {
        const int j = threadIdx.x + q * T;
        a[q] = buf[j];
        b[q] = cmul(buf[j + half], twiddle(R(), sign, j & (Ns - 1), 2 * Ns));
      }
      __syncthreads();
#pragma unroll
      for (int q = 0; q < P; ++q) {
        const int j = threadIdx.x + q * T, d = (j / Ns) * 2 * Ns + (j & (Ns - 1));
        buf[d] = cadd(a[q], b[q]);
        buf[d + Ns] = csub(a[q], b[q]);
      }
      __syncthreads();
    }
    for (int e = threadIdx.x; e < n; e += T) out[line * n + e] = cscale(buf[e], scale);
    __syncthreads(); /* buf is refilled by the next line */
  }
}

// ---------------------------------------------------------------- launcher

template <class R, int P> static int launch(const ck_fft_desc &d, const ck_env *env, int threads) {
  using C = typename Cx<R>::T;
  const size_t smem = (size_t)d.n * sizeof(C);
  if (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(fft_stockham_kernel<R, P>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return (int)e;
  }
  ck_note(env, fft_stockham_kernel<R, P>, threads, smem);
  fft_stockham_kernel<R, P><<<grid_for(d.outer, 1), threads, smem, (cudaStream_t)env->stream>>>(
      (const C *)d.x, (C *)d.out, d.outer, (int)d.n, d.inverse ? 1 : -1, (R)d.scale);
  return (int)cudaGetLastError();
}

template <class R> static int run(const ck_fft_desc &d, const ck_env *env) {
  const int half = (int)(d.n / 2), threads = half < 1 ? 1 : half < SH_THREADS ? half : SH_THREADS;
  switch (half / threads) { /* pairs per thread */
  case 0: /* n == 1: a scaled copy (no stage runs) */
  case 1: return launch<R, 1>(d, env, threads);
  case 2: return launch<R, 2>(d, env, threads);
  case 4: return launch<R, 4>(d, env, threads);
  default: return launch<R, 8>(d, env, threads);
  }
}

CK_FFT_LAUNCHER(ck_fft_stockham, run)

extern "C" const char *ck_fft_stockham_supports(const void *desc) {
  const ck_fft_desc *d = (const ck_fft_desc *)desc;
  const char *why = c2c_rows(d, SH_MAX_N, "n > 4096: one line must fit one block's shared memory");
  return why ? why : pow2(d->n) ? NULL : "n is not a power of two (radix 2); cuFFT or the naive DFT take any length";
}
