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
#include <cuda_runtime.h>
#include <stdint.h>

#include "ck_kernels.h"

namespace {

// ---------------------------------------------------------------- plumbing

template <typename T> struct MmArgs {
  const T *a, *b;
  T *c;
  int64_t batch, m, n, k;
  int64_t a_bs, a_rs, b_bs, b_rs, c_bs, c_rs;
  T alpha, beta;
};

template <typename T> MmArgs<T> mm_args(const ck_mm_desc *d) {
  MmArgs<T> p;
  p.a = (const T *)d->a, p.b = (const T *)d->b, p.c = (T *)d->c;
  p.batch = d->batch, p.m = d->m, p.n = d->n, p.k = d->k;
  p.a_bs = d->a_bs, p.a_rs = d->a_rs, p.b_bs = d->b_bs, p.b_rs = d->b_rs, p.c_bs = d->c_bs, p.c_rs = d->c_rs;
  p.alpha = (T)d->alpha, p.beta = (T)d->beta;
  return p;
}

inline unsigned cap(int64_t v, int64_t lim) { return (unsigned)(v < lim ? v : lim); }

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
          *cp = p.beta == T(0) ? p.alpha * acc : p.alpha * acc + p.beta * *cp; // beta == 0: C is not read
        }
      }
  }
}

template <typename T> void launch(const ck_mm_desc *d, cudaStream_t s) {
  const dim3 block(T_ * T_);
  const dim3 grid(cap((d->m + T_ - 1) / T_, 0x7fffffff), cap((d->n + T_ - 1) / T_, 65535), cap(d->batch, 65535));
  matmul_coalesced_kernel<T><<<grid, block, 0, s>>>(mm_args<T>(d));
}

} // namespace

// ---------------------------------------------------------------- launcher

extern "C" int ck_matmul_coalesced(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  cudaStream_t s = (cudaStream_t)env->stream;
  if (d->dtype == CK_F32) launch<float>(d, s);
  else if (d->dtype == CK_F64) launch<double>(d, s);
  else return (int)cudaErrorInvalidValue;
  return (int)cudaGetLastError();
}
