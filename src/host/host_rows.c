/*
 * host_rows.c — the oracles of issue 37: the row ops (softmax, log_softmax, layer_norm, rms_norm) over the
 * descriptor's contiguous [outer, len, inner], and scaled dot-product attention over strided q, k, v.
 *
 * Everything is computed in double whatever the dtype and rounded once per output (f16/bf16 through half.h's
 * direct rounding from double), so the specs can hold the device's f32 statistics against it with a tolerance
 * and f64 against it tightly. The rules the device follows too: the softmax's max skips NaN (a NaN still makes
 * the sum, so the row, NaN), -inf elements add nothing to the sum (a row of -inf only is NaN); layer_norm's
 * variance is the biased one (divided by len), computed around the mean (two passes); a bool mask's false and
 * the causal cut (key j > query i, aligned top-left) are -inf scores.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ck.h"
#include "half.h"
#include "host_value.h"

/* The softmax's max (NaN skipped) and sum of exp(x - max) (-inf elements skipped) over s[0..n). */
static void max_sum(const double *s, int64_t n, double *m, double *sum) {
  *m = -INFINITY, *sum = 0;
  for (int64_t j = 0; j < n; ++j)
    if (s[j] > *m) *m = s[j];
  for (int64_t j = 0; j < n; ++j)
    if (s[j] != -INFINITY) *sum += exp(s[j] - *m);
}

// ---------------------------------------------------------------- row ops

/* One line, gathered into v (len doubles), written to out at stride `in`. */
static void row_line(const ck_rows_desc *d, const double *v, int64_t base) {
  const int64_t n = d->len, in = d->inner;
  double a = 0, c = 0;
  if (d->fn == CK_ROWS_SOFTMAX || d->fn == CK_ROWS_LOG_SOFTMAX) {
    double sum;
    max_sum(v, n, &a, &sum);
    c = d->fn == CK_ROWS_SOFTMAX ? 1.0 / sum : a + log(sum);
  } else if (d->fn == CK_ROWS_LAYER_NORM) {
    double m2 = 0;
    for (int64_t r = 0; r < n; ++r) a += v[r];
    a /= (double)n;
    for (int64_t r = 0; r < n; ++r) m2 += (v[r] - a) * (v[r] - a);
    c = 1.0 / sqrt(m2 / (double)n + d->eps);
  } else {
    double ss = 0;
    for (int64_t r = 0; r < n; ++r) ss += v[r] * v[r];
    c = 1.0 / sqrt(ss / (double)n + d->eps);
  }
  for (int64_t r = 0; r < n; ++r) {
    const double w = d->w ? ck_host_get_f(d->w, d->dtype, r) : 1.0, b = d->b ? ck_host_get_f(d->b, d->dtype, r) : 0.0;
    double y;
    switch (d->fn) {
    case CK_ROWS_SOFTMAX: y = exp(v[r] - a) * c; break;
    case CK_ROWS_LOG_SOFTMAX: y = v[r] - c; break;
    case CK_ROWS_LAYER_NORM: y = (v[r] - a) * c * w + b; break;
    default: y = v[r] * c * w; break;
    }
    ck_host_put_f(d->out, d->dtype, base + r * in, y);
  }
}

ck_status ck_host_rows(ck_ctx *ctx, const ck_rows_desc *d) {
  double *v = malloc(sizeof(double) * (size_t)d->len);
  if (!v) return ck_error(ctx, CK_ERR_OOM, "rows: out of host memory for a line of %lld elements", (long long)d->len);
  for (int64_t o = 0; o < d->outer; ++o)
    for (int64_t i = 0; i < d->inner; ++i) {
      const int64_t base = o * d->len * d->inner + i;
      for (int64_t r = 0; r < d->len; ++r) v[r] = ck_host_get_f(d->x, d->dtype, base + r * d->inner);
      row_line(d, v, base);
    }
  free(v);
  return CK_OK;
}

// ---------------------------------------------------------------- attention

/* Query i's scores against every key: scale * q.k, the mask's -inf or addend, the causal cut. */
static void scores(const ck_attn_desc *d, int64_t z, int64_t h, int64_t i, double *s) {
  const int64_t qo = z * d->q_st[0] + h * d->q_st[1] + i * d->q_st[2];
  for (int64_t j = 0; j < d->skv; ++j) {
    if (d->causal && j > i) {
      s[j] = -INFINITY;
      continue;
    }
    const int64_t ko = z * d->k_st[0] + h * d->k_st[1] + j * d->k_st[2];
    double acc = 0;
    for (int64_t e = 0; e < d->d; ++e) acc += ck_host_get_f(d->q, d->dtype, qo + e) * ck_host_get_f(d->k, d->dtype, ko + e);
    s[j] = acc * d->scale;
    if (d->mask) {
      const int64_t mo = z * d->m_st[0] + h * d->m_st[1] + i * d->m_st[2] + j * d->m_st[3];
      if (d->mask_dtype == CK_BOOL) s[j] = ((const uint8_t *)d->mask)[mo] ? s[j] : -INFINITY;
      else s[j] += ck_host_get_f(d->mask, d->mask_dtype, mo);
    }
  }
}

ck_status ck_host_attention(ck_ctx *ctx, const ck_attn_desc *d) {
  double *s = malloc(sizeof(double) * (size_t)(d->skv + d->dv));
  if (!s) return ck_error(ctx, CK_ERR_OOM, "attention: out of host memory for a row of %lld scores", (long long)d->skv);
  double *acc = s + d->skv;
  for (int64_t z = 0; z < d->batch; ++z)
    for (int64_t h = 0; h < d->heads; ++h)
      for (int64_t i = 0; i < d->sq; ++i) {
        double m, sum;
        scores(d, z, h, i, s);
        max_sum(s, d->skv, &m, &sum);
        for (int64_t e = 0; e < d->dv; ++e) acc[e] = 0;
        for (int64_t j = 0; j < d->skv; ++j) {
          const double p = exp(s[j] - m) / sum;
          const int64_t vo = z * d->v_st[0] + h * d->v_st[1] + j * d->v_st[2];
          for (int64_t e = 0; e < d->dv; ++e) acc[e] += p * ck_host_get_f(d->v, d->dtype, vo + e);
        }
        const int64_t oo = z * d->o_st[0] + h * d->o_st[1] + i * d->o_st[2];
        for (int64_t e = 0; e < d->dv; ++e) ck_host_put_f(d->o, d->dtype, oo + e, acc[e]);
      }
  free(s);
  return CK_OK;
}
