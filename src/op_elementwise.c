/*
 * op_elementwise.c — the elementwise dispatchers: ck_ew_unary, ck_ew_binary, ck_ew_binary_scalar and
 * ck_ew_generate.
 *
 * Each one checks its operands (alive, one device), works out the result dtype (f32 + f64 -> f64; i32 with a
 * float -> that float; an i32 array with a non-integral number -> f32, except for POW/POWS which stay i32)
 * and the broadcast shape, allocates `out` or checks the given one, and describes the work as one
 * ck_ew_desc (element strides, 0 on broadcast dims, trailing dims aligned). Host operands run the host
 * reference; CUDA operands coalesce the descriptor's dims and run the variant ck_pick_variant chooses
 * (contiguous when it can, else strided).
 *
 * In place: `out` may be an input with the same layout (a:add_(b) passes out = a): each element is read
 * before it is written by the same thread, so that is safe. When out overlaps an input laid out differently
 * (a:add_(a:t()), or out = b where b is broadcast) the result goes to a temporary first and is then copied
 * into out. An out with repeated memory (an expanded view) is refused.
 */
#include <stdio.h>
#include <string.h>

#include "ck.h"
#include "ew_ops.h"

// ---------------------------------------------------------------- helpers

static bool ew_dtype_ok(ck_dtype dt) { return dt == CK_F32 || dt == CK_F64 || dt == CK_I32; }

static ck_status check_dtype(ck_ctx *ctx, const char *name, const ck_tensor *t) {
  char d[128];
  if (ew_dtype_ok(t->dtype)) return CK_OK;
  return ck_error(ctx, CK_ERR_DTYPE, "%s: dtype %s is not supported by elementwise ops (f32, f64, i32) [%s]", name,
                  ck_dtype_name(t->dtype), ck_describe(t, d, sizeof d));
}

static ck_status check_float_only(ck_ctx *ctx, const char *name, int op, ck_dtype dt) {
  if (dt == CK_I32 && ck_ew_op_float_only(op))
    return ck_error(ctx, CK_ERR_DTYPE, "%s: not defined for i32 (floating-point dtypes only); convert with :to(\"f32\")",
                    name);
  return CK_OK;
}

/* Result dtype of a binary op on two array dtypes. */
static ck_dtype promote(ck_dtype a, ck_dtype b) {
  if (a == b) return a;
  if (a == CK_I32) return b;
  if (b == CK_I32) return a;
  return CK_F64; /* f32 with f64 */
}

/* Strides of t seen from an nd-d index space with t's dims aligned to the right; 0 where t broadcasts. */
/* out->st == NULL: allocate it with (dt, shape) on dev. Else check it matches. *allocated tells the caller
 * to release it on failure. */
static ck_status prepare_out(ck_ctx *ctx, const char *name, ck_tensor *out, ck_dtype dt, int nd,
                             const int64_t *shape, ck_devkind dev, const char *operands, bool *allocated,
                             const ck_tensor *like) {
  char s1[96], s2[96], d[128];
  *allocated = false;
  if (!out->st) {
    ck_status st = ck_empty_layout(ctx, out, dt, nd, shape, dev, like);
    if (st) return ck_error_prefix(ctx, st, "%s", name);
    *allocated = true;
    return CK_OK;
  }
  if (ck_dev(out) != dev)
    return ck_error(ctx, CK_ERR_DEVICE, "%s: out %s is on another device than the operands (%s)", name,
                    ck_describe(out, d, sizeof d), operands);
  if (out->ndim != nd || memcmp(out->shape, shape, sizeof(int64_t) * (size_t)nd) != 0 || out->dtype != dt)
    return ck_error(ctx, CK_ERR_SHAPE, "%s: out is %s %s but the result is %s %s (operands %s)", name,
                    ck_dtype_name(out->dtype), ck_shape_str(out->ndim, out->shape, s1, sizeof s1), ck_dtype_name(dt),
                    ck_shape_str(nd, shape, s2, sizeof s2), operands);
  return ck_check_writable(ctx, name, out);
}

