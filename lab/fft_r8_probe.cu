// lab/fft_r8_probe.cu — issue 35: FFT rung 4 (radix8) runs batched c64 lines of 256..4096 at 39-61% of cuFFT on an
// H100 with 96 registers a thread (two blocks of 256 threads an SM, one of 512: little memory in flight). This
// times the rung's kernel (kernels/fft/04_radix8.cu, included) as built with its knobs, against cuFFT in the same
// process, on 2^28 c64 elements per case, each output checked against cuFFT's first (max |d| / max |ref|).
//   for m in 1 2 3; do for t in 0 1; do nvcc -O3 -std=c++17 -arch=sm_90a -Ikernels --expt-relaxed-constexpr \
//     -DR8_MINB=$m -DR8_TWP2=$t -o /tmp/r8_$m$t lab/fft_r8_probe.cu -lcufft; done; done
//   R8_MINB: __launch_bounds__'s minimum blocks an SM (1: rung as built, 96 registers); R8_TWP2: 1 = the twiddle's
//   quotient in float (exact: the divisor is a power of two), 0 = in double.
#include <cufft.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>

#include "fft/04_radix8.cu"
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
  int regs = 0;
  {
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, fft_radix8_kernel<float>));
    regs = fa.numRegs;
  }
  printf("radix8 probe: R8_MINB %d, R8_TWP2 %d, %d registers\n", R8_MINB, R8_TWP2, regs);
  const int64_t chk = (int64_t)1 << 24; /* the first 2^24 outputs are compared */
  std::vector<float2> hy(chk), hr(chk);
  for (int n = 256; n <= 4096; n *= 2) {
    const int64_t outer = total / n;
    cufftHandle plan;
    int nn[1] = {n};
    CF(cufftPlanMany(&plan, 1, nn, nullptr, 1, n, nullptr, 1, n, CUFFT_C2C, (int)outer));
    CF(cufftExecC2C(plan, (cufftComplex *)x, (cufftComplex *)ref, CUFFT_FORWARD));
    const float tc = probe_ms([&] { CF(cufftExecC2C(plan, (cufftComplex *)x, (cufftComplex *)y, CUFFT_FORWARD)); });
    const int T = n / 8, F = T >= R8_THREADS ? 1 : R8_THREADS / T;
    const size_t smem = (size_t)F * n * 8;
    const dim3 block(T, F);
    const unsigned grid = grid_for((outer + F - 1) / F, 1);
    int per = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, fft_radix8_kernel<float>, T * F, smem));
    auto run = [&] { fft_radix8_kernel<float><<<grid, block, smem>>>(x, y, outer, n, -1, 1.0f); };
    CK(cudaMemset(y, 0xff, total * 8));
    run();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hy.data(), y, chk * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hr.data(), ref, chk * 8, cudaMemcpyDeviceToHost));
    double dmax = 0, rmax = 0;
    for (int64_t i = 0; i < chk; ++i) {
      dmax = std::max(dmax, (double)std::max(fabsf(hy[i].x - hr[i].x), fabsf(hy[i].y - hr[i].y)));
      rmax = std::max(rmax, (double)std::max(fabsf(hr[i].x), fabsf(hr[i].y)));
    }
    const float tr = probe_ms(run);
    printf("  n=%4d x %8lld: cuFFT %.3f ms, radix8 %.3f ms = %5.1f%% of cuFFT (%d blocks of %d an SM), err %.1e%s\n", n,
           (long long)outer, tc, tr, 100 * tc / tr, per, T * F, dmax / rmax, dmax / rmax < 1e-5 ? "" : " BAD");
    CF(cufftDestroy(plan));
  }
  return 0;
}
