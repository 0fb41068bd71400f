/*
 * variants.c — searchsorted's registry (issue 33), from rungs.def: our binary search first (one launch, no
 * workspace), thrust's vectorised bounds as the reference.
 */
#include <stddef.h>

#include "../ck_kernels.h"

const ck_variant ck_search_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_search_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_search_nvariants = (int)(sizeof ck_search_variants / sizeof ck_search_variants[0]);

int ck_search_preferred[CK_ORDER_CAP] = {-1}; /* rank column 1 */
