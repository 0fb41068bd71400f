/*
 * 09_double_buffer.cu — matmul ladder, step 9: warp tiling fed by a multi-stage cp.async pipeline (sm_80+).
 *
 * Idea: step 8 hides global-memory latency by staging the next k tile in registers, which costs registers
 * (held across the whole compute) and instructions (every element passes through a register and a store).
 * Ampere's cp.async copies global memory straight into shared memory without a register and without
 * blocking the thread; copies are grouped (commit_group) and waited for by age (wait_group N). With
 * STAGES shared buffers, the copies of tile t + STAGES - 1 are issued before the block computes tile t, so
 * STAGES - 1 tiles are in flight at any time; one barrier per k tile separates the compute on a buffer from
 * the copies that refill it. (LOOP = 1 moves the barrier before the last k step of a tile, with fragments
 * double-buffered in registers: the tile's stage is refilled at once, STAGES tiles in flight.)
 * A stays transposed in shared memory (As[k][m], rows padded by 4 floats) so that the compute core is
 * step 8's: A moves as 4-byte copies (a warp covers 4 rows x 8 consecutive k: 32-byte global segments; with
 * the pad the 32 shared stores hit 32 banks), B as 16-byte copies when B is 16-byte aligned (4-byte
 * otherwise). Edge tiles use the zero-filling form of cp.async (src-size < cp-size), so out-of-range
 * elements become 0 without a branch per element; interior tiles use the plain form. An edge tile reads
 * nothing its operands do not own: B's whole quads move as 16 bytes, partial ones float by float, and an
 * out-of-range float is a 4-byte zero-fill from the operand's first element (initcheck-clean).
 * Blocks run in groups of 8 tile rows (GROUP): consecutive blocks share B panels while they are in L2,
 * worth +2-4% over row-by-row order at 2048-8192 on an H200.
 * Before sm_80 the copies fall back to ordinary loads and stores (same barriers, so still correct).
 * The tile shape, STAGES, GROUP, LOOP and ISSUE are template parameters; the launcher keeps a table of
 * configurations, picks one by problem size (pick_cfg), and CUKERN_MM_CFG=<index> forces one.
 * ISSUE = 1 (in no table entry): copy sources are running pointers, and an interior tile's copies step
 * between A rows / B rows by 32-bit strides (fewer address instructions per k tile); measured on an H100 it
 * made no difference (within 0.5%), so no configuration uses it. lab/sgemm.sh sweeps the template (tile shapes, thread
 * tiles 8x8 / 8x16 / 16x8, BK, STAGES, LOOP, ISSUE, GROUP) against cuBLAS; it includes this file with
 * CK_MM09_KERNEL_ONLY defined (kernel, Cfg and launch<C> only: no pick_cfg, no extern "C" launcher).
 * Changed from step 8: cp.async multi-stage pipeline instead of register staging; grouped block order.
 * Launch: block NT = (BM/WM)*(BN/WN)*32 threads (1-D); grid x = column tiles, y = row tiles, z = batch; the
 * launcher issues several launches when y or z would pass 65535. Dynamic shared memory
 * STAGES*BK*(BM+4+BN)*4 bytes (60.8 KB for the default 64 x 256 x 16, 3 stages: opted in past 48 KB; two
 * blocks per SM).
 * Where the gap to cuBLAS was (H100, ncu at 4096^3, same run): both execute the same 6.9e10 FFMA
 * thread-instructions in about the same number of warp instructions (2.39e9 vs 2.43e9), at the same clock
 * (1.59 GHz), but cuBLAS (sm80_xmma_gemm_f32f32, 256 x 128 x 8 tiles, 3 stages) kept the issue slots 88%
 * busy against our 79% (no eligible warp 9% vs 19% of cycles). Not the warp count: the FFMA order. Two of an
 * FFMA's sources in one register bank cost an extra operand cycle, and the order of the outer product decides
 * which operand the reuse cache holds; the order is now a template choice (ORD, outer()) and the default's
 * zig-zag rows measured 96.7 / 98.7% of cuBLAS at 4096 / 8192 in the sweep (configuration table below).
 * Limits: k < 2^31 (supports()); otherwise any m, n, k >= 0.
 * Operands (CK_VF_ROWMAJOR): A [m,k] at a + b*a_bs + i*a_rs + p, B [k,n] at b + b*b_bs + p*b_rs + j,
 * C [m,n] at c + b*c_bs + i*c_rs + j; f32 only.
 */
