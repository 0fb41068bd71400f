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
 * (mm_tile.cuh: SW_PAD), which keeps load_matrix_sync's row reads in different bank groups and its 32-byte
 * alignment. The accumulators leave through a per-warp 16x16 f32 scratch in shared memory (the fragment
 * layout is opaque), from which lanes apply alpha/beta, convert to c_dtype and store with the tile's guards.
 * The copies are step 11's (mm_tile.cuh: StageCopy): per-thread source pointers computed once per block, interior
 * k tiles copied without tests, edge tiles zero-filled by cp.async from the same pointers. Operands that do
 * not allow 16-byte copies are loaded with plain element loads (any strides; slow), as in step 11.
 * Changed from step 9: tensor cores (WMMA 16x16x16 fragments) instead of FFMA, f16/bf16 inputs with f32
 * accumulation, results through shared memory.
 * Launch: block (BM/WM)*(BN/WN) warps; grid x = column tiles, y = row tiles (grouped by 8), z = batch, split
 * past 65535. Large problems: 128 x 128 x 64 with 4 warps of 64 x 64, 3 stages, 105 KB dynamic shared memory,
 * 2 blocks per SM (configurations below; CUKERN_MM_CFG=<i> forces one).
 * bf16 fragments are loaded by wmma.load in PTX with the .shared state space spelled out (wmma_ld_*_bf16
 * below): for bf16, nvcc 13.0 emits load_matrix_sync as a generic-address wmma.load, which ptxas lowers to
 * plain shared loads and MOVM transposes instead of ldmatrix.
 * Measured: W3 bf16 41.4% / f16 43.1% of cuBLAS at 8192^3 on the H100 (2026-11-24).
 * History (measurements, the bf16 load fix): docs/architecture.md, "The pre-Hopper tensor-core rungs".
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

/* A bf16 fragment from shared memory. nvcc 13.0 turns load_matrix_sync for bf16 into a wmma.load with a
 * generic address (for f16 it writes wmma.load...shared), and ptxas lowers that to plain shared loads and
 * MOVM transposes instead of ldmatrix (lab/mmapeak.sh's SASS census: 64 MOVM, 0 LDSM in the rung's
 * k loop, 1.97 instructions per HMMA; f16 32 LDSM, 0 MOVM, 1.49). So bf16 issues the same WMMA instruction
 * in PTX with the .shared state space spelled out: the fragment's four registers in the order the builtin
 * fills them (the PTX fragment is the API's fragment), and ptxas emits ldmatrix as for f16. */
