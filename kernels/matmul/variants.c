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

#include "ck_kernels.h"

#define F32 CK_DT_BIT(CK_F32)
#define F32_F64 (CK_DT_BIT(CK_F32) | CK_DT_BIT(CK_F64))
#define HALVES (CK_DT_BIT(CK_F16) | CK_DT_BIT(CK_BF16))

const ck_variant ck_matmul_variants[] = {
    {0, "cublas", "cuBLAS: Sgemm/Dgemm (no TF32); f16/bf16 via GemmEx (f32 compute); TF32 only on request; strided-batched",
     F32_F64 | HALVES, CK_VF_BLAS, ck_matmul_cublas, NULL},
    {1, "naive", "one thread per result; lanes walk rows of C (uncoalesced A reads, seed V1)", F32_F64,
     CK_VF_ROWMAJOR, ck_matmul_naive, NULL},
    {2, "coalesced", "one thread per result; lanes walk a row of C (coalesced B reads and C writes, seed V2)",
     F32_F64, CK_VF_ROWMAJOR, ck_matmul_coalesced, NULL},
    {3, "smem", "32x32 tiles of A and B staged in shared memory", F32_F64, CK_VF_ROWMAJOR, ck_matmul_smem, NULL},
    {4, "blocktile_1d", "64x64 block tile, 8 results per thread in a column (1-D register blocking)", F32_F64,
     CK_VF_ROWMAJOR, ck_matmul_blocktile_1d, NULL},
    {5, "blocktile_2d", "128x128 block tile, 8x8 results per thread (outer product in registers)", F32_F64,
     CK_VF_ROWMAJOR, ck_matmul_blocktile_2d, NULL},
    {6, "vectorized", "float4 global loads/stores, A tile transposed in shared memory, 128-bit shared loads", F32,
     CK_VF_ROWMAJOR, ck_matmul_vectorized, NULL},
    {7, "tuned", "bank-conflict-free shared layout (padded A, quad-strided threads), BK 16, tile by size", F32,
     CK_VF_ROWMAJOR, ck_matmul_tuned, NULL},
    {8, "warptile", "warp tiling (64x32 per warp), next k tile prefetched via registers into a second buffer",
     F32, CK_VF_ROWMAJOR, ck_matmul_warptile, ck_matmul_warptile_supports},
    {9, "double_buffer", "warp tiling fed by a 3-stage cp.async pipeline (global -> shared, no registers); grouped block order",
     F32, CK_VF_ROWMAJOR, ck_matmul_double_buffer, ck_matmul_double_buffer_supports},
    {10, "wmma", "WMMA 16x16x16 fragments (f16/bf16 in, f32 accumulate) over padded shared tiles, 3-stage cp.async (seed's last level)",
     HALVES, CK_VF_ROWMAJOR, ck_matmul_wmma, ck_matmul_wmma_supports},
    {11, "mma_sync", "mma.sync m16n8k16 fed by ldmatrix from XOR-swizzled tiles, 4-stage cp.async; TF32 m16n8k8 for f32 (opt-in)",
     HALVES | F32, CK_VF_ROWMAJOR, ck_matmul_mma_sync, ck_matmul_mma_sync_supports},
    {12, "wgmma_tma", "Hopper: wgmma m64n256k16 from 128B-swizzled tiles that TMA loads (mbarriers), 4 stages, a block barrier per k tile",
     HALVES, CK_VF_TMA, ck_matmul_wgmma_tma, ck_matmul_wgmma_tma_supports},
    {13, "warp_specialized", "Hopper: a TMA producer warpgroup and 2 wgmma consumer warpgroups, full/empty mbarrier ring, setmaxnreg",
     HALVES, CK_VF_TMA, ck_matmul_warp_specialized, ck_matmul_warp_specialized_supports},
    {14, "persistent", "Hopper: step 13 as one block per SM walking the tiles, 2-CTA clusters sharing B by TMA multicast, epilogue through shared memory and TMA stores",
     HALVES, CK_VF_TMA, ck_matmul_persistent, ck_matmul_persistent_supports},
    {15, "batched", "tiny dense f32/f64 products (<= 4096 results, k <= 256) queued and run in issue order, up to 56 per launch, by one block (kernels/batched/)",
     F32_F64, CK_VF_BATCHED, ck_matmul_batched, ck_matmul_batched_supports},
};

const int ck_matmul_nvariants = (int)(sizeof ck_matmul_variants / sizeof ck_matmul_variants[0]);

/* Default order: the library first (fastest, every layout); if it cannot run a case, the fastest own
 * kernels that can. */
const int ck_matmul_preferred[] = {0, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, -1};
/* Large f16/bf16 products whose operands and C the persistent Hopper rung takes in place (src/ops/op_matmul.c
 * says which): step 14 first, measured faster than cuBLAS there (14_persistent.cu); it declines without a
 * Hopper GPU or an sm_90a build, and cuBLAS runs. */
const int ck_matmul_preferred_tma[] = {14, 0, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, -1};
/* Tiny f32/f64 products (src/ops/op_matmul.c picks this by size and layout): the time is the host's, and
 * cuBLAS's call (its heuristics, then its own launch) costs more than the whole product; the smem rung is
 * one launch through the driver API (kernels/ck_launch.cuh). */
const int ck_matmul_preferred_tiny[] = {15, 3, 0, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 2, 1, -1};
