/*
 * la_aux.cu — the linalg layer's two small kernels, launched from its cuSOLVER launcher (src/linalg/la_cuda.c):
 *   tri:  zero one strict triangle of a batch of column-major matrices (and optionally set a unit diagonal): the
 *         other triangle that potrf leaves as it was, L and U out of getrf's packed LU, R out of geqrf's result.
 *         Why a kernel: LAPACK's lacpy/laset have no cuSOLVER counterpart for a batch; one pass, one launch.
 *   ptrs: the device pointer arrays cuBLAS's batched getrf/getrs take, computed on the device (no host staging,
 *         so the call can be recorded in a graph).
 * Launch: tri, 256 threads over the elements of each matrix (grid y = batch entries, at most 65535 per launch,
 * more in a loop); ptrs, 256 threads over the pointers.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "../ck_kernels.h"
#include "linalg.h"

namespace {

/* 0 and 1 of a real or complex (float2/double2: re, im) element */
template <typename T> __device__ __forceinline__ T la_zero() { return T(0); }
template <typename T> __device__ __forceinline__ T la_one() { return T(1); }
template <> __device__ __forceinline__ float2 la_zero<float2>() { return make_float2(0.f, 0.f); }
template <> __device__ __forceinline__ float2 la_one<float2>() { return make_float2(1.f, 0.f); }
template <> __device__ __forceinline__ double2 la_zero<double2>() { return make_double2(0., 0.); }
template <> __device__ __forceinline__ double2 la_one<double2>() { return make_double2(1., 0.); }

template <typename T>
__global__ void __launch_bounds__(256) la_tri_kernel(T *a, int64_t sa, int m, int n, int lda, bool keep_lower,
                                                     bool unit, int64_t b0) {
  T *x = a + (b0 + blockIdx.y) * sa;
  const int64_t total = (int64_t)m * n;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    const int i = (int)(e % m), j = (int)(e / m);
    if (keep_lower ? i < j : i > j) x[i + (int64_t)j * lda] = la_zero<T>();
    else if (unit && i == j) x[i + (int64_t)j * lda] = la_one<T>();
  }
}

__global__ void __launch_bounds__(256) la_ptrs_kernel(void **out, char *base, int64_t stride, int64_t n) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = base + i * stride;
}

template <typename T> int tri(const ck_la_job *j, const ck_env *env) {
  const int64_t total = (int64_t)j->m * j->n;
  if (total == 0 || j->batch == 0) return 0;
  const unsigned gx = (unsigned)((total + 255) / 256 < 1024 ? (total + 255) / 256 : 1024);
  cudaStream_t s = (cudaStream_t)env->stream;
  for (int64_t b0 = 0; b0 < j->batch; b0 += 65535) {
    const unsigned gy = (unsigned)(j->batch - b0 < 65535 ? j->batch - b0 : 65535);
    ck_note(env, la_tri_kernel<T>, 256, 0);
    la_tri_kernel<T><<<dim3(gx, gy), 256, 0, s>>>((T *)j->a, j->sa, j->m, j->n, j->lda, j->uplo == 'L',
                                                  j->diag == 'U', b0);
  }
  return (int)cudaGetLastError();
}

} // namespace

extern "C" int ck_la_tri(const ck_la_job *j, const ck_env *env) {
  switch (j->dtype) {
  case CK_F64: return tri<double>(j, env);
  case CK_C64: return tri<float2>(j, env);
  case CK_C128: return tri<double2>(j, env);
  default: return tri<float>(j, env);
  }
}

extern "C" int ck_la_ptrs(void **out, void *base, int64_t stride_bytes, int64_t n, const ck_env *env) {
  if (n <= 0) return 0;
  ck_note(env, la_ptrs_kernel, 256, 0);
  la_ptrs_kernel<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)env->stream>>>(out, (char *)base, stride_bytes, n);
  return (int)cudaGetLastError();
}
