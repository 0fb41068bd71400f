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
 * (mm_tc.cuh: SW_XOR), so the 8 rows each ldmatrix phase reads, and the chunks each cp.async phase writes,
 * fall in 8 different bank groups without padding. A STAGES-deep cp.async pipeline (step 9's: one barrier
 * per k tile, STAGES - 1 tiles in flight) feeds the block; each warp holds a WM x WN tile of f32
 * accumulators in registers (64 x 64: 128 per lane) and writes them straight from registers, converted to
 * c_dtype, two columns per store. A configuration with PIPE = 1 double-buffers the fragments in registers
 * (step s + 1's ldmatrix before step s's mma.sync, the barrier just before a tile's last step; mm_tc.cuh:
 * k_loop): the f16/bf16 default does, the TF32 one (PIPE 0) does not (the configuration tables say why).
 * Each lane's shared-memory offsets are computed once per block (the swizzle's XOR term depends on the lane
 * alone), so every ldmatrix / shared load is one register plus a constant; a k step's mma.sync walk the n
 * tiles back and forth (serpentine) from one fragment row to the next.
 * TF32 form (f32 inputs, desc->precision == CK_MM_TF32 only): mma.sync m16n8k8 .tf32. A still comes through
 * ldmatrix (a 16x8 f32 tile is a 16x16 b16 tile to ldmatrix, and its per-lane layout is the m16n8k8 A
 * fragment); B cannot (ldmatrix.trans moves 16-bit elements), and no vector load of B's k-major tile gives
 * a lane its (b0, b1) = (B[t][n], B[t + 4][n]) register pair: each is a 4-byte shared load straight into its
 * register (layout SW_TF32B: conflict-free). Until 2026-11-24 the rung read 16-byte vectors of permuted
 * columns instead: four times fewer loads, but 1.43 register moves per HMMA into the pairs (ncu), most of them
 * stalled on the loads, and 8-11 points of cuBLAS lower. TF32 mode: inputs TRUNCATED to 10-bit mantissas. The f32
 * words go to mma.sync as they are and the tensor core reads only their top 19 bits (sign, exponent, 10
 * mantissa bits): truncation toward zero, per-input relative error < 2^-10. This is not in the CUDA guide
 * (its WMMA section asks for inputs converted with __float_to_tf32, "internal layout implementation
 * defined"); CUTLASS relies on it (FloatRoundStyle::round_half_ulp_truncate adds half a TF32 ulp to the bits
 * and lets the tensor core truncate), and tc_check / spec/tensorcore_spec.lua check every configuration
 * against a bound that allows truncation (2^-9 S). Configuration 1 (TF32_RNA) rounds every fragment element
 * with cvt.rna.tf32.f32 after its shared load instead (round to nearest, ties away; the rung's behaviour
 * until 2026-11-24): that conversion was most of the ~4.7 SASS instructions per HMMA of the TF32 k loop,
 * against ~1.2 for f16/bf16. cuBLAS TF32 (CUBLAS_COMPUTE_32F_FAST_TF32) does not document its input
 * rounding; in tc_check on the H100 its worst error/tolerance matched the cvt.rna kernel's to three digits
 * on every non-batched shape, so it most likely rounds to nearest.
 * Copies (mm_tc.cuh: StageCopy, TileCopy): each thread's global source pointers and shared offsets are
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
 * Launch: block (BM/WM)*(BN/WN) warps (1-D); grid x = column tiles, y = row tiles (grouped by 8 for L2 reuse),
 * z = batch, several launches past 65535. Configurations below (pick(): the large one once its tiles give
 * every SM a block, else the small one; CUKERN_MM_CFG=<i> forces one). Large problems: f16/bf16 128 x 256 x 32,
 * 8 warps of 64 x 64, 4 stages, fragments double-buffered in registers (PIPE 1), 96 KB, 1 block per SM;
 * TF32 128 x 128 x 32, 4 warps of 64 x 64, 3 stages, PIPE 0, inputs truncated, 96 KB, 2 blocks per SM.
 * Measured (H100 80GB HBM3, 15 alternating pairs with cuBLAS, bench/results/experiments/2026-11-24-mmatune-
 * run*.txt): bf16 8192^3 55-57% of cuBLAS (~450 of ~800 TFLOP/s), TF32 51-54% (~195-224 of ~390-410). The
 * issue's targets are 60% for both: missed by ~4 points (bf16) and ~7 (TF32). Why, from ncu and the ceilings
 * measured beside it (bench/exp/mma_peak.cu, -mma-src-profiles.txt):
 *   - mma.sync is not Hopper's full-rate path: register-only it reaches 85% of cuBLAS bf16 (6 cycles per HMMA
 *     per sub-partition, 2731 of wgmma's 4096 flop/clk/SM), 81% with a 64 x 64 warp tile's ldmatrix loads.
 *   - ptxas gives every HMMA a fixed 5-6-cycle issue stall, the pipe's own rate, so one warp can at best keep
 *     the tensor pipe busy alone; with 8 warps per SM (2 per scheduler; 255 registers each: 128 accumulators,
 *     64 double-buffered fragment registers) every non-HMMA instruction of one warp must be hidden behind
 *     the other's HMMAs: "wait" (fixed latency) is 37-40% of the stall samples, "math pipe throttle" 20-23%.
 *   - what is not HMMA: ~1.6 instructions per HMMA for bf16 (ldmatrix 0.25, cp.async 0.09, their addresses,
 *     the loop), ~1.3 for TF32 (4-byte B loads 0.5); write-after-read stalls on cp.async address registers.
 *   - shared memory: a 64 x 64 warp tile reads 0.25 ldmatrix.x4 per HMMA and the block's cp.async write 48
 *     bytes per HMMA, ~92% of the SM's 128 bytes per clock at the register-only HMMA rate; larger warp tiles
 *     do not fit in 255 registers, smaller ones (more warps) measured slower (36-42%).
 *   Tried and dropped this session: the tile loop unrolled over the stages (instruction cache: 42.8%), running
 *   copy pointers (44-48%). Before the per-thread copy pointers of 2026-11-24, bf16 was at 36%.
 * Limits: k < 2^31; compute capability >= 8.0 (supports()). Any m, n, k >= 0, any strides, batch >= 1.
 * Operands: A [m,k] at a + b*a_bs + i*a_rs + p*a_cs, B [k,n] at b + b*b_bs + p*b_rs + j*b_cs, C [m,n] at
 * c + b*c_bs + i*c_rs + j*c_cs; dtype f16 or bf16 (c_dtype = dtype or f32), or f32 with TF32 (c_dtype f32);
 * alpha/beta in f32, beta == 0 never reads C.
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
          int GROUP_ = 8>
