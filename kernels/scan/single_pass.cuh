/*
 * single_pass.cuh — what the two single-pass rungs (05_chained, 06_lookback) share: tiles handed out in launch
 * order by an atomic ticket (so a tile's predecessors are always running or done: no deadlock, whatever the
 * scheduler does), and per-tile status words in global memory, written value-then-flag with a fence between
 * and read flag-then-value (volatile loads, which bypass L1).
 *   flags[g]: 0 nothing yet, 1 the tile's aggregate is in agg[g], 2 its inclusive prefix is in inc[g]
 * The status block is [ticket | flags[total] | agg[total * width] | inc[total * width]] in one workspace, ticket
 * and flags zeroed per launch (status_zero_bytes). width is how many values a tile publishes: 1 for the row rungs,
 * a strip of columns for 10_cols_lookback (one flag covers the tile's whole vector).
 */
#ifndef CK_SCAN_SINGLE_PASS_CUH
#define CK_SCAN_SINGLE_PASS_CUH

#include "scan_common.cuh"

namespace ckscan {

#define SP_BLOCK 256
#define SP_ITEMS 16
#define SP_TILE (SP_BLOCK * SP_ITEMS)

template <class A> __device__ __forceinline__ A ld_volatile(const A *p) { return *(const volatile A *)p; }
template <class A> __device__ __forceinline__ void st_volatile(A *p, A v) { *(volatile A *)p = v; }

template <class A>
struct Status {
  unsigned long long *ticket;
  int *flags;
  A *agg, *inc;
};

/* The workspace layout (8-byte aligned pieces) and its size for `total` tiles of `width` values each; the part
 * to zero before a launch (the ticket and the flags). */
static inline size_t status_zero_bytes(int64_t total) { return 8 + (((size_t)total * sizeof(int) + 7) & ~(size_t)7); }
template <class A> static size_t status_bytes(int64_t total, int64_t width = 1) {
  return status_zero_bytes(total) + 2 * (size_t)total * (size_t)width * sizeof(A);
}
template <class A> static Status<A> status_at(void *p, int64_t total, int64_t width = 1) {
  Status<A> st;
  char *c = (char *)p;
  st.ticket = (unsigned long long *)c;
  st.flags = (int *)(c + 8);
  st.agg = (A *)(c + status_zero_bytes(total));
  st.inc = st.agg + total * width;
  return st;
}

/* The next tile for this block (all threads get it). */
__device__ __forceinline__ int64_t next_tile(unsigned long long *ticket, int64_t *sh) {
  if (threadIdx.x == 0) *sh = (int64_t)atomicAdd(ticket, 1ull);
  __syncthreads();
  return *sh;
}

/* The single-pass kernel: each ticket's tile is loaded and scanned locally, then Prefix::get (run by the first
 * warp, lane 0's result counts) finds everything before the tile and publishes the tile's own status; the tile
 * is written after its carry. Prefix is what steps 5 and 6 differ in (05_chained.cu, 06_lookback.cu). */
template <class P, class Prefix>
__global__ void __launch_bounds__(SP_BLOCK) scan_single_pass_kernel(const typename P::in_t *__restrict__ x,
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
    if (threadIdx.x < 32) {
      const acc_t prefix = Prefix::template get<P>(st, g, t, total);
      if (threadIdx.x == 0) carry = prefix;
    }
    __syncthreads();
    T::put_back(s, r, P::combine(carry, ex), exclusive != 0);
    __syncthreads();
    T::store(out + row * len, t * SP_TILE, len, s);
    __syncthreads();
  }
}

/* Launch the single-pass kernel over outer x ntiles tiles with a zeroed status block. */
template <class P, class Prefix>
static int run_single_pass(const ck_env *env, const ck_scan_desc &d) {
  const auto kernel = scan_single_pass_kernel<P, Prefix>;
  using acc_t = typename P::acc_t;
  cudaStream_t s = (cudaStream_t)env->stream;
  const int64_t ntiles = cdiv(d.len, SP_TILE), total = d.outer * ntiles;
  const size_t bytes = status_bytes<acc_t>(total);
  Ws w(env, bytes);
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  int err = (int)cudaMemsetAsync(w.p, 0, status_zero_bytes(total), s);
  if (err) return err;
  ck_note(env, kernel, SP_BLOCK, 0);
  kernel<<<grid_for(total), SP_BLOCK, 0, s>>>((const typename P::in_t *)d.x, (typename P::out_t *)d.out, d.outer,
                                              d.len, ntiles, d.exclusive, status_at<acc_t>(w.p, total));
  return (int)cudaGetLastError();
}

} // namespace ckscan

#endif
