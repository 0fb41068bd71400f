/*
 * variants.c — the index ladder's registry (rows from kernels/index/rungs.def). Id 0 is the library reference
 * (CUB: DeviceReduce for counts, DeviceSelect::Flagged for masked_select and nonzero); the memcpy bound is
 * timed by the benchmark (examples/select_bench.lua), as for every ladder.
 */
#include <stddef.h>

#include "../ck_kernels.h"

const ck_variant ck_index_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_index_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_index_nvariants = (int)(sizeof ck_index_variants / sizeof ck_index_variants[0]);

/* Preference (rank column 1): vec where it takes the case, else strided; the compactions only run on cub. */
int ck_index_preferred[CK_ORDER_CAP] = {-1};
