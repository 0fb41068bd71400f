/*
 * select_common.cuh — the radix select of rung 5 (topk, issue 33): composite keys, the per-line selection state,
 * the block-level steps (a digit histogram, the bucket that holds the k-th element, a bitonic sort of the k
 * winners) and the writing of values and indices. The kernels that drive them are in 05_radix_select.cu.
 *
 * Composite keys. An element at position r of its line has the sort ladder's key u (sort_common.cuh's key_of:
 * descending complements it, NaN the largest value, -0 as +0) and the composite c = (u << IB) | r, IB the bits
 * of len - 1. Composites are distinct, and ordering them orders (key, position): the k smallest composites of a
 * line are exactly the first k of the stable sort — ties at the threshold take the lowest positions. C is
 * uint64 for keys of up to 32 bits (32 + IB <= 64) and unsigned __int128 for 64-bit keys.
 * Selection. `shift` bits of the composite are still open, the ones above them equal `prefix` for the candidates;
 * each pass histograms the next digit (min(BITS, shift) bits) of the candidates, finds the bucket b where the
 * running count reaches krem (how many candidates are still to take), appends b to the prefix and subtracts the
 * count of the buckets before it. Once b's count equals krem, every element whose top bits are <= prefix is
 * taken: exactly k of them (`done`). That happens at the latest when no bit is open (composites are distinct).
 */
#ifndef CK_SORT_SELECT_COMMON_CUH
#define CK_SORT_SELECT_COMMON_CUH

#include <cub/block/block_scan.cuh>

#include "sort_common.cuh"

namespace cksel {

using namespace cksort;

template <class K> using Comp = std::conditional_t<(sizeof(K) <= 4), uint64_t, unsigned __int128>;

/* The state of one line's selection (global memory in the grid path, registers in the rows path). */
template <class C> struct Sel {
  C prefix;       /* the decided top bits of the k-th composite */
  long long krem; /* how many of the elements whose top bits equal prefix are still to take */
  int shift;      /* composite bits below prefix (still open) */
  int done;       /* take every element whose top bits are <= prefix */
  int mode;       /* grid path: 0 passes read the line, 1 the next pass compacts it into buf, 2 passes read buf */
  unsigned nbuf, ncand;
};

template <class C> __device__ __forceinline__ C top_bits(C c, int shift) {
  return shift >= (int)(sizeof(C) * 8) ? (C)0 : (C)(c >> shift);
}

template <class C, class K> __device__ __forceinline__ C comp_of(K key, uint32_t r, int ib) {
  return ((C)key << ib) | (C)r;
}

/* One candidate's vote in a digit histogram, one shared atomic per distinct digit of the warp (the lanes with the
 * same digit found by __match_any_sync: the first pass of sorted-ish or narrow data hits few buckets). Every lane
 * of the warp calls it; bin < 0: no vote. */
__device__ __forceinline__ void vote(unsigned *hist, int bin) {
  const unsigned peers = __match_any_sync(0xffffffffu, bin);
  if (bin >= 0 && (threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&hist[bin], (unsigned)__popc(peers));
}

/* The bucket of h[0..R) where the running count reaches krem: (bucket, count before it, its count) in *res.
 * Every thread of the NT-thread block calls it; h and res in shared memory; synchronises before returning. */
template <int R, int NT> struct Bucket {
  typedef cub::BlockScan<unsigned, NT> Scan;
  struct Res {
    int b;
    unsigned before, cnt;
  };
  union Temp {
    typename Scan::TempStorage scan;
  };
  __device__ static void find(const unsigned *h, long long krem, Temp &t, Res &res) {
    constexpr int PER = (R + NT - 1) / NT;
    unsigned loc[PER], sum = 0;
#pragma unroll
    for (int q = 0; q < PER; ++q) {
      const int b = threadIdx.x * PER + q;
      loc[q] = b < R ? h[b] : 0u;
      sum += loc[q];
    }
    unsigned run;
    Scan(t.scan).ExclusiveSum(sum, run);
#pragma unroll
    for (int q = 0; q < PER; ++q) {
      if ((long long)run < krem && (long long)run + loc[q] >= krem) res = Res{(int)threadIdx.x * PER + q, run, loc[q]};
      run += loc[q];
    }
    __syncthreads();
  }
};

/* The selection's step after a histogram: the digit was d bits wide. */
template <class C> __device__ __forceinline__ void advance(Sel<C> &s, int d, int b, unsigned before, unsigned cnt) {
  s.prefix = (C)((s.prefix << d) | (C)b);
  s.shift -= d;
  s.krem -= before;
  s.done = (long long)cnt == s.krem;
}

/* Sort v[0..k) ascending in shared memory (bitonic, padded to a power of two P <= cap with the largest value). */
template <class C, int NT> __device__ void block_sort(C *v, int k) {
  int P = 1;
  while (P < k) P <<= 1;
  for (int j = k + threadIdx.x; j < P; j += NT) v[j] = ~(C)0;
  __syncthreads();
  for (int size = 2; size <= P; size <<= 1)
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < P / 2; t += NT) {
        const int i = 2 * t - (t & (stride - 1)), j = i + stride;
        const bool up = (i & size) == 0;
        const C a = v[i], b = v[j];
        if ((a > b) == up) v[i] = b, v[j] = a;
      }
      __syncthreads();
    }
}

/* The j-th winner of line l (composite c) to out[o, j, i] (the value read from the line's copy xl) and idx (each
 * only where given). */
template <class K, class C>
__device__ __forceinline__ void put(const K *__restrict__ xl, K *out, int64_t *idx, int64_t l, int64_t j, C c, int ib,
                                    int64_t k, int64_t inner) {
  const uint32_t r = ib ? (uint32_t)(c & (C)((((uint64_t)1) << ib) - 1)) : 0u;
  const int64_t o = l / inner, i = l % inner, q = (o * k + j) * inner + i;
  if (out) out[q] = xl[r];
  if (idx) idx[q] = (int64_t)r + 1;
}

} // namespace cksel

#endif
