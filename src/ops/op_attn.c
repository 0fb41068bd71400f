/*
 * op_attn.c — scaled dot-product attention as the dispatcher sees it (ck_opdef_attn, issue 37): forward,
 * out = softmax(q k^T * scale (+ mask)) v over [batch, heads, seq, head_dim].
 *
 * What is attention-specific: the shapes (q [B,H,Sq,D], k [B,H,Skv,D], v [B,H,Skv,Dv], one dtype), the mask
 * (the call's ix, so the dispatcher never converts it: bool, or q's dtype to be added; broadcast to
 * [B,H,Sq,Skv] through 0 strides), the scale (NaN: 1/sqrt(D)) and the layout: q, k, v and out are read through
 * their batch, head and sequence strides (heads transposed out of a [B,S,H,D] tensor cost no copy); only a
 * head dim without unit stride is copied (CK_NEED_A/B/C). No key at all (Skv == 0) gives NaN rows, the
 * softmax of nothing.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ck_op.h"

// ---------------------------------------------------------------- checks

#define ATTN_DTYPES (CK_DT_FLOATS | CK_DT_HALVES) /* what q, k, v may be; the op also takes a bool mask */

static ck_status attn_check(ck_ctx *ctx, ck_plan *p) {
  const ck_call *c = p->call;
  const ck_tensor *q = c->a, *k = c->b, *v = c->c, *m = c->ix;
  char dq[128], dk[128], dv[128], dm[128];
  p->name = "attention";
  if (!q || !k || !v) return ck_error(ctx, CK_ERR_ARG, "attention: needs q, k and v");
  ck_describe(q, dq, sizeof dq), ck_describe(k, dk, sizeof dk), ck_describe(v, dv, sizeof dv);
  if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4)
    return ck_error(ctx, CK_ERR_SHAPE, "attention: q, k, v must be 4-D [batch, heads, seq, head_dim], got %s, %s, %s",
                    dq, dk, dv);
  if (!(CK_DT_BIT(q->dtype) & ATTN_DTYPES))
    return ck_error(ctx, CK_ERR_DTYPE, "attention: q, k, v must be f32, f64, f16 or bf16, got %s", dq);
  if (q->dtype != k->dtype || q->dtype != v->dtype)
    return ck_error(ctx, CK_ERR_DTYPE, "attention: q, k, v must share a dtype, got %s, %s, %s", dq, dk, dv);
  const bool heads_ok = k->shape[0] == q->shape[0] && v->shape[0] == q->shape[0] && k->shape[1] == q->shape[1] &&
                        v->shape[1] == q->shape[1];
  if (!heads_ok || k->shape[3] != q->shape[3] || v->shape[2] != k->shape[2])
    return ck_error(ctx, CK_ERR_SHAPE, "attention: shapes do not agree: q %s, k %s, v %s (q [B,H,Sq,D], k [B,H,Skv,D], "
                    "v [B,H,Skv,Dv])", dq, dk, dv);
  if (m) {
    const int64_t want[4] = {q->shape[0], q->shape[1], q->shape[2], k->shape[2]};
    bool ok = m->ndim <= 4 && (m->dtype == CK_BOOL || m->dtype == q->dtype);
    for (int i = 0; ok && i < m->ndim; ++i) {
      const int64_t e = m->shape[m->ndim - 1 - i];
      ok = e == 1 || e == want[3 - i];
    }
    if (!ok)
      return ck_error(ctx, CK_ERR_SHAPE, "attention: the mask must be bool or %s and broadcast to [%lld,%lld,%lld,%lld], "
                      "got %s", ck_dtype_name(q->dtype), (long long)want[0], (long long)want[1], (long long)want[2],
                      (long long)want[3], ck_describe(m, dm, sizeof dm));
  }
  if (!(isnan(c->s1) || isfinite(c->s1)))
    return ck_error(ctx, CK_ERR_ARG, "attention: scale must be a finite number, got %g", c->s1);
  p->nin = 3;
  p->in[0] = q, p->in[1] = k, p->in[2] = v;
  p->in_dt = p->dt = q->dtype;
  p->has_out = true;
  p->nd = 4;
  const int64_t shape[4] = {q->shape[0], q->shape[1], q->shape[2], v->shape[3]};
  memcpy(p->shape, shape, sizeof shape);
  return CK_OK;
}

