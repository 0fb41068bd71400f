/*
 * launch.c — one kernel launch through the driver API, for the rungs on the small-op paths (ck_launch.cuh).
 *
 * Why: a launch is most of a small op's host time. On the H100 host (lab/launch_floor.cu, one run) a
 * 16-element fill cost 4.39 us per launch through <<<>>>, 4.19 through cudaLaunchKernel and 3.94 through
 * cuLaunchKernel: the runtime's own layer (call configuration push/pop, function lookup, its error state) is
 * 0.25-0.45 us of every launch. So the small-op rungs launch with cuLaunchKernel on the function the
 * runtime resolved for the kernel (cudaGetFuncBySymbol), cached per kernel here.
 * Limits: the library links cudart statically and must load without a driver, so libcuda is never linked:
 * the entry point comes from cudaGetDriverEntryPointByVersion on the first launch. Without it, for a kernel
 * the runtime cannot resolve, or when the cache is full, the launch goes through cudaLaunchKernel as before.
 * A failed cuLaunchKernel is retried through cudaLaunchKernel, so errors come back as the runtime's codes
 * (and its last-error state) exactly as a <<<>>> launch reports them.
 * Measured in the library, though, it did not pay: in one run on the H100 (lab/small.sh, the small-op
 * bench with each path) fill / a + b / add_ / sum of 16 took 5.41 / 8.56 / 6.18 / 6.66 us per op through
 * cuLaunchKernel and 4.91 / 5.98 / 5.21 / 6.38 through cudaLaunchKernel (the 8x8 matmul 6.63 vs 6.99), while
 * the bare launches of launch_floor.cu in the same run gave 3.77 vs 4.11 us; the two earlier runs disagreed
 * on which bare launch is faster. So the default is cudaLaunchKernel, and CUKERN_LAUNCH=driver (read at the
 * first launch) opts in to the driver path, to measure it again.
 * Stream capture (ck.graph) records a cuLaunchKernel on the capturing stream like any launch; the capture
 * runs in relaxed mode, so the first-launch lookups are allowed inside it too.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ck_kernels.h"

// ---------------------------------------------------------------- the driver's entry point

static PFN_cuLaunchKernel_v4000 driver_launch(void) {
  static _Atomic(PFN_cuLaunchKernel_v4000) fn;
  static atomic_int state; /* 0 not asked, 1 resolved, 2 unavailable */
  const int s = atomic_load_explicit(&state, memory_order_acquire);
  if (s == 1) return atomic_load_explicit(&fn, memory_order_relaxed);
  if (s == 2) return NULL;
  void *p = NULL;
  enum cudaDriverEntryPointQueryResult q;
  const char *env = getenv("CUKERN_LAUNCH"); /* "driver": opt in to cuLaunchKernel (see the header) */
  if (!env || strcmp(env, "driver") != 0) {
    atomic_store_explicit(&state, 2, memory_order_release);
    return NULL;
  }
  if (cudaGetDriverEntryPointByVersion("cuLaunchKernel", &p, 4000, cudaEnableDefault, &q) == cudaSuccess &&
      q == cudaDriverEntryPointSuccess && p) {
    PFN_cuLaunchKernel_v4000 f;
    memcpy(&f, &p, sizeof f); /* object pointer -> function pointer (ISO C has no cast for it) */
    atomic_store_explicit(&fn, f, memory_order_relaxed);
    atomic_store_explicit(&state, 1, memory_order_release);
    return f;
  }
  (void)cudaGetLastError();
  atomic_store_explicit(&state, 2, memory_order_release);
  return NULL;
}

// ---------------------------------------------------------------- kernel -> CUfunction

/* Open addressing, keys claimed once by compare-and-swap and never removed (the built-in kernels live as long
 * as the process). A value of NULL means "being resolved" (launch through the runtime meanwhile); NO_FUNC means
 * the runtime could not resolve the kernel (always launch through the runtime). */
#define NSLOTS 1024
#define NO_FUNC ((void *)1)
static _Atomic(const void *) keys[NSLOTS];
static _Atomic(void *) vals[NSLOTS];

static void *function_of(const void *kernel) {
  uintptr_t h = (uintptr_t)kernel;
  h ^= h >> 17;
  h *= 0x9e3779b97f4a7c15ull;
  for (unsigned i = 0, j = (unsigned)(h >> 40) & (NSLOTS - 1); i < NSLOTS; ++i, j = (j + 1) & (NSLOTS - 1)) {
    const void *k = atomic_load_explicit(&keys[j], memory_order_acquire);
    if (k == kernel) return atomic_load_explicit(&vals[j], memory_order_acquire);
    if (k) continue;
    const void *expect = NULL;
    if (!atomic_compare_exchange_strong(&keys[j], &expect, kernel)) {
      if (expect == kernel) return atomic_load_explicit(&vals[j], memory_order_acquire);
      continue; /* another kernel took the slot: probe on */
    }
    cudaFunction_t f = NULL;
    void *v = cudaGetFuncBySymbol(&f, kernel) == cudaSuccess && f ? (void *)f : NO_FUNC;
    if (v == NO_FUNC) (void)cudaGetLastError();
    atomic_store_explicit(&vals[j], v, memory_order_release);
    return v;
  }
  return NULL; /* full: the runtime launches it */
}

// ---------------------------------------------------------------- the launch

int ck_launch_kernel(const void *kernel, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                     unsigned bz, size_t smem, void *stream, void **args) {
  const PFN_cuLaunchKernel_v4000 launch = driver_launch();
  if (launch) {
    void *f = function_of(kernel);
    if (f && f != NO_FUNC &&
        launch((CUfunction)f, gx, gy, gz, bx, by, bz, (unsigned)smem, (CUstream)stream, args, NULL) == CUDA_SUCCESS)
      return 0;
  }
  const dim3 grid = {gx, gy, gz}, block = {bx, by, bz};
  return (int)cudaLaunchKernel(kernel, grid, block, args, smem, (cudaStream_t)stream);
}
