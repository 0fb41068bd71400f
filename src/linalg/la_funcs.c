/*
 * la_funcs.c — each linear-algebra function as the steps it runs (kernels/linalg/linalg.h), the same steps on both
 * backends: only the library under la_exec differs (LAPACKE on the host, cuSOLVER/cuBLAS on a GPU).
 *
 *   lu        getrf; L and U cut out of the packed factors (tri); perm from the pivots (read back)
 *   solve     getrf, info (singular: the failing pivot), getrs; refine: cuSOLVER's gesv in a lower precision; real
 *             systems of order <= 32 (f32) or 16 (f64) on a GPU: gesv_small (one kernel; its info also says NaN/Inf,
 *             read only when the check word says a system has something to report; A and B read where they are
 *             when their batch is one stride: la_in)
 *   inv       solve with B the identity (gesv_small makes it in registers; otherwise a buffer)
 *   det       getrf; prod(diag U) * (-1)^(pivots that swapped), with the array ops (no read back)
 *   slogdet   the same with sum(log|diag U|) and prod(sign(diag U))
 *   cholesky  potrf, info (not positive definite: the failing minor), tri (the other triangle zeroed); real matrices
 *             of order <= 64 on a GPU: potrf_small (one kernel for all of it and the NaN/Inf scan, info read only
 *             when its check word says so; A read where it is, as solve's)
 *   cholesky_solve potrs; triangular_solve trsm (a right-side solve is the transposed left one)
 *   qr        geqrf; R = tri of its upper part; orgqr for Q (m x k, or m x m)
 *   lstsq     m >= n: geqrf, Q^H b (ormqr), R x = Q^H b (trsm); m < n: the same on A^H, minimum norm:
 *             R^H y = b, x = Q [y; 0]. A zero on R's diagonal is an error while check is on (rank-deficient A:
 *             ck.pinv gives the minimum-norm solution there). One algorithm on both backends, so the host is the
 *             oracle of the composition; GNU Octave's `\` checks it independently (spec/linalg_octave_spec.lua).
 *   svd       gesvd on A, or on A^H when m < n (cuSOLVER's gesvd takes m >= n only; A = V' S U'^H then); on a
 *             GPU by Jacobi (gesvdj) first, and gesvd from A again where it did not converge (la_cuda.c)
 *   eigh      syevd
 *   eig       geev (on complex buffers: A is made complex as it is loaded)
 * Complex (c64/c128, every function here): the steps run in their C/Z forms (orgqr, ormqr and syevd are ungqr, unmqr
 * and heevd there), each ^T above that is a transpose of the algebra is ^H (the job's trans 'C'; A^H is loaded as A^T
 * and conjugated in place: la_conj), and singular values and Hermitian eigenvalues are real. A transpose that is
 * only a layout (x A = b as A^T x^T = b^T; results as transposed views) stays a transpose.
 */
#include <stdlib.h>
#include <string.h>

#include "la_int.h"
#include "reduce_ops.h"

#define TRY(x)                                                                                                       \
  do {                                                                                                               \
    if ((st = (x))) goto done;                                                                                       \
  } while (0)

static int rows_of(const ck_tensor *t) { return (int)t->shape[t->ndim - 2]; }
static int cols_of(const ck_tensor *t) { return (int)t->shape[t->ndim - 1]; }

/* A step on a whole buffer: tri (zero a strict triangle, optionally a unit diagonal) */
static ck_status tri(la_env *e, la_mat *m, char uplo, bool unit) {
  ck_la_job j;
  la_job(e, &j, CK_LA_TRI, m);
  j.uplo = uplo;
  j.diag = unit ? 'U' : 'N';
  return la_exec(e, &j);
}

/* The LU factorisation of W (getrf), or a rung of the LU ladder when the call names one. */
static ck_status getrf(la_env *e, la_mat *w, ck_tensor *piv) {
  ck_la_job j;
  la_job(e, &j, CK_LA_GETRF, w);
  j.ipiv = (int32_t *)ck_data(piv);
  j.sp = w->rows < w->cols ? w->rows : w->cols;
  if (e->c->variant) return la_lu_variant(e, &j);
  return la_exec(e, &j);
}

