/*
 * 14_persistent.cu — matmul ladder, step 14 (Hopper, sm_90a): step 13 as a persistent kernel whose epilogue
 * goes out through shared memory and TMA stores, optionally in 2-CTA clusters that share B through TMA
 * multicast, f16/bf16.
 *
 * Idea, three parts. (1) Persistent: in step 13 each block computes one tile and exits; the epilogue and the
 * next block's start-up (barrier init, the first TMA round trip) leave the tensor cores idle at every tile.
 * Here the grid holds as many blocks as can be resident (one per SM), and they walk the output tiles; the
 * producer's stage ring runs on across tiles, so while the consumers store tile i the producer already
 * fills the stages with tile i + 1's first k tiles. (2) TMA-store epilogue: step 13's epilogue costs each
 * consumer thread 128 calls of store_pair (a 64-bit address, bounds, alpha/beta and a dtype switch per pair
 * of values: some 2,500 instructions, estimated from the source) while the tensor cores wait, and leaves
 * half-written 32-byte sectors for L2 to merge. Here, when C takes a tensor map (the
 * input dtype, unit column stride, 16-byte aligned rows, beta == 0), each consumer warpgroup converts its
 * 64 x 256 accumulators to the output dtype and writes them into a 128-byte-swizzled staging area in shared
 * memory (conflict-free 4-byte stores: 128 per thread), and one thread hands the copy engine the boxes (TMA
 * store; the engine clips rows and columns outside C, so tails need no branch). The staging area holds half
 * a warpgroup's tile (64 x 128, two 64 x 64 boxes, 16 KB per warpgroup), so each tile goes out in two
 * halves; the second half's store is waited for only at the next tile's epilogue. Other C layouts keep
 * step 13's direct stores. (3) Clusters (CL = 2): two blocks of a cluster take vertically adjacent tiles
 * (rows m0 and m0 + 128, the same 256 columns), so they need the same B tile: each loads half of it with a
 * multicast TMA that writes both blocks' shared memory and signals both blocks' "full" barriers, and L2
 * serves B once for the pair. A stage is then refilled only when the consumers of both blocks are done with
 * it: each consumer warpgroup arrives on the "empty" barrier of its own block and of the partner (mapa + a
 * remote arrive), and each empty barrier counts 4. Units (one tile, or a pair of tiles for CL = 2) are
 * walked in the grouped order (GROUP units per column band, batch outermost), block (cluster) c taking
 * units c, c + grid, ...; with CL = 2 and odd row tiles, the last pair's second block computes on zeros
 * (TMA's fill) and stores nothing.
 * Changed from step 13: a persistent grid with a tile loop (the stage counter and mbarrier phases run over
 * the block's whole sequence of k tiles), the TMA-store epilogue, clusters as an option.
 * Launch: 384 threads (cudaLaunchKernelEx, cluster dims CL x 1 x 1), grid = CL * min(units, resident
 * clusters); block tile 128 x 256 x 64, 4 stages of 48 KB + 32 KB of staging (225 KB of shared memory);
 * 168 registers at entry (setmaxnreg: 40 producer, 232 consumers), one block (12 warps) per SM.
 * Configurations (CUKERN_MM_CFG): 0 = 2-CTA clusters + TMA-store epilogue (the default), 1 = no clusters +
 * TMA stores, 2 = clusters + direct stores, 3 = neither.
 * Measured: configuration 0 101.9% of cuBLAS bf16 at 8192^3 on the H100 (alternating pairs, 2026-11-24).
 * Limits and operands: as step 12 (mm_hopper.cuh: supports_hopper); fewer than 2^31 units.
 * The kernel and its launch are in mm_persistent.cuh, shared with step 18 (the same kernel on FP8 inputs).
 * History (measurements per configuration): docs/architecture.md, "The Hopper rungs".
 */
#include "mm_persistent.cuh"

using namespace ckp;

namespace {

/* The rung's configurations (CUKERN_MM_CFG=<i> forces one): clusters and epilogue. The default is 0, the
 * fastest measured (see the header); the others show what each part brings. */
struct Cfg {
  int cl;
  bool tma_epi;
};
constexpr Cfg kCfgs[] = {{2, true}, {1, true}, {2, false}, {1, false}};
constexpr int kNCfg = sizeof kCfgs / sizeof kCfgs[0];

struct Rung {
  template <typename T, int LA, int LB> static int launch(const ck_mm_desc *d, const ck_env *env, const Maps &mp) {
    const int f = ckmm::forced_cfg(kNCfg);
    const Cfg c = kCfgs[f < 0 ? 0 : f];
    CUtensorMap mc;
    memset(&mc, 0, sizeof mc);
    const bool tma = c.tma_epi && make_c_map(&mc, d);
    using Op = In<T>; // C through TMA stores only in the input dtype (make_c_map: an f16/bf16 result is the input's)
    if (c.cl == 2) return tma ? launch_cfg<Op, LA, LB, 2, true>(d, env, mp, mc) : launch_cfg<Op, LA, LB, 2, false>(d, env, mp, mc);
    return tma ? launch_cfg<Op, LA, LB, 1, true>(d, env, mp, mc) : launch_cfg<Op, LA, LB, 1, false>(d, env, mp, mc);
  }
};

/* A K-major B box: the whole tile, or half of it when the configuration multicasts (each block of a pair
 * loads one half). */
int box_b() {
  const int f = ckmm::forced_cfg(kNCfg);
  return kCfgs[f < 0 ? 0 : f].cl == 2 ? BN / 2 : BN;
}

} // namespace

extern "C" int ck_matmul_persistent(const void *desc, const ck_env *env) { return launch_rung<Rung>(desc, env, BM, box_b()); }

extern "C" const char *ck_matmul_persistent_supports(const void *desc) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (((d->m + BM - 1) / BM) * ((d->n + BN - 1) / BN) * d->batch > 0x7fffffffLL) return "needs fewer than 2^31 tiles";
  return supports_hopper(d, (const void *)matmul_persistent_kernel<In<__half>, KMAJ, MNMAJ, 1, true>);
}
