/*
 * 07_tuned.cu — matmul ladder, step 7: no shared-memory bank conflicts, BK = 16, tile size by problem size.
 *
 * Idea: step 6 lost shared-memory bandwidth to bank conflicts in two places. (1) The transposing stores of
 * A: lanes holding the same k but rows 128 floats apart hit one bank. The A tile now has rows of BM + 4
 * floats, and the loads are mapped so that a warp covers 16 consecutive rows at two k-quads: the +4 pad
 * shifts the second quad by 16 banks, so the 32 stores of a warp land in 32 banks. (2) Reading B: lanes read
 * 8 floats each at 32-byte steps, 2-way conflicted. Each thread's 8 x 8 results are now two 4 x 4 quads
 * split by half the tile (rows trow*4 + {0, 64}, columns tcol*4 + {0, 64}): a warp's 16 column-lanes read
 * 64 consecutive floats, the minimum two wavefronts for 256 bytes. BK = 16 halves the barriers per FMA,
 * __launch_bounds__(256, 2) holds registers to 128 so two blocks share an SM, and a 64 x 64 tile (4 x 4
 * per thread) is used when 128 x 128 tiles would leave SMs idle (fewer tiles than SMs).
 * Unaligned operands take the VEC = false instantiation (element loads of the same float4 groups); edge
 * tiles take a guarded, zero-filling path.
 * Changed from step 6: padded A tile + conflict-free load/read maps, BK 16, launch bounds, tile by size.
 * Launch: block 256 (1-D); grid x = row tiles, y = column tiles (capped at 65535), z = batch (capped at
 * 65535); the kernel loops over what the caps cut off. Shared: 16.3 KB (128 x 128) or 8.3 KB (64 x 64).
 * Limits: none; any m, n, k >= 0.
 * Operands (CK_VF_ROWMAJOR): A [m,k] at a + b*a_bs + i*a_rs + p, B [k,n] at b + b*b_bs + p*b_rs + j,
 * C [m,n] at c + b*c_bs + i*c_rs + j; f32 only.
 */
#include "mm_common.cuh"

using namespace ckmm;

namespace {

// ---------------------------------------------------------------- kernel

template <int BM_, int BN_, int BK_, int TM_, int TN_> struct Cfg {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int TRM = BM / TM, TRN = BN / TN, NT = TRM * TRN; // threads along M, N; total
  static constexpr int KQ = BK / 4, AP = BM + 4;                     // k-quads per row; padded A row
  static constexpr int LA = BM * BK / 4 / NT, LB = BK * BN / 4 / NT; // float4 loads per thread
  static_assert(NT == 256, "launch bounds assume 256 threads");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0 && BM % 16 == 0, "quads");
  static_assert(LA * NT * 4 == BM * BK && LB * NT * 4 == BK * BN, "whole float4 loads per thread");
};
using Big = Cfg<128, 128, 16, 8, 8>;
using Small = Cfg<64, 64, 16, 4, 4>;