#include "mm_common.cuh"

using namespace ckmm;

namespace {

// ---------------------------------------------------------------- cp.async (sm_80+; plain copies before)

__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

/* 4 bytes; interior tiles. */
__device__ __forceinline__ void cp4(float *dst, const float *src) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_addr(dst)), "l"(src));
#else
  *dst = *src;
#endif
}

/* 4 bytes or a zero when !valid (src-size 0 reads nothing; src must still be a valid address, and
 * compute-sanitizer's initcheck counts the copy as a cp-size read there: callers pass the operand's first
 * element, which every launch owns and which is initialized). */
__device__ __forceinline__ void cp4z(float *dst, const float *src, bool valid) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(valid ? 4 : 0));
#else
  *dst = valid ? *src : 0.f;
#endif
}

/* 16 bytes, both addresses 16-byte aligned. */
__device__ __forceinline__ void cp16(float *dst, const float *src) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src));
#else
  *reinterpret_cast<float4 *>(dst) = *reinterpret_cast<const float4 *>(src);
#endif
}

// ---------------------------------------------------------------- configuration

template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int ST_, int MINB_, int GROUP_ = 1,
          int LOOP_ = 0, int ISSUE_ = 0, int ORD_ = 0>
struct Cfg {
  static constexpr int ORD = ORD_; // FFMA order of a k step: 0 rows (ra[i] reused), 1 rows zig-zag, 2 columns
  static constexpr int LOOP = LOOP_; // 1: barrier before the last k step, STAGES tiles in flight (see kernel)
  static constexpr int ISSUE = ISSUE_; // 1: interior tiles' copies from running pointers (see issue())
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, TM = TM_, TN = TN_;
  static constexpr int STAGES = ST_, MINB = MINB_;
  static constexpr int GROUP = GROUP_; // > 1: blocks walk GROUP rows of tiles at a time (L2 reuse of B panels)
  static constexpr int WARPS_N = BN / WN, NT = (BM / WM) * WARPS_N * 32;
  static constexpr int TWM = WM / TM, TWN = WN / TN; // lanes of a warp along M and N
  static constexpr int AP = BM + 4;                  // padded row of the transposed A tile
  static constexpr int LA = BM * BK / NT;            // 4-byte copies of A per thread and tile
  static constexpr int LB4 = BK * BN / 4 / NT;       // 16-byte copies of B per thread and tile
  static constexpr int A_STAGE = BK * AP, B_STAGE = BK * BN;
  static constexpr int SMEM = STAGES * (A_STAGE + B_STAGE) * (int)sizeof(float);
  static_assert(TWM * TWN == 32, "a warp is 32 lanes");
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % TM == 0 && WN % TN == 0, "tiles nest");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 8 == 0 && BM % 32 == 0, "quads; A copy map of 8 k");
  static_assert(LA * NT == BM * BK && LB4 * NT * 4 == BK * BN, "whole copies per thread");
  static_assert(STAGES >= 2, "a pipeline needs two buffers");
};

// ---------------------------------------------------------------- kernel

/* One k step's outer product, acc[i][j] += ra[i] * rb[j], in the order C::ORD gives (the order decides which
 * operands the FFMAs can take from the reuse cache, and so how many register-bank conflicts are left). */
