/*
 * mm_streamk.cuh — the stream-K tail of the warp-specialized configurations: the runs of k tiles a block takes
 * (for_runs, also the plain one-tile-per-block case), the sum of a tile split between units (sk_finish) and the
 * host launch (launch_tiles_sk, whose comment describes the scheme). Part of mm_tc.cuh.
 */
#ifndef CK_MM_STREAMK_CUH
#define CK_MM_STREAMK_CUH

#include <stdint.h>
#include <stdlib.h>

#include "ck_knob.h"
#include "mm_ptx.cuh"
#include "mm_tc_host.cuh"
#include "mm_tile.cuh"

namespace cktc {

// ---------------------------------------------------------------- stream-K tail (device)

/* A run's place in the stream-K tail (for_runs; rel < 0: a whole tile): it is part of tail tile rel
 * (tile sk_dp + rel), whose runs belong to units lo .. hi; this block is unit u. Unit v keeps its partial sums
 * of the tile in slot 2 v, or 2 v + 1 when the tile is its second one (only unit lo's can be: every later
 * unit starts inside the tile), lo1 says which for lo. */
struct SkRun {
  int rel = -1, u = 0, lo = 0, hi = 0, lo1 = 0;
};

/* Where stream-K unit u's k tiles start: floor(u I / U) without 64-bit arithmetic (u r < U^2 < 2^32). */
__device__ __forceinline__ unsigned sk_start(const TcArgs &p, unsigned u) {
  return u * (unsigned)p.sk_q + u * (unsigned)p.sk_r / (unsigned)p.sk_units;
}
/* The unit whose k tiles hold flattened k tile x: a float guess, corrected exactly. */
__device__ __forceinline__ int sk_unit_of(const TcArgs &p, unsigned x) {
  int v = min(p.sk_units - 1, (int)((float)(x + 1) * p.sk_uoi));
  while (v > 0 && sk_start(p, v) > x) --v;
  while (v + 1 < p.sk_units && sk_start(p, v + 1) <= x) ++v;
  return v;
}

/* The runs of k tiles a block takes, f(tile, kt0, kt1, run) for each: with no stream-K (p.sk_units == 0) its
 * one tile of the 2-D grid whole; in a stream-K launch (1-D grid) block l < sk_dp takes tile l whole, and unit
 * u = l - sk_dp the flattened k tiles [sk_start(u), sk_start(u + 1)) of the tail tiles: at most two runs (the
 * host keeps a unit's share under a tile's k tiles and at least 2). INFO: fill run (the consumers; the
 * producers need only the tiles and k ranges). */
template <typename T, int BM, int BN, int BK, int GROUP, bool INFO, class F>
__device__ __forceinline__ void for_runs(const TcArgs &p, int64_t y0, int64_t z0, F &&f) {
  const int ktiles = (int)((p.k + BK - 1) / BK);
  unsigned it = 0, end = (unsigned)ktiles, u = 0;
  int base = -1; // the tile of flattened k tile 0; -1: this block's tile of the 2-D grid
  bool tail = false;
  if (p.sk_units > 0) {
    const int l = (int)blockIdx.x;
    if (l < p.sk_dp) base = l;
    else u = l - p.sk_dp, base = p.sk_dp, tail = true, it = sk_start(p, u), end = sk_start(p, u + 1);
  }
  do {
    SkRun run;
    const unsigned kt = (unsigned)ktiles, r = tail ? it / kt : 0, kt0 = it - r * kt, kt1 = min(kt, kt0 + (end - it));
    if (INFO && tail) {
      run.rel = (int)r, run.u = (int)u, run.lo = sk_unit_of(p, r * kt), run.hi = sk_unit_of(p, (r + 1) * kt - 1);
      run.lo1 = sk_start(p, run.lo) < r * kt;
    }
    const BlockTile<T> bt = base < 0 ? block_tile<T, BM, BN, BK, GROUP>(p, y0, z0) : tile_of<T, BM, BN, BK, GROUP>(p, base + r);
    f(bt, (int)kt0, (int)kt1, run);
    it += kt1 - kt0;
  } while (it < end);
}

/* Stream-K unit run.u's run of tail tile run.rel ended: its partial sums go to its slot, and the last of the
 * tile's units to arrive (counted in sk_cnt) adds every unit's partial sums from the slots in unit order (so
 * the sum does not depend on which unit finishes last) into acc and returns true: it stores the tile. CT consumer threads (ct:
 * this one) take part; they meet on named barrier 1 (the producers do not), flag is a shared int. */
template <int CT, int BM, int BN, int FI, int FJ>
__device__ __forceinline__ bool sk_finish(const TcArgs &p, float (&acc)[FI][FJ][4], const SkRun &run, int ct, int *flag) {
  static_assert(FI * FJ * 4 * CT == BM * BN, "the consumers hold the tile's accumulators");
  constexpr int SLOT = BM * BN / 4; // float4s per slot
  float4 *const part = reinterpret_cast<float4 *>(p.sk_part) + ct;
  auto slot = [&](int v) { return part + (size_t)(2 * v + (v == run.lo ? run.lo1 : 0)) * SLOT; };
  float4 *mine = slot(run.u);
#pragma unroll
  for (int i = 0; i < FI; ++i)
#pragma unroll
    for (int j = 0; j < FJ; ++j)
      __stcg(mine + (i * FJ + j) * CT, make_float4(acc[i][j][0], acc[i][j][1], acc[i][j][2], acc[i][j][3]));
  __threadfence();
  named_sync(1, CT);
  if (ct == 0) *flag = atomicAdd(p.sk_cnt + run.rel, 1);
  named_sync(1, CT);
  if (*(volatile int *)flag != run.hi - run.lo) return false;
  __threadfence();
  // Every unit's partial sums from the slots, this unit's own included, in unit order, QC float4s at a time:
  // the accumulators not reached yet are dead (their values are in the own slot), so a chunk's sums and its
  // loads in flight fit beside the finished ones (holding all 32 float4s of a 64 x 64 warp tile live while
  // ptxas hoists the next unit's loads made it spill).
  constexpr int Q = FI * FJ, QC = Q < 16 ? Q : 16;
  static_assert(Q % QC == 0, "whole chunks");
#pragma unroll
  for (int q0 = 0; q0 < Q; q0 += QC) {
    float4 s[QC];
#pragma unroll
    for (int q = 0; q < QC; ++q) s[q] = __ldcg(slot(run.lo) + (q0 + q) * CT);
    for (int v = run.lo + 1; v <= run.hi; ++v) {
      const float4 *src = slot(v);
#pragma unroll
      for (int q = 0; q < QC; ++q) {
        const float4 x = __ldcg(src + (q0 + q) * CT);
        s[q].x += x.x, s[q].y += x.y, s[q].z += x.z, s[q].w += x.w;
      }
    }
#pragma unroll
    for (int q = 0; q < QC; ++q) {
      float *c = acc[(q0 + q) / FJ][(q0 + q) % FJ];
      c[0] = s[q].x, c[1] = s[q].y, c[2] = s[q].z, c[3] = s[q].w;
    }
  }
  return true;
}

// ---------------------------------------------------------------- stream-K launch (host)

/* Stream-K tail (Osama et al., "Stream-K", PPoPP 2023; CUTLASS's "data-parallel + stream-K" split) for the
 * warp-specialized configurations, which hold one block per SM (BPS blocks per SM in general): T tiles on S SMs
 * take ceil(T / S) rounds of one tile each, and the last round's R = T mod S tiles leave S - R SMs idle
 * (8192^3 at 128 x 256: 2048 tiles on 132 SMs, 15 rounds and 68 tiles; ~3% of the time). Here the first T - R
 * tiles go to one block each (whole rounds) and S more blocks split the tail's R * KT k tiles into equal runs
 * (under a tile's KT, so a unit touches at most two tiles); the last unit to finish a tile adds the others'
 * partial sums (sk_finish; an f32 slot per unit and tile in a workspace, and an arrival counter per tile) and
 * stores it, so the result is the same whichever unit finishes last. Used when the tail leaves at least a
 * fifth of the SMs idle (R <= 4 S / 5) and every unit gets >= 2 k tiles; CUKERN_MM_SK=0 turns it off, =1 uses
 * it wherever a launch can (also under S tiles: measurements and checks). Otherwise, or when the workspace
 * cannot be had, launch_tiles. */
inline int sk_env() { return ck_knob("CUKERN_MM_SK", 0, 1, -1); }

template <int BM, int BN, int BK, int NT, int SMEM, int BPS>
int launch_tiles_sk(const ck_mm_desc *d, const ck_env *env, void (*kern)(TcArgs, int64_t, int64_t), ck_devcache &raised) {
  const int64_t T = ((d->m + BM - 1) / BM) * ((d->n + BN - 1) / BN) * d->batch, kt = (d->k + BK - 1) / BK;
  const int64_t S = (int64_t)(env->sm_count > 0 ? env->sm_count : 0) * BPS, R = S > 0 ? T % S : 0;
  const int mode = sk_env();
  const bool sk = mode != 0 && R > 0 && R * kt >= 2 * S && T + S <= 0x7fffffff && R * kt <= 0x7fffffff &&
                  S <= 0xffff && (mode == 1 || (T >= S && 5 * R <= 4 * S));
  void *w = nullptr;
  const size_t part = (size_t)S * 2 * BM * BN * sizeof(float), cnt = (size_t)R * sizeof(int);
  if (sk) w = env->ws_alloc(env->owner, part + cnt);
  if (!w) return launch_tiles<BM, BN, NT, SMEM>(d, env, kern, raised);
  int e = ckmm::raise_smem(kern, SMEM, raised, env->device);
  if (e == 0) {
    TcArgs p = tc_args(d);
    p.sk_part = (float *)w, p.sk_cnt = (int *)((char *)w + part);
    p.sk_dp = (int)(T - R), p.sk_iters = (int)(R * kt), p.sk_units = (int)S;
    p.sk_q = p.sk_iters / p.sk_units, p.sk_r = p.sk_iters % p.sk_units, p.sk_uoi = (float)S / (float)(R * kt);
    const cudaStream_t st = (cudaStream_t)env->stream;
    e = (int)cudaMemsetAsync(p.sk_cnt, 0, cnt, st);
    if (e == 0) {
      ck_note(env, kern, NT, SMEM);
      kern<<<(unsigned)(T - R + S), NT, SMEM, st>>>(p, 0, 0);
      e = (int)cudaGetLastError();
    }
  }
  env->ws_free(env->owner, w); // stream order: the next user of this memory runs after the kernel
  return e;
}

} // namespace cktc

#endif
