/*
 * 02_coalesced.cu — matmul ladder, step 2: the same one-thread-per-element kernel, lanes along a row of C.
 *
 * Idea: step 1 gave the 32 lanes of a warp 32 different rows of C. Here a block is 1024 threads in one
 * dimension and thread t owns row t / 32 and column t % 32 of its 32 x 32 tile, so a warp holds 32
 * consecutive columns of one row: at each step of p the warp reads one element of A (a broadcast) and 32
 * consecutive elements of B — one 128-byte transaction instead of 32 — and its stores to C coalesce too.
 * The seed (V2) measured ~8x over V1 for this swap alone. Dividing by the power-of-two 32 costs a shift.
 * Changed from step 1: only the map from thread index to (row, column).
 * Launch: block 1024 (1-D); grid x = row tiles, y = column tiles (capped at 65535), z = batch (capped at
 * 65535); the kernel loops over what the caps cut off.
 * Limits: none. Any m, n, k >= 0 (k == 0 gives C = beta*C), any leading dims, batch strides may be 0.
 * Operands (CK_VF_ROWMAJOR): A [m,k] at a + b*a_bs + i*a_rs + p, B [k,n] at b + b*b_bs + p*b_rs + j,
 * C [m,n] at c + b*c_bs + i*c_rs + j; f32 and f64 (accumulated in the operand type).
 */
#include "mm_common.cuh"

using namespace ckmm;

namespace {

// ---------------------------------------------------------------- kernel

constexpr int T_ = 32; // block edge

template <typename T> __global__ void __launch_bounds__(T_ *T_) matmul_coalesced_kernel(const MmArgs<T> p) {
  const int64_t mt = (p.m + T_ - 1) / T_, nt = (p.n + T_ - 1) / T_;
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const T *A = p.a + z * p.a_bs, *B = p.b + z * p.b_bs;
    T *C = p.c + z * p.c_bs;
    for (int64_t bx = blockIdx.x; bx < mt; bx += gridDim.x)
      for (int64_t by = blockIdx.y; by < nt; by += gridDim.y) {
        const int64_t i = bx * T_ + threadIdx.x / T_; // lanes of a warp: one row ...
        const int64_t j = by * T_ + threadIdx.x % T_; // ... and 32 consecutive columns (coalesced)
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

extern "C" int ck_matmul_coalesced(const void *desc, const ck_env *env) {
  return launch_f32_f64(desc, env, matmul_coalesced_kernel<float>, matmul_coalesced_kernel<double>, T_, T_,
                        dim3(T_ * T_));
}