/* perm (1-based, A[perm, :] = L U) from LAPACK's swaps, on the host, then on the call's device */
static ck_status perm_of(la_env *e, ck_tensor *out, const ck_tensor *piv, int m) {
  ck_tensor hp = {0}, hq = {0};
  const int k = (int)piv->shape[piv->ndim - 1];
  ck_status st = ck_to(e->ctx, &hp, piv, CK_DEV_HOST, CK_I32);
  int64_t shape[CK_MAX_DIMS];
  memcpy(shape, e->bshape, sizeof(int64_t) * (size_t)e->nb);
  shape[e->nb] = m;
  if (!st) st = ck_empty(e->ctx, &hq, CK_I32, e->nb + 1, shape, CK_DEV_HOST);
  if (!st) {
    const int32_t *p = (const int32_t *)ck_data(&hp);
    int32_t *q = (int32_t *)ck_data(&hq);
    for (int64_t b = 0; b < e->batch; ++b) {
      int32_t *r = q + b * m;
      for (int i = 0; i < m; ++i) r[i] = i + 1;
      for (int i = 0; i < k; ++i) {
        const int s = p[b * k + i] - 1;
        if (s < 0 || s >= m) continue; /* (check = false on a failed factorisation) */
        const int32_t t = r[i];
        r[i] = r[s], r[s] = t;
      }
    }
    st = ck_to(e->ctx, out, &hq, e->dev, CK_I32);
  }
  ck_release(&hp);
  ck_release(&hq);
  return st;
}

static ck_status fn_lu(la_env *e) {
  ck_la_call *c = e->c;
  const int m = rows_of(c->a), n = cols_of(c->a), k = m < n ? m : n;
  la_mat w = {0}, l = {0}, u = {0};
  ck_tensor piv = {0}, src = {0};
  ck_status st;
  TRY(la_load(e, &w, c->a, m, n, false));
  TRY(la_check_finite(e, &w.buf, "A"));
  TRY(la_new_i32(e, &piv, k));
  TRY(getrf(e, &w, &piv)); /* singular A is no error here: U has the zero */
  TRY(la_cut(e, &c->out[0], &w, m, n));
  ck_view_of(&c->out[1], &piv);
  c->nout = 2;
  if (c->packed) goto done;
  TRY(perm_of(e, &c->out[2], &piv, m));
  TRY(la_alloc(e, &l, m, k));
  TRY(la_cut(e, &src, &w, m, k));
  if (ck_numel(&src)) TRY(ck_copy(e->ctx, &l.view, &src));
  ck_release(&src);
  TRY(tri(e, &l, 'L', true));
  TRY(la_alloc(e, &u, k, n));
  TRY(la_cut(e, &src, &w, k, n));
  if (ck_numel(&src)) TRY(ck_copy(e->ctx, &u.view, &src));
  TRY(tri(e, &u, 'U', false));
  ck_view_of(&c->out[3], &l.view);
  ck_view_of(&c->out[4], &u.view);
  c->nout = 5;
done:
  la_free(&w), la_free(&l), la_free(&u);
  ck_release(&piv), ck_release(&src);
  return st;
}

/* A one-kernel step (gesv_small, potrf_small) run and its info checked as `kind` says: when checked and not captured,
 * the device's check word says whether info needs reading at all (a wait for the stream, no copy); otherwise info
 * is read as for every other step. */
static ck_status exec_worded(la_env *e, ck_la_job *j, int kind) {
  int64_t *word = NULL;
  if (e->c->check && !ck_capturing(e->ctx) && ck_check_word(e->ctx, e->dev, &word, &j->flag) == CK_OK)
    word[0] = LA_WORD_NONE;
  else
    word = NULL, j->flag = NULL;
  ck_status st = la_exec(e, j);
  if (!st && word) st = la_wait(e);
  if (!st && (!word || ((volatile int64_t *)word)[0] != LA_WORD_NONE)) st = la_info_check(e, kind);
  return st;
}

/* B = the identity (n x n over the batch) in a column-major buffer: ck.inv's right-hand side off the one-kernel path */
static ck_status identity(la_env *e, la_mat *b, int n) {
  ck_tensor d = {0};
  ck_status st = la_alloc(e, b, n, n);
  if (!st && ck_numel(&b->buf) > 0) st = ck_ew_generate(e->ctx, CK_EW_FILL, &b->buf, 0, 0);
  if (!st && ck_numel(&b->buf) > 0) {
    la_diag(e, &d, b, n);
    st = ck_ew_generate(e->ctx, CK_EW_FILL, &d, 1, 0);
    ck_release(&d);
  }
  return st;
}