template <class C>
__device__ __forceinline__ void outer(float (&acc)[C::TM][C::TN], const float (&ra)[C::TM], const float (&rb)[C::TN]) {
  if constexpr (C::ORD == 2) {
#pragma unroll
    for (int j = 0; j < C::TN; ++j)
#pragma unroll
      for (int i = 0; i < C::TM; ++i) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
  } else {
#pragma unroll
    for (int i = 0; i < C::TM; ++i)
#pragma unroll
      for (int jj = 0; jj < C::TN; ++jj) {
        const int j = (C::ORD == 1 && (i & 1)) ? C::TN - 1 - jj : jj;
        acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
      }
  }
}

template <class C, bool VEC>
__global__ void __launch_bounds__(C::NT, C::MINB) matmul_double_buffer_kernel(const MmArgsV p, int64_t y0, int64_t z0) {
  extern __shared__ float4 smem4[];
  float *const As = reinterpret_cast<float *>(smem4); // [STAGES][BK][AP], transposed: As[k][m]
  float *const Bs = As + C::STAGES * C::A_STAGE;      // [STAGES][BK][BN]
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t z = z0 + blockIdx.z;
  unsigned tile_m, tile_n;
  block_tile<C::GROUP>(tile_m, tile_n);
  const int64_t m0 = (y0 + tile_m) * C::BM, n0 = (int64_t)tile_n * C::BN;
  const int mrem = (int)(p.m - m0 < C::BM ? p.m - m0 : C::BM);
  const int nrem = (int)(p.n - n0 < C::BN ? p.n - n0 : C::BN);
  const bool full_mn = mrem == C::BM && nrem == C::BN;
  const float *const Ab = p.a + z * p.a_bs + m0 * p.a_rs, *const Bb = p.b + z * p.b_bs + n0;
  // A copy map: copy l of this thread is element (row, k) with k = k8 + 8*kh; a warp's 32 copies are 4 rows x 8
  // consecutive k. Rows step by NT/8 between copies, so row(l) = arow + (l % RPL) * NT/8 and kh = l / RPL.
  constexpr int RSTEP = C::NT / 8, RPL = C::BM / RSTEP; // rows per k-half
  static_assert(C::BM % RSTEP == 0 && C::LA == RPL * (C::BK / 8), "A copy map covers the tile");
  const int arow = tid / 8, ak8 = tid % 8;
  const float *const a_src = Ab + arow * p.a_rs + ak8;
  const int a_dst = ak8 * C::AP + arow;
  // B copy map: 16-byte copy l is row e / (BN/4), float4 e % (BN/4) with e = tid + l*NT
  constexpr int BROW_STEP = C::NT / (C::BN / 4);
  static_assert(C::NT % (C::BN / 4) == 0, "B copy map");
  const int brow = tid / (C::BN / 4), bn4 = tid % (C::BN / 4);
  const float *const b_src = Bb + brow * p.b_rs + bn4 * 4;
  const int b_dst = brow * C::BN + bn4 * 4;

  const int ktiles = (int)((p.k + C::BK - 1) / C::BK); // k < 2^31 (supports())

  // ISSUE = 1: copy sources come from running pointers (tile kt's first A and B elements, advanced by BK
  // columns of A and BK rows of B per issued tile; issue() is called for k tiles 0, 1, 2, ... in order), and an
  // interior tile (all of m, n and k inside, row strides below 2^31 elements) steps from one A row / B row to
  // the next by a 32-bit stride (one IMAD.WIDE each) instead of offsets recomputed from kt and the krem test.
  const bool small_rs = p.a_rs >= 0 && p.b_rs >= 0 && (int64_t)C::BM * p.a_rs < 0x7fffffff &&
                        (int64_t)C::BK * p.b_rs < 0x7fffffff;
  const int kfull = full_mn && small_rs ? (int)(p.k / C::BK) : 0; // interior k tiles (ISSUE = 1)
  const int a_rstep = (int)(RSTEP * p.a_rs), b_rstep = (int)(BROW_STEP * p.b_rs); // used when small_rs
  const float *a_nx = a_src, *b_nx = b_src; // tile kt's copy sources (ISSUE = 1)

  // issue the copies of k tile kt into stage st (no commit)
  auto issue = [&](int kt, int st) {
    if (C::ISSUE == 1 && kt < kfull) {
      float *as = As + st * C::A_STAGE + a_dst, *bs = Bs + st * C::B_STAGE + b_dst;
      const float *pa = a_nx, *pb = b_nx;
#pragma unroll
      for (int r = 0; r < RPL; ++r, pa += a_rstep)
#pragma unroll
        for (int h = 0; h < C::BK / 8; ++h) cp4(as + h * 8 * C::AP + r * RSTEP, pa + h * 8);
#pragma unroll
      for (int l = 0; l < C::LB4; ++l, pb += b_rstep) {
        if (VEC) {
          cp16(bs + l * BROW_STEP * C::BN, pb);
        } else {
#pragma unroll
          for (int c = 0; c < 4; ++c) cp4(bs + l * BROW_STEP * C::BN + c, pb + c);
        }
      }
      a_nx += C::BK, b_nx += C::BK * p.b_rs;
      return;
    }
    const int64_t k0 = (int64_t)kt * C::BK;
    const float *asrc = C::ISSUE == 1 ? a_nx : a_src + k0, *bsrc = C::ISSUE == 1 ? b_nx : b_src + k0 * p.b_rs;
    if (C::ISSUE == 1) a_nx += C::BK, b_nx += C::BK * p.b_rs;
    const int krem = (int)(p.k - k0 < C::BK ? p.k - k0 : C::BK);
    float *as = As + st * C::A_STAGE + a_dst, *bs = Bs + st * C::B_STAGE + b_dst;
    if (full_mn && krem == C::BK) {
#pragma unroll
      for (int l = 0; l < C::LA; ++l)
        cp4(as + (l / RPL) * 8 * C::AP + (l % RPL) * RSTEP, asrc + (int64_t)((l % RPL) * RSTEP) * p.a_rs + (l / RPL) * 8);
      if (VEC) {
#pragma unroll
        for (int l = 0; l < C::LB4; ++l) cp16(bs + l * BROW_STEP * C::BN, bsrc + (int64_t)(l * BROW_STEP) * p.b_rs);
      } else {
#pragma unroll
        for (int l = 0; l < C::LB4; ++l)
#pragma unroll
          for (int c = 0; c < 4; ++c) cp4(bs + l * BROW_STEP * C::BN + c, bsrc + (int64_t)(l * BROW_STEP) * p.b_rs + c);
      }
    } else {
#pragma unroll
      for (int l = 0; l < C::LA; ++l) {
        const int r = arow + (l % RPL) * RSTEP, kk = ak8 + (l / RPL) * 8;
        const bool ok = r < mrem && kk < krem;
        cp4z(as + (l / RPL) * 8 * C::AP + (l % RPL) * RSTEP,
             ok ? asrc + (int64_t)((l % RPL) * RSTEP) * p.a_rs + (l / RPL) * 8 : p.a, ok);
      }
#pragma unroll
      for (int l = 0; l < C::LB4; ++l) {
        const int r = brow + l * BROW_STEP;
        const int v = nrem - bn4 * 4, valid = r >= krem || v <= 0 ? 0 : v < 4 ? v : 4;
        const float *src = bsrc + (int64_t)(l * BROW_STEP) * p.b_rs;
        // A whole quad is one 16-byte copy. A partial or empty one goes float by float, each missing float a
        // 4-byte zero-fill whose (unread) source is B's first element: a 16-byte zero-fill from a dummy source
        // (B's first element, before) was counted by initcheck as a 16-byte read there, past the end of B's
        // rows when they are shorter than 4 floats (broadcast, stride 0) or end the allocation: 281 errors.
        if (VEC && valid == 4) {
          cp16(bs + l * BROW_STEP * C::BN, src);
        } else {
#pragma unroll
          for (int c = 0; c < 4; ++c) cp4z(bs + l * BROW_STEP * C::BN + c, c < valid ? src + c : p.b, c < valid);
        }
      }
    }
  };

  // this lane's results: quads at rows wm*WM + tm*4 + i*TWM*4, columns wn*WN + tn*4 + j*TWN*4
  const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;
  const int tm = lane / C::TWN, tn = lane % C::TWN;
  const int a_rd = wm * C::WM + tm * 4, b_rd = wn * C::WN + tn * 4;
  float acc[C::TM][C::TN];
#pragma unroll
  for (int i = 0; i < C::TM; ++i)
#pragma unroll
    for (int j = 0; j < C::TN; ++j) acc[i][j] = 0.f;

  if constexpr (C::LOOP == 0) {
#pragma unroll
    for (int s = 0; s < C::STAGES - 1; ++s) {
      if (s < ktiles) issue(s, s);
      cp_commit(); // empty groups keep the wait_group arithmetic uniform
    }
    int st = 0, st_next = C::STAGES - 1; // stage computed now; stage refilled now
    for (int t = 0; t < ktiles; ++t) {
      cp_wait<C::STAGES - 2>(); // this thread's copies of tile t have landed ...
      __syncthreads();          // ... everyone's have, and everyone finished computing tile t - 1
      if (t + C::STAGES - 1 < ktiles) issue(t + C::STAGES - 1, st_next);
      cp_commit();
      const float *as = As + st * C::A_STAGE + a_rd, *bs = Bs + st * C::B_STAGE + b_rd;
#pragma unroll
      for (int kk = 0; kk < C::BK; ++kk) {
        float ra[C::TM], rb[C::TN];
#pragma unroll
        for (int i = 0; i < C::TM / 4; ++i)
          *reinterpret_cast<float4 *>(&ra[4 * i]) = *reinterpret_cast<const float4 *>(as + kk * C::AP + i * C::TWM * 4);
#pragma unroll
        for (int j = 0; j < C::TN / 4; ++j)
          *reinterpret_cast<float4 *>(&rb[4 * j]) = *reinterpret_cast<const float4 *>(bs + kk * C::BN + j * C::TWN * 4);
        outer<C>(acc, ra, rb);
      }
      st = st + 1 == C::STAGES ? 0 : st + 1;
      st_next = st_next + 1 == C::STAGES ? 0 : st_next + 1;
    }
  } else {
    // Fragments are double-buffered in registers (step kk + 1 loads while step kk multiplies), and the
    // barrier sits before the last step of each tile: by then every thread holds that step's fragments, so
    // after the barrier no one reads the tile's stage any more and it is refilled at once with tile
    // t + STAGES (all STAGES stages stay in flight), and the first fragments of tile t + 1 load while the
    // last step's FMAs run. cp.async group g holds tile g (empty groups past the end).
    static_assert(C::BK % 2 == 0, "fragment buffers alternate");
    float ra[2][C::TM], rb[2][C::TN];
    auto frag = [&](int buf, int stage, int kk) {
      const float *as = As + stage * C::A_STAGE + a_rd + kk * C::AP, *bs = Bs + stage * C::B_STAGE + b_rd + kk * C::BN;
#pragma unroll
      for (int i = 0; i < C::TM / 4; ++i)
        *reinterpret_cast<float4 *>(&ra[buf][4 * i]) = *reinterpret_cast<const float4 *>(as + i * C::TWM * 4);
#pragma unroll
      for (int j = 0; j < C::TN / 4; ++j)
        *reinterpret_cast<float4 *>(&rb[buf][4 * j]) = *reinterpret_cast<const float4 *>(bs + j * C::TWN * 4);
    };
#pragma unroll
    for (int s = 0; s < C::STAGES; ++s) {
      if (s < ktiles) issue(s, s);
      cp_commit();
    }
    cp_wait<C::STAGES - 1>(); // tile 0
    __syncthreads();
    frag(0, 0, 0);
    int st = 0; // stage of tile t
    for (int t = 0; t < ktiles; ++t) {
      const int st1 = st + 1 == C::STAGES ? 0 : st + 1; // stage of tile t + 1
#pragma unroll
      for (int kk = 0; kk < C::BK; ++kk) {
        if (kk < C::BK - 1) {
          frag((kk + 1) & 1, st, kk + 1);
        } else {
          cp_wait<C::STAGES - 2>(); // this thread's copies of tile t + 1 have landed ...
          __syncthreads();          // ... everyone's have, and no one reads stage st any more
          if (t + C::STAGES < ktiles) issue(t + C::STAGES, st);
          cp_commit();
          if (t + 1 < ktiles) frag(0, st1, 0);
        }
        outer<C>(acc, ra[kk & 1], rb[kk & 1]);
      }
      st = st1;
    }
  }
  cp_wait<0>(); // no copy may still target shared memory when the block exits

  float *Cb = p.c + z * p.c_bs + m0 * p.c_rs + n0;
  store_quads<C::TM, C::TN, C::TWM * 4, C::TWN * 4>(Cb, acc, a_rd, b_rd, mrem, nrem, p);
}

