/*
 * variants.c — the sort ladder's registry (issue 33): one row per kernels/sort/NN_*.cu, from rungs.def.
 * The default order is CUB first (the reference, and the fastest until the GPU runs say otherwise), then the
 * radix rungs, then bitonic; a rung is picked by name with {variant = ...}.
 */
#include <stddef.h>

#include "../ck_kernels.h"

const ck_variant ck_sort_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_sort_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_sort_nvariants = (int)(sizeof ck_sort_variants / sizeof ck_sort_variants[0]);

int ck_sort_preferred[CK_ORDER_CAP] = {-1}; /* rank column 1 */
