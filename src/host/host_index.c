/*
 * host_index.c — the index ops' oracle (src/ops/op_index.c says what each op reads and writes; the descriptor is
 * kernels/ck_kernels.h's ck_index_desc, with host pointers). Elements move by their size (memcpy); only the
 * accumulating scatters add, per dtype, in index order (so float sums of repeated destinations are the
 * sequential ones; the GPU's atomics may order them differently). The scan of the index runs before anything
 * is written; op_index.c formats its findings (and formats the GPU's from the same scan of a host copy).
 */
#include <stdlib.h>
#include <string.h>

#include "ck.h"
#include "half.h"

typedef struct {
  int64_t out, src, ix, y, dup;
} offs;

static offs walk(const ck_ix_desc *d, int64_t p) {
  offs o = {0, 0, 0, 0, 0};
  for (int k = d->nd - 1; k >= 0; --k) {
    const int64_t i = p % d->shape[k];
    p /= d->shape[k];
    o.out += i * d->out_st[k];
    o.src += i * d->src_st[k];
    o.ix += i * d->ix_st[k];
    o.y += i * d->y_st[k];
    o.dup += i * d->dup_st[k];
  }
  return o;
}

static int64_t load_ix(const ck_ix_desc *d, int64_t off) {
  return d->ix_dt == CK_I64 ? ((const int64_t *)d->ix)[off] : (int64_t)((const int32_t *)d->ix)[off];
}

void ck_host_index_check(const ck_ix_desc *d, int64_t *bad, int64_t *dup, int64_t *first) {
  *bad = *dup = *first = -1;
  uint8_t *bits = d->dup_check ? (uint8_t *)calloc((size_t)(d->dup_numel / 8 + 1), 1) : NULL;
  int64_t dest = -1;
  for (int64_t p = 0; p < d->numel; ++p) {
    const offs o = walk(d, p);
    const int64_t i = load_ix(d, o.ix);
    if (i < 1 || i > d->bound) {
      *bad = p;
      break;
    }
    if (bits && *dup < 0) {
      const int64_t t = o.dup + (i - 1) * d->dup_dim_st;
      if (bits[t >> 3] & (1u << (t & 7))) *dup = p, dest = t;
      bits[t >> 3] |= (uint8_t)(1u << (t & 7));
    }
  }
  free(bits);
  if (*bad >= 0) *dup = -1;
  for (int64_t p = 0; *dup >= 0 && p < *dup; ++p) { /* the earlier position writing the same element */
    const offs o = walk(d, p);
    if (o.dup + (load_ix(d, o.ix) - 1) * d->dup_dim_st == dest) {
      *first = p;
      break;
    }
  }
}

/* dst += v in dtype dt (bool: or). */
static void add_one(int dt, void *dst, const void *v) {
  switch (dt) {
#define ADD(ID, T)                                                                                                           \
  case ID: {                                                                                                                 \
    T a, b;                                                                                                                  \
    memcpy(&a, dst, sizeof a);                                                                                               \
    memcpy(&b, v, sizeof b);                                                                                                 \
    a = (T)(a + b);                                                                                                          \
    memcpy(dst, &a, sizeof a);                                                                                               \
    break;                                                                                                                   \
  }
    ADD(CK_F32, float)
    ADD(CK_F64, double)
    ADD(CK_I32, uint32_t) /* integers wrap: added as unsigned, two's complement */
    ADD(CK_U32, uint32_t)
    ADD(CK_I64, uint64_t)
    ADD(CK_U8, uint8_t)
    ADD(CK_I8, uint8_t)
    ADD(CK_I16, uint16_t)
#undef ADD
  case CK_BOOL: *(uint8_t *)dst = (uint8_t)((*(uint8_t *)dst | *(const uint8_t *)v) ? 1 : 0); break;
  case CK_F16: {
    uint16_t a, b;
    memcpy(&a, dst, 2), memcpy(&b, v, 2);
    a = ck_f32_to_f16(ck_f16_to_f32(a) + ck_f16_to_f32(b));
    memcpy(dst, &a, 2);
    break;
  }
  case CK_BF16: {
    uint16_t a, b;
    memcpy(&a, dst, 2), memcpy(&b, v, 2);
    a = ck_f32_to_bf16(ck_bf16_to_f32(a) + ck_bf16_to_f32(b));
    memcpy(dst, &a, 2);
    break;
  }
  default: break;
  }
}

static bool nonzero(const ck_ix_desc *d, const uint8_t *e) {
  uint64_t v = 0, w = 0;
  if (d->ix_es <= 8) memcpy(&v, e, (size_t)d->ix_es); /* little-endian: the low bytes */
  else memcpy(&v, e, 8), memcpy(&w, e + 8, 8), v |= w;
  return (v & d->nz_mask) != 0;
}

static void compaction(const ck_ix_desc *d) {
  const int64_t es = d->es;
  int64_t k = 0;
  for (int64_t p = 0; p < d->numel; ++p) {
    const offs o = walk(d, p);
    if (!nonzero(d, (const uint8_t *)d->ix + o.ix * d->ix_es)) continue;
    if (d->fn == CK_IX_MASKED_SELECT) memcpy((char *)d->out + k * es, (const char *)d->src + o.src * es, (size_t)es);
    else if (d->fn == CK_IX_NONZERO && d->dim_st == 1) {
      int64_t q = p;
      for (int j = d->nd - 1; j >= 0; --j) ((int64_t *)d->out)[k * d->nd + j] = q % d->shape[j] + 1, q /= d->shape[j];
    } else if (d->fn == CK_IX_NONZERO)
      ((int64_t *)d->out)[k] = p + 1;
    ++k;
  }
  if (d->fn == CK_IX_COUNT) *(int64_t *)d->out = k;
}

void ck_host_index(const ck_ix_desc *d) {
  const int fn = d->fn;
  const size_t es = (size_t)d->es;
  char *out = (char *)d->out;
  const char *src = (const char *)d->src;
  if (fn == CK_IX_CAT) {
    for (int i = 0; i < d->n; ++i)
      for (int64_t r = 0; r < d->rows && d->in[i].row_bytes; ++r)
        memcpy(out + d->in[i].dst_off + r * d->out_pitch, (const char *)d->in[i].src + r * d->in[i].src_pitch,
               (size_t)d->in[i].row_bytes);
    return;
  }
  if (fn == CK_IX_COUNT || fn == CK_IX_MASKED_SELECT || fn == CK_IX_NONZERO) {
    compaction(d);
    return;
  }
  for (int64_t p = 0; p < d->numel; ++p) {
    const offs o = walk(d, p);
    if (fn == CK_IX_WHERE) {
      const bool c = ((const uint8_t *)d->ix)[o.ix] != 0;
      memcpy(out + o.out * (int64_t)es, c ? src + o.src * (int64_t)es : (const char *)d->y + o.y * (int64_t)es, es);
      continue;
    }
    const int64_t i = load_ix(d, o.ix) - 1; /* checked before (ck_host_index_check) */
    switch (fn) {
    case CK_IX_GATHER:
    case CK_IX_INDEX_SELECT:
    case CK_IX_TAKE: memcpy(out + o.out * (int64_t)es, src + (o.src + i * d->dim_st) * (int64_t)es, es); break;
    case CK_IX_SCATTER_ADD:
    case CK_IX_INDEX_ADD: add_one(d->dtype, out + (o.out + i * d->dim_st) * (int64_t)es, src + o.src * (int64_t)es); break;
    default: memcpy(out + (o.out + i * d->dim_st) * (int64_t)es, src + o.src * (int64_t)es, es); break;
    }
  }
}
