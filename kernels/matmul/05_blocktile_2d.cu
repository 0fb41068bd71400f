/*
 * 05_blocktile_2d.cu — matmul ladder, step 5: each thread computes an 8 x 8 block of C (register blocking).
 *
 * Idea: step 4 reused a B value 8 times; now each step of k loads TM = 8 values of A and TN = 8 values of B
 * from shared memory into registers and does their outer product: 64 FMAs for 16 shared loads (step 4: 8
 * for 9). The block tile grows to 128 x 128, so each element fetched from global memory serves 128 results.
 * The 64 accumulators live in registers: loops over them are fully unrolled with compile-time indices.
 * What is left for the next steps: scalar global loads, A read column-wise from shared memory, and a 4-way
 * bank conflict on B (16 lanes read 8-float-apart addresses).
 * Changed from step 4: 2-D thread tile (8 x 8), block tile 128 x 128, 256 threads.
 * Launch: block 256 (1-D); grid x = row tiles, y = column tiles (capped at 65535), z = batch (capped at
 * 65535); the kernel loops over what the caps cut off. Shared: 8 KB (f32) or 16 KB (f64).
 * Limits: none. Any m, n, k >= 0 (edge tiles zero-filled, stores guarded), batch strides may be 0.
 * Operands (CK_VF_ROWMAJOR): A [m,k] at a + b*a_bs + i*a_rs + p, B [k,n] at b + b*b_bs + p*b_rs + j,
 * C [m,n] at c + b*c_bs + i*c_rs + j; f32 and f64 (accumulated in the operand type).
 */
#include "mm_common.cuh"

using namespace ckmm;

namespace {

// ---------------------------------------------------------------- kernel

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int NT = (BM / TM) * (BN / TN); // 256 threads
constexpr int A_STEP = NT / BK, B_STEP = NT / BN; // rows of a tile loaded per pass
static_assert(NT % BK == 0 && NT % BN == 0 && BM % A_STEP == 0 && BK % B_STEP == 0, "tile load passes");

template <typename T> __global__ void __launch_bounds__(NT) matmul_blocktile_2d_kernel(const MmArgs<T> p) {
  __shared__ T As[BM][BK];
  __shared__ T Bs[BK][BN];
  const int tid = threadIdx.x;
  const int ar = tid / BK, ac = tid % BK, br = tid / BN, bc = tid % BN;
  const int trow = tid / (BN / TN), tcol = tid % (BN / TN); // results: rows trow*TM.., columns tcol*TN..
  const int64_t mt = (p.m + BM - 1) / BM, nt = (p.n + BN - 1) / BN;
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const T *A = p.a + z * p.a_bs, *B = p.b + z * p.b_bs;
    T *C = p.c + z * p.c_bs;
    for (int64_t bx = blockIdx.x; bx < mt; bx += gridDim.x)
      for (int64_t by = blockIdx.y; by < nt; by += gridDim.y) {
        const int64_t m0 = bx * BM, n0 = by * BN;
        // remaining extents as small ints and block-local base pointers keep the guards cheap in registers
        const int mrem = (int)(p.m - m0 < BM ? p.m - m0 : BM), nrem = (int)(p.n - n0 < BN ? p.n - n0 : BN);
        const T *Ab = A + m0 * p.a_rs + ac, *Bb = B + n0 + bc;
        T acc[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] = 0;
        for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
          const int krem = (int)(p.k - k0 < BK ? p.k - k0 : BK);
#pragma unroll
          for (int r = 0; r < BM; r += A_STEP)
            As[ar + r][ac] = (ar + r < mrem && ac < krem) ? Ab[(ar + r) * p.a_rs + k0] : T(0);
#pragma unroll
          for (int r = 0; r < BK; r += B_STEP)
            Bs[br + r][bc] = (br + r < krem && bc < nrem) ? Bb[(k0 + br + r) * p.b_rs] : T(0);
          __syncthreads();
#pragma unroll
          for (int kk = 0; kk < BK; ++kk) {
            T ra[TM], rb[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) ra[i] = As[trow * TM + i][kk];
#pragma unroll
            for (int j = 0; j < TN; ++j) rb[j] = Bs[kk][tcol * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
              for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
          }
          __syncthreads();
        }
        T *Cb = C + m0 * p.c_rs + n0;
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const int li = trow * TM + i;
          if (li >= mrem) continue;
#pragma unroll
          for (int j = 0; j < TN; ++j) {
            const int lj = tcol * TN + j;
            if (lj < nrem) {
              T *cp = Cb + li * p.c_rs + lj;
              *cp = epi(acc[i][j], p.alpha, p.beta, cp);
            }
          }
        }
      }
  }
}

} // namespace

// ---------------------------------------------------------------- launcher

extern "C" int ck_matmul_blocktile_2d(const void *desc, const ck_env *env) {
  return launch_f32_f64(desc, env, matmul_blocktile_2d_kernel<float>, matmul_blocktile_2d_kernel<double>, BM, BN,
                        dim3(NT));
}
