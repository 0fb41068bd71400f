/*
 * variants.c — the row-op ladder's registry (issue 37): one row per kernels/rows/NN_*.cu, from rungs.def.
 *
 * Default order (ranks in rungs.def): vectorized (rows of a 16-byte multiple, in registers), warp (short rows),
 * block (long or unaligned rows), online (a leading dim: a thread per line, coalesced), naive last. Each rung
 * declines the shapes it is not for, with the reason in ck.last_ran().note.
 */
#include <stddef.h>

#include "../ck_kernels.h"

const ck_variant ck_rows_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_rows_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_rows_nvariants = (int)(sizeof ck_rows_variants / sizeof ck_rows_variants[0]);

int ck_rows_preferred[CK_ORDER_CAP] = {-1};
