/*
 * 14_persistent.cu — matmul ladder, step 14 (Hopper, sm_90a): step 13 as a persistent kernel of 2-CTA
 * clusters that share B through TMA multicast, f16/bf16.
 *
 * Idea, two parts. (1) Persistent: in step 13 each block computes one tile and exits; the epilogue and the
 * next block's start-up (barrier init, the first TMA round trip) leave the tensor cores idle at every tile.
 * Here the grid holds as many blocks as can be resident (one per SM), and they walk the output tiles; the
 * producer's stage ring runs on across tiles, so while the consumers store tile i the producer already
 * fills the stages with tile i + 1's first k tiles. (2) Clusters: at ~700 TFLOP/s a 128 x 256 x 64 block
 * pulls 48 KB per k tile out of L2, ~8 TB/s for the whole GPU, near what L2 delivers. Two blocks of a
 * cluster take vertically adjacent tiles (rows m0 and m0 + 128, the same 256 columns), so they need the
 * same B tile: each loads half of it with a multicast TMA that writes both blocks' shared memory and
 * signals both blocks' "full" barriers, and L2 serves B once for the pair (32 KB instead of 48 KB per
 * block and k tile). Because a block's copies now land in its partner's stages too, a stage is refilled
 * only when the consumers of both blocks are done with it: each consumer warpgroup arrives on the "empty"
 * barrier of its own block and of the partner (mapa + a remote arrive), and each empty barrier counts 4.
 * Pairs of tiles (256 x 256 of C) are walked in the grouped order (GROUP pairs per column band, batch
 * outermost), cluster c taking pairs c, c + clusters, ...; when the row tiles are odd, the last pair's
 * second block computes on zeros (TMA's fill) and stores nothing.
 * Changed from step 13: a persistent grid with a tile loop (the stage counter and mbarrier phases run over
 * the block's whole sequence of k tiles), 2-CTA clusters with B multicast, remote empty arrivals, cluster
 * barriers after init and before exit (no block leaves while its partner may still write to it).
 * Not done here: an epilogue through shared memory and TMA stores (the results go out from registers).
 * Launch: 384 threads, clusters of 2 (cudaLaunchKernelEx), grid = 2 * min(tile pairs, resident clusters);
 * block tile 128 x 256 x 64, 4 stages of 48 KB.
 * Measured (H100, bf16, % of cuBLAS in the same run): 8192^3 80.8 / 84.2% (two runs); without clusters
 * (persistent only) 88.9%, against 89.0% for step 13 in that run. Multicast did not pay here: the pair
 * advances in lockstep (each stage waits for both blocks' consumers), and L2 was not the limit (see 13).
 * Limits and operands: as step 12 (mm_hopper.cuh: supports_hopper); fewer than 2^31 tile pairs.
 */
#include "mm_hopper.cuh"

using namespace ckh;

