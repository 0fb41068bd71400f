/*
 * 10_wmma.cu — matmul ladder, step 10: tensor cores through the WMMA API (f16/bf16 in, f32 accumulate; sm_80+).
 *
 * Idea: steps 1-9 multiply on the CUDA cores, one FMA per result per k; a tensor core multiplies whole small
 * matrices per instruction, and on an H100 dense f16/bf16 is ~15x the fp32 FMA rate. The seed article's last
 * level reaches it through WMMA (nvcuda::wmma in <mma.h>): a warp loads a 16x16 A fragment and a 16x16 B
 * fragment from memory (load_matrix_sync), multiplies them into a 16x16 f32 accumulator fragment (mma_sync)
 * and stores the accumulator (store_matrix_sync); which lane holds which element is the library's business.
 * Here the fragments come from shared-memory tiles fed by step 9's cp.async pipeline (3 stages, one barrier
 * per k tile): the block stages a BM x BK tile of A and a BK x BN tile of B (both row-major, as in global
 * memory), each warp owns a WM x WN tile of C as (WM/16) x (WN/16) accumulator fragments and, per 16-wide k
 * step, loads WM/16 A and WN/16 B fragments and issues every product. Shared rows are padded by 16 bytes
 * (mm_tc.cuh: SW_PAD), which keeps load_matrix_sync's row reads in different bank groups and its 32-byte
 * alignment. The accumulators leave through a per-warp 16x16 f32 scratch in shared memory (the fragment
 * layout is opaque), from which lanes apply alpha/beta, convert to c_dtype and store with the tile's guards.
 * Operands that do not allow 16-byte copies are loaded with plain element loads (any strides; slow), as in
 * step 11; edge tiles are zero-filled by cp.async.
 * Changed from step 9: tensor cores (WMMA 16x16x16 fragments) instead of FFMA, f16/bf16 inputs with f32
 * accumulation, results through shared memory.
 * Launch: block (BM/WM)*(BN/WN) warps; grid x = column tiles, y = row tiles (grouped by 8), z = batch, split
 * past 65535. Default 128 x 128 x 32 with 8 warps of 64 x 32, 3 stages, 55.5 KB dynamic shared memory
 * (configurations below; CUKERN_MM_CFG=<i> forces one).
 * Limits: f16/bf16 only; k < 2^31; compute capability >= 8.0 (supports()). Any m, n, k >= 0, any strides.
 * Operands: A [m,k] at a + b*a_bs + i*a_rs + p*a_cs, B [k,n] at b + b*b_bs + p*b_rs + j*b_cs, C [m,n] at
 * c + b*c_bs + i*c_rs + j*c_cs; c_dtype = dtype or f32; alpha/beta in f32, beta == 0 never reads C.
 */
#include <mma.h>

#include "mm_tc.cuh"

using namespace cktc;
namespace wmma = nvcuda::wmma;

namespace {

// ---------------------------------------------------------------- configuration

template <int BM_, int BN_, int BK_, int WM_, int WN_, int ST_, int MINB_, int GROUP_ = 8> struct Cfg {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = ST_, MINB = MINB_, GROUP = GROUP_;
  static constexpr int WARPS_N = BN / WN, NT = (BM / WM) * WARPS_N * 32;
  static constexpr int FM = WM / 16, FN = WN / 16; // fragments per warp
  static constexpr int ACH = BK / 8, BCH = BN / 8; // 16-byte chunks per tile row
  static constexpr int LDA = BK + 8, LDB = BN + 8; // padded rows, in elements
  static constexpr int A_ST = tile_bytes<ACH, SW_PAD>(BM), B_ST = tile_bytes<BCH, SW_PAD>(BK);
  static constexpr int SMEM = STAGES * (A_ST + B_ST);
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "tiles nest");
  static_assert(A_ST % 32 == 0 && B_ST % 32 == 0, "fragment pointers 32-byte aligned");
  static_assert(SMEM >= NT / 32 * 256 * 4, "the epilogue scratch fits in the pipeline's shared memory");
};

// ---------------------------------------------------------------- kernel

