/*
 * 11_mma_sync.cu — matmul ladder, step 11: tensor cores through mma.sync PTX, ldmatrix, swizzled shared
 * memory and a multi-stage cp.async pipeline (sm_80+); f16/bf16, and TF32 for f32 inputs on request.
 *
 * Idea: WMMA (step 10) hides the fragment layout, so its shared tiles must be padded for load_matrix_sync and
 * its results go out through shared memory. Here the warp issues the instruction itself:
 * mma.sync.aligned.m16n8k16 (f16/bf16 in, f32 accumulate) takes A as 4 and B as 2 32-bit registers per lane
 * in a documented layout, which is exactly what ldmatrix.x4 delivers from shared memory: one ldmatrix feeds
 * a 16x16 A fragment, one ldmatrix.trans two 16x8 B fragments from B's row-major [k][n] tile (the transpose
 * happens in the load). Shared tiles are stored as 16-byte chunks with the chunk index XORed with the row
 * (mm_tile.cuh: SW_XOR), so the 8 rows each ldmatrix phase reads, and the chunks each cp.async phase writes,
 * fall in 8 different bank groups without padding. A STAGES-deep cp.async pipeline (step 9's: one barrier
 * per k tile, STAGES - 1 tiles in flight) feeds the block; each warp holds a WM x WN tile of f32
 * accumulators in registers (64 x 64: 128 per lane) and writes them straight from registers, converted to
 * c_dtype, two columns per store. A configuration with PIPE = 1 double-buffers the fragments in registers
 * (step s + 1's ldmatrix before step s's mma.sync, the barrier just before a tile's last step; mm_pipeline.cuh:
 * k_loop): the f16/bf16 default does, the TF32 one (PIPE 0) does not (the configuration tables say why).
 * Each lane's shared-memory offsets are computed once per block (the swizzle's XOR term depends on the lane
 * alone), so every ldmatrix / shared load is one register plus a constant; a k step's mma.sync walk the n
 * tiles back and forth (serpentine) from one fragment row to the next.
 * TF32 form (f32 inputs, desc->precision == CK_MM_TF32 only): mma.sync m16n8k8 .tf32, and the warp computes
 * the transposed product C^T = B^T A^T. Why: m16n8k8's B operand wants a lane's (b0, b1) = (B[t][n], B[t + 4][n])
 * in one register pair, and row-major B is k-major: no vector load and no ldmatrix (it moves 16-bit elements)
 * delivers two k rows in one pair. Its A operand wants (a0, a1) from fragment rows g and g + 8 at one k, and
 * those rows may stand for any two columns of C: with rows g and g + 8 of tile i as columns 16i + 2g and
 * 16i + 2g + 1, B^T as the A operand is two 8-byte shared loads straight into the quad mma.sync reads
 * ((x0, x1) = B[t][16i + 2g ..], (x2, x3) = B[t + 4][..]; layout SW_TF32B: conflict-free). A is k-contiguous,
 * and as the B operand (A^T) it still comes through ldmatrix.x4 (a 16 x 8 f32 tile is a 16 x 16 b16 tile to
 * it): per k8 step a 64 x 64 warp tile takes 8 LDS.64 and 4 ldmatrix for 32 HMMA. The accumulators then hold
 * C in ACC_NM order (mm_epilogue.cuh: store_acc): pairs of adjacent columns of rows 8j + 2t and 8j + 2t + 1.
 * TF32 mode: inputs TRUNCATED to 10-bit mantissas. The f32 words go to mma.sync as they are and the tensor
 * core reads only their top 19 bits (sign, exponent, 10 mantissa bits): truncation toward zero, per-input
 * relative error < 2^-10. This is not in the CUDA guide (its WMMA section asks for inputs converted with
 * __float_to_tf32, "internal layout implementation defined"); CUTLASS relies on it
 * (FloatRoundStyle::round_half_ulp_truncate adds half a TF32 ulp to the bits and lets the tensor core
 * truncate), and tc_check / spec/tensorcore_spec.lua check every configuration against a bound that allows
 * truncation (2^-9 S). Configuration 1 (TF32_RNA) rounds every fragment element with cvt.rna.tf32.f32 after
 * its shared load instead (round to nearest, ties away).
 * Copies (mm_tile.cuh: StageCopy, TileCopy): each thread's global source pointers and shared offsets are
 * computed once per block; a k tile then costs one 64-bit add and one cp.async per 16-byte chunk. A k tile
 * that lies wholly inside A and B (the block's tile inside C, k0 + BK <= k) is copied without tests; others
 * zero-fill past the edges with cp.async's src-size from the same pointers, so tails cost no branch in the
 * inner loop.
 * Operands that do not allow 16-byte copies (a column stride != 1, a row stride or base not a multiple of 16
 * bytes) are loaded with plain element loads and 16-byte shared stores into the same layout, by one small
 * configuration (64 x 64 x 32, 4 warps): correct for any strides, but slow; the dispatcher's contiguous
 * copies (CK_VF_ROWMAJOR) with k and n multiples of 8 (f16/bf16) or 4 (f32) give the fast path.
 * Changed from step 10: raw mma.sync + ldmatrix instead of WMMA, swizzled instead of padded tiles, fragments
 * double-buffered in registers, results stored from registers; TF32 for f32.
 * Warp specialization (WS configurations, the large-problem defaults when built for sm_90a): the block gets a
 * fourth warpgroup that only copies (ws_produce: cp.async, each stage's completion signalled on an mbarrier by
 * cp.async.mbarrier.arrive) and gives its registers to the two computing warpgroups with setmaxnreg (40 for
 * the producers, 232 for the consumers); the consumers only wait on a stage's "full" barrier, load fragments,
 * multiply and arrive on its "empty" barrier (ws_consume). No block-wide barrier is left in the k loop, the
 * consumers execute no copy or copy address, and warps drift apart instead of reaching their fragment loads
 * together. The copies stay cp.async (this rung's subject; TMA is step 12's).
 * Epilogue: a warp whose tile lies inside C with pair stores and beta == 0 stores its accumulators straight
 * (store_acc_inside); other warps go through store_pair (bounds, beta, any dtype and stride).
 * Launch: block (BM/WM)*(BN/WN) warps (1-D), plus 4 producer warps with WS; grid x = column tiles, y = row
 * tiles (grouped by 8 for L2 reuse), z = batch, several launches past 65535. WS configurations take a
 * stream-K tail when the last round of tiles would leave >= a fifth of the SMs idle (mm_streamk.cuh:
 * launch_tiles_sk, for_runs, sk_finish; CUKERN_MM_SK=0/1 turns it off / forces it): a 1-D grid whose first
 * blocks take whole tiles and whose last one-per-SM units split the tail's k tiles, the last unit of a tile
 * adding the others' partial sums from a workspace in unit order. Configurations below (pick(): the
 * large one once its tiles give every SM a block, else the small one; CUKERN_MM_CFG=<i> forces one). Large
 * problems, built for sm_90a: f16/bf16 128 x 256 x 64, 8 consumer warps of 64 x 64, 3 stages, PIPE 1, 144 KB;
 * TF32 128 x 256 x 64, 2 stages, PIPE 0, inputs truncated, 192 KB; 12 warps, 1 block per SM. Built for
 * another target (no setmaxnreg: the WS kernels spill, ws_ready()) f16/bf16 128 x 256 x 32, 8 warps, 4 stages,
 * PIPE 1, 96 KB and TF32 128 x 128 x 32, 4 warps, 3 stages, PIPE 0, 96 KB, 2 blocks per SM.
 * Measured: bf16 58.5% / TF32 57.5% of cuBLAS at 8192^3 in the ladder on the H100 (91fe5ab, 2026-11-25).
 * Limits: k < 2^31; compute capability >= 8.0 (supports()). Any m, n, k >= 0, any strides, batch >= 1.
 * Operands: A [m,k] at a + b*a_bs + i*a_rs + p*a_cs, B [k,n] at b + b*b_bs + p*b_rs + j*b_cs, C [m,n] at
 * c + b*c_bs + i*c_rs + j*c_cs; dtype f16 or bf16 (c_dtype = dtype or f32), or f32 with TF32 (c_dtype f32);
 * alpha/beta in f32, beta == 0 never reads C.
 * History (measurements by date and commit, the ceilings, what was tried): docs/architecture.md, "The
 * pre-Hopper tensor-core rungs".
 */
