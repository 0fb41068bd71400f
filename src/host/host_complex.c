/*
 * host_complex.c — the oracle of the complex ops (issue 35): each op in one pass over its operands, with the
 * rungs' own arithmetic (kernels/complex/cx_math.h, the same text compiled as C here), so host and device compute
 * the same function; c64 in float as the rungs do, sums accumulated in double (as the rungs, and as the real
 * host reductions do).
 */
#include <math.h>
#include <stdint.h>

#include "host_complex.h"
#include "complex/cx_math.h"

// ---------------------------------------------------------------- elementwise

/* The byte offset of element e (row-major over the descriptor's dims) in each operand. */
static void offsets(const ck_cx_desc *d, int64_t e, int64_t *oo, int64_t *ao, int64_t *bo) {
  *oo = *ao = *bo = 0;
  for (int k = d->ndim - 1; k >= 0; --k) {
    const int64_t i = e % d->shape[k];
    e /= d->shape[k];
    *oo += i * d->out_st[k], *ao += i * d->a_st[k], *bo += i * d->b_st[k];
  }
}

/* One precision: C complex, T real, P the cx_math.h prefix. */
#define HOST_EW(NAME, C, T, P)                                                                                      \
  static void NAME(const ck_cx_desc *d) {                                                                           \
    const C *a = (const C *)d->a, *b = (const C *)d->b;                                                             \
    const C s = P##mk((T)d->s_re, (T)d->s_im);                                                                      \
    for (int64_t e = 0; e < d->numel; ++e) {                                                                        \
      int64_t oo, ao, bo;                                                                                           \
      offsets(d, e, &oo, &ao, &bo);                                                                                 \
      C x = a[ao], y = d->b_scalar ? s : b[bo];                                                                     \
      if (d->scalar_left) {                                                                                         \
        const C t = x;                                                                                              \
        x = y, y = t;                                                                                               \
      }                                                                                                             \
      C *oc = (C *)d->out + oo;                                                                                     \
      T *ot = (T *)d->out + oo;                                                                                     \
      uint8_t *ob = (uint8_t *)d->out + oo;                                                                         \
      switch (d->fn) {                                                                                              \
      case CK_CX_ADD: *oc = P##add(x, y); break;                                                                    \
      case CK_CX_SUB: *oc = P##sub(x, y); break;                                                                    \
      case CK_CX_MUL: *oc = P##mul(x, y); break;                                                                    \
      case CK_CX_DIV: *oc = P##div(x, y); break;                                                                    \
      case CK_CX_EQ: *ob = (uint8_t)P##eq(x, y); break;                                                             \
      case CK_CX_NE: *ob = (uint8_t)!P##eq(x, y); break;                                                            \
      case CK_CX_NEG: *oc = P##neg(x); break;                                                                       \
      case CK_CX_CONJ: *oc = P##conj(x); break;                                                                     \
      case CK_CX_EXP: *oc = P##exp(x); break;                                                                       \
      case CK_CX_LOG: *oc = P##log(x); break;                                                                       \
      case CK_CX_SQRT: *oc = P##sqrt(x); break;                                                                     \
      case CK_CX_ABS: *ot = P##abs(x); break;                                                                       \
      case CK_CX_ANGLE: *ot = P##angle(x); break;                                                                   \
      default: break;                                                                                               \
      }                                                                                                             \
    }                                                                                                               \
  }
HOST_EW(ew_c64, ck_c64_t, float, ckcf_)
HOST_EW(ew_c128, ck_c128_t, double, ckcd_)

// ---------------------------------------------------------------- sums

#define HOST_SUM(NAME, C, T)                                                                                        \
  static void NAME(const ck_cx_desc *d) {                                                                           \
    const C *x = (const C *)d->a;                                                                                   \
    C *out = (C *)d->out;                                                                                           \
    for (int64_t o = 0; o < d->outer; ++o)                                                                          \
      for (int64_t i = 0; i < d->inner; ++i) {                                                                      \
        double re = 0, im = 0;                                                                                      \
        const C *p = x + o * d->len * d->inner + i;                                                                 \
        for (int64_t r = 0; r < d->len; ++r) re += (double)p[r * d->inner].re, im += (double)p[r * d->inner].im;    \
        out[o * d->inner + i].re = (T)(re * d->scale);                                                              \
        out[o * d->inner + i].im = (T)(im * d->scale);                                                              \
      }                                                                                                             \
  }
HOST_SUM(sum_c64, ck_c64_t, float)
HOST_SUM(sum_c128, ck_c128_t, double)

ck_status ck_host_complex(ck_ctx *ctx, const ck_cx_desc *d) {
  (void)ctx;
  if (d->fn >= CK_CX_FIRST_REDUCE) (d->fp64 ? sum_c128 : sum_c64)(d);
  else (d->fp64 ? ew_c128 : ew_c64)(d);
  return CK_OK;
}