struct Cfg {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = ST_, MINB = MINB_, GROUP = GROUP_;
  static constexpr int PIPE = PIPE_; // the k loop (mm_tc.cuh: k_loop): 1 double-buffers fragments in registers
  static constexpr int RND = RND_;   // TF32 kernel only: TF32_TRUNC or TF32_RNA
  static_assert(RND == TF32_TRUNC || RND == TF32_RNA, "a TF32 operand mode");
  static constexpr int WARPS_N = BN / WN, NT = (BM / WM) * WARPS_N * 32;
  static constexpr int MT = WM / 16, N8 = WN / 8; // m16 and n8 tiles per warp
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "tiles nest");
};

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
  const BlockTile<T> bt = block_tile<T, C::BM, C::BN, C::BK, C::GROUP>(p, y0, z0);

  float acc[C::MT][C::N8][4];
  zero_acc(acc);

  const StageCopy<T, C::BM, C::BN, C::BK, SW_XOR, SW_XOR, C::NT> copier(p, bt, tid);
  auto issue = [&](int kt, int st) {
    if constexpr (VEC) copier.issue(p, bt, kt, sA + st * A_ST, sB + st * B_ST);
    else load_stage<T, C::BM, C::BN, C::BK, SW_XOR, SW_XOR, C::NT, false>(p, bt, kt, sA + st * A_ST, sB + st * B_ST, tid);
  };
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
  k_loop<C::STAGES, C::PIPE, KS, FragH<C>>(bt.ktiles, issue, load, mma);

  store_acc(p, c_base(p, bt.z, bt.m0, bt.n0), acc, wm * C::WM, wn * C::WN, lane, bt.mrem, bt.nrem);
}