#include "mm_tc.cuh"

using namespace cktc;

namespace {

// ---------------------------------------------------------------- configuration

/* TF32 operand modes (f32 inputs): TF32_TRUNC passes the f32 bits as they are and the tensor core reads only
 * the top 19 (sign, exponent, 10 mantissa bits): truncation toward zero, no instruction; TF32_RNA rounds every
 * fragment element with cvt.rna.tf32.f32 (to nearest, ties away from zero) after its shared load. */
enum { TF32_TRUNC, TF32_RNA };

template <int BM_, int BN_, int BK_, int WM_, int WN_, int ST_, int MINB_, int PIPE_ = 1, int RND_ = TF32_TRUNC,
          int WS_ = 0, int GROUP_ = 8>
struct Cfg {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = ST_, MINB = MINB_, GROUP = GROUP_;
  static constexpr int PIPE = PIPE_; // the k loop (mm_pipeline.cuh: k_loop): 1 double-buffers fragments in registers
  static constexpr int RND = RND_;   // TF32 kernel only: TF32_TRUNC or TF32_RNA
  static_assert(RND == TF32_TRUNC || RND == TF32_RNA, "a TF32 operand mode");
  // WS: 0 every warp copies and computes (k_loop); 4 a producer warpgroup copies (ws_produce) and gives its
  // registers to the consumer warps (ws_consume; setmaxnreg, sm_90a). A single producer warp (WS 1) was
  // measured and dropped: a 9th warp puts 3 warps on one scheduler, whose 16K-register file then holds only
  // 168 per thread, and the consumers spilled (11.8% of cuBLAS bf16).
  static constexpr int WS = WS_;
  static_assert(WS == 0 || WS == 4, "no producer or a producer warpgroup");
  static constexpr int WARPS_N = BN / WN, CT = (BM / WM) * WARPS_N * 32, NT = CT + 32 * WS; // CT: computing threads
  static_assert(WS != 4 || CT % 128 == 0, "setmaxnreg works on whole warpgroups");
  static constexpr int BAR_BYTES = WS ? 16 * STAGES + 16 : 0; // each stage's full and empty mbarriers; sk_finish's count
  static constexpr int MT = WM / 16, N8 = WN / 8; // m16 and n8 tiles per warp
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "tiles nest");
};

