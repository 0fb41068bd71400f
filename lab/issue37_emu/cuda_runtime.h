// cuda_runtime.h (lab/issue37_emu) — the little of CUDA the row ladder's kernels (and the tiled elementwise rung,
// lab/ew_tiled_emu.cpp) use, on the CPU: one OS thread per CUDA thread of a block (1-, 2- or 3-D; blocks one after
// another), std::barrier for __syncthreads and for a warp's shuffles, and emu_launch for the <<<...>>> that the
// drivers rewrite. Globals are inline variables: the kernels' inline templates are
// merged across object files, and they must all see the same threadIdx and barriers.
#pragma once
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>
#include <memory>
struct dim3 { unsigned x, y, z; dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
struct uint3 { unsigned x, y, z; };
inline thread_local uint3 threadIdx;
inline uint3 blockIdx;
inline dim3 blockDim, gridDim;
struct uint4 { unsigned x, y, z, w; };
struct uchar4 { unsigned char x, y, z, w; };
#include <atomic>
template <class T> static inline T atomicAdd(T *p, T v) { return std::atomic_ref<T>(*p).fetch_add(v); }
template <class T> static inline T atomicOr(T *p, T v) { return std::atomic_ref<T>(*p).fetch_or(v); }
template <class T> static inline T atomicCAS(T *p, T cmp, T v) { std::atomic_ref<T>(*p).compare_exchange_strong(cmp, v); return cmp; }
typedef void *cudaStream_t;
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2 };
static inline int cudaGetLastError() { return 0; }
static inline int cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t) { std::memset(p, v, n); return 0; }
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __grid_constant__
#define __shared__ static
static inline float rsqrtf(float x) { return 1.f / std::sqrt(x); }
static inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
static inline float __fdividef(float a, float b) { return a / b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
using std::exp; using std::log; using std::fmax; using std::isfinite; using std::sqrt;
inline std::barrier<> *emu_block_bar;
inline std::barrier<> *emu_warp_bar[32];
inline char emu_xbuf[32][32][16];
static inline void __syncthreads() { emu_block_bar->arrive_and_wait(); }
inline std::atomic<int> emu_and{1};
static inline int __syncthreads_and(int p) { // every thread's p, and-ed (three barriers: post, read, reset)
  if (!p) emu_and = 0;
  __syncthreads();
  const int r = emu_and;
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) emu_and = 1;
  __syncthreads();
  return r;
}
// the warp's shuffles: every lane posts its value, then reads lane src(lane)'s
template <class T, class F> static inline T emu_shfl(T v, F src) {
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  std::memcpy(emu_xbuf[w][lane], &v, sizeof(T));
  emu_warp_bar[w]->arrive_and_wait();
  T r; std::memcpy(&r, emu_xbuf[w][src(lane) & 31], sizeof(T));
  emu_warp_bar[w]->arrive_and_wait();
  return r;
}
// (width w: the warp as 32 / w groups of w lanes; a source is taken within the caller's group, as CUDA does)
template <class T> static inline T __shfl_xor_sync(unsigned, T v, int m, int w = 32) {
  return emu_shfl(v, [m, w](int l) { return (l & ~(w - 1)) | ((l ^ m) & (w - 1)); });
}
template <class T> static inline T __shfl_up_sync(unsigned, T v, int d, int w = 32) {
  return emu_shfl(v, [d, w](int l) { return (l & (w - 1)) >= d ? l - d : l; });
}
template <class T> static inline T __shfl_sync(unsigned, T v, int src, int w = 32) {
  return emu_shfl(v, [src, w](int l) { return (l & ~(w - 1)) | (src & (w - 1)); });
}
template <class T> static inline T __ldcs(const T *p) { return *p; }
template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline void __stcs(T *p, T v) { *p = v; }
template <class K, class... Args> static void emu_launch(K kern, dim3 grid, dim3 block, Args... args) {
  gridDim = grid; blockDim = block;
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      blockIdx = {bx, by, 0};
      const unsigned nt = block.x * block.y * block.z;
      std::barrier<> bb(nt);
      emu_block_bar = &bb;
      std::vector<std::unique_ptr<std::barrier<>>> wb;
      for (unsigned w = 0; w < nt / 32; ++w) { wb.emplace_back(new std::barrier<>(32)); emu_warp_bar[w] = wb.back().get(); }
      std::vector<std::thread> th;
      for (unsigned t = 0; t < nt; ++t)
        th.emplace_back([&, t] { threadIdx = {t % block.x, t / block.x % block.y, t / (block.x * block.y)}; kern(args...); });
      for (auto &x : th) x.join();
    }
}