// ---------------------------------------------------------------- TF32 kernel (f32 inputs)

template <class C> struct FragT { // one k8 step of a warp (f32 bits; TF32_RNA: rounded to TF32)
  uint32_t a[C::MT][4], b0[C::N8], b1[C::N8];
};

template <class C, bool VEC>
__global__ void __launch_bounds__(C::NT, C::MINB) matmul_mma_sync_tf32_kernel(const TcArgs p, int64_t y0, int64_t z0) {
  constexpr int ACH = C::BK / 4, BCH = C::BN / 4; // 16-byte chunks (4 floats) per row of the A and B tiles
  constexpr int A_ST = tile_bytes<ACH, SW_XOR>(C::BM), B_ST = tile_bytes<BCH, SW_TF32B>(C::BK);
  static_assert(C::BK % 8 == 0 && C::WN % 32 == 0, "k8 steps; warp tiles of whole 8-chunk groups of B");
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sA = smem_u32(smem), sB = sA + C::STAGES * A_ST;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;
  const BlockTile<float> bt = block_tile<float, C::BM, C::BN, C::BK, C::GROUP>(p, y0, z0);

  float acc[C::MT][C::N8][4];
  zero_acc(acc);

  const StageCopy<float, C::BM, C::BN, C::BK, SW_XOR, SW_TF32B, C::NT> copier(p, bt, tid);
  auto issue = [&](int kt, int st) {
    if constexpr (VEC) copier.issue(p, bt, kt, sA + st * A_ST, sB + st * B_ST);
    else load_stage<float, C::BM, C::BN, C::BK, SW_XOR, SW_TF32B, C::NT, false>(p, bt, kt, sA + st * A_ST,
                                                                                 sB + st * B_ST, tid);
  };
  // A (a 16 x 8 f32 tile is a 16 x 16 b16 tile to ldmatrix): regs a0..a3 = (g, t), (g+8, t), (g, t+4),
  // (g+8, t+4). B: b0 = B[k = t][n], b1 = B[t + 4][n], n = column g of the n8 tile (g = lane / 4, t = lane % 4),
  // each from its own 4-byte shared load straight into the register mma.sync reads.
  const int g = lane >> 2, t4 = lane & 3;
  // Per-lane offsets (as in the f16/bf16 kernel). B: lane (g, t) of n8 tile j = 4a + b reads column 8j + g of rows
  // t and t + 4, in chunk c0 + 8a + 2b + g / 4; SW_TF32B's XOR (2t; rows t and t + 4 alike) stays inside the
  // group of 8 chunks, so the offsets of b = 0..3 serve every a (+ 128 bytes per a).
  constexpr int KS = C::BK / 8;
  uint32_t a_off[KS], b_off[4];
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) a_off[ks] = swz<ACH, SW_XOR>(wm * C::WM + (lane & 15), ks * 2 + (lane >> 4));
#pragma unroll
  for (int q = 0; q < 4; ++q) b_off[q] = swz<BCH, SW_TF32B>(t4, (wn * C::WN) / 4 + 2 * q + (g >> 2)) + (g & 3) * 4;
  auto load = [&](FragT<C> &f, int stage, int ks) {
    const uint32_t a_st = sA + stage * A_ST, b_st = sB + stage * B_ST;
#pragma unroll
    for (int i = 0; i < C::MT; ++i) {
      ldsm_x4(f.a[i], a_st + a_off[ks] + i * 16 * ACH * 16);
      if constexpr (C::RND == TF32_RNA)
#pragma unroll
        for (int q = 0; q < 4; ++q) f.a[i][q] = to_tf32(f.a[i][q]);
    }
#pragma unroll
    for (int j = 0; j < C::N8; ++j) {
      const uint32_t o = b_st + b_off[j % 4] + (j / 4) * 128 + ks * 8 * BCH * 16;
      f.b0[j] = lds32(o), f.b1[j] = lds32(o + 4 * BCH * 16);
    }
    if constexpr (C::RND == TF32_RNA)
#pragma unroll
      for (int j = 0; j < C::N8; ++j) f.b0[j] = to_tf32(f.b0[j]), f.b1[j] = to_tf32(f.b1[j]);
  };
  auto mma = [&](const FragT<C> &f) {
#pragma unroll
    for (int i = 0; i < C::MT; ++i)
#pragma unroll
      for (int jj = 0; jj < C::N8; ++jj) {
        const int j = i & 1 ? C::N8 - 1 - jj : jj; // serpentine, as in the f16/bf16 kernel
        mma1688_tf32(acc[i][j], f.a[i], f.b0[j], f.b1[j]);
      }
  };
  k_loop<C::STAGES, C::PIPE, KS, FragT<C>>(bt.ktiles, issue, load, mma);

  store_acc(p, c_base(p, bt.z, bt.m0, bt.n0), acc, wm * C::WM, wn * C::WN, lane, bt.mrem, bt.nrem);
}

