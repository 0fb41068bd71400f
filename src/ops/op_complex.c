/*
 * op_complex.c — the fused complex ops as the dispatcher sees them (ck_opdef_complex, issue 35): elementwise
 * arithmetic, comparisons and functions of c64/c128 arrays, and their sums, each one pass over memory.
 *
 * What is complex-specific: the compute dtype (the operands' promotion made complex: c64 from c64, f32, f16 and
 * bf16, else c128; real operands are converted by the dispatcher, as every op converts to its compute dtype); the
 * result dtype (complex; the part's dtype for abs and angle; bool for eq and ne); the number operand as a complex
 * pair (s1 + i s2, rounded to the compute precision by the rungs); the broadcast shape (the dispatcher's rule);
 * the descriptor (kernels/complex/complex.h): elementwise ops as ck_opdef_ew describes them (element strides, 0 on
 * broadcast dims, dims in the output's memory order and coalesced, no layout copies: the vectorized rung declines
 * what it cannot stream and the strided one runs), sums over a contiguous [outer, len, inner] (a view is copied
 * first, CK_NEED_A; out through a contiguous temporary when it is strided). Exact in place (a:mul_(b)) is safe
 * for the elementwise ops: each element is read by the thread that writes it.
 * Why an op of its own and not a column of the elementwise table: a complex row needs a second number, results
 * of another dtype (abs, eq) and functions with no real row (conj, angle), and a column would recompile every
 * elementwise rung and change kernels/ck_kernels.h (docs/architecture.md, "Complex numbers").
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ck_op.h"
#include "complex/complex.h"
#include "host_complex.h"

static const char *const NAMES[CK_CX_NFNS] = {"add", "sub", "mul", "div", "eq", "ne", "neg", "conj", "exp",
                                              "log", "sqrt", "abs", "angle", "sum", "mean"};

int ck_cx_fn_parse(const char *name) {
  for (int f = 0; f < CK_CX_NFNS; ++f)
    if (strcmp(name, NAMES[f]) == 0) return f;
  return -1;
}
const char *ck_cx_fn_name(int fn) { return fn >= 0 && fn < CK_CX_NFNS ? NAMES[fn] : NULL; }

static bool is_reduce(int fn) { return fn >= CK_CX_FIRST_REDUCE; }
static bool is_binary(int fn) { return fn < CK_CX_FIRST_UNARY; }

/* The complex dtype a real or complex dtype computes in. */
static ck_dtype complex_of(ck_dtype dt) {
  if (dt == CK_C64 || dt == CK_C128) return dt;
  return dt == CK_F32 || dt == CK_F16 || dt == CK_BF16 ? CK_C64 : CK_C128;
}

