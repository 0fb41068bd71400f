/*
 * op_matmul.c — matmul as the dispatcher sees it (ck_opdef_matmul): C = alpha * A @ B + beta * C.
 *
 * Shapes (MATLAB/NumPy matmul without the vector cases):
 *   A [m,k] x B [k,n] -> C [m,n];  A [ba,m,k] x B [bb,k,n] -> C [batch,m,n]
 * where a 2-D operand, or a batch of 1, is broadcast over the other operand's batch (batch stride 0), and
 * batch is the other one's (so 0 against 1 is 0). 1-D operands are rejected with a hint to reshape them
 * ([1,n] or [n,1]); 0-d and 4-D+ likewise. Dtypes promote as elementwise ops do (f32 x f64 -> f64, u8 x i8 ->
 * i16, u8 x f32 -> f32), and the dispatcher converts each operand to the promoted dtype before the product, as
 * for mixed floats; bool x bool gives i32 (bool arithmetic promotes to i32 in this library: the count of true
 * pairs), bool x x gives x. f32 and f64 run everywhere; the integer dtypes (i32, i64, u32, i16, i8, u8: sums wrap
 * modulo 2^bits of the result) on the host and on CUDA by rung 3 (smem: the registry's masks say so). FP8: e4m3
 * x e4m3, e5m2 x e5m2 and the mixed pairs, each operand read as its own dtype (no conversion). The output may
 * overlap A or B: the dispatcher then computes into a temporary (holding C's values when beta != 0).
 * On CUDA the work is one ck_mm_desc (element strides, batch strides 0 where broadcast), and the picked
 * variant's layout flags are satisfied here:
 *   CK_VF_ROWMAJOR: contiguous copies of A/B whose last-dim stride is not 1; C through a contiguous
 *                   temporary when its last stride is not 1;
 *   CK_VF_BLAS:     copies only of operands with neither stride 1 (or a leading dimension below the extent),
 *                   since cuBLAS takes either orientation through OP_N/OP_T;
 *   CK_VF_TMA:      contiguous copies of A/B that a TMA tensor map cannot take as they are (mm_tma.h); C as
 *                   it is (the Hopper rungs' epilogue takes any strides).
 * k == 0 or alpha == 0: C = beta*C without a matmul launch (beta == 0 fills zeros, never reading C).
 * Default variant: cuBLAS, except tiny f32/f64 products (<= 64^3 multiply-adds, row-major): the smem rung.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ck_op.h"
#include "matmul/mm_tma.h"

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

/* The batch stride a descriptor gets: 0 for a 2-D operand or a batch of 1 (broadcast). */
static int64_t batch_stride(const ck_tensor *t) { return (t->ndim == 3 && t->shape[0] > 1) ? t->stride[0] : 0; }

/* Fill the operand fields of d from t (2-D or 3-D; a batch of 1 or a 2-D operand broadcasts). */
static void set_a(ck_mm_desc *d, const ck_tensor *t) {
  d->a = ck_data(t);
  d->a_rs = t->stride[t->ndim - 2];
  d->a_cs = t->stride[t->ndim - 1];
  d->a_bs = batch_stride(t);
}
static void set_b(ck_mm_desc *d, const ck_tensor *t) {
  d->b = ck_data(t);
  d->b_rs = t->stride[t->ndim - 2];
  d->b_cs = t->stride[t->ndim - 1];
  d->b_bs = batch_stride(t);
}
static void set_c(ck_mm_desc *d, const ck_tensor *t) {
  d->c = ck_data(t);
  d->c_rs = t->stride[t->ndim - 2];
  d->c_cs = t->stride[t->ndim - 1];
  d->c_bs = batch_stride(t);
}


// ---------------------------------------------------------------- the op definition

