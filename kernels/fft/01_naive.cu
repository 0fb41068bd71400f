/*
 * 01_naive.cu — FFT step 1: the discrete Fourier transform as its definition, O(n^2).
 *
 * Idea: out(k) = sum_j x(j) W^(j k), one thread per output, reading the whole line. The exponent j k is kept
 * modulo n as an integer (stepped by k per term), so every twiddle is sincospi of a number in [0, 2): exact to
 * the precision's rounding however long the line. Sums accumulate in the input's precision (c64 in float), so
 * the error grows as sqrt(n) eps rather than log n eps: the point of the later steps is as much accuracy as speed.
 * Launch: 256 threads, a thread per output element (grid-stride), any outer, n, inner.
 * Limits: complex-to-complex; n <= 65536 (a line costs n^2 multiply-adds; longer ones take minutes).
 * Operands: x, out contiguous complex [outer, n, inner].
 */
#include "fft_common.cuh"

using namespace ckfft;

#define NAIVE_BLOCK 256
#define NAIVE_MAX_N 65536

// ---------------------------------------------------------------- kernel

template <class R>
__global__ void __launch_bounds__(NAIVE_BLOCK) fft_naive_kernel(const typename Cx<R>::T *x, typename Cx<R>::T *out,
                                                                 int64_t outer, int64_t n, int64_t inner, int sign, R scale) {
  using C = typename Cx<R>::T;
  const int64_t total = outer * n * inner;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = e % inner, k = e / inner % n, o = e / (inner * n);
    const C *line = x + o * n * inner + i;
    C acc = C{0, 0};
    int64_t jk = 0; /* j k mod n */
    for (int64_t j = 0; j < n; ++j) {
      acc = cadd(acc, cmul(line[j * inner], twiddle(R(), sign, jk, n)));
      jk += k;
      if (jk >= n) jk -= n;
    }
    out[e] = cscale(acc, scale);
  }
}

// ---------------------------------------------------------------- launcher

template <class R> static int run(const ck_fft_desc &d, const ck_env *env) {
  using C = typename Cx<R>::T;
  ck_note(env, fft_naive_kernel<R>, NAIVE_BLOCK, 0);
  fft_naive_kernel<R><<<grid_for(d.outer * d.n * d.inner, NAIVE_BLOCK), NAIVE_BLOCK, 0, (cudaStream_t)env->stream>>>(
      (const C *)d.x, (C *)d.out, d.outer, d.n, d.inner, d.inverse ? 1 : -1, (R)d.scale);
  return (int)cudaGetLastError();
}

CK_FFT_LAUNCHER(ck_fft_naive, run)

extern "C" const char *ck_fft_naive_supports(const void *desc) {
  const ck_fft_desc *d = (const ck_fft_desc *)desc;
  if (d->kind != CK_FFT_C2C) return "complex-to-complex only (rfft/irfft run on cuFFT or the host)";
  if (d->n2 > 0) return "one dim at a time (two dims at once are cuFFT's rank-2 plan)";
  return d->n > NAIVE_MAX_N ? "n > 65536: O(n^2) work per line (minutes); cuFFT or a power-of-two rung" : NULL;
}
