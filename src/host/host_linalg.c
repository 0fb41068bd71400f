/*
 * host_linalg.c — the linear-algebra oracle: one ck_la_job (kernels/linalg/linalg.h) on host buffers, by LAPACKE.
 *
 * Why a library and not loops of our own: LU, QR, SVD and symmetric eigensolvers are where hand-written code is
 * wrong in the corners (scaling, convergence, pivots); LAPACK is the reference every GPU result is checked against,
 * the role the design gives "a well-kept library where one exists". Why loaded at run time (dlopen), as NCCL is
 * (src/dist/nccl_dl.c): core.so must build and load where liblapacke is absent (the GPU host, an embedding
 * application); only a linear-algebra call on a host array then fails, naming the package to install. The library
 * is found as liblapacke.so.3 (Debian's liblapacke, over OpenBLAS or reference LAPACK), liblapacke.so, or the path
 * in CUKERN_LAPACKE; the triangular solve is BLAS's ?trsm, found through the same handle (LAPACKE links BLAS).
 * LAPACKE's own NaN scan is turned off (LAPACKE_set_nancheck(0)): the linalg layer makes the NaN/Inf rule, the same
 * on both backends (docs/api.md "Linear algebra").
 *
 * Buffers are column-major, dense per batch entry, as the job says; the batch runs one entry after the other.
 * Every pointer type is the job's void *: the prototypes below differ from LAPACKE's only in float * / double *
 * (one pointer type per routine serves both precisions; no float or double is passed by value), and the same
 * prototype serves the complex forms (c/z: lapack_complex_float * where the real one has float *; geev is complex
 * only, and the unitary steps are ungqr/unmqr/heevd). A complex job's transposes are 'C' where the layer means the
 * conjugate transpose (unmqr, trtrs); the singular values and heevd's eigenvalues are real (the part's size).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck.h"
#include "host_linalg.h"
#include "linalg/linalg.h"

#define COL_MAJOR 102 /* LAPACK_COL_MAJOR */

typedef int (*getrf_f)(int, int, int, void *, int, int32_t *);
typedef int (*getrs_f)(int, char, int, int, const void *, int, const int32_t *, void *, int);
typedef int (*potrf_f)(int, char, int, void *, int);
typedef int (*potrs_f)(int, char, int, int, const void *, int, void *, int);
typedef int (*trtrs_f)(int, char, char, char, int, int, const void *, int, void *, int);
typedef int (*geqrf_f)(int, int, int, void *, int, void *);
typedef int (*orgqr_f)(int, int, int, int, void *, int, const void *);
typedef int (*ormqr_f)(int, char, char, int, int, int, const void *, int, const void *, void *, int);
typedef int (*gesvd_f)(int, char, char, int, int, void *, int, void *, void *, int, void *, int, void *);
typedef int (*syevd_f)(int, char, char, int, void *, int, void *);
typedef int (*gels_f)(int, char, int, int, int, void *, int, void *, int);
/* the general eigenproblem, complex only (LAPACKE_cgeev / zgeev) */
typedef int (*geev_f)(int, char, char, int, void *, int, void *, void *, int, void *, int);

/* One set of the steps' routines, a {single, double} pair each: the real ones (s/d: r) or the complex ones (c/z: c),
 * with the same prototypes (void * data; gesvd's s and superb and heevd's w are real arrays of the part's precision).
 * The slots are pairs of function pointers in the order of NAMES' rows. */
typedef struct lapacke_set {
  getrf_f getrf[2];
  getrs_f getrs[2];
  potrf_f potrf[2];
  potrs_f potrs[2];
  trtrs_f trtrs[2];
  geqrf_f geqrf[2];
  orgqr_f orgqr[2]; /* complex: ungqr */
  ormqr_f ormqr[2]; /* complex: unmqr */
  gesvd_f gesvd[2];
  syevd_f syevd[2]; /* complex: heevd */
  gels_f gels[2];   /* real only (unused by the layer) */
  geev_f geev[2];   /* complex only (eig on every dtype: the layer runs it on complex buffers) */
} lapacke_set;
enum { NSTEPS = 12 };
/* The LAPACKE names of the slots, real and complex (NULL: none in that set). A real one missing fails the load (the
 * library is not usable); a complex one missing stays NULL and fails only its step, naming it. */
static const char *const NAMES[2][NSTEPS] = {
    {"getrf", "getrs", "potrf", "potrs", "trtrs", "geqrf", "orgqr", "ormqr", "gesvd", "syevd", "gels", NULL},
    {"getrf", "getrs", "potrf", "potrs", "trtrs", "geqrf", "ungqr", "unmqr", "gesvd", "heevd", NULL, "geev"}};

typedef struct lapacke_api {
  lapacke_set r, c;
  char why[200]; /* empty when loaded */
} lapacke_api;

