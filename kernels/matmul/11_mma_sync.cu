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
 * k_loop); on an H100 that was slower (see the configuration table), so the defaults use PIPE = 0.
 * TF32 form (f32 inputs, desc->precision == CK_MM_TF32 only): mma.sync m16n8k8 .tf32. A still comes through
 * ldmatrix (a 16x8 f32 tile is a 16x16 b16 tile to ldmatrix, and its per-lane layout is the m16n8k8 A
 * fragment); B cannot (ldmatrix.trans moves 16-bit elements), so each lane reads its B words with 16-byte
 * shared loads: the warp's n columns are permuted (mma column g of n8 tile j is warp column g * N8 + j), so
 * that a lane's N8 B values of a k row are consecutive in shared memory (two 16-byte loads per row for a
 * 64-wide warp tile, instead of eight 4-byte ones), conflict-free under SW_TF32N; the epilogue writes each
 * result to its real column (store_acc_nperm). TF32 mode: inputs TRUNCATED to 10-bit mantissas. The f32
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
 * TF32 128 x 128 x 32, 4 warps of 64 x 64, 3 stages, PIPE 1, inputs truncated, 96 KB, 2 blocks per SM.
 * Measured (H100, bench/exp/mma.sh, 2026-11-24, cuBLAS in the same run), with the copies above and the old
 * defaults: 8192^3 bf16 433 TFLOP/s = 54% of cuBLAS (804), f16 423 = 55% (768), TF32 145 = 36% (408); the
 * configurations that are now the defaults: bf16 448 = 56%, f16 453 = 59%, TF32 (with cvt.rna) 157 = 39%;
 * 4096^3: bf16 420 = 55%, f16 420 = 56%, TF32 150 = 39%. Second run (truncating TF32, cuBLAS 798 / 753 /
 * 403): bf16 457 = 57.3%, f16 452 = 60.0%, TF32 T0 187 = 46%, T2 196 = 49% (the default since); 4096^3 bf16
 * 54%, f16 55%, TF32 45%. ncu at 8192^3 bf16: 12.5% occupancy (8 warps per SM), issue slots 32% busy,
 * 6.1 cycles per issued instruction, clock 1.82 GHz; HMMA issued at 23.8% of the pipe's peak sustained rate
 * (sm__inst_executed_pipe_tensor_op_hmma), one per 8.4 cycles per sub-partition: ~1950 flop per clock per
 * SM, about half of what wgmma reaches (steps 12-14). Before the
 * per-thread copy pointers, bf16 was 287 (36%): issuing a k tile's 8 cp.async took each thread ~200
 * instructions (64-bit address arithmetic, per-chunk edge tests). The f16/bf16 k loop is now ~1.17 SASS
 * instructions per HMMA (PIPE 0; bench/exp/mma.sh's census), so little is left to cut there: mma.sync is not
 * Hopper's full-rate tensor-core path (that is wgmma, steps 12-14); bench/exp/mma.sh's ncu step says how busy
 * the tensor pipe is. Warp tiles past 64 x 64 do not fit (64 x 128 needs 256 f32 accumulators per lane), nor
 * do 2 blocks per SM of 128 x 256 (8 warps x 2 x 32 lanes at ~255 registers > 64K).
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

/* OPT bits: LANE_OFF keeps each lane's ldmatrix / shared-load byte offsets in registers (computed once per block; a
 * load is then one register + constant address); SERP walks the warp's n8 tiles back and forth from one m16 row
 * of fragments to the next (the last B fragment of a row is the first of the next). B32 (TF32 kernel): each B
 * fragment register comes from its own 4-byte shared load (layout SW_TF32B, unpermuted columns) instead of two
 * 16-byte loads per row and register moves into the (b0, b1) pairs that mma.sync needs. RUNPTR: the copies'
 * source pointers advance tile by tile (StageCopy::issue_seq) instead of being offset by kt * tile bytes. */
enum { LANE_OFF = 1, SERP = 2, B32 = 4, RUNPTR = 8 };

template <int BM_, int BN_, int BK_, int WM_, int WN_, int ST_, int MINB_, int PIPE_ = 1, int RND_ = TF32_TRUNC,
          int GROUP_ = 8, int OPT_ = 0>
struct Cfg {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = ST_, MINB = MINB_, GROUP = GROUP_;
  static constexpr int OPT = OPT_;
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

  StageCopy<T, C::BM, C::BN, C::BK, SW_XOR, SW_XOR, C::NT> copier(p, bt, tid);
  if constexpr (C::OPT & RUNPTR) copier.seq_start();
  auto issue = [&](int kt, int st) {
    if constexpr (VEC && (C::OPT & RUNPTR)) copier.issue_seq(p, bt, kt, sA + st * A_ST, sB + st * B_ST);
    else if constexpr (VEC) copier.issue(p, bt, kt, sA + st * A_ST, sB + st * B_ST);
    else load_stage<T, C::BM, C::BN, C::BK, SW_XOR, SW_XOR, C::NT, false>(p, bt, kt, sA + st * A_ST, sB + st * B_ST, tid);
  };
  // A: lanes 0-15 give rows 0-15 at k 0-7, lanes 16-31 rows 0-15 at k 8-15 (regs a0..a3 of m16n8k16). B,
  // transposed in the load: lanes 0-15 give k rows 0-15 at n 0-7, lanes 16-31 k rows 0-15 at n 8-15 (regs b0, b1
  // of the first n8 tile, then b0, b1 of the second).
  // LANE_OFF: the swizzle's XOR term depends only on the lane (fragment rows 16 apart, k rows 16 apart keep it),
  // so A's offsets per k step and B's per 16-column pair are fixed; fragment i and step ks add constants.
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
      ldsm_x4(f.a[i], C::OPT & LANE_OFF ? a_st + a_off[ks] + i * 16 * ACH * 16
                                        : a_st + swz<ACH, SW_XOR>(wm * C::WM + i * 16 + (lane & 15), ks * 2 + (lane >> 4)));
#pragma unroll
    for (int j = 0; j < C::N8 / 2; ++j)
      ldsm_x4_t(f.b[j], C::OPT & LANE_OFF ? b_st + b_off[j] + ks * 16 * BCH * 16
                                          : b_st + swz<BCH, SW_XOR>(ks * 16 + (lane & 15), (wn * C::WN + j * 16) / 8 + (lane >> 4)));
  };
  auto mma = [&](const FragH<C> &f) {
#pragma unroll
    for (int i = 0; i < C::MT; ++i)
#pragma unroll
      for (int jj = 0; jj < C::N8 / 2; ++jj) {
        const int j = C::OPT & SERP && (i & 1) ? C::N8 / 2 - 1 - jj : jj;
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

/* The TF32 B fragments come from 16-byte shared loads: mma column g of the warp's n8 tile j is the warp
 * tile's column g * N8 + j (a permutation of n, undone by the epilogue), so lane (g, t) needs row t (b0) and
 * row t + 4 (b1) at the N8 consecutive columns g * N8 .. g * N8 + N8 - 1: N8 / 4 chunks per row, laid out by
 * SW_TF32N. Results: acc[i][j][0..1] are row g, columns 2t * N8 + j and (2t + 1) * N8 + j; [2..3] row g + 8. */
template <int MT, int N8>
__device__ __forceinline__ void store_acc_nperm(const TcArgs &p, void *cb, const float (&acc)[MT][N8][4], int row0,
                                                int col0, int lane, int mrem, int nrem) {
  const int g = lane >> 2, t4 = lane & 3;
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < N8; j += 2)
#pragma unroll
      for (int h = 0; h < 2; ++h) { // h: mma column 2t + h
        const int r = row0 + i * 16 + g, c = col0 + (2 * t4 + h) * N8 + j;
        store_pair(p, cb, r, c, mrem, nrem, acc[i][j][h], acc[i][j + 1][h]);
        store_pair(p, cb, r + 8, c, mrem, nrem, acc[i][j][2 + h], acc[i][j + 1][2 + h]);
      }
}

template <class C, bool VEC>
__global__ void __launch_bounds__(C::NT, C::MINB) matmul_mma_sync_tf32_kernel(const TcArgs p, int64_t y0, int64_t z0) {
  constexpr int ACH = C::BK / 4, BCH = C::BN / 4; // 16-byte chunks (4 floats) per row of the A and B tiles
  constexpr int BMODE = C::OPT & B32 ? SW_TF32B : SW_TF32N;
  constexpr int A_ST = tile_bytes<ACH, SW_XOR>(C::BM), B_ST = tile_bytes<BCH, BMODE>(C::BK);
  constexpr int P = C::N8 / 4; // B chunks per lane and k row
  static_assert(C::BK % 8 == 0 && C::N8 % 4 == 0, "k8 steps; warp tiles >= 32 columns");
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sA = smem_u32(smem), sB = sA + C::STAGES * A_ST;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;
  const BlockTile<float> bt = block_tile<float, C::BM, C::BN, C::BK, C::GROUP>(p, y0, z0);

  float acc[C::MT][C::N8][4];
  zero_acc(acc);

  StageCopy<float, C::BM, C::BN, C::BK, SW_XOR, BMODE, C::NT> copier(p, bt, tid);
  if constexpr (C::OPT & RUNPTR) copier.seq_start();
  auto issue = [&](int kt, int st) {
    if constexpr (VEC && (C::OPT & RUNPTR)) copier.issue_seq(p, bt, kt, sA + st * A_ST, sB + st * B_ST);
    else if constexpr (VEC) copier.issue(p, bt, kt, sA + st * A_ST, sB + st * B_ST);
    else load_stage<float, C::BM, C::BN, C::BK, SW_XOR, BMODE, C::NT, false>(p, bt, kt, sA + st * A_ST, sB + st * B_ST,
                                                                              tid);
  };
  // A (a 16 x 8 f32 tile is a 16 x 16 b16 tile to ldmatrix): regs a0..a3 = (g, t), (g+8, t), (g, t+4),
  // (g+8, t+4). B: b0 = B[k = t][n], b1 = B[t + 4][n] at the permuted columns above (g = lane / 4, t = lane % 4).
  const int g = lane >> 2, t4 = lane & 3;
  // LANE_OFF (see the f16/bf16 kernel): SW_TF32N's XOR term depends on the row's low 2 bits only (t4 here).
  constexpr int KS = C::BK / 8;
  // B32: lane (g, t) of n8 tile j = 4a + b reads column 8j + g of rows t and t + 4: chunk c0 + 8a + 2b + g / 4,
  // whose SW_TF32B XOR (2t) stays inside the 8-chunk group, so the offsets of b = 0..3 serve every a.
  constexpr int NB = C::OPT & B32 ? (C::N8 < 4 ? C::N8 : 4) : P;
  uint32_t a_off[KS], b_off[NB];
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) a_off[ks] = swz<ACH, SW_XOR>(wm * C::WM + (lane & 15), ks * 2 + (lane >> 4));
#pragma unroll
  for (int q = 0; q < NB; ++q)
    b_off[q] = C::OPT & B32 ? swz<BCH, SW_TF32B>(t4, (wn * C::WN) / 4 + 2 * q + (g >> 2)) + (g & 3) * 4
                            : swz<BCH, SW_TF32N>(t4, (wn * C::WN + g * C::N8) / 4 + q);
  auto load = [&](FragT<C> &f, int stage, int ks) {
    const uint32_t a_st = sA + stage * A_ST, b_st = sB + stage * B_ST;
#pragma unroll
    for (int i = 0; i < C::MT; ++i) {
      ldsm_x4(f.a[i], C::OPT & LANE_OFF ? a_st + a_off[ks] + i * 16 * ACH * 16
                                        : a_st + swz<ACH, SW_XOR>(wm * C::WM + i * 16 + (lane & 15), ks * 2 + (lane >> 4)));
      if constexpr (C::RND == TF32_RNA)
#pragma unroll
        for (int q = 0; q < 4; ++q) f.a[i][q] = to_tf32(f.a[i][q]);
    }
    if constexpr (C::OPT & B32) {
      static_assert(C::WN % 32 == 0, "B32: warp tiles of whole 8-chunk groups");
#pragma unroll
      for (int j = 0; j < C::N8; ++j) {
        const uint32_t o = b_st + b_off[j % 4] + (j / 4) * 128 + ks * 8 * BCH * 16;
        f.b0[j] = lds32(o), f.b1[j] = lds32(o + 4 * BCH * 16);
      }
    } else
#pragma unroll
    for (int q = 0; q < P; ++q) {
      const int ch = (wn * C::WN + g * C::N8) / 4 + q, k = ks * 8 + t4;
      const uint32_t o0 = C::OPT & LANE_OFF ? b_st + b_off[q] + ks * 8 * BCH * 16 : b_st + swz<BCH, SW_TF32N>(k, ch);
      const uint32_t o1 = C::OPT & LANE_OFF ? o0 + 4 * BCH * 16 : b_st + swz<BCH, SW_TF32N>(k + 4, ch);
      const uint4 v0 = lds128(o0), v1 = lds128(o1);
      f.b0[4 * q] = v0.x, f.b0[4 * q + 1] = v0.y, f.b0[4 * q + 2] = v0.z, f.b0[4 * q + 3] = v0.w;
      f.b1[4 * q] = v1.x, f.b1[4 * q + 1] = v1.y, f.b1[4 * q + 2] = v1.z, f.b1[4 * q + 3] = v1.w;
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
        const int j = C::OPT & SERP && (i & 1) ? C::N8 - 1 - jj : jj;
        mma1688_tf32(acc[i][j], f.a[i], f.b0[j], f.b1[j]);
      }
  };
  k_loop<C::STAGES, C::PIPE, KS, FragT<C>>(bt.ktiles, issue, load, mma);

  if constexpr (C::OPT & B32) store_acc(p, c_base(p, bt.z, bt.m0, bt.n0), acc, wm * C::WM, wn * C::WN, lane, bt.mrem, bt.nrem);
  else store_acc_nperm(p, c_base(p, bt.z, bt.m0, bt.n0), acc, wm * C::WM, wn * C::WN, lane, bt.mrem, bt.nrem);
}

// ---------------------------------------------------------------- configurations and launch

// f16/bf16 (index: block BM x BN x BK, warp WM x WN, stages, min blocks per SM, k loop PIPE). Shared memory per
// block: STAGES * (BM*BK + BK*BN) * 2 bytes. Measured on an H100 (bench/exp/mma.sh, 2026-11-24, bf16 / f16 TFLOP/s
// at 8192^3, cuBLAS 804 / 768 in the same run): H0 448 / 453 (56% / 59%), H1 448 / 444, H2 433 / 422 (the
// default until then), H4 298 / 279; 4096^3: H0 420 / 420, H2 400 / 398. Dropped, slower everywhere:
// 128x256x32 PIPE 0 359 / 351, 256x128x32 PIPE 1 436 / 435, 128x128x64 3 stages 415 / 411, 128x128x32 PIPE 1
// 436 / 424. Second run (cuBLAS 798 / 753): H0 458 / 450 (57.4% / 59.8%), H1 438 / 440, H2 423 / 423, H3 431 /
// 429, H4 298 / 274. No register spills (ptxas -v, sm_90a). Third run (bench/exp/mmatune.sh: 15 alternating
// pairs with cuBLAS, which ran at ~797 there): H0 455 (56.9%), H1 418, H2 391, H3 400, H4 294. Tried and dropped,
// slower: H0 with 5 stages 421 (52.9%); 192 x 256 blocks of 96 x 64 warps (less shared traffic per flop, PIPE 0
// because PIPE 1 spilled) 292 (36.7%) with BK 32 and 336 (42.1%) with BK 64. The register-only mma.sync rate on
// the same GPU is 85% of cuBLAS bf16 (bench/exp/mma_peak.cu: 6.00 cycles per HMMA per sub-partition, 2731
// flop/clk/SM) and 81% with ldmatrix loads of a 64 x 64 warp tile: the rung loses the rest in its pipeline.
// More warps per scheduler do not buy it back (fourth run, pairs, cuBLAS ~803; H0 424.7 = 52.9% there): 16 warps
// of 32 x 64 in 128 x 256 blocks 291 (36.4%), 2 blocks of 8 warps of 32 x 64 336 (41.8%), 16 warps of 64 x 32 303
// (37.8%): smaller warp tiles read more shared memory per flop. ncu of H0 (bf16 8192^3): tensor pipe 23.8% of its
// peak sustained rate (the register-only loop's 6 cycles per HMMA reads ~33% there), shared pipe 71% busy, stalls
// per issued instruction: wait (fixed latency) 2.39, math pipe throttle 1.70, barrier 0.04, long scoreboard 0.07.
//                BM   BN  BK  WM  WN ST MINB PIPE
using H0 = Cfg<128, 256, 32, 64, 64, 4, 1, 1>; // 0: large problems; 8 warps of 64 x 64, 4 stages, 96 KB
using H1 = Cfg<128, 256, 64, 64, 64, 3, 1, 1>; // 1: BK 64 (half the barriers), 3 stages, 144 KB
using H2 = Cfg<128, 128, 32, 64, 64, 4, 2, 0>; // 2: 4 warps of 64 x 64, 64 KB, 2 blocks per SM
using H3 = Cfg<128, 256, 64, 64, 64, 4, 1, 1>; // 3: BK 64 and 4 stages, 192 KB
using H4 = Cfg<64, 64, 32, 32, 32, 3, 4, 1>;   // 4: small problems; 4 warps of 32 x 32, 24 KB
using H5 = Cfg<128, 256, 32, 64, 64, 4, 1, 1, TF32_TRUNC, 8, LANE_OFF>;        // 5: H0 + lane offsets
using H6 = Cfg<128, 256, 32, 64, 64, 4, 1, 1, TF32_TRUNC, 8, LANE_OFF | SERP>; // 6: H5 + serpentine order
using H7 = Cfg<128, 256, 32, 64, 64, 4, 1, 1, TF32_TRUNC, 8, LANE_OFF | SERP | RUNPTR>; // 7: H6 + running pointers
using H8 = Cfg<128, 256, 64, 64, 64, 3, 1, 1, TF32_TRUNC, 8, LANE_OFF | SERP | RUNPTR>; // 8: H7 with BK 64, 3 stages
constexpr int kNH = 9, kLargeH = 0, kSmallH = 4; // the defaults past / below one H0 tile per SM

// TF32 (f32 inputs). Shared memory: STAGES * (BM*BK + BK*BN) * 4 bytes. Measured with cvt.rna on every fragment
// element (H100, same run, TFLOP/s at 8192^3 / 4096^3, cuBLAS TF32 408 / 387): T1 157 / 150 (39%), 128x128x16
// 4 stages 147 / 140, 128x256x32 3 stages 145 / 137, T4 87 / 84; dropped: 128x256x16 4 stages 132 / 125. The
// truncating ones (TF32_TRUNC: no conversion instruction), second run (cuBLAS 403): T0 183 (45%), T1 (rna) 158,
// T2 196 (49%: the default since), T3 177, T4 134. Third run (mmatune.sh, pairs, cuBLAS ~405): T0 172 (44.2%),
// T2 171 (43.1%), T3 161. Tried and dropped: T3 with PIPE 1 173 (42.9%), 192 x 256 blocks of 96 x 64 warps 155
// (37.8%, 3 or 4 stages); fourth run (cuBLAS ~407): 2 blocks of 8 warps of 32 x 64 150 (37.2%), 16 warps of
// 32 x 64 152 (37.0%), 16 warps of 64 x 32 154 (37.4%), against T2 177 (43.2%). Register-only mma.sync TF32 runs
// at 87.6% of cuBLAS TF32 on the same GPU.
//                BM   BN  BK  WM  WN ST MINB PIPE RND
using T0 = Cfg<128, 128, 32, 64, 64, 3, 2, 0, TF32_TRUNC>; // 0: large problems; BK 32, 3 stages, 96 KB, 2 per SM
using T1 = Cfg<128, 128, 32, 64, 64, 3, 2, 0, TF32_RNA>;   // 1: T0 rounding (cvt.rna) every fragment element
using T2 = Cfg<128, 128, 32, 64, 64, 3, 2, 1, TF32_TRUNC>; // 2: T0 with the register double buffer (PIPE 1)
using T3 = Cfg<128, 256, 32, 64, 64, 3, 1, 0, TF32_TRUNC>; // 3: 8 warps, BK 32, 3 stages, 144 KB
using T4 = Cfg<64, 64, 32, 32, 32, 3, 4, 1, TF32_TRUNC>;   // 4: small problems, 48 KB
using T5 = Cfg<128, 128, 32, 64, 64, 3, 2, 1, TF32_TRUNC, 8, LANE_OFF>;        // 5: T2 + lane offsets
using T6 = Cfg<128, 128, 32, 64, 64, 3, 2, 1, TF32_TRUNC, 8, LANE_OFF | B32>;  // 6: T5 with 4-byte B loads
using T7 = Cfg<128, 256, 16, 64, 64, 4, 1, 1, TF32_TRUNC, 8, LANE_OFF | B32>;  // 7: H0's bytes: BK 16, 8 warps, 96 KB
using T8 = Cfg<128, 256, 16, 64, 64, 4, 1, 1, TF32_TRUNC, 8, LANE_OFF | B32 | SERP | RUNPTR>; // 8: T7 + SERP, RUNPTR
using T9 = Cfg<128, 128, 32, 64, 64, 3, 2, 0, TF32_TRUNC, 8, LANE_OFF | B32>;  // 9: T6 with PIPE 0
using T10 = Cfg<128, 128, 32, 64, 64, 3, 2, 0, TF32_TRUNC, 8, LANE_OFF | B32 | SERP | RUNPTR>; // 10: T9 + SERP, RUNPTR
using T11 = Cfg<128, 256, 32, 64, 64, 3, 1, 1, TF32_TRUNC, 8, LANE_OFF | B32 | SERP | RUNPTR>; // 11: BK 32, 144 KB
using T12 = Cfg<128, 128, 32, 64, 64, 3, 2, 0, TF32_TRUNC, 8, LANE_OFF | B32 | SERP>; // 12: T9 + SERP
constexpr int kNT = 13, kLargeT = 2, kSmallT = 4; // T2: measured fastest (header)

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
  case 5: return launch_h<H5, T>(d, env);
  case 6: return launch_h<H6, T>(d, env);
  case 7: return launch_h<H7, T>(d, env);
  case 8: return launch_h<H8, T>(d, env);
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
  case 5: return launch_t<T5>(d, env);
  case 6: return launch_t<T6>(d, env);
  case 7: return launch_t<T7>(d, env);
  case 8: return launch_t<T8>(d, env);
  case 9: return launch_t<T9>(d, env);
  case 10: return launch_t<T10>(d, env);
  case 11: return launch_t<T11>(d, env);
  case 12: return launch_t<T12>(d, env);
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
