/*
 * la_int.h — private to the linalg layer: the column-major buffers every function works in, the steps run on
 * either backend, the info check.
 */
#ifndef CK_LA_INT_H
#define CK_LA_INT_H

#include "ck_linalg.h"
#include "linalg/linalg.h"

/* Square matrices up to this order go through cuBLAS's batched getrf/getrs when there are two or more. 128, not 64:
 * a loop of cuSOLVER calls took 19.8 ms for inv of 100 x 128x128 f32 on an H200 where PyTorch (batched) took 1.15
 * (round 3 session 13, lab/linalg_host.lua); at 2 x 512 the loop was the faster (1.87 ms against 3.45). */
#define CK_LA_SMALL 128
/* potrf of a batch (>= 2) of matrices up to this order: one cusolverDn<t>potrfBatched call (la_cuda.c); larger ones,
 * or a single matrix, one potrf each (each call then has enough work to fill the GPU). 128 covers the orders measured
 * (8 and 64: 1600x and 100x faster per batch than the loop); lab/linalg_host.lua times 2 x 512 for the next step. */
#define CK_LA_POTRF_BATCHED 128

/* A batch of column-major matrices: buf is [batch..., cols, rows] contiguous; view is [batch..., rows, cols] (buf
 * with its last two dims swapped), which is what results are cut from. */
typedef struct la_mat {
  ck_tensor buf, view;
  int rows, cols;
} la_mat;

/* What one call works on: the broadcast batch shape, dtype and device. */
typedef struct la_env {
  ck_ctx *ctx;
  ck_la_call *c;
  ck_ran *ran;
  int nb;
  int64_t bshape[CK_MAX_DIMS], batch;
  ck_dtype dt;
  ck_device dev;
  ck_tensor info; /* i32 [batch], made by la_info_new */
  int copies;     /* operands copied into buffers (for the note) */
} la_env;

/* la_core.c */
ck_status la_alloc(la_env *e, la_mat *m, int rows, int cols);
/* a buffer of at least rows x cols holding x (its last two dims, expanded to the batch), the rest zero when bigger;
 * trans: x's last two dims swapped first */
ck_status la_load(la_env *e, la_mat *m, const ck_tensor *x, int rows, int cols, bool trans);
/* How a one-kernel step (gesv_small, potrf_small) reads x (its last two dims, rows x cols, expanded to the batch): in
 * place, when x has the call's dtype and its batch dims step by one stride (any contiguous array, any transposed or
 * strided matrix of one, one matrix broadcast); else through la_load's buffer m (the caller frees m either way). */
ck_status la_in(la_env *e, ck_la_in *in, la_mat *m, const ck_tensor *x, int rows, int cols);
/* out = view of m's first r rows and c columns (a new reference) */
ck_status la_cut(la_env *e, ck_tensor *out, la_mat *m, int r, int c);
void la_free(la_mat *m);
void la_job(la_env *e, ck_la_job *j, int op, la_mat *a);
ck_status la_exec(la_env *e, ck_la_job *j);
ck_status la_info_new(la_env *e);
/* reads info (unless !check) and raises kind's message for the first entry that is not 0 */
enum { LA_SINGULAR, LA_NOT_SPD, LA_NO_CONVERGENCE, LA_RANK,
       LA_SINGULAR_FINITE, /* gesv_small's info: -1 anywhere raises la_check_finite's message for A first */
       LA_NOT_SPD_FINITE /* potrf_small's: the same, then LA_NOT_SPD */ };
ck_status la_info_check(la_env *e, int kind);
/* the check word's "nothing to report" (gesv_small writes an entry index there otherwise) */
#define LA_WORD_NONE INT64_MAX
/* wait for the call's device's current stream (the check word is read after it) */
ck_status la_wait(la_env *e);
/* *any = some entry of info is positive (read back from a device), without raising */
ck_status la_info_any(la_env *e, bool *any);
/* A must be finite (when check): an isfinite pass (bool), its count and a read */
ck_status la_check_finite(la_env *e, const ck_tensor *a, const char *what);
/* the diagonal of m's first k x k block as a view [batch..., k] */
void la_diag(la_env *e, ck_tensor *d, la_mat *m, int k);
/* a triangular factor's diagonal has no exact zero (when check); msg names it */
ck_status la_check_diag(la_env *e, la_mat *m, int k, const char *what);
/* a new i32 [batch..., k] array on the call's device */
ck_status la_new_i32(la_env *e, ck_tensor *t, int k);
ck_status la_new_vec(la_env *e, ck_tensor *t, int k); /* same in the call's dtype (k < 0: the batch shape only) */
ck_status la_new_rvec(la_env *e, ck_tensor *t, int k); /* [batch..., k] in the real dtype of the call's (singular
                                                          values, Hermitian eigenvalues: f32 for c64, f64 for c128) */
/* m's buffer conjugated in place (the imaginary parts negated through its pair view); nothing for a real buffer */
ck_status la_conj(la_env *e, la_mat *m);

/* la_funcs.c: the functions, after ck_linalg's checks */
ck_status la_run_fn(la_env *e);

/* la_lu.c: getrf by a rung of the LU ladder (ck.variants("lu")); the host validates the name and runs LAPACKE */
ck_status la_lu_variant(la_env *e, ck_la_job *j);
/* getrf of j's batch by row v of the LU ladder, through ck_submit (la_cuda.c's large getrf is rung 0's) */
ck_status la_lu_rung(ck_ctx *ctx, const ck_variant *v, const ck_la_job *j, const char *name, ck_launch_note *note);

/* la_cuda.c */
ck_status ck_la_cuda(ck_ctx *ctx, ck_la_job *j, const char *name);

#endif
