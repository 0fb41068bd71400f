/*
 * op_elementwise.c — elementwise ops as the dispatcher sees them (ck_opdef_ew), and the dim ordering that
 * elementwise work and copies share (ck_ew_order).
 *
 * What is elementwise-specific: the op's kind and dtype rules come from the table (ew_ops.def); the result
 * dtype (f32 + f64 -> f64; i32 with a float -> that float; an i32 array with a number that is not an i32
 * value -> f64, pow included, as NumPy and torch promote; COPY into a given out casts to out's dtype); the
 * number of a binary op or of pow rounded to the op's dtype first (number_in); the broadcast
 * shape; a new result follows the larger operand's memory order; and the descriptor: element strides with
 * 0 on broadcast dims, trailing dims aligned, dims put in the output's memory order and coalesced (so
 * a:t() + b:t() streams). Exact in place (out = a with the same layout) is safe: each element is read by
 * the thread that writes it. No layout copies: the contiguous variant's supports() refuses what it cannot
 * take and the strided one runs.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ck_op.h"
#include "ew_ops.h"
#include "half.h"

// ---------------------------------------------------------------- dim ordering

/* Put the dims in the output's memory order (largest stride first) so that ck_ew_coalesce can merge
 * operands that share a permuted dense layout into one contiguous run. Generators keep the logical order:
 * their values depend on the row-major index. */
void ck_ew_order(ck_ew_desc *d) {
  if (ck_ew_op_kind(d->op) != CK_EWK_GEN) {
    int64_t *const st[3] = {d->out_st, d->a_st, d->b_st};
    ck_sort_dims(d->ndim, d->shape, 3, st);
  }
  ck_ew_coalesce(d);
}

// ---------------------------------------------------------------- the op definition

/* The ops whose call carries a number operand: a binary op with a number on one side, and pow with a number
 * exponent (the unary POWS). One rule serves all of them (ew_check, number_in): the number keeps an integer
 * operand's dtype when it is a value of that dtype (an integral exponent for pow), and promotes it to f64
 * otherwise; it is rounded to the op's dtype before use. */
static bool takes_number(const ck_call *c) {
  return c->fn == CK_EW_POWS || (ck_ew_op_kind(c->fn) == CK_EWK_BINARY && !c->b);
}

/* The call's number as the op uses it: rounded once to f32, f16 or bf16 when that is the op's dtype (so
 * bf16 3 ^ (1 + 2^-8) is 3 ^ 1, as 3 * (1 + 2^-8) is 3 * 1); other scalars (clamp's bounds, generators'
 * parameters, f64 and integer numbers) as given. */
static double number_in(const ck_plan *p) {
  const double s = p->call->s1;
  if (!takes_number(p->call) || s != s) return s;
  switch (p->in_dt) {
  case CK_F32: return (double)(float)s;
  case CK_F16: return (double)ck_f16_to_f32(ck_f64_to_f16(s));
  case CK_BF16: return (double)ck_bf16_to_f32(ck_f64_to_bf16(s));
  default: return s;
  }
}

/* The range of an integer dtype (bool: 0..1). */
static void int_range(ck_dtype dt, int64_t *lo, int64_t *hi) {
  const int bits = 8 * (int)ck_dtype_size(dt);
  if (dt == CK_BOOL) *lo = 0, *hi = 1;
  else if (ck_dtype_is_signed(dt)) *lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1)), *hi = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
  else *lo = 0, *hi = ((int64_t)1 << bits) - 1; /* u8, u32 */
}

/* The call's number as an exact integer (a Lua integer, or a float with an integral value); false if it is
 * not one. */
static bool number_int(const ck_call *c, int64_t *v) {
  if (c->s_int) return *v = c->si, true;
  const double s = c->s1;
  if (!(s == floor(s) && s >= -9223372036854775808.0 && s < 9223372036854775808.0)) return false;
  return *v = (int64_t)s, true;
}

/* The number as a value of the integer dtype dt, if it is one. */
static bool number_fits(const ck_call *c, ck_dtype dt, int64_t *v) {
  int64_t lo, hi;
  int_range(dt, &lo, &hi);
  return number_int(c, v) && *v >= lo && *v <= hi;
}

/* The integer scalar the kernels read (ck_ew_desc.si) for an integer compute dtype: the exact number, or the
 * float -> integer rule's value (bool: != 0). */
