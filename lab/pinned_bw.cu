// pinned_bw.cu — the reference for cukern's pinned copies (issue 36): cudaMemcpyAsync of 256 MiB between pinned host
// memory and the device, H2D and D2H, median of 10, in GB/s. nvcc -O2 lab/pinned_bw.cu -o /tmp/pinned_bw
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
int main() {
  const size_t bytes = 256u << 20;
  void *h, *d;
  cudaStream_t s;
  cudaEvent_t a, b;
  CK(cudaMallocHost(&h, bytes)); CK(cudaMalloc(&d, bytes)); CK(cudaStreamCreate(&s));
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int dir = 0; dir < 2; ++dir) {
    float t[10];
    for (int r = 0; r < 11; ++r) {
      CK(cudaEventRecord(a, s));
      CK(dir ? cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s) : cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
      CK(cudaEventRecord(b, s)); CK(cudaEventSynchronize(b));
      if (r) CK(cudaEventElapsedTime(&t[r - 1], a, b));
    }
    std::sort(t, t + 10);
    printf("{\"dir\": \"%s\", \"gbps\": %.2f}\n", dir ? "d2h" : "h2d", bytes / (t[5] * 1e-3) / 1e9);
  }
  return 0;
}
