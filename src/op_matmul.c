/*
 * op_matmul.c — the matmul dispatcher: ck_matmul (C = alpha * A @ B + beta * C).
 *
 * Shapes (MATLAB/NumPy matmul without the vector cases):
 *   A [m,k] x B [k,n] -> C [m,n];  A [ba,m,k] x B [bb,k,n] -> C [batch,m,n]
 * where a 2-D operand, or a batch of 1, is broadcast over the other operand's batch (batch stride 0). 1-D
 * operands are rejected with a hint to reshape them ([1,n] or [n,1]); 0-d and 4-D+ likewise.
 * Dtypes must match: f32 and f64 everywhere, i32 on the host only. An empty output (c->st == NULL) is
 * allocated (beta is then ignored); a given one must have the result's shape, dtype and device, must not be
 * an expanded view, and may alias A or B (the result then goes through a temporary).
 * Host arrays run ck_host_matmul (the reference). CUDA arrays are described as a ck_mm_desc (element strides;
 * batch strides 0 where broadcast), ck_pick_variant picks the variant (requested, else the preferred order),
 * and the variant's layout flags are satisfied here:
 *   CK_VF_ROWMAJOR: contiguous copies of A/B whose last-dim stride is not 1; C computed into a contiguous
 *                   temporary (a copy of C when beta != 0) and copied back when its last stride is not 1;
 *   CK_VF_BLAS:     copies only of operands with neither stride 1 (or a leading dimension below the extent),
 *                   since cuBLAS takes either orientation through OP_N/OP_T.
 * m, n or batch == 0: nothing to do. k == 0 or alpha == 0: C = beta*C without a matmul launch (beta == 0
 * fills zeros, never reading C). Temporaries are released on every path.
 */
#include <stdio.h>
#include <string.h>

#include "ck.h"

// ---------------------------------------------------------------- layout helpers

/* Same rule as kernels/matmul/00_cublas.cu: can cuBLAS take this (rows x cols, strides rs, cs) operand? */
static bool blas_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  const int64_t r1 = rows > 1 ? rows : 1, c1 = cols > 1 ? cols : 1;
  const bool row_unit = cs == 1 || cols <= 1, col_unit = rs == 1 || rows <= 1;
  const int64_t row_ld = rows <= 1 ? c1 : rs, col_ld = cols <= 1 ? r1 : cs;
  return (row_unit && row_ld >= c1) || (col_unit && col_ld >= r1);
}

/* Unit stride along the last dim (or a last dim of extent <= 1, whose stride is never used). */
static bool rowmajor_ok(const ck_tensor *t) { return t->stride[t->ndim - 1] == 1 || t->shape[t->ndim - 1] <= 1; }

static bool expanded(const ck_tensor *t) {
  for (int i = 0; i < t->ndim; ++i)
    if (t->shape[i] > 1 && t->stride[i] == 0) return true;
  return false;
}

/* Fill the operand fields of d from t (2-D or 3-D; a batch of 1 or a 2-D operand broadcasts). */
static void set_a(ck_mm_desc *d, const ck_tensor *t) {
  d->a = ck_data(t);
  d->a_rs = t->stride[t->ndim - 2];
  d->a_cs = t->stride[t->ndim - 1];
  d->a_bs = (t->ndim == 3 && t->shape[0] > 1) ? t->stride[0] : 0;
}
static void set_b(ck_mm_desc *d, const ck_tensor *t) {
  d->b = ck_data(t);
  d->b_rs = t->stride[t->ndim - 2];
  d->b_cs = t->stride[t->ndim - 1];
  d->b_bs = (t->ndim == 3 && t->shape[0] > 1) ? t->stride[0] : 0;
}
static void set_c(ck_mm_desc *d, const ck_tensor *t) {
  d->c = ck_data(t);
  d->c_rs = t->stride[t->ndim - 2];
  d->c_cs = t->stride[t->ndim - 1];
  d->c_bs = (t->ndim == 3 && t->shape[0] > 1) ? t->stride[0] : 0;
}

/* C = beta * C without a matmul (k == 0 or alpha == 0). */
static ck_status scale_c(ck_ctx *ctx, ck_tensor *c, double beta) {
  if (beta == 1.0) return CK_OK;
  if (beta == 0.0) return ck_ew_generate(ctx, CK_EW_FILL, c, 0.0, 0.0); /* never reads C (it may be NaN) */
  return ck_ew_binary_scalar(ctx, CK_EW_MUL, c, c, beta, false, NULL, NULL);
}

// ---------------------------------------------------------------- checks

