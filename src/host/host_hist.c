/*
 * host_hist.c — the histogram oracle (issue 33): every element of the descriptor's contiguous x read as a double
 * (halves through half.h) and counted in the bin kernels/hist/hist_bin.h gives, the rule the device uses.
 */
#include <stdint.h>
#include <string.h>

#include "ck.h"
#include "half.h"
#include "hist/hist_bin.h"

static double value_at(const void *x, int dt, int64_t i) {
  switch (dt) {
  case CK_F32: return ((const float *)x)[i];
  case CK_F64: return ((const double *)x)[i];
  case CK_I32: return ((const int32_t *)x)[i];
  case CK_F16: return ck_f16_to_f32(((const uint16_t *)x)[i]);
  case CK_BF16: return ck_bf16_to_f32(((const uint16_t *)x)[i]);
  case CK_BOOL:
  case CK_U8: return ((const uint8_t *)x)[i];
  case CK_I8: return ((const int8_t *)x)[i];
  case CK_I16: return ((const int16_t *)x)[i];
  case CK_U32: return ((const uint32_t *)x)[i];
  case CK_I64: return (double)((const int64_t *)x)[i];
  default: return 0;
  }
}

ck_status ck_host_hist(ck_ctx *ctx, const ck_hist_desc *d) {
  (void)ctx;
  memset(d->out, 0, sizeof(int64_t) * (size_t)d->bins);
  for (int64_t i = 0; i < d->n; ++i) {
    const int64_t b = ck_hist_bin(value_at(d->x, d->dtype, i), d->lo, d->hi, d->bins);
    if (b >= 0) d->out[b]++;
  }
  return CK_OK;
}
