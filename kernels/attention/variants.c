/*
 * variants.c — the attention ladder's registry (issue 37): one row per kernels/attention/NN_*.cu, from rungs.def.
 *
 * Default order (ranks in rungs.def): flash2, then flash1 (both decline masks, head dims other than 64/128 and
 * f32/f64, with the reason), then naive, which takes everything.
 */
#include <stddef.h>

#include "../ck_kernels.h"

const ck_variant ck_attn_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_attn_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_attn_nvariants = (int)(sizeof ck_attn_variants / sizeof ck_attn_variants[0]);

int ck_attn_preferred[CK_ORDER_CAP] = {-1};
