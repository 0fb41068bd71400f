/*
 * 02_radix2.cu — FFT step 2: iterative radix-2 Cooley-Tukey, one kernel per stage.
 *
 * Idea: n = 2^L; after the inputs are put in bit-reversed order, stage s (half-width h = 2^s) combines pairs of
 * length-h transforms into length-2h ones with butterflies a +- W_2h^p b. O(n log n) work instead of n^2 (step 1),
 * but every stage is a pass over global memory: 1 + log2 n reads and writes of the whole array, and the
 * bit-reversal pass scatters (a warp's writes land far apart). Steps 3-4 keep the line on chip.
 * Change from step 1: the fast algorithm; twiddles by sincospi of p / h, one per butterfly.
 * Launch: 256 threads; the bit reversal one thread per element, each stage one thread per butterfly (n/2 per
 * line). The scale is applied by the last stage (or by the reversal when n == 1).
 * Limits: complex-to-complex rows (inner == 1), n a power of two.
 * Operands: x, out contiguous complex [outer, n]; out is the work array (x is read once).
 */
#include "fft_common.cuh"

using namespace ckfft;

#define R2_BLOCK 256

// ---------------------------------------------------------------- kernels

template <class R>
__global__ void __launch_bounds__(R2_BLOCK) fft_bitrev_kernel(const typename Cx<R>::T *x, typename Cx<R>::T *out,
                                                              int64_t total, int L, R scale) {
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t n = (int64_t)1 << L, j = e & (n - 1), line = e - j;
    const int64_t r = L ? (int64_t)(__brevll((unsigned long long)j) >> (64 - L)) : 0;
    out[line + r] = cscale(x[e], scale);
  }
}

template <class R>
__global__ void __launch_bounds__(R2_BLOCK) fft_stage_kernel(typename Cx<R>::T *a, int64_t pairs, int L, int s,
                                                             int sign, R scale) {
  using C = typename Cx<R>::T;
  const int64_t h = (int64_t)1 << s, half = (int64_t)1 << (L - 1);
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < pairs; t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t line = t / half, u = t % half, p = u & (h - 1);
    const int64_t i0 = (line << L) + (u >> s) * 2 * h + p, i1 = i0 + h;
    const C b = cmul(a[i1], twiddle(R(), sign, p, 2 * h)), v = a[i0];
    a[i0] = cscale(cadd(v, b), scale);
    a[i1] = cscale(csub(v, b), scale);
  }
}

// ---------------------------------------------------------------- launcher

template <class R> static int run(const ck_fft_desc &d, const ck_env *env) {
  using C = typename Cx<R>::T;
  const cudaStream_t st = (cudaStream_t)env->stream;
  const int L = log2i(d.n);
  const int64_t total = d.outer * d.n, pairs = total / 2;
  ck_note(env, fft_bitrev_kernel<R>, R2_BLOCK, 0);
  fft_bitrev_kernel<R><<<grid_for(total, R2_BLOCK), R2_BLOCK, 0, st>>>((const C *)d.x, (C *)d.out, total, L,
                                                                        (R)(L ? 1 : d.scale));
  for (int s = 0; s < L; ++s) {
    ck_note(env, fft_stage_kernel<R>, R2_BLOCK, 0);
    fft_stage_kernel<R><<<grid_for(pairs, R2_BLOCK), R2_BLOCK, 0, st>>>((C *)d.out, pairs, L, s, d.inverse ? 1 : -1,
                                                                         (R)(s == L - 1 ? d.scale : 1));
  }
  return (int)cudaGetLastError();
}

CK_FFT_LAUNCHER(ck_fft_radix2, run)

extern "C" const char *ck_fft_radix2_supports(const void *desc) {
  const ck_fft_desc *d = (const ck_fft_desc *)desc;
  const char *why = c2c_rows(d, 0, NULL);
  return why ? why : pow2(d->n) ? NULL : "n is not a power of two (radix 2); cuFFT or the naive DFT take any length";
}