/* solve, and inv (B the identity: inv) */
static ck_status fn_solve(la_env *e, bool inv) {
  ck_la_call *c = e->c;
  const int n = rows_of(c->a), r = inv ? n : cols_of(c->b);
  la_mat a = {0}, b = {0}, x = {0};
  ck_tensor piv = {0};
  ck_la_job j;
  ck_status st;
  /* small real systems on a GPU: one kernel, whose info also carries the NaN/Inf check (one read instead of two);
   * A and B read in place where they can be (la_in), the identity made in registers */
  const bool fused = !c->refine && e->dev.kind != CK_HOST && n <= CK_LA_GESV_SMALL_MAX(e->dt) && e->batch <= 0x7fffffff;
  if (fused) {
    la_job(e, &j, CK_LA_GESV_SMALL, NULL);
    j.m = j.n = n, j.nrhs = r;
    TRY(la_in(e, &j.ain, &a, c->a, n, n));
    if (!inv) TRY(la_in(e, &j.bin, &b, c->b, n, r));
    if (b.buf.st) x = b, b = (la_mat){0}; /* B was copied: x overwrites it */
    else TRY(la_alloc(e, &x, n, r));
    j.b = ck_data(&x.buf), j.sb = (int64_t)n * r, j.ldb = n > 1 ? n : 1;
    TRY(exec_worded(e, &j, LA_SINGULAR_FINITE));
    TRY(la_cut(e, &c->out[0], &x, n, r));
    c->nout = 1;
    goto done;
  }
  TRY(la_load(e, &a, c->a, n, n, false));
  TRY(la_check_finite(e, &a.buf, "A"));
  TRY(inv ? identity(e, &b, n) : la_load(e, &b, c->b, n, r, false));
  TRY(la_new_i32(e, &piv, n));
  if (c->refine && e->dev.kind != CK_HOST) {
    TRY(la_alloc(e, &x, n, r));
    la_job(e, &j, CK_LA_GESV_IRS, &a);
    j.nrhs = r, j.b = ck_data(&b.buf), j.sb = (int64_t)n * r, j.ldb = n > 1 ? n : 1;
    j.u = ck_data(&x.buf), j.su = j.sb, j.ldu = j.ldb, j.ipiv = (int32_t *)ck_data(&piv), j.sp = n;
    j.refine = c->refine;
    TRY(la_exec(e, &j));
    c->iters = j.iters;
    TRY(la_info_check(e, LA_SINGULAR));
    TRY(la_cut(e, &c->out[0], &x, n, r));
  } else {
    TRY(getrf(e, &a, &piv));
    TRY(la_info_check(e, LA_SINGULAR));
    la_job(e, &j, CK_LA_GETRS, &a);
    j.nrhs = r, j.b = ck_data(&b.buf), j.sb = (int64_t)n * r, j.ldb = n > 1 ? n : 1;
    j.ipiv = (int32_t *)ck_data(&piv), j.sp = n;
    TRY(la_exec(e, &j));
    TRY(la_cut(e, &c->out[0], &b, n, r));
  }
  c->nout = 1;
done:
  la_free(&a), la_free(&b), la_free(&x);
  ck_release(&piv);
  return st;
}

