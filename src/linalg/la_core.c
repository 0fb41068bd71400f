/*
 * la_core.c — the linalg layer's entry (ck_linalg: checks, batch, device, the record of what ran) and the plumbing
 * every function shares: column-major buffers, the steps on either backend, info and the NaN/Inf rule.
 *
 * Why column-major buffers, copied once: LAPACK and cuSOLVER overwrite their input and want a dense column-major
 * matrix per batch entry; a buffer [batch..., cols, rows] contiguous is that, and the copy into it (ck_copy: any
 * strides, broadcast batch dims, dtype and device as they are) is the one pass that also takes transposed and
 * strided views. A transposed row-major matrix (x:t()) is already column-major, so its copy is a plain memcpy.
 * Results are views of the buffers ([..., rows, cols] with the last two dims swapped), so nothing is copied out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_linalg.h"
#include "la_int.h"
#include "ck_stream.h" /* (after ck.h, which la_int.h brings) */
#include "reduce_ops.h"

// ---------------------------------------------------------------- buffers

ck_status la_alloc(la_env *e, la_mat *m, int rows, int cols) {
  int64_t shape[CK_MAX_DIMS];
  memcpy(shape, e->bshape, sizeof(int64_t) * (size_t)e->nb);
  shape[e->nb] = cols;
  shape[e->nb + 1] = rows;
  m->rows = rows;
  m->cols = cols;
  ck_status st = ck_empty(e->ctx, &m->buf, e->dt, e->nb + 2, shape, e->dev);
  if (!st) st = ck_view_transpose(e->ctx, &m->view, &m->buf, e->nb, e->nb + 1);
  if (st) la_free(m);
  return st;
}

ck_status la_cut(la_env *e, ck_tensor *out, la_mat *m, int r, int c) {
  ck_tensor t = {0};
  ck_status st = ck_view_narrow(e->ctx, &t, &m->view, e->nb, 0, r);
  if (!st) st = ck_view_narrow(e->ctx, out, &t, e->nb + 1, 0, c);
  ck_release(&t);
  return st;
}

void la_free(la_mat *m) {
  ck_release(&m->view);
  ck_release(&m->buf);
}

ck_status la_load(la_env *e, la_mat *m, const ck_tensor *x, int rows, int cols, bool trans) {
  ck_tensor xt = {0}, xe = {0}, dst = {0};
  const int nd = x->ndim;
  ck_status st = trans ? ck_view_transpose(e->ctx, &xt, x, nd - 2, nd - 1) : (ck_view_of(&xt, x), CK_OK);
  int64_t shape[CK_MAX_DIMS];
  memcpy(shape, e->bshape, sizeof(int64_t) * (size_t)e->nb);
  shape[e->nb] = xt.shape[nd - 2];
  shape[e->nb + 1] = xt.shape[nd - 1];
  const int r = (int)shape[e->nb], c = (int)shape[e->nb + 1];
  if (!st) st = ck_view_expand(e->ctx, &xe, &xt, e->nb + 2, shape);
  if (!st) st = la_alloc(e, m, rows > r ? rows : r, cols > c ? cols : c);
  if (!st && (m->rows > r || m->cols > c) && ck_numel(&m->buf) > 0) st = ck_ew_generate(e->ctx, CK_EW_FILL, &m->buf, 0, 0);
  if (!st) st = la_cut(e, &dst, m, r, c);
  if (!st && ck_numel(&dst) > 0) st = ck_copy(e->ctx, &dst, &xe);
  ck_release(&xt);
  ck_release(&xe);
  ck_release(&dst);
  if (st) la_free(m);
  else e->copies++;
  return st;
}

