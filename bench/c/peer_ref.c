/*
 * peer_ref.c — the C reference for GPU-to-GPU copies: cudaMemcpyPeerAsync between GPU 0 and GPU 1.
 *
 * Why: the floor under any multi-GPU transfer cukern makes (moving an array to another device, the partial
 * sums gathered on GPU 0): what the link gives one copy, each way, without NCCL. Peer access is enabled both
 * ways when the devices allow it (the JSON says "peer":false otherwise: the driver stages the copy through the
 * host). Sizes 1 MiB .. 1 GiB (times 4); per size and direction: 5 warm-up copies, then 20 timed ones, each
 * between two events on a stream of the source GPU; the median is reported.
 *
 *   build/bench/peer_ref [max_MiB]     (default 1024)
 * prints one JSON object per line:
 *   {"variant":"memcpy-peer","src":0,"dst":1,"bytes":B,"ms":t,"gbps":GBps,"peer":true}
 * or {"skip":"needs 2 GPUs"} (exit 0) with fewer than 2 GPUs.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "ref_common.h"

enum { WARMUP = 5, ITERS = 20 };

/* Let `from` access `to`'s memory directly, if the hardware allows; true when it does. */
static int enable_peer(int from, int to) {
  int can = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
  if (!can) return 0;
  CUDA_CHECK(cudaSetDevice(from));
  cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError(); /* clear it: not an error here */
  } else {
    CUDA_CHECK(e);
  }
  return 1;
}

int main(int argc, char **argv) {
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) ndev = 0;
  else CUDA_CHECK(e);
  if (ndev < 2) {
    printf("{\"skip\":\"needs 2 GPUs\"}\n");
    return 0;
  }
  size_t max_bytes = (size_t)(argc > 1 ? arg_long(argv[1], "max_MiB") : 1024) << 20;
  int peer01 = enable_peer(0, 1), peer10 = enable_peer(1, 0);

  void *buf[2];
  cudaStream_t stream[2];
  cudaEvent_t start[2], stop[2];
  for (int g = 0; g < 2; g++) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaMalloc(&buf[g], max_bytes));
    CUDA_CHECK(cudaMemset(buf[g], g, max_bytes));
    CUDA_CHECK(cudaDeviceSynchronize()); /* the memset ran on the legacy stream, which ours do not wait for */
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream[g], cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&start[g]));
    CUDA_CHECK(cudaEventCreate(&stop[g]));
  }

  for (size_t bytes = (size_t)1 << 20; bytes <= max_bytes; bytes *= 4) {
    for (int src = 0; src < 2; src++) {
      int dst = 1 - src;
      CUDA_CHECK(cudaSetDevice(src));
      for (int i = 0; i < WARMUP; i++)
        CUDA_CHECK(cudaMemcpyPeerAsync(buf[dst], dst, buf[src], src, bytes, stream[src]));
      CUDA_CHECK(cudaStreamSynchronize(stream[src]));
      float ms[ITERS];
      for (int i = 0; i < ITERS; i++) {
        CUDA_CHECK(cudaEventRecord(start[src], stream[src]));
        CUDA_CHECK(cudaMemcpyPeerAsync(buf[dst], dst, buf[src], src, bytes, stream[src]));
        CUDA_CHECK(cudaEventRecord(stop[src], stream[src]));
        CUDA_CHECK(cudaEventSynchronize(stop[src]));
        CUDA_CHECK(cudaEventElapsedTime(&ms[i], start[src], stop[src]));
      }
      float t = median(ms, ITERS);
      printf("{\"variant\":\"memcpy-peer\",\"src\":%d,\"dst\":%d,\"bytes\":%zu,\"ms\":%.4f,\"gbps\":%.2f,"
             "\"peer\":%s}\n",
             src, dst, bytes, t, (double)bytes / 1e9 / (t / 1e3), (src == 0 ? peer01 : peer10) ? "true" : "false");
      fflush(stdout);
    }
  }

  for (int g = 0; g < 2; g++) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaEventDestroy(start[g]));
    CUDA_CHECK(cudaEventDestroy(stop[g]));
    CUDA_CHECK(cudaStreamDestroy(stream[g]));
    CUDA_CHECK(cudaFree(buf[g]));
  }
  return 0;
}
