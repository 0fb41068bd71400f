/*
 * 04_reduce_then_scan.cu — scan step 4: reduce, then scan, over big vectorised tiles.
 *
 * Idea: steps 1-3 write partial scans and then read and write every element again to add the carries: 4n
 * memory traffic on top of the reads. Reduce-then-scan writes each output once: pass 1 reduces each tile of
 * 256 x 16 = 4096 elements to its total (reads n), pass 2 scans the totals (n / 4096 of them, recursively
 * with the same two passes), pass 3 reads each tile again and scans it after its carry (reads n, writes n):
 * 3n in all, and f16/bf16 outputs are rounded once. Tiles go through shared memory with 16-byte vector loads
 * and stores (scan_common.cuh's Tile), each thread scanning 16 consecutive elements in registers.
 * Launch: 256 threads, 4096 elements per block per pass. Limits: rows only (inner == 1).
 * Operands: x contiguous [outer, len], out contiguous [outer, len]; any len >= 1.
 */
#include "scan_common.cuh"

using namespace ckscan;

#define RT_BLOCK 256
#define RT_ITEMS 16
#define RT_TILE (RT_BLOCK * RT_ITEMS)

// ---------------------------------------------------------------- kernels

/* Pass 1: each tile's total (coalesced striped loads, a register fold, then the block). */
template <class P>
__global__ void __launch_bounds__(RT_BLOCK) scan_rt_reduce_kernel(const typename P::in_t *__restrict__ x,
                                                                  typename P::acc_t *sums, int64_t outer, int64_t len,
                                                                  int64_t ntiles) {
  using acc_t = typename P::acc_t;
  __shared__ acc_t wsum[RT_BLOCK / 32];
  for (int64_t g = blockIdx.x; g < outer * ntiles; g += gridDim.x) {
    const int64_t row = g / ntiles, j0 = (g % ntiles) * RT_TILE;
    acc_t a = P::identity();
#pragma unroll
    for (int k = 0; k < RT_ITEMS; ++k) {
      const int64_t j = j0 + k * RT_BLOCK + threadIdx.x;
      if (j < len) a = P::combine(a, P::load(x[row * len + j]));
    }
    acc_t total;
    (void)block_excl<P, RT_BLOCK>(a, total, wsum);
    if (threadIdx.x == 0) sums[g] = total;
  }
}

/* Pass 3 (and the whole scan when a row is one tile): each tile scanned after its carry. */
template <class P>
__global__ void __launch_bounds__(RT_BLOCK) scan_rt_tile_kernel(const typename P::in_t *x, /* may be out */
                                                                typename P::out_t *out, const typename P::acc_t *carry,
                                                                int64_t outer, int64_t len, int64_t ntiles,
                                                                int exclusive) {
  using T = Tile<P, RT_BLOCK, RT_ITEMS>;
  using acc_t = typename P::acc_t;
  __shared__ acc_t s[T::SMEM];
  __shared__ acc_t wsum[RT_BLOCK / 32];
  for (int64_t g = blockIdx.x; g < outer * ntiles; g += gridDim.x) {
    const int64_t row = g / ntiles, j0 = (g % ntiles) * RT_TILE;
    T::load(x + row * len, j0, len, s);
    __syncthreads();
    (void)T::scan(s, carry ? carry[g] : P::identity(), exclusive != 0, wsum);
    T::store(out + row * len, j0, len, s);
    __syncthreads();
  }
}

// ---------------------------------------------------------------- launcher

template <class P>
static int rt_levels(const ck_env *env, const typename P::in_t *x, typename P::out_t *out, int64_t outer, int64_t len,
                     bool exclusive) {
  using acc_t = typename P::acc_t;
  cudaStream_t s = (cudaStream_t)env->stream;
  const int64_t ntiles = cdiv(len, RT_TILE);
  if (ntiles == 1) {
    ck_note(env, scan_rt_tile_kernel<P>, RT_BLOCK, 0);
    scan_rt_tile_kernel<P><<<grid_for(outer), RT_BLOCK, 0, s>>>(x, out, nullptr, outer, len, 1, exclusive);
    return (int)cudaGetLastError();
  }
  Ws w(env, (size_t)(outer * ntiles) * sizeof(acc_t));
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  acc_t *sums = (acc_t *)w.p;
  ck_note(env, scan_rt_reduce_kernel<P>, RT_BLOCK, 0);
  scan_rt_reduce_kernel<P><<<grid_for(outer * ntiles), RT_BLOCK, 0, s>>>(x, sums, outer, len, ntiles);
  int err = (int)cudaGetLastError();
  if (!err) err = rt_levels<up_t<P>>(env, sums, sums, outer, ntiles, true);
  if (err) return err;
  ck_note(env, scan_rt_tile_kernel<P>, RT_BLOCK, 0);
  scan_rt_tile_kernel<P><<<grid_for(outer * ntiles), RT_BLOCK, 0, s>>>(x, out, sums, outer, len, ntiles, exclusive);
  return (int)cudaGetLastError();
}

template <class P> static int launch(const ck_scan_desc &d, const ck_env *env) {
  return rt_levels<P>(env, (const typename P::in_t *)d.x, (typename P::out_t *)d.out, d.outer, d.len, d.exclusive != 0);
}

CK_SCAN_LAUNCHER(ck_scan_reduce_then_scan, false, launch)

extern "C" const char *ck_scan_reduce_then_scan_supports(const void *desc) {
  return rows_only((const ck_scan_desc *)desc);
}