template <class F> __device__ __forceinline__ void wmma_ld_a_bf16(F &f, uint32_t addr, unsigned ldm) {
  uint32_t *r = reinterpret_cast<uint32_t *>(&f.x[0]);
  asm volatile("wmma.load.a.sync.aligned.row.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr), "r"(ldm));
}
template <class F> __device__ __forceinline__ void wmma_ld_b_bf16(F &f, uint32_t addr, unsigned ldm) {
  uint32_t *r = reinterpret_cast<uint32_t *>(&f.x[0]);
  asm volatile("wmma.load.b.sync.aligned.row.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr), "r"(ldm));
}
static_assert(sizeof(wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major>) == 16 &&
                  sizeof(wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major>) == 16,
              "a bf16 m16n16k16 operand fragment is the four 32-bit registers wmma.load writes");

template <class C, typename T> struct Frags { // one k16 step of a warp
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[C::FM];
  wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b[C::FN];
};

template <class C, typename T, bool VEC>
__global__ void __launch_bounds__(C::NT, C::MINB) matmul_wmma_kernel(const TcArgs p, int64_t y0, int64_t z0) {
  extern __shared__ __align__(128) unsigned char smem[];
  T *const As = reinterpret_cast<T *>(smem);                                  // [STAGES][BM][LDA]
  T *const Bs = reinterpret_cast<T *>(smem + C::STAGES * C::A_ST); // [STAGES][BK][LDB]
  const uint32_t sA = smem_u32(As), sB = smem_u32(Bs);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;

  const BlockTile<T> bt = block_tile<T, C::BM, C::BN, C::BK, C::GROUP>(p, y0, z0);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[C::FM][C::FN];
#pragma unroll
  for (int i = 0; i < C::FM; ++i)
#pragma unroll
    for (int j = 0; j < C::FN; ++j) wmma::fill_fragment(acc[i][j], 0.f);

  const StageCopy<T, C::BM, C::BN, C::BK, SW_PAD, SW_PAD, C::NT> copier(p, bt, tid); // VEC: per-thread pointers
  auto issue = [&](int kt, int st) {
    if constexpr (VEC) copier.issue(p, bt, kt, sA + st * C::A_ST, sB + st * C::B_ST);
    else load_stage<T, C::BM, C::BN, C::BK, SW_PAD, SW_PAD, C::NT, false>(p, bt, kt, sA + st * C::A_ST, sB + st * C::B_ST, tid);
  };
  auto load = [&](Frags<C, T> &f, int stage, int ks) {
    const T *as = As + stage * (C::A_ST / 2) + (wm * C::WM) * C::LDA + ks * 16;
    const T *bs = Bs + stage * (C::B_ST / 2) + ks * 16 * C::LDB + wn * C::WN;
    if constexpr (std::is_same_v<T, __nv_bfloat16>) { // the same loads, with their state space (above)
#pragma unroll
      for (int i = 0; i < C::FM; ++i) wmma_ld_a_bf16(f.a[i], smem_u32(as + i * 16 * C::LDA), C::LDA);
#pragma unroll
      for (int j = 0; j < C::FN; ++j) wmma_ld_b_bf16(f.b[j], smem_u32(bs + j * 16), C::LDB);
    } else {
#pragma unroll
      for (int i = 0; i < C::FM; ++i) wmma::load_matrix_sync(f.a[i], as + i * 16 * C::LDA, C::LDA);
#pragma unroll
      for (int j = 0; j < C::FN; ++j) wmma::load_matrix_sync(f.b[j], bs + j * 16, C::LDB);
    }
  };
  auto mma = [&](const Frags<C, T> &f) {
#pragma unroll
    for (int i = 0; i < C::FM; ++i)
#pragma unroll
      for (int j = 0; j < C::FN; ++j) wmma::mma_sync(acc[i][j], f.a[i], f.b[j], acc[i][j]);
  };
  k_loop<C::STAGES, 0, C::BK / 16, Frags<C, T>>(bt.ktiles, issue, load, mma); // PIPE 0: step 9's loop
  __syncthreads(); // no warp still reads a stage: the scratch below reuses them

  // each warp: fragment -> its 16x16 f32 scratch -> lane l writes row l/2, columns (l%2)*8 .. +7
  float *const scratch = reinterpret_cast<float *>(smem) + warp * 256;
  void *cb = c_base(p, bt.z, bt.m0, bt.n0);
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
      store_pair(p, cb, r, c, bt.mrem, bt.nrem, v0.x, v0.y);
      store_pair(p, cb, r, c + 2, bt.mrem, bt.nrem, v0.z, v0.w);
      store_pair(p, cb, r, c + 4, bt.mrem, bt.nrem, v1.x, v1.y);
      store_pair(p, cb, r, c + 6, bt.mrem, bt.nrem, v1.z, v1.w);
      __syncwarp(); // the scratch is rewritten by the next fragment
    }
}

// ---------------------------------------------------------------- configurations and launch

// index: block BM x BN x BK, warp WM x WN, stages, min blocks per SM. Shared memory: STAGES * (BM*(BK+8) +
// BK*(BN+8)) * 2 bytes. Measured on an H100 (lab/mma.sh, 2026-11-24, TFLOP/s at 8192^3 / 4096^3, % of
// cuBLAS in the same run): bf16 W0 238 / 222 (30% / 29%), W1 234 / 209, W2 156 / 146; f16 W0 314 / 285 (41% /
// 38%), W1 313 / 278, W2 168 / 155. Dropped, slower everywhere: 128x256x32 3 stages (the default until then;
// bf16 222 / 206, f16 285 / 264), 128x128x32 with warps of 64 x 32 (199 / 186, 307 / 274), 256x128x32 3 stages
// (214 / 200, 275 / 256). Second run (8192^3, cuBLAS bf16 798 / f16 753): W0 236 / 313, W1 230 / 308, W2 155 /
// 167, W3 245 / 327 (31% / 43%: the default since), W4 238 / 310. Third run, bf16
// loads through PTX .shared (cuBLAS 787 / 754): W0 314 / 314, W1 309 / 309, W2 167 / 167, W3 325 / 325, W4 311 /
// 310; no spills (ptxas -v; W1 bf16 spilled 3 words before).
//                BM   BN  BK  WM  WN ST MINB
using W0 = Cfg<128, 128, 32, 64, 64, 4, 2>; // 0: large problems; 4 warps of 64 x 64, 4 stages, 74 KB, 2 per SM
using W1 = Cfg<128, 256, 64, 64, 64, 3, 1>; // 1: 8 warps of 64 x 64, BK 64 (half the barriers), 153 KB
using W2 = Cfg<64, 64, 32, 32, 32, 3, 4>;   // 2: small problems, 28.5 KB
using W3 = Cfg<128, 128, 64, 64, 64, 3, 2>; // 3: W0 with BK 64 and 3 stages, 105 KB, 2 per SM
using W4 = Cfg<128, 128, 32, 64, 64, 5, 2>; // 4: W0 with 5 stages, 92.5 KB, 2 per SM
constexpr int kNCfg = 5, kLarge = 3, kSmall = 2; // W3: measured fastest (header)
using G = Cfg<64, 64, 32, 32, 32, 3, 1>; // operands without 16-byte copies (plain element loads), any size

template <class C, typename T, bool VEC> int launch(const ck_mm_desc *d, const ck_env *env) {
  static ck_devcache raised;
  return launch_tiles<C::BM, C::BN, C::NT, C::SMEM>(d, env, matmul_wmma_kernel<C, T, VEC>, raised);
}

template <typename T> int launch_t(const ck_mm_desc *d, const ck_env *env) {
  if (!ab_vec(d)) return launch<G, T, false>(d, env);
  int cfg = forced_cfg(kNCfg);
  if (cfg < 0) {
    const int64_t sms = env->sm_count > 0 ? env->sm_count : 132;
    cfg = ((d->m + W0::BM - 1) / W0::BM) * ((d->n + W0::BN - 1) / W0::BN) * d->batch >= sms ? kLarge : kSmall;
  }
  switch (cfg) {
  case 1: return launch<W1, T, true>(d, env);
  case 2: return launch<W2, T, true>(d, env);
  case 3: return launch<W3, T, true>(d, env);
  case 4: return launch<W4, T, true>(d, env);
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