/* *sb: the one stride between batch entries of x expanded to the call's batch (entry b at b * sb), when there is one */
static bool batch_stride(const la_env *e, const ck_tensor *x, int64_t *sb) {
  const int off = e->nb - (x->ndim - 2);
  int64_t span = 1;
  bool first = true;
  *sb = 0;
  for (int k = e->nb - 1; k >= 0; --k) {
    const int64_t n = e->bshape[k];
    if (n == 1) continue;
    const int xk = k - off;
    const int64_t s = xk >= 0 && x->shape[xk] != 1 ? x->stride[xk] : 0; /* (a broadcast dim steps by 0) */
    if (first) *sb = s, first = false;
    else if (s != *sb * span) return false;
    span *= n;
  }
  return true;
}

ck_status la_in(la_env *e, ck_la_in *in, la_mat *m, const ck_tensor *x, int rows, int cols) {
  int64_t sb;
  memset(in, 0, sizeof *in);
  if (x->dtype == e->dt && batch_stride(e, x, &sb)) {
    ck_status st = ck_stream_touch(e->ctx, e->c->name, x);
    if (st) return st;
    in->p = ck_data(x), in->sb = sb, in->rs = x->stride[x->ndim - 2], in->cs = x->stride[x->ndim - 1];
    return CK_OK;
  }
  ck_status st = la_load(e, m, x, rows, cols, false);
  if (!st) in->p = ck_data(&m->buf), in->sb = (int64_t)m->rows * m->cols, in->rs = 1, in->cs = m->rows;
  return st;
}

void la_diag(la_env *e, ck_tensor *d, la_mat *m, int k) {
  ck_view_of(d, &m->buf);
  d->ndim = e->nb + 1;
  d->shape[e->nb] = k;
  d->stride[e->nb] = (int64_t)m->rows + 1;
}

ck_status la_new_i32(la_env *e, ck_tensor *t, int k) {
  int64_t shape[CK_MAX_DIMS];
  memcpy(shape, e->bshape, sizeof(int64_t) * (size_t)e->nb);
  shape[e->nb] = k;
  return ck_empty(e->ctx, t, CK_I32, e->nb + 1, shape, e->dev);
}

ck_status la_new_vec(la_env *e, ck_tensor *t, int k) {
  int64_t shape[CK_MAX_DIMS];
  memcpy(shape, e->bshape, sizeof(int64_t) * (size_t)e->nb);
  shape[e->nb] = k;
  return ck_empty(e->ctx, t, e->dt, e->nb + (k >= 0), shape, e->dev);
}

ck_status la_new_rvec(la_env *e, ck_tensor *t, int k) {
  int64_t shape[CK_MAX_DIMS];
  memcpy(shape, e->bshape, sizeof(int64_t) * (size_t)e->nb);
  shape[e->nb] = k;
  return ck_empty(e->ctx, t, ck_complex_part(e->dt), e->nb + 1, shape, e->dev);
}

ck_status la_conj(la_env *e, la_mat *m) {
  if (!ck_dtype_is_complex(m->buf.dtype) || ck_numel(&m->buf) == 0) return CK_OK;
  ck_tensor pv = {0}, im = {0};
  ck_status st = ck_pair_view(e->ctx, &pv, &m->buf); /* [..., 2]: the imaginary parts are its last index */
  if (!st) st = ck_view_narrow(e->ctx, &im, &pv, pv.ndim - 1, 1, 1);
  if (!st) st = ck_ew_unary(e->ctx, CK_EW_NEG, &im, &im, 0, 0, NULL, NULL); /* in place */
  ck_release(&pv);
  ck_release(&im);
  return st;
}

// ---------------------------------------------------------------- steps

void la_job(la_env *e, ck_la_job *j, int op, la_mat *a) {
  memset(j, 0, sizeof *j);
  j->op = op;
  j->dtype = e->dt;
  j->batch = e->batch;
  j->uplo = 'L';
  j->side = 'L';
  j->trans = 'N';
  j->diag = 'N';
  j->jobu = 'N';
  if (a) {
    j->m = a->rows;
    j->n = a->cols;
    j->a = a->buf.st ? ck_data(&a->buf) : NULL;
    j->sa = (int64_t)a->rows * a->cols;
    j->lda = a->rows > 1 ? a->rows : 1;
  }
  j->info = e->info.st ? (int32_t *)ck_data(&e->info) : NULL;
}