/* No key: every row is the softmax of nothing (NaN), as PyTorch's math backend gives. */
static ck_status attn_trivial(ck_ctx *ctx, ck_plan *p, bool *done, char *note, size_t n) {
  if (p->in[1]->shape[2] != 0) return CK_OK;
  *done = true;
  snprintf(note, n, "no keys (seq_kv == 0): NaN rows, nothing launched");
  return ck_ew_generate(ctx, CK_EW_FILL, p->out, NAN, 0);
}

// ---------------------------------------------------------------- the descriptor

static void strides3(const ck_tensor *t, int64_t st[3]) {
  for (int i = 0; i < 3; ++i) st[i] = t->shape[i] == 1 ? 0 : t->stride[i];
}

static void attn_describe(const ck_plan *p, void *desc) {
  ck_attn_desc *d = (ck_attn_desc *)desc;
  const ck_tensor *q = p->in[0], *k = p->in[1], *v = p->in[2], *m = p->call->ix;
  memset(d, 0, sizeof *d);
  d->dtype = q->dtype;
  d->causal = p->call->causal;
  d->batch = q->shape[0], d->heads = q->shape[1], d->sq = q->shape[2], d->skv = k->shape[2];
  d->d = q->shape[3], d->dv = v->shape[3];
  d->q = ck_data(q), d->k = ck_data(k), d->v = ck_data(v), d->o = ck_data(p->out);
  strides3(q, d->q_st), strides3(k, d->k_st), strides3(v, d->v_st), strides3(p->out, d->o_st);
  d->scale = isnan(p->call->s1) ? 1.0 / sqrt(d->d > 1 ? (double)d->d : 1.0) : p->call->s1; /* D = 0: every score 0 */
  d->mask_dtype = -1;
  if (m) { /* right-aligned against [B, H, Sq, Skv]; broadcast dims read at stride 0 */
    d->mask = ck_data(m);
    d->mask_dtype = m->dtype;
    for (int i = 0; i < m->ndim; ++i)
      d->m_st[4 - m->ndim + i] = m->shape[i] == 1 ? 0 : m->stride[i];
  }
}

// ---------------------------------------------------------------- host, layout

static ck_status attn_host_run(ck_ctx *ctx, const ck_plan *q) {
  ck_attn_desc d;
  attn_describe(q, &d);
  return ck_host_attention(ctx, &d);
}

static ck_status attn_host(ck_ctx *ctx, ck_plan *p) { return ck_host_contiguous(ctx, p, attn_host_run); }

static bool unit_last(const ck_tensor *t) { return t->shape[3] <= 1 || t->stride[3] == 1; }

static unsigned attn_layout(const ck_plan *p, const ck_variant *v) {
  if (v) return unit_last(p->out) ? 0 : CK_NEED_OUT;
  return (unit_last(p->in[0]) ? 0 : CK_NEED_A) | (unit_last(p->in[1]) ? 0 : CK_NEED_B) |
         (unit_last(p->in[2]) ? 0 : CK_NEED_C);
}

static void attn_what(const ck_plan *p, const ck_variant *v, char *buf, size_t n) {
  char ops[400];
  snprintf(buf, n, "attention (%s)%s %s", v->name, p->call->causal ? " causal" : "", ck_plan_operands(p, ops, sizeof ops));
}

ck_status ck_attention(ck_ctx *ctx, ck_tensor *out, const ck_tensor *q, const ck_tensor *k, const ck_tensor *v,
                       const ck_tensor *mask, bool causal, double scale, const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_ATTN, .a = q, .b = k, .c = v, .ix = mask, .out = out, .causal = causal,
                        .s1 = scale, .variant = variant};
  return ck_run(ctx, &call, ran);
}

const ck_opdef ck_opdef_attn = {CK_LADDER("attention", ck_attn), .host_dtypes = ATTN_DTYPES | CK_DT_BIT(CK_BOOL),
                                .check = attn_check, .trivial = attn_trivial, .host = attn_host,
                                .layout = attn_layout, .describe = attn_describe, .what = attn_what};