static ck_status mm_check(ck_ctx *ctx, ck_plan *p) {
  const ck_tensor *a = p->call->a, *b = p->call->b;
  char da[128], db[128];
  p->name = "matmul";
  if (!a || !b) return ck_error(ctx, CK_ERR_ARG, "matmul: needs two array operands");
  p->nin = 2;
  p->in[0] = a;
  p->in[1] = b;
  if (a->ndim < 2 || a->ndim > 3 || b->ndim < 2 || b->ndim > 3)
    return ck_error(ctx, CK_ERR_SHAPE,
                    "matmul: operands must be 2-D matrices or 3-D batches of matrices, got %s x %s "
                    "(reshape a vector to [1,n] or [n,1])", ck_describe(a, da, sizeof da), ck_describe(b, db, sizeof db));
  const int64_t m = a->shape[a->ndim - 2], k = a->shape[a->ndim - 1], n = b->shape[b->ndim - 1];
  if (b->shape[b->ndim - 2] != k)
    return ck_error(ctx, CK_ERR_SHAPE, "matmul: inner dimensions differ: %s x %s (%lld vs %lld)",
                    ck_describe(a, da, sizeof da), ck_describe(b, db, sizeof db), (long long)k,
                    (long long)b->shape[b->ndim - 2]);
  const int64_t ba = a->ndim == 3 ? a->shape[0] : 1, bb = b->ndim == 3 ? b->shape[0] : 1;
  if (ba != bb && ba != 1 && bb != 1)
    return ck_error(ctx, CK_ERR_SHAPE, "matmul: batch sizes differ: %s x %s (%lld vs %lld; one may be 1 or 2-D)",
                    ck_describe(a, da, sizeof da), ck_describe(b, db, sizeof db), (long long)ba, (long long)bb);
  const int64_t batch = ba == 1 ? bb : ba; /* 1 broadcasts to the other (0 included) */
  p->nd = (a->ndim == 3 || b->ndim == 3) ? 3 : 2;
  if (p->nd == 3) p->shape[0] = batch, p->shape[1] = m, p->shape[2] = n;
  else p->shape[0] = m, p->shape[1] = n;
  /* promotion as for elementwise ops (ck_promote). f16/bf16 inputs give an f16/bf16 result, or f32 when the
   * call's out is f32 (accumulated into it). */
  p->in_dt = ck_promote(a->dtype, b->dtype);
  if (p->in_dt == CK_BOOL) p->in_dt = CK_I32; /* bool arithmetic promotes to i32 (docs/api.md, Dtypes) */
  p->dt = p->in_dt;
  if ((p->in_dt == CK_F16 || p->in_dt == CK_BF16) && p->call->out && p->call->out->st && p->call->out->dtype == CK_F32)
    p->dt = CK_F32;
  /* FP8 (issue 37): both operands FP8, of one dtype or mixed (e4m3 x e5m2, e5m2 x e4m3: each keeps its dtype,
   * in_dt is A's); the result is out's dtype (bf16, f16 or f32), bf16 without */
  const bool f8a = (CK_DT_FP8 & CK_DT_BIT(a->dtype)) != 0, f8b = (CK_DT_FP8 & CK_DT_BIT(b->dtype)) != 0;
  if (f8a || f8b) {
    if (!f8a || !f8b)
      return ck_error(ctx, CK_ERR_DTYPE, "matmul: FP8 operands pair only with FP8 (e4m3 or e5m2), got %s x %s; "
                      "cast the other one, e.g. b:to(\"e4m3\"), or both to f32",
                      ck_describe(a, da, sizeof da), ck_describe(b, db, sizeof db));
    p->in_dt = a->dtype;
    p->keep_in_dtypes = a->dtype != b->dtype;
    const ck_tensor *o = p->call->out && p->call->out->st ? p->call->out : NULL;
    p->dt = o ? o->dtype : CK_BF16;
    if (p->dt != CK_BF16 && p->dt != CK_F16 && p->dt != CK_F32)
      return ck_error(ctx, CK_ERR_DTYPE, "matmul: the result of an FP8 product is bf16, f16 or f32; out is %s",
                      ck_dtype_name(p->dt));
  }
  if (p->call->precision == CK_MM_TF32 && p->in_dt != CK_F32)
    return ck_error(ctx, CK_ERR_ARG, "matmul: precision \"tf32\" is for f32 operands (got %s x %s)",
                    ck_describe(a, da, sizeof da), ck_describe(b, db, sizeof db));
  /* integer products: alpha and beta scale integers, and an infinite or NaN one has no integer meaning (docs/api.md) */
  if ((CK_DT_INTS & CK_DT_BIT(p->dt)) && (!isfinite(p->call->alpha) || !isfinite(p->beta)))
    return ck_error(ctx, CK_ERR_ARG, "matmul: alpha %g and beta %g must be finite for %s operands (%s x %s)",
                    p->call->alpha, p->beta, ck_dtype_name(p->dt), ck_describe(a, da, sizeof da),
                    ck_describe(b, db, sizeof db));
  p->has_out = true;
  p->out_reads = p->beta != 0.0;
  return ck_check_shape(ctx, "matmul", p->nd, p->shape, p->dt);
}

