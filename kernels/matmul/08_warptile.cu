/*
 * 08_warptile.cu — matmul ladder, step 8: warp tiling, with the next k tile prefetched into registers.
 *
 * Idea: shared memory serves a warp's load in wavefronts of distinct addresses, and lanes reading the same
 * address share one read (broadcast). So give each warp a compact WM x WN sub-tile of the block tile
 * (64 x 32 for 128 x 128 blocks) and arrange its 32 lanes as 8 (M) x 4 (N), each lane holding TM x TN = 8 x 8
 * results as quads strided across the warp tile (rows tm*4 + {0, 32}, columns tn*4 + {0, 16}). At each step
 * of k a warp then reads 2 x 128 contiguous bytes of A and 2 x 64 of B (8 x 16 per lane: 4 x 64 of B), far
 * fewer distinct bytes than step 7's block-wide thread layout, in which a warp spans 128 columns.
 * The k loop is also software-pipelined: while the block computes on one shared-memory buffer, each
 * thread's global loads for the next k tile are already in flight into registers; they are stored to the
 * other buffer after the compute, and one barrier per k tile suffices (double-buffered shared memory).
 * The tile shape is a template (block BM x BN x BK, warp WM x WN, thread TM x TN, min blocks per SM). The
 * launcher keeps a table of configurations and picks one by problem size (pick_cfg); CUKERN_MM_CFG=<index>
 * forces one, for tuning. Unaligned operands use VEC = false (element loads of the same float4 groups); edge
 * tiles take a guarded, zero-filling path; full interior tiles run unguarded.
 * Changed from step 7: warp-level tiling; register-staged prefetch with two shared buffers; configurable.
 * Launch: block NT = (BM/WM)*(BN/WN)*32 threads (1-D); grid x = column tiles, y = row tiles, z = batch; the
 * launcher issues several launches when y or z would pass 65535. Dynamic shared memory 2*BK*(BM+4+BN)*4
 * bytes (16.6 KB for 128 x 128 x 8, 24.8 KB for 128 x 256 x 8).
 * Limits: k < 2^31 (supports()); otherwise any m, n, k >= 0.
 * Operands (CK_VF_ROWMAJOR): A [m,k] at a + b*a_bs + i*a_rs + p, B [k,n] at b + b*b_bs + p*b_rs + j,
 * C [m,n] at c + b*c_bs + i*c_rs + j; f32 only.
 */
#include "mm_common.cuh"

using namespace ckmm;

namespace {

// ---------------------------------------------------------------- configuration

template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int MINB_> struct Cfg {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, TM = TM_, TN = TN_, MINB = MINB_;
  static constexpr int WARPS_N = BN / WN, NT = (BM / WM) * WARPS_N * 32;
  static constexpr int TWM = WM / TM, TWN = WN / TN; // lanes of a warp along M and N
  static constexpr int KQ = BK / 4, AP = BM + 4;     // k-quads per A row; padded row of the transposed A tile
  static constexpr int LA = BM * BK / 4 / NT, LB = BK * BN / 4 / NT; // float4 loads per thread and tile
  static constexpr int SMEM = 2 * BK * (AP + BN) * (int)sizeof(float);
  static_assert(TWM * TWN == 32, "a warp is 32 lanes");
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % TM == 0 && WN % TN == 0, "tiles nest");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0 && BM % 32 == 0, "quads; A load map of 16 rows");
  static_assert(LA * NT * 4 == BM * BK && LB * NT * 4 == BK * BN, "whole float4 loads per thread");
};

// ---------------------------------------------------------------- kernel