constexpr int kProducerGroup = 4; // StageCopy's chunk grouping for the producer warpgroup

/* Warp-specialized configurations (WS > 0), first thing in the kernel: thread 0 sets up the stages' mbarriers
 * (after the STAGES A and B tiles), the producer warp(s) copy every k tile of the block's runs (for_runs: one
 * tile, or a stream-K unit's two part tiles; ws_produce) and return false; the consumers take the producers'
 * registers (WS 4) and return true. WS 0: true, nothing done.
 * Nothing the consumers keep is computed before this: values live across setmaxnreg are allocated under the
 * launch's 168 registers, and ptxas spilled the tile's k-tile count there and reloaded it twice per k tile. */
template <class C, typename T, int AM, int BMD, int A_ST, int B_ST>
__device__ __forceinline__ bool ws_role(const TcArgs &p, int64_t y0, int64_t z0, uint32_t sA, uint32_t sB, int tid) {
  if constexpr (C::WS > 0) {
    const uint32_t bars = sB + C::STAGES * B_ST;
    if (tid == 0) ws_init<C::STAGES>(bars, C::NT - C::CT, C::CT);
    __syncthreads();
    if (tid >= C::CT) {
      if constexpr (C::WS == 4) setmaxnreg_dec<kRegsProducer>();
      WsRing ring;
      for_runs<T, C::BM, C::BN, C::BK, C::GROUP, false>(p, y0, z0, [&](const BlockTile<T> &bt, int kt0, int kt1, const SkRun &) {
        const StageCopy<T, C::BM, C::BN, C::BK, AM, BMD, 32 * C::WS, kProducerGroup> copier(p, bt, tid - C::CT);
        ws_produce<C::STAGES>(ring, kt0, kt1, bars,
                              [&](int kt, int st) { copier.issue(p, bt, kt, sA + st * A_ST, sB + st * B_ST); });
      });
      cp_wait<0>();
      return false;
    }
    if constexpr (C::WS == 4) setmaxnreg_inc<ws_regs<C::NT, C::CT, C::MINB>()>();
  }
  return true;
}

/* The computing warps' whole work: for each run of k tiles (for_runs), zeroed accumulators, the k loop, and
 * the warp's results (warp tile at row0, col0 of the block tile, accumulator layout L) stored to C. WS 0:
 * k_loop over the block's one tile (every warp also copies: cp.async when VEC, else plain loads); WS > 0:
 * ws_consume (the producers copy), and a stream-K unit's part tiles go through sk_finish (the last unit of a
 * tile stores it). */
template <class C, int KS, class F, typename T, int AM, int BMD, bool VEC, int A_ST, int B_ST, int L, int FI, int FJ,
          class Load, class Mma>