/* C = beta * C without a matmul (k == 0 or alpha == 0). */
static ck_status mm_trivial(ck_ctx *ctx, ck_plan *p, bool *done, char *note, size_t n) {
  const int64_t k = p->in[0]->shape[p->in[0]->ndim - 1];
  const double alpha = p->call->alpha, beta = p->beta;
  if (k != 0 && alpha != 0.0) return CK_OK;
  /* integer C with a beta other than 0 or 1: the product's own epilogue (the host's k == 0 path, rung 3's kernel with
   * no k tile), whose rule for beta (exact when the dtype holds it, else f64 truncated and saturated) an elementwise
   * product by a number would not follow (it refuses a result wider than C: u8 by -1 or 0.5) */
  if ((CK_DT_INTS & CK_DT_BIT(p->out->dtype)) && beta != 0.0 && beta != 1.0) return CK_OK;
  *done = true;
  snprintf(note, n, "%s: C = beta*C, no matmul kernel launched", k == 0 ? "k == 0" : "alpha == 0");
  if (beta == 1.0) return CK_OK;
  if (beta == 0.0) return ck_ew_generate(ctx, CK_EW_FILL, p->out, 0.0, 0.0); /* never reads C (it may be NaN) */
  if (!ck_dtype_is_complex(p->out->dtype)) return ck_ew_binary_scalar(ctx, CK_EW_MUL, p->out, p->out, beta, false, NULL, NULL);
  ck_tensor pairs = {0}; /* complex C: both parts scaled, as real pairs */
  ck_status st = ck_pair_view(ctx, &pairs, p->out);
  if (!st) st = ck_ew_binary_scalar(ctx, CK_EW_MUL, &pairs, &pairs, beta, false, NULL, NULL);
  ck_release(&pairs);
  return st;
}

static ck_status mm_host(ck_ctx *ctx, ck_plan *p) {
  return ck_host_matmul(ctx, p->out, p->in[0], p->in[1], p->call->alpha, p->beta);
}

static void mm_describe(const ck_plan *p, void *desc) {
  ck_mm_desc *d = (ck_mm_desc *)desc;
  const ck_tensor *a = p->in[0], *b = p->in[1];
  memset(d, 0, sizeof *d);
  d->dtype = a->dtype;   /* p->in_dt, or A's own FP8 dtype in a mixed FP8 product */
  d->b_dtype = b->dtype; /* the same, except in a mixed FP8 product */
  d->c_dtype = p->dt;
  d->precision = p->call->precision;
  d->batch = p->nd == 3 ? p->shape[0] : 1;
  d->m = a->shape[a->ndim - 2];
  d->k = a->shape[a->ndim - 1];
  d->n = b->shape[b->ndim - 1];
  d->alpha = p->call->alpha;
  d->beta = p->beta;
  set_a(d, a);
  set_b(d, b);
  set_c(d, p->out);
  /* a dim of extent 1 never steps: give ROWMAJOR kernels the unit stride they assume */
  if (d->k <= 1) d->a_cs = 1;
  if (d->n <= 1) d->b_cs = d->c_cs = 1;
}