// ---------------------------------------------------------------- configurations and launch

// f16/bf16 (index: block BM x BN x BK, warp WM x WN, stages, min blocks per SM, k loop PIPE). Shared memory per
// block: STAGES * (BM*BK + BK*BN) * 2 bytes. History (H100, bench/results/experiments/2026-11-24-mma*.txt, % of
// cuBLAS bf16 at 8192^3 in the same run): before the per-lane offsets H0 was at 52.0-57.4% over six runs (its
// position in a run moves it by ~3 points), H1 53.6-54.5%, H2 47.6-53.0%, H3 51.3-53.3%, H4 ~35%. Dropped, slower:
// 128x256x32 PIPE 0, 256x128x32, 128x128x64, 5 stages (52.9%), 192 x 256 blocks of 96 x 64 warps (36.7-42.1%),
// 16 warps per SM of 32 x 64 or 64 x 32 (36.4-41.8%: smaller warp tiles read more shared memory per flop). This
// session's trials (mmatune runs 3-6, 15 alternating pairs with cuBLAS each): per-lane offsets alone 55.1-55.7%,
// with the serpentine order 55.3 / 56.2 / 56.5% against 53.1 / 56.4 / 52.2% for H0 without either, forced the same
// way in the same runs (now the code for every configuration); the tile loop unrolled over the stages (constant
// stage offsets) 42.8% (13% of ncu samples: no instruction, the instruction cache); running copy pointers 44-48%
// (the interior and edge copies merged into predicated code, and write-after-read stalls on cp.async's address
// registers). The register-only mma.sync rate is 85% of cuBLAS bf16 (bench/exp/mma_peak.cu: 6.00 cycles per HMMA
// per sub-partition, 2731 flop/clk/SM), 81% with ldmatrix loads of a 64 x 64 warp tile. ptxas -v (sm_90a): H0,
// H2, H4, T0, T1, T3, T4 spill nothing; H1, H3 (BK 64) and T2 spill 4-8 bytes.
//                BM   BN  BK  WM  WN ST MINB PIPE
using H0 = Cfg<128, 256, 32, 64, 64, 4, 1, 1>; // 0: large problems; 8 warps of 64 x 64, 4 stages, 96 KB
using H1 = Cfg<128, 256, 64, 64, 64, 3, 1, 1>; // 1: BK 64 (half the barriers), 3 stages, 144 KB
using H2 = Cfg<128, 128, 32, 64, 64, 4, 2, 0>; // 2: 4 warps of 64 x 64, 64 KB, 2 blocks per SM
using H3 = Cfg<128, 256, 64, 64, 64, 4, 1, 1>; // 3: BK 64 and 4 stages, 192 KB
using H4 = Cfg<64, 64, 32, 32, 32, 3, 4, 1>;   // 4: small problems; 4 warps of 32 x 32, 24 KB
constexpr int kNH = 5, kLargeH = 0, kSmallH = 4; // the defaults past / below one H0 tile per SM