__device__ __forceinline__ void main_loop(const TcArgs &p, int64_t y0, int64_t z0, uint32_t sA, uint32_t sB, int tid,
                                          float (&acc)[FI][FJ][4], int row0, int col0, Load &&load, Mma &&mma) {
  const int lane = tid & 31;
  if constexpr (C::WS == 0) {
    const BlockTile<T> bt = block_tile<T, C::BM, C::BN, C::BK, C::GROUP>(p, y0, z0);
    const StageCopy<T, C::BM, C::BN, C::BK, AM, BMD, C::NT> copier(p, bt, tid);
    auto issue = [&](int kt, int st) {
      if constexpr (VEC) copier.issue(p, bt, kt, sA + st * A_ST, sB + st * B_ST);
      else load_stage<T, C::BM, C::BN, C::BK, AM, BMD, C::NT, false>(p, bt, kt, sA + st * A_ST, sB + st * B_ST, tid);
    };
    zero_acc(acc);
    k_loop<C::STAGES, C::PIPE, KS, F>(bt.ktiles, issue, load, mma);
    store_acc<T, L>(p, c_base(p, bt.z, bt.m0, bt.n0), acc, row0, col0, lane, bt.mrem, bt.nrem);
  } else {
    static_assert(VEC, "producer warps copy with cp.async");
    const uint32_t bars = sB + C::STAGES * B_ST;
    int *flag = (int *)__cvta_shared_to_generic(bars + 16 * C::STAGES); // sk_finish's arrival count
    WsRing ring;
    for_runs<T, C::BM, C::BN, C::BK, C::GROUP, true>(p, y0, z0, [&](const BlockTile<T> &bt, int kt0, int kt1, const SkRun &run) {
      zero_acc(acc);
      ws_consume<C::STAGES, C::PIPE, KS, F>(ring, kt1 - kt0, bars, load, mma);
      if (run.rel < 0 || sk_finish<C::CT, C::BM, C::BN>(p, acc, run, tid, flag))
        store_acc<T, L>(p, c_base(p, bt.z, bt.m0, bt.n0), acc, row0, col0, lane, bt.mrem, bt.nrem);
    });
  }
}

// ---------------------------------------------------------------- f16 / bf16 kernel

template <class C> struct FragH { // one k16 step of a warp: MT A fragments, N8/2 pairs of B fragments
  uint32_t a[C::MT][4], b[C::N8 / 2][4];
};

template <class C, typename T, bool VEC>
__global__ void __launch_bounds__(C::NT, C::MINB) matmul_mma_sync_kernel(const TcArgs p, int64_t y0, int64_t z0) {
  constexpr int ACH = C::BK / 8, BCH = C::BN / 8; // 16-byte chunks per row of the A [BM][BK] and B [BK][BN] tiles
  constexpr int A_ST = tile_bytes<ACH, SW_XOR>(C::BM), B_ST = tile_bytes<BCH, SW_XOR>(C::BK);
  static_assert(C::BK % 16 == 0, "k16 steps");
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sA = smem_u32(smem), sB = sA + C::STAGES * A_ST;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;
  if (!ws_role<C, T, SW_XOR, SW_XOR, A_ST, B_ST>(p, y0, z0, sA, sB, tid)) return;

  float acc[C::MT][C::N8][4];

  // A: lanes 0-15 give rows 0-15 at k 0-7, lanes 16-31 rows 0-15 at k 8-15 (regs a0..a3 of m16n8k16). B,
  // transposed in the load: lanes 0-15 give k rows 0-15 at n 0-7, lanes 16-31 k rows 0-15 at n 8-15 (regs b0, b1
  // of the first n8 tile, then b0, b1 of the second).
  // Each lane's byte offsets are computed once per block: the swizzle's XOR term depends only on the lane
  // (fragment rows 16 apart and k rows 16 apart keep it), so A's offset per k step and B's per 16-column pair
  // are fixed, and fragment i, step ks and the stage add constants (a load is one register + constant address).
  constexpr int KS = C::BK / 16;
  uint32_t a_off[KS], b_off[C::N8 / 2];
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) a_off[ks] = swz<ACH, SW_XOR>(wm * C::WM + (lane & 15), ks * 2 + (lane >> 4));
#pragma unroll
  for (int j = 0; j < C::N8 / 2; ++j) b_off[j] = swz<BCH, SW_XOR>(lane & 15, (wn * C::WN + j * 16) / 8 + (lane >> 4));
  auto load = [&](FragH<C> &f, int stage, int ks) {
    const uint32_t a_st = sA + stage * A_ST, b_st = sB + stage * B_ST;
#pragma unroll
    for (int i = 0; i < C::MT; ++i)
      ldsm_x4(f.a[i], a_st + a_off[ks] + i * 16 * ACH * 16);
#pragma unroll
    for (int j = 0; j < C::N8 / 2; ++j) ldsm_x4_t(f.b[j], b_st + b_off[j] + ks * 16 * BCH * 16);
  };
  // Serpentine: odd fragment rows walk the n tiles backwards, so a row's last B fragment is the next row's first.
  auto mma = [&](const FragH<C> &f) {
#pragma unroll
    for (int i = 0; i < C::MT; ++i)
#pragma unroll
      for (int jj = 0; jj < C::N8 / 2; ++jj) {
        const int j = i & 1 ? C::N8 / 2 - 1 - jj : jj;
        mma16816<T>(acc[i][2 * j], f.a[i], f.b[j][0], f.b[j][1]);
        mma16816<T>(acc[i][2 * j + 1], f.a[i], f.b[j][2], f.b[j][3]);
      }
  };
  main_loop<C, KS, FragH<C>, T, SW_XOR, SW_XOR, VEC, A_ST, B_ST, ACC_MN>(p, y0, z0, sA, sB, tid, acc, wm * C::WM,
                                                                         wn * C::WN, load, mma);
}