static void desc_init(ck_ew_desc *d, int op, const ck_tensor *out) {
  memset(d, 0, sizeof *d);
  d->op = op;
  d->ndim = out->ndim;
  memcpy(d->shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
  d->numel = ck_numel(out);
  d->out_dtype = out->dtype;
  d->out = ck_data(out);
  memcpy(d->out_st, out->stride, sizeof(int64_t) * (size_t)out->ndim);
  d->a_dtype = d->b_dtype = out->dtype;
}

/* Put the dims in the output's memory order (largest stride first) so that ck_ew_coalesce can merge
 * operands that share a permuted dense layout into one contiguous run. Generators keep the logical order:
 * their values depend on the row-major index. */
void ck_ew_order(ck_ew_desc *d) {
  if (CK_EW_IS_GENERATOR(d->op)) {
    ck_ew_coalesce(d);
    return;
  }
  for (int i = 1; i < d->ndim; ++i) {
    int j = i;
    while (j > 0 && d->out_st[j - 1] < d->out_st[j]) {
#define SWAP(x)                                                                                             \
  do {                                                                                                      \
    int64_t t_ = x[j];                                                                                      \
    x[j] = x[j - 1];                                                                                        \
    x[j - 1] = t_;                                                                                          \
  } while (0)
      SWAP(d->shape);
      SWAP(d->out_st);
      SWAP(d->a_st);
      SWAP(d->b_st);
#undef SWAP
      --j;
    }
  }
  ck_ew_coalesce(d);
}

/* Run a filled descriptor on `dev`. `operands` describes the inputs for error messages. */
static ck_status ew_run(ck_ctx *ctx, ck_ew_desc *d, ck_devkind dev, const char *variant, ck_ran *ran,
                        const char *operands_or_null, const ck_tensor *lazy) {
  const char *name = ck_ew_op_name(d->op);
  char lazybuf[128];
  /* error text is formatted only when needed: small ops are dominated by host overhead */
#define OPERANDS (operands_or_null ? operands_or_null : ck_describe(lazy, lazybuf, sizeof lazybuf))
  if (dev == CK_HOST) {
    if (ran) {
      memset(ran, 0, sizeof *ran);
      ran->id = -1;
      snprintf(ran->name, sizeof ran->name, "host");
    }
    ck_ew_order(d); /* walk memory in order on the host too */
    ck_status st = ck_host_elementwise(ctx, d);
    return st ? ck_error_prefix(ctx, st, "%s", OPERANDS) : CK_OK;
  }
  ck_env env;
  ck_status st = ck_env_get(ctx, &env);
  if (st) return st;
  ck_ew_order(d);
  const ck_variant *v = ck_pick_variant(ctx, name, ck_ew_variants, ck_ew_nvariants, variant, ck_ew_preferred,
                                        (ck_dtype)d->out_dtype, d, ran);
  if (!v) return CK_ERR_UNSUPPORTED;
  if (d->numel == 0) return CK_OK;
  int kerr = v->launch(d, &env);
  if (kerr == 0 && !ck_sync_mode(ctx)) return CK_OK;
  char what[512];
  snprintf(what, sizeof what, "%s (%s) %s", name, v->name, OPERANDS);
  return ck_after_launch(ctx, kerr, what);
#undef OPERANDS
}

// ---------------------------------------------------------------- unary

ck_status ck_ew_unary(ck_ctx *ctx, int op, ck_tensor *out, const ck_tensor *a, double s1, double s2,
                      const char *variant, ck_ran *ran) {
  const char *name = ck_ew_op_name(op);
  if (!name || ck_ew_op_arity(op) != 1) return ck_error(ctx, CK_ERR_ARG, "elementwise: op %d is not unary", op);
  ck_status st;
  char da[128], dout[128], operands[320];
  ck_tensor tmp = {0};
  bool allocated = false;
  if ((st = ck_check_live(ctx, name, a)) || (st = check_dtype(ctx, name, a))) return st;
  if (out->st && ((st = ck_check_live(ctx, name, out)) || (st = ck_check_same_device(ctx, name, out, a)))) return st;
  if ((st = check_float_only(ctx, name, op, a->dtype))) return st;
  snprintf(operands, sizeof operands, "%s", ck_describe(a, da, sizeof da));

  /* COPY into a given out casts to out's dtype; every other op keeps a's dtype */
  ck_dtype dt = (op == CK_EW_COPY && out->st) ? out->dtype : a->dtype;
  if (out->st && (st = check_dtype(ctx, name, out))) return st;
  if ((st = prepare_out(ctx, name, out, dt, a->ndim, a->shape, ck_dev(a), operands, &allocated, a))) goto cleanup;

  ck_tensor *dst = out;
  if (ck_unsafe_alias(out, a)) {
    if ((st = ck_empty(ctx, &tmp, out->dtype, out->ndim, out->shape, ck_dev(out)))) goto cleanup;
    dst = &tmp;
  }
  ck_ew_desc d;
  desc_init(&d, op, dst);
  d.a_dtype = a->dtype;
  d.a = ck_data(a);
  ck_aligned_strides(d.a_st, d.ndim, a);
  d.s1 = s1;
  d.s2 = s2;
  snprintf(operands, sizeof operands, "%s -> %s", ck_describe(a, da, sizeof da), ck_describe(out, dout, sizeof dout));
  if ((st = ew_run(ctx, &d, ck_dev(a), variant, ran, operands, NULL))) goto cleanup;
  if (dst == &tmp) st = ck_copy(ctx, out, &tmp);

cleanup:
  ck_release(&tmp);
  if (st && allocated) ck_release(out);
  return st;
}

// ---------------------------------------------------------------- binary

ck_status ck_ew_binary(ck_ctx *ctx, int op, ck_tensor *out, const ck_tensor *a, const ck_tensor *b,
                       const char *variant, ck_ran *ran) {
  const char *name = ck_ew_op_name(op);
  if (!name || ck_ew_op_arity(op) != 2) return ck_error(ctx, CK_ERR_ARG, "elementwise: op %d is not binary", op);
  ck_status st;
  char da[128], db[128], dout[128], operands[400];
  ck_tensor ta = {0}, tb = {0}, tmp = {0};
  bool allocated = false;
  if ((st = ck_check_live(ctx, name, a)) || (st = ck_check_live(ctx, name, b)) ||
      (st = ck_check_same_device(ctx, name, a, b)) || (st = check_dtype(ctx, name, a)) ||
      (st = check_dtype(ctx, name, b)))
    return st;
  if (out->st && ((st = ck_check_live(ctx, name, out)) || (st = ck_check_same_device(ctx, name, out, a)))) return st;
  snprintf(operands, sizeof operands, "%s and %s", ck_describe(a, da, sizeof da), ck_describe(b, db, sizeof db));

  int nd;
  int64_t shape[CK_MAX_DIMS];
  if ((st = ck_broadcast_shape(ctx, name, a, b, &nd, shape))) return st;
  const ck_devkind dev = ck_dev(a);
  const ck_dtype dt = promote(a->dtype, b->dtype);
  if ((st = prepare_out(ctx, name, out, dt, nd, shape, dev, operands, &allocated,
                        ck_numel(a) >= ck_numel(b) ? a : b)))
    goto cleanup;

  /* promotion: the narrower operand becomes a contiguous temporary in dt */
  const ck_tensor *pa = a, *pb = b;
  if (a->dtype != dt) {
    if ((st = ck_to(ctx, &ta, a, dev, dt))) goto cleanup;
    pa = &ta;
  }
  if (b->dtype != dt) {
    if ((st = ck_to(ctx, &tb, b, dev, dt))) goto cleanup;
    pb = &tb;
  }
  ck_tensor *dst = out;
  if (ck_unsafe_alias(out, pa) || ck_unsafe_alias(out, pb)) {
    if ((st = ck_empty(ctx, &tmp, dt, nd, shape, dev))) goto cleanup;
    dst = &tmp;
  }
  ck_ew_desc d;
  desc_init(&d, op, dst);
  d.a = ck_data(pa);
  ck_aligned_strides(d.a_st, nd, pa);
  d.b = ck_data(pb);
  ck_aligned_strides(d.b_st, nd, pb);
  snprintf(operands, sizeof operands, "%s, %s -> %s", ck_describe(a, da, sizeof da), ck_describe(b, db, sizeof db),
           ck_describe(out, dout, sizeof dout));
  if ((st = ew_run(ctx, &d, dev, variant, ran, operands, NULL))) goto cleanup;
  if (dst == &tmp) st = ck_copy(ctx, out, &tmp);

cleanup:
  ck_release(&ta);
  ck_release(&tb);
  ck_release(&tmp);
  if (st && allocated) ck_release(out);
  return st;
}

// ---------------------------------------------------------------- binary with a number

ck_status ck_ew_binary_scalar(ck_ctx *ctx, int op, ck_tensor *out, const ck_tensor *a, double s,
                              bool scalar_left, const char *variant, ck_ran *ran) {
  const char *name = ck_ew_op_name(op);
  if (!name || ck_ew_op_arity(op) != 2) return ck_error(ctx, CK_ERR_ARG, "elementwise: op %d is not binary", op);
  ck_status st;
  char da[128], dout[128], operands[400];
  ck_tensor ta = {0}, tmp = {0};
  bool allocated = false;
  if ((st = ck_check_live(ctx, name, a)) || (st = check_dtype(ctx, name, a))) return st;
  if (out->st && ((st = ck_check_live(ctx, name, out)) || (st = ck_check_same_device(ctx, name, out, a)))) return st;
  if (scalar_left) snprintf(operands, sizeof operands, "%.17g and %s", s, ck_describe(a, da, sizeof da));
  else snprintf(operands, sizeof operands, "%s and %.17g", ck_describe(a, da, sizeof da), s);

  /* An i32 array meets a number that is not an i32 value: compute in f32 (the default float dtype), so that
   * a * 0.5 and a < 2.5 mean what they say. POW keeps i32 (its exponent goes through double anyway). */
  const ck_devkind dev = ck_dev(a);
  ck_dtype dt = a->dtype;
  if (dt == CK_I32 && op != CK_EW_POW && !(s >= -2147483648.0 && s <= 2147483647.0 && s == (double)(int32_t)s))
    dt = CK_F32;
  if ((st = prepare_out(ctx, name, out, dt, a->ndim, a->shape, dev, operands, &allocated, a))) goto cleanup;
  const ck_tensor *pa = a;
  if (a->dtype != dt) {
    if ((st = ck_to(ctx, &ta, a, dev, dt))) goto cleanup;
    pa = &ta;
  }
  ck_tensor *dst = out;
  if (ck_unsafe_alias(out, pa)) {
    if ((st = ck_empty(ctx, &tmp, dt, out->ndim, out->shape, dev))) goto cleanup;
    dst = &tmp;
  }
  ck_ew_desc d;
  desc_init(&d, op, dst);
  d.a = ck_data(pa);
  ck_aligned_strides(d.a_st, d.ndim, pa);
  d.b_scalar = 1;
  d.scalar_left = scalar_left ? 1 : 0;
  d.s1 = s;
  if (scalar_left)
    snprintf(operands, sizeof operands, "%.17g, %s -> %s", s, ck_describe(a, da, sizeof da),
             ck_describe(out, dout, sizeof dout));
  else
    snprintf(operands, sizeof operands, "%s, %.17g -> %s", ck_describe(a, da, sizeof da), s,
             ck_describe(out, dout, sizeof dout));
  if ((st = ew_run(ctx, &d, dev, variant, ran, operands, NULL))) goto cleanup;
  if (dst == &tmp) st = ck_copy(ctx, out, &tmp);

cleanup:
  ck_release(&ta);
  ck_release(&tmp);
  if (st && allocated) ck_release(out);
  return st;
}

// ---------------------------------------------------------------- generators

ck_status ck_ew_generate(ck_ctx *ctx, int op, ck_tensor *out, double s1, double s2) {
  const char *name = ck_ew_op_name(op);
  if (!name || !CK_EW_IS_GENERATOR(op)) return ck_error(ctx, CK_ERR_ARG, "elementwise: op %d is not a generator", op);
  ck_status st;
  if ((st = ck_check_live(ctx, name, out)) || (st = check_dtype(ctx, name, out)) ||
      (st = check_float_only(ctx, name, op, out->dtype)) || (st = ck_check_writable(ctx, name, out)))
    return st;
  ck_ew_desc d;
  desc_init(&d, op, out);
  d.s1 = s1;
  d.s2 = s2;
  return ew_run(ctx, &d, ck_dev(out), NULL, NULL, NULL, out);
}
