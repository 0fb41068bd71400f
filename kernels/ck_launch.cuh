/*
 * ck_launch.cuh — ck_launch_drv(kernel, grid, block, smem, stream, args...): a kernel launch through
 * cudaLaunchKernel, or with CUKERN_LAUNCH=driver through the driver API (cuLaunchKernel on the runtime's
 * function for the kernel, cached per kernel; kernels/launch.c says why it is opt-in: measured, it did not pay). Returns 0 or a cudaError_t, like `<<<>>>` followed by
 * cudaGetLastError(). The arguments are converted to the kernel's parameter types, as `<<<>>>` converts them.
 * Used by the rungs on the small-op paths: 02_contiguous (fill and dense elementwise ops), 10_rows_warp (tiny
 * whole-array reductions), matmul 03_smem (tiny matmuls); the other launchers keep `<<<>>>`.
 */
#ifndef CK_LAUNCH_CUH
#define CK_LAUNCH_CUH

#include <cuda_runtime.h>

#include "ck_kernels.h"

extern "C" int ck_launch_kernel(const void *kernel, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, size_t smem, void *stream, void **args);

namespace ck_launch_detail {
template <class T> struct same { using type = T; };
}

template <class... P>
static inline int ck_launch_drv(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                            typename ck_launch_detail::same<P>::type... args) {
  void *argv[sizeof...(P) + 1] = {(void *)&args..., nullptr};
  return ck_launch_kernel((const void *)kernel, grid.x, grid.y, grid.z, block.x, block.y, block.z, smem, stream, argv);
}

#endif
