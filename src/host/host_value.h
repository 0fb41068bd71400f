/*
 * host_value.h — a float element of any float dtype as a double, and back (rounded once: f16/bf16 through
 * half.h's direct rounding from double), for the oracles that compute in double (host_scan.c, host_rows.c).
 */
#ifndef CK_HOST_VALUE_H
#define CK_HOST_VALUE_H

#include <stdint.h>

#include "ck.h"
#include "half.h"

static inline double ck_host_get_f(const void *x, int dt, int64_t i) {
  switch (dt) {
  case CK_F32: return ((const float *)x)[i];
  case CK_F64: return ((const double *)x)[i];
  case CK_F16: return ck_f16_to_f32(((const uint16_t *)x)[i]);
  case CK_BF16: return ck_bf16_to_f32(((const uint16_t *)x)[i]);
  default: return 0;
  }
}

static inline void ck_host_put_f(void *out, int dt, int64_t i, double v) {
  switch (dt) {
  case CK_F32: ((float *)out)[i] = (float)v; break;
  case CK_F64: ((double *)out)[i] = v; break;
  case CK_F16: ((uint16_t *)out)[i] = ck_f64_to_f16(v); break;
  case CK_BF16: ((uint16_t *)out)[i] = ck_f64_to_bf16(v); break;
  default: break;
  }
}

#endif
