/*
 * host_sort.c — the sort oracle (issue 33): each line of the descriptor's contiguous [outer, len, inner] is
 * sorted by qsort over (key, position) pairs — a total order, so the result is the stable one — and the first
 * k values and 1-based positions are written.
 *
 * The keys are the device's (kernels/sort/sort_common.cuh), written again here in C: the dtype's bits as an
 * unsigned integer that orders as the values do (floats: the sign-flip trick, -0 as +0, every NaN the largest
 * key; signed integers: the sign bit flipped), complemented for a descending sort. Values are copied from the
 * input, so -0 and NaN payloads are kept.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ck.h"

typedef struct {
  uint64_t key;
  int64_t pos;
} sort_item;

static int cmp_item(const void *a, const void *b) {
  const sort_item *x = (const sort_item *)a, *y = (const sort_item *)b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The element's bits as an unsigned key of its width (bits wide) that orders as the values do. */
static uint64_t key_of(const void *x, int dt, int64_t at, int descending) {
  uint64_t u = 0, k;
  int bits = 32, ebits = 0; /* ebits: exponent bits of a float; 0: an integer */
  bool is_signed = false;
  switch (dt) {
  case CK_F32: u = ((const uint32_t *)x)[at]; ebits = 8; break;
  case CK_F64: u = ((const uint64_t *)x)[at]; bits = 64; ebits = 11; break;
  case CK_F16: u = ((const uint16_t *)x)[at]; bits = 16; ebits = 5; break;
  case CK_BF16: u = ((const uint16_t *)x)[at]; bits = 16; ebits = 8; break;
  case CK_I32: u = ((const uint32_t *)x)[at]; is_signed = true; break;
  case CK_I8: u = ((const uint8_t *)x)[at]; bits = 8; is_signed = true; break;
  case CK_I16: u = ((const uint16_t *)x)[at]; bits = 16; is_signed = true; break;
  case CK_I64: u = ((const uint64_t *)x)[at]; bits = 64; is_signed = true; break;
  case CK_BOOL:
  case CK_U8: u = ((const uint8_t *)x)[at]; bits = 8; break;
  case CK_U32: u = ((const uint32_t *)x)[at]; break;
  default: break;
  }
  const uint64_t all = bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1), sign = (uint64_t)1 << (bits - 1);
  if (ebits) {
    const uint64_t exp = (((uint64_t)1 << ebits) - 1) << (bits - 1 - ebits), man = ((uint64_t)1 << (bits - 1 - ebits)) - 1;
    if ((u & exp) == exp && (u & man)) return descending ? 0 : all; /* NaN: the largest */
    if (u == sign) u = 0;                                              /* -0 -> +0 */
    k = (u & sign) ? (~u & all) : (u | sign);
  } else {
    k = is_signed ? (u ^ sign) : u;
  }
  return descending ? (~k & all) : k;
}

ck_status ck_host_sort(ck_ctx *ctx, const ck_sort_desc *d) {
  sort_item *items = malloc(sizeof(sort_item) * (size_t)(d->len ? d->len : 1));
  if (!items) return ck_error(ctx, CK_ERR_OOM, "sort: out of host memory for a line of %lld elements", (long long)d->len);
  const size_t es = ck_dtype_size((ck_dtype)d->dtype);
  for (int64_t o = 0; o < d->outer; ++o)
    for (int64_t i = 0; i < d->inner; ++i) {
      for (int64_t r = 0; r < d->len; ++r) {
        items[r].key = key_of(d->x, d->dtype, (o * d->len + r) * d->inner + i, d->descending);
        items[r].pos = r;
      }
      qsort(items, (size_t)d->len, sizeof *items, cmp_item);
      for (int64_t j = 0; j < d->k; ++j) {
        const int64_t q = (o * d->k + j) * d->inner + i, from = (o * d->len + items[j].pos) * d->inner + i;
        if (d->out) memcpy((char *)d->out + q * (int64_t)es, (const char *)d->x + from * (int64_t)es, es);
        if (d->idx) d->idx[q] = items[j].pos + 1;
      }
    }
  free(items);
  return CK_OK;
}

/* searchsorted's oracle: a binary search over the same keys as the sort (NaN last, -0 == +0). */
ck_status ck_host_search(ck_ctx *ctx, const ck_search_desc *d) {
  (void)ctx;
  for (int64_t j = 0; j < d->m; ++j) {
    const uint64_t v = key_of(d->values, d->dtype, j, 0);
    int64_t lo = 0, hi = d->n;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      const uint64_t s = key_of(d->sorted, d->dtype, mid, 0);
      if (d->right ? s <= v : s < v) lo = mid + 1;
      else hi = mid;
    }
    d->out[j] = lo + 1;
  }
  return CK_OK;
}