static int64_t number_si(const ck_plan *p) {
  const ck_call *c = p->call;
  int64_t v;
  if (ck_dtype_is_float(p->in_dt)) return 0;
  if (number_fits(c, p->in_dt, &v) || (c->fn == CK_EW_POWS && number_int(c, &v))) return v;
  if (p->in_dt == CK_BOOL) return c->s_int ? c->si != 0 : c->s1 != 0;
  return number_int(c, &v) ? v : (int64_t)ck_ew_f2i64(c->s1);
}

static ck_status ew_check(ck_ctx *ctx, ck_plan *p) {
  const ck_call *c = p->call;
  const int kind = ck_ew_op_kind(c->fn), cls = ck_ew_op_dtypes(c->fn);
  char d[128];
  ck_status st;
  int64_t v;
  if (kind < 0) return ck_error(ctx, CK_ERR_ARG, "elementwise: unknown op id %d", c->fn);
  p->name = ck_ew_op_name(c->fn);
  p->has_out = true;
  if (kind == CK_EWK_GEN) {
    if (!c->out || !c->out->st) return ck_error(ctx, CK_ERR_ARG, "%s: needs an allocated output array", p->name);
    p->dt = p->in_dt = c->out->dtype;
    p->nd = c->out->ndim;
    memcpy(p->shape, c->out->shape, sizeof(int64_t) * (size_t)p->nd);
    if (c->fn == CK_EW_FILL && c->s_int && !ck_dtype_is_float(p->dt) && p->dt != CK_BOOL && !number_fits(c, p->dt, &v)) {
      /* (a float number converts by the float -> integer rule instead: truncated, out of range the minimum) */
      return ck_error(ctx, CK_ERR_ARG, "%s: %lld is not a value of %s [%s]", p->name, (long long)c->si,
                      ck_dtype_name(p->dt), ck_describe(c->out, d, sizeof d));
    }
  } else {
    if (!c->a) return ck_error(ctx, CK_ERR_ARG, "%s: needs an array operand", p->name);
    p->nin = 1;
    p->in[0] = c->a;
    p->like = c->a;
    p->in_dt = p->dt = c->a->dtype;
    p->nd = c->a->ndim;
    memcpy(p->shape, c->a->shape, sizeof(int64_t) * (size_t)p->nd);
    if (kind == CK_EWK_COPY) {
      if (c->out && c->out->st) p->dt = c->out->dtype; /* COPY casts into out */
      return CK_OK;
    }
    if (kind == CK_EWK_BINARY && c->b) {
      p->nin = 2;
      p->in[1] = c->b;
      p->in_dt = ck_promote(c->a->dtype, c->b->dtype);
      if ((st = ck_broadcast_shape(ctx, p->name, c->a, c->b, &p->nd, p->shape))) return st;
      if (ck_numel(c->b) > ck_numel(c->a)) p->like = c->b;
    } else if (takes_number(c) && !ck_dtype_is_float(p->in_dt)) {
      /* bool with a number computes as i32, except logic and bit ops with true/false (0/1), which stay bool
       * (mask & true); an integer dtype keeps a number it holds */
      if (p->in_dt == CK_BOOL && !(ck_ew_op_keeps_bool(c->fn) && number_fits(c, CK_BOOL, &v))) p->in_dt = CK_I32;
      const bool keeps = c->fn == CK_EW_POWS ? number_int(c, &v) : number_fits(c, p->in_dt, &v);
      if (!keeps && cls == CK_EWD_INT)
        return ck_error(ctx, CK_ERR_DTYPE, "%s: %.17g is not a value of %s (bit operations take integers the array's "
                        "dtype holds) [%s]", p->name, c->s1, ck_dtype_name(p->in_dt), ck_describe(c->a, d, sizeof d));
      if (!keeps) p->in_dt = CK_F64; /* a * 0.5, a < 2.5, 0.5 ^ a and a ^ 0.5 mean what they say (as a / 2 does) */
    }
    /* arithmetic on bool operands computes in i32 (so x:mul(x:gt(0)) keeps working); logic and bit ops keep bool */
    if (cls == CK_EWD_ALL && p->in_dt == CK_BOOL) p->in_dt = CK_I32;
    p->dt = cls == CK_EWD_TOBOOL ? CK_BOOL : p->in_dt;
  }
  const ck_tensor *shown = c->a ? c->a : c->out;
  if (cls == CK_EWD_FLOAT && !ck_dtype_is_float(p->in_dt))
    return ck_error(ctx, CK_ERR_DTYPE, "%s: not defined for %s (floating-point dtypes only); convert with "
                    ":to(\"f32\") [%s]", p->name, ck_dtype_name(p->in_dt), ck_describe(shown, d, sizeof d));
  if (cls == CK_EWD_INT && ck_dtype_is_float(p->in_dt))
    return ck_error(ctx, CK_ERR_DTYPE, "%s: not defined for %s (integer and bool dtypes only) [%s%s%s]", p->name,
                    ck_dtype_name(p->in_dt), ck_describe(shown, d, sizeof d), c->b ? ", " : "",
                    c->b ? ck_describe(c->b, (char[128]){0}, 128) : "");
  return CK_OK;
}

