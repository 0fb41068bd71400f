/*
 * 01_bitonic.cu — sort step 1: bitonic sort, in shared memory and then with global merges.
 *
 * Idea: Batcher's bitonic network compares fixed pairs (i, i ^ j) in log2(n)(log2(n)+1)/2 steps, with no
 * data-dependent control flow: each step is one parallel pass. Tiles of 2048 pairs are sorted in shared memory
 * (every step of size <= 2048 there), then each merge of size k > 2048 runs its strides >= 2048 as global
 * passes (one launch each) and the rest in shared memory. The network is not stable, so it sorts by the
 * total order (line, key, g): equal keys then keep their order, and every line comes out sorted in place.
 * The array is padded to a power of two with pairs that order last.
 * Launch: 1024 threads, 2 pairs each per tile. Limits: fewer than 2^31 elements (padding doubles at most).
 * Operands: x contiguous [outer, len, inner]; out, idx contiguous [outer, k, inner] (either may be NULL).
 */
#include "sort_common.cuh"

using namespace cksort;

#define BT_THREADS 1024
#define BT_TILE 2048

// ---------------------------------------------------------------- kernels

template <class K>
__device__ __forceinline__ void cmp_swap(K *k, uint32_t *v, int a, int b, bool up, const Less<K> &less) {
  const K ka = k[a], kb = k[b];
  const uint32_t ga = v[a], gb = v[b];
  if (less(kb, gb, ka, ga) == up) {
    k[a] = kb;
    k[b] = ka;
    v[a] = gb;
    v[b] = ga;
  }
}

/* Steps of merge size k with strides j0, j0/2, ..., 1 within each tile (k <= BT_TILE: the whole tile sort). */
template <class K>
__global__ void __launch_bounds__(BT_THREADS) bitonic_smem_kernel(K *keys, uint32_t *vals, int64_t len, int64_t kmin,
                                                                  int64_t kmax, int j0) {
  __shared__ K sk[BT_TILE];
  __shared__ uint32_t sv[BT_TILE];
  const Less<K> less{len};
  const int64_t base = (int64_t)blockIdx.x * BT_TILE;
  for (int q = threadIdx.x; q < BT_TILE; q += BT_THREADS) {
    sk[q] = keys[base + q];
    sv[q] = vals[base + q];
  }
  __syncthreads();
  for (int64_t k = kmin; k <= kmax; k <<= 1) {
    for (int j = k < BT_TILE ? (int)(k >> 1) : j0; j > 0; j >>= 1) {
      for (int q = threadIdx.x; q < BT_TILE / 2; q += BT_THREADS) {
        const int a = 2 * q - (q & (j - 1)); /* the lower index of the q-th pair of stride j */
        const bool up = ((base + a) & k) == 0;
        cmp_swap(sk, sv, a, a + j, up, less);
      }
      __syncthreads();
    }
  }
  for (int q = threadIdx.x; q < BT_TILE; q += BT_THREADS) {
    keys[base + q] = sk[q];
    vals[base + q] = sv[q];
  }
}

template <class K>
__global__ void __launch_bounds__(256) bitonic_global_kernel(K *keys, uint32_t *vals, int64_t len, int64_t n2, int64_t k,
                                                             int64_t j) {
  const Less<K> less{len};
  for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < n2 / 2; q += (int64_t)gridDim.x * blockDim.x) {
    const int64_t a = 2 * q - (q & (j - 1));
    const bool up = (a & k) == 0;
    const K ka = keys[a], kb = keys[a + j];
    const uint32_t ga = vals[a], gb = vals[a + j];
    if (less(kb, gb, ka, ga) == up) {
      keys[a] = kb;
      keys[a + j] = ka;
      vals[a] = gb;
      vals[a + j] = ga;
    }
  }
}

template <class K>
__global__ void __launch_bounds__(256) bitonic_pad_kernel(const K *keys, const uint32_t *vals, K *pk, uint32_t *pv,
                                                          int64_t n, int64_t n2) {
  for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < n2; q += (int64_t)gridDim.x * blockDim.x) {
    pk[q] = q < n ? keys[q] : (K)~(K)0;
    pv[q] = q < n ? vals[q] : 0xffffffffu;
  }
}

// ---------------------------------------------------------------- launcher

struct BitonicSorter {
  template <class K>
  int operator()(const ck_env *env, K *keys, uint32_t *vals, K *, uint32_t *, int64_t n, int64_t len, int64_t,
                 int, uint32_t **sorted) const {
    cudaStream_t s = (cudaStream_t)env->stream;
    int64_t n2 = BT_TILE;
    while (n2 < n) n2 <<= 1;
    Ws w(env, (size_t)n2 * (sizeof(K) + sizeof(uint32_t)) + 16);
    if (!w.p) return (int)cudaErrorMemoryAllocation;
    K *pk = (K *)w.p;
    uint32_t *pv = (uint32_t *)(((uintptr_t)(pk + n2) + 15) & ~(uintptr_t)15);
    ck_note(env, bitonic_pad_kernel<K>, 256, 0);
    bitonic_pad_kernel<K><<<grid_for(cdiv(n2, 256)), 256, 0, s>>>(keys, vals, pk, pv, n, n2);
    int err = (int)cudaGetLastError();
    if (err) return err;
    const unsigned tiles = (unsigned)(n2 / BT_TILE);
    ck_note(env, bitonic_smem_kernel<K>, BT_THREADS, 0);
    bitonic_smem_kernel<K><<<tiles, BT_THREADS, 0, s>>>(pk, pv, len, 2, BT_TILE, BT_TILE / 2);
    if ((err = (int)cudaGetLastError())) return err;
    for (int64_t k = 2 * BT_TILE; k <= n2; k <<= 1) {
      for (int64_t j = k >> 1; j >= BT_TILE; j >>= 1) {
        ck_note(env, bitonic_global_kernel<K>, 256, 0);
        bitonic_global_kernel<K><<<grid_for(cdiv(n2 / 2, 256)), 256, 0, s>>>(pk, pv, len, n2, k, j);
        if ((err = (int)cudaGetLastError())) return err;
      }
      bitonic_smem_kernel<K><<<tiles, BT_THREADS, 0, s>>>(pk, pv, len, k, k, BT_TILE / 2);
      if ((err = (int)cudaGetLastError())) return err;
    }
    /* the first n pairs are the sorted ones; copy the payloads back to the frame's buffer */
    if ((err = (int)cudaMemcpyAsync(vals, pv, (size_t)n * sizeof(uint32_t), cudaMemcpyDeviceToDevice, s))) return err;
    *sorted = vals;
    return 0;
  }
};

extern "C" int ck_sort_bitonic(const void *desc, const ck_env *env) {
  return run_sort(*(const ck_sort_desc *)desc, env, BitonicSorter{});
}

extern "C" const char *ck_sort_bitonic_supports(const void *desc) {
  const ck_sort_desc *d = (const ck_sort_desc *)desc;
  if ((double)d->outer * (double)d->len * (double)d->inner >= 2147483648.0)
    return "sorts fewer than 2^31 elements (the padded power of two must fit 32-bit payloads)";
  return nullptr;
}
