/*
 * variants.c — the transpose ladder's registry: one row per kernels/transpose/NN_*.cu, id = step number.
 *
 * Id 0 is the library reference (cuBLAS geam). The bandwidth bound (a device-to-device memcpy of the same
 * bytes) is not a row: benchmarks time it with core.time_op{op = "memcpy"} for every ladder alike.
 * No row sets CK_VF_ROWMAJOR: every kernel takes general element strides (unit inner
 * strides and aligned pointers only select faster code inside the launcher).
 */
#include <stddef.h>

#include "../ck_kernels.h"

const ck_variant ck_transpose_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_transpose_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_transpose_nvariants = (int)(sizeof ck_transpose_variants / sizeof ck_transpose_variants[0]);

/* The preference orders: filled from the rows' RANKS by ck_registry_init (src/core/registry.c). */
/* Fastest first as measured on the H200 (examples/transpose_ladder.lua, f32 16384^2: aligned 94 %, wide 94 %,
 * vec 79 %, smem_pad_unroll 46 %, naive_col 36 %, smem_pad 29 %, smem 21 %, naive_row 12 % of memcpy;
 * aligned 90 % where wide gives 71 % at 16383 x 4097). geam (90-95 %) comes last all the same: it computes
 * 1 * x + 0, which is not a bit move (it changed NaN/denormal payloads in our tests), and it is float-only.
 * memcpy never appears: it is not a transpose. */
int ck_transpose_preferred[CK_ORDER_CAP] = {-1}; /* rank column 1 */