namespace {

constexpr int BM = 128, BN = 256, STAGES = 4, NT = 384, GROUP = 4; // GROUP: tile pairs (256 rows) per band
constexpr int A_BYTES = OpTile<KMAJ, BM>::BYTES, STAGE_BYTES = A_BYTES + OpTile<KMAJ, BN>::BYTES;
constexpr int SMEM = STAGES * STAGE_BYTES + 1024 + 2 * STAGES * 8;

/* Pair `id` of a batch-major grouped order over mp x nt pairs per batch: batch z, pair row pm, column tile tn. */
__device__ __forceinline__ void pair_of(int id, int mp, int nt, int &z, int &pm, int &tn) {
  const int per = mp * nt;
  z = id / per;
  const int l = id % per, band = l / (GROUP * nt), rows = min(GROUP, mp - band * GROUP), in = l % (GROUP * nt);
  pm = band * GROUP + in % rows, tn = in / rows;
}

template <typename T, int LA, int LB>
__global__ void __launch_bounds__(NT, 1)
    matmul_persistent_kernel(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
                             const TcArgs p, int pairs) {
#ifndef CK_HAS_WGMMA
  __trap(); // built without sm_90a (supports() refuses first)
#else
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = (smem_u32(smem) + 1023) & ~1023u; // the same offset in both blocks of the cluster
  const uint32_t full = base + STAGES * STAGE_BYTES, empty = full + 8 * STAGES;
  const int tid = threadIdx.x, wg = tid >> 7, wt = tid & 127;
  const uint32_t rank = cluster_rank(), peer = rank ^ 1;
  const int cluster = blockIdx.x >> 1, clusters = gridDim.x >> 1;
  const int mt = (int)((p.m + BM - 1) / BM), mp = (mt + 1) / 2, nt = (int)((p.n + BN - 1) / BN);
  const int ktiles = (int)((p.k + BK - 1) / BK);

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) mbar_init(full + 8 * s, 1), mbar_init(empty + 8 * s, 4);
    mbar_fence_init();
  }
  cluster_sync(); // both blocks' barriers exist before either block's copies or arrivals reach them

  if (wg == 0) { // producer
    setmaxnreg_dec<40>();
    if (tid == 0) {
      int it = 0; // k tiles issued by this block so far (all tiles)
      for (int id = cluster; id < pairs; id += clusters) {
        int z, pm, tn;
        pair_of(id, mp, nt, z, pm, tn);
        const int za = p.a_bs ? z : 0, zb = p.b_bs ? z : 0, m0 = (2 * pm + (int)rank) * BM;
        for (int t = 0; t < ktiles; ++t, ++it) {
          const int s = it % STAGES;
          mbar_wait(empty + 8 * s, ((it / STAGES) & 1) ^ 1); // both blocks' consumers released it
          const uint32_t sa = base + s * STAGE_BYTES, bar = full + 8 * s;
          mbar_expect_tx(bar, STAGE_BYTES); // own A, and both halves of B (one from the partner)
          OpTile<LA, BM>::load(sa, &ma, bar, m0, t * BK, za);
          OpTile<LB, BN>::load_half_mc(sa + A_BYTES, &mb, bar, tn * BN, t * BK, zb, (int)rank);
        }
      }
    }
  } else { // consumers: warpgroup c owns rows 64c .. 64c + 63 of every tile
    setmaxnreg_inc<232>();
    const int c = wg - 1;
    int it = 0;
    auto release = [&](int i) { // this warpgroup is done with the stage of k tile i, here and in the partner
      if (wt == 0) {
        const uint32_t bar = empty + 8 * (i % STAGES);
        mbar_arrive(bar);
        mbar_arrive_cluster(bar, peer);
      }
    };
    for (int id = cluster; id < pairs; id += clusters) {
      int z, pm, tn;
      pair_of(id, mp, nt, z, pm, tn);
      float d[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
      for (int t = 0; t < ktiles; ++t, ++it) {
        const int s = it % STAGES;
        mbar_wait(full + 8 * s, (it / STAGES) & 1);
        const uint32_t sa = base + s * STAGE_BYTES, sb = sa + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks)
          Wgmma<BN, T>::template mma<LA, LB>(d, OpTile<LA, BM>::desc(sa, c * 64, ks), OpTile<LB, BN>::desc(sb, 0, ks), 1);
        wgmma_commit();
        wgmma_wait<1>(); // written out, not through mma_stage: with the helper nvcc lays this loop out differently
                         // (twice the wgmma in the PTX), and that version has not been measured
        if (t > 0) release(it - 1);
      }
      wgmma_wait<0>();
      fence_acc(d);
      release(it - 1); // the tile's last stage
      const int64_t m0 = (int64_t)(2 * pm + (int)rank) * BM, n0 = (int64_t)tn * BN;
      if (m0 < p.m) {
        const int mrem = (int)(p.m - m0 < BM ? p.m - m0 : BM), nrem = (int)(p.n - n0 < BN ? p.n - n0 : BN);
        store_wg<BN>(p, c_base(p, z, m0, n0), d, c * 64, wt, mrem, nrem);
      }
    }
  }
  cluster_sync(); // the partner may still multicast into this block or arrive on its barriers until here
#endif
}

struct Rung {
  template <typename T, int LA, int LB> static int launch(const ck_mm_desc *d, const ck_env *env, const Maps &mp) {
    static bool raised;
    static int max_clusters; // resident 2-CTA clusters of this kernel (asked once)
    auto kern = matmul_persistent_kernel<T, LA, LB>;
    if (int e = raise_smem(kern, SMEM, raised)) return e;
    const int64_t mt = (d->m + BM - 1) / BM, nt = (d->n + BN - 1) / BN, pairs = (mt + 1) / 2 * nt * d->batch;
    if (pairs > 0x7fffffffLL) return (int)cudaErrorInvalidConfiguration; // supports() refuses these first
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 2, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(NT), cfg.dynamicSmemBytes = SMEM, cfg.stream = (cudaStream_t)env->stream;
    cfg.attrs = attr, cfg.numAttrs = 1;
    if (max_clusters <= 0) {
      cfg.gridDim = dim3(2 * (env->sm_count > 0 ? env->sm_count / 2 : 66));
      int n = 0;
      const cudaError_t e = cudaOccupancyMaxActiveClusters(&n, kern, &cfg);
      if (e != cudaSuccess) return (int)e;
      if (n <= 0) return (int)cudaErrorInvalidConfiguration;
      max_clusters = n;
    }
    cfg.gridDim = dim3((unsigned)(2 * (pairs < max_clusters ? pairs : max_clusters)));
    ck_note(env, kern, NT, SMEM);
    const cudaError_t e = cudaLaunchKernelEx(&cfg, kern, mp.a, mp.b, tc_args(d), (int)pairs);
    return e != cudaSuccess ? (int)e : (int)cudaGetLastError();
  }
};

} // namespace

extern "C" int ck_matmul_persistent(const void *desc, const ck_env *env) {
  return launch_rung<Rung>(desc, env, BM, BN / 2); // a K-major B box: half the tile (each block of a pair loads one)
}

extern "C" const char *ck_matmul_persistent_supports(const void *desc) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (((d->m + 2 * BM - 1) / (2 * BM)) * ((d->n + BN - 1) / BN) * d->batch > 0x7fffffffLL) return "needs fewer than 2^31 tile pairs";
  return supports_hopper(d, (const void *)matmul_persistent_kernel<__half, KMAJ, MNMAJ>);
}
