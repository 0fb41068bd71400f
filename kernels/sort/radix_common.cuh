/*
 * radix_common.cuh — the LSD radix sort that rungs 3 and 4 share; they differ in the digit width and in how
 * a block ranks its elements within a digit (the RANK policy).
 *
 * Per pass (digit p, least significant first): hist counts each tile's digits (tiles of 4096 pairs, shared-
 * memory atomics) into hist[digit * ntiles + tile]; the scan ladder's look-back rung (kernels/scan/06) scans
 * that array exclusively into the global offsets (digit-major, so every tile knows where its digit-d elements
 * start); scatter re-reads its tile in rounds of 256 (one pair per thread, in element order), ranks each pair
 * among the equal digits before it (stable), and writes it to offset + rank. Passes over the key's bits come
 * first, then passes over the line number (g / len) when there are several lines, so lines end up in order
 * and each sorted within (LSD: the last pass is the most significant).
 */
#ifndef CK_SORT_RADIX_COMMON_CUH
#define CK_SORT_RADIX_COMMON_CUH

#include "sort_common.cuh"

namespace cksort {

#define RX_BLOCK 256
#define RX_ITEMS 16
#define RX_TILE (RX_BLOCK * RX_ITEMS)

template <class K, int BITS>
__device__ __forceinline__ int digit_of(K key, uint32_t g, int pass, int key_passes, int64_t len) {
  constexpr unsigned MASK = (1u << BITS) - 1u;
  if (pass < key_passes) return (int)((uint64_t)key >> (pass * BITS)) & (int)MASK;
  const uint32_t line = (uint32_t)(g / (uint64_t)len);
  return (int)(line >> ((pass - key_passes) * BITS)) & (int)MASK;
}

template <class K, int BITS>
__global__ void __launch_bounds__(RX_BLOCK) radix_hist_kernel(const K *__restrict__ keys, const uint32_t *__restrict__ vals,
                                                              int64_t n, int64_t len, int pass, int key_passes,
                                                              int32_t *hist, int64_t ntiles) {
  constexpr int R = 1 << BITS;
  __shared__ int cnt[R];
  for (int64_t b = blockIdx.x; b < ntiles; b += gridDim.x) {
    for (int d = threadIdx.x; d < R; d += RX_BLOCK) cnt[d] = 0;
    __syncthreads();
    for (int m = 0; m < RX_ITEMS; ++m) {
      const int64_t j = b * RX_TILE + m * RX_BLOCK + threadIdx.x;
      if (j < n) atomicAdd(&cnt[digit_of<K, BITS>(keys[j], vals[j], pass, key_passes, len)], 1);
    }
    __syncthreads();
    for (int d = threadIdx.x; d < R; d += RX_BLOCK) hist[(int64_t)d * ntiles + b] = cnt[d];
    __syncthreads();
  }
}

/* Ranking with one ballot per digit value: lane-level ranks and per-warp counts (small radixes). */
template <int R> struct BallotRank {
  __device__ __forceinline__ static int rank(int d, bool valid, int *warp_cnt /* [R] of this warp */) {
    const int lane = threadIdx.x & 31;
    const unsigned lt = (1u << lane) - 1u;
    int r = 0;
#pragma unroll 4
    for (int b = 0; b < R; ++b) {
      const unsigned m = __ballot_sync(0xffffffffu, valid && d == b);
      if (valid && d == b) r = __popc(m & lt);
      if (lane == 0) warp_cnt[b] = __popc(m);
    }
    return r;
  }
  static constexpr bool needs_zero = false;
};

/* Warp-level multi-split: __match_any_sync finds the lanes with the same digit in one instruction; the lowest
 * of them writes the warp's count for that digit. */
template <int R> struct MatchRank {
  __device__ __forceinline__ static int rank(int d, bool valid, int *warp_cnt) {
    const int lane = threadIdx.x & 31;
    const unsigned lt = (1u << lane) - 1u;
    const unsigned peers = __match_any_sync(0xffffffffu, valid ? d : -1);
    if (valid && lane == __ffs(peers) - 1) warp_cnt[d] = __popc(peers);
    return __popc(peers & lt);
  }
  static constexpr bool needs_zero = true;
};

template <class K, int BITS, class RANK>
__global__ void __launch_bounds__(RX_BLOCK) radix_scatter_kernel(const K *__restrict__ keys, const uint32_t *__restrict__ vals,
                                                                 K *keys_out, uint32_t *vals_out, int64_t n, int64_t len,
                                                                 int pass, int key_passes, const int64_t *offsets,
                                                                 int64_t ntiles) {
  constexpr int R = 1 << BITS, NW = RX_BLOCK / 32;
  __shared__ int warp_cnt[NW][R];
  __shared__ int tile_cnt[R];
  const int w = threadIdx.x >> 5;
  for (int64_t b = blockIdx.x; b < ntiles; b += gridDim.x) {
    for (int d = threadIdx.x; d < R; d += RX_BLOCK) tile_cnt[d] = 0;
    for (int m = 0; m < RX_ITEMS; ++m) {
      const int64_t j = b * RX_TILE + m * RX_BLOCK + threadIdx.x;
      const bool valid = j < n;
      K key = 0;
      uint32_t g = 0;
      int d = 0;
      if (valid) {
        key = keys[j];
        g = vals[j];
        d = digit_of<K, BITS>(key, g, pass, key_passes, len);
      }
      if (RANK::needs_zero)
        for (int q = threadIdx.x; q < NW * R; q += RX_BLOCK) (&warp_cnt[0][0])[q] = 0;
      __syncthreads();
      const int r = RANK::rank(d, valid, warp_cnt[w]);
      __syncthreads();
      for (int dd = threadIdx.x; dd < R; dd += RX_BLOCK) { /* warp offsets within the round, after the tile's */
        int run = tile_cnt[dd];
        for (int q = 0; q < NW; ++q) {
          const int c = warp_cnt[q][dd];
          warp_cnt[q][dd] = run;
          run += c;
        }
        tile_cnt[dd] = run;
      }
      __syncthreads();
      if (valid) {
        const int64_t pos = offsets[(int64_t)d * ntiles + b] + warp_cnt[w][d] + r;
        keys_out[pos] = key;
        vals_out[pos] = g;
      }
      __syncthreads();
    }
  }
}

/* The passes: returns 0 or an error; *sorted gets the buffer holding the final payloads. */
template <int BITS, class RANK> struct RadixSorter {
  template <class K>
  int operator()(const ck_env *env, K *keys, uint32_t *vals, K *keys2, uint32_t *vals2, int64_t n, int64_t len,
                 int64_t lines, int key_bits, uint32_t **sorted) const {
    constexpr int R = 1 << BITS;
    cudaStream_t s = (cudaStream_t)env->stream;
    const int64_t ntiles = cdiv(n, RX_TILE);
    int line_bits = 0;
    while (line_bits < 32 && ((int64_t)1 << line_bits) < lines) ++line_bits;
    const int key_passes = (int)cdiv(key_bits, BITS), passes = key_passes + (int)cdiv(line_bits, BITS);
    Ws w(env, (size_t)(R * ntiles) * (sizeof(int32_t) + sizeof(int64_t)));
    if (!w.p) return (int)cudaErrorMemoryAllocation;
    int64_t *offsets = (int64_t *)w.p;
    int32_t *hist = (int32_t *)(offsets + R * ntiles);
    K *ka = keys, *kb = keys2;
    uint32_t *va = vals, *vb = vals2;
    for (int p = 0; p < passes; ++p) {
      ck_note(env, radix_hist_kernel<K, BITS>, RX_BLOCK, 0);
      radix_hist_kernel<K, BITS><<<grid_for(ntiles), RX_BLOCK, 0, s>>>(ka, va, n, len, p, key_passes, hist, ntiles);
      int err = (int)cudaGetLastError();
      if (err) return err;
      ck_scan_desc sd;
      memset(&sd, 0, sizeof sd);
      sd.dtype = CK_I32;
      sd.out_dtype = CK_I64;
      sd.op = CK_SCAN_SUM;
      sd.exclusive = 1;
      sd.x = hist;
      sd.out = offsets;
      sd.outer = 1;
      sd.len = R * ntiles;
      sd.inner = 1;
      if ((err = ck_scan_lookback(&sd, env))) return err;
      ck_note(env, radix_scatter_kernel<K, BITS, RANK>, RX_BLOCK, 0);
      radix_scatter_kernel<K, BITS, RANK><<<grid_for(ntiles), RX_BLOCK, 0, s>>>(ka, va, kb, vb, n, len, p, key_passes,
                                                                               offsets, ntiles);
      if ((err = (int)cudaGetLastError())) return err;
      swap_buffers(ka, kb, va, vb);
    }
    *sorted = va;
    return 0;
  }
};

} // namespace cksort

#endif
