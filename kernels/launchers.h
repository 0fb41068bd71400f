/*
 * launchers.h — every variant's launcher and supports() prototype, declared once.
 *
 * Included at the end of ck_kernels.h, so both the registry tables (kernels/<op>/variants.c, C) and the
 * kernel files that define the launchers (extern "C", C++) see the same declaration: a definition whose
 * signature differs is a compile error ("conflicting declaration of C function"), not a silent mismatch.
 * The prototypes come from the rung tables (kernels/<op>/rungs.def): a new rung is its file and its row.
 */
#ifndef CK_LAUNCHERS_H
#define CK_LAUNCHERS_H

#ifdef __cplusplus
extern "C" {
#endif

#define CK_LAUNCHER(fn) int fn(const void *desc, const ck_env *env);
#define CK_SUPPORTS(fn) const char *fn##_supports(const void *desc);
#define CK_LAUNCHER_S(fn) CK_LAUNCHER(fn) CK_SUPPORTS(fn)

/* One prototype per row of each ladder's rungs.def (the batch's rows included: kernels/batched/batched.cu
 * defines ck_<op>_batched for the elementwise, reduce and matmul ladders). */
#define CK_RUNG_DECL_S(fn) CK_LAUNCHER_S(fn)
#define CK_RUNG_DECL_N(fn) CK_LAUNCHER(fn)
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_DECL_##SUP(CK_CAT(CK_RUNG_PREFIX, NAME))
#define CK_RUNG_PREFIX ck_matmul_
#include "matmul/rungs.def"
#undef CK_RUNG_PREFIX
#define CK_RUNG_PREFIX ck_reduce_
#include "reduce/rungs.def"
#undef CK_RUNG_PREFIX
#define CK_RUNG_PREFIX ck_transpose_
#include "transpose/rungs.def"
#undef CK_RUNG_PREFIX
#define CK_RUNG_PREFIX ck_ew_
#include "elementwise/rungs.def"
#undef CK_RUNG_PREFIX
#define CK_RUNG_PREFIX ck_index_
#include "index/rungs.def"
#undef CK_RUNG_PREFIX
#define CK_RUNG_PREFIX ck_scan_
#include "scan/rungs.def"
#undef CK_RUNG_PREFIX
#define CK_RUNG_PREFIX ck_sort_
#include "sort/rungs.def"
#undef CK_RUNG_PREFIX
#define CK_RUNG_PREFIX ck_hist_
#include "hist/rungs.def"
#undef CK_RUNG_PREFIX
#define CK_RUNG_PREFIX ck_search_
#include "search/rungs.def"
#undef CK_RUNG_PREFIX
#define CK_RUNG_PREFIX ck_rows_
#include "rows/rungs.def"
#undef CK_RUNG_PREFIX
#define CK_RUNG_PREFIX ck_attn_
#include "attention/rungs.def"
#undef CK_RUNG_PREFIX
#undef CK_RUNG
#undef CK_RUNG_DECL_S
#undef CK_RUNG_DECL_N

#undef CK_LAUNCHER
#undef CK_SUPPORTS
#undef CK_LAUNCHER_S

#ifdef __cplusplus
}
#endif
#endif
