// lab/fft_r8_probe.cu — issue 35: FFT rung 4 (radix8) on batched c64 lines of 8..4096, 2^28 elements per length,
// timed beside cuFFT in the same process, each output checked against cuFFT's (max |d| / max |ref| over the first
// 2^24). It calls the rung's launcher (ck_fft_radix8, from the file R8_FILE, kernels/fft/04_radix8.cu unless set)
// with a bare ck_env, so any form of the rung with that entry point can be A/B'd on one GPU:
//   nvcc -O3 -std=c++17 -arch=sm_90a -Ikernels --expt-relaxed-constexpr [-DR8_SWZ=0] [-DR8_FILE='"fft/old.inc"'] \
//     -o /tmp/r8 lab/fft_r8_probe.cu -lcufft
// Session 8's knobs (R8_MINB, R8_TWP2: the register cap, the twiddle's quotient) still apply; session 11 added
// R8_SWZ (the shared buffer's swizzle) and the rung's compile-time lengths.
#include <cufft.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>

#ifndef R8_FILE
#define R8_FILE "fft/04_radix8.cu"
#endif
#include R8_FILE
#include "probe_time.cuh"

#define CF(x) do { cufftResult r_ = (x); if (r_ != CUFFT_SUCCESS) { printf("cuFFT %d line %d\n", (int)r_, __LINE__); exit(1); } } while (0)

/* uniform in [-0.5, 0.5) from a hash of the index (no host arrays of 2 GB) */
__global__ void fill_kernel(float2 *x, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x[i] = make_float2((float)(z & 0xffffff) / 16777216.0f - 0.5f, (float)((z >> 24) & 0xffffff) / 16777216.0f - 0.5f);
  }
}


int main() {
  const int64_t total = (int64_t)1 << 28;
  float2 *x, *y, *ref;
  CK(cudaMalloc(&x, total * 8));
  CK(cudaMalloc(&y, total * 8));
  CK(cudaMalloc(&ref, total * 8));
  fill_kernel<<<4096, 256>>>(x, total);
  CK(cudaGetLastError());
#ifndef R8_SWZ
#define R8_SWZ -1
#endif
  printf("radix8 probe: %s, R8_MINB %d, R8_TWP2 %d, R8_SWZ %d\n", R8_FILE, R8_MINB, R8_TWP2, R8_SWZ);
  const int64_t chk = (int64_t)1 << 24; /* the first 2^24 outputs are compared */
  std::vector<float2> hy(chk), hr(chk);
  ck_env env = {};
  for (int n = 8; n <= 4096; n *= 2) {
    const int64_t outer = total / n;
    cufftHandle plan;
    int nn[1] = {n};
    CF(cufftPlanMany(&plan, 1, nn, nullptr, 1, n, nullptr, 1, n, CUFFT_C2C, (int)outer));
    CF(cufftExecC2C(plan, (cufftComplex *)x, (cufftComplex *)ref, CUFFT_FORWARD));
    const float tc = probe_ms([&] { CF(cufftExecC2C(plan, (cufftComplex *)x, (cufftComplex *)y, CUFFT_FORWARD)); });
    ck_fft_desc d = {};
    d.kind = CK_FFT_C2C, d.outer = outer, d.n = n, d.inner = 1, d.scale = 1, d.x = x, d.out = y;
    auto run = [&] { CK((cudaError_t)ck_fft_radix8(&d, &env)); };
    CK(cudaMemset(y, 0xff, total * 8));
    run();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hy.data(), y, chk * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hr.data(), ref, chk * 8, cudaMemcpyDeviceToHost));
    double dmax = 0, rmax = 0;
    for (int64_t i = 0; i < chk; ++i) {
      dmax = std::max(dmax, (double)std::max(fabsf(hy[i].x - hr[i].x), fabsf(hy[i].y - hr[i].y)));
      rmax = std::max(rmax, (double)std::max(fabsf(hr[i].x), fabsf(hr[i].y)));
    }
    const float tr = probe_ms(run);
    printf("  n=%4d x %9lld: cuFFT %.3f ms, radix8 %.3f ms = %5.1f%% of cuFFT, err %.1e%s\n", n, (long long)outer, tc,
           tr, 100 * tc / tr, dmax / rmax, dmax / rmax < 1e-5 ? "" : " BAD");
    CF(cufftDestroy(plan));
  }
  return 0;
}
