/*
 * 01_hillis_steele.cu — scan step 1: Hillis and Steele's scan in one block, with a recursive scan of the block
 * totals.
 *
 * Idea: after step k every element holds the combination of the 2^k elements ending at it; log2(512) = 9 steps
 * of "add the element `off` to the left" (a double buffer in shared memory, a barrier per step) scan a tile of
 * 512. It does O(n log n) work where a sequential scan does n, and every step goes through shared memory: the
 * point of the later steps. Longer rows are cut into tiles: each tile's total goes to an array that is scanned
 * (exclusively) the same way, one level up, and a last pass adds each tile's carry to its elements
 * (scan_common.cuh's scan_levels / add_carry). Rows (outer > 1) are independent tiles of their own.
 * Launch: 512 threads = one tile of 512 elements per block (grid-stride over outer x ntiles tiles).
 * Limits: rows only (inner == 1); f32, f64 and i32 (the partial scans are written in the output dtype before
 * the carry is added: f16/bf16 partials would be rounded, or overflow, first; steps 4-6 round once).
 * Operands: x contiguous [outer, len], out contiguous [outer, len]; any len >= 1.
 */
#include "scan_common.cuh"

using namespace ckscan;

#define HS_BLOCK 512

// ---------------------------------------------------------------- kernel

template <class P>
__global__ void __launch_bounds__(HS_BLOCK) scan_hs_kernel(const typename P::in_t *x, /* may be out (the totals, in place) */
                                                           typename P::out_t *out, typename P::acc_t *sums,
                                                           int64_t outer, int64_t len, int64_t ntiles, int exclusive) {
  using acc_t = typename P::acc_t;
  __shared__ acc_t buf[2][HS_BLOCK];
  const int t = threadIdx.x;
  for (int64_t g = blockIdx.x; g < outer * ntiles; g += gridDim.x) {
    const int64_t row = g / ntiles, j = (g % ntiles) * HS_BLOCK + t;
    buf[0][t] = j < len ? P::load(x[row * len + j]) : P::identity();
    __syncthreads();
    int in = 0;
    for (int off = 1; off < HS_BLOCK; off <<= 1) {
      acc_t v = buf[in][t];
      if (t >= off) v = P::combine(buf[in][t - off], v);
      buf[in ^ 1][t] = v;
      in ^= 1;
      __syncthreads();
    }
    const acc_t incl = buf[in][t];
    const acc_t ex = t ? buf[in][t - 1] : P::identity();
    if (j < len) out[row * len + j] = P::store(exclusive ? ex : incl);
    if (sums && t == HS_BLOCK - 1) sums[g] = incl;
    __syncthreads(); /* buf is refilled by the next tile */
  }
}

// ---------------------------------------------------------------- launcher

struct HsPass {
  template <class Q>
  int operator()(Tag<Q>, const ck_env *env, const typename Q::in_t *x, typename Q::out_t *out,
                 typename Q::acc_t *sums, int64_t outer, int64_t len, int64_t ntiles, bool exclusive) const {
    ck_note(env, scan_hs_kernel<Q>, HS_BLOCK, 0);
    scan_hs_kernel<Q><<<grid_for(outer * ntiles), HS_BLOCK, 0, (cudaStream_t)env->stream>>>(x, out, sums, outer, len,
                                                                                           ntiles, exclusive);
    return (int)cudaGetLastError();
  }
};

template <class P> static int launch(const ck_scan_desc &d, const ck_env *env) {
  return scan_levels<P, HS_BLOCK>(env, (const typename P::in_t *)d.x, (typename P::out_t *)d.out, d.outer, d.len,
                                  d.exclusive != 0, HsPass{});
}

CK_SCAN_LAUNCHER(ck_scan_hillis_steele, false, launch)

extern "C" const char *ck_scan_hillis_steele_supports(const void *desc) { return rows_only((const ck_scan_desc *)desc); }