static lapacke_api api;
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

static void load(void) {
  const char *env = getenv("CUKERN_LAPACKE");
  const char *const tries[] = {env && *env ? env : NULL, "liblapacke.so.3", "liblapacke.so"};
  void *h = NULL;
  for (size_t i = 0; i < sizeof tries / sizeof *tries && !h; ++i)
    if (tries[i]) h = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(api.why, sizeof api.why,
             "LAPACKE not found (liblapacke.so.3; Debian: apt-get install liblapacke, or set CUKERN_LAPACKE)");
    return;
  }
  for (int cx = 0; cx < 2; ++cx) {
    void **slot = (void **)(cx ? &api.c : &api.r);
    for (int r = 0; r < NSTEPS; ++r)
      for (int p = 0; p < 2 && NAMES[cx][r]; ++p) {
        char sym[32];
        snprintf(sym, sizeof sym, "LAPACKE_%c%s", "sdcz"[2 * cx + p], NAMES[cx][r]);
        void *f = dlsym(h, sym);
        if (!f && !cx) {
          snprintf(api.why, sizeof api.why, "LAPACKE found but %s is missing from it", sym);
          return;
        }
        memcpy(&slot[2 * r + p], &f, sizeof f);
      }
  }
  void (*nancheck)(int) = NULL;
  void *f = dlsym(h, "LAPACKE_set_nancheck");
  memcpy(&nancheck, &f, sizeof f);
  if (nancheck) nancheck(0);
}

bool ck_host_la_available(const char **why) {
  pthread_once(&api_once, load);
  if (why) *why = api.why;
  return api.why[0] == 0;
}

// ---------------------------------------------------------------- helpers

/* Entry i of a batched buffer field: base + i * stride elements of size es. */
static void *at(void *base, int64_t stride, int64_t i, size_t es) {
  return base ? (char *)base + (size_t)(i * stride) * es : NULL;
}

/* CK_LA_TRI on one matrix: zero the strictly upper (uplo 'L') or lower ('U') part, optionally a unit diagonal. */
#define TRI_BODY(T)                                                                                                  \
  do {                                                                                                               \
    T *x = (T *)p;                                                                                                   \
    for (int j = 0; j < n; ++j)                                                                                      \
      for (int i = 0; i < m; ++i) {                                                                                  \
        if (uplo == 'L' ? i < j : i > j) x[i + (size_t)j * lda] = 0;                                                 \
        else if (i == j && unit) x[i + (size_t)j * lda] = 1;                                                         \
      }                                                                                                              \
  } while (0)
/* complex: each element a (re, im) pair of T */
#define TRI_BODY_CX(T)                                                                                               \
  do {                                                                                                               \
    T *x = (T *)p;                                                                                                   \
    for (int j = 0; j < n; ++j)                                                                                      \
      for (int i = 0; i < m; ++i) {                                                                                  \
        T *e = x + 2 * (i + (size_t)j * lda);                                                                        \
        if (uplo == 'L' ? i < j : i > j) e[0] = 0, e[1] = 0;                                                         \
        else if (i == j && unit) e[0] = 1, e[1] = 0;                                                                 \
      }                                                                                                              \
  } while (0)
static void tri(void *p, int dtype, int m, int n, int lda, char uplo, bool unit) {
  if (dtype == CK_F64) TRI_BODY(double);
  else if (dtype == CK_C128) TRI_BODY_CX(double);
  else if (dtype == CK_C64) TRI_BODY_CX(float);
  else TRI_BODY(float);
}

// ---------------------------------------------------------------- the job

/* The row of NAMES (the slot of lapacke_set) that runs step op, or -1 (tri: no library call) */
static int step_row(int op) {
  switch (op) {
  case CK_LA_GETRF: return 0;
  case CK_LA_GETRS: return 1;
  case CK_LA_POTRF: return 2;
  case CK_LA_POTRS: return 3;
  case CK_LA_TRSM: return 4;
  case CK_LA_GEQRF: return 5;
  case CK_LA_ORGQR: return 6;
  case CK_LA_ORMQR: return 7;
  case CK_LA_GESVD: return 8;
  case CK_LA_SYEVD: return 9;
  case CK_LA_GELS: return 10;
  case CK_LA_GEEV: return 11;
  default: return -1;
  }
}

