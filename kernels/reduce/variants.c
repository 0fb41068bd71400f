/*
 * variants.c — the reduction ladder's registry: one row per kernels/reduce/NN_*.cu.
 *
 * Steps 1-7 follow Harris's "Optimizing Parallel Reduction in CUDA"; 8-9 go past it (shuffles, 16-byte
 * loads, one launch); 10-12 are layout variants for short rows, long rows and leading-dim (column)
 * reductions. Every variant runs every op and dtype (f32, f64, i32; 8-12 also f16, bf16) for any len >= 1; supports() says when a
 * variant does not take a layout (1-11 need inner == 1, 12 needs inner > 1) or, for 10 and 11, when another
 * variant should have the shape.
 */
#include <stddef.h>

#include "../ck_kernels.h"

/* The rungs the dispatcher picks by default (8-12) also take f16/bf16, accumulated in f32 (their launchers
 * instantiate them: CK_RED_LAUNCHER_H). CUB and Harris's teaching steps 1-7 stay f32/f64/i32: CUB's direct
 * path reads the input as the accumulator type, and the teaching steps would double their instances. */
const ck_variant ck_reduce_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_reduce_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_reduce_nvariants = (int)(sizeof ck_reduce_variants / sizeof ck_reduce_variants[0]);

/* The preference orders: filled from the rows' RANKS by ck_registry_init (src/core/registry.c). */
/* Every order starts with `batched`, which takes only reductions of at most 4096 elements (their time is the
 * launch's) and appends them to the context's batch instead of launching. After it, the picker takes the first whose supports() says yes, so the specialised variants come first and pick
 * themselves by shape: short rows -> rows_warp; >= 1024 long rows -> rows_block; full reductions and few long
 * rows -> single_pass; inner > 1 -> cols. CUB and the rest stay as fallbacks. */
int ck_reduce_preferred[CK_ORDER_CAP] = {-1}; /* rank column 1 */
/* Whole-array reductions (outer == inner == 1): CUB's DeviceReduce measured 3-9% ahead of single_pass and
 * shuffle_vec on every f32 sum from 2^22 to 2^28 on the H200 (bench/results/reduce-nvidia-h200.json), so it
 * is the default there; our kernels lead on every row and column layout. */
int ck_reduce_preferred_full[CK_ORDER_CAP] = {-1}; /* rank column 2 */
/* Small whole arrays (src/ops/op_reduce.c picks these by size): the time is the host's, and CUB's call costs two
 * entries into the library (sizing, then the reduction), a workspace and its own launch. Up to 2 KiB, one warp
 * (rows_warp with outer == 1: 32 lanes x 4 x 16-byte loads, one round trip) in one launch; up to 16 KiB,
 * single_pass's one-block case (one chunk: no partials, no tickets, one launch). */
int ck_reduce_preferred_tiny[CK_ORDER_CAP] = {-1}; /* rank column 3 */
int ck_reduce_preferred_small[CK_ORDER_CAP] = {-1}; /* rank column 4 */
