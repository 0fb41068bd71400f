/*
 * linalg.h — one job of dense linear algebra on a batch of column-major matrices (issue 34), shared by the host
 * backend (src/host/host_linalg.c, LAPACKE) and the CUDA backend (src/linalg/la_cuda.c, cuSOLVER and cuBLAS), so
 * that both run the same steps on the same buffers and only the library differs.
 *
 * Every matrix is column-major and dense per batch entry (leading dimension given, batch stride in elements): the
 * linalg layer (src/linalg/) copies the user's arrays into such buffers once (a transposed, contiguous copy) and
 * hands its results back as transposed views of them. Sizes are 32-bit (LAPACK's and cuSOLVER's legacy API);
 * the layer refuses larger matrices with a message. Plain C: included by C and CUDA code.
 */
#ifndef CK_LINALG_H
#define CK_LINALG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The steps (LAPACK names). Each reads/writes the fields named beside it; info gets one entry per batch entry
 * (0, or LAPACK's positive info: the failing pivot, minor, or number of unconverged values). */
enum {
  CK_LA_GETRF, /* a (m x n) -> L\U packed, ipiv (min(m,n), 1-based LAPACK swaps), info */
  CK_LA_GETRS, /* a = getrf's LU (n x n), ipiv; b (n x nrhs) overwritten with op(A)^-1 b (trans) */
  CK_LA_POTRF, /* a (n x n, uplo) -> its Cholesky factor in that triangle (the other is undefined: potrfBatched uses it as scratch), info */
  CK_LA_POTRS, /* a = potrf's factor (uplo); b (n x nrhs) overwritten with A^-1 b */
  CK_LA_TRSM,  /* a triangular (uplo, trans, diag); b (m x nrhs) overwritten with op(A)^-1 b (side L) or b op(A)^-1 (R); m = rows of b */
  CK_LA_GEQRF, /* a (m x n) -> R above the diagonal, Householder vectors below, tau (min(m,n)) */
  CK_LA_ORGQR, /* a (m x n, n <= m: geqrf's vectors in its first k columns), tau (k) -> Q's first n columns */
  CK_LA_ORMQR, /* a, tau (k) from geqrf on an m-row matrix; b (m x nrhs) overwritten with op(Q) b (trans) */
  CK_LA_GESVD, /* a (m x n, m >= n on CUDA) destroyed; s (min), u (m x m or m x k, jobu 'A'|'S'|'N'), vt, info */
  CK_LA_SYEVD, /* a (n x n, uplo) -> eigenvectors in columns (jobu 'V') ; s = eigenvalues ascending; info */
  CK_LA_GELS,  /* a (m x n) destroyed, b (max(m,n) x nrhs) -> least-squares / minimum-norm solution; info (host only) */
  CK_LA_TRI,   /* a (m x n): zero the strictly upper (uplo 'L') or lower ('U') part; diag 'U' also sets the diagonal to 1 */
  CK_LA_GESV_IRS, /* a (n x n f64), b (n x nrhs f64) -> x in u (n x nrhs, ldu), by iterative refinement (refine); iters, info */
  CK_LA_GEEV,  /* a (n x n, COMPLEX: c64/c128) destroyed -> s = eigenvalues (n, complex), u = right eigenvectors in
                  columns (n x n, ldu; jobu 'V', else none), unit 2-norm with the largest component real; info: the
                  number of eigenvalues the QR iteration left unconverged (LAPACK's) */
  CK_LA_GESV_SMALL, /* CUDA only, real, n <= CK_LA_GESV_SMALL_MAX(dtype): ain (n x n, read only) and bin (n x nrhs, or
                       the identity) -> b (n x nrhs, ldb, sb: A^-1 B; it may be bin's own buffer), ipiv (NULL: not
                       written), info (getrf's, or -1 where A has a NaN or an Inf), all in one kernel */
  CK_LA_POTRF_SMALL, /* CUDA only, real, n <= CK_LA_POTRF_SMALL_MAX(dtype): ain (n x n, uplo) -> a (lda, sa; it may be
                        ain's own buffer): its Cholesky factor in that triangle and zeros in the other, info (potrf's,
                        or -1 where A has a NaN or an Inf; flag as for CK_LA_GESV_SMALL), all in one kernel */
  CK_LA_NOPS
};
/* The largest order CK_LA_GESV_SMALL takes for a dtype (a row of A in one lane's registers: la_small.cu says why f64
 * stops at 16); 0 for the dtypes it does not take. */
#define CK_LA_GESV_SMALL_MAX(dtype) ((dtype) == CK_F32 ? 32 : (dtype) == CK_F64 ? 16 : 0)
/* The largest order CK_LA_POTRF_SMALL takes (to 32 a row of the lower triangle in one lane's registers, no right-hand
 * side: 32 doubles fit; to 64 one block a matrix, the triangle in shared memory); 0 for the dtypes it does not take. */
#define CK_LA_POTRF_SMALL_MAX(dtype) ((dtype) == CK_F32 || (dtype) == CK_F64 ? 64 : 0)
/* Iterative refinement: the precision the factorisation runs in (CK_LA_GESV_IRS; CUDA only). */
enum { CK_LA_IRS_NONE = 0, CK_LA_IRS_F16, CK_LA_IRS_BF16, CK_LA_IRS_TF32, CK_LA_IRS_F32 };

/* A matrix operand as CK_LA_GESV_SMALL and CK_LA_POTRF_SMALL read it: batch entry e's (i, j) at
 * p[e * sb + i * rs + j * cs] (elements; any strides, sb = 0 for a broadcast matrix), so the layer hands them the
 * caller's array in place when its batch dims are one stride, and its column-major buffer (rs 1, cs lda) otherwise.
 * p NULL: the identity (CK_LA_GESV_SMALL's right-hand side for ck.inv). */
typedef struct ck_la_in {
  const void *p;
  int64_t sb, rs, cs;
} ck_la_in;

typedef struct ck_la_job {
  int op;      /* CK_LA_* */
  int dtype;   /* CK_F32, CK_F64, CK_C64 or CK_C128 (ck_dtype; CK_LA_GEEV: complex only, CK_LA_GELS and
                  CK_LA_GESV_IRS: real only). Complex: orgqr/ormqr/syevd run as ungqr/unmqr/heevd, and s (gesvd,
                  syevd) holds real values of the part's dtype */
  int64_t batch;
  int m, n, nrhs;
  void *a;     /* per entry: a + i * sa (elements) */
  int64_t sa;
  int lda;
  void *b;
  int64_t sb;
  int ldb;
  int32_t *ipiv; /* per entry: ipiv + i * sp */
  int64_t sp;
  void *tau;
  int64_t stau;
  void *s; /* singular values (min(m,n)) or eigenvalues (n) */
  int64_t ss;
  void *u;
  int64_t su;
  int ldu;
  void *vt;
  int64_t svt;
  int ldvt;
  int32_t *info; /* batch entries; device memory on CUDA */
  char uplo, side, trans, diag, jobu; /* LAPACK's letters: 'U'/'L', 'L'/'R', 'N'/'T'/'C' (conjugate transpose:
                                          complex ormqr and trsm), 'N'/'U', 'A'/'S'/'N'/'V' */
  int refine;                          /* CK_LA_IRS_* */
  int iters;                           /* out: refinement iterations (CK_LA_GESV_IRS), host memory */
  ck_la_in ain, bin; /* CK_LA_GESV_SMALL, CK_LA_POTRF_SMALL: the operands read (a and b are what they write) */
  void *flag; /* CK_LA_GESV_SMALL, CK_LA_POTRF_SMALL: a word of pinned mapped memory (ck_check_word) the kernel sets to an entry's index
                where info != 0, so that a clean batch needs no read of info; NULL: none */
  int qr_svd; /* CK_LA_GESVD on CUDA: 0 one-sided Jacobi (gesvdj: info > 0 when it did not converge), 1 QR iteration
                 (gesvd, the layer's fallback); the host always runs LAPACK's gesvd */
} ck_la_job;

/* Step names, for messages ("getrf"). */
static inline const char *ck_la_op_name(int op) {
  static const char *const names[CK_LA_NOPS] = {"getrf", "getrs", "potrf", "potrs", "trsm", "geqrf", "orgqr",
                                                "ormqr", "gesvd", "syevd", "gels",  "tri",   "gesv_irs", "geev",
                                                "gesv_small", "potrf_small"};
  return op >= 0 && op < CK_LA_NOPS ? names[op] : "?";
}

/* The layer's own kernels (la_aux.cu, la_small.cu), called from its cuSOLVER launcher (src/linalg/la_cuda.c) inside one ck_submit.
 * struct ck_env is ck_kernels.h's; each returns 0 or a cudaError_t. */
struct ck_env;
/* CK_LA_TRI on the job's batch of a (m x n, lda, sa). */
int ck_la_tri(const ck_la_job *j, const struct ck_env *env);
/* CK_LA_GESV_SMALL and CK_LA_POTRF_SMALL (la_small.cu) */
int ck_la_small_gesv(const ck_la_job *j, const struct ck_env *env);
int ck_la_small_potrf(const ck_la_job *j, const struct ck_env *env);
/* out[i] = base + i * stride_bytes for i < n (the pointer arrays of cuBLAS's and cuSOLVER's batched calls). */
int ck_la_ptrs(void **out, void *base, int64_t stride_bytes, int64_t n, const struct ck_env *env);

#ifdef __cplusplus
}
#endif
#endif
