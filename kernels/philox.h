/*
 * philox.h — Philox-4x32-10 counter-based generator, identical on host (C) and device (CUDA), so that
 * ck.seed(n) gives the same values on both backends. Element i of a draw uses counter (i, offset_lo,
 * offset_hi, 0) and key (seed_lo, seed_hi); the first 32-bit output makes a uniform, the first two a
 * normal (Box-Muller, computed in double and rounded once).
 */
#ifndef CK_PHILOX_H
#define CK_PHILOX_H
#include <stdint.h>
#include <math.h>

#ifdef __CUDACC__
#define CK_HD __host__ __device__ __forceinline__
#else
#define CK_HD static inline
#endif

CK_HD uint32_t ck_mulhilo32(uint32_t a, uint32_t b, uint32_t *hi) {
  uint64_t p = (uint64_t)a * (uint64_t)b;
  *hi = (uint32_t)(p >> 32);
  return (uint32_t)p;
}

/* out[0..3] = Philox4x32-10(counter c0..c3, key k0, k1) */
CK_HD void ck_philox4x32(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1,
                         uint32_t out[4]) {
  for (int r = 0; r < 10; ++r) {
    uint32_t hi0, hi1;
    uint32_t lo0 = ck_mulhilo32(0xD2511F53u, c0, &hi0);
    uint32_t lo1 = ck_mulhilo32(0xCD9E8D57u, c2, &hi1);
    uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/* Uniform in [0, 1) with as many random bits as the dtype's significand, so that every draw is exactly a
 * value of the dtype below 1 (rounding a finer draw to f16 could give 1.0): f64 selects 24 bits (0: f32),
 * 53 (1: f64), 11 (2: f16) or 8 (3: bf16). Exact on both backends. */
CK_HD double ck_rand_uniform(uint64_t seed, uint64_t offset, uint64_t i, int f64) {
  uint32_t o[4];
  ck_philox4x32((uint32_t)i, (uint32_t)(i >> 32), (uint32_t)offset, (uint32_t)(offset >> 32), (uint32_t)seed,
                (uint32_t)(seed >> 32), o);
  if (f64 == 1) return (double)((((uint64_t)o[0] << 32) | o[1]) >> 11) * (1.0 / 9007199254740992.0);
  if (f64 == 2) return (double)(o[0] >> 21) * (1.0 / 2048.0);
  if (f64 == 3) return (double)(o[0] >> 24) * (1.0 / 256.0);
  return (double)(o[0] >> 8) * (1.0 / 16777216.0);
}

/* Standard normal (Box-Muller on two 32-bit outputs). */
CK_HD double ck_rand_normal(uint64_t seed, uint64_t offset, uint64_t i) {
  uint32_t o[4];
  ck_philox4x32((uint32_t)i, (uint32_t)(i >> 32), (uint32_t)offset, (uint32_t)(offset >> 32), (uint32_t)seed,
                (uint32_t)(seed >> 32), o);
  double u1 = ((double)o[0] + 1.0) * (1.0 / 4294967297.0); /* (0, 1]: log is finite */
  double u2 = (double)o[1] * (1.0 / 4294967296.0);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
#endif
