/*
 * 07_rows_block.cu — sort step 7: one block sorts one short line in shared memory.
 *
 * Idea: the global rungs (3-6) make several passes over every pair, and with many lines the passes also run over
 * the line number; CUB's segmented sort (the reference's many-lines path) launches per segment size class. A line
 * of at most 4096 pairs fits in one block's registers and shared memory, so a block loads its line's keys once
 * (cub::BlockLoad, warp-striped then transposed: coalesced), sorts them with the element numbers beside them
 * (cub::BlockRadixSort over the key's bits: stable, so equal keys keep their order), and stores the sorted
 * element numbers once: one read of the keys and one write of the payloads, whatever the dtype. The payloads
 * are made in registers (g = l * len + r in the blocked arrangement), not read. Positions past the line's end
 * get the largest key and sort after the line's own largest keys (NaN) because the sort is stable and they
 * come last.
 * Launch: 256 threads; 4 pairs a thread (lines up to 1024) or 16 (up to 4096); a grid-stride loop over lines.
 * Limits (supports()): lines of at most 4096 elements, and not more than 1024 lines shorter than 256; fewer than
 * 2^32 - 1 elements in all.
 * Operands: x contiguous [outer, len, inner]; out, idx contiguous [outer, k, inner] (sort_common.cuh's frame).
 */
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>

#include "sort_common.cuh"

using namespace cksort;

namespace {

constexpr int NT = 256;
constexpr int64_t MAX_LEN = 4096;

template <class K, int IPT>
__global__ void __launch_bounds__(NT) sort_rows_block_kernel(const K *__restrict__ keys, uint32_t *out, int64_t len,
                                                             int64_t lines, int key_bits) {
  using Load = cub::BlockLoad<K, NT, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Sort = cub::BlockRadixSort<K, NT, IPT, uint32_t>;
  using Store = cub::BlockStore<uint32_t, NT, IPT, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Sort::TempStorage sort;
    typename Store::TempStorage store;
  } tmp;
  const int valid = (int)len;
  for (int64_t l = blockIdx.x; l < lines; l += gridDim.x) {
    K k[IPT];
    uint32_t v[IPT];
    Load(tmp.load).Load(keys + l * len, k, valid, (K) ~(K)0); /* blocked: thread t holds t*IPT .. t*IPT+IPT-1 */
#pragma unroll
    for (int i = 0; i < IPT; ++i) v[i] = (uint32_t)(l * len + threadIdx.x * IPT + i);
    __syncthreads();
    Sort(tmp.sort).Sort(k, v, 0, key_bits);
    __syncthreads();
    Store(tmp.store).Store(out + l * len, v, valid);
    __syncthreads(); /* tmp is the next line's */
  }
}

struct RowsBlockSorter {
  template <class K>
  int operator()(const ck_env *env, K *keys, uint32_t *vals, K *keys2, uint32_t *vals2, int64_t n, int64_t len,
                 int64_t lines, int key_bits, uint32_t **sorted) const {
    (void)vals, (void)keys2, (void)n;
    cudaStream_t s = (cudaStream_t)env->stream;
    *sorted = vals2;
    const unsigned grid = (unsigned)(lines < 65535 * 8 ? lines : 65535 * 8);
    if (len <= 1024) {
      ck_note(env, sort_rows_block_kernel<K, 4>, NT, 0);
      sort_rows_block_kernel<K, 4><<<grid, NT, 0, s>>>(keys, vals2, len, lines, key_bits);
    } else {
      ck_note(env, sort_rows_block_kernel<K, 16>, NT, 0);
      sort_rows_block_kernel<K, 16><<<grid, NT, 0, s>>>(keys, vals2, len, lines, key_bits);
    }
    return (int)cudaGetLastError();
  }
};

} // namespace

extern "C" int ck_sort_rows_block(const void *desc, const ck_env *env) {
  return run_sort(*(const ck_sort_desc *)desc, env, RowsBlockSorter{});
}

extern "C" const char *ck_sort_rows_block_supports(const void *desc) {
  const ck_sort_desc *d = (const ck_sort_desc *)desc;
  if (d->len > MAX_LEN) return "lines of at most 4096 elements (one block sorts one line)";
  /* (a line of fewer than 256 leaves most of a 1024-pair block idle: many of them go to CUB's segmented sort,
     which sorts small segments by warp or thread; the bound is a judgement, not measured) */
  if (d->len < NT && d->outer * d->inner > 1024) return "many lines shorter than 256 (CUB's small-segment sorts)";
  return check_n(d);
}
