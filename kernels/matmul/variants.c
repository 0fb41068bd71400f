/*
 * variants.c — the matmul ladder's registry: one row per kernel file in kernels/matmul/, id = file number.
 *
 * Id 0 is the library reference (cuBLAS). Ids 1..9 are the CUDA-core ladder, each step one idea over the
 * previous (see each file's header); 10-11 are the tensor-core rungs (sm_80+), 12-14 the Hopper rungs
 * (sm_90a). The dispatcher (src/ops/op_matmul.c) satisfies each row's layout flags:
 * CK_VF_ROWMAJOR rows get a_cs == b_cs == c_cs == 1 (contiguous copies of the operands otherwise),
 * CK_VF_BLAS rows get operands with a unit stride in one of their two dims,
 * CK_VF_TMA rows get A and B as a TMA tensor map takes them (mm_tma.h: either dim contiguous, 16-byte
 * aligned strides and base; contiguous copies otherwise) and C with any strides.
 */
#include <stddef.h>

#include "../ck_kernels.h"

const ck_variant ck_matmul_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_matmul_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_matmul_nvariants = (int)(sizeof ck_matmul_variants / sizeof ck_matmul_variants[0]);

/* The preference orders: filled from the rows' RANKS by ck_registry_init (src/core/registry.c). */
/* Default order: the library first (fastest, every layout); if it cannot run a case, the fastest own
 * kernels that can. */
int ck_matmul_preferred[CK_ORDER_CAP] = {-1}; /* rank column 1 */
/* Large f16/bf16 products whose operands and C the persistent Hopper rung takes in place (src/ops/op_matmul.c
 * says which): step 14 first, measured faster than cuBLAS there (14_persistent.cu); it declines without a
 * Hopper GPU or an sm_90a build, and cuBLAS runs. */
int ck_matmul_preferred_tma[CK_ORDER_CAP] = {-1}; /* rank column 2 */
/* Tiny f32/f64 products (src/ops/op_matmul.c picks this by size and layout): the time is the host's, and
 * cuBLAS's call (its heuristics, then its own launch) costs more than the whole product; the smem rung is
 * one launch through the driver API (kernels/ck_launch.cuh). */
int ck_matmul_preferred_tiny[CK_ORDER_CAP] = {-1}; /* rank column 3 */