/* Nothing to compute: an empty batch, an empty matrix, no right-hand sides. */
static bool empty_job(const ck_la_job *j) {
  if (j->batch == 0 || j->m == 0 || j->n == 0) return true;
  switch (j->op) {
  case CK_LA_GETRS: case CK_LA_POTRS: case CK_LA_TRSM: case CK_LA_ORMQR: case CK_LA_GESV_IRS: return j->nrhs == 0;
  default: return false;
  }
}

ck_status la_exec(la_env *e, ck_la_job *j) {
  if (empty_job(j)) return CK_OK;
  if (e->dev.kind == CK_HOST) return ck_host_la(e->ctx, j) ? ck_error_prefix(e->ctx, CK_ERR_UNSUPPORTED, "%s", e->c->name) : CK_OK;
  return ck_la_cuda(e->ctx, j, e->c->name);
}

ck_status la_info_new(la_env *e) {
  ck_release(&e->info);
  const int64_t n = e->batch > 0 ? e->batch : 1;
  ck_status st = ck_empty(e->ctx, &e->info, CK_I32, 1, &n, e->dev);
  /* zeroed on both backends: a library call with an empty matrix (n = 0) returns without writing info, and the
   * device's garbage was read as a pivot (an H100 run of 0 x 0 solve raised "U(320095806, ...) is zero") */
  if (!st) st = ck_ew_generate(e->ctx, CK_EW_FILL, &e->info, 0, 0);
  return st;
}

/* " (matrix [2,3] of the batch)" for entry i, or "" without a batch */
static const char *where(la_env *e, int64_t i, char *buf, size_t n) {
  if (e->nb == 0) return "";
  int64_t idx[CK_MAX_DIMS];
  for (int d = e->nb - 1; d >= 0; --d) idx[d] = i % e->bshape[d], i /= e->bshape[d];
  size_t k = (size_t)snprintf(buf, n, " (matrix [");
  for (int d = 0; d < e->nb && k < n; ++d) k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "", (long long)idx[d] + 1);
  if (k < n) snprintf(buf + k, n - k, "] of the batch)");
  return buf;
}

static ck_status raise(la_env *e, int kind, int64_t i, int v) {
  char w[96];
  const char *n = e->c->name;
  where(e, i, w, sizeof w);
  switch (kind) {
  case LA_SINGULAR:
    return ck_error(e->ctx, CK_ERR_ARG, "%s: the matrix is singular: U(%d,%d) is exactly zero in its LU factors%s", n,
                    v, v, w);
  case LA_NOT_SPD:
    return ck_error(e->ctx, CK_ERR_ARG,
                    "%s: the matrix is not positive definite: its leading minor of order %d is not positive%s", n, v, w);
  case LA_NO_CONVERGENCE:
    return ck_error(e->ctx, CK_ERR_ARG, "%s: did not converge: %d values failed to converge%s", n, v, w);
  default:
    return ck_error(e->ctx, CK_ERR_ARG, "%s: the matrix is singular (rank-deficient): its diagonal entry (%d,%d) is "
                    "exactly zero%s", n, v, v, w);
  }
}

/* info's entries where the host reads them: *v (in *tmp, to free, when read back from a device) */
static ck_status info_host(la_env *e, int32_t **v, int32_t **tmp) {
  *v = (int32_t *)ck_data(&e->info), *tmp = NULL;
  if (e->dev.kind == CK_HOST) return CK_OK;
  if (!(*tmp = malloc(sizeof(int32_t) * (size_t)e->batch))) return ck_error(e->ctx, CK_ERR_OOM, "%s: out of memory", e->c->name);
  ck_status st = ck_read(e->ctx, &e->info, *tmp);
  if (st) return free(*tmp), *tmp = NULL, ck_error_prefix(e->ctx, st, "%s", e->c->name);
  *v = *tmp;
  return CK_OK;
}

