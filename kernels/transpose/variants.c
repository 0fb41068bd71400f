/*
 * variants.c — the transpose ladder's registry: one row per kernels/transpose/NN_*.cu, id = step number.
 *
 * Id 0 is the library reference (cuBLAS geam). The bandwidth bound (a device-to-device memcpy of the same
 * bytes) is not a row: benchmarks time it with core.time_op{op = "memcpy"} for every ladder alike.
 * No row sets CK_VF_ROWMAJOR: every kernel takes general element strides (unit inner
 * strides and aligned pointers only select faster code inside the launcher).
 */
#include "ck_kernels.h"

#define ROW(id, v, summary, dtypes, flags) {id, #v, summary, dtypes, flags, ck_transpose_##v, ck_transpose_##v##_supports}

const ck_variant ck_transpose_variants[] = {
    ROW(0, geam, "cuBLAS geam (C = A^T): the library reference; f32/f64, unit inner strides", CK_DT_FLOATS, 0),
    ROW(1, naive_row, "one element per thread, coalesced reads, strided writes", CK_DT_ALL5, 0),
    ROW(2, naive_col, "one element per thread, strided reads, coalesced writes", CK_DT_ALL5, 0),
    ROW(3, smem, "32x32 shared tile: both sides coalesced, 32-way bank conflicts", CK_DT_ALL5, 0),
    ROW(4, smem_pad, "32x33 padded shared tile: no bank conflicts", CK_DT_ALL5, 0),
    ROW(5, smem_pad_unroll, "padded tile, 2 elements per thread (loads issued together)", CK_DT_ALL5, 0),
    ROW(6, wide, "64x64 padded tile, 16 elements per thread, unguarded interior tiles", CK_DT_ALL5, 0),
    ROW(7, vec, "64x64 tile, 16-byte loads/stores, conflict-free lane layout", CK_DT_ALL5, 0),
    ROW(8, aligned, "step 6 with output rows written in whole 32-byte sectors (odd strides)", CK_DT_ALL5, 0),
};
const int ck_transpose_nvariants = (int)(sizeof ck_transpose_variants / sizeof ck_transpose_variants[0]);

/* Fastest first as measured on the H200 (examples/transpose_ladder.lua, f32 16384^2: aligned 94 %, wide 94 %,
 * vec 79 %, smem_pad_unroll 46 %, naive_col 36 %, smem_pad 29 %, smem 21 %, naive_row 12 % of memcpy;
 * aligned 90 % where wide gives 71 % at 16383 x 4097). geam (90-95 %) comes last all the same: it computes
 * 1 * x + 0, which is not a bit move (it changed NaN/denormal payloads in our tests), and it is float-only.
 * memcpy never appears: it is not a transpose. */
const int ck_transpose_preferred[] = {8, 6, 7, 5, 2, 4, 3, 1, 0, -1};