template <class C, bool VEC> __global__ void __launch_bounds__(256, 2) matmul_tuned_kernel(const MmArgsV p) {
  __shared__ __align__(16) float As[C::BK][C::AP]; // transposed and padded: As[k][m]
  __shared__ __align__(16) float Bs[C::BK][C::BN];
  const int tid = threadIdx.x;
  // A loads: a warp covers 16 consecutive rows x 2 k-quads (conflict-free transposing stores, see header)
  int arow[C::LA], akq[C::LA], bk[C::LB], bn4[C::LB];
#pragma unroll
  for (int l = 0; l < C::LA; ++l) {
    const int e = tid + l * C::NT;
    arow[l] = e % 16 + 16 * (e / (16 * C::KQ)), akq[l] = (e / 16) % C::KQ;
  }
#pragma unroll
  for (int l = 0; l < C::LB; ++l) {
    const int e = tid + l * C::NT;
    bk[l] = e / (C::BN / 4), bn4[l] = e % (C::BN / 4);
  }
  const int trow = tid / C::TRN, tcol = tid % C::TRN; // quads at rows trow*4 + i*TRM*4, cols tcol*4 + j*TRN*4
  const int64_t mt = (p.m + C::BM - 1) / C::BM, nt = (p.n + C::BN - 1) / C::BN;
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z)
    for (int64_t bx = blockIdx.x; bx < mt; bx += gridDim.x)
      for (int64_t by = blockIdx.y; by < nt; by += gridDim.y) {
        const int64_t m0 = bx * C::BM, n0 = by * C::BN;
        const int mrem = (int)(p.m - m0 < C::BM ? p.m - m0 : C::BM);
        const int nrem = (int)(p.n - n0 < C::BN ? p.n - n0 : C::BN);
        const float *Ab = p.a + z * p.a_bs + m0 * p.a_rs, *Bb = p.b + z * p.b_bs + n0;
        const bool full_mn = mrem == C::BM && nrem == C::BN;
        float acc[C::TM][C::TN];
#pragma unroll
        for (int i = 0; i < C::TM; ++i)
#pragma unroll
          for (int j = 0; j < C::TN; ++j) acc[i][j] = 0.f;
        for (int64_t k0 = 0; k0 < p.k; k0 += C::BK) {
          const int krem = (int)(p.k - k0 < C::BK ? p.k - k0 : C::BK);
          float4 va[C::LA], vb[C::LB];
          if (full_mn && krem == C::BK) {
#pragma unroll
            for (int l = 0; l < C::LA; ++l) va[l] = ld4<VEC>(Ab + arow[l] * p.a_rs + k0 + akq[l] * 4);
#pragma unroll
            for (int l = 0; l < C::LB; ++l) vb[l] = ld4<VEC>(Bb + (k0 + bk[l]) * p.b_rs + bn4[l] * 4);
          } else {
#pragma unroll
            for (int l = 0; l < C::LA; ++l)
              va[l] = ld4_guard(Ab + arow[l] * p.a_rs + k0 + akq[l] * 4, arow[l] < mrem ? krem - akq[l] * 4 : 0);
#pragma unroll
            for (int l = 0; l < C::LB; ++l)
              vb[l] = ld4_guard(Bb + (k0 + bk[l]) * p.b_rs + bn4[l] * 4, bk[l] < krem ? nrem - bn4[l] * 4 : 0);
          }
#pragma unroll
          for (int l = 0; l < C::LA; ++l) {
            As[akq[l] * 4 + 0][arow[l]] = va[l].x;
            As[akq[l] * 4 + 1][arow[l]] = va[l].y;
            As[akq[l] * 4 + 2][arow[l]] = va[l].z;
            As[akq[l] * 4 + 3][arow[l]] = va[l].w;
          }
#pragma unroll
          for (int l = 0; l < C::LB; ++l) *reinterpret_cast<float4 *>(&Bs[bk[l]][bn4[l] * 4]) = vb[l];
          __syncthreads();
#pragma unroll
          for (int kk = 0; kk < C::BK; ++kk) {
            float ra[C::TM], rb[C::TN];
#pragma unroll
            for (int i = 0; i < C::TM / 4; ++i)
              *reinterpret_cast<float4 *>(&ra[4 * i]) = *reinterpret_cast<const float4 *>(&As[kk][trow * 4 + i * C::TRM * 4]);
#pragma unroll
            for (int j = 0; j < C::TN / 4; ++j)
              *reinterpret_cast<float4 *>(&rb[4 * j]) = *reinterpret_cast<const float4 *>(&Bs[kk][tcol * 4 + j * C::TRN * 4]);
#pragma unroll
            for (int i = 0; i < C::TM; ++i)
#pragma unroll
              for (int j = 0; j < C::TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
          }
          __syncthreads();
        }
        float *Cb = p.c + z * p.c_bs + m0 * p.c_rs + n0;
        store_quads<C::TM, C::TN, C::TRM * 4, C::TRN * 4>(Cb, acc, trow * 4, tcol * 4, mrem, nrem, p);
      }
}

template <class C> void launch(const ck_mm_desc *d, const MmArgsV &p, bool vec, const ck_env *env) {
  const dim3 grid = tile_grid(d, C::BM, C::BN);
  const auto kern = vec ? matmul_tuned_kernel<C, true> : matmul_tuned_kernel<C, false>;
  ck_note(env, kern, C::NT, 0);
  kern<<<grid, C::NT, 0, (cudaStream_t)env->stream>>>(p);
}

} // namespace

// ---------------------------------------------------------------- launcher

extern "C" int ck_matmul_tuned(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  if (d->dtype != CK_F32) return (int)cudaErrorInvalidValue;
  const MmArgsV p = mm_args_v(d);
  const bool vec = ab_al16(d);
  // 128 x 128 tiles unless they would leave SMs idle (one wave of two blocks per SM is 2*sm_count tiles)
  const int64_t big_tiles = ((d->m + 127) / 128) * ((d->n + 127) / 128) * d->batch;
  const int sms = env->sm_count > 0 ? env->sm_count : 132;
  if (big_tiles < sms) launch<Small>(d, p, vec, env);
  else launch<Big>(d, p, vec, env);
  return (int)cudaGetLastError();
}
