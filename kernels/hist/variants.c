/*
 * variants.c — the histogram ladder's registry (issue 33), from rungs.def: CUB first, then the privatised
 * shared-memory rung (up to 8192 bins), then global atomics.
 */
#include <stddef.h>

#include "../ck_kernels.h"

const ck_variant ck_hist_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_hist_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_hist_nvariants = (int)(sizeof ck_hist_variants / sizeof ck_hist_variants[0]);

int ck_hist_preferred[CK_ORDER_CAP] = {-1}; /* rank column 1 */
