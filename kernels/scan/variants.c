/*
 * variants.c — the scan ladder's registry (issue 33): one row per kernels/scan/NN_*.cu, from rungs.def.
 *
 * Default orders (ranks in rungs.def): rows and columns take the layout rungs first, each of which declines
 * the shapes it is not for (rows_warp: rows up to 1024; rows_block: many rows; cols: inner > 1), then the
 * single-pass look-back scan and CUB. One scan over a whole array: rows_warp for up to 1024 elements (one
 * launch), then CUB's DeviceScan (the reference), then look-back. Large arrays along a leading dim (inner >= 128,
 * len >= 64, at least 2^20 elements): cols_lookback (one pass), then cols. The teaching rungs run when asked for.
 */
#include <stddef.h>

#include "../ck_kernels.h"

const ck_variant ck_scan_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_scan_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_scan_nvariants = (int)(sizeof ck_scan_variants / sizeof ck_scan_variants[0]);

int ck_scan_preferred[CK_ORDER_CAP] = {-1};      /* rank column 1 */
int ck_scan_preferred_full[CK_ORDER_CAP] = {-1}; /* rank column 2 */
int ck_scan_preferred_cols[CK_ORDER_CAP] = {-1}; /* rank column 3 */
