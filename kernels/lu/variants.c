/*
 * variants.c — the LU ladder's registry: one row per kernels/lu/NN_*.{c,cu}, id = step number (rungs.def).
 */
#include <stddef.h>

#include "lu.h"

const ck_variant ck_lu_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_lu_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_lu_nvariants = (int)(sizeof ck_lu_variants / sizeof ck_lu_variants[0]);
