/*
 * host_scan.c — the scan oracle (issue 33): cumsum, cumprod, cummax, cummin along one dim, inclusive or
 * exclusive, over the descriptor's contiguous [outer, len, inner] (op_scan.c makes host operands contiguous).
 *
 * One plain loop per line, in element order. Floats accumulate in double and round once per output (f32, f16,
 * bf16 through half.h's direct rounding from double): the device accumulates f32/f16/bf16 in f32, so the specs
 * compare with a tolerance for floats (exact for integer-valued inputs that sum exactly). Integer and bool sums
 * and products accumulate in uint64 (wrapping mod 2^64, like the device) and write i64. MAX/MIN propagate NaN:
 * once a NaN is seen, every later output is NaN; ties keep the earlier value (so -0 and +0 keep the first).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ck.h"
#include "half.h"
#include "host_value.h"

/* An element as the scan sees it: a double for floats (host_value.h), an int64 for integers and bool. */
static int64_t get_i(const void *x, int dt, int64_t i) {
  switch (dt) {
  case CK_I32: return ((const int32_t *)x)[i];
  case CK_BOOL:
  case CK_U8: return ((const uint8_t *)x)[i];
  case CK_I8: return ((const int8_t *)x)[i];
  case CK_I16: return ((const int16_t *)x)[i];
  case CK_U32: return ((const uint32_t *)x)[i];
  case CK_I64: return ((const int64_t *)x)[i];
  default: return 0;
  }
}

static void put_i(void *out, int dt, int64_t i, int64_t v) {
  switch (dt) {
  case CK_I32: ((int32_t *)out)[i] = (int32_t)v; break;
  case CK_BOOL:
  case CK_U8: ((uint8_t *)out)[i] = (uint8_t)v; break;
  case CK_I8: ((int8_t *)out)[i] = (int8_t)v; break;
  case CK_I16: ((int16_t *)out)[i] = (int16_t)v; break;
  case CK_U32: ((uint32_t *)out)[i] = (uint32_t)v; break;
  case CK_I64: ((int64_t *)out)[i] = v; break;
  default: break;
  }
}

/* The integer extremes of dt: the identities of exclusive cummax / cummin. */
static int64_t int_lowest(int dt) {
  switch (dt) {
  case CK_I32: return INT32_MIN;
  case CK_I8: return INT8_MIN;
  case CK_I16: return INT16_MIN;
  case CK_I64: return INT64_MIN;
  default: return 0; /* unsigned, bool */
  }
}
static int64_t int_highest(int dt) {
  switch (dt) {
  case CK_I32: return INT32_MAX;
  case CK_BOOL: return 1;
  case CK_U8: return UINT8_MAX;
  case CK_I8: return INT8_MAX;
  case CK_I16: return INT16_MAX;
  case CK_U32: return UINT32_MAX;
  default: return INT64_MAX;
  }
}

static void scan_line_float(const ck_scan_desc *d, int64_t base, int64_t step) {
  const bool is_max = d->op == CK_SCAN_MAX;
  double acc = d->op == CK_SCAN_SUM ? 0.0 : d->op == CK_SCAN_PROD ? 1.0 : is_max ? -INFINITY : INFINITY;
  for (int64_t r = 0; r < d->len; ++r) {
    const int64_t at = base + r * step;
    const double v = ck_host_get_f(d->x, d->dtype, at);
    double next;
    switch (d->op) {
    case CK_SCAN_SUM: next = acc + v; break;
    case CK_SCAN_PROD: next = acc * v; break;
    default: next = isnan(acc) ? acc : isnan(v) ? v : (is_max ? v > acc : v < acc) ? v : acc; break;
    }
    ck_host_put_f(d->out, d->out_dtype, at, d->exclusive ? acc : next);
    acc = next;
  }
}

static void scan_line_int(const ck_scan_desc *d, int64_t base, int64_t step) {
  const bool is_max = d->op == CK_SCAN_MAX;
  uint64_t acc = d->op == CK_SCAN_PROD ? 1u : 0u; /* sums and products wrap mod 2^64 */
  int64_t ext = is_max ? int_lowest(d->dtype) : int_highest(d->dtype);
  for (int64_t r = 0; r < d->len; ++r) {
    const int64_t at = base + r * step;
    const int64_t v = get_i(d->x, d->dtype, at);
    if (d->op == CK_SCAN_SUM || d->op == CK_SCAN_PROD) {
      const uint64_t next = d->op == CK_SCAN_SUM ? acc + (uint64_t)v : acc * (uint64_t)v;
      int64_t w;
      const uint64_t show = d->exclusive ? acc : next;
      memcpy(&w, &show, sizeof w);
      put_i(d->out, d->out_dtype, at, w);
      acc = next;
    } else {
      const int64_t next = (is_max ? v > ext : v < ext) ? v : ext;
      put_i(d->out, d->out_dtype, at, d->exclusive ? ext : next);
      ext = next;
    }
  }
}

ck_status ck_host_scan(ck_ctx *ctx, const ck_scan_desc *d) {
  (void)ctx;
  const bool flt = ck_dtype_is_float((ck_dtype)d->dtype);
  for (int64_t o = 0; o < d->outer; ++o)
    for (int64_t i = 0; i < d->inner; ++i) {
      const int64_t base = o * d->len * d->inner + i;
      if (flt) scan_line_float(d, base, d->inner);
      else scan_line_int(d, base, d->inner);
    }
  return CK_OK;
}
