/*
 * 07_rows_block.cu — sort step 7: one block sorts one short line, in registers and shared memory.
 *
 * Idea: the global rungs (3-6) make several passes over every pair, and with many lines the passes also run over
 * the line number; CUB's segmented sort (the reference's many-lines path) launches per segment size class. A line
 * of at most 4096 elements fits in one block, so the block reads its line once, sorts it with cub::BlockRadixSort
 * (stable) and writes the sorted values and indices once: rows_block.cuh's kernel, the whole sort in one kernel.
 * Block shapes (lab/segsort_probe.cu, H100, f32 lines, round 3 session 7): 32 keys a thread (16 for 8- and 2-byte
 * keys) and len / 32 threads was the fastest or within 2% of it at every length from 1024 to 4096 (65536 x 1024:
 * 1.11 ms for 32 x 32, 1.63 ms for 256 x 4; CUB's segmented sort 6.56 ms); shorter lines keep 32 threads and
 * fewer keys each (131072 x 512: 32 x 16, 1.18 ms; 262144 x 256: 32 x 8, 1.42 ms). Lines of 64 and 16 lost to
 * CUB's small-segment sorts (2.91 against 1.33 ms, 10.5 against 0.88 ms), so many lines shorter than 256 are
 * declined.
 * Lines `inner` apart (dims after the sorted one): make_keys (sort_common.cuh) first copies each line's keys
 * together, one block sorts keys and element numbers per line, and the frame's gather writes the outputs.
 * Launch: a grid-stride loop over lines (at most 65535 * 8 blocks).
 * Limits (supports()): lines of at most 4096 elements, and not more than 1024 lines shorter than 256; with lines
 * `inner` apart, fewer than 2^32 - 1 elements in all (the frame's 32-bit payloads).
 * Operands: x contiguous [outer, len, inner]; out, idx contiguous [outer, k, inner], either may be NULL
 * (sort_common.cuh's frame).
 */
#include <cub/block/block_store.cuh>

#include "rows_block.cuh"

using namespace cksort;

namespace {

constexpr int64_t MAX_LEN = 4096;

/* The fused kernel for a line of len: W keys a thread and len / W threads, or 32 threads and fewer keys. W is 32,
 * and 16 for 8-byte keys (registers) and 2-byte keys (at 32 they spilled 80-152 bytes; -Xptxas -v). */
template <class K, int KIND, int EB>
int rows_fused(const ck_env *env, const ck_sort_desc &d, cudaStream_t s) {
  constexpr int W = sizeof(K) == 8 || sizeof(K) == 2 ? 16 : 32;
  const K *x = (const K *)d.x;
  K *out = (K *)d.out;
  const int64_t lines = d.outer, len = d.len, k = d.k;
#define CK_ROWS_FUSED(NT, IPT)                                                                                     \
  do {                                                                                                             \
    ck_note(env, sort_rows_fused_kernel<K, KIND, EB, NT, IPT, 4>, NT, 0);                                          \
    return launch_rows_fused<K, KIND, EB, NT, IPT, 4>(x, out, d.idx, len, k, lines, d.descending, s);              \
  } while (0)
  if (len <= 32 * W / 4) CK_ROWS_FUSED(32, W / 4);
  if (len <= 32 * W / 2) CK_ROWS_FUSED(32, W / 2);
  if (len <= 32 * W) CK_ROWS_FUSED(32, W);
  if (len <= 64 * W) CK_ROWS_FUSED(64, W);
  if (len <= 128 * W) CK_ROWS_FUSED(128, W);
  if constexpr (W == 16) CK_ROWS_FUSED(256, W);
#undef CK_ROWS_FUSED
  return (int)cudaErrorInvalidValue; /* supports() keeps len <= 4096 */
}

/* Lines `inner` apart: the frame's keys (contiguous lines) and element numbers, sorted by one block per line. */
template <class K, int IPT>
__global__ void __launch_bounds__(256) sort_rows_block_kernel(const K *__restrict__ keys, uint32_t *out, int64_t len,
                                                              int64_t lines, int key_bits) {
  using Load = cub::BlockLoad<K, 256, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Sort = cub::BlockRadixSort<K, 256, IPT, uint32_t>;
  using Store = cub::BlockStore<uint32_t, 256, IPT, cub::BLOCK_STORE_WARP_TRANSPOSE>;
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
      ck_note(env, sort_rows_block_kernel<K, 4>, 256, 0);
      sort_rows_block_kernel<K, 4><<<grid, 256, 0, s>>>(keys, vals2, len, lines, key_bits);
    } else {
      ck_note(env, sort_rows_block_kernel<K, 16>, 256, 0);
      sort_rows_block_kernel<K, 16><<<grid, 256, 0, s>>>(keys, vals2, len, lines, key_bits);
    }
    return (int)cudaGetLastError();
  }
};

} // namespace

extern "C" int ck_sort_rows_block(const void *desc, const ck_env *env) {
  const ck_sort_desc &d = *(const ck_sort_desc *)desc;
  if (d.inner != 1) return run_sort(d, env, RowsBlockSorter{});
  return by_key(d.dtype, [&](auto tag) {
    using Tg = decltype(tag);
    return rows_fused<typename Tg::key_t, Tg::kind, Tg::eb>(env, d, (cudaStream_t)env->stream);
  });
}

extern "C" const char *ck_sort_rows_block_supports(const void *desc) {
  const ck_sort_desc *d = (const ck_sort_desc *)desc;
  if (d->len > MAX_LEN) return "lines of at most 4096 elements (one block sorts one line)";
  /* lines of 64 and 16 elements lost to CUB's small-segment sorts (2x and 12x), lines of 256 won (17x) */
  if (d->len < 256 && d->outer * d->inner > 1024) return "many lines shorter than 256 (CUB's small-segment sorts)";
  return d->inner == 1 ? nullptr : check_n(d);
}
