// segsort_probe.cu — sort rung 7's block shapes (kernels/sort/rows_block.cuh) swept over line lengths, each
// checked against CUB's stable segmented sort of the same keys (idx and values equal, bit for bit) and timed with
// CUDA events (3 warm-ups, the median of 10). A diagnosis for picking 07_rows_block.cu's table, not a benchmark:
// lab/segsort_time.lua times the rung through cukern beside torch.sort.
//   nvcc -O3 -std=c++17 -arch=sm_90a -Ikernels -Ikernels/sort lab/segsort_probe.cu -o /tmp/segsort_probe && /tmp/segsort_probe
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cub/device/device_segmented_sort.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "rows_block.cuh"

#include "probe_time.cuh"

using namespace cksort;

struct Start {
  int64_t len;
  __host__ __device__ int64_t operator()(int64_t l) const { return l * len; }
};

__global__ void keys_kernel(const uint32_t *x, uint32_t *keys, uint32_t *vals, int64_t n, int64_t len) {
  for (int64_t g = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; g < n; g += (int64_t)gridDim.x * blockDim.x) {
    keys[g] = key_of<uint32_t, KIND_FLOAT, 8>(x[g], false);
    vals[g] = (uint32_t)(g % len);
  }
}


struct Case {
  int64_t lines, len;
  uint32_t *x, *out;
  int64_t *idx;
  std::vector<uint32_t> ref_v, ref_x; // CUB's element numbers and the values they name
};

template <int NT, int IPT, int RB> static void probe(Case &c) {
  if ((int64_t)NT * IPT < c.len || (int64_t)NT * IPT > 4 * c.len) return; /* too small, or mostly padding */
  const int64_t n = c.lines * c.len;
  CK(cudaMemset(c.out, 0xff, n * 4));
  CK(cudaMemset(c.idx, 0xff, n * 8));
  auto run = [&] {
    const int e = launch_rows_fused<uint32_t, KIND_FLOAT, 8, NT, IPT, RB>(c.x, c.out, c.idx, c.len, c.len, c.lines, 0, 0);
    CK((cudaError_t)e);
  };
  run();
  CK(cudaDeviceSynchronize());
  std::vector<int64_t> idx(n);
  std::vector<uint32_t> out(n);
  CK(cudaMemcpy(idx.data(), c.idx, n * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(out.data(), c.out, n * 4, cudaMemcpyDeviceToHost));
  int64_t bad = 0;
  for (int64_t g = 0; g < n; ++g) bad += (idx[g] != (int64_t)c.ref_v[g] + 1) || (out[g] != c.ref_x[g]);
  const float ms = probe_ms(run, 0, 3, 10);
  printf("  %7lldx%-5lld NT=%3d IPT=%2d RB=%d  %8.3f ms  %6.1f GB/s (x in, out+idx out)  %s\n", (long long)c.lines,
         (long long)c.len, NT, IPT, RB, ms, n * 16.0 / (ms * 1e6), bad ? "WRONG" : "ok");
  if (bad) printf("    %lld of %lld differ from CUB\n", (long long)bad, (long long)n);
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("segsort probe on %s\n", p.name);
  const int64_t shapes[][2] = {{65536, 1024}, {16384, 4096}, {32768, 2048}, {131072, 512}, {262144, 256},
                               {1048576, 64}, {4194304, 16}};
  for (auto &sh : shapes) {
    Case c;
    c.lines = sh[0];
    c.len = sh[1];
    const int64_t n = c.lines * c.len;
    uint32_t *keys, *keys2, *vals, *vals2;
    CK(cudaMalloc(&c.x, n * 4));
    CK(cudaMalloc(&c.out, n * 4));
    CK(cudaMalloc(&c.idx, n * 8));
    CK(cudaMalloc(&keys, n * 4));
    CK(cudaMalloc(&keys2, n * 4));
    CK(cudaMalloc(&vals, n * 4));
    CK(cudaMalloc(&vals2, n * 4));
    std::vector<uint32_t> hx(n);
    srand(7);
    for (int64_t i = 0; i < n; ++i) {
      float f = (float)rand() / RAND_MAX * 2.0f - 1.0f;
      if (i % 97 == 0) f = (float)(rand() % 5) - 2.0f; // ties
      memcpy(&hx[i], &f, 4);
    }
    CK(cudaMemcpy(c.x, hx.data(), n * 4, cudaMemcpyHostToDevice));
    auto begins = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), Start{c.len});
    size_t tb = 0;
    CK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, tb, keys, keys2, vals, vals2, n, c.lines, begins, begins + 1));
    void *temp;
    CK(cudaMalloc(&temp, tb));
    auto cubrun = [&] {
      keys_kernel<<<4096, 256>>>(c.x, keys, vals, n, c.len);
      CK(cub::DeviceSegmentedSort::StableSortPairs(temp, tb, keys, keys2, vals, vals2, n, c.lines, begins, begins + 1));
    };
    cubrun();
    CK(cudaDeviceSynchronize());
    c.ref_v.resize(n);
    CK(cudaMemcpy(c.ref_v.data(), vals2, n * 4, cudaMemcpyDeviceToHost));
    c.ref_x.resize(n);
    for (int64_t g = 0; g < n; ++g) c.ref_x[g] = hx[(g / c.len) * c.len + c.ref_v[g]];
    printf("  %7lldx%-5lld cub segmented (keys + sort, no gather) %8.3f ms\n", (long long)c.lines, (long long)c.len,
           probe_ms(cubrun, 0, 3, 10));
    probe<32, 1, 4>(c);
    probe<32, 2, 4>(c);
    probe<32, 4, 4>(c);
    probe<64, 4, 4>(c);
    probe<32, 8, 4>(c);
    probe<64, 8, 4>(c);
    probe<128, 4, 4>(c);
    probe<32, 16, 4>(c);
    probe<32, 32, 4>(c);
    probe<64, 16, 4>(c);
    probe<128, 8, 4>(c);
    probe<256, 4, 4>(c);
    probe<128, 8, 6>(c);
    probe<64, 16, 6>(c);
    probe<256, 4, 6>(c);
    probe<128, 16, 4>(c);
    probe<256, 8, 4>(c);
    probe<64, 32, 4>(c);
    probe<256, 16, 4>(c);
    probe<512, 8, 4>(c);
    probe<128, 32, 4>(c);
    probe<256, 16, 6>(c);
    probe<512, 8, 6>(c);
    probe<64, 4, 6>(c);
    probe<64, 8, 6>(c);
    CK(cudaFree(temp));
    CK(cudaFree(c.x));
    CK(cudaFree(c.out));
    CK(cudaFree(c.idx));
    CK(cudaFree(keys));
    CK(cudaFree(keys2));
    CK(cudaFree(vals));
    CK(cudaFree(vals2));
  }
  return 0;
}
