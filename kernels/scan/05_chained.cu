/*
 * 05_chained.cu — scan step 5: one pass, tiles chained.
 *
 * Idea: step 4 still reads the input twice. A single pass reads and writes each element once: each block
 * scans its tile (4096 elements, as step 4), then waits for the inclusive prefix of the tile before it, adds
 * it, publishes its own, and writes its outputs. Tiles are taken in order by an atomic ticket, so the tile a
 * block waits for is always held by a block that is already running (single_pass.cuh). The catch: the wait is
 * a serial chain across the whole array (each tile waits for one global-memory round trip of its
 * predecessor's), which is what step 6 breaks. Rows (outer > 1) are chains of their own.
 * Launch: 256 threads, one tile per ticket. Limits: rows only (inner == 1).
 * Operands: x contiguous [outer, len], out contiguous [outer, len]; any len >= 1.
 */
#include "single_pass.cuh"

using namespace ckscan;

// ---------------------------------------------------------------- kernel

template <class P>
__global__ void __launch_bounds__(SP_BLOCK) scan_chained_kernel(const typename P::in_t *__restrict__ x,
                                                                typename P::out_t *out, int64_t outer, int64_t len,
                                                                int64_t ntiles, int exclusive,
                                                                Status<typename P::acc_t> st) {
  using T = Tile<P, SP_BLOCK, SP_ITEMS>;
  using acc_t = typename P::acc_t;
  __shared__ acc_t s[T::SMEM];
  __shared__ acc_t wsum[SP_BLOCK / 32];
  __shared__ acc_t carry;
  __shared__ int64_t gsh;
  for (;;) {
    const int64_t g = next_tile(st.ticket, &gsh);
    if (g >= outer * ntiles) break;
    const int64_t row = g / ntiles, t = g % ntiles;
    T::load(x + row * len, t * SP_TILE, len, s);
    __syncthreads();
    acc_t r[SP_ITEMS];
    const acc_t mine = T::thread_scan(s, r);
    acc_t total;
    const acc_t ex = block_excl<P, SP_BLOCK>(mine, total, wsum);
    if (threadIdx.x == 0) {
      acc_t prev = P::identity();
      if (t > 0) {
        while (ld_volatile(st.flags + g - 1) != 2) {
        }
        __threadfence();
        prev = ld_volatile(st.inc + g - 1);
      }
      st_volatile(st.inc + g, P::combine(prev, total));
      __threadfence();
      st_volatile(st.flags + g, 2);
      carry = prev;
    }
    __syncthreads();
    T::put_back(s, r, P::combine(carry, ex), exclusive != 0);
    __syncthreads();
    T::store(out + row * len, t * SP_TILE, len, s);
    __syncthreads();
  }
}

// ---------------------------------------------------------------- launcher

template <class P> static int launch(const ck_scan_desc &d, const ck_env *env) {
  return run_single_pass<P>(env, scan_chained_kernel<P>, d);
}

CK_SCAN_LAUNCHER(ck_scan_chained, false, launch)

extern "C" const char *ck_scan_chained_supports(const void *desc) { return rows_only((const ck_scan_desc *)desc); }
