/*
 * ck_linalg.h — dense linear algebra (issue 34): solve, lu, det, cholesky, triangular solve, qr, lstsq, svd, eigh,
 * on the host (LAPACKE: src/host/host_linalg.c) or a GPU (cuSOLVER and cuBLAS: la_cuda.c), batched over leading
 * dims. The friendly API (inv, pinv, norm, cond, matrix_rank, svdvals, 1-D right-hand sides) is
 * lua/cukern/linalg.lua over these; docs/api.md "Linear algebra" has the contract.
 *
 * One call record, one entry point (as ck_run for the ops): ck_linalg validates (dtypes f32/f64 and c64/c128, but
 * det and slogdet real only: linalg.lua composes their complex forms from lu; shapes, batch broadcasting, 32-bit
 * sizes), copies each operand once into column-major buffers on its device
 * (the note says so), runs the steps on one backend, checks LAPACK's info (singular, not positive definite, no convergence) unless
 * check is false, and returns results as views of those buffers (column-major strides: a:is_contiguous() is
 * false for matrices; every op takes them as they are).
 */
#ifndef CK_LINALG_API_H
#define CK_LINALG_API_H

#include <stdbool.h>

#include "ck.h"

typedef enum {
  CK_LAF_LU,             /* a -> out[0] LU packed (m x n), out[1] pivots (i32, k, LAPACK's 1-based swaps), out[2] perm
                            (i32, m, 1-based: A[perm, :] = L U), and unless packed: out[3] L (m x k), out[4] U (k x n) */
  CK_LAF_SOLVE,          /* a (n x n), b (n x r) -> out[0] x with a x = b */
  CK_LAF_DET,            /* a (n x n) -> out[0] det (batch shape) */
  CK_LAF_SLOGDET,        /* a (n x n) -> out[0] sign, out[1] log |det| */
  CK_LAF_CHOLESKY,       /* a (n x n, symmetric positive definite) -> out[0] L (A = L L^T) or U (upper: A = U^T U) */
  CK_LAF_CHOLESKY_SOLVE, /* a = the factor, b (n x r) -> out[0] x with (L L^T) x = b */
  CK_LAF_TRSOLVE,        /* a triangular (upper, unit), b -> out[0] x with a x = b (left) or x a = b (right) */
  CK_LAF_QR,             /* a (m x n) -> out[0] Q (m x k, or m x m complete; unitary columns), out[1] R (k x n, or m x n) */
  CK_LAF_LSTSQ,          /* a (m x n, full rank), b (m x r) -> out[0] x (n x r): least squares (m >= n), minimum norm */
  CK_LAF_SVD,            /* a (m x n) -> out[0] U, out[1] s (k, descending, real), out[2] V (A = U diag(s) V^H); vectors
                            false: out[1] only */
  CK_LAF_EIGH,           /* a (n x n, symmetric / Hermitian: the `upper` triangle is read) -> out[0] w (ascending,
                            real), out[1] V */
  CK_LAF_EIG,            /* a (n x n, f32/f64 or c64/c128) -> out[0] w (complex, LAPACK's order), out[1] V (complex,
                            A V = V diag(w), unit columns); vectors false: w only */
  CK_LAF_INV,            /* a (n x n) -> out[0] A^-1 (solve with the identity, which small systems make in registers) */
  CK_LAF_N
} ck_la_fn;

typedef struct ck_la_call {
  ck_la_fn fn;
  const char *name;      /* the public name, first in every message ("ck.solve") */
  const ck_tensor *a, *b;
  bool upper, left, unit, full, vectors, packed;
  bool check;            /* read info (and scan A for NaN/Inf) back to the host; false: no read back at all */
  int refine;            /* solve: CK_LA_IRS_* (CUDA, f64): the LU in a lower precision, refined */
  const char *variant;   /* lu: a rung of the LU ladder (ck.variants("lu")); NULL: cuSOLVER / LAPACKE */
  ck_tensor out[5];      /* results (new references; the caller releases them) */
  int nout;
  int iters;             /* refine: cuSOLVER's iteration count (negative: it fell back to f64) */
} ck_la_call;

/* Run c; on failure nothing is left in c->out. ran says where it ran and what was copied (ran->note). */
ck_status ck_linalg(ck_ctx *ctx, ck_la_call *c, ck_ran *ran);

#endif
