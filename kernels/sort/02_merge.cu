/*
 * 02_merge.cu — sort step 2: merge sort with merge-path partitioning.
 *
 * Idea: bitonic (step 1) does log^2 n passes over the whole array; merge sort does log(n / tile) merge passes
 * after sorting tiles. The hard part of merging on a GPU is giving every block an equal share of the output:
 * merge path (Green, McColl and Bader, "GPU Merge Path", 2012; ModernGPU) finds, for output position d of
 * the merge of runs A and B, how many of the first d outputs come from A with one binary search along the
 * cross diagonal. Each block takes 2048 outputs: it searches its two diagonals in global memory, loads the
 * A and B pieces between them into shared memory, and each thread searches its own diagonal there and merges
 * 8 outputs sequentially. Ties take A first, and the order is (line, key, g), so the sort is stable and every
 * line comes out sorted in place. Tiles of 2048 are sorted first in shared memory (a bitonic network, step 1's
 * idea, with the tail of the last tile padded in shared memory only).
 * Launch: 256 threads, 2048 outputs per block per pass; ping-pong buffers.
 * Limits: fewer than 2^32 - 1 elements.
 * Operands: x contiguous [outer, len, inner]; out, idx contiguous [outer, k, inner] (either may be NULL).
 */
#include "sort_common.cuh"

using namespace cksort;

#define MS_THREADS 256
#define MS_ITEMS 8
#define MS_TILE (MS_THREADS * MS_ITEMS)

// ---------------------------------------------------------------- kernels

/* Each tile of MS_TILE pairs sorted in shared memory (bitonic; past n, pairs that order last). */
template <class K>
__global__ void __launch_bounds__(MS_THREADS) merge_tile_sort_kernel(K *keys, uint32_t *vals, int64_t n, int64_t len) {
  __shared__ K sk[MS_TILE];
  __shared__ uint32_t sv[MS_TILE];
  const Less<K> less{len};
  const int64_t base = (int64_t)blockIdx.x * MS_TILE;
  for (int q = threadIdx.x; q < MS_TILE; q += MS_THREADS) {
    const bool in = base + q < n;
    sk[q] = in ? keys[base + q] : (K)~(K)0;
    sv[q] = in ? vals[base + q] : 0xffffffffu;
  }
  __syncthreads();
  for (int k = 2; k <= MS_TILE; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int q = threadIdx.x; q < MS_TILE / 2; q += MS_THREADS) {
        const int a = 2 * q - (q & (j - 1)), b = a + j;
        const bool up = (a & k) == 0;
        if (less(sk[b], sv[b], sk[a], sv[a]) == up) {
          const K tk = sk[a];
          sk[a] = sk[b];
          sk[b] = tk;
          const uint32_t tv = sv[a];
          sv[a] = sv[b];
          sv[b] = tv;
        }
      }
      __syncthreads();
    }
  for (int q = threadIdx.x; q < MS_TILE; q += MS_THREADS)
    if (base + q < n) {
      keys[base + q] = sk[q];
      vals[base + q] = sv[q];
    }
}

