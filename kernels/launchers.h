/*
 * launchers.h — every variant's launcher and supports() prototype, declared once.
 *
 * Included at the end of ck_kernels.h, so both the registry tables (kernels/<op>/variants.c, C) and the
 * kernel files that define the launchers (extern "C", C++) see the same declaration: a definition whose
 * signature differs is a compile error ("conflicting declaration of C function"), not a silent mismatch.
 * A new rung adds its line here, its file, and its registry row.
 */
#ifndef CK_LAUNCHERS_H
#define CK_LAUNCHERS_H

#ifdef __cplusplus
extern "C" {
#endif

#define CK_LAUNCHER(fn) int fn(const void *desc, const ck_env *env);
#define CK_SUPPORTS(fn) const char *fn##_supports(const void *desc);
#define CK_LAUNCHER_S(fn) CK_LAUNCHER(fn) CK_SUPPORTS(fn)

/* matmul (kernels/matmul/NN_*.cu) */
CK_LAUNCHER(ck_matmul_cublas)
CK_LAUNCHER(ck_matmul_naive)
CK_LAUNCHER(ck_matmul_coalesced)
CK_LAUNCHER(ck_matmul_smem)
CK_LAUNCHER(ck_matmul_blocktile_1d)
CK_LAUNCHER(ck_matmul_blocktile_2d)
CK_LAUNCHER(ck_matmul_vectorized)
CK_LAUNCHER(ck_matmul_tuned)
CK_LAUNCHER_S(ck_matmul_warptile)
CK_LAUNCHER_S(ck_matmul_double_buffer)
CK_LAUNCHER_S(ck_matmul_wmma)
CK_LAUNCHER_S(ck_matmul_mma_sync)
CK_LAUNCHER_S(ck_matmul_wgmma_tma)
CK_LAUNCHER_S(ck_matmul_warp_specialized)
CK_LAUNCHER_S(ck_matmul_persistent)

/* reduce (kernels/reduce/NN_*.cu) */
CK_LAUNCHER_S(ck_reduce_cub)
CK_LAUNCHER_S(ck_reduce_interleaved_divergent)
CK_LAUNCHER_S(ck_reduce_interleaved_strided)
CK_LAUNCHER_S(ck_reduce_sequential)
CK_LAUNCHER_S(ck_reduce_first_add_load)
CK_LAUNCHER_S(ck_reduce_unroll_last_warp)
CK_LAUNCHER_S(ck_reduce_complete_unroll)
CK_LAUNCHER_S(ck_reduce_multi_add)
CK_LAUNCHER_S(ck_reduce_shuffle_vec)
CK_LAUNCHER_S(ck_reduce_single_pass)
CK_LAUNCHER_S(ck_reduce_rows_warp)
CK_LAUNCHER_S(ck_reduce_rows_block)
CK_LAUNCHER_S(ck_reduce_cols)

/* transpose (kernels/transpose/NN_*.cu) */
CK_LAUNCHER_S(ck_transpose_geam)
CK_LAUNCHER_S(ck_transpose_naive_row)
CK_LAUNCHER_S(ck_transpose_naive_col)
CK_LAUNCHER_S(ck_transpose_smem)
CK_LAUNCHER_S(ck_transpose_smem_pad)
CK_LAUNCHER_S(ck_transpose_smem_pad_unroll)
CK_LAUNCHER_S(ck_transpose_wide)
CK_LAUNCHER_S(ck_transpose_vec)
CK_LAUNCHER_S(ck_transpose_aligned)

/* elementwise (kernels/elementwise/NN_*.cu) */
CK_LAUNCHER_S(ck_ew_strided)
CK_LAUNCHER_S(ck_ew_contiguous)
CK_LAUNCHER_S(ck_ew_tiled)

/* the batch of small ops (kernels/batched/batched.cu): a `batched` row in the elementwise, reduce and matmul
 * ladders */
CK_LAUNCHER_S(ck_ew_batched)
CK_LAUNCHER_S(ck_reduce_batched)
CK_LAUNCHER_S(ck_matmul_batched)

#undef CK_LAUNCHER
#undef CK_SUPPORTS
#undef CK_LAUNCHER_S

#ifdef __cplusplus
}
#endif
#endif
