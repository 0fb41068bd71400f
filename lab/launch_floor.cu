// launch_floor.cu — host time per kernel launch on this machine, the floor under every small op:
// an empty kernel and a 16-element fill issued in a loop (then one sync), through the runtime
// (<<<>>> and cudaLaunchKernel) and the driver (cuLaunchKernel via the runtime's entry point), and a
// CUDA graph of 20 launches replayed. Median of 9 rounds of 20000 launches. Build: nvcc -O2 -arch=sm_90.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

__global__ void empty_kernel() {}
__global__ void fill16(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

#define CHK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

template <class F> double per_launch_us(F f, int n = 20000, int rounds = 9) {
  std::vector<double> t;
  for (int r = 0; r < rounds; ++r) {
    cudaDeviceSynchronize();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) f();
    cudaDeviceSynchronize();
    auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  cudaStream_t s;
  CHK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *d;
  CHK(cudaMalloc(&d, 64));
  cudaDeviceProp prop;
  CHK(cudaGetDeviceProperties(&prop, 0));
  printf("# %s\n", prop.name);
  for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 1, 0, s>>>();
  CHK(cudaStreamSynchronize(s));
  double e1 = per_launch_us([&] { empty_kernel<<<1, 1, 0, s>>>(); });
  double e2 = per_launch_us([&] { fill16<<<1, 32, 0, s>>>(d, 1.f, 16); });
  void *args[] = {&d, nullptr, nullptr};
  float v = 1.f;
  int n = 16;
  args[1] = &v, args[2] = &n;
  double e3 = per_launch_us([&] { cudaLaunchKernel((const void *)fill16, dim3(1), dim3(32), args, 0, s); });
  // driver API
  PFN_cuLaunchKernel_v4000 launch = nullptr;
  cudaDriverEntryPointQueryResult q;
  CHK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", (void **)&launch, 4000, cudaEnableDefault, &q));
  cudaFunction_t fn;
  CHK(cudaGetFuncBySymbol(&fn, (const void *)fill16));
  double e4 = per_launch_us([&] { launch((CUfunction)fn, 1, 1, 1, 32, 1, 1, 0, (CUstream)s, args, nullptr); });
  // graph of 20 fills
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CHK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < 20; ++i) fill16<<<1, 32, 0, s>>>(d, 1.f, 16);
  CHK(cudaStreamEndCapture(s, &g));
  CHK(cudaGraphInstantiate(&ge, g, 0));
  double e5 = per_launch_us([&] { cudaGraphLaunch(ge, s); }, 2000) / 20;
  // the legacy default stream (what a <<<>>> without a stream uses)
  double e6 = per_launch_us([&] { fill16<<<1, 32>>>(d, 1.f, 16); });
  CHK(cudaGetLastError());
  printf("empty kernel <<<>>> (own stream)      %6.2f us/launch\n", e1);
  printf("fill16 <<<>>> (own stream)            %6.2f us/launch\n", e2);
  printf("fill16 cudaLaunchKernel               %6.2f us/launch\n", e3);
  printf("fill16 cuLaunchKernel (driver)        %6.2f us/launch\n", e4);
  printf("fill16 in a 20-node graph             %6.2f us/launch\n", e5);
  printf("fill16 <<<>>> legacy default stream   %6.2f us/launch\n", e6);
  return 0;
}
