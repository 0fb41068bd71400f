/*
 * mm_pipeline.cuh — the k loops of the tensor-core rungs, a rung's compute plugged in: step 9's multi-stage
 * cp.async pipeline (k_loop, taught there; PIPE 1 double-buffers the fragments in registers) and its
 * warp-specialized form (producer warps copy, consumer warps multiply, mbarriers between them: ws_init, WsRing,
 * ws_produce, ws_consume) with the register split of such a block (kRegsProducer, ws_regs). Part of mm_tc.cuh.
 */
#ifndef CK_MM_PIPELINE_CUH
#define CK_MM_PIPELINE_CUH

#include <stdint.h>

#include "mm_common.cuh"
#include "mm_ptx.cuh"

namespace cktc {

using ckmm::cp_commit;
using ckmm::cp_wait;

// ---------------------------------------------------------------- the pipelined k loop (device)

/* Step 9's multi-stage cp.async pipeline around a rung's compute, over `ktiles` k tiles of KS k steps each:
 * issue(kt, stage) starts the copies of tile kt (no commit); load(F &f, stage, ks) fills fragments f with
 * step ks of a stage; mma(const F &f) multiplies them into the rung's accumulators.
 * PIPE 0: wait + barrier at the top of each tile, then load and multiply step after step; STAGES - 1 tiles in
 *   flight (cp.async group g holds tile g; empty groups keep the wait_group arithmetic uniform).
 * PIPE 1: fragments double-buffered in registers (step s + 1 loads while step s multiplies) and the barrier
 *   just before a tile's last step, whose fragments are then already in registers: the tile's stage is
 *   refilled at once (STAGES tiles in flight) and the next tile's first fragments load while the last step
 *   multiplies.
 * Returns with no copy in flight (the caller may reuse shared memory after a barrier). */
template <int STAGES, int PIPE, int KS, class F, class Issue, class Load, class Mma>
__device__ __forceinline__ void k_loop(int ktiles, Issue &&issue, Load &&load, Mma &&mma) {
  static_assert(STAGES >= 2, "a pipeline needs two buffers");
  if constexpr (PIPE == 0) {
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < ktiles) issue(s, s);
      cp_commit();
    }
    int st = 0, st_next = STAGES - 1; // stage computed now; stage refilled now
    for (int t = 0; t < ktiles; ++t) {
      cp_wait<STAGES - 2>(); // this thread's copies of tile t have landed ...
      __syncthreads();       // ... everyone's have, and everyone finished computing tile t - 1
      if (t + STAGES - 1 < ktiles) issue(t + STAGES - 1, st_next);
      cp_commit();
#pragma unroll
      for (int ks = 0; ks < KS; ++ks) {
        F f;
        load(f, st, ks);
        mma(f);
      }
      st = st + 1 == STAGES ? 0 : st + 1;
      st_next = st_next + 1 == STAGES ? 0 : st_next + 1;
    }
  } else {
    static_assert(PIPE == 1 && KS % 2 == 0, "fragment buffers alternate over an even number of k steps per tile");
    F f[2];
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      if (s < ktiles) issue(s, s);
      cp_commit();
    }
    cp_wait<STAGES - 1>(); // tile 0
    __syncthreads();
    load(f[0], 0, 0);
    int st = 0; // stage of tile t
    for (int t = 0; t < ktiles; ++t) {
      const int st1 = st + 1 == STAGES ? 0 : st + 1; // stage of tile t + 1
#pragma unroll
      for (int ks = 0; ks < KS; ++ks) {
        if (ks < KS - 1) {
          load(f[(ks + 1) & 1], st, ks + 1);
        } else {
          cp_wait<STAGES - 2>(); // this thread's copies of tile t + 1 have landed ...
          __syncthreads();       // ... everyone's have, and no one reads stage st any more
          if (t + STAGES < ktiles) issue(t + STAGES, st);
          cp_commit();
          if (t + 1 < ktiles) load(f[0], st1, 0);
        }
        mma(f[ks & 1]);
      }
      st = st1;
    }
  }
  cp_wait<0>();
}

/* The same pipeline with the roles split (warp-specialized configurations): a producer warp only copies, the
 * consumer warps only load fragments and multiply, and no block-wide barrier is left in the k loop. Stage s
 * has two mbarriers in shared memory at bars: full[s] (bars + 8 s; one arrival per producer thread, when its
 * copies of the stage have landed: cp.async.mbarrier.arrive.noinc) and empty[s]
 * (bars + 8 (STAGES + s); one arrival per consumer thread once it has read the stage). Round n = t / STAGES of
 * stage s waits for phase n of full[s] (parity n & 1); the producer refills it for round n + 1 after phase n
 * of empty[s]. Warps no longer meet once per k tile, so one warp's fragment loads can run beside another's
 * mma.sync instead of every warp of a scheduler reaching them together.
 * ws_init: thread 0 sets up the barriers (the caller syncs the block once before the roles split). */