static unsigned mm_layout(const ck_plan *p, const ck_variant *v) {
  if (!v) return 0;
  const ck_tensor *a = p->in[0], *b = p->in[1], *c = p->out;
  const int64_t m = a->shape[a->ndim - 2], k = a->shape[a->ndim - 1], n = b->shape[b->ndim - 1];
  unsigned need = 0;
  if (v->flags & CK_VF_BLAS) {
    if (!blas_ok(m, k, a->stride[a->ndim - 2], a->stride[a->ndim - 1])) need |= CK_NEED_A;
    if (!blas_ok(k, n, b->stride[b->ndim - 2], b->stride[b->ndim - 1])) need |= CK_NEED_B;
    if (!blas_ok(m, n, c->stride[c->ndim - 2], c->stride[c->ndim - 1])) need |= CK_NEED_OUT;
  } else if (v->flags & CK_VF_TMA) { /* C: any strides */
    const int64_t es = (int64_t)ck_dtype_size(a->dtype);
    if (!ck_tma_operand(ck_data(a), m, k, a->stride[a->ndim - 2], a->stride[a->ndim - 1], batch_stride(a), es))
      need |= CK_NEED_A;
    if (!ck_tma_operand(ck_data(b), k, n, b->stride[b->ndim - 2], b->stride[b->ndim - 1], batch_stride(b), es))
      need |= CK_NEED_B;
  } else if (v->flags & CK_VF_ROWMAJOR) {
    if (!rowmajor_ok(a)) need |= CK_NEED_A;
    if (!rowmajor_ok(b)) need |= CK_NEED_B;
    if (!rowmajor_ok(c)) need |= CK_NEED_OUT;
  }
  return need;
}

/* The default order for this product, by size and layout (else cuBLAS first):
 * - tiny products (batch*m*n*k <= 64^3) of f32/f64 row-major operands, exact precision: our smem rung, one
 *   launch with no layout copies, instead of cuBLAS's heuristics and launch (kernels/matmul/variants.c);
 * - large f16/bf16 products (>= 2^36 multiply-adds, i.e. 4096^3) with m >= 8192 rows per matrix, whose A and B
 *   a tensor map reads in place and whose C takes TMA stores (the input dtype, unit column stride, n a multiple
 *   of 8, beta == 0): the persistent Hopper rung first. The row bound is issue 37's measured table, the bf16
 *   shape sweep (examples/gemm_sweep.lua: m = 16 ... 16384, n, k in {4096, 8192, 14336}, nn/nt/tn; x4 run of
 *   session 14 on an H200, bench/results/round14/x4/gemm): rung 14 against cuBLAS in alternating pairs was
 *   1.00-1.08 at m = 16384 (0.997 at worst), 0.99-1.06 at m = 4096 (mostly below 1), 0.87-0.99 at m = 1024,
 *   0.27-0.99 below; on the H100 it was 101.9% at 8192^3. Before it, the bound was on the multiply-adds alone,
 *   which sent m = 1024 with large n and k to rung 14 (0.873 at nt 1024x14336x8192) and the batched 16 x 4096^3
 *   (0.86 on an H200, session 13). */
#define MM_TINY_MACS ((int64_t)1 << 18)
static const int *mm_preferred_for(const void *desc) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if ((d->dtype == CK_F16 || d->dtype == CK_BF16) && d->c_dtype == d->dtype && d->beta == 0.0 && d->n % 8 == 0 &&
      (d->c_cs == 1 || d->n <= 1) && d->m >= 8192 &&
      (double)d->m * (double)d->n * (double)d->k * (double)d->batch >= 68719476736.0 &&
      ck_tma_operand(d->a, d->m, d->k, d->a_rs, d->a_cs, d->a_bs, 2) && ck_tma_operand(d->b, d->k, d->n, d->b_rs, d->b_cs, d->b_bs, 2))
    return ck_matmul_preferred_tma;
  if (d->m > 4096 || d->n > 4096 || d->k > 4096) return ck_matmul_preferred; /* (and m*n*k cannot overflow) */
  const int64_t mnk = d->m * d->n * d->k;
  const bool tiny = (d->dtype == CK_F32 || d->dtype == CK_F64) && d->c_dtype == d->dtype &&
                    d->precision == CK_MM_EXACT && d->a_cs == 1 && d->b_cs == 1 && d->c_cs == 1 && mnk > 0 &&
                    mnk <= MM_TINY_MACS && d->batch <= MM_TINY_MACS / mnk;
  return tiny ? ck_matmul_preferred_tiny : ck_matmul_preferred;
}

const ck_opdef ck_opdef_matmul = {CK_LADDER("matmul", ck_matmul), .host_dtypes = CK_DT_ALL5 | CK_DT_INTS | CK_DT_BIT(CK_BOOL) | CK_DT_FP8 | CK_DT_COMPLEX, .check = mm_check,
                                  .trivial = mm_trivial, .host = mm_host, .layout = mm_layout,
                                  .describe = mm_describe, .preferred_for = mm_preferred_for};