/* Validates a and b; gives the result's shape (nd 2 or 3) and m, n, k, batch. */
static ck_status check_operands(ck_ctx *ctx, const ck_tensor *a, const ck_tensor *b, int *nd, int64_t *shape,
                                int64_t *m, int64_t *n, int64_t *k, int64_t *batch) {
  char da[128], db[128];
  ck_status st;
  if ((st = ck_check_live(ctx, "matmul", a)) || (st = ck_check_live(ctx, "matmul", b))) return st;
  ck_describe(a, da, sizeof da);
  ck_describe(b, db, sizeof db);
  if (a->ndim < 2 || a->ndim > 3 || b->ndim < 2 || b->ndim > 3)
    return ck_error(ctx, CK_ERR_SHAPE,
                    "matmul: operands must be 2-D matrices or 3-D batches of matrices, got %s x %s "
                    "(reshape a vector to [1,n] or [n,1])", da, db);
  if (a->dtype != b->dtype)
    return ck_error(ctx, CK_ERR_DTYPE, "matmul: dtype mismatch %s vs %s (%s x %s); convert one with :to()",
                    ck_dtype_name(a->dtype), ck_dtype_name(b->dtype), da, db);
  if (a->dtype != CK_F32 && a->dtype != CK_F64 && a->dtype != CK_I32)
    return ck_error(ctx, CK_ERR_DTYPE, "matmul: dtype %s is not supported (f32, f64; i32 on the host) [%s x %s]",
                    ck_dtype_name(a->dtype), da, db);
  if ((st = ck_check_same_device(ctx, "matmul", a, b))) return st;
  if (a->dtype == CK_I32 && ck_dev(a) == CK_CUDA)
    return ck_error(ctx, CK_ERR_DTYPE, "matmul: i32 runs on the host only (got %s x %s); use :host() or "
                                       ":to(\"f64\") (exact for integers below 2^53)", da, db);
  *m = a->shape[a->ndim - 2];
  *k = a->shape[a->ndim - 1];
  *n = b->shape[b->ndim - 1];
  if (b->shape[b->ndim - 2] != *k)
    return ck_error(ctx, CK_ERR_SHAPE, "matmul: inner dimensions differ: %s x %s (%lld vs %lld)", da, db,
                    (long long)*k, (long long)b->shape[b->ndim - 2]);
  const int64_t ba = a->ndim == 3 ? a->shape[0] : 1, bb = b->ndim == 3 ? b->shape[0] : 1;
  if (ba != bb && ba != 1 && bb != 1)
    return ck_error(ctx, CK_ERR_SHAPE, "matmul: batch sizes differ: %s x %s (%lld vs %lld; one may be 1 or 2-D)", da,
                    db, (long long)ba, (long long)bb);
  *batch = ba > bb ? ba : bb;
  *nd = (a->ndim == 3 || b->ndim == 3) ? 3 : 2;
  if (*nd == 3) shape[0] = *batch, shape[1] = *m, shape[2] = *n;
  else shape[0] = *m, shape[1] = *n;
  return ck_check_shape(ctx, "matmul", *nd, shape, a->dtype);
}

static ck_status check_out(ck_ctx *ctx, const ck_tensor *c, const ck_tensor *a, int nd, const int64_t *shape) {
  char dc[128], s1[96];
  ck_status st;
  if ((st = ck_check_live(ctx, "matmul", c))) return st;
  ck_describe(c, dc, sizeof dc);
  if (ck_dev(c) != ck_dev(a))
    return ck_error(ctx, CK_ERR_DEVICE, "matmul: output %s is on another device than the operands (%s)", dc,
                    ck_dev_name(ck_dev(a)));
  if (c->dtype != a->dtype)
    return ck_error(ctx, CK_ERR_DTYPE, "matmul: output is %s but the result is %s (output %s)",
                    ck_dtype_name(c->dtype), ck_dtype_name(a->dtype), dc);
  if (c->ndim != nd || memcmp(c->shape, shape, sizeof(int64_t) * (size_t)nd) != 0)
    return ck_error(ctx, CK_ERR_SHAPE, "matmul: output has shape %s but the result is %s", dc,
                    ck_shape_str(nd, shape, s1, sizeof s1));
  if (expanded(c))
    return ck_error(ctx, CK_ERR_ARG, "matmul: output %s is an expanded view (several elements share memory)", dc);
  return CK_OK;
}

static void set_host_ran(ck_ran *ran, const char *variant) {
  if (!ran) return;
  ran->id = -1;
  snprintf(ran->name, sizeof ran->name, "host");
  ran->note[0] = 0;
  if (variant && *variant)
    snprintf(ran->note, sizeof ran->note, "asked for '%s': host arrays run the host reference", variant);
}

// ---------------------------------------------------------------- dispatcher