template <class C, bool VEC>
__global__ void __launch_bounds__(C::NT, C::MINB) matmul_warptile_kernel(const MmArgsV p, int64_t y0, int64_t z0) {
  extern __shared__ float4 smem4[];
  float *const As = reinterpret_cast<float *>(smem4); // [2][BK][AP], transposed: As[k][m]
  float *const Bs = As + 2 * C::BK * C::AP;           // [2][BK][BN]
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  // this block's tile; the launcher splits grids whose y or z would pass 65535 into several launches
  // grouped block order: consecutive blocks walk GROUP tile rows of one band of tile columns, so the B panels
  // they share are still in L2 (measured +4% at 4096^2 over row-by-row order on an H200)
  constexpr unsigned GROUP = 8;
  const unsigned band = blockIdx.y / GROUP, rows = min(GROUP, gridDim.y - band * GROUP);
  const unsigned l = (blockIdx.y % GROUP) * gridDim.x + blockIdx.x; // < 2^32: launcher keeps gridDim.x < 2^28
  const int64_t z = z0 + blockIdx.z;
  const int64_t m0 = (y0 + band * GROUP + l % rows) * C::BM, n0 = (int64_t)(l / rows) * C::BN;
  const int mrem = (int)(p.m - m0 < C::BM ? p.m - m0 : C::BM);
  const int nrem = (int)(p.n - n0 < C::BN ? p.n - n0 : C::BN);
  const bool full_mn = mrem == C::BM && nrem == C::BN;
  // global -> shared maps: a warp covers 16 rows x 2 k-quads of A (conflict-free transposing stores with the
  // +4 pad) and 32 float4 along a row of B. Pointers advance by one k tile per round.
  const float *pa[C::LA], *pb[C::LB];
  int a_sm[C::LA], b_sm[C::LB];
#pragma unroll
  for (int l = 0; l < C::LA; ++l) {
    const int e = tid + l * C::NT, row = e % 16 + 16 * (e / (16 * C::KQ)), kq = (e / 16) % C::KQ;
    pa[l] = p.a + z * p.a_bs + (m0 + row) * p.a_rs + kq * 4;
    a_sm[l] = kq * 4 * C::AP + row;
  }
#pragma unroll
  for (int l = 0; l < C::LB; ++l) {
    const int e = tid + l * C::NT, k = e / (C::BN / 4), n4 = e % (C::BN / 4);
    pb[l] = p.b + z * p.b_bs + k * p.b_rs + n0 + n4 * 4;
    b_sm[l] = k * C::BN + n4 * 4;
  }
  const int64_t b_step = C::BK * p.b_rs;
  // this lane's results: quads at rows wm*WM + tm*4 + i*TWM*4, columns wn*WN + tn*4 + j*TWN*4
  const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;
  const int tm = lane / C::TWN, tn = lane % C::TWN;
  const int a_rd = wm * C::WM + tm * 4, b_rd = wn * C::WN + tn * 4;
  const int ktiles = (int)((p.k + C::BK - 1) / C::BK); // k < 2^31 (supports())
  float4 va[C::LA], vb[C::LB];

  // global loads of k tile starting at k0 into registers (guarded and zero-filling at the edges)
  auto gload = [&](int64_t k0) {
    const int krem = (int)(p.k - k0 < C::BK ? p.k - k0 : C::BK);
    if (full_mn && krem == C::BK) { // interior tile: no guards
#pragma unroll
      for (int l = 0; l < C::LA; ++l) va[l] = ld4<VEC>(pa[l]);
#pragma unroll
      for (int l = 0; l < C::LB; ++l) vb[l] = ld4<VEC>(pb[l]);
    } else {
#pragma unroll
      for (int l = 0; l < C::LA; ++l) {
        const int e = tid + l * C::NT, row = e % 16 + 16 * (e / (16 * C::KQ)), kq = (e / 16) % C::KQ;
        va[l] = ld4_guard(pa[l], row < mrem ? krem - kq * 4 : 0);
      }
#pragma unroll
      for (int l = 0; l < C::LB; ++l) {
        const int e = tid + l * C::NT, k = e / (C::BN / 4), n4 = e % (C::BN / 4);
        vb[l] = ld4_guard(pb[l], k < krem ? nrem - n4 * 4 : 0);
      }
    }
#pragma unroll
    for (int l = 0; l < C::LA; ++l) pa[l] += C::BK;
#pragma unroll
    for (int l = 0; l < C::LB; ++l) pb[l] += b_step;
  };
  auto sstore = [&](int buf) {
    float *as = As + buf * (C::BK * C::AP), *bs = Bs + buf * (C::BK * C::BN);
#pragma unroll
    for (int l = 0; l < C::LA; ++l) {
      as[a_sm[l]] = va[l].x;
      as[a_sm[l] + C::AP] = va[l].y;
      as[a_sm[l] + 2 * C::AP] = va[l].z;
      as[a_sm[l] + 3 * C::AP] = va[l].w;
    }
#pragma unroll
    for (int l = 0; l < C::LB; ++l) *reinterpret_cast<float4 *>(bs + b_sm[l]) = vb[l];
  };

  float acc[C::TM][C::TN];
#pragma unroll
  for (int i = 0; i < C::TM; ++i)
#pragma unroll
    for (int j = 0; j < C::TN; ++j) acc[i][j] = 0.f;

  if (ktiles > 0) {
    gload(0);
    sstore(0);
    __syncthreads();
  }
  for (int t = 0; t < ktiles; ++t) {
    const int buf = t & 1;
    if (t + 1 < ktiles) gload((int64_t)(t + 1) * C::BK); // in flight during the compute below
    const float *as = As + buf * (C::BK * C::AP) + a_rd, *bs = Bs + buf * (C::BK * C::BN) + b_rd;
#pragma unroll
    for (int kk = 0; kk < C::BK; ++kk) {
      float ra[C::TM], rb[C::TN];
#pragma unroll
      for (int i = 0; i < C::TM / 4; ++i)
        *reinterpret_cast<float4 *>(&ra[4 * i]) = *reinterpret_cast<const float4 *>(as + kk * C::AP + i * C::TWM * 4);
#pragma unroll
      for (int j = 0; j < C::TN / 4; ++j)
        *reinterpret_cast<float4 *>(&rb[4 * j]) = *reinterpret_cast<const float4 *>(bs + kk * C::BN + j * C::TWN * 4);
#pragma unroll
      for (int i = 0; i < C::TM; ++i)
#pragma unroll
        for (int j = 0; j < C::TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    if (t + 1 < ktiles) sstore(buf ^ 1); // the other buffer: everyone finished reading it last round
    __syncthreads();
  }

  float *Cb = p.c + z * p.c_bs + m0 * p.c_rs + n0;
  store_quads<C::TM, C::TN, C::TWM * 4, C::TWN * 4>(Cb, acc, a_rd, b_rd, mrem, nrem, p);
}

// ---------------------------------------------------------------- configurations and launch

// The configurations CUKERN_MM_CFG can force (index: block BMxBNxBK, warp WMxWN, thread TMxTN, min blocks/SM).
// Measured on an H200 (TFLOP/s at 2048 / 4096 / 8192, row-by-row block order): C0 38.0, 38.6, 39.1;
// C1 41.7, 42.7, 43.0; grouped order (below) adds ~2% to C1.
//                BM   BN  BK  WM  WN  TM  TN  MINB
using C0 = Cfg<128, 128, 8, 64, 32, 8, 8, 2>;  // 0: 128 x 128 tiles, two blocks per SM (<= 128 registers)
using C1 = Cfg<128, 256, 8, 64, 64, 8, 16, 1>; // 1: 128 x 256 tiles, 8 x 16 results per thread, one block per SM
using C2 = Cfg<64, 64, 16, 32, 32, 8, 4, 4>;   // 2: small problems: 4x the blocks of C0
constexpr int kNCfg = 3;

template <class C> int launch(const ck_mm_desc *d, const ck_env *env) {
  const bool vec = ab_al16(d);
  return launch_split<C>(d, env, vec ? matmul_warptile_kernel<C, true> : matmul_warptile_kernel<C, false>, vec);
}

/* CUKERN_MM_CFG=<i> forces configuration i (0 .. kNCfg-1). Otherwise by size (measured on an H200 at 2048-8192:
 * C1 over C0 when its 128 x 256 tiles fill most SMs; C2 when 128 x 128 tiles would not). */
int pick_cfg(const ck_mm_desc *d, const ck_env *env) {
  const int forced = forced_cfg(kNCfg);
  if (forced >= 0) return forced;
  const int64_t sms = env->sm_count > 0 ? env->sm_count : 132;
  const int64_t tiles = ((d->m + 127) / 128) * ((d->n + 127) / 128) * d->batch;
  const int64_t wide = ((d->m + 127) / 128) * ((d->n + 255) / 256) * d->batch;
  if (4 * wide >= 3 * sms) return 1;
  return tiles < sms ? 2 : 0;
}

} // namespace

// ---------------------------------------------------------------- launcher

extern "C" int ck_matmul_warptile(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  if (d->dtype != CK_F32) return (int)cudaErrorInvalidValue;
  switch (pick_cfg(d, env)) {
  case 1: return launch<C1>(d, env);
  case 2: return launch<C2>(d, env);
  default: return launch<C0>(d, env);
  }
}

extern "C" const char *ck_matmul_warptile_supports(const void *desc) { return supports_k31(desc); }
