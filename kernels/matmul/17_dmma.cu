/*
 * 17_dmma.cu — matmul ladder, step 17: f64 on the tensor cores (mma.sync m8n8k4 f64, "DMMA"; sm_80+).
 *
 * Idea: every f64 rung before this one runs on the FP64 pipe (an H100's blocktile_2d: 10.5 TFLOP/s), while the
 * tensor cores of sm_80+ also multiply doubles: one mma.sync.m8n8k4.f64 is a warp's 8x8x4 product (256 FMAs)
 * at about 4x the FMA pipe's rate (cuBLAS DGEMM reaches 55-60 TFLOP/s on an H100). The fragments are small: a
 * lane holds one double of A (row lane/4, k lane%4), one of B (k lane%4, column lane/4) and two of the 8x8
 * result (row lane/4, columns 2(lane%4) + {0,1}), so a warp's WM x WN tile is (WM/8) x (WN/8) accumulator pairs
 * and each k step of 4 loads WM/8 + WN/8 doubles per lane from shared memory for (WM/8)(WN/8) DMMAs. sm_90 adds
 * m16n8k16 (8 of those in one instruction, the same fragment pattern repeated: dmma16816), which configurations
 * 0-2 use (59-65% of cuBLAS at 4096-8192 on an H100, where m8n8k4 ran at 43-47%: configuration table below).
 * Shared tiles are k-major (As[k][m], Bs[k][n]) with rows padded to BM + 4 and BN + 4 doubles (= 4 mod 16):
 * a half-warp's fragment loads (k 0..3 x rows or columns 0..3) then hit 16 different 8-byte bank pairs. Global
 * -> shared by step 9's STAGES-deep cp.async pipeline (one barrier per k tile): A moves in 8-byte copies, four
 * lanes per 32-byte run of k in one row (a warp: 8 rows), which lands transposed without a bank conflict; B in
 * 16-byte copies when its rows allow (8-byte otherwise). Edge tiles zero-fill what lies outside m, n or k
 * (src-size 0 from the operand's first element, as step 9), so any shape runs; the epilogue skips what lies
 * outside and writes pairs as 16 bytes when C allows. Blocks walk GROUP tile rows at a time (L2 reuse, step 9).
 * Changed from step 9: tensor-core DMMA fragments instead of FFMA outer products; f64 only.
 * First written as lab/dmma_probe.cu (round 3 session 9), whose check and timings beside cublasDgemm ran
 * in session 10 (bench/results/round9/README.md).
 * Launch: NT = (BM/WM)(BN/WN) x 32 threads; grid x = column tiles, y = row tiles, z = batch (split launches past
 * 65535, mm_common.cuh); dynamic shared memory STAGES*BK*(BM+4 + BN+4)*8 bytes, opted in past 48 KB.
 * Limits: k < 2^31, compute capability >= 8.0 (supports()). Any m, n, k >= 0, any row strides, batch >= 1.
 * Operands (CK_VF_ROWMAJOR): A [m,k] at a + b*a_bs + i*a_rs + p, B [k,n] at b + b*b_bs + p*b_rs + j,
 * C [m,n] at c + b*c_bs + i*c_rs + j; f64 only. LU's f64 trailing update (kernels/lu/lu_common.cuh) runs here.
 */
#include "mm_common.cuh"
#include "mm_ptx.cuh"

using namespace ckmm;

