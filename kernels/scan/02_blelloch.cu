/*
 * 02_blelloch.cu — scan step 2: Blelloch's work-efficient scan (up-sweep, down-sweep) in shared memory, with
 * conflict-free padding.
 *
 * Idea: step 1 does n log n combines; a balanced tree does 2n. The up-sweep builds partial sums in place (the
 * reduction tree), the root is replaced by the identity, and the down-sweep pushes prefixes back down: an
 * exclusive scan of 2 x 256 = 512 elements per block (the inclusive one is that combined with the element).
 * The tree's strided accesses hit the same shared-memory bank (stride 2^k words); one word of padding per 32
 * (CONFLICT_FREE_OFFSET, as in GPU Gems 3, ch. 39) spreads them. Longer rows: block totals scanned one level
 * up and added (scan_levels), as in step 1.
 * Launch: 256 threads, 512 elements per block. Limits: rows only (inner == 1); f32, f64 and i32, as step 1.
 * Operands: x contiguous [outer, len], out contiguous [outer, len]; any len >= 1.
 */
#include "scan_common.cuh"

using namespace ckscan;

#define BL_BLOCK 256
#define BL_TILE (2 * BL_BLOCK)
#define CONFLICT_FREE_OFFSET(n) ((n) >> 5)

// ---------------------------------------------------------------- kernel

template <class P>
__global__ void __launch_bounds__(BL_BLOCK) scan_blelloch_kernel(const typename P::in_t *x, /* may be out */
                                                                 typename P::out_t *out, typename P::acc_t *sums,
                                                                 int64_t outer, int64_t len, int64_t ntiles,
                                                                 int exclusive) {
  using acc_t = typename P::acc_t;
  __shared__ acc_t s[BL_TILE + BL_TILE / 32];
  __shared__ acc_t total;
  const int t = threadIdx.x;
  for (int64_t g = blockIdx.x; g < outer * ntiles; g += gridDim.x) {
    const int64_t row = g / ntiles, j0 = (g % ntiles) * BL_TILE;
    const int a = t, b = t + BL_BLOCK;
    const acc_t xa = j0 + a < len ? P::load(x[row * len + j0 + a]) : P::identity();
    const acc_t xb = j0 + b < len ? P::load(x[row * len + j0 + b]) : P::identity();
    s[a + CONFLICT_FREE_OFFSET(a)] = xa;
    s[b + CONFLICT_FREE_OFFSET(b)] = xb;
    int offset = 1;
    for (int dd = BL_TILE >> 1; dd > 0; dd >>= 1) { /* up-sweep */
      __syncthreads();
      if (t < dd) {
        int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
        ai += CONFLICT_FREE_OFFSET(ai);
        bi += CONFLICT_FREE_OFFSET(bi);
        s[bi] = P::combine(s[ai], s[bi]);
      }
      offset <<= 1;
    }
    if (t == 0) {
      const int last = BL_TILE - 1 + CONFLICT_FREE_OFFSET(BL_TILE - 1);
      total = s[last];
      s[last] = P::identity();
    }
    for (int dd = 1; dd < BL_TILE; dd <<= 1) { /* down-sweep */
      offset >>= 1;
      __syncthreads();
      if (t < dd) {
        int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
        ai += CONFLICT_FREE_OFFSET(ai);
        bi += CONFLICT_FREE_OFFSET(bi);
        const acc_t left = s[ai];
        s[ai] = s[bi];
        s[bi] = P::combine(s[bi], left);
      }
    }
    __syncthreads();
    const acc_t ea = s[a + CONFLICT_FREE_OFFSET(a)], eb = s[b + CONFLICT_FREE_OFFSET(b)];
    if (j0 + a < len) out[row * len + j0 + a] = P::store(exclusive ? ea : P::combine(ea, xa));
    if (j0 + b < len) out[row * len + j0 + b] = P::store(exclusive ? eb : P::combine(eb, xb));
    if (sums && t == 0) sums[g] = total;
    __syncthreads(); /* s and total are reused by the next tile */
  }
}

// ---------------------------------------------------------------- launcher

struct BlPass {
  template <class Q>
  int operator()(Tag<Q>, const ck_env *env, const typename Q::in_t *x, typename Q::out_t *out,
                 typename Q::acc_t *sums, int64_t outer, int64_t len, int64_t ntiles, bool exclusive) const {
    ck_note(env, scan_blelloch_kernel<Q>, BL_BLOCK, 0);
    scan_blelloch_kernel<Q><<<grid_for(outer * ntiles), BL_BLOCK, 0, (cudaStream_t)env->stream>>>(
        x, out, sums, outer, len, ntiles, exclusive);
    return (int)cudaGetLastError();
  }
};

template <class P> static int launch(const ck_scan_desc &d, const ck_env *env) {
  return scan_levels<P, BL_TILE>(env, (const typename P::in_t *)d.x, (typename P::out_t *)d.out, d.outer, d.len,
                                 d.exclusive != 0, BlPass{});
}

CK_SCAN_LAUNCHER(ck_scan_blelloch, false, launch)

extern "C" const char *ck_scan_blelloch_supports(const void *desc) { return rows_only((const ck_scan_desc *)desc); }