static ck_status cx_check(ck_ctx *ctx, ck_plan *p) {
  const ck_call *c = p->call;
  const ck_tensor *a = c->a;
  char d[128];
  ck_status st;
  if (c->fn < 0 || c->fn >= CK_CX_NFNS) return ck_error(ctx, CK_ERR_ARG, "complex: unknown op id %d", c->fn);
  p->name = NAMES[c->fn];
  if (!a) return ck_error(ctx, CK_ERR_ARG, "%s: needs an array operand", p->name);
  p->nin = 1;
  p->in[0] = a;
  p->like = a;
  p->has_out = true;
  ck_dtype dt = a->dtype;
  p->nd = a->ndim;
  memcpy(p->shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
  if (is_binary(c->fn) && c->b) {
    p->nin = 2;
    p->in[1] = c->b;
    dt = ck_promote(a->dtype, c->b->dtype);
    if ((st = ck_broadcast_shape(ctx, p->name, a, c->b, &p->nd, p->shape))) return st;
    if (ck_numel(c->b) > ck_numel(a)) p->like = c->b;
  }
  p->in_dt = complex_of(dt);
  const ck_dtype part = p->in_dt == CK_C64 ? CK_F32 : CK_F64;
  p->dt = c->fn == CK_CX_EQ || c->fn == CK_CX_NE ? CK_BOOL : c->fn == CK_CX_ABS || c->fn == CK_CX_ANGLE ? part : p->in_dt;
  p->inplace_ok = !is_reduce(c->fn);
  if (!is_reduce(c->fn)) return CK_OK;
  /* sums: along dim (the length reduced: p->len), or every element (dim -1) */
  if (c->dim < -1 || c->dim >= (a->ndim ? a->ndim : 1))
    return ck_error(ctx, CK_ERR_ARG, "%s: dim %d is out of range for %s (dims 1..%d)", p->name, c->dim + 1,
                    ck_describe(a, d, sizeof d), a->ndim);
  p->like = NULL;
  p->dim = a->ndim ? c->dim : -1;
  p->len = p->dim < 0 ? ck_numel(a) : a->shape[p->dim];
  int k = 0;
  for (int i = 0; i < a->ndim; ++i) {
    if (i == p->dim || p->dim < 0) {
      if (c->keepdim) p->shape[k++] = 1;
    } else {
      p->shape[k++] = a->shape[i];
    }
  }
  p->nd = k;
  return CK_OK;
}

/* An empty sum is 0, an empty mean NaN (NumPy's nan+nanj): written without a launch. */
static ck_status cx_trivial(ck_ctx *ctx, ck_plan *p, bool *done, char *note, size_t n) {
  if (!is_reduce(p->call->fn) || p->len > 0) return CK_OK;
  ck_tensor pairs = {0};
  ck_status st = ck_pair_view(ctx, &pairs, p->out);
  if (!st) st = ck_ew_generate(ctx, CK_EW_FILL, &pairs, p->call->fn == CK_CX_MEAN ? NAN : 0.0, 0);
  ck_release(&pairs);
  *done = true;
  snprintf(note, n, "empty reduction: filled with %s", p->call->fn == CK_CX_MEAN ? "NaN" : "0");
  return st;
}

static void describe_sum(const ck_plan *p, ck_cx_desc *d) {
  const ck_tensor *x = p->in[0];
  d->outer = d->inner = 1;
  d->len = p->len;
  if (p->dim >= 0)
    for (int i = 0; i < x->ndim; ++i) {
      if (i < p->dim) d->outer *= x->shape[i];
      else if (i > p->dim) d->inner *= x->shape[i];
    }
  d->scale = p->call->fn == CK_CX_MEAN && p->len > 0 ? 1.0 / (double)p->len : 1.0;
}

static void cx_describe(const ck_plan *p, void *desc) {
  ck_cx_desc *d = (ck_cx_desc *)desc;
  const ck_tensor *out = p->out;
  memset(d, 0, sizeof *d);
  d->fn = p->call->fn;
  d->fp64 = p->in_dt == CK_C128;
  d->out = ck_data(out);
  d->a = ck_data(p->in[0]);
  if (is_reduce(d->fn)) {
    describe_sum(p, d);
    return;
  }
  d->ndim = out->ndim;
  memcpy(d->shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
  d->numel = ck_numel(out);
  memcpy(d->out_st, out->stride, sizeof(int64_t) * (size_t)out->ndim);
  ck_aligned_strides(d->a_st, d->ndim, p->in[0]);
  if (p->nin == 2) {
    d->b = ck_data(p->in[1]);
    ck_aligned_strides(d->b_st, d->ndim, p->in[1]);
  } else {
    d->b_scalar = 1;
    d->scalar_left = p->call->scalar_left ? 1 : 0;
    d->s_re = p->call->s1;
    d->s_im = p->call->s2;
  }
  int64_t *const st[3] = {d->out_st, d->a_st, d->b_st};
  ck_sort_dims(d->ndim, d->shape, 3, st);
  const int n = ck_coalesce_dims(d->ndim, d->shape, 3, st, p->nin == 2 ? 3 : 2);
  for (int k = n; k < CK_MAX_DIMS; ++k) d->shape[k] = 1, d->out_st[k] = d->a_st[k] = d->b_st[k] = 0;
  d->ndim = n;
  if (n == 0) d->ndim = 1, d->out_st[0] = 1; /* one element: a and b read at offset 0 */
}

static ck_status sum_oracle(ck_ctx *ctx, const ck_plan *q) {
  ck_cx_desc d;
  cx_describe(q, &d);
  return ck_host_complex(ctx, &d);
}

static ck_status cx_host(ck_ctx *ctx, ck_plan *p) {
  if (is_reduce(p->call->fn)) return ck_host_contiguous(ctx, p, sum_oracle);
  ck_cx_desc d;
  cx_describe(p, &d);
  return ck_host_complex(ctx, &d);
}

static unsigned cx_layout(const ck_plan *p, const ck_variant *v) {
  return is_reduce(p->call->fn) ? CK_NEED_A | CK_NEED_OUT : 0u; /* sums read and write contiguous memory */
}

ck_status ck_complex_op(ck_ctx *ctx, int fn, ck_tensor *out, const ck_tensor *a, const ck_tensor *b, double s_re,
                        double s_im, bool scalar_left, int dim, bool keepdim, const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_COMPLEX, .fn = fn, .a = a, .b = b, .out = out, .s1 = s_re, .s2 = s_im,
                        .scalar_left = scalar_left, .dim = dim, .keepdim = keepdim, .variant = variant};
  return ck_run(ctx, &call, ran);
}

const ck_opdef ck_opdef_complex = {CK_LADDER("complex", ck_complex), .host_dtypes = CK_DT_CX, .check = cx_check,
                                   .trivial = cx_trivial, .host = cx_host, .layout = cx_layout,
                                   .describe = cx_describe};
