/*
 * mm_tc.cuh — plumbing shared by the matmul ladder's tensor-core rungs (10_wmma.cu, 11_mma_sync.cu; through
 * mm_hopper.cuh also the sm_90a rungs); no kernel lives here.
 *
 * What the tensor-core rungs need and none of them teaches: kernel arguments for 2- and 4-byte inputs with an
 * output dtype of its own (c_dtype) and full element strides, the PTX wrappers (cp.async with zero fill,
 * ldmatrix, mma.sync, the TF32 rounding), the shared-memory tile layouts (padded or XOR-swizzled 16-byte
 * chunks), the tile loader that fills one pipeline stage (cp.async when the operand allows 16-byte copies,
 * plain loads and 16-byte shared stores otherwise: any strides, any alignment), the grouped tile order, step
 * 9's multi-stage k loop (taught there) with the rung's compute plugged in, the alpha/beta epilogue that
 * converts to c_dtype (beta == 0 never reads C), the split launches and the supports() test. Everything here
 * is inlined into the kernels. The parts, each including the ones it builds on:
 *   mm_tc_host.cuh   kernel arguments (TcArgs, tc_args, ab_vec), supports_tc, launch_tiles (host)
 *   mm_ptx.cuh       PTX wrappers: cp.async, ldmatrix, mma.sync, TF32 rounding, named barriers, mbarriers,
 *                    setmaxnreg
 *   mm_tile.cuh      shared-memory tile layouts (swz), load_tile / load_stage, the grouped tile order
 *                    (BlockTile), TileCopy / StageCopy
 *   mm_pipeline.cuh  the multi-stage k loop (k_loop) and its warp-specialized form (ws_produce, ws_consume),
 *                    the register split (ws_regs)
 *   mm_streamk.cuh   the stream-K tail: for_runs, sk_finish, launch_tiles_sk
 *   mm_epilogue.cuh  the alpha/beta epilogue: store_pair, the accumulator layouts, store_acc, c_base
 */
#ifndef CK_MM_TC_CUH
#define CK_MM_TC_CUH

#include "mm_tc_host.cuh"
#include "mm_ptx.cuh"
#include "mm_tile.cuh"
#include "mm_pipeline.cuh"
#include "mm_streamk.cuh"
#include "mm_epilogue.cuh"

#endif