// ---------------------------------------------------------------- TF32 kernel (f32 inputs)

template <class C> struct FragT { // one k8 step of a warp (f32 bits; TF32_RNA: rounded to TF32)
  uint32_t x[C::N8 / 2][4]; // B^T: the mma's A operand, one per 16 columns of C
  uint32_t y[C::MT][4];     // A^T: the mma's B operand, (y0, y1) and (y2, y3) for two 8-row tiles of C
};

template <class C, bool VEC>
__global__ void __launch_bounds__(C::NT, C::MINB) matmul_mma_sync_tf32_kernel(const TcArgs p, int64_t y0, int64_t z0) {
  constexpr int ACH = C::BK / 4, BCH = C::BN / 4; // 16-byte chunks (4 floats) per row of the A and B tiles
  constexpr int A_ST = tile_bytes<ACH, SW_XOR>(C::BM), B_ST = tile_bytes<BCH, SW_TF32B>(C::BK);
  constexpr int NX = C::N8 / 2, NY = 2 * C::MT; // the warp's 16-column and 8-row tiles
  static_assert(C::BK % 8 == 0 && C::WN % 32 == 0, "k8 steps; warp tiles of whole 8-chunk groups of B");
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sA = smem_u32(smem), sB = sA + C::STAGES * A_ST;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;
  if (!ws_role<C, float, SW_XOR, SW_TF32B, A_ST, B_ST>(p, y0, z0, sA, sB, tid)) return;

  float acc[NX][NY][4]; // layout ACC_NM (mm_epilogue.cuh)

  // The warp computes C^T = B^T A^T: in m16n8k8 the 16 x 8 "A" operand x is B^T (16 columns of C by 8 k) and
  // the 8 x 8 "B" operand y is A^T (8 k by 8 rows of C). Row-major B is k-major, so x's lane layout asks for
  // two columns of one k row per register pair, and the fragment rows may stand for any columns: rows g and
  // g + 8 of tile i are C's columns 16i + 2g and 16i + 2g + 1, so (x0, x1) = B[t][16i + 2g .. + 1] and
  // (x2, x3) = B[t + 4][..], two 8-byte loads straight into the pairs mma.sync reads (g = lane / 4,
  // t = lane % 4). A is k-contiguous, and ldmatrix.x4 of a 16 x 8 f32 tile (a 16 x 16 b16 tile to it) gives
  // (y0, y1) = (A[g][t], A[g][t + 4]) of rows 0-7 and of rows 8-15: lanes 0-7 address rows 0-7 at k 0-3,
  // lanes 8-15 rows 0-7 at k 4-7, lanes 16-23 and 24-31 rows 8-15 likewise.
  // Per-lane offsets (as in the f16/bf16 kernel): B's 16-column tile i is chunks c0 + 4i + g / 2 of rows t
  // and t + 4; SW_TF32B's XOR (2t, rows t and t + 4 alike) stays inside the group of 8 chunks of two tiles,
  // so the offsets of tiles 0 and 1 serve every pair of tiles (+ 128 bytes).
  const int g = lane >> 2, t4 = lane & 3;
  constexpr int KS = C::BK / 8;
  uint32_t a_off[KS], b_off[2];
#pragma unroll
  for (int ks = 0; ks < KS; ++ks)
    a_off[ks] = swz<ACH, SW_XOR>(wm * C::WM + (lane & 7) + ((lane >> 4) << 3), ks * 2 + ((lane >> 3) & 1));
#pragma unroll
  for (int h = 0; h < 2; ++h) b_off[h] = swz<BCH, SW_TF32B>(t4, (wn * C::WN) / 4 + 4 * h + (g >> 1)) + (g & 1) * 8;
  auto load = [&](FragT<C> &f, int stage, int ks) {
    const uint32_t a_st = sA + stage * A_ST, b_st = sB + stage * B_ST;
#pragma unroll
    for (int i = 0; i < NX; ++i) {
      const uint32_t o = b_st + b_off[i & 1] + (i >> 1) * 128 + ks * 8 * BCH * 16;
      lds64(f.x[i][0], f.x[i][1], o);
      lds64(f.x[i][2], f.x[i][3], o + 4 * BCH * 16);
    }
#pragma unroll
    for (int q = 0; q < C::MT; ++q) ldsm_x4(f.y[q], a_st + a_off[ks] + q * 16 * ACH * 16);
    if constexpr (C::RND == TF32_RNA) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
#pragma unroll
        for (int i = 0; i < NX; ++i) f.x[i][q] = to_tf32(f.x[i][q]);
#pragma unroll
        for (int i = 0; i < C::MT; ++i) f.y[i][q] = to_tf32(f.y[i][q]);
      }
    }
  };
  auto mma = [&](const FragT<C> &f) {
#pragma unroll
    for (int i = 0; i < NX; ++i)
#pragma unroll
      for (int jj = 0; jj < NY; ++jj) {
        const int j = i & 1 ? NY - 1 - jj : jj; // serpentine, as in the f16/bf16 kernel
        mma1688_tf32(acc[i][j], f.x[i], f.y[j >> 1][2 * (j & 1)], f.y[j >> 1][2 * (j & 1) + 1]);
      }
  };
  main_loop<C, KS, FragT<C>, float, SW_XOR, SW_TF32B, VEC, A_ST, B_ST, ACC_NM>(p, y0, z0, sA, sB, tid, acc, wm * C::WM,
                                                                              wn * C::WN, load, mma);
}

