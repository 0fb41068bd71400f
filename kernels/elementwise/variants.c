/*
 * variants.c — the elementwise ladder: the single source of truth for its variant ids and names.
 * There is no library reference (id 0) for elementwise ops: the bound is device-to-device memcpy, which
 * benchmarks time through {op="memcpy"}.
 */
#include "../ck_kernels.h"

const ck_variant ck_ew_variants[] = {
    {1, "strided", "any strides and broadcasts: per-element div/mod index math, grid-stride", CK_DT_ALL5, 0,
     ck_ew_strided, ck_ew_strided_supports},
    {2, "contiguous", "dense operands: 16-byte vector loads/stores, 4 in flight per thread, no index math",
     CK_DT_ALL5, CK_VF_CONTIGUOUS, ck_ew_contiguous, ck_ew_contiguous_supports},
    {3, "tiled", "inputs in another memory order than the output: 64x64 tiles (f64: 32x32) staged through shared memory, all loads in flight (a transpose fused with the op)",
     CK_DT_ALL5, 0, ck_ew_tiled, ck_ew_tiled_supports},
    {4, "batched", "small dense ops (<= 4096 elements) queued and run in issue order, up to 56 per launch, by one block (kernels/batched/)",
     CK_DT_ALL5, CK_VF_BATCHED, ck_ew_batched, ck_ew_batched_supports},
};
const int ck_ew_nvariants = (int)(sizeof ck_ew_variants / sizeof ck_ew_variants[0]);
/* batched first: it takes only small dense ops, whose time is the launch's; then contiguous: its supports()
 * refuses broadcasts and strided views; then tiled, which takes only inputs in another memory order than the
 * output; then strided, which runs everything */
const int ck_ew_preferred[] = {4, 2, 3, 1, -1};
