/*
 * red_loads.cuh — the building blocks every reduction step shares, split out of red_ops.cuh (the size budget):
 * 16-byte vector loads over an arbitrary (misaligned) range with a scalar head and tail, warp/block shuffle
 * reductions (every accumulator type: floats, the integers of issue 32, (value, index) pairs), coherent loads of
 * partials, and a block's partial-or-output epilogue (put_result). Included by red_ops.cuh after the op types;
 * not on its own.
 */
#ifndef CK_RED_LOADS_CUH
#define CK_RED_LOADS_CUH

namespace ckred {

// ---------------------------------------------------------------- loads and shuffles

/* 16 bytes of T, loaded as one LDG.E.128 (read-only path). */
template <typename T>
struct Vec {
  static constexpr int N = 16 / (int)sizeof(T);
  T e[N];
};
template <typename T>
__device__ __forceinline__ Vec<T> ld_vec(const T *p) {
  const float4 r = __ldg(reinterpret_cast<const float4 *>(p));
  Vec<T> v;
  memcpy(&v, &r, 16);
  return v;
}

__device__ __forceinline__ float shfl_down(float a, int off, int w) { return __shfl_down_sync(0xffffffffu, a, off, w); }
__device__ __forceinline__ double shfl_down(double a, int off, int w) { return __shfl_down_sync(0xffffffffu, a, off, w); }
__device__ __forceinline__ int32_t shfl_down(int32_t a, int off, int w) { return __shfl_down_sync(0xffffffffu, a, off, w); }
__device__ __forceinline__ uint32_t shfl_down(uint32_t a, int off, int w) { return __shfl_down_sync(0xffffffffu, a, off, w); }
__device__ __forceinline__ int64_t shfl_down(int64_t a, int off, int w) { return __shfl_down_sync(0xffffffffu, (long long)a, off, w); }
__device__ __forceinline__ uint64_t shfl_down(uint64_t a, int off, int w) {
  return __shfl_down_sync(0xffffffffu, (unsigned long long)a, off, w);
}
/* the narrow integers travel as ints */
template <typename T, std::enable_if_t<std::is_integral<T>::value && (sizeof(T) < 4), int> = 0>
__device__ __forceinline__ T shfl_down(T a, int off, int w) { return (T)__shfl_down_sync(0xffffffffu, (int)a, off, w); }
template <typename T>
__device__ __forceinline__ Pair<T> shfl_down(Pair<T> a, int off, int w) {
  return Pair<T>{shfl_down(a.v, off, w), shfl_down(a.i, off, w)};
}

/* Coherent (L2) loads, for partials written by other blocks of the same launch. */
__device__ __forceinline__ float ld_cg(const float *p) { return __ldcg(p); }
__device__ __forceinline__ double ld_cg(const double *p) { return __ldcg(p); }
__device__ __forceinline__ int32_t ld_cg(const int32_t *p) { return __ldcg(p); }
__device__ __forceinline__ uint32_t ld_cg(const uint32_t *p) { return __ldcg(p); }
__device__ __forceinline__ int64_t ld_cg(const int64_t *p) { return __ldcg((const long long *)p); }
__device__ __forceinline__ uint64_t ld_cg(const uint64_t *p) { return __ldcg((const unsigned long long *)p); }
template <typename T, std::enable_if_t<std::is_integral<T>::value && (sizeof(T) < 4), int> = 0>
__device__ __forceinline__ T ld_cg(const T *p) { return *(const volatile T *)p; }
template <typename T>
__device__ __forceinline__ Pair<T> ld_cg(const Pair<T> *p) { return Pair<T>{ld_cg(&p->v), ld_cg(&p->i)}; }

/* Reduce over groups of `width` consecutive lanes (width a power of two <= 32); lane 0 of each group holds it.
 * All 32 lanes of the warp must call it. */
template <class O>
__device__ __forceinline__ typename O::acc_t warp_reduce(typename O::acc_t a, int width = 32) {
  for (int off = width >> 1; off > 0; off >>= 1) a = O::combine(a, shfl_down(a, off, width));
  return a;
}

/* Shuffle reduction of a whole block of BS threads; thread 0 gets the result. Uses BS/32 acc_t of shared
 * memory; callers __syncthreads() before reusing it. */
template <class O, int BS>
__device__ __forceinline__ typename O::acc_t block_reduce(typename O::acc_t a) {
  static_assert(BS % 32 == 0 && BS <= 1024, "block size");
  using acc_t = typename O::acc_t;
  __shared__ acc_t warp_part[BS / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  a = warp_reduce<O>(a);
  if constexpr (BS == 32) return a;
  if (lane == 0) warp_part[warp] = a;
  __syncthreads();
  if (warp == 0) {
    a = lane < BS / 32 ? warp_part[lane] : O::identity();
    a = warp_reduce<O>(a, BS / 32 >= 2 ? BS / 32 : 2);
  }
  return a;
}

/* Fold elements [beg, end) of one row (x = the row's first element) into a, threads t = 0..nt-1 of a group.
 * 16-byte vector loads for the aligned body (U of them in flight per thread), scalars for the misaligned
 * head and the tail, so any start address and any length work. Positions passed to make() are row
 * positions. Each of the U vectors folds into its own accumulator: one accumulator would chain all U*N
 * combines, and with in-order issue the next trip's loads would wait behind that chain. */
template <class O, int U>
__device__ __forceinline__ typename O::acc_t fold_range_vec(const typename O::value_t *__restrict__ x, int64_t beg,
                                                            int64_t end, int t, int nt, typename O::acc_t a) {
  using T = typename O::value_t;
  using acc_t = typename O::acc_t;
  constexpr int N = Vec<T>::N;
  if (end <= beg) return a;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(x + beg);
  int64_t head = (int64_t)(((16u - (unsigned)(addr & 15u)) & 15u) / sizeof(T));
  if (head > end - beg) head = end - beg;
  for (int64_t j = beg + t; j < beg + head; j += nt) a = O::combine(a, O::make(x[j], j)); /* nt may be < head */
  const int64_t vbeg = beg + head;
  const int64_t nvec = (end - vbeg) / N;
  const T *const vp = x + vbeg;
  acc_t acc[U];
  acc[0] = a;
#pragma unroll
  for (int u = 1; u < U; ++u) acc[u] = O::identity();
  /* The body walks a pointer (no 64-bit index products in the loop: registers decide occupancy here);
   * positions are derived from it only for the indexed ops. */
  const T *p = vp + (int64_t)t * N;
  const int64_t step = (int64_t)nt * N;
  if (nvec > (int64_t)(U - 1) * nt) {
    /* Unpredicated main loop: U loads issued back to back, then used. */
    const T *const stop = vp + (nvec - (int64_t)(U - 1) * nt) * N; /* p < stop: all U vectors exist */
    for (; p < stop; p += U * step) {
      Vec<T> r[U];
#pragma unroll
      for (int u = 0; u < U; ++u) r[u] = ld_vec(p + u * step);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t pos = O::indexed ? vbeg + (p - vp) + u * step : 0;
#pragma unroll
        for (int j = 0; j < N; ++j) acc[u] = O::combine(acc[u], O::make(r[u].e[j], pos + j));
      }
    }
  }
  /* Remainder (fewer than U vectors left for this thread): still all loads first, predicated. */
  const T *const vend = vp + nvec * N;
  if (p < vend) {
    Vec<T> r[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (p + u * step < vend) r[u] = ld_vec(p + u * step);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (p + u * step < vend) {
        const int64_t pos = O::indexed ? vbeg + (p - vp) + u * step : 0;
#pragma unroll
        for (int j = 0; j < N; ++j) acc[u] = O::combine(acc[u], O::make(r[u].e[j], pos + j));
      }
    }
  }
  for (int64_t j = vbeg + nvec * N + t; j < end; j += nt) acc[0] = O::combine(acc[0], O::make(x[j], j));
#pragma unroll
  for (int u = 1; u < U; ++u) acc[0] = O::combine(acc[0], acc[u]);
  return acc[0];
}

/* Fold partial accumulators p[beg, end) into one per thread, two loads in flight per trip (a plain loop
 * waits a full L2 round trip per element; unrolling it further costs ~18 registers kernel-wide). COHERENT:
 * read through L2 (partials written by other blocks of the same launch). */
template <class O, bool COHERENT>
__device__ __forceinline__ typename O::acc_t fold_partials(const typename O::acc_t *p, int64_t beg, int64_t end,
                                                           int t, int nt) {
  typename O::acc_t a0 = O::identity(), a1 = O::identity();
  int64_t j = beg + t;
  for (; j + nt < end; j += 2 * (int64_t)nt) {
    const typename O::acc_t x0 = COHERENT ? ld_cg(p + j) : p[j];
    const typename O::acc_t x1 = COHERENT ? ld_cg(p + j + nt) : p[j + nt];
    a0 = O::combine(a0, x0);
    a1 = O::combine(a1, x1);
  }
  if (j < end) a0 = O::combine(a0, COHERENT ? ld_cg(p + j) : p[j]);
  return O::combine(a0, a1);
}

/* What a block does with the result a of work item b (chunk of row `row`): with part, store it as that item's
 * partial; without, finalize it into the row's output (O::store). */
template <class O>
__device__ __forceinline__ void put_result(typename O::acc_t a, typename O::acc_t *part, int64_t b,
                                           typename O::out_t *out, int64_t *idx, int64_t row, int64_t len) {
  if (part) part[b] = a;
  else O::store(a, out, idx, row, len);
}

} // namespace ckred

#endif