template <int STAGES> __device__ __forceinline__ void ws_init(uint32_t bars, int producers, int consumers) {
#pragma unroll
  for (int s = 0; s < STAGES; ++s) mbar_init(bars + 8 * s, producers), mbar_init(bars + 8 * (STAGES + s), consumers);
}

/* The register split of a block with one producer warpgroup (rung 11's WS configurations, rungs 13 and 14):
 * kRegsProducer per producer thread after setmaxnreg, and ws_regs per consumer thread: what a thread had at
 * launch (65536 / (NT * MINB), a multiple of 8) plus its share of what the producers gave back, at most 256
 * (NT threads, CT of them consumers: 384 and 256 give 40 / 232). */
constexpr int kRegsProducer = 40;
template <int NT, int CT, int MINB> constexpr int ws_regs() {
  constexpr int r0 = 65536 / (NT * MINB) / 8 * 8, rc = (r0 * NT - kRegsProducer * (NT - CT)) / CT / 8 * 8;
  return rc > 256 ? 256 : rc;
}
static_assert(ws_regs<384, 256, 1>() == 232, "two consumer warpgroups beside one producer warpgroup");

/* Where a warp role stands in the ring of stages: the stage of its next k tile, the parity of the phase it
 * waits for there, and how many tiles it has passed through the ring (the producer's first STAGES tiles wait
 * for nothing). It carries on from one run of k tiles to the next (stream-K: a block may take two tiles'
 * runs), so the producers fill the next run's stages while the consumers store the last one's results. */
struct WsRing {
  int st = 0, n = 0;
  uint32_t par = 0;
};

/* The producer warps: issue(kt, stage) starts k tile kt's copies (no commit), for kt in [kt0, kt1). The
 * caller waits for its copies to land (cp_wait<0>) after its last run. */
template <int STAGES, class Issue>
__device__ __forceinline__ void ws_produce(WsRing &r, int kt0, int kt1, uint32_t bars, Issue &&issue) {
  for (int kt = kt0; kt < kt1; ++kt) {
    if (r.n >= STAGES) mbar_wait(bars + 8 * (STAGES + r.st), r.par);
    issue(kt, r.st);
    cp_arrive(bars + 8 * r.st);
    if (++r.st == STAGES) {
      r.st = 0;
      if (r.n >= STAGES) r.par ^= 1;
    }
    ++r.n;
  }
}

/* The consumer warps, over the next `ktiles` tiles of the ring: load(F &f, stage, ks) and mma(const F &f) as in
 * k_loop; PIPE 1 double-buffers the fragments in registers (the stage is released once its last step's
 * fragments are loaded, and the next tile's first step loads while that step multiplies), PIPE 0 loads and
 * multiplies step after step. */
template <int STAGES, int PIPE, int KS, class F, class Load, class Mma>
__device__ __forceinline__ void ws_consume(WsRing &r, int ktiles, uint32_t bars, Load &&load, Mma &&mma) {
  int st = r.st;
  uint32_t par = r.par; // parity of full[st]'s phase of this round
  if constexpr (PIPE == 0) {
    for (int t = 0; t < ktiles; ++t) {
      mbar_wait(bars + 8 * st, par);
#pragma unroll
      for (int ks = 0; ks < KS; ++ks) {
        F f;
        load(f, st, ks);
        mma(f);
      }
      mbar_arrive(bars + 8 * (STAGES + st));
      if (++st == STAGES) st = 0, par ^= 1;
    }
  } else {
    static_assert(PIPE == 1 && KS % 2 == 0, "fragment buffers alternate over an even number of k steps per tile");
    F f[2];
    if (ktiles > 0) {
      mbar_wait(bars + 8 * st, par);
      load(f[0], st, 0);
    }
    for (int t = 0; t < ktiles; ++t) {
      const int st1 = st + 1 == STAGES ? 0 : st + 1;
      const uint32_t par1 = st1 == 0 ? par ^ 1 : par;
#pragma unroll
      for (int ks = 0; ks < KS; ++ks) {
        if (ks < KS - 1) {
          load(f[(ks + 1) & 1], st, ks + 1);
        } else {
          mbar_arrive(bars + 8 * (STAGES + st));
          if (t + 1 < ktiles) {
            mbar_wait(bars + 8 * st1, par1);
            load(f[0], st1, 0);
          }
        }
        mma(f[ks & 1]);
      }
      st = st1, par = par1;
    }
  }
  r.st = st, r.par = par;
}

} // namespace cktc

#endif
