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

// ---------------------------------------------------------------- the prefix

/* Lane 0 waits for the previous tile's inclusive prefix, then publishes its own (a row's first tile starts
 * the chain). */
struct Chained {
  using Layout = FlagArrays;
  static constexpr bool stream = false;
  template <class A> static constexpr int items() { return SP_ITEMS; }
  template <class P>
  __device__ static typename P::acc_t get(const Status<typename P::acc_t> &st, int64_t g, int64_t t,
                                          typename P::acc_t total, Delay) { /* (the chain spins: no sleeps) */
    typename P::acc_t prev = P::identity();
    if (threadIdx.x != 0) return prev;
    if (t > 0) {
      while (ld_volatile(st.flags + g - 1) != 2) {
      }
      __threadfence();
      prev = ld_volatile(st.inc + g - 1);
    }
    st_volatile(st.inc + g, P::combine(prev, total));
    __threadfence();
    st_volatile(st.flags + g, 2);
    return prev;
  }
};

// ---------------------------------------------------------------- launcher

template <class P> static int launch(const ck_scan_desc &d, const ck_env *env) {
  return run_single_pass<P, Chained>(env, d);
}

CK_SCAN_LAUNCHER(ck_scan_chained, false, launch)

extern "C" const char *ck_scan_chained_supports(const void *desc) { return rows_only((const ck_scan_desc *)desc); }