/* det and slogdet from the packed LU and the pivots, with the array ops: no read back. */
static ck_status fn_det(la_env *e, bool logdet) {
  ck_la_call *c = e->c;
  ck_ctx *ctx = e->ctx;
  const int n = rows_of(c->a), last = e->nb;
  la_mat w = {0};
  ck_tensor piv = {0}, ar = {0}, ne = {0}, cnt = {0}, par = {0}, sg = {0}, sgn = {0}, d = {0}, t1 = {0}, t2 = {0};
  ck_status st;
  TRY(la_load(e, &w, c->a, n, n, false));
  TRY(la_check_finite(e, &w.buf, "A"));
  TRY(la_new_i32(e, &piv, n));
  TRY(getrf(e, &w, &piv));
  const int64_t nn = n;
  TRY(ck_empty(ctx, &ar, CK_I32, 1, &nn, e->dev));
  if (n) TRY(ck_ew_generate(ctx, CK_EW_ARANGE, &ar, 1, 1));
  TRY(ck_ew_binary(ctx, CK_EW_NE, &ne, &piv, &ar, NULL, NULL));        /* 1 where row i was swapped */
  TRY(ck_reduce(ctx, CK_RED_SUM, &cnt, NULL, &ne, last, false, NULL, NULL));
  TRY(ck_ew_binary_scalar(ctx, CK_EW_MOD, &par, &cnt, 2, false, NULL, NULL));
  TRY(ck_ew_binary_scalar(ctx, CK_EW_MUL, &sg, &par, -2, false, NULL, NULL));
  TRY(ck_ew_binary_scalar(ctx, CK_EW_ADD, &sgn, &sg, 1, false, NULL, NULL)); /* (-1)^swaps, i32 */
  la_diag(e, &d, &w, n);
  if (!logdet) {
    TRY(ck_reduce(ctx, CK_RED_PROD, &t1, NULL, &d, last, false, NULL, NULL));
    TRY(ck_ew_binary(ctx, CK_EW_MUL, &c->out[0], &t1, &sgn, NULL, NULL));
    c->nout = 1;
  } else {
    TRY(ck_ew_unary(ctx, CK_EW_SIGN, &t1, &d, 0, 0, NULL, NULL));
    TRY(ck_reduce(ctx, CK_RED_PROD, &t2, NULL, &t1, last, false, NULL, NULL));
    TRY(ck_ew_binary(ctx, CK_EW_MUL, &c->out[0], &t2, &sgn, NULL, NULL));
    ck_release(&t1), ck_release(&t2);
    TRY(ck_ew_unary(ctx, CK_EW_ABS, &t1, &d, 0, 0, NULL, NULL));
    TRY(ck_ew_unary(ctx, CK_EW_LOG, &t2, &t1, 0, 0, NULL, NULL));
    TRY(ck_reduce(ctx, CK_RED_SUM, &c->out[1], NULL, &t2, last, false, NULL, NULL));
    c->nout = 2;
  }
done:
  la_free(&w);
  ck_tensor *all[] = {&piv, &ar, &ne, &cnt, &par, &sg, &sgn, &d, &t1, &t2};
  for (size_t i = 0; i < sizeof all / sizeof *all; ++i) ck_release(all[i]);
  return st;
}

static ck_status fn_cholesky(la_env *e) {
  ck_la_call *c = e->c;
  const int n = rows_of(c->a);
  la_mat w = {0};
  ck_la_job j;
  ck_status st;
  /* small real matrices on a GPU: one kernel for the scan of A, the factor, info and the zeroed triangle (fn_solve's
   * fused path, with its check word) */
  const bool fused = e->dev.kind != CK_HOST && n <= CK_LA_POTRF_SMALL_MAX(e->dt) && e->batch <= 0x7fffffff;
  if (fused) { /* A read in place where it can be (la_in), else from its copy, which the factor overwrites */
    la_job(e, &j, CK_LA_POTRF_SMALL, NULL);
    TRY(la_in(e, &j.ain, &w, c->a, n, n));
    if (!w.buf.st) TRY(la_alloc(e, &w, n, n));
    j.m = j.n = n, j.a = ck_data(&w.buf), j.sa = (int64_t)n * n, j.lda = n > 1 ? n : 1;
    j.uplo = c->upper ? 'U' : 'L';
    TRY(exec_worded(e, &j, LA_NOT_SPD_FINITE));
    TRY(la_cut(e, &c->out[0], &w, n, n));
    c->nout = 1;
    goto done;
  }
  TRY(la_load(e, &w, c->a, n, n, false));
  TRY(la_check_finite(e, &w.buf, "A"));
  la_job(e, &j, CK_LA_POTRF, &w);
  j.uplo = c->upper ? 'U' : 'L';
  TRY(la_exec(e, &j));
  TRY(la_info_check(e, LA_NOT_SPD));
  TRY(tri(e, &w, c->upper ? 'U' : 'L', false));
  TRY(la_cut(e, &c->out[0], &w, n, n));
  c->nout = 1;
done:
  la_free(&w);
  return st;
}

