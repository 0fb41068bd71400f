/*
 * variants.c — the reduction ladder's registry: one row per kernels/reduce/NN_*.cu.
 *
 * Steps 1-7 follow Harris's "Optimizing Parallel Reduction in CUDA"; 8-9 go past it (shuffles, 16-byte
 * loads, one launch); 10-12 are layout variants for short rows, long rows and leading-dim (column)
 * reductions. Every variant runs every op and dtype (f32, f64, i32; 8-12 also f16, bf16) for any len >= 1; supports() says when a
 * variant does not take a layout (1-11 need inner == 1, 12 needs inner > 1) or, for 10 and 11, when another
 * variant should have the shape.
 */
#include "../ck_kernels.h"

#define ROW(id, name, summary) {id, #name, summary, CK_DT_ALL3, 0u, ck_reduce_##name, ck_reduce_##name##_supports}
/* The rungs the dispatcher picks by default (8-12) also take f16/bf16, accumulated in f32 (their launchers
 * instantiate them: CK_RED_LAUNCHER_H). CUB and Harris's teaching steps 1-7 stay f32/f64/i32: CUB's direct
 * path reads the input as the accumulator type, and the teaching steps would double their instances. */
#define ROWH(id, name, summary) {id, #name, summary, CK_DT_ALL5, 0u, ck_reduce_##name, ck_reduce_##name##_supports}

const ck_variant ck_reduce_variants[] = {
    ROW(0, cub, "CUB DeviceReduce / DeviceSegmentedReduce (library reference; rows only)"),
    ROW(1, interleaved_divergent, "Harris 1: interleaved addressing, divergent tid % (2s) branch"),
    ROW(2, interleaved_strided, "Harris 2: interleaved addressing, strided index (bank conflicts)"),
    ROW(3, sequential, "Harris 3: sequential addressing (conflict-free)"),
    ROW(4, first_add_load, "Harris 4: first add during the global load"),
    ROW(5, unroll_last_warp, "Harris 5: unrolled last warp (__syncwarp)"),
    ROW(6, complete_unroll, "Harris 6: completely unrolled, templated block size"),
    ROW(7, multi_add, "Harris 7: many elements per thread, grid-stride fold, few waves"),
    ROWH(8, shuffle_vec, "warp shuffles + 16-byte vector loads, two passes"),
    ROWH(9, single_pass, "persistent grid, 16-byte loads, last-block finish via atomic ticket"),
    ROWH(10, rows_warp, "a warp (or part of one) per row: many short rows"),
    ROWH(11, rows_block, "a block per row: many long rows"),
    ROWH(12, cols, "leading-dim reduction: coalesced across inner, len split across blocks"),
    {13, "batched", "small reductions (<= 4096 elements) queued and run in issue order, up to 56 per launch, by one block (kernels/batched/)",
     CK_DT_ALL5, CK_VF_BATCHED, ck_reduce_batched, ck_reduce_batched_supports},
};
const int ck_reduce_nvariants = (int)(sizeof ck_reduce_variants / sizeof ck_reduce_variants[0]);

/* Every order starts with `batched`, which takes only reductions of at most 4096 elements (their time is the
 * launch's) and appends them to the context's batch instead of launching. After it, the picker takes the first whose supports() says yes, so the specialised variants come first and pick
 * themselves by shape: short rows -> rows_warp; >= 1024 long rows -> rows_block; full reductions and few long
 * rows -> single_pass; inner > 1 -> cols. CUB and the rest stay as fallbacks. */
const int ck_reduce_preferred[] = {13, 10, 11, 9, 12, 8, 0, 7, 6, 5, 4, 3, 2, 1, -1};
/* Whole-array reductions (outer == inner == 1): CUB's DeviceReduce measured 3-9% ahead of single_pass and
 * shuffle_vec on every f32 sum from 2^22 to 2^28 on the H200 (bench/results/reduce-nvidia-h200.json), so it
 * is the default there; our kernels lead on every row and column layout. */
const int ck_reduce_preferred_full[] = {13, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1, -1};
/* Small whole arrays (src/ops/op_reduce.c picks these by size): the time is the host's, and CUB's call costs two
 * entries into the library (sizing, then the reduction), a workspace and its own launch. Up to 2 KiB, one warp
 * (rows_warp with outer == 1: 32 lanes x 4 x 16-byte loads, one round trip) in one launch; up to 16 KiB,
 * single_pass's one-block case (one chunk: no partials, no tickets, one launch). */
const int ck_reduce_preferred_tiny[] = {13, 10, 9, 0, 8, 7, 6, 5, 4, 3, 2, 1, -1};
const int ck_reduce_preferred_small[] = {13, 9, 0, 8, 7, 6, 5, 4, 3, 2, 1, -1};