/* The common small-op case: out and every array input contiguous with out's shape (scalars allowed). Then
 * ck_ew_order would coalesce everything into one dim with unit strides: say so directly. */
static bool all_dense(const ck_plan *p) {
  const ck_tensor *out = p->out;
  if (p->call->fn == CK_EW_EYE || !ck_is_contiguous(out)) return false;
  for (int i = 0; i < p->nin; ++i) {
    const ck_tensor *t = p->in[i];
    if (t->ndim != out->ndim || memcmp(t->shape, out->shape, sizeof(int64_t) * (size_t)out->ndim) != 0 ||
        !ck_is_contiguous(t))
      return false;
  }
  return true;
}

static void ew_describe(const ck_plan *p, void *desc) {
  ck_ew_desc *d = (ck_ew_desc *)desc;
  const ck_tensor *out = p->out;
  memset(d, 0, sizeof *d);
  d->op = p->call->fn;
  const int64_t numel = ck_numel(out);
  if (numel > 1 && all_dense(p)) { /* what ck_ew_order gives for this case, without the dim shuffling */
    d->ndim = 1;
    d->shape[0] = d->numel = numel;
    for (int k = 1; k < CK_MAX_DIMS; ++k) d->shape[k] = 1;
    d->out_dtype = out->dtype;
    d->out = ck_data(out);
    d->out_st[0] = 1;
    d->a_dtype = d->b_dtype = p->nin ? p->in_dt : out->dtype;
    d->s1 = number_in(p);
    d->s2 = p->call->s2;
    d->si = number_si(p);
    if (p->nin >= 1) d->a_dtype = p->in[0]->dtype, d->a = ck_data(p->in[0]), d->a_st[0] = 1;
    if (p->nin == 2) d->b = ck_data(p->in[1]), d->b_st[0] = 1;
    else if (ck_ew_op_kind(d->op) == CK_EWK_BINARY) d->b_scalar = 1, d->scalar_left = p->call->scalar_left ? 1 : 0;
    return;
  }
  d->ndim = out->ndim;
  memcpy(d->shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
  d->numel = ck_numel(out);
  d->out_dtype = out->dtype;
  d->out = ck_data(out);
  memcpy(d->out_st, out->stride, sizeof(int64_t) * (size_t)out->ndim);
  d->a_dtype = d->b_dtype = p->nin ? p->in_dt : out->dtype;
  d->s1 = number_in(p);
  d->s2 = p->call->s2;
  d->si = number_si(p);
  if (p->nin >= 1) {
    d->a_dtype = p->in[0]->dtype;
    d->a = ck_data(p->in[0]);
    ck_aligned_strides(d->a_st, d->ndim, p->in[0]);
  }
  if (p->nin == 2) {
    d->b = ck_data(p->in[1]);
    ck_aligned_strides(d->b_st, d->ndim, p->in[1]);
  } else if (ck_ew_op_kind(d->op) == CK_EWK_BINARY) {
    d->b_scalar = 1;
    d->scalar_left = p->call->scalar_left ? 1 : 0;
  }
  ck_ew_order(d);
}

static ck_status ew_host(ck_ctx *ctx, ck_plan *p) {
  ck_ew_desc d;
  ew_describe(p, &d);
  return ck_host_elementwise(ctx, &d);
}

const ck_opdef ck_opdef_ew = {CK_LADDER("elementwise", ck_ew), .host_dtypes = CK_DT_REAL, .inplace_ok = true,
                              .check = ew_check, .host = ew_host, .describe = ew_describe};
