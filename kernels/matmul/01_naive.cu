/*
 * 01_naive.cu — matmul ladder, step 1: one thread per element of C, with the seed's (V1) thread mapping.
 *
 * Idea: C[i,j] = alpha * sum_p A[i,p] * B[p,j] (+ beta * C[i,j]); thread (x, y) of a 32 x 32 block owns
 * row i = blockIdx.x*32 + threadIdx.x and column j = blockIdx.y*32 + threadIdx.y and runs the dot product
 * straight from global memory. Because threadIdx.x varies fastest inside a warp, the 32 lanes of a warp
 * hold 32 different rows and one column: every step of p reads 32 scattered elements of A (one per row, a
 * separate 32-byte sector each) and one element of B (a broadcast), and the final stores go down a column
 * of C. That uncoalesced mapping is the point of this rung — step 2 swaps x and y and nothing else.
 * Changed from step 0 (cuBLAS): everything; this is the textbook starting point.
 * Launch: block 32 x 32; grid x = row tiles, y = column tiles (capped at 65535), z = batch (capped at
 * 65535); the kernel loops over whatever the caps cut off, so every shape fits.
 * Limits: none. Any m, n, k >= 0 (k == 0 gives C = beta*C), any leading dims, batch strides may be 0.
 * Operands (CK_VF_ROWMAJOR): A [m,k] at a + b*a_bs + i*a_rs + p, B [k,n] at b + b*b_bs + p*b_rs + j,
 * C [m,n] at c + b*c_bs + i*c_rs + j; f32 and f64 (accumulated in the operand type, as cuBLAS does).
 */
#include "mm_common.cuh"

using namespace ckmm;

namespace {

// ---------------------------------------------------------------- kernel

constexpr int T_ = 32; // block edge

template <typename T> __global__ void __launch_bounds__(T_ *T_) matmul_naive_kernel(const MmArgs<T> p) {
  const int64_t mt = (p.m + T_ - 1) / T_, nt = (p.n + T_ - 1) / T_;
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const T *A = p.a + z * p.a_bs, *B = p.b + z * p.b_bs;
    T *C = p.c + z * p.c_bs;
    for (int64_t bx = blockIdx.x; bx < mt; bx += gridDim.x)
      for (int64_t by = blockIdx.y; by < nt; by += gridDim.y) {
        const int64_t i = bx * T_ + threadIdx.x; // lanes of a warp: consecutive rows (uncoalesced)
        const int64_t j = by * T_ + threadIdx.y;
        if (i < p.m && j < p.n) {
          T acc = 0;
          for (int64_t q = 0; q < p.k; ++q) acc += A[i * p.a_rs + q] * B[q * p.b_rs + j];
          T *cp = C + i * p.c_rs + j;
          *cp = epi(acc, p.alpha, p.beta, cp); // beta == 0: C is not read
        }
      }
  }
}

} // namespace

// ---------------------------------------------------------------- launcher

extern "C" int ck_matmul_naive(const void *desc, const ck_env *env) {
  return launch_f32_f64(desc, env, matmul_naive_kernel<float>, matmul_naive_kernel<double>, T_, T_, dim3(T_, T_));
}
