/*
 * 03_warp_shuffle.cu — scan step 3: registers and warp shuffles, then the block.
 *
 * Idea: shared-memory trees (steps 1-2) pay a barrier per level. Here each thread scans its 4 consecutive
 * elements serially in registers, the warp scans the 32 thread totals with shuffles (5 steps, no shared
 * memory, no barrier), and warp 0 scans the block's warp totals: two barriers per tile of 256 x 4 = 1024
 * elements (block_excl in scan_common.cuh). Longer rows: block totals scanned one level up and added, as in
 * steps 1-2 (scan_levels).
 * Launch: 256 threads, 1024 elements per block. Limits: rows only (inner == 1); f32, f64 and i32, as step 1.
 * Operands: x contiguous [outer, len], out contiguous [outer, len]; any len >= 1.
 */
#include "scan_common.cuh"

using namespace ckscan;

#define WS_BLOCK 256
#define WS_ITEMS 4
#define WS_TILE (WS_BLOCK * WS_ITEMS)

// ---------------------------------------------------------------- kernel

template <class P>
__global__ void __launch_bounds__(WS_BLOCK) scan_warp_kernel(const typename P::in_t *x, /* may be out */
                                                             typename P::out_t *out, typename P::acc_t *sums,
                                                             int64_t outer, int64_t len, int64_t ntiles, int exclusive) {
  using acc_t = typename P::acc_t;
  __shared__ acc_t wsum[WS_BLOCK / 32];
  for (int64_t g = blockIdx.x; g < outer * ntiles; g += gridDim.x) {
    const int64_t row = g / ntiles, j0 = (g % ntiles) * WS_TILE + (int64_t)threadIdx.x * WS_ITEMS;
    acc_t r[WS_ITEMS];
#pragma unroll
    for (int m = 0; m < WS_ITEMS; ++m) r[m] = j0 + m < len ? P::load(x[row * len + j0 + m]) : P::identity();
#pragma unroll
    for (int m = 1; m < WS_ITEMS; ++m) r[m] = P::combine(r[m - 1], r[m]);
    acc_t total;
    const acc_t before = block_excl<P, WS_BLOCK>(r[WS_ITEMS - 1], total, wsum);
#pragma unroll
    for (int m = 0; m < WS_ITEMS; ++m)
      if (j0 + m < len)
        out[row * len + j0 + m] =
            P::store(exclusive ? (m ? P::combine(before, r[m - 1]) : before) : P::combine(before, r[m]));
    if (sums && threadIdx.x == 0) sums[g] = total;
  }
}

// ---------------------------------------------------------------- launcher

struct WsPass {
  template <class Q>
  int operator()(Tag<Q>, const ck_env *env, const typename Q::in_t *x, typename Q::out_t *out,
                 typename Q::acc_t *sums, int64_t outer, int64_t len, int64_t ntiles, bool exclusive) const {
    ck_note(env, scan_warp_kernel<Q>, WS_BLOCK, 0);
    scan_warp_kernel<Q><<<grid_for(outer * ntiles), WS_BLOCK, 0, (cudaStream_t)env->stream>>>(x, out, sums, outer, len,
                                                                                             ntiles, exclusive);
    return (int)cudaGetLastError();
  }
};

template <class P> static int launch(const ck_scan_desc &d, const ck_env *env) {
  return scan_levels<P, WS_TILE>(env, (const typename P::in_t *)d.x, (typename P::out_t *)d.out, d.outer, d.len,
                                 d.exclusive != 0, WsPass{});
}

CK_SCAN_LAUNCHER(ck_scan_warp_shuffle, false, launch)

extern "C" const char *ck_scan_warp_shuffle_supports(const void *desc) { return rows_only((const ck_scan_desc *)desc); }