ck_status la_info_any(la_env *e, bool *any) {
  *any = false;
  if (e->batch == 0) return CK_OK;
  int32_t *v, *tmp;
  ck_status st = info_host(e, &v, &tmp);
  for (int64_t i = 0; i < e->batch && !st && !*any; ++i) *any = v[i] > 0;
  free(tmp);
  return st;
}

ck_status la_wait(la_env *e) {
  const ck_status st = ck_stream_sync_current(e->ctx, e->dev);
  return st ? ck_error_prefix(e->ctx, st, "%s", e->c->name) : CK_OK;
}

static ck_status not_finite(la_env *e, const char *what) {
  return ck_error(e->ctx, CK_ERR_ARG,
                  "%s: %s has NaN or Inf entries (refused while check is on, on every device alike; {check = false} "
                  "skips this scan and the results are then not defined)", e->c->name, what);
}

ck_status la_info_check(la_env *e, int kind) {
  if (!e->c->check || e->batch == 0) return CK_OK;
  int32_t *v, *tmp;
  ck_status st = info_host(e, &v, &tmp);
  if (st) return st;
  if (kind == LA_SINGULAR_FINITE || kind == LA_NOT_SPD_FINITE) {
    for (int64_t i = 0; i < e->batch && !st; ++i)
      if (v[i] < 0) st = not_finite(e, "A");
    kind = kind == LA_SINGULAR_FINITE ? LA_SINGULAR : LA_NOT_SPD;
  }
  for (int64_t i = 0; i < e->batch && !st; ++i)
    if (v[i] > 0) st = raise(e, kind, i, v[i]);
  free(tmp);
  return st;
}

ck_status la_check_diag(la_env *e, la_mat *m, int k, const char *what) {
  if (!e->c->check || e->batch == 0 || k == 0) return CK_OK;
  ck_tensor d = {0};
  la_diag(e, &d, m, k);
  const int64_t n = e->batch * k;
  const int pw = ck_dtype_is_complex(m->buf.dtype) ? 2 : 1; /* complex: both parts read (c128), zero when both are */
  double *v = malloc(sizeof(double) * (size_t)(n * pw));
  ck_tensor d64 = {0};
  ck_status st = v ? ck_to(e->ctx, &d64, &d, CK_DEV_HOST, pw == 2 ? CK_C128 : CK_F64)
                   : ck_error(e->ctx, CK_ERR_OOM, "%s: out of memory", e->c->name);
  if (!st) memcpy(v, ck_data(&d64), sizeof(double) * (size_t)(n * pw));
  for (int64_t i = 0; i < n && !st; ++i)
    if (v[pw * i] == 0 && v[pw * i + pw - 1] == 0) {
      char w[96];
      st = ck_error(e->ctx, CK_ERR_ARG, "%s: %s: its diagonal entry (%d,%d) is exactly zero%s", e->c->name, what,
                    (int)(i % k) + 1, (int)(i % k) + 1, where(e, i / k, w, sizeof w));
    }
  free(v);
  ck_release(&d);
  ck_release(&d64);
  return st;
}

ck_status la_check_finite(la_env *e, const ck_tensor *a, const char *what) {
  if (!e->c->check || ck_numel(a) == 0) return CK_OK;
  ck_tensor z = {0}, s = {0}, pv = {0};
  double v = 0;
  ck_status st = CK_OK;
  if (ck_dtype_is_complex(a->dtype)) { /* the parts, as a real view */
    if ((st = ck_pair_view(e->ctx, &pv, a))) return ck_error_prefix(e->ctx, st, "%s", e->c->name);
    a = &pv;
  }
  /* how many entries are finite: a bool pass and its count (x * 0 summed, as before, wrote a temporary of A's own
   * size and dtype: 8 bytes an f64 entry where this writes 1) */
  const double n = (double)ck_numel(a);
  st = ck_ew_unary(e->ctx, CK_EW_ISFINITE, &z, a, 0, 0, NULL, NULL);
  if (!st) st = ck_reduce(e->ctx, CK_RED_SUM, &s, NULL, &z, -1, false, NULL, NULL);
  ck_tensor h = {0};
  if (!st) st = ck_to(e->ctx, &h, &s, CK_DEV_HOST, CK_F64);
  if (!st) v = *(double *)ck_data(&h);
  ck_release(&z);
  ck_release(&s);
  ck_release(&h);
  ck_release(&pv);
  if (st) return ck_error_prefix(e->ctx, st, "%s", e->c->name);
  return v == n ? CK_OK : not_finite(e, what);
}

