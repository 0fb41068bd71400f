/*
 * 04_blocktile_1d.cu — matmul ladder, step 4: each thread computes a column of 8 results (1-D blocktiling).
 *
 * Idea: in step 3 every FMA needs two shared-memory loads, and shared memory, not arithmetic, sets the
 * pace. Give each thread TM = 8 results stacked in one column of C: per step of k it loads one element of
 * B into a register and reuses it for 8 FMAs against 8 elements of A (a broadcast across the warp, since
 * the 32 lanes of a warp share their rows). Shared loads per FMA drop from 2 to 9/8, and the 64 x 64 block
 * tile halves global traffic per result again versus 32 x 32.
 * Changed from step 3: 64 x 64 block tile, BK = 8, 512 threads, 8 results per thread along M.
 * Launch: block 512 (1-D); grid x = row tiles, y = column tiles (capped at 65535), z = batch (capped at
 * 65535); the kernel loops over what the caps cut off. Shared: 4 KB (f32) or 8 KB (f64).
 * Limits: none. Any m, n, k >= 0 (edge tiles zero-filled, stores guarded), batch strides may be 0.
 * Operands (CK_VF_ROWMAJOR): A [m,k] at a + b*a_bs + i*a_rs + p, B [k,n] at b + b*b_bs + p*b_rs + j,
 * C [m,n] at c + b*c_bs + i*c_rs + j; f32 and f64 (accumulated in the operand type).
 */
#include "mm_common.cuh"

using namespace ckmm;

namespace {

// ---------------------------------------------------------------- kernel

constexpr int BM = 64, BN = 64, BK = 8, TM = 8;
constexpr int NT = BM * BN / TM; // 512 threads
static_assert(NT == BM * BK && NT == BK * BN, "one A and one B element per thread per tile");

template <typename T> __global__ void __launch_bounds__(NT) matmul_blocktile_1d_kernel(const MmArgs<T> p) {
  __shared__ T As[BM][BK];
  __shared__ T Bs[BK][BN];
  const int tid = threadIdx.x;
  const int ar = tid / BK, ac = tid % BK; // this thread's element of the A tile
  const int br = tid / BN, bc = tid % BN; // ... and of the B tile
  const int trow = tid / BN, tcol = tid % BN; // results: rows trow*TM .. +TM-1, column tcol
  const int64_t mt = (p.m + BM - 1) / BM, nt = (p.n + BN - 1) / BN;
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const T *A = p.a + z * p.a_bs, *B = p.b + z * p.b_bs;
    T *C = p.c + z * p.c_bs;
    for (int64_t bx = blockIdx.x; bx < mt; bx += gridDim.x)
      for (int64_t by = blockIdx.y; by < nt; by += gridDim.y) {
        const int64_t m0 = bx * BM, n0 = by * BN;
        T acc[TM];
#pragma unroll
        for (int r = 0; r < TM; ++r) acc[r] = 0;
        for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
          As[ar][ac] = (m0 + ar < p.m && k0 + ac < p.k) ? A[(m0 + ar) * p.a_rs + k0 + ac] : T(0);
          Bs[br][bc] = (k0 + br < p.k && n0 + bc < p.n) ? B[(k0 + br) * p.b_rs + n0 + bc] : T(0);
          __syncthreads();
#pragma unroll
          for (int kk = 0; kk < BK; ++kk) {
            const T b = Bs[kk][tcol]; // one B value, reused TM times from a register
#pragma unroll
            for (int r = 0; r < TM; ++r) acc[r] += As[trow * TM + r][kk] * b;
          }
          __syncthreads();
        }
        const int64_t j = n0 + tcol;
        if (j < p.n) {
#pragma unroll
          for (int r = 0; r < TM; ++r) {
            const int64_t i = m0 + trow * TM + r;
            if (i < p.m) {
              T *cp = C + i * p.c_rs + j;
              *cp = epi(acc[r], p.alpha, p.beta, cp);
            }
          }
        }
      }
  }
}

} // namespace

// ---------------------------------------------------------------- launcher

extern "C" int ck_matmul_blocktile_1d(const void *desc, const ck_env *env) {
  return launch_f32_f64(desc, env, matmul_blocktile_1d_kernel<float>, matmul_blocktile_1d_kernel<double>, BM, BN,
                        dim3(NT));
}
