/*
 * fp8.h — the 8-bit floats e4m3 and e5m2 (OCP 8-bit floating point, as Hopper's tensor cores and cuBLASLt take
 * them), written once for the host (C) and the device (CUDA), as half.h is for f16/bf16: the same integer code
 * runs on both sides, so host and device conversions are bit-identical (spec/fp8_spec.lua checks all 256 patterns
 * of each against an independent Lua decoder, and on the GPU against CUDA's own cuda_fp8.h conversions).
 *
 *   e4m3 (E4M3FN)  1 sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities; NaN is S.1111.111;
 *                  the largest value is 448 (S.1111.110), the smallest normal 2^-6, subnormals k * 2^-9
 *   e5m2           1 sign, 5 exponent bits (bias 15), 2 mantissa bits; IEEE-like: infinities S.11111.00, NaNs
 *                  S.11111.xx; the largest finite value is 57344, the smallest normal 2^-14, subnormals k * 2^-16
 *
 *   ck_e4m3_to_f32, ck_e5m2_to_f32   exact (every value is an f32; e5m2 infinities stay infinite)
 *   ck_f32_to_e4m3, ck_f32_to_e5m2   round to nearest, ties to even, and SATURATE: anything beyond the largest
 *                                    finite value, infinities included, gives +-448 / +-57344 (cuBLASLt's and
 *                                    Transformer Engine's "satfinite" rule: an infinity would poison a scaled
 *                                    GEMM); NaN gives the NaN S.1111.111 (e4m3) / S.11111.11 (e5m2) with x's sign
 *   ck_f64_to_e4m3, ck_f64_to_e5m2   the same from double with one rounding: through f32 rounded to odd
 *                                    (half.h), which has 20+ more bits than either format
 */
#ifndef CK_FP8_H
#define CK_FP8_H

#include "half.h"

/* bits of one format: exponent bits E, mantissa bits M */
CK_HALF_HD float ck_fp8_decode(uint8_t v, int E, int M) {
  const int bias = (1 << (E - 1)) - 1;
  const uint32_t sign = (uint32_t)(v & 0x80u) << 24;
  const uint32_t e = (v >> M) & ((1u << E) - 1u), m = v & ((1u << M) - 1u);
  if (E == 4 && e == 15u && m == 7u) return ck_bits_f32(sign | 0x7fc00000u); /* e4m3 NaN */
  if (E == 5 && e == 31u) return ck_bits_f32(sign | 0x7f800000u | (m ? 0x400000u | (m << 21) : 0u)); /* inf, NaN */
  if (e == 0) { /* zero, subnormal: m * 2^(1 - bias - M), exact */
    const float v32 = (float)m * ck_bits_f32((uint32_t)(127 + 1 - bias - M) << 23);
    return ck_bits_f32(sign | ck_f32_bits(v32));
  }
  return ck_bits_f32(sign | ((e + 127u - (uint32_t)bias) << 23) | (m << (23 - M)));
}

CK_HALF_HD uint8_t ck_fp8_encode(float f, int E, int M) {
  const int bias = (1 << (E - 1)) - 1;
  const uint32_t x = ck_f32_bits(f), ax = x & 0x7fffffffu;
  const uint8_t sign = (uint8_t)((x >> 24) & 0x80u);
  const uint8_t maxbits = E == 4 ? 0x7eu : 0x7bu; /* 448 = 0.1111.110; 57344 = 0.11110.11 */
  if (ax > 0x7f800000u) return (uint8_t)(sign | 0x7fu); /* NaN: S.1111.111 (e4m3), S.11111.11 (e5m2) */
  const uint32_t maxf = ck_f32_bits(ck_fp8_decode(maxbits, E, M));
  if (ax >= maxf) return (uint8_t)(sign | maxbits); /* saturate (infinities too) */
  const uint32_t min_normal = (uint32_t)(127 + 1 - bias) << 23;
  if (ax < min_normal) { /* subnormal result: units of 2^(1 - bias - M), rounded to nearest even */
    const int shift_e = 127 + 1 - bias - M; /* the unit's f32 exponent field */
    const uint32_t e = ax >> 23;
    if ((int)e < shift_e - M - 1) return sign; /* below half the smallest subnormal: 0 (tie case is larger) */
    const uint32_t mant = e ? (ax & 0x7fffffu) | 0x800000u : ax & 0x7fffffu;
    const int shift = 23 + shift_e - (int)(e ? e : 1); /* how many bits of mant lie below the unit */
    if (shift >= 32) return sign;
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return (uint8_t)(sign | q); /* q == 2^M is the smallest normal: its bits are the same */
  }
  const int shift = 23 - M; /* normal: round the f32 mantissa to M bits (a carry moves into the exponent) */
  const uint32_t r = ax + ((1u << (shift - 1)) - 1u) + ((ax >> shift) & 1u);
  const uint32_t v = (r >> shift) - ((uint32_t)(127 - bias) << M);
  return (uint8_t)(sign | (v > maxbits ? maxbits : v));
}

CK_HALF_HD float ck_e4m3_to_f32(uint8_t v) { return ck_fp8_decode(v, 4, 3); }
CK_HALF_HD float ck_e5m2_to_f32(uint8_t v) { return ck_fp8_decode(v, 5, 2); }
CK_HALF_HD uint8_t ck_f32_to_e4m3(float f) { return ck_fp8_encode(f, 4, 3); }
CK_HALF_HD uint8_t ck_f32_to_e5m2(float f) { return ck_fp8_encode(f, 5, 2); }
CK_HALF_HD uint8_t ck_f64_to_e4m3(double d) {
  if (d != d) return (uint8_t)((ck_f64_sign(d) << 7) | 0x7fu);
  return ck_f32_to_e4m3(ck_f64_to_f32_odd(d));
}
CK_HALF_HD uint8_t ck_f64_to_e5m2(double d) {
  if (d != d) return (uint8_t)((ck_f64_sign(d) << 7) | 0x7fu);
  return ck_f32_to_e5m2(ck_f64_to_f32_odd(d));
}

#endif
