// lab/probe_time.cuh — what the standalone probes share (lab/segsort_probe.cu, scan_lookback_probe.cu,
// fft_r8_probe.cu): a CUDA check that exits with the line, and the median time of f() in milliseconds by CUDA
// events on `stream` (warm-ups first; the events are destroyed again).
#ifndef CK_LAB_PROBE_TIME_CUH
#define CK_LAB_PROBE_TIME_CUH

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>

#define CK(x)                                                                                                      \
  do {                                                                                                             \
    cudaError_t e_ = (x);                                                                                          \
    if (e_ != cudaSuccess) {                                                                                       \
      printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);                                   \
      exit(1);                                                                                                     \
    }                                                                                                              \
  } while (0)

template <class F> static float probe_ms(F &&f, cudaStream_t stream = 0, int warmup = 3, int reps = 15) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < warmup; ++i) f();
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(a, stream));
    f();
    CK(cudaEventRecord(b, stream));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return t[t.size() / 2];
}

#endif
