/*
 * op_fft.c — the FFT as the dispatcher sees it (ck_opdef_fft, issue 35): one transform along one dim, of kind
 * complex-to-complex, real-to-complex (rfft) or complex-to-real (irfft), forward or inverse, scaled.
 *
 * What is FFT-specific: the dtypes (a complex transform computes in c64, or c128 for f64/c128 and integer inputs as
 * NumPy does; rfft in f32/f64, its result c64/c128; irfft from c64/c128 to f32/f64), the result shape (the dim
 * becomes n, or n/2 + 1 for rfft) and the layout: both backends work on the ladder's descriptor (kernels/fft/fft.h)
 * over a contiguous input [outer, len, inner] into a contiguous output, so a view is copied first (CK_NEED_A) and
 * a strided output goes through a temporary (CK_NEED_OUT). The length along dim must already be the transform's
 * (n, or n/2 + 1 for irfft): lua/cukern/fft.lua pads or cuts to NumPy's n before calling.
 * With call->k > 0 the complex transform runs over two dims at once, dim and the last (dim = ndim - 2, k the last
 * dim's length): fft2 / fftn on the last two dims as one rank-2 cuFFT plan, which PyTorch and CuPy use too (two
 * one-dim passes, the second strided, were 0.92x of PyTorch at 4096^2 c64 on an H100: bench/results/round11).
 */
#include <stdio.h>
#include <string.h>

#include "ck_op.h"
#include "fft/fft.h"
#include "host_fft.h"

static const char *const KIND_NAMES[CK_FFT_NKINDS] = {"fft", "rfft", "irfft"};

const char *ck_fft_kind_name(int kind) { return kind >= 0 && kind < CK_FFT_NKINDS ? KIND_NAMES[kind] : NULL; }

/* computed in double: f64, c128, and (as NumPy) integers and bool; f32, f16, bf16 and c64 in float */
static bool wide(ck_dtype dt) { return !(dt == CK_F32 || dt == CK_F16 || dt == CK_BF16 || dt == CK_C64); }
static bool is_complex(ck_dtype dt) { return dt == CK_C64 || dt == CK_C128; }