/* How many of the first `diag` outputs of merge(A, B) come from A (ties: A first). */
template <class K>
__device__ __forceinline__ int64_t merge_path(const K *ak, const uint32_t *av, int64_t na, const K *bk,
                                              const uint32_t *bv, int64_t nb, int64_t diag, const Less<K> &less) {
  int64_t lo = diag > nb ? diag - nb : 0, hi = diag < na ? diag : na;
  while (lo < hi) {
    const int64_t mid = (lo + hi) >> 1;
    const int64_t bi = diag - 1 - mid;
    if (!less(bk[bi], bv[bi], ak[mid], av[mid])) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* One pass: runs of width w in (keys, vals) merged pairwise into (ko, vo). */
template <class K>
__global__ void __launch_bounds__(MS_THREADS) merge_pass_kernel(const K *__restrict__ keys, const uint32_t *__restrict__ vals,
                                                                K *ko, uint32_t *vo, int64_t n, int64_t len, int64_t w) {
  __shared__ K sk[MS_TILE];
  __shared__ uint32_t sv[MS_TILE];
  const Less<K> less{len};
  const int64_t p0 = (int64_t)blockIdx.x * MS_TILE; /* this block's first output */
  const int64_t lo = p0 / (2 * w) * (2 * w);         /* the pair of runs it belongs to */
  const int64_t na = lo + w < n ? w : n - lo, nb = lo + 2 * w < n ? w : (n - lo - na > 0 ? n - lo - na : 0);
  const K *ak = keys + lo, *bk = keys + lo + na;
  const uint32_t *av = vals + lo, *bv = vals + lo + na;
  const int64_t d0 = p0 - lo, d1 = (d0 + MS_TILE < na + nb) ? d0 + MS_TILE : na + nb;
  const int64_t a0 = merge_path(ak, av, na, bk, bv, nb, d0, less), a1 = merge_path(ak, av, na, bk, bv, nb, d1, less);
  const int ca = (int)(a1 - a0), cb = (int)((d1 - a1) - (d0 - a0));
  for (int q = threadIdx.x; q < ca + cb; q += MS_THREADS) {
    if (q < ca) {
      sk[q] = ak[a0 + q];
      sv[q] = av[a0 + q];
    } else {
      sk[q] = bk[d0 - a0 + q - ca];
      sv[q] = bv[d0 - a0 + q - ca];
    }
  }
  __syncthreads();
  /* this thread's MS_ITEMS outputs: its own diagonal in the shared pieces A' = sk[0, ca), B' = sk[ca, ca + cb) */
  const int dt = threadIdx.x * MS_ITEMS;
  if (dt < ca + cb) {
    int i = (int)merge_path(sk, sv, ca, sk + ca, sv + ca, cb, dt, less), j = dt - i;
    for (int m = 0; m < MS_ITEMS && dt + m < ca + cb; ++m) {
      bool take_a;
      if (i >= ca) take_a = false;
      else if (j >= cb) take_a = true;
      else take_a = !less(sk[ca + j], sv[ca + j], sk[i], sv[i]);
      const int from = take_a ? i++ : ca + j++;
      ko[p0 + dt + m] = sk[from];
      vo[p0 + dt + m] = sv[from];
    }
  }
}

// ---------------------------------------------------------------- launcher

struct MergeSorter {
  template <class K>
  int operator()(const ck_env *env, K *keys, uint32_t *vals, K *keys2, uint32_t *vals2, int64_t n, int64_t len,
                 int64_t, int, uint32_t **sorted) const {
    cudaStream_t s = (cudaStream_t)env->stream;
    const unsigned tiles = (unsigned)cdiv(n, MS_TILE);
    ck_note(env, merge_tile_sort_kernel<K>, MS_THREADS, 0);
    merge_tile_sort_kernel<K><<<tiles, MS_THREADS, 0, s>>>(keys, vals, n, len);
    int err = (int)cudaGetLastError();
    K *ka = keys, *kb = keys2;
    uint32_t *va = vals, *vb = vals2;
    for (int64_t w = MS_TILE; !err && w < n; w <<= 1) {
      ck_note(env, merge_pass_kernel<K>, MS_THREADS, 0);
      merge_pass_kernel<K><<<tiles, MS_THREADS, 0, s>>>(ka, va, kb, vb, n, len, w);
      err = (int)cudaGetLastError();
      swap_buffers(ka, kb, va, vb);
    }
    *sorted = va;
    return err;
  }
};

extern "C" int ck_sort_merge(const void *desc, const ck_env *env) {
  return run_sort(*(const ck_sort_desc *)desc, env, MergeSorter{});
}

extern "C" const char *ck_sort_merge_supports(const void *desc) { return check_n((const ck_sort_desc *)desc); }