// ---------------------------------------------------------------- configurations and launch

// f16/bf16 (index: block BM x BN x BK, warp WM x WN, stages, min blocks per SM, k loop PIPE). Shared memory per
// block: STAGES * (BM*BK + BK*BN) * 2 bytes. History (H100, lab/results/2026-11-24-mma*.txt, % of
// cuBLAS bf16 at 8192^3 in the same run): before the per-lane offsets H0 was at 52.0-57.4% over six runs (its
// position in a run moves it by ~3 points), H1 53.6-54.5%, H2 47.6-53.0%, H3 51.3-53.3%, H4 ~35%. Dropped, slower:
// 128x256x32 PIPE 0, 256x128x32, 128x128x64, 5 stages (52.9%), 192 x 256 blocks of 96 x 64 warps (36.7-42.1%;
// with producers and a streamed k step, 55%: 5ee45da),
// 16 warps per SM of 32 x 64 or 64 x 32 (36.4-41.8%: smaller warp tiles read more shared memory per flop). This
// session's trials (mmatune runs 3-6, 15 alternating pairs with cuBLAS each): per-lane offsets alone 55.1-55.7%,
// with the serpentine order 55.3 / 56.2 / 56.5% against 53.1 / 56.4 / 52.2% for H0 without either, forced the same
// way in the same runs (now the code for every configuration); the tile loop unrolled over the stages (constant
// stage offsets) 42.8% (13% of ncu samples: no instruction, the instruction cache); running copy pointers 44-48%
// (the interior and edge copies merged into predicated code, and write-after-read stalls on cp.async's address
// registers; with 2026-11-24's WIDE rows, mm_tile.cuh: StageCopy, H0 reads 53-58% and H3 57-61%). The register-only mma.sync rate is 85% of cuBLAS bf16 (lab/mma_peak.cu: 6.00 cycles per HMMA
// per sub-partition, 2731 flop/clk/SM), 81% with ldmatrix loads of a 64 x 64 warp tile. Warp-specialized
// (mmatune runs 8-13, with the store_acc_inside epilogue from run 10 on): H5 60.5-63.5% (58.4% once), H6
// 54.9-61.5%, H7 57.7-63.7%, 128 x 256 x 32 with 6 stages 56.7-61.8%; the epilogue alone moved H3 (no producers)
// from ~52% to 55-61%. H1 (BK 128, 2 stages, producers; runs 15-17, either producer copy) 62.1 / 62.1 / 61.8 / 59.5 / 63.8 / 63.9%,
// level with H5. ptxas -v (sm_90a): the f16/bf16 configurations spill nothing; the TF32 ones with producers keep
// 8 bytes of stack (a producer value).
//                BM   BN  BK  WM  WN ST MINB PIPE RND WS
using H0 = Cfg<128, 256, 32, 64, 64, 4, 1, 1>; // 0: large problems; 8 warps of 64 x 64, 4 stages, 96 KB
using H1 = Cfg<128, 256, 128, 64, 64, 2, 1, 1, TF32_TRUNC, 4>; // 1: BK 128, 2 stages, producers, 192 KB
using H2 = Cfg<128, 128, 32, 64, 64, 4, 2, 0>; // 2: 4 warps of 64 x 64, 64 KB, 2 blocks per SM
using H3 = Cfg<128, 256, 64, 64, 64, 4, 1, 1>; // 3: BK 64 and 4 stages, 192 KB
using H4 = Cfg<64, 64, 32, 32, 32, 3, 4, 1>;   // 4: small problems; 4 warps of 32 x 32, 24 KB
using H5 = Cfg<128, 256, 64, 64, 64, 3, 1, 1, TF32_TRUNC, 4>; // 5: large problems on sm_90a: BK 64, 3 stages, producers
using H6 = Cfg<128, 256, 32, 64, 64, 4, 1, 1, TF32_TRUNC, 4>; // 6: H0 + producers
using H7 = Cfg<128, 256, 64, 64, 64, 4, 1, 1, TF32_TRUNC, 4>; // 7: H3 + producers
constexpr int kNH = 8, kLargeH = 0, kLargeWsH = 5, kSmallH = 4; // large: H5 on sm_90a, else H0; small: H4