ck_status ck_matmul(ck_ctx *ctx, ck_tensor *c, const ck_tensor *a, const ck_tensor *b, double alpha,
                    double beta, const char *variant, ck_ran *ran) {
  int64_t shape[3] = {0, 0, 0}, m = 0, n = 0, k = 0, batch = 0;
  int nd = 2;
  char what[320], da[96], db[96];
  ck_status st;
  bool c_alloc = false;
  ck_tensor ta = {0}, tb = {0}, tc = {0}; /* temporaries: operand copies, result */
  const ck_tensor *A = a, *B = b;
  ck_tensor *C = c;

  if ((st = check_operands(ctx, a, b, &nd, shape, &m, &n, &k, &batch))) return st;
  const ck_dtype dt = a->dtype;
  const ck_devkind dev = ck_dev(a);
  if (!c->st) {
    if ((st = ck_empty(ctx, c, dt, nd, shape, dev))) return ck_error_prefix(ctx, st, "matmul");
    c_alloc = true;
    beta = 0.0; /* fresh memory: nothing to scale */
  } else if ((st = check_out(ctx, c, a, nd, shape))) {
    return st;
  }
  /* C sharing memory with A or B: compute into a temporary (every kernel reads A and B while writing C) */
  const bool alias = !c_alloc && (c->st == a->st || c->st == b->st);

  if (dev == CK_HOST) {
    set_host_ran(ran, variant);
    if (batch == 0 || m == 0 || n == 0) return CK_OK;
    if (alias) {
      if ((st = ck_empty(ctx, &tc, dt, nd, shape, CK_HOST))) goto fail;
      if (beta != 0.0 && (st = ck_copy(ctx, &tc, c))) goto fail;
      C = &tc;
    }
    if ((st = ck_host_matmul(ctx, C, A, B, alpha, beta))) goto fail;
    if (C != c && (st = ck_copy(ctx, c, C))) goto fail;
    ck_release(&tc);
    return CK_OK;
  }

  /* ---- CUDA */
  ck_mm_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.dtype = dt;
  desc.c_dtype = dt;
  desc.precision = CK_MM_EXACT;
  desc.batch = batch, desc.m = m, desc.n = n, desc.k = k;
  desc.alpha = alpha, desc.beta = beta;
  set_a(&desc, a);
  set_b(&desc, b);
  set_c(&desc, c);
  const ck_variant *v =
      ck_pick_variant(ctx, "matmul", ck_matmul_variants, ck_matmul_nvariants, variant, ck_matmul_preferred, dt, &desc, ran);
  if (!v) {
    st = CK_ERR_UNSUPPORTED; /* the picker's message names the variant and why */
    goto fail;
  }
  if (batch == 0 || m == 0 || n == 0) goto done;
  if (k == 0 || alpha == 0.0) { /* C = beta*C: no product to form (A and B are not read) */
    if ((st = scale_c(ctx, c, beta))) goto fail;
    if (ran && !ran->note[0])
      snprintf(ran->note, sizeof ran->note, "%s: C = beta*C, no matmul kernel launched", k == 0 ? "k == 0" : "alpha == 0");
    goto done;
  }

  /* satisfy the variant's layout needs */
  bool copy_a, copy_b, temp_c;
  if (v->flags & CK_VF_BLAS) {
    copy_a = !blas_ok(m, k, desc.a_rs, desc.a_cs);
    copy_b = !blas_ok(k, n, desc.b_rs, desc.b_cs);
    temp_c = alias || !blas_ok(m, n, desc.c_rs, desc.c_cs);
  } else if (v->flags & CK_VF_ROWMAJOR) {
    copy_a = !rowmajor_ok(a);
    copy_b = !rowmajor_ok(b);
    temp_c = alias || !rowmajor_ok(c);
  } else {
    copy_a = copy_b = false;
    temp_c = alias;
  }
  if (copy_a) {
    if ((st = ck_contiguous(ctx, &ta, a))) goto fail;
    A = &ta;
    set_a(&desc, A);
  }
  if (copy_b) {
    if ((st = ck_contiguous(ctx, &tb, b))) goto fail;
    B = &tb;
    set_b(&desc, B);
  }
  if (temp_c) {
    if ((st = ck_empty(ctx, &tc, dt, nd, shape, CK_CUDA))) goto fail;
    if (beta != 0.0 && (st = ck_copy(ctx, &tc, c))) goto fail;
    C = &tc;
    set_c(&desc, C);
  }
  /* a dim of extent 1 never steps: give ROWMAJOR kernels the unit stride they assume */
  if (k <= 1) desc.a_cs = 1;
  if (n <= 1) desc.b_cs = desc.c_cs = 1;

  ck_env env;
  if ((st = ck_env_get(ctx, &env))) goto fail;
  snprintf(what, sizeof what, "matmul (%s) %s%s x %s%s", v->name, ck_dtype_name(dt),
           ck_shape_str(a->ndim, a->shape, da, sizeof da), ck_dtype_name(dt), ck_shape_str(b->ndim, b->shape, db, sizeof db));
  if ((st = ck_after_launch(ctx, v->launch(&desc, &env), what))) goto fail;
  if (C != c && (st = ck_copy(ctx, c, C))) goto fail;

done:
  ck_release(&ta);
  ck_release(&tb);
  ck_release(&tc);
  return CK_OK;

fail:
  ck_release(&ta);
  ck_release(&tb);
  ck_release(&tc);
  if (c_alloc) ck_release(c);
  return st;
}