template <class C, typename T, bool VEC>
__global__ void __launch_bounds__(C::NT, C::MINB) matmul_wmma_kernel(const TcArgs p, int64_t y0, int64_t z0) {
  extern __shared__ __align__(128) unsigned char smem[];
  T *const As = reinterpret_cast<T *>(smem);                                  // [STAGES][BM][LDA]
  T *const Bs = reinterpret_cast<T *>(smem + C::STAGES * C::A_ST); // [STAGES][BK][LDB]
  const uint32_t sA = smem_u32(As), sB = smem_u32(Bs);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;

  unsigned tile_m, tile_n;
  tile_of_block<C::GROUP>(tile_m, tile_n);
  const int64_t z = z0 + blockIdx.z, m0 = (y0 + tile_m) * C::BM, n0 = (int64_t)tile_n * C::BN;
  const int mrem = (int)(p.m - m0 < C::BM ? p.m - m0 : C::BM);
  const int nrem = (int)(p.n - n0 < C::BN ? p.n - n0 : C::BN);
  const T *const A = (const T *)p.a + z * p.a_bs + m0 * p.a_rs;
  const T *const B = (const T *)p.b + z * p.b_bs + n0 * p.b_cs;
  const int ktiles = (int)((p.k + C::BK - 1) / C::BK); // k < 2^31 (supports())

  auto issue = [&](int kt, int st) { // the copies of k tile kt into stage st (no commit)
    const int64_t k0 = (int64_t)kt * C::BK;
    const int krem = (int)(p.k - k0 < C::BK ? p.k - k0 : C::BK);
    load_tile<T, C::BM, C::ACH, SW_PAD, C::NT, VEC>(sA + st * C::A_ST, A + k0 * p.a_cs, p.a_rs, p.a_cs, mrem, krem, tid);
    load_tile<T, C::BK, C::BCH, SW_PAD, C::NT, VEC>(sB + st * C::B_ST, B + k0 * p.b_rs, p.b_rs, p.b_cs, krem, nrem, tid);
  };

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[C::FM][C::FN];
#pragma unroll
  for (int i = 0; i < C::FM; ++i)
#pragma unroll
    for (int j = 0; j < C::FN; ++j) wmma::fill_fragment(acc[i][j], 0.f);

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
    const T *as = As + st * (C::A_ST / 2) + (wm * C::WM) * C::LDA;
    const T *bs = Bs + st * (C::B_ST / 2) + wn * C::WN;
#pragma unroll
    for (int ks = 0; ks < C::BK / 16; ++ks) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> af[C::FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> bf[C::FN];
#pragma unroll
      for (int i = 0; i < C::FM; ++i) wmma::load_matrix_sync(af[i], as + i * 16 * C::LDA + ks * 16, C::LDA);
#pragma unroll
      for (int j = 0; j < C::FN; ++j) wmma::load_matrix_sync(bf[j], bs + ks * 16 * C::LDB + j * 16, C::LDB);
#pragma unroll
      for (int i = 0; i < C::FM; ++i)
#pragma unroll
        for (int j = 0; j < C::FN; ++j) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
    }
    st = st + 1 == C::STAGES ? 0 : st + 1;
    st_next = st_next + 1 == C::STAGES ? 0 : st_next + 1;
  }
  cp_wait<0>();     // no copy may still target shared memory ...
  __syncthreads();  // ... and no warp still reads a stage: the scratch below reuses them

  // each warp: fragment -> its 16x16 f32 scratch -> lane l writes row l/2, columns (l%2)*8 .. +7
  float *const scratch = reinterpret_cast<float *>(smem) + warp * 256;
  void *cb = c_base(p, z, m0, n0);
  const int sr = lane >> 1, sc = (lane & 1) * 8;
#pragma unroll
  for (int i = 0; i < C::FM; ++i)
#pragma unroll
    for (int j = 0; j < C::FN; ++j) {
      wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const int r = wm * C::WM + i * 16 + sr, c = wn * C::WN + j * 16 + sc;
      const float4 v0 = *reinterpret_cast<const float4 *>(scratch + sr * 16 + sc);
      const float4 v1 = *reinterpret_cast<const float4 *>(scratch + sr * 16 + sc + 4);
      store_pair(p, cb, r, c, mrem, nrem, v0.x, v0.y);
      store_pair(p, cb, r, c + 2, mrem, nrem, v0.z, v0.w);
      store_pair(p, cb, r, c + 4, mrem, nrem, v1.x, v1.y);
      store_pair(p, cb, r, c + 6, mrem, nrem, v1.z, v1.w);
      __syncwarp(); // the scratch is rewritten by the next fragment
    }
}

// ---------------------------------------------------------------- configurations and launch

// index: block BM x BN x BK, warp WM x WN, stages, min blocks per SM. Shared memory: STAGES * (BM*(BK+8) +
// BK*(BN+8)) * 2 bytes.
//                BM   BN  BK  WM  WN ST MINB
using W0 = Cfg<128, 128, 32, 64, 32, 3, 2>; // 0: large problems; 8 warps of 64 x 32, 55.5 KB
using W1 = Cfg<128, 256, 32, 64, 64, 3, 1>; // 1: 8 warps of 64 x 64, 79.5 KB
using W2 = Cfg<64, 64, 32, 32, 32, 3, 4>;   // 2: small problems, 28.5 KB
constexpr int kNCfg = 3;
using G = Cfg<64, 64, 32, 32, 32, 3, 1>; // operands without 16-byte copies (plain element loads), any size

template <class C, typename T, bool VEC> int launch(const ck_mm_desc *d, const ck_env *env) {
  static bool raised;
  return launch_tiles<C::BM, C::BN, C::NT, C::SMEM>(d, env, matmul_wmma_kernel<C, T, VEC>, raised);
}

template <typename T> int launch_t(const ck_mm_desc *d, const ck_env *env) {
  if (!ab_vec(d)) return launch<G, T, false>(d, env);
  int cfg = forced_cfg(kNCfg);
  if (cfg < 0) {
    const int64_t sms = env->sm_count > 0 ? env->sm_count : 132;
    cfg = ((d->m + 127) / 128) * ((d->n + 127) / 128) * d->batch >= sms ? 0 : 2;
  }
  switch (cfg) {
  case 1: return launch<W1, T, true>(d, env);
  case 2: return launch<W2, T, true>(d, env);
  default: return launch<W0, T, true>(d, env);
  }
}

} // namespace

// ---------------------------------------------------------------- launcher

extern "C" int ck_matmul_wmma(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  if (d->dtype == CK_F16) return launch_t<__half>(d, env);
  if (d->dtype == CK_BF16) return launch_t<__nv_bfloat16>(d, env);
  return (int)cudaErrorInvalidValue;
}

extern "C" const char *ck_matmul_wmma_supports(const void *desc) {
  return supports_tc((const ck_mm_desc *)desc, false, (const void *)matmul_wmma_kernel<W0, __half, true>);
}
