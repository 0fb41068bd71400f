/*
 * 06_vectorized.cu — matmul ladder, step 6: 16-byte global loads and stores, A transposed in shared memory.
 *
 * Idea: step 5 moved every element with its own 4-byte load, and read A from shared memory down a column
 * (8 scalar loads per thread and step of k). Here each thread fetches its tile elements as float4
 * (LDG.E.128): one float4 of A (4 consecutive k of one row) and one of B (4 consecutive n). A is written
 * into shared memory transposed, As[k][m], so that the 8 values of A a thread needs at step k are
 * contiguous and come in as two LDS.128, like the 8 values of B. Results go out as float4 too (with beta,
 * C is read as float4). Shared-memory bank conflicts remain (the transposing stores, and 16 lanes reading
 * B 32 bytes apart): step 7 removes them.
 * Vector loads need 16-byte alignment: A, B (and their batch strides and leading dims) must be multiples of
 * 4 floats from a 16-byte aligned base. The launcher checks and otherwise instantiates the kernel with
 * VEC = false, which loads the same float4 groups element by element — never refuses a layout. Edge tiles
 * (a block reaching past m or n, or the last k tile) take a guarded path that zero-fills.
 * Changed from step 5: float4 loads/stores, transposed A tile, 128-bit shared loads.
 * Launch: block 256 (1-D), tile 128 x 128 x 8, 8 x 8 results per thread; grid x = row tiles, y = column
 * tiles (capped at 65535), z = batch (capped at 65535); the kernel loops over what the caps cut off.
 * Shared: 8 KB. Limits: none; any m, n, k >= 0.
 * Operands (CK_VF_ROWMAJOR): A [m,k] at a + b*a_bs + i*a_rs + p, B [k,n] at b + b*b_bs + p*b_rs + j,
 * C [m,n] at c + b*c_bs + i*c_rs + j; f32 only.
 */
#include "mm_common.cuh"

using namespace ckmm;

namespace {

// ---------------------------------------------------------------- kernel

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int NT = (BM / TM) * (BN / TN); // 256
static_assert(BM * BK / 4 == NT && BK * BN / 4 == NT, "one float4 of A and one of B per thread per tile");

template <bool VEC> __global__ void __launch_bounds__(NT) matmul_vectorized_kernel(const MmArgsV p) {
  __shared__ __align__(16) float As[BK][BM]; // transposed: As[k][m]
  __shared__ __align__(16) float Bs[BK][BN];
  const int tid = threadIdx.x;
  const int ar = tid / (BK / 4), akq = tid % (BK / 4); // A: row ar, k = akq*4 .. +3
  const int bk = tid / (BN / 4), bn4 = tid % (BN / 4); // B: row bk, n = bn4*4 .. +3
  const int trow = tid / (BN / TN), tcol = tid % (BN / TN);
  const int64_t mt = (p.m + BM - 1) / BM, nt = (p.n + BN - 1) / BN;
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z)
    for (int64_t bx = blockIdx.x; bx < mt; bx += gridDim.x)
      for (int64_t by = blockIdx.y; by < nt; by += gridDim.y) {
        const int64_t m0 = bx * BM, n0 = by * BN;
        const int mrem = (int)(p.m - m0 < BM ? p.m - m0 : BM), nrem = (int)(p.n - n0 < BN ? p.n - n0 : BN);
        const float *Ab = p.a + z * p.a_bs + (m0 + ar) * p.a_rs + akq * 4;
        const float *Bb = p.b + z * p.b_bs + bk * p.b_rs + n0 + bn4 * 4;
        const bool full_mn = mrem == BM && nrem == BN;
        float acc[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
        for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
          const int krem = (int)(p.k - k0 < BK ? p.k - k0 : BK);
          float4 va, vb;
          if (full_mn && krem == BK) { // interior tile: no guards
            va = ld4<VEC>(Ab + k0);
            vb = ld4<VEC>(Bb + k0 * p.b_rs);
          } else {
            va = ld4_guard(Ab + k0, ar < mrem ? krem - akq * 4 : 0);
            vb = ld4_guard(Bb + k0 * p.b_rs, bk < krem ? nrem - bn4 * 4 : 0);
          }
          As[akq * 4 + 0][ar] = va.x; // the transposing stores (bank conflicts: fixed in step 7)
          As[akq * 4 + 1][ar] = va.y;
          As[akq * 4 + 2][ar] = va.z;
          As[akq * 4 + 3][ar] = va.w;
          *reinterpret_cast<float4 *>(&Bs[bk][bn4 * 4]) = vb;
          __syncthreads();
#pragma unroll
          for (int kk = 0; kk < BK; ++kk) {
            float ra[TM], rb[TN];
#pragma unroll
            for (int i = 0; i < TM; i += 4) *reinterpret_cast<float4 *>(&ra[i]) = *reinterpret_cast<const float4 *>(&As[kk][trow * TM + i]);
#pragma unroll
            for (int j = 0; j < TN; j += 4) *reinterpret_cast<float4 *>(&rb[j]) = *reinterpret_cast<const float4 *>(&Bs[kk][tcol * TN + j]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
              for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
          }
          __syncthreads();
        }
        float *Cb = p.c + z * p.c_bs + m0 * p.c_rs + n0;
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const int li = trow * TM + i;
          if (li >= mrem) continue;
#pragma unroll
          for (int j = 0; j < TN; j += 4) {
            const int lj = tcol * TN + j;
            float *cp = Cb + li * p.c_rs + lj;
            if (p.cvec && lj + 4 <= nrem) {
              float4 o;
              if (p.beta == 0.f) {
                o = make_float4(p.alpha * acc[i][j], p.alpha * acc[i][j + 1], p.alpha * acc[i][j + 2], p.alpha * acc[i][j + 3]);
              } else {
                const float4 c = *reinterpret_cast<const float4 *>(cp);
                o = make_float4(p.alpha * acc[i][j] + p.beta * c.x, p.alpha * acc[i][j + 1] + p.beta * c.y,
                                p.alpha * acc[i][j + 2] + p.beta * c.z, p.alpha * acc[i][j + 3] + p.beta * c.w);
              }
              *reinterpret_cast<float4 *>(cp) = o;
            } else {
#pragma unroll
              for (int c = 0; c < 4; ++c)
                if (lj + c < nrem) cp[c] = epi(acc[i][j + c], p.alpha, p.beta, cp + c);
            }
          }
        }
      }
}

} // namespace

// ---------------------------------------------------------------- launcher

extern "C" int ck_matmul_vectorized(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  if (d->dtype != CK_F32) return (int)cudaErrorInvalidValue;
  const MmArgsV p = mm_args_v(d);
  const bool vec = ab_al16(d);
  const dim3 grid = tile_grid(d, BM, BN);
  const auto kern = vec ? matmul_vectorized_kernel<true> : matmul_vectorized_kernel<false>;
  ck_note(env, kern, NT, 0);
  kern<<<grid, NT, 0, (cudaStream_t)env->stream>>>(p);
  return (int)cudaGetLastError();
}