// ---------------------------------------------------------------- configurations and launch

// The configurations CUKERN_MM_CFG can force (index: block BMxBNxBK, warp WMxWN, thread TMxTN, stages, min
// blocks per SM, tile-row group, loop). Measured on an H200 (TFLOP/s, cuBLAS SGEMM 33.4 / 49.5 / 51.2 / 51.2 at
// 1024 / 2048 / 4096 / 8192): C0 -, 45.5, 46.9-47.8, 47.2-48.0; C1 31.7, 44.9, 46.1, 46.3; C2 29.6, 38.7, 39.9, 41.2;
// C3 (C0 in row-by-row order) 27.9*, 44.8, 45.9, 46.6; C4 -, 45.0, 46.2, 46.9; C5 -, 42.7, 43.5, 43.9;
// C6 -, 43.2, 44.4, 45.0  (* at 1024 the old small-problem choice).
// H100 80GB HBM3, 50 configurations in one run (lab/sgemm.sh; each timing followed by one of cuBLAS,
// % = cuBLAS time / ours): the k tile of 32 instead of 16 (C0 now; C7 is the former C0) went from 90.5 / 91.7%
// to 93.2 / 95.7% of cuBLAS at 4096 / 8192 (46.8 / 47.5 TFLOP/s); no other configuration did better at both.
// The rest of the gap was the FFMA order (ORD, see outer()): ncu showed the same FFMA and instruction counts as
// cuBLAS at the same clock but issue slots 79% busy against 88%, and a register-bank census of the k loop
// (lab/sass_stats.py: two non-reused sources in one of the two banks) counted 256 such FFMAs of 1024 in
// C7's loop. Same sweep, second run (2026-11-24, % at 4096 / 8192): C0 with rows (ORD 0) 92.6 / 95.9, zig-zag
// rows 91.0 / 93.4, columns (ORD 2: rb[j] reused down a column) 96.3 / 98.8; C7 with rows 90.6 / 91.7, zig-zag
// 95.5 / 96.6 (184 bank-conflicted FFMAs), columns 95.2 / 95.8; C8's shape (64 x 256 x 16, running-pointer
// copies) with rows 92.1 / 94.3, zig-zag 96.7 / 98.7, columns 95.8 / 98.0. In the ladder (cuBLAS re-timed
// beside each rung) the 128 x 128 x 32 shape with columns (now C8) gave 93.9 / 97.1%: its 2.812 ms at 4096 is
// slower than the 64 x 256 zig-zag's 2.756 in the sweep, where the cuBLAS beside it ran at its usual 2.666. So
// C0 is the 64 x 256 x 16 shape with zig-zag rows since (the kernel file keeps both).
//                BM   BN  BK  WM  WN TM  TN ST MINB GROUP LOOP ISSUE ORD
using C0 = Cfg<64, 256, 16, 32, 64, 8, 8, 3, 2, 8, 0, 1, 1>; // 0: large problems: 64 x 256 tiles, running-pointer copies, zig-zag
using C1 = Cfg<64, 128, 16, 32, 64, 8, 8, 3, 4, 8, 1>;   // 1: medium: 4-warp blocks, 4 per SM
using C2 = Cfg<64, 64, 16, 32, 32, 8, 4, 3, 4, 8, 1>;    // 2: small problems
using C3 = Cfg<128, 128, 16, 64, 32, 8, 8, 3, 2, 1, 0>;  // 3: C0 with row-by-row block order
using C4 = Cfg<128, 128, 16, 64, 32, 8, 8, 3, 2, 1, 1>;  // 4: C3 with the early-barrier loop
using C5 = Cfg<128, 256, 8, 64, 64, 8, 16, 3, 1, 8, 0>;  // 5: 8 x 16 results per thread, one block per SM
using C6 = Cfg<128, 128, 8, 64, 32, 8, 8, 4, 2, 8, 0>;   // 6: BK 8, 4 stages
using C7 = Cfg<128, 128, 16, 64, 32, 8, 8, 3, 2, 8, 0>;  // 7: C0 with BK 16, rows (the default until 2026-11-24)
using C8 = Cfg<128, 128, 32, 64, 32, 8, 8, 3, 2, 8, 0, 0, 2>; // 8: 128 x 128 x 32, columns (C0 on 2026-11-24)
constexpr int kNCfg = 9;