namespace {

// cp.async and the DMMA wrappers are the tensor-core rungs' (mm_ptx.cuh): cp8z, cp16, dmma884, dmma16816. Before
// sm_80 they are empty; supports() declines there, and pick_cfg takes the m16n8k16 configurations only where the
// kernels were built for sm_90+.
using cktc::cp16;
using cktc::cp8z;
using cktc::dmma16816;
using cktc::dmma884;
using cktc::smem_u32;

// ---------------------------------------------------------------- configuration

template <int BM_, int BN_, int BK_, int WM_, int WN_, int ST_, int MINB_, int K16_, int GROUP_ = 8> struct Cfg {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = ST_, MINB = MINB_, GROUP = GROUP_;
  static constexpr int K16 = K16_; /* 1: sm_90's m16n8k16 (dmma16816), 0: m8n8k4 (dmma884) */
  static constexpr int WARPS_N = BN / WN, NT = (BM / WM) * WARPS_N * 32;
  static constexpr int LDA = BM + 4, LDB = BN + 4; /* = 4 (mod 16) doubles */
  static constexpr int MT = WM / 8, NTL = WN / 8;  /* DMMA tiles of a warp along M and N */
  static constexpr int A_STAGE = BK * LDA, B_STAGE = BK * LDB;
  static constexpr int SMEM = STAGES * (A_STAGE + B_STAGE) * (int)sizeof(double);
  static constexpr int AROWS = NT / 4;             /* rows of A one pass of 8-byte copies covers (4 k each) */
  static constexpr int LA = BM * BK / NT;          /* 8-byte copies of A per thread and tile */
  static constexpr int LB2 = BK * BN / 2 / NT;     /* 16-byte copies of B per thread and tile */
  static constexpr int LB1 = BK * BN / NT;         /* 8-byte copies of B per thread and tile (unaligned B) */
  static_assert(BM % 16 == 0 && BN % 16 == 0 && WM % 8 == 0 && WN % 8 == 0 && BK % 4 == 0, "tiles");
  static_assert(BM % WM == 0 && BN % WN == 0 && BM % AROWS == 0, "tiles nest; A copy map");
  static_assert(LA * NT == BM * BK && LB2 * NT * 2 == BK * BN && NT % (BN / 2) == 0 && NT % BN == 0, "copy maps");
  static_assert(STAGES >= 2, "a pipeline needs two buffers");
  static_assert(!K16 || (BK % 16 == 0 && WM % 16 == 0), "m16n8k16 steps");
};

// ---------------------------------------------------------------- kernel

template <class C, bool VEC>
__global__ void __launch_bounds__(C::NT, C::MINB) matmul_dmma_kernel(const MmArgs<double> p, int64_t y0, int64_t z0) {
  extern __shared__ double2 smem2[];
  double *const As = reinterpret_cast<double *>(smem2); // [STAGES][BK][LDA]: As[k][m]
  double *const Bs = As + C::STAGES * C::A_STAGE;        // [STAGES][BK][LDB]
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t z = z0 + blockIdx.z;
  unsigned tile_m, tile_n;
  block_tile<C::GROUP>(tile_m, tile_n); // grouped order (step 9)
  const int64_t m0 = (y0 + tile_m) * C::BM, n0 = (int64_t)tile_n * C::BN;
  const int mrem = (int)(p.m - m0 < C::BM ? p.m - m0 : C::BM);
  const int nrem = (int)(p.n - n0 < C::BN ? p.n - n0 : C::BN);
  const bool full_mn = mrem == C::BM && nrem == C::BN;
  const double *const Ab = p.a + z * p.a_bs + m0 * p.a_rs, *const Bb = p.b + z * p.b_bs + n0;
  const int ktiles = (int)((p.k + C::BK - 1) / C::BK); // k < 2^31 (supports())

  // A copy map: copy l of this thread is row arow + (l % RP) * AROWS, k ak + 4 * (l / RP): four lanes read one
  // 32-byte run of a row, a warp 8 rows; stored at As[k][row], a half-warp's 16 stores hit 16 bank pairs.
  constexpr int RP = C::BM / C::AROWS;
  const int arow = tid / 4, ak = tid % 4;
  // B copy maps: 16-byte copy l is row (tid + l*NT) / (BN/2), pair (tid + l*NT) % (BN/2); 8-byte ones the same
  // with BN singles.
  constexpr int B2_STEP = C::NT / (C::BN / 2), B1_STEP = C::NT / C::BN;
  const int b2row = tid / (C::BN / 2), b2c = 2 * (tid % (C::BN / 2));
  const int b1row = tid / C::BN, b1c = tid % C::BN;

  auto issue = [&](int kt, int st) {
    const int64_t k0 = (int64_t)kt * C::BK;
    const int krem = (int)(p.k - k0 < C::BK ? p.k - k0 : C::BK);
    const bool full = full_mn && krem == C::BK;
    double *as = As + st * C::A_STAGE, *bs = Bs + st * C::B_STAGE;
    const double *asrc = Ab + k0, *bsrc = Bb + k0 * p.b_rs;
#pragma unroll
    for (int l = 0; l < C::LA; ++l) {
      const int r = arow + (l % RP) * C::AROWS, kk = ak + 4 * (l / RP);
      const bool ok = full || (r < mrem && kk < krem);
      cp8z(smem_u32(as + kk * C::LDA + r), ok ? asrc + (int64_t)r * p.a_rs + kk : p.a, ok ? 8 : 0);
    }
    if (VEC) {
#pragma unroll
      for (int l = 0; l < C::LB2; ++l) {
        const int r = b2row + l * B2_STEP;
        const double *src = bsrc + (int64_t)r * p.b_rs + b2c;
        double *dst = bs + r * C::LDB + b2c;
        if (full || (r < krem && b2c + 2 <= nrem)) {
          cp16(smem_u32(dst), src);
        } else { // a partial pair: double by double, zeros past the edge
          const bool ok0 = r < krem && b2c < nrem, ok1 = r < krem && b2c + 1 < nrem;
          cp8z(smem_u32(dst), ok0 ? src : p.b, ok0 ? 8 : 0);
          cp8z(smem_u32(dst + 1), ok1 ? src + 1 : p.b, ok1 ? 8 : 0);
        }
      }
    } else {
#pragma unroll
      for (int l = 0; l < C::LB1; ++l) {
        const int r = b1row + l * B1_STEP;
        const bool ok = full || (r < krem && b1c < nrem);
        cp8z(smem_u32(bs + r * C::LDB + b1c), ok ? bsrc + (int64_t)r * p.b_rs + b1c : p.b, ok ? 8 : 0);
      }
    }
  };

  const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;
  const int ar = wm * C::WM + lane / 4, bc = wn * C::WN + lane / 4, kl = lane % 4;
  double acc[C::MT][C::NTL][2];
#pragma unroll
  for (int i = 0; i < C::MT; ++i)
#pragma unroll
    for (int j = 0; j < C::NTL; ++j) acc[i][j][0] = acc[i][j][1] = 0.0;

#pragma unroll
  for (int s = 0; s < C::STAGES - 1; ++s) {
    if (s < ktiles) issue(s, s);
    cp_commit(); // empty groups keep the wait_group arithmetic uniform
  }
  int st = 0, st_next = C::STAGES - 1;
  for (int t = 0; t < ktiles; ++t) {
    cp_wait<C::STAGES - 2>(); // this thread's copies of tile t have landed ...
    __syncthreads();          // ... everyone's have, and everyone finished computing tile t - 1
    if (t + C::STAGES - 1 < ktiles) issue(t + C::STAGES - 1, st_next);
    cp_commit();
    const double *as = As + st * C::A_STAGE + kl * C::LDA + ar, *bs = Bs + st * C::B_STAGE + kl * C::LDB + bc;
    if constexpr (C::K16) { // a k step of 16: B's fragments for the warp's columns, then A's a 16-row tile at a time
#pragma unroll
      for (int kk = 0; kk < C::BK; kk += 16) {
        double fb[C::NTL][4];
#pragma unroll
        for (int j = 0; j < C::NTL; ++j)
#pragma unroll
          for (int q = 0; q < 4; ++q) fb[j][q] = bs[(kk + 4 * q) * C::LDB + 8 * j];
#pragma unroll
        for (int i = 0; i < C::MT; i += 2) {
          double fa[8];
#pragma unroll
          for (int q = 0; q < 8; ++q) fa[q] = as[(kk + 4 * (q / 2)) * C::LDA + 8 * i + 8 * (q % 2)];
#pragma unroll
          for (int j = 0; j < C::NTL; ++j) dmma16816(acc[i][j], acc[i + 1][j], fa, fb[j]);
        }
      }
    } else { // a k step of 4: one double of A per 8-row tile, one of B per 8-column tile
#pragma unroll
      for (int kk = 0; kk < C::BK; kk += 4) {
        double fa[C::MT], fb[C::NTL];
#pragma unroll
        for (int i = 0; i < C::MT; ++i) fa[i] = as[kk * C::LDA + 8 * i];
#pragma unroll
        for (int j = 0; j < C::NTL; ++j) fb[j] = bs[kk * C::LDB + 8 * j];
#pragma unroll
        for (int i = 0; i < C::MT; ++i)
#pragma unroll
          for (int j = 0; j < C::NTL; ++j) dmma884(acc[i][j][0], acc[i][j][1], fa[i], fb[j]);
      }
    }
    st = st + 1 == C::STAGES ? 0 : st + 1;
    st_next = st_next + 1 == C::STAGES ? 0 : st_next + 1;
  }
  cp_wait<0>(); // no copy may still target shared memory when the block exits

  // epilogue: this lane's pair of tile (i, j) is row wm*WM + 8i + lane/4, columns wn*WN + 8j + 2(lane%4) + {0, 1}
  double *const Cb = p.c + z * p.c_bs + m0 * p.c_rs + n0;
  const bool cvec = (((uintptr_t)p.c | (uintptr_t)(p.c_rs * 8) | (uintptr_t)(p.batch > 1 ? p.c_bs * 8 : 0)) & 15) == 0;
#pragma unroll
  for (int i = 0; i < C::MT; ++i) {
    const int r = wm * C::WM + 8 * i + lane / 4;
    if (r >= mrem) continue;
#pragma unroll
    for (int j = 0; j < C::NTL; ++j) {
      const int c = wn * C::WN + 8 * j + 2 * kl;
      double *cp = Cb + (int64_t)r * p.c_rs + c;
      if (cvec && c + 2 <= nrem) {
        double2 o = make_double2(p.alpha * acc[i][j][0], p.alpha * acc[i][j][1]);
        if (p.beta != 0.0) {
          const double2 old = *reinterpret_cast<const double2 *>(cp);
          o.x += p.beta * old.x, o.y += p.beta * old.y;
        }
        *reinterpret_cast<double2 *>(cp) = o;
      } else {
        if (c < nrem) cp[0] = epi(acc[i][j][0], p.alpha, p.beta, cp);
        if (c + 1 < nrem) cp[1] = epi(acc[i][j][1], p.alpha, p.beta, cp + 1);
      }
    }
  }
}

// ---------------------------------------------------------------- configurations and launch

// Measured on an H100 (lab/dmma_bench.lua, % of cuBLAS DGEMM in the same run; round 3 session 10, runs B and C of
// bench/results/round10/README.md). m8n8k4 (C3-C5): 64 x 64 was the fastest everywhere, 43-47% at 4096-8192
// (25.7-26.1 TFLOP/s), 51-54% at the LU update shape 8064 x 8064 x 128; 128 x 128 and 128 x 64 35-46%. m16n8k16
// (C0-C2), the same work in an eighth of the instructions: 128 x 64 (C1) 65.2 / 63.8% at 4096 / 8192 (38.3 / 35.4
// TFLOP/s), 71.6% at 2048, 77.3% at 8064 x 8064 x 128; 64 x 64 (C2) 59.4 / 60.2%, but 81.8% at 1024 and 78.1% at
// 1000^3, where C1's tiles leave SMs idle; 128 x 128 (C0) 50.7 / 58.7%.
//               BM   BN  BK  WM  WN ST MINB K16
using C0 = Cfg<128, 128, 16, 64, 32, 3, 1, 1>; // 0: sm_90, large problems: 8 warps of 64 x 32, 101 KB shared
using C1 = Cfg<128, 64, 16, 64, 32, 3, 2, 1>;  // 1: sm_90, medium: 4 warps of 64 x 32, two blocks per SM
using C2 = Cfg<64, 64, 16, 32, 32, 3, 3, 1>;   // 2: sm_90, small problems: 4 warps of 32 x 32
using C3 = Cfg<128, 128, 16, 64, 32, 3, 1, 0>; // 3-5: the same tiles in m8n8k4 steps (sm_80+)
using C4 = Cfg<128, 64, 16, 64, 32, 3, 2, 0>;
using C5 = Cfg<64, 64, 16, 32, 32, 3, 3, 0>;
constexpr int kNCfg = 6;

template <class C> int launch(const ck_mm_desc *d, const ck_env *env) {
  static ck_devcache raised[2]; // per instantiation and VEC (the attribute is per function and device)
  const bool vec = ((uintptr_t)d->b & 15) == 0 && d->b_rs % 2 == 0 && (d->batch <= 1 || d->b_bs % 2 == 0); // 16-byte pairs
  void (*kern)(MmArgs<double>, int64_t, int64_t) = vec ? matmul_dmma_kernel<C, true> : matmul_dmma_kernel<C, false>;
  if (int e = raise_smem(kern, C::SMEM, raised[vec], env->device)) return e;
  const MmArgs<double> p = mm_args<double>(d);
  ck_note(env, kern, C::NT, C::SMEM);
  return split_tiles(d, C::BM, C::BN, [&](dim3 grid, int64_t y0, int64_t z0) {
    kern<<<grid, C::NT, C::SMEM, (cudaStream_t)env->stream>>>(p, y0, z0);
  });
}

/* CUKERN_MM_CFG=<i> forces configuration i (an sm_90 one before sm_90 runs its m8n8k4 twin); otherwise `want` (a
 * caller's configuration, the same mapping; -1: none), otherwise 128 x 64 tiles in m16n8k16 steps once they give
 * every SM two blocks, 64 x 64 below (and always in m8n8k4 steps, where 64 x 64 was the fastest at every size). */
int pick_cfg(const ck_mm_desc *d, const ck_env *env, int want) {
  static ck_devcache built; /* per device: 1 when the m16n8k16 kernels run there (compiled for sm_90+), 2 when not */
  int &k16_ok = built.v[env->device];
  if (!k16_ok) {
    cudaFuncAttributes fa;
    const bool ok = env->cc_major >= 9 && cudaFuncGetAttributes(&fa, matmul_dmma_kernel<C2, true>) == cudaSuccess &&
                    fa.ptxVersion >= 90; /* (a build for sm_80 that the driver compiles for sm_90 would trap) */
    (void)cudaGetLastError();
    k16_ok = ok ? 1 : 2;
  }
  const bool k16 = k16_ok == 1;
  const int forced = forced_cfg(kNCfg);
  const int c = forced >= 0 ? forced : want >= 0 && want < kNCfg ? want : -1;
  if (c >= 0) return c < 3 && !k16 ? c + 3 : c;
  if (!k16) return 5;
  const int64_t sms = env->sm_count > 0 ? env->sm_count : 132;
  return ((d->m + 127) / 128) * ((d->n + 63) / 64) * d->batch >= 2 * sms ? 1 : 2;
}

int run(const ck_mm_desc *d, const ck_env *env, int want) {
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  if (d->dtype != CK_F64) return (int)cudaErrorInvalidValue;
  switch (pick_cfg(d, env, want)) {
  case 0: return launch<C0>(d, env);
  case 1: return launch<C1>(d, env);
  case 2: return launch<C2>(d, env);
  case 3: return launch<C3>(d, env);
  case 4: return launch<C4>(d, env);
  default: return launch<C5>(d, env);
  }
}

} // namespace