/* cholesky_solve and triangular_solve: a factor and a right-hand side */
static ck_status fn_factor_solve(la_env *e, bool chol) {
  ck_la_call *c = e->c;
  const int n = rows_of(c->a);
  const bool right = !chol && !c->left;
  const int r = right ? rows_of(c->b) : cols_of(c->b);
  la_mat a = {0}, b = {0};
  ck_la_job j;
  ck_status st;
  TRY(la_load(e, &a, c->a, n, n, false));
  TRY(la_check_finite(e, &a.buf, "A"));
  if (!chol && !c->unit) TRY(la_check_diag(e, &a, n, "the triangular matrix is singular"));
  TRY(la_load(e, &b, c->b, n, r, right)); /* x a = b  <=>  a^T x^T = b^T */
  la_job(e, &j, chol ? CK_LA_POTRS : CK_LA_TRSM, &a);
  j.uplo = c->upper ? 'U' : 'L';
  j.trans = right ? 'T' : 'N';
  j.diag = c->unit ? 'U' : 'N';
  j.nrhs = r, j.b = ck_data(&b.buf), j.sb = (int64_t)n * r, j.ldb = n > 1 ? n : 1;
  TRY(la_exec(e, &j));
  if (!right) TRY(la_cut(e, &c->out[0], &b, n, r));
  else {
    ck_tensor t = {0};
    TRY(la_cut(e, &t, &b, n, r));
    st = ck_view_transpose(e->ctx, &c->out[0], &t, e->nb, e->nb + 1);
    ck_release(&t);
    if (st) goto done;
  }
  c->nout = 1;
done:
  la_free(&a), la_free(&b);
  return st;
}

static ck_status fn_qr(la_env *e) {
  ck_la_call *c = e->c;
  const int m = rows_of(c->a), n = cols_of(c->a), k = m < n ? m : n;
  const int qc = c->full ? m : k; /* Q's columns; R has as many rows */
  la_mat w = {0}, r = {0};
  ck_tensor tau = {0}, src = {0};
  ck_la_job j;
  ck_status st;
  TRY(la_load(e, &w, c->a, m, n > qc ? n : qc, false));
  TRY(la_check_finite(e, &w.buf, "A"));
  TRY(la_new_vec(e, &tau, k));
  la_job(e, &j, CK_LA_GEQRF, &w);
  j.n = n, j.tau = ck_data(&tau), j.stau = k;
  TRY(la_exec(e, &j));
  TRY(la_alloc(e, &r, qc, n));
  if (ck_numel(&r.buf)) TRY(ck_ew_generate(e->ctx, CK_EW_FILL, &r.buf, 0, 0));
  TRY(la_cut(e, &src, &w, k, n));
  if (ck_numel(&src)) {
    TRY(la_cut(e, &c->out[1], &r, k, n));
    TRY(ck_copy(e->ctx, &c->out[1], &src));
  }
  ck_release(&c->out[1]);
  TRY(tri(e, &r, 'U', false));
  la_job(e, &j, CK_LA_ORGQR, &w);
  j.n = qc, j.nrhs = k, j.tau = ck_data(&tau), j.stau = k;
  TRY(la_exec(e, &j));
  TRY(la_cut(e, &c->out[0], &w, m, qc));
  TRY(la_cut(e, &c->out[1], &r, qc, n));
  c->nout = 2;
done:
  la_free(&w), la_free(&r);
  ck_release(&tau), ck_release(&src);
  return st;
}

static ck_status fn_lstsq(la_env *e) {
  ck_la_call *c = e->c;
  const int m = rows_of(c->a), n = cols_of(c->a), r = cols_of(c->b);
  const bool tall = m >= n;
  const int k = tall ? n : m, big = tall ? m : n;
  la_mat a = {0}, b = {0};
  ck_tensor tau = {0};
  ck_la_job j;
  ck_status st;
  TRY(la_load(e, &a, c->a, big, k, !tall)); /* A, or A^H: big x k */
  if (!tall) TRY(la_conj(e, &a));
  TRY(la_check_finite(e, &a.buf, "A"));
  TRY(la_load(e, &b, c->b, big, r, false)); /* rows past m are zero */
  TRY(la_new_vec(e, &tau, k));
  la_job(e, &j, CK_LA_GEQRF, &a);
  j.tau = ck_data(&tau), j.stau = k;
  TRY(la_exec(e, &j));
  TRY(la_check_diag(e, &a, k, "A is rank-deficient (R, its QR factor, is singular; ck.pinv(A) * B is the "
                              "minimum-norm solution)"));
  ck_la_job q, t;
  const char ht = ck_dtype_is_complex(e->dt) ? 'C' : 'T'; /* ^H: the conjugate transpose ('T' for real) */
  la_job(e, &q, CK_LA_ORMQR, &a); /* Q^H b (tall) or Q y (wide) on the big x r buffer */
  q.m = big, q.n = k, q.nrhs = r, q.tau = ck_data(&tau), q.stau = k, q.trans = tall ? ht : 'N';
  q.b = ck_data(&b.buf), q.sb = (int64_t)big * r, q.ldb = big > 1 ? big : 1;
  la_job(e, &t, CK_LA_TRSM, &a); /* R x = Q^H b (tall) or R^H y = b (wide: A = R^H Q^H): b's first k rows */
  t.m = k, t.uplo = 'U', t.trans = tall ? 'N' : ht, t.nrhs = r;
  t.b = q.b, t.sb = q.sb, t.ldb = q.ldb;
  TRY(la_exec(e, tall ? &q : &t));
  TRY(la_exec(e, tall ? &t : &q));
  TRY(la_cut(e, &c->out[0], &b, n, r));
  c->nout = 1;
done:
  la_free(&a), la_free(&b);
  ck_release(&tau);
  return st;
}

