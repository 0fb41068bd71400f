// emu_extra.h (lab/select_emu) — what the index ladder's kernels use beyond lab/issue37_emu/cuda_runtime.h: aligned
// vector types, __grid_constant__, the atomics (std::atomic_ref), and the stream calls of its launchers.
#pragma once
#include <atomic>
#define __align__(n) alignas(n)
#define __grid_constant__
struct uchar4 { unsigned char x, y, z, w; };
template <class T> static inline T atomicAdd(T *p, T v) { return std::atomic_ref<T>(*p).fetch_add(v); }
template <class T> static inline T atomicOr(T *p, T v) { return std::atomic_ref<T>(*p).fetch_or(v); }
template <class T> static inline T atomicCAS(T *p, T cmp, T v) {
  std::atomic_ref<T>(*p).compare_exchange_strong(cmp, v);
  return cmp;
}
static inline int cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t) { std::memset(p, v, n); return 0; }