// ---------------------------------------------------------------- launcher

extern "C" int ck_matmul_dmma(const void *desc, const ck_env *env) { return run((const ck_mm_desc *)desc, env, -1); }

/* LU's trailing update (kernels/lu/lu_common.cuh): k = 128 products with beta = 1 into a strided C. 64 x 64 tiles
 * there made f64 LU of 8192 faster than the pick's 128 x 64 (H100, one run, session 11: 65.0 against 70.5 ms, 58.1%
 * against 53.5% of cuSOLVER), though the product alone at 8064 x 8064 x 128 is faster in 128 x 64 (77.3% against
 * 71.7% of cuBLAS, session 10): in the LU the update shrinks to a few tiles an SM, and runs beside the next panel. */
extern "C" int ck_matmul_dmma_small_tiles(const void *desc, const ck_env *env) {
  return run((const ck_mm_desc *)desc, env, 2);
}

extern "C" const char *ck_matmul_dmma_supports(const void *desc) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->dtype != CK_F64 || d->c_dtype != CK_F64) return "f64 only";
  if (d->k > 0x7fffff00LL) return "needs k < 2^31";
  if (const char *why = cc_outside(8, 99, "needs compute capability >= 8.0 (mma.sync m8n8k4 f64, cp.async)")) return why;
  return no_image((const void *)matmul_dmma_kernel<C5, true>, "not built for this GPU (no kernel image; set CUDA_ARCH)");
}