// ---------------------------------------------------------------- the entry

static const struct {
  bool square, has_b;
} SPEC[CK_LAF_N] = {
    [CK_LAF_LU] = {false, false},        [CK_LAF_SOLVE] = {true, true},  [CK_LAF_DET] = {true, false},
    [CK_LAF_SLOGDET] = {true, false},    [CK_LAF_CHOLESKY] = {true, false}, [CK_LAF_CHOLESKY_SOLVE] = {true, true},
    [CK_LAF_TRSOLVE] = {true, true},     [CK_LAF_QR] = {false, false},   [CK_LAF_LSTSQ] = {false, true},
    [CK_LAF_SVD] = {false, false},       [CK_LAF_EIGH] = {true, false},  [CK_LAF_EIG] = {true, false},
    [CK_LAF_INV] = {true, false},
};

static ck_status check_operand(la_env *e, const ck_tensor *x, const char *label) {
  ck_ctx *ctx = e->ctx;
  char d[96];
  ck_status st = ck_check_live(ctx, e->c->name, x);
  if (st) return st;
  /* complex (issue 35's dtypes): every function but det and slogdet, whose complex forms linalg.lua composes from
   * the packed LU (the steps here reduce real diagonals) */
  const ck_la_fn f = e->c->fn;
  const bool takes_cx = f != CK_LAF_DET && f != CK_LAF_SLOGDET;
  const bool cx_ok = takes_cx && ck_dtype_is_complex(x->dtype);
  if (x->dtype != CK_F32 && x->dtype != CK_F64 && !cx_ok)
    return ck_error(ctx, CK_ERR_DTYPE, "%s: %s is %s; linear algebra takes f32 or f64%s (convert with :to(\"f64\"))",
                    e->c->name, label, ck_describe(x, d, sizeof d), takes_cx ? ", c64 or c128" : "");
  if (x->ndim < 2)
    return ck_error(ctx, CK_ERR_SHAPE, "%s: %s is %s; it needs a matrix (2 dims, or more for a batch)", e->c->name,
                    label, ck_describe(x, d, sizeof d));
  for (int i = x->ndim - 2; i < x->ndim; ++i)
    if (x->shape[i] > 0x7fffffff / (x->shape[2 * x->ndim - 3 - i] > 0 ? x->shape[2 * x->ndim - 3 - i] : 1))
      return ck_error(ctx, CK_ERR_SHAPE, "%s: %s is %s: a matrix of more than 2^31 - 1 elements is past LAPACK's "
                      "and cuSOLVER's 32-bit sizes", e->c->name, label, ck_describe(x, d, sizeof d));
  return CK_OK;
}

