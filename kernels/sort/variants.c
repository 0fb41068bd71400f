/*
 * variants.c — the sort ladder's registry (issue 33): one row per kernels/sort/NN_*.cu, from rungs.def.
 * The default order is CUB first (the reference, and the fastest until the GPU runs say otherwise), then the
 * radix rungs, then bitonic; topk keeping at most half of each line prefers radix_select (it reads the line a few
 * times and sorts only the k winners, where the others sort all of it); onesweep (rung 6) comes last in both
 * orders until it is measured on a GPU; a rung is picked by name with {variant = ...}.
 */
#include <stddef.h>

#include "../ck_kernels.h"

const ck_variant ck_sort_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_sort_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_sort_nvariants = (int)(sizeof ck_sort_variants / sizeof ck_sort_variants[0]);

int ck_sort_preferred[CK_ORDER_CAP] = {-1};      /* rank column 1 */
int ck_sort_preferred_topk[CK_ORDER_CAP] = {-1}; /* rank column 2: topk of k <= len / 2 (op_sort.c) */
int ck_sort_preferred_values[CK_ORDER_CAP] = {-1}; /* rank column 3: integer sorts without indices (op_sort.c) */