ck_status ck_host_la(ck_ctx *ctx, ck_la_job *j) {
  const size_t es = ck_dtype_size((ck_dtype)j->dtype);
  const int p = j->dtype == CK_F64 || j->dtype == CK_C128;
  if (j->op != CK_LA_TRI) {
    const char *why;
    if (!ck_host_la_available(&why)) return ck_error(ctx, CK_ERR_UNSUPPORTED, "%s", why);
  }
  const int cx = ck_dtype_is_complex((ck_dtype)j->dtype), row = step_row(j->op);
  const lapacke_set *L = cx ? &api.c : &api.r;
  if (row >= 0 && !((void *const *)L)[2 * row + p])
    return ck_error(ctx, CK_ERR_UNSUPPORTED, "%s (host): this LAPACKE has no LAPACKE_%c%s", ck_la_op_name(j->op),
                    "sdcz"[2 * cx + p], NAMES[cx][row] ? NAMES[cx][row] : ck_la_op_name(j->op));
  const size_t rs = cx && j->op != CK_LA_GEEV ? es / 2 : es; /* s: real singular values / eigenvalues, but geev's w */
  void *superb = NULL;
  if (j->op == CK_LA_GESVD) {
    const int k = j->m < j->n ? j->m : j->n;
    superb = malloc((size_t)(k > 1 ? k : 1) * rs);
    if (!superb) return ck_error(ctx, CK_ERR_OOM, "%s (host): out of memory", ck_la_op_name(j->op));
  }
  for (int64_t i = 0; i < j->batch; ++i) {
    void *a = at(j->a, j->sa, i, es), *b = at(j->b, j->sb, i, es), *tau = at(j->tau, j->stau, i, es);
    int32_t *ipiv = j->ipiv ? j->ipiv + i * j->sp : NULL;
    int info = 0;
    switch (j->op) {
    case CK_LA_GETRF: info = L->getrf[p](COL_MAJOR, j->m, j->n, a, j->lda, ipiv); break;
    case CK_LA_GETRS: info = L->getrs[p](COL_MAJOR, j->trans, j->n, j->nrhs, a, j->lda, ipiv, b, j->ldb); break;
    case CK_LA_POTRF: info = L->potrf[p](COL_MAJOR, j->uplo, j->n, a, j->lda); break;
    case CK_LA_POTRS: info = L->potrs[p](COL_MAJOR, j->uplo, j->n, j->nrhs, a, j->lda, b, j->ldb); break;
    case CK_LA_TRSM: /* left side only: the layer turns X op(A) = B into op(A)^T X^T = B^T */
      info = L->trtrs[p](COL_MAJOR, j->uplo, j->trans, j->diag, j->m, j->nrhs, a, j->lda, b, j->ldb);
      break;
    case CK_LA_GEQRF: info = L->geqrf[p](COL_MAJOR, j->m, j->n, a, j->lda, tau); break;
    case CK_LA_ORGQR: info = L->orgqr[p](COL_MAJOR, j->m, j->n, j->nrhs, a, j->lda, tau); break;
    case CK_LA_ORMQR: info = L->ormqr[p](COL_MAJOR, 'L', j->trans, j->m, j->nrhs, j->n, a, j->lda, tau, b, j->ldb); break;
    case CK_LA_GESVD: {
      const char jv = j->jobu == 'A' ? 'A' : j->jobu == 'S' ? 'S' : 'N';
      info = L->gesvd[p](COL_MAJOR, j->jobu, jv, j->m, j->n, a, j->lda, at(j->s, j->ss, i, rs),
                         at(j->u, j->su, i, es), j->ldu > 0 ? j->ldu : 1, at(j->vt, j->svt, i, es),
                         j->ldvt > 0 ? j->ldvt : 1, superb);
      break;
    }
    case CK_LA_SYEVD: info = L->syevd[p](COL_MAJOR, j->jobu, j->uplo, j->n, a, j->lda, at(j->s, j->ss, i, rs)); break;
    case CK_LA_GELS: info = L->gels[p](COL_MAJOR, 'N', j->m, j->n, j->nrhs, a, j->lda, b, j->ldb); break;
    case CK_LA_GEEV: /* right eigenvectors only (jobvl 'N': vl unused, ldvl 1) */
      info = L->geev[p](COL_MAJOR, 'N', j->jobu == 'V' ? 'V' : 'N', j->n, a, j->lda, at(j->s, j->ss, i, es), NULL, 1,
                        at(j->u, j->su, i, es), j->ldu > 0 ? j->ldu : 1);
      break;
    case CK_LA_TRI: tri(a, j->dtype, j->m, j->n, j->lda, j->uplo, j->diag == 'U'); break;
    default:
      free(superb);
      return ck_error(ctx, CK_ERR_INTERNAL, "linalg (host): step %s has no host implementation", ck_la_op_name(j->op));
    }
    if (info < 0) { /* an argument LAPACK refused: the layer's bug, never the user's */
      free(superb);
      return ck_error(ctx, CK_ERR_INTERNAL, "%s (host, LAPACKE): argument %d is invalid (m %d, n %d, nrhs %d)",
                      ck_la_op_name(j->op), -info, j->m, j->n, j->nrhs);
    }
    if (j->info) j->info[i] = info;
  }
  free(superb);
  return CK_OK;
}
