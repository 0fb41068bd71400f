/*
 * lu.h — the LU ladder's descriptor and launchers (rungs: rungs.def). Each rung factors a batch of column-major
 * matrices in place (P A = L U, LAPACK's packed form and 1-based pivots), writing info per entry (0, or the first
 * j with U(j,j) == 0, as getrf does); info is device memory.
 */
#ifndef CK_LU_H
#define CK_LU_H

#include "../ck_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ck_lu_desc {
  int dtype; /* CK_F32 or CK_F64 */
  int m, n, lda;
  int64_t batch, sa, sp; /* entry i: a + i * sa elements, ipiv + i * sp */
  void *a;
  int32_t *ipiv, *info;
} ck_lu_desc;

#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) int ck_lu_##NAME(const void *desc, const ck_env *env);
#include "rungs.def"
#undef CK_RUNG

/* The f64 trailing update's product: matmul rung 17 (dmma) in the tiles LU wants (kernels/matmul/17_dmma.cu). */
int ck_matmul_dmma_small_tiles(const void *desc, const ck_env *env);

extern const ck_variant ck_lu_variants[];
extern const int ck_lu_nvariants;

#ifdef __cplusplus
}
#endif
#endif
