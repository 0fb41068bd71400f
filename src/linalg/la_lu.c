/*
 * la_lu.c — ck.lu(A, {variant = ...}): getrf by a rung of the LU ladder (kernels/lu/, ck.variants("lu")).
 *
 * The name is resolved on both backends (an unknown one is an error listing the ladder, on the host too); on the
 * host LAPACKE's getrf runs and the note says so (the rungs are GPU kernels). On a GPU ck_pick_variant takes the
 * rung (or says why not and runs cuSOLVER's), info is zeroed (our rungs write it only at a zero pivot), and the
 * rung runs through ck_submit. Rung 0's cuSOLVER status is raised by name (ck_submit knows cuBLAS's and CUDA's).
 */
#include <stdio.h>

#include "la_int.h"
#include "linalg/cusolver_dl.h"
#include "lu/lu.h"

typedef struct lu_run {
  const ck_variant *v;
  const ck_lu_desc *d;
  int cusolver_status;
} lu_run;

static int lu_launch(const void *arg, const ck_env *env) {
  lu_run *r = (lu_run *)arg;
  /* this function is the launcher ck_submit runs (la_lu_rung): the rung's launcher runs inside it, with its env */
  int (*const rung)(const void *, const ck_env *) = r->v->launch;
  const int rc = rung(r->d, env);
  if (rc >= 200000) return r->cusolver_status = rc - 200000, 0;
  return rc;
}

/* getrf of j's batch by `launch` (a row of the LU ladder), through ck_submit */
ck_status la_lu_rung(ck_ctx *ctx, const ck_variant *v, const ck_la_job *j, const char *name, ck_launch_note *note) {
  const ck_lu_desc d = {.dtype = j->dtype, .m = j->m, .n = j->n, .lda = j->lda, .batch = j->batch, .sa = j->sa,
                        .sp = j->sp, .a = j->a, .ipiv = j->ipiv, .info = j->info};
  lu_run r = {.v = v, .d = &d};
  char what[96];
  snprintf(what, sizeof what, "%s (LU rung %s, %s %dx%d)", name, v->name, j->dtype == CK_F64 ? "f64" : "f32", j->m, j->n);
  ck_launch_req req = {.fn = lu_launch, .arg = &r, .note = note, .what = what, .needs_cusolver = v->id == 0};
  ck_status st = ck_submit(ctx, &req);
  if (st) return st;
  if (r.cusolver_status)
    return ck_error(ctx, CK_ERR_CUBLAS, "%s: cusolverDn%cgetrf failed: %s", what, j->dtype == CK_F64 ? 'D' : 'S',
                    ck_cusolver_status_name(r.cusolver_status));
  return CK_OK;
}

ck_status la_lu_variant(la_env *e, ck_la_job *j) {
  const char *name = e->c->variant;
  ck_ran scratch, *ran = e->ran ? e->ran : &scratch;
  if (e->dev.kind == CK_HOST) {
    if (!ck_find_variant(ck_lu_variants, ck_lu_nvariants, name)) {
      static const int none[] = {-1};
      ck_pick_variant(e->ctx, e->c->name, ck_lu_variants, ck_lu_nvariants, name, none, e->dt, NULL, NULL);
      return CK_ERR_ARG;
    }
    snprintf(ran->note, sizeof ran->note, "asked for '%s': the LU rungs are GPU kernels; the host ran LAPACKE getrf", name);
    return la_exec(e, j);
  }
  static const int order[] = {0, -1};
  const ck_lu_desc d = {.dtype = j->dtype, .m = j->m, .n = j->n};
  const ck_variant *v = ck_pick_variant(e->ctx, e->c->name, ck_lu_variants, ck_lu_nvariants, name, order, e->dt, &d, ran);
  if (!v) return CK_ERR_ARG;
  if (j->batch == 0 || j->m == 0 || j->n == 0) return CK_OK;
  ck_status st = ck_ew_generate(e->ctx, CK_EW_FILL, &e->info, 0, 0);
  if (!st) st = la_lu_rung(e->ctx, v, j, e->c->name, &ran->kernels);
  ran->gpu = true;
  ran->library = v->id == 0;
  return st;
}
