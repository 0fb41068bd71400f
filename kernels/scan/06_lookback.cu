/*
 * 06_lookback.cu — scan step 6: single pass with decoupled look-back (Merrill and Garland, "Single-pass
 * Parallel Prefix Scan with Decoupled Look-back", 2016).
 *
 * Idea: step 5's chain makes each tile wait for the inclusive prefix of the one before. Here a tile publishes
 * its own total (aggregate, flag 1) as soon as it has scanned locally, and then looks back: warp 0 reads the
 * status of the 32 tiles before it at once, combines aggregates, and stops at the nearest tile that has
 * published its inclusive prefix (flag 2); it then publishes its own inclusive prefix. A tile waits only for
 * predecessors that have not even finished their local scan, so the chain's latency overlaps with the loads:
 * one read and one write of each element. Rows are separate chains (the look-back stops at the row's first
 * tile). Changed from step 5 besides the look-back: a tile's status is one word, flag and value together
 * (single_pass.cuh's PackedWords: one load per look-back step, no fence), tiles of 256 x 32 elements (8192;
 * 256 x 16 for 8-byte accumulators), streaming 16-byte loads and stores, and sleeps in the look-back (2200 ns
 * before the first read, 688 between re-polls: single_pass.cuh's Delay). On an H100 (2^28 f32,
 * lab/scan_lookback_probe.cu) the separate flag and value with a fence between took 1.46-1.54 ms, one word
 * ~1.0, 8192-element tiles and streaming 0.96, CUB's InclusiveSum 0.88, memcpy 0.72; on 3 x 2^26, the sleeps took
 * it from 0.719 ms (74.8% of memcpy) to 0.607 (88.8%; CUB 0.670, 80.5%).
 * Launch: 256 threads, one tile per ticket (single_pass.cuh). Limits: rows only (inner == 1).
 * Operands: x contiguous [outer, len], out contiguous [outer, len]; any len >= 1.
 */
#include "single_pass.cuh"

using namespace ckscan;

// ---------------------------------------------------------------- kernel

template <class P> __device__ __forceinline__ typename P::acc_t warp_all(typename P::acc_t v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const typename P::acc_t n = shfl_idx(v, (threadIdx.x & 31) ^ o);
    /* the higher lane holds the earlier tile: combine (earlier, later) */
    v = ((threadIdx.x & 31) & o) ? P::combine(v, n) : P::combine(n, v);
  }
  return v;
}

/* The first warp: publish the tile's aggregate (a row's first tile: its inclusive prefix), look back over the
 * predecessors 32 at a time until one has its inclusive prefix, publish ours. Each status is one word (flag and
 * value, single_pass.cuh's PackedWords): a look-back step is one load per lane, publishing one store. */
struct LookBack {
  using Layout = PackedWords;
  static constexpr bool stream = true;
  /* tiles of 256 x 32 elements for 4-byte accumulators (8192: 33 KB of shared memory), 256 x 16 for 8-byte */
  template <class A> static constexpr int items() { return sizeof(A) == 4 ? 32 : 16; }
  template <class P>
  __device__ static typename P::acc_t get(const Words<typename P::acc_t> &st, int64_t g, int64_t t,
                                          typename P::acc_t total, Delay dl) {
    using acc_t = typename P::acc_t;
    const int lane = threadIdx.x & 31;
    if (lane == 0) word_put(st, g, t == 0 ? 2u : 1u, total);
    acc_t prefix = P::identity();
    if (t == 0) return prefix;
    sleep_ns(dl.first); /* (single_pass.cuh's Delay: why) */
    const int64_t first = g - t; /* the row's first tile: the look-back stops there */
    for (int64_t end = g;; end -= 32) {
      const int64_t at = end - 1 - lane; /* lane 0: the nearest predecessor */
      unsigned f = 2;
      acc_t v = P::identity();
      if (at >= first)
        for (f = word_get(st, at, v); f == 0; f = word_get(st, at, v)) sleep_ns(dl.poll);
      const unsigned inc_lanes = __ballot_sync(0xffffffffu, f == 2);
      const int stop = inc_lanes ? __ffs(inc_lanes) - 1 : 32;
      if (lane > stop) v = P::identity(); /* behind the nearest inclusive prefix: already in it */
      prefix = P::combine(warp_all<P>(v), prefix);
      if (inc_lanes) break;
    }
    if (lane == 0) word_put(st, g, 2u, P::combine(prefix, total));
    return prefix;
  }
};

// ---------------------------------------------------------------- launcher

template <class P> static int launch(const ck_scan_desc &d, const ck_env *env) {
  return run_single_pass<P, LookBack>(env, d);
}

CK_SCAN_LAUNCHER(ck_scan_lookback, true, launch)

extern "C" const char *ck_scan_lookback_supports(const void *desc) { return rows_only((const ck_scan_desc *)desc); }