template <class C> int launch(const ck_mm_desc *d, const ck_env *env) {
  const bool vec = al16(d->b, d->b_rs, d->batch > 1 ? d->b_bs : 0); // A moves in 4-byte copies: any alignment
  return launch_split<C>(d, env, vec ? matmul_double_buffer_kernel<C, true> : matmul_double_buffer_kernel<C, false>,
                         vec);
}

#ifndef CK_MM09_KERNEL_ONLY // lab/sgemm_sweep.cu includes this file for the kernel and launch<C> only

/* CUKERN_MM_CFG=<i> forces configuration i (0 .. kNCfg-1); otherwise by size: C0 (64 x 256 tiles, counted as
 * 128 x 128 ones: the same area) once there are
 * at least as many as SMs, 64 x 128 tiles while they still give half the SMs a block, 64 x 64 below. */
int pick_cfg(const ck_mm_desc *d, const ck_env *env) {
  const int forced = forced_cfg(kNCfg);
  if (forced >= 0) return forced;
  const int64_t sms = env->sm_count > 0 ? env->sm_count : 132;
  const int64_t big = ((d->m + 127) / 128) * ((d->n + 127) / 128) * d->batch;
  const int64_t mid = ((d->m + 63) / 64) * ((d->n + 127) / 128) * d->batch;
  if (big >= sms) return 0;
  return 2 * mid >= sms ? 1 : 2;
}

#endif // CK_MM09_KERNEL_ONLY

} // namespace

// ---------------------------------------------------------------- launcher

#ifndef CK_MM09_KERNEL_ONLY

extern "C" int ck_matmul_double_buffer(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  if (d->dtype != CK_F32) return (int)cudaErrorInvalidValue;
  switch (pick_cfg(d, env)) {
  case 1: return launch<C1>(d, env);
  case 2: return launch<C2>(d, env);
  case 3: return launch<C3>(d, env);
  case 4: return launch<C4>(d, env);
  case 5: return launch<C5>(d, env);
  case 6: return launch<C6>(d, env);
  case 7: return launch<C7>(d, env);
  case 8: return launch<C8>(d, env);
  default: return launch<C0>(d, env);
  }
}

extern "C" const char *ck_matmul_double_buffer_supports(const void *desc) { return supports_k31(desc); }

#endif // CK_MM09_KERNEL_ONLY