static ck_status fn_svd(la_env *e) {
  ck_la_call *c = e->c;
  const int m = rows_of(c->a), n = cols_of(c->a), k = m < n ? m : n;
  const bool tall = m >= n;
  const int big = tall ? m : n, uc = c->full ? big : k; /* A or A^T: big x k; U' big x uc, V'^T k x k */
  la_mat w = {0}, u = {0}, vt = {0};
  ck_tensor s = {0}, uo = {0}, vo = {0}, t = {0};
  ck_la_job j;
  ck_status st;
  TRY(la_load(e, &w, c->a, big, k, !tall)); /* A, or A^H */
  if (!tall) TRY(la_conj(e, &w));
  TRY(la_check_finite(e, &w.buf, "A"));
  TRY(la_new_rvec(e, &s, k)); /* real, complex A too */
  la_job(e, &j, CK_LA_GESVD, &w);
  j.s = ck_data(&s), j.ss = k, j.jobu = c->vectors ? (c->full ? 'A' : 'S') : 'N';
  j.qr_svd = !c->check; /* unchecked (no info read back, so no fallback): QR iteration, which always converges */
  if (c->vectors) {
    TRY(la_alloc(e, &u, big, uc));
    TRY(la_alloc(e, &vt, k, k));
    if (k == 0) { /* no singular vectors to compute: U' is the identity, by convention */
      if (ck_numel(&u.buf)) TRY(ck_ew_generate(e->ctx, CK_EW_FILL, &u.buf, 0, 0));
      TRY(tri(e, &u, 'L', true));
    }
    j.u = ck_data(&u.buf), j.su = (int64_t)big * uc, j.ldu = big;
    j.vt = vt.buf.st ? ck_data(&vt.buf) : NULL, j.svt = (int64_t)k * k, j.ldvt = k;
  }
  TRY(la_exec(e, &j));
  bool any = true; /* (the host, or an unchecked call: la_info_check decides, or skips) */
  if (e->dev.kind != CK_HOST && c->check) { /* Jacobi (gesvdj) left an entry unconverged: QR iteration, from A again */
    TRY(la_info_any(e, &any));
    if (any) {
      la_free(&w);
      TRY(la_load(e, &w, c->a, big, k, !tall));
      if (!tall) TRY(la_conj(e, &w));
      j.a = ck_data(&w.buf), j.qr_svd = 1;
      TRY(la_exec(e, &j));
    }
  }
  if (any) TRY(la_info_check(e, LA_NO_CONVERGENCE)); /* (info read back once when Jacobi converged everywhere) */
  if (!c->vectors) {
    ck_view_of(&c->out[0], &s);
    c->nout = 1;
    goto done;
  }
  TRY(la_cut(e, &uo, &u, big, uc));
  TRY(la_conj(e, &vt)); /* complex: V' = (V'^H)^H, conjugated in place, then ... */
  TRY(la_cut(e, &t, &vt, k, k));
  TRY(ck_view_transpose(e->ctx, &vo, &t, e->nb, e->nb + 1)); /* ... transposed as a view: V' = (V'^T)^T */
  ck_view_of(&c->out[0], tall ? &uo : &vo);                   /* A^H = U' S V'^H  =>  A = V' S U'^H */
  ck_view_of(&c->out[1], &s);
  ck_view_of(&c->out[2], tall ? &vo : &uo);
  c->nout = 3;
done:
  la_free(&w), la_free(&u), la_free(&vt);
  ck_release(&s), ck_release(&uo), ck_release(&vo), ck_release(&t);
  return st;
}

