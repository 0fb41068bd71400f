/*
 * fft_common.cuh — the FFT ladder's shared plumbing (issue 35): the complex type of each precision, twiddles,
 * the small in-register transforms and the launch helpers. No rung's kernel body lives here.
 *
 * Twiddles: W = exp(sign 2 pi i a / b) is sincospi(2 a / b) with a reduced modulo b first, so the argument stays
 * in [0, 2) and the error of a twiddle is one rounding of its precision (not the error of a large angle).
 */
#ifndef CK_FFT_COMMON_CUH
#define CK_FFT_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "fft.h"

namespace ckfft {

template <class R> struct Cx;
template <> struct Cx<float> { using T = float2; };
template <> struct Cx<double> { using T = double2; };

__device__ __forceinline__ float2 cmul(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
__device__ __forceinline__ double2 cmul(double2 a, double2 b) { return make_double2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
template <class C> __device__ __forceinline__ C cadd(C a, C b) { return C{a.x + b.x, a.y + b.y}; }
template <class C> __device__ __forceinline__ C csub(C a, C b) { return C{a.x - b.x, a.y - b.y}; }
template <class C, class R> __device__ __forceinline__ C cscale(C a, R s) { return C{a.x * s, a.y * s}; }

/* exp(sign 2 pi i a / b), 0 <= a < b */
__device__ __forceinline__ float2 twiddle(float, int sign, int64_t a, int64_t b) {
  float s, c;
  sincospif(2.0f * (float)((double)a / (double)b), &s, &c);
  return make_float2(c, sign * s);
}
__device__ __forceinline__ double2 twiddle(double, int sign, int64_t a, int64_t b) {
  double s, c;
  sincospi(2.0 * (double)a / (double)b, &s, &c);
  return make_double2(c, sign * s);
}

/* exp(sign 2 pi i a / b) for b a power of two and 0 <= a < b <= 2^24: a / b is exact in float, so no double
 * division (the general twiddle's, whose quotient can need it) and the same value as twiddle() gives. */
__device__ __forceinline__ float2 twiddle_p2(float, int sign, int a, int b) {
  float s, c;
  sincospif(2.0f * ((float)a / (float)b), &s, &c);
  return make_float2(c, sign * s);
}
__device__ __forceinline__ double2 twiddle_p2(double, int sign, int a, int b) {
  double s, c;
  sincospi(2.0 * ((double)a / (double)b), &s, &c);
  return make_double2(c, sign * s);
}

/* The constant twiddles of an R-point transform (R <= 8): exp(sign 2 pi i k / 8) from a table, folded at compile
 * time once the loops below are unrolled. */
template <class C> __device__ __forceinline__ C w8(int k, int sign) {
  constexpr double h = 0.70710678118654752440;
  const double c[8] = {1, h, 0, -h, -1, -h, 0, h}, s[8] = {0, h, 1, h, 0, -h, -1, -h};
  return C{(decltype(C{}.x))c[k & 7], (decltype(C{}.x))(sign * s[k & 7])};
}

/* In-register DFT of R = 2, 4 or 8 points, natural order in and out: bit reversal, then log2 R radix-2 stages
 * with the table's twiddles. Fully unrolled: every index is a constant, so v stays in registers. */
template <int R, class C> __device__ __forceinline__ void dft_reg(C *v, int sign) {
#pragma unroll
  for (int i = 0; i < R; ++i) {
    int j = 0;
#pragma unroll
    for (int b = 1, r = R / 2; b < R; b *= 2, r /= 2) j |= (i & b) ? r : 0;
    if (i < j) {
      const C t = v[i];
      v[i] = v[j], v[j] = t;
    }
  }
#pragma unroll
  for (int h = 1; h < R; h *= 2)
#pragma unroll
    for (int i = 0; i < R; i += 2 * h)
#pragma unroll
      for (int k = 0; k < h; ++k) {
        const C b = cmul(v[i + k + h], w8<C>(k * (8 / (2 * h)), sign));
        v[i + k + h] = csub(v[i + k], b);
        v[i + k] = cadd(v[i + k], b);
      }
}

static inline bool pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }
static inline int log2i(int64_t n) {
  int l = 0;
  while ((int64_t)1 << l < n) ++l;
  return l;
}
static inline unsigned grid_for(int64_t threads, int block) {
  const int64_t g = (threads + block - 1) / block;
  return (unsigned)(g < 1 ? 1 : g > 65535 * 16 ? 65535 * 16 : g);
}

/* out[i] *= s over `count` complex values (cuFFT's normalisation; the own rungs scale as they write). */
template <class C, class R> __global__ void scale_kernel(C *out, int64_t count, R s) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)gridDim.x * blockDim.x)
    out[i] = cscale(out[i], s);
}
template <class R> __global__ void scale_real_kernel(R *out, int64_t count, R s) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)gridDim.x * blockDim.x)
    out[i] *= s;
}

/* The reason an own rung (C2C of rows) declines a descriptor, or NULL. */
static inline const char *c2c_rows(const ck_fft_desc *d, int64_t max_n, const char *why_n) {
  if (d->kind != CK_FFT_C2C) return "complex-to-complex only (rfft/irfft run on cuFFT or the host)";
  if (d->n2 > 0) return "one dim at a time (two dims at once are cuFFT's rank-2 plan)";
  if (d->inner != 1) return "rows only (the transform along the last dim of a contiguous array)";
  if (max_n && d->n > max_n) return why_n;
  return NULL;
}

/* The launcher of a rung from a template over the real type: template <class R> int run(const ck_fft_desc &,
 * const ck_env *). */
#define CK_FFT_LAUNCHER(fn, run)                                                                                     \
  extern "C" int fn(const void *desc, const ck_env *env) {                                                           \
    const ck_fft_desc &d = *(const ck_fft_desc *)desc;                                                               \
    return d.fp64 ? run<double>(d, env) : run<float>(d, env);                                                        \
  }

} // namespace ckfft

#endif
