/*
 * variants.c — the complex ladder's registry (issue 35): one row per kernels/complex/NN_*.cu, from rungs.def.
 *
 * Default order (ranks in rungs.def): vectorized (dense operands, and every sum), then strided (any layout).
 */
#include <stddef.h>

#include "complex.h"

const ck_variant ck_complex_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_complex_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_complex_nvariants = (int)(sizeof ck_complex_variants / sizeof ck_complex_variants[0]);

int ck_complex_preferred[CK_ORDER_CAP] = {-1}; /* rank column 1 */