// TF32 (f32 inputs). Shared memory: STAGES * (BM*BK + BK*BN) * 4 bytes. History: with B read by 16-byte loads of
// permuted columns (until this session) the best was 128 x 128 x 32, PIPE 1, 2 blocks per SM at 43.1-49% of cuBLAS
// TF32; ncu showed 1.43 register moves (IMAD.MOV) per HMMA, most stalled on the loads: mma.sync wants b0 and b1
// (rows t and t + 4) in a register pair, and no vector load of a k-major tile delivers that. With 4-byte B loads
// straight into those registers (mmatune runs 4-6, pairs; now the code for every configuration): T0's shape 54.3 /
// 50.9 / 50.9%, with PIPE 1 (T2) 47.8 / 47.9 / 47.9%, 128 x 256 x 16 with PIPE 1 (T3) 53.1 / 48.6 / 48.6%,
// 128 x 256 x 32 3 stages 49.7%; cvt.rna rounding (T1) costs ~8 points (35-36%). Earlier drops: 192 x 256 blocks of
// 96 x 64 warps (37.8%), 16 warps per SM of 32 x 64 or 64 x 32 (37%). Register-only mma.sync TF32 runs at 87.6%
// of cuBLAS TF32 on the same GPU. Warp-specialized (runs 8-13): T5 53.7-56.5%, T6 53.7-58.1%, T7 51.9-52.9%;
// 128 x 256 x 32 PIPE 1 50.6-53.0% and 128 x 256 x 16 48.5-51.0% (dropped); T0 50.5-51.9% in the same runs. The
// transposed product (runs 14-17, every configuration): T3 (BK 64, 2 stages) 62.1 / 58.0 / 58.1 / 57.9%, T5 56.4 /
// 56.3 / 56.5 / 56.4%, T6 56.7 / 58.6 / 56.8 / 60.5%, T2 (T3 + PIPE 1) 57.0 / 56.9 / 56.9%, T5 with PIPE 1 58.9%
// once, T0 47-51%, T7 53-54%. Replaced by T2 and T3: T0 with PIPE 1 and 128 x 256 x 16 PIPE 1 (both < 54%).
//                BM   BN  BK  WM  WN ST MINB PIPE RND WS
using T0 = Cfg<128, 128, 32, 64, 64, 3, 2, 0, TF32_TRUNC>; // 0: large problems; BK 32, 3 stages, 96 KB, 2 per SM
using T1 = Cfg<128, 128, 32, 64, 64, 3, 2, 0, TF32_RNA>;   // 1: T0 rounding (cvt.rna) every fragment element
using T2 = Cfg<128, 256, 64, 64, 64, 2, 1, 1, TF32_TRUNC, 4>; // 2: T3 with the register double buffer (PIPE 1)
using T3 = Cfg<128, 256, 64, 64, 64, 2, 1, 0, TF32_TRUNC, 4>; // 3: large problems on sm_90a: BK 64, 2 stages, producers, 192 KB
using T4 = Cfg<64, 64, 32, 32, 32, 3, 4, 1, TF32_TRUNC>;   // 4: small problems, 48 KB
using T5 = Cfg<128, 256, 32, 64, 64, 3, 1, 0, TF32_TRUNC, 4>; // 5: BK 32, 3 stages, producers (until 2026-11-24)
using T6 = Cfg<128, 256, 32, 64, 64, 4, 1, 0, TF32_TRUNC, 4>; // 6: T5 with 4 stages
using T7 = Cfg<128, 128, 32, 64, 64, 3, 2, 0, TF32_TRUNC, 4>; // 7: T0 + producers
constexpr int kNT = 8, kLargeT = 0, kLargeWsT = 3, kSmallT = 4; // defaults: T3 on sm_90a, else T0

template <class C> constexpr int smem_h() { return C::STAGES * (C::BM * C::BK + C::BK * C::BN) * 2 + C::BAR_BYTES; }
template <class C> constexpr int smem_t() { return C::STAGES * (C::BM * C::BK + C::BK * C::BN) * 4 + C::BAR_BYTES; }

// Operands without 16-byte copies (plain element loads): one small configuration, whatever the size.
using G = Cfg<64, 64, 32, 32, 32, 3, 1, 0>;

/* One configuration's launch: with a stream-K tail (mm_streamk.cuh: launch_tiles_sk) when it has producer warps.
 * `raised`: the kernel's own flag (the f16 and bf16 kernels of one configuration share this function). */
template <class C, int SMEM, class K> int launch_cfg(const ck_mm_desc *d, const ck_env *env, K kern, ck_devcache &raised) {
  if constexpr (C::WS > 0) return launch_tiles_sk<C::BM, C::BN, C::BK, C::NT, SMEM, C::MINB>(d, env, kern, raised);
  else return launch_tiles<C::BM, C::BN, C::NT, SMEM>(d, env, kern, raised);
}