// TF32 (f32 inputs). Shared memory: STAGES * (BM*BK + BK*BN) * 4 bytes. History: with B read by 16-byte loads of
// permuted columns (until this session) the best was 128 x 128 x 32, PIPE 1, 2 blocks per SM at 43.1-49% of cuBLAS
// TF32; ncu showed 1.43 register moves (IMAD.MOV) per HMMA, most stalled on the loads: mma.sync wants b0 and b1
// (rows t and t + 4) in a register pair, and no vector load of a k-major tile delivers that. With 4-byte B loads
// straight into those registers (mmatune runs 4-6, pairs; now the code for every configuration): T0's shape 54.3 /
// 50.9 / 50.9%, with PIPE 1 (T2) 47.8 / 47.9 / 47.9%, 128 x 256 x 16 with PIPE 1 (T3) 53.1 / 48.6 / 48.6%,
// 128 x 256 x 32 3 stages 49.7%; cvt.rna rounding (T1) costs ~8 points (35-36%). Earlier drops: 192 x 256 blocks of
// 96 x 64 warps (37.8%), 16 warps per SM of 32 x 64 or 64 x 32 (37%). Register-only mma.sync TF32 runs at 87.6%
// of cuBLAS TF32 on the same GPU.
//                BM   BN  BK  WM  WN ST MINB PIPE RND
using T0 = Cfg<128, 128, 32, 64, 64, 3, 2, 0, TF32_TRUNC>; // 0: large problems; BK 32, 3 stages, 96 KB, 2 per SM
using T1 = Cfg<128, 128, 32, 64, 64, 3, 2, 0, TF32_RNA>;   // 1: T0 rounding (cvt.rna) every fragment element
using T2 = Cfg<128, 128, 32, 64, 64, 3, 2, 1, TF32_TRUNC>; // 2: T0 with the register double buffer (PIPE 1)
using T3 = Cfg<128, 256, 16, 64, 64, 4, 1, 1, TF32_TRUNC>; // 3: H0's bytes: 8 warps, BK 16, 4 stages, 96 KB
using T4 = Cfg<64, 64, 32, 32, 32, 3, 4, 1, TF32_TRUNC>;   // 4: small problems, 48 KB
constexpr int kNT = 5, kLargeT = 0, kSmallT = 4; // T0: measured fastest (above)

template <class C> constexpr int smem_h() { return C::STAGES * (C::BM * C::BK + C::BK * C::BN) * 2; }
template <class C> constexpr int smem_t() { return C::STAGES * (C::BM * C::BK + C::BK * C::BN) * 4; }

// Operands without 16-byte copies (plain element loads): one small configuration, whatever the size.
using G = Cfg<64, 64, 32, 32, 32, 3, 1, 0>;

template <class C, typename T> int launch_h(const ck_mm_desc *d, const ck_env *env) {
  static bool raised;
  return launch_tiles<C::BM, C::BN, C::NT, smem_h<C>()>(d, env, matmul_mma_sync_kernel<C, T, true>, raised);
}

template <class C> int launch_t(const ck_mm_desc *d, const ck_env *env) {
  static bool raised;
  return launch_tiles<C::BM, C::BN, C::NT, smem_t<C>()>(d, env, matmul_mma_sync_tf32_kernel<C, true>, raised);
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
    static bool raised;
    return launch_tiles<G::BM, G::BN, G::NT, smem_h<G>()>(d, env, matmul_mma_sync_kernel<G, T, false>, raised);
  }
  switch (pick(d, env, kNH, H0::BM, H0::BN, kLargeH, kSmallH)) {
  case 1: return launch_h<H1, T>(d, env);
  case 2: return launch_h<H2, T>(d, env);
  case 3: return launch_h<H3, T>(d, env);
  case 4: return launch_h<H4, T>(d, env);
  default: return launch_h<H0, T>(d, env);
  }
}

int launch_tf32(const ck_mm_desc *d, const ck_env *env) {
  if (!ab_vec(d)) {
    static bool raised;
    return launch_tiles<G::BM, G::BN, G::NT, smem_t<G>()>(d, env, matmul_mma_sync_tf32_kernel<G, false>, raised);
  }
  switch (pick(d, env, kNT, T0::BM, T0::BN, kLargeT, kSmallT)) {
  case 1: return launch_t<T1>(d, env);
  case 2: return launch_t<T2>(d, env);
  case 3: return launch_t<T3>(d, env);
  case 4: return launch_t<T4>(d, env);
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