static ck_status fft_check(ck_ctx *ctx, ck_plan *p) {
  const ck_call *c = p->call;
  const ck_tensor *x = c->a;
  char d[128];
  if (c->fn < 0 || c->fn >= CK_FFT_NKINDS) return ck_error(ctx, CK_ERR_ARG, "fft: unknown kind %d", c->fn);
  p->name = c->inverse && c->fn == CK_FFT_C2C ? "ifft" : KIND_NAMES[c->fn];
  if (!x) return ck_error(ctx, CK_ERR_ARG, "%s: needs an array to transform", p->name);
  if (c->fn == CK_FFT_R2C && is_complex(x->dtype))
    return ck_error(ctx, CK_ERR_DTYPE, "%s: the input must be real, not %s (use fft)", p->name, ck_describe(x, d, sizeof d));
  if (x->ndim == 0 || c->dim < 0 || c->dim >= x->ndim)
    return ck_error(ctx, CK_ERR_ARG, "%s: dim %d is out of range for %s (dims 1..%d)", p->name, c->dim + 1,
                    ck_describe(x, d, sizeof d), x->ndim);
  if (c->fft_n < 1)
    return ck_error(ctx, CK_ERR_ARG, "%s: n = %lld; the transform needs n >= 1", p->name, (long long)c->fft_n);
  if (c->k > 0) { /* two dims at once: dim and the last one, complex-to-complex (k: the last dim's length) */
    if (c->fn != CK_FFT_C2C)
      return ck_error(ctx, CK_ERR_ARG, "%s: two dims at once are complex-to-complex only", p->name);
    if (c->dim != x->ndim - 2 || x->shape[x->ndim - 1] != c->k)
      return ck_error(ctx, CK_ERR_SHAPE, "%s: a two-dim transform runs over the last two dims; %s has %lld along its "
                      "last, where n2 = %lld", p->name, ck_describe(x, d, sizeof d), (long long)x->shape[x->ndim - 1],
                      (long long)c->k);
  }
  const ck_fft_desc shape = {.kind = c->fn, .n = c->fft_n};
  if (x->shape[c->dim] != ck_fft_xlen(&shape))
    return ck_error(ctx, CK_ERR_SHAPE, "%s: %s has %lld elements along dim %d where n = %lld needs %lld", p->name,
                    ck_describe(x, d, sizeof d), (long long)x->shape[c->dim], c->dim + 1, (long long)c->fft_n,
                    (long long)ck_fft_xlen(&shape));
  const bool w = wide(x->dtype);
  p->in_dt = c->fn == CK_FFT_R2C ? (w ? CK_F64 : CK_F32) : (w ? CK_C128 : CK_C64);
  p->dt = c->fn == CK_FFT_C2R ? (w ? CK_F64 : CK_F32) : (w ? CK_C128 : CK_C64);
  p->nin = 1;
  p->in[0] = x;
  p->dim = c->dim;
  p->has_out = true;
  p->nd = x->ndim;
  memcpy(p->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  p->shape[c->dim] = ck_fft_outlen(&shape);
  return CK_OK;
}

static void fft_describe(const ck_plan *p, void *desc) {
  ck_fft_desc *d = (ck_fft_desc *)desc;
  const ck_tensor *x = p->in[0];
  memset(d, 0, sizeof *d);
  d->kind = p->call->fn;
  d->fp64 = p->in_dt == CK_F64 || p->in_dt == CK_C128;
  d->inverse = p->call->inverse || p->call->fn == CK_FFT_C2R;
  d->n = p->call->fft_n;
  d->n2 = p->call->k; /* (fft_check: > 0 only for the last two dims, so inner stays 1) */
  d->scale = p->call->s1;
  d->outer = d->inner = 1;
  for (int i = 0; i < x->ndim; ++i) {
    if (i < p->dim) d->outer *= x->shape[i];
    else if (i > p->dim + (d->n2 > 0)) d->inner *= x->shape[i];
  }
  d->x = ck_data(x);
  d->out = ck_data(p->out);
}

/* The oracle takes the descriptor too, on contiguous host operands (ck_host_contiguous). */
static ck_status fft_oracle(ck_ctx *ctx, const ck_plan *q) {
  ck_fft_desc d;
  fft_describe(q, &d);
  return ck_host_fft(ctx, &d);
}
static ck_status fft_host(ck_ctx *ctx, ck_plan *p) { return ck_host_contiguous(ctx, p, fft_oracle); }

static unsigned fft_layout(const ck_plan *p, const ck_variant *v) {
  return CK_NEED_A | (v ? CK_NEED_OUT : 0u); /* kernels read and write contiguous [outer, len, inner] */
}

static void fft_what(const ck_plan *p, const ck_variant *v, char *buf, size_t n) {
  char d[128];
  if (p->call->k > 0)
    snprintf(buf, n, "%s (%s) %s dims %d and %d n %lld x %lld", p->name, v->name, ck_describe(p->call->a, d, sizeof d),
             p->dim + 1, p->dim + 2, (long long)p->call->fft_n, (long long)p->call->k);
  else
    snprintf(buf, n, "%s (%s) %s dim %d n %lld", p->name, v->name, ck_describe(p->call->a, d, sizeof d), p->dim + 1,
             (long long)p->call->fft_n);
}

ck_status ck_fft(ck_ctx *ctx, int kind, bool inverse, ck_tensor *out, const ck_tensor *x, int64_t n, int dim,
                 double scale, const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_FFT, .fn = kind, .inverse = inverse, .a = x, .out = out, .fft_n = n,
                        .dim = dim, .s1 = scale, .variant = variant};
  return ck_run(ctx, &call, ran);
}

const ck_opdef ck_opdef_fft = {CK_LADDER("fft", ck_fft), .host_dtypes = CK_DT_FFT, .check = fft_check,
                               .host = fft_host, .layout = fft_layout, .describe = fft_describe, .what = fft_what};