template <class C, typename T> int launch_h(const ck_mm_desc *d, const ck_env *env) {
  static ck_devcache raised;
  return launch_cfg<C, smem_h<C>()>(d, env, matmul_mma_sync_kernel<C, T, true>, raised);
}

template <class C> int launch_t(const ck_mm_desc *d, const ck_env *env) {
  static ck_devcache raised;
  return launch_cfg<C, smem_t<C>()>(d, env, matmul_mma_sync_tf32_kernel<C, true>, raised);
}

/* Whether a warp-specialized kernel got its registers: setmaxnreg exists on sm_90a only, and built for any
 * other target the consumers keep the launch's 168 registers and spill their accumulators (kilobytes of local
 * memory, ptxas -v); on sm_90a at most a few producer registers spill (8 bytes of frame; sm_86: 72 bytes and
 * more). Asked once per kernel and device (the binary loaded depends on the device's architecture):
 * 0 unknown, 1 ready, 2 not. */
constexpr size_t kWsLocalMax = 32;
template <class K> bool ws_ready(K kern, int dev) {
  static ck_devcache ready;
  int &ok = ready.v[dev];
  if (!ok) {
    cudaFuncAttributes fa;
    ok = cudaFuncGetAttributes(&fa, (const void *)kern) == cudaSuccess && fa.localSizeBytes <= kWsLocalMax ? 1 : 2;
    if (ok == 2) cudaGetLastError(); // a failed query leaves a (non-sticky) error behind
  }
  return ok == 1;
}

/* The large configuration once bm x bn tiles give every SM a block, else the small one; CUKERN_MM_CFG=<i> forces. */
int pick(const ck_mm_desc *d, const ck_env *env, int n, int64_t bm, int64_t bn, int large, int small) {
  const int forced = forced_cfg(n);
  if (forced >= 0) return forced;
  const int64_t sms = env->sm_count > 0 ? env->sm_count : 132;
  const int64_t tiles = ((d->m + bm - 1) / bm) * ((d->n + bn - 1) / bn) * d->batch;
  return tiles >= sms ? large : small;
}

template <typename T> int launch_half(const ck_mm_desc *d, const ck_env *env) {
  if (!ab_vec(d)) {
    static ck_devcache raised;
    return launch_tiles<G::BM, G::BN, G::NT, smem_h<G>()>(d, env, matmul_mma_sync_kernel<G, T, false>, raised);
  }
  const int large = ws_ready(matmul_mma_sync_kernel<H5, T, true>, env->device) ? kLargeWsH : kLargeH;
  switch (pick(d, env, kNH, H0::BM, H0::BN, large, kSmallH)) {
  case 1: return launch_h<H1, T>(d, env);
  case 2: return launch_h<H2, T>(d, env);
  case 3: return launch_h<H3, T>(d, env);
  case 4: return launch_h<H4, T>(d, env);
  case 5: return launch_h<H5, T>(d, env);
  case 6: return launch_h<H6, T>(d, env);
  case 7: return launch_h<H7, T>(d, env);
  default: return launch_h<H0, T>(d, env);
  }
}

int launch_tf32(const ck_mm_desc *d, const ck_env *env) {
  if (!ab_vec(d)) {
    static ck_devcache raised;
    return launch_tiles<G::BM, G::BN, G::NT, smem_t<G>()>(d, env, matmul_mma_sync_tf32_kernel<G, false>, raised);
  }
  const int large = ws_ready(matmul_mma_sync_tf32_kernel<T3, true>, env->device) ? kLargeWsT : kLargeT;
  switch (pick(d, env, kNT, T0::BM, T0::BN, large, kSmallT)) {
  case 1: return launch_t<T1>(d, env);
  case 2: return launch_t<T2>(d, env);
  case 3: return launch_t<T3>(d, env);
  case 4: return launch_t<T4>(d, env);
  case 5: return launch_t<T5>(d, env);
  case 6: return launch_t<T6>(d, env);
  case 7: return launch_t<T7>(d, env);
  default: return launch_t<T0>(d, env);
  }
}

} // namespace

// ---------------------------------------------------------------- launcher

extern "C" int ck_matmul_mma_sync(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  if (d->dtype == CK_F16) return launch_half<__half>(d, env);
  if (d->dtype == CK_BF16) return launch_half<__nv_bfloat16>(d, env);
  if (d->dtype == CK_F32 && d->precision == CK_MM_TF32) return launch_tf32(d, env);
  return (int)cudaErrorInvalidValue;
}

extern "C" const char *ck_matmul_mma_sync_supports(const void *desc) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  return supports_tc(d, true,
                     d->dtype == CK_F32 ? (const void *)matmul_mma_sync_tf32_kernel<T0, true>
                                        : (const void *)matmul_mma_sync_kernel<H0, __half, true>);
}
