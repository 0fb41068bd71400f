/*
 * nccl_ref.c — the C reference for cukern's all-reduce: NCCL called directly, one process driving every GPU.
 *
 * Why: the numbers cukern's multi-GPU collectives are judged against, without Lua, the binding or dlopen in the
 * way. One process, ncclCommInitAll over the first N GPUs, an in-place f32 sum all-reduce per size (1 MiB ..
 * 1 GiB per GPU): 5 warm-up iterations, then 20 timed ones. Each timed iteration waits for every stream, records
 * an event on GPU 0's stream, launches the group (one ncclAllReduce per GPU inside ncclGroupStart/End), records
 * the stop event on GPU 0's stream and synchronises every stream; the time is the median of the 20.
 * algbw = bytes / time; busbw = algbw * 2 (n - 1) / n (the nccl-tests convention for all-reduce).
 *
 *   build/bench/nccl_ref [ngpus] [max_MiB]     (default: every visible GPU, 1024 MiB)
 * prints one JSON object per line:
 *   {"variant":"nccl-c","gpus":n,"bytes":B,"ms":t,"algbw":GBps,"busbw":GBps,"nccl":version}
 * Links -lnccl directly (a reference, not the library). NCCL_NVLS_ENABLE=0 unless already set.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "ref_common.h"

#define NCCL_CHECK(call)                                                                                     \
  do {                                                                                                       \
    ncclResult_t r_ = (call);                                                                                \
    if (r_ != ncclSuccess) {                                                                                 \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(r_));          \
      exit(1);                                                                                               \
    }                                                                                                        \
  } while (0)

enum { WARMUP = 5, ITERS = 20, MAXG = 64 };

static int n;
static ncclComm_t comms[MAXG];
static cudaStream_t streams[MAXG];
static float *bufs[MAXG];

static void sync_all(void) {
  for (int g = 0; g < n; g++) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaStreamSynchronize(streams[g]));
  }
}

static void all_reduce(size_t count) {
  NCCL_CHECK(ncclGroupStart());
  for (int g = 0; g < n; g++)
    NCCL_CHECK(ncclAllReduce(bufs[g], bufs[g], count, ncclFloat32, ncclSum, comms[g], streams[g]));
  NCCL_CHECK(ncclGroupEnd());
}

int main(int argc, char **argv) {
  nvls_off();
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) ndev = 0;
  else CUDA_CHECK(e);
  n = argc > 1 ? (int)arg_long(argv[1], "ngpus") : ndev;
  size_t max_bytes = (size_t)(argc > 2 ? arg_long(argv[2], "max_MiB") : 1024) << 20;
  if (ndev < 1) {
    printf("{\"skip\":\"no GPU\"}\n");
    return 0;
  }
  if (n > ndev || n > MAXG) {
    fprintf(stderr, "asked for %d GPUs; %d visible (at most %d)\n", n, ndev, MAXG);
    return 1;
  }
  int version = 0;
  NCCL_CHECK(ncclGetVersion(&version));

  int devs[MAXG];
  for (int g = 0; g < n; g++) devs[g] = g;
  NCCL_CHECK(ncclCommInitAll(comms, n, devs));
  for (int g = 0; g < n; g++) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams[g], cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc((void **)&bufs[g], max_bytes));
    CUDA_CHECK(cudaMemset(bufs[g], 0, max_bytes)); /* zeros stay zeros under repeated sums: no inf/NaN */
    CUDA_CHECK(cudaDeviceSynchronize()); /* the memset ran on the legacy stream, which ours do not wait for */
  }
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));

  for (size_t bytes = (size_t)1 << 20; bytes <= max_bytes; bytes *= 4) {
    size_t count = bytes / sizeof(float);
    for (int i = 0; i < WARMUP; i++) all_reduce(count);
    sync_all();
    float ms[ITERS];
    for (int i = 0; i < ITERS; i++) {
      sync_all();
      CUDA_CHECK(cudaSetDevice(0));
      CUDA_CHECK(cudaEventRecord(start, streams[0]));
      all_reduce(count);
      CUDA_CHECK(cudaSetDevice(0));
      CUDA_CHECK(cudaEventRecord(stop, streams[0]));
      sync_all();
      CUDA_CHECK(cudaEventElapsedTime(&ms[i], start, stop));
    }
    float t = median(ms, ITERS);
    double algbw = (double)bytes / 1e9 / (t / 1e3);
    double busbw = algbw * 2.0 * (n - 1) / n;
    printf("{\"variant\":\"nccl-c\",\"gpus\":%d,\"bytes\":%zu,\"ms\":%.4f,\"algbw\":%.2f,\"busbw\":%.2f,\"nccl\":%d}\n",
           n, bytes, t, algbw, busbw, version);
    fflush(stdout);
  }

  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  for (int g = 0; g < n; g++) {
    NCCL_CHECK(ncclCommDestroy(comms[g]));
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaFree(bufs[g]));
    CUDA_CHECK(cudaStreamDestroy(streams[g]));
  }
  return 0;
}