/* The eigen-solvers' end (eigh, eig): run the job, check convergence, return the eigenvalues and, when asked, the
 * n x n eigenvectors in vec. */
static ck_status eig_run(la_env *e, ck_la_job *j, const ck_tensor *ev, la_mat *vec, int n) {
  ck_la_call *c = e->c;
  ck_status st;
  TRY(la_exec(e, j));
  TRY(la_info_check(e, LA_NO_CONVERGENCE));
  ck_view_of(&c->out[0], ev);
  c->nout = 1;
  if (c->vectors) {
    TRY(la_cut(e, &c->out[1], vec, n, n));
    c->nout = 2;
  }
done:
  return st;
}

static ck_status fn_eigh(la_env *e) {
  ck_la_call *c = e->c;
  const int n = rows_of(c->a);
  la_mat w = {0};
  ck_tensor ev = {0};
  ck_la_job j;
  ck_status st;
  TRY(la_load(e, &w, c->a, n, n, false));
  TRY(la_check_finite(e, &w.buf, "A"));
  TRY(la_new_rvec(e, &ev, n)); /* real, Hermitian A too */
  la_job(e, &j, CK_LA_SYEVD, &w);
  j.s = ck_data(&ev), j.ss = n, j.jobu = c->vectors ? 'V' : 'N', j.uplo = c->upper ? 'U' : 'L';
  st = eig_run(e, &j, &ev, &w, n);
done:
  la_free(&w);
  ck_release(&ev);
  return st;
}

/* The general eigenproblem: geev on the complex form of A (a real A is made complex as it is loaded). One routine
 * for real and complex input, and no LAPACK-style packed conjugate pairs to unpack: the eigenvalues and
 * eigenvectors of a real matrix are complex anyway. Costs the complex arithmetic's ~4x on real input. */
static ck_status fn_eig(la_env *e) {
  ck_la_call *c = e->c;
  const int n = rows_of(c->a);
  la_mat w = {0}, vr = {0};
  ck_tensor ev = {0};
  ck_la_job j;
  ck_status st;
  TRY(la_check_finite(e, c->a, "A"));
  e->dt = (e->dt == CK_F64 || e->dt == CK_C128) ? CK_C128 : CK_C64; /* every buffer below is complex */
  TRY(la_load(e, &w, c->a, n, n, false));
  TRY(la_new_vec(e, &ev, n));
  if (c->vectors) TRY(la_alloc(e, &vr, n, n));
  la_job(e, &j, CK_LA_GEEV, &w);
  j.s = ck_data(&ev), j.ss = n, j.jobu = c->vectors ? 'V' : 'N';
  if (c->vectors) j.u = ck_data(&vr.buf), j.su = (int64_t)n * n, j.ldu = n;
  st = eig_run(e, &j, &ev, &vr, n);
done:
  la_free(&w), la_free(&vr);
  ck_release(&ev);
  return st;
}

ck_status la_run_fn(la_env *e) {
  switch (e->c->fn) {
  case CK_LAF_LU: return fn_lu(e);
  case CK_LAF_SOLVE: return fn_solve(e, false);
  case CK_LAF_INV: return fn_solve(e, true);
  case CK_LAF_DET: return fn_det(e, false);
  case CK_LAF_SLOGDET: return fn_det(e, true);
  case CK_LAF_CHOLESKY: return fn_cholesky(e);
  case CK_LAF_CHOLESKY_SOLVE: return fn_factor_solve(e, true);
  case CK_LAF_TRSOLVE: return fn_factor_solve(e, false);
  case CK_LAF_QR: return fn_qr(e);
  case CK_LAF_LSTSQ: return fn_lstsq(e);
  case CK_LAF_SVD: return fn_svd(e);
  case CK_LAF_EIGH: return fn_eigh(e);
  case CK_LAF_EIG: return fn_eig(e);
  default: return ck_error(e->ctx, CK_ERR_INTERNAL, "%s: unknown linear-algebra function %d", e->c->name, (int)e->c->fn);
  }
}
