/*
 * variants.c — the elementwise ladder: the single source of truth for its variant ids and names.
 * There is no library reference (id 0) for elementwise ops: the bound is device-to-device memcpy, which
 * benchmarks time through {op="memcpy"}.
 */
#include <stddef.h>

#include "../ck_kernels.h"

const ck_variant ck_ew_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_ew_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_ew_nvariants = (int)(sizeof ck_ew_variants / sizeof ck_ew_variants[0]);

/* The preference orders: filled from the rows' RANKS by ck_registry_init (src/core/registry.c). */
/* batched first: it takes only small dense ops, whose time is the launch's; then contiguous: its supports()
 * refuses broadcasts and strided views; then tiled, which takes only inputs in another memory order than the
 * output; then strided, which runs everything */
int ck_ew_preferred[CK_ORDER_CAP] = {-1}; /* rank column 1 */
