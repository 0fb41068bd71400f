/*
 * ref_common.h — what the C reference harnesses of bench/c/ share: CUDA return-code checks that name the call
 * and exit(1) (these are standalone programs, not library code), the median of timings, and NVLS kept off.
 */
#ifndef REF_COMMON_H
#define REF_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#define CUDA_CHECK(call)                                                                                   \
  do {                                                                                                     \
    cudaError_t e_ = (call);                                                                               \
    if (e_ != cudaSuccess) {                                                                               \
      fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_),    \
              cudaGetErrorName(e_));                                                                       \
      exit(1);                                                                                             \
    }                                                                                                      \
  } while (0)

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static inline float median(float *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_float);
  return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

/* NVLink multicast must stay off on the shared GPU host: set NCCL_NVLS_ENABLE=0 unless the caller set it. */
static inline void nvls_off(void) {
  if (!getenv("NCCL_NVLS_ENABLE") && setenv("NCCL_NVLS_ENABLE", "0", 0) != 0) {
    fprintf(stderr, "setenv(NCCL_NVLS_ENABLE=0) failed\n");
    exit(1);
  }
}

/* A positive integer argument, or exit(1) with a message naming it. */
static inline long arg_long(const char *s, const char *what) {
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (!end || *end || v <= 0) {
    fprintf(stderr, "%s must be a positive integer, got '%s'\n", what, s);
    exit(1);
  }
  return v;
}

#endif