static ck_status check_call(la_env *e) {
  ck_la_call *c = e->c;
  ck_ctx *ctx = e->ctx;
  const ck_tensor *a = c->a, *b = c->b;
  char da[96], db[96];
  ck_status st;
  if (!a) return ck_error(ctx, CK_ERR_ARG, "%s: A is missing", c->name);
  if ((st = check_operand(e, a, "A"))) return st;
  const int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
  if (SPEC[c->fn].square && m != n)
    return ck_error(ctx, CK_ERR_SHAPE, "%s: A is %s; it must be square", c->name, ck_describe(a, da, sizeof da));
  e->dt = a->dtype;
  e->dev = ck_dev(a);
  e->nb = a->ndim - 2;
  memcpy(e->bshape, a->shape, sizeof(int64_t) * (size_t)e->nb);
  if (SPEC[c->fn].has_b) {
    if (!b) return ck_error(ctx, CK_ERR_ARG, "%s: B is missing", c->name);
    if ((st = check_operand(e, b, "B")) || (st = ck_check_same_device(ctx, c->name, a, b))) return st;
    const int64_t br = b->shape[b->ndim - 2], bc = b->shape[b->ndim - 1];
    const bool right = c->fn == CK_LAF_TRSOLVE && !c->left;
    if ((right ? bc : br) != m)
      return ck_error(ctx, CK_ERR_SHAPE, "%s: A is %s and B is %s: B needs %lld %s (A's rows)", c->name,
                      ck_describe(a, da, sizeof da), ck_describe(b, db, sizeof db), (long long)m,
                      right ? "columns" : "rows");
    int nd;
    int64_t bs[CK_MAX_DIMS];
    if (ck_broadcast_dims(a->ndim - 2, a->shape, b->ndim - 2, b->shape, &nd, bs) >= 0)
      return ck_error(ctx, CK_ERR_SHAPE, "%s: the batch dims of A %s and B %s do not broadcast", c->name,
                      ck_describe(a, da, sizeof da), ck_describe(b, db, sizeof db));
    e->nb = nd;
    memcpy(e->bshape, bs, sizeof(int64_t) * (size_t)nd);
    e->dt = ck_promote(a->dtype, b->dtype);
  }
  e->batch = 1;
  for (int i = 0; i < e->nb; ++i) e->batch *= e->bshape[i];
  if (c->refine && (c->fn != CK_LAF_SOLVE || e->dt != CK_F64))
    return ck_error(ctx, CK_ERR_DTYPE, "%s: refine is for ck.solve with f64 A and B (it refines a low-precision LU to "
                    "f64 accuracy); A is %s", c->name, ck_describe(a, da, sizeof da));
  if (e->dev.kind == CK_HOST) { /* the host refuses work past the dispatcher's limit (2^38 multiply-adds) */
    const double k = (double)(m < n ? m : n), work = (double)e->batch * (double)m * (double)n * (k > 1 ? k : 1);
    if (work > 274877906944.0)
      return ck_error(ctx, CK_ERR_ARG, "%s: A is %s: about %.3g multiply-adds, past the host backend's limit of 2^38 "
                      "(use a GPU)", c->name, ck_describe(a, da, sizeof da), work);
  }
  return CK_OK;
}

ck_status ck_linalg(ck_ctx *ctx, ck_la_call *c, ck_ran *ran) {
  la_env e = {.ctx = ctx, .c = c, .ran = ran};
  memset(c->out, 0, sizeof c->out);
  c->nout = 0;
  c->iters = 0;
  ck_status st = check_call(&e);
  if (!st) st = ck_use_device(ctx, e.dev);
  if (!st && e.dev.kind == CK_HOST && c->fn != CK_LAF_N) {
    const char *why;
    if (!ck_host_la_available(&why)) st = ck_error(ctx, CK_ERR_UNSUPPORTED, "%s: %s", c->name, why);
  }
  if (ran) {
    memset(ran, 0, sizeof *ran);
    ran->id = e.dev.kind == CK_HOST ? -1 : 0;
    snprintf(ran->name, sizeof ran->name, "%s", e.dev.kind == CK_HOST ? "host" : "cusolver");
    ran->gpu = ran->library = e.dev.kind != CK_HOST;
  }
  if (!st) st = la_info_new(&e);
  if (!st) st = la_run_fn(&e);
  ck_release(&e.info);
  if (st) {
    for (int i = 0; i < 5; ++i) ck_release(&c->out[i]);
    c->nout = 0;
    return st;
  }
  if (ran && !ran->note[0])
    snprintf(ran->note, sizeof ran->note, "%d operand%s copied once into column-major %s buffers (results are views "
             "of them)", e.copies, e.copies == 1 ? "" : "s", ck_dtype_name(e.dt));
  return CK_OK;
}
