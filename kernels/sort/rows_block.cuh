/*
 * rows_block.cuh — sort rung 7's kernel: one block sorts one short contiguous line, from the values to the
 * outputs in one kernel (kernels/sort/07_rows_block.cu launches it; lab/segsort_probe.cu sweeps its shapes).
 *
 * A line of at most 4096 elements fits in one block's registers. The block reads the line once (cub::BlockLoad,
 * warp-striped then transposed, so the reads coalesce and thread t holds elements t*IPT .. t*IPT+IPT-1), maps
 * each value to its key in registers (sort_common.cuh's key_of: -0 as +0, NaN largest, complemented when
 * descending), and sorts the keys with their element numbers (u16: a line is shorter than 65536) by
 * cub::BlockRadixSort, stable because the input is in the blocked arrangement. The sort ends striped (thread t
 * holds ranks t, t+NT, ...), so the writes coalesce: idx = element number + 1 (1-based i64) and out = the line's
 * own value at that element number (read back, from L1 or L2: the line was just read), so -0 and NaN payloads
 * survive as in the other rungs. Positions past the line's end get the all-ones key, and sort after every real
 * key (a NaN's key is also all ones, but it comes first: the sort is stable).
 * The global rungs need a make_keys pass, the sort's passes over keys and payloads, and a gather pass (about
 * 2.5 bytes moved per byte of output for f32 pairs); this kernel moves the input once and the outputs once.
 * The block shape (NT threads, IPT keys each, RB bits a digit) is a template: 07_rows_block.cu picks it from the
 * line's length, from lab/segsort_probe.cu's sweep.
 * Operands: x contiguous [lines, len] (inner == 1); out (may be NULL: argsort) and idx (may be NULL: a sort without
 * indices) contiguous [lines, k].
 */
#ifndef CK_SORT_ROWS_BLOCK_CUH
#define CK_SORT_ROWS_BLOCK_CUH

#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>

#include "sort_common.cuh"

namespace cksort {

template <class K, int KIND, int EB, int NT, int IPT, int RB>
__global__ void __launch_bounds__(NT) sort_rows_fused_kernel(const K *__restrict__ x, K *__restrict__ out,
                                                             int64_t *__restrict__ idx, int64_t len, int64_t k,
                                                             int64_t lines, int descending) {
  using V = uint16_t;
  using Load = cub::BlockLoad<K, NT, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Sort = cub::BlockRadixSort<K, NT, IPT, V, RB>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Sort::TempStorage sort;
  } tmp;
  const int valid = (int)len;
  const bool desc = descending != 0;
  for (int64_t l = blockIdx.x; l < lines; l += gridDim.x) {
    const K *xl = x + l * len;
    K key[IPT];
    V v[IPT];
    Load(tmp.load).Load(xl, key, valid, (K)0);
#pragma unroll
    for (int i = 0; i < IPT; ++i) {
      const int r = (int)threadIdx.x * IPT + i;
      v[i] = (V)r;
      key[i] = r < valid ? key_of<K, KIND, EB>(key[i], desc) : (K) ~(K)0;
    }
    __syncthreads(); /* tmp.load becomes tmp.sort */
    Sort(tmp.sort).SortBlockedToStriped(key, v, 0, (int)sizeof(K) * 8);
    K *ol = out ? out + l * k : nullptr;
    int64_t *il = idx ? idx + l * k : nullptr; /* a sort without indices passes none */
#pragma unroll
    for (int i = 0; i < IPT; ++i) {
      const int64_t j = (int64_t)i * NT + threadIdx.x;
      if (j < k) {
        if (ol) ol[j] = xl[v[i]];
        if (il) il[j] = (int64_t)v[i] + 1;
      }
    }
    __syncthreads(); /* tmp is the next line's */
  }
}

/* Launch the kernel for NT x IPT x RB over `lines` lines (a grid-stride loop past 65535 * 8 blocks). */
template <class K, int KIND, int EB, int NT, int IPT, int RB>
static inline int launch_rows_fused(const K *x, K *out, int64_t *idx, int64_t len, int64_t k, int64_t lines,
                                    int descending, cudaStream_t s) {
  const unsigned grid = (unsigned)(lines < 65535 * 8 ? lines : 65535 * 8);
  sort_rows_fused_kernel<K, KIND, EB, NT, IPT, RB><<<grid, NT, 0, s>>>(x, out, idx, len, k, lines, descending);
  return (int)cudaGetLastError();
}

} // namespace cksort

#endif
