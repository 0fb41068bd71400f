/*
 * half.h — f16 (IEEE binary16) and bf16 (bfloat16) storage and conversions, written once for the host (C)
 * and the device (CUDA): the same integer code runs on both sides, so host and device results are
 * bit-identical (no cuda_fp16 intrinsics; spec/half_spec.lua checks the host side exhaustively against an
 * independent Lua implementation, and the GPU specs compare the device's arrays with the host's).
 *
 *   ck_f16_to_f32, ck_bf16_to_f32   exact (every f16/bf16 value is an f32 value; NaN payloads kept)
 *   ck_f32_to_f16, ck_f32_to_bf16   round to nearest, ties to even; overflow gives +-inf; subnormals are
 *                                   produced and rounded correctly; NaN stays NaN (quiet, sign and the top
 *                                   payload bits kept)
 *   ck_f64_to_f16, ck_f64_to_bf16   round to nearest even directly from double (no double rounding): the
 *                                   double is first rounded to f32 "to odd" (exact when it fits, else the
 *                                   odd neighbour), which keeps enough information for the second rounding
 *                                   to equal the direct one (f32 has 13 / 16 more bits than f16 / bf16).
 *                                   A NaN gives the quiet NaN 0x7e00 / 0x7fc0 with the double's sign.
 * On the device the f16 conversions of everything but NaN (and, from f16, inf) are the hardware's cvt (exact one
 * way, round to nearest even the other: the same results as the integer code, which the GPU spec of
 * spec/half_spec.lua checks over every pattern), and NaN gets the integer rule's bits, whose payload rule the
 * hardware's canonical NaN would break: both computed, one selected. Session 13 (H200, f16 a + b, % of memcpy):
 * the integer code 57.9 contiguous / 47.9 one transposed (bf16 91.7); the cvt behind a branch 82.9 / 73.6; both
 * computed 93.8 / 66.7 (session 14, x4: 94.1 / 66.7, bf16 97.4). These are the casts' conversions; the elementwise
 * ops' arithmetic converts with the bare cvt (ew_math.cuh: widen_op, narrow_op), whose NaN payloads are the
 * hardware's.
 * Storage is the raw uint16_t bits. In C++ (kernels) ck_f16_t / ck_bf16_t wrap the bits so that templates
 * can tell the dtypes apart.
 */
#ifndef CK_HALF_H
#define CK_HALF_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define CK_HALF_HD __host__ __device__ __forceinline__
#else
#define CK_HALF_HD static inline
#endif

CK_HALF_HD uint32_t ck_f32_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}
CK_HALF_HD float ck_bits_f32(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

/* ---------------------------------------------------------------- f16 */

CK_HALF_HD float ck_f16_to_f32(uint16_t h) {
#ifdef __CUDA_ARCH__
  /* finite: the hardware's conversion (exact, as below); inf and NaN: sign, all-ones exponent, payload kept. Both
   * computed and one selected: no branch (a branch per conversion cost f16 adds a fifth of their speed) */
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)h));
  const uint32_t special = ((uint32_t)(h & 0x8000u) << 16) | 0x7f800000u | ((uint32_t)(h & 0x3ffu) << 13);
  return (h & 0x7c00u) == 0x7c00u ? __uint_as_float(special) : f;
#endif
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) return ck_bits_f32(sign | 0x7f800000u | (m << 13)); /* inf, NaN (payload kept) */
  if (e == 0) {                                                      /* zero, subnormal: m * 2^-24, exact */
    const float v = (float)m * 5.9604644775390625e-8f;
    return ck_bits_f32(sign | ck_f32_bits(v));
  }
  return ck_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

CK_HALF_HD uint16_t ck_f32_to_f16(float f) {
  const uint32_t x = ck_f32_bits(f);
#ifdef __CUDA_ARCH__
  /* not NaN: the hardware's round to nearest even (the same result as below); NaN: quiet, payload kept, as below.
   * Both computed, one selected (no branch) */
  unsigned short r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
  const uint32_t ax_ = x & 0x7fffffffu;
  const uint16_t nan_ = (uint16_t)(((x >> 16) & 0x8000u) | 0x7e00u | ((ax_ >> 13) & 0x3ffu));
  return ax_ > 0x7f800000u ? nan_ : (uint16_t)r;
#endif
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu)); /* NaN: quiet, payload */
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 (the tie above 65504): inf */
  if (ax >= 0x38800000u) {                                   /* normal: >= 2^-14 */
    const uint32_t m = ax - 0x38000000u;                     /* exponent rebiased 127 -> 15 */
    return (uint16_t)(sign | ((m + 0xfffu + ((m >> 13) & 1u)) >> 13));
  }
  if (ax <= 0x33000000u) return (uint16_t)sign; /* <= 2^-25 (the tie with 0 goes to the even 0) */
  /* subnormal result: ax in (2^-25, 2^-14); units of 2^-24 */
  const uint32_t e = ax >> 23, mant = (ax & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - e; /* 14 .. 24 */
  uint32_t q = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
  if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
  return (uint16_t)(sign | q);
}

/* ---------------------------------------------------------------- bf16 */

CK_HALF_HD float ck_bf16_to_f32(uint16_t h) { return ck_bits_f32((uint32_t)h << 16); }

CK_HALF_HD uint16_t ck_f32_to_bf16(float f) {
  const uint32_t x = ck_f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* NaN: quiet, payload */
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16); /* overflow carries into inf */
}

/* ---------------------------------------------------------------- from double, rounded once */

/* double -> f32 rounded to odd (NaN excluded by the callers). */
CK_HALF_HD float ck_f64_to_f32_odd(double d) {
  const float f = (float)d;
  if ((double)f == d) return f;
  const uint32_t b = ck_f32_bits(f);
  if (b & 1u) return f;
  /* the round-to-nearest result is even: the odd neighbour on d's side */
  const int above = (f < 0 ? -(double)f : (double)f) > (d < 0 ? -d : d); /* |f| > |d| */
  return ck_bits_f32(above ? b - 1u : b + 1u);
}

/* the sign bit of a double (a NaN's too) */
CK_HALF_HD uint32_t ck_f64_sign(double d) {
#ifdef __CUDA_ARCH__
  return (uint32_t)((unsigned long long)__double_as_longlong(d) >> 63);
#else
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return (uint32_t)(u >> 63);
#endif
}

CK_HALF_HD uint16_t ck_f64_to_f16(double d) {
  if (d != d) return (uint16_t)(ck_f64_sign(d) ? 0xfe00u : 0x7e00u);
  return ck_f32_to_f16(ck_f64_to_f32_odd(d));
}

CK_HALF_HD uint16_t ck_f64_to_bf16(double d) {
  if (d != d) return (uint16_t)(ck_f64_sign(d) ? 0xffc0u : 0x7fc0u);
  return ck_f32_to_bf16(ck_f64_to_f32_odd(d));
}

#ifdef __cplusplus
/* Distinct storage types for the kernels' templates (2 bytes, trivially copyable). */
struct ck_f16_t {
  uint16_t bits;
  ck_f16_t() = default;
  CK_HALF_HD explicit constexpr ck_f16_t(int) : bits(0) {} /* T(0): +0 */
};
struct ck_bf16_t {
  uint16_t bits;
  ck_bf16_t() = default;
  CK_HALF_HD explicit constexpr ck_bf16_t(int) : bits(0) {}
};
#endif

#endif
