/*
 * 06_onesweep.cu — sort step 6: Onesweep (Adinets & Merrill, "Onesweep: A Faster Least Significant Digit Radix
 * Sort for GPUs", 2022).
 *
 * Idea: steps 3-4 read every pair twice per digit (histogram, then scatter) and scan the whole digit-major
 * histogram array between the two. Onesweep reads the keys ONCE up front and counts the digits of every digit
 * position at once (onesweep_hist_kernel: shared-memory counters [pass][256]); one small kernel scans each
 * position's 256 counts exclusively (the global start of every digit). Then ONE kernel per 8-bit digit, in which
 * each block takes a tile (256 threads x 15 pairs) by atomic ticket (tickets come in launch order, so every tile
 * before a block's own is held by a running block: the look-back cannot deadlock), ranks its pairs in the tile
 * (warp-level multi-split: __match_any_sync per item, per-warp counters in shared memory, warps and items in
 * element order: stable), publishes its 256 per-digit counts, and thread d looks back over the preceding tiles
 * for digit d (decoupled look-back: a tile's aggregate or its inclusive prefix, whichever is there). The tile is
 * then reordered by digit in shared memory and written out with consecutive threads on consecutive positions of
 * each digit's run. Per digit pass each pair is read once and written once.
 * Changed from step 4 (radix8): no per-pass histogram kernel and no global scan between passes (one histogram
 * pass for all digits), per-digit look-back instead of a digit-major scan, and a shared-memory reorder before the
 * scatter (step 4 writes each pair straight from the rank, 32 lanes to up to 32 digits).
 * Lines back to back (inner == 1: a 1-D sort, rows along the last dim) are fused: the pairs carry x's own bits and
 * the element number, the digits being those of key_of(bits) (sort_common.cuh's order: NaN last, -0 as +0,
 * descending complemented); the first pass reads x and numbers the elements itself, the last writes the values
 * (x's bits, so NaN payloads and the sign of zero survive) and the 1-based i64 indices of the first k positions of
 * each line. So the frame's key and gather kernels (a read and write of every pair, and a random read of x) are
 * gone. Lines `inner` apart (inner > 1) go through that frame (make_keys, the passes, gather).
 * Status words: [tile][digit] 64-bit, count in the low 48 bits, a tag 2p + 1 (aggregate) or 2p + 2 (inclusive
 * prefix) of pass p in the high bits; zeroed once per sort, so the words of pass p - 1 read as "not yet" in
 * pass p and no pass needs a memset of its own. Several lines: passes over the line number (g / len) follow the
 * key's (as in steps 3-4), and they are digit positions of the up-front histogram like the key's.
 * Launch: histogram 256 threads x up to 1024 blocks; offsets one 256-thread block per digit position; per digit
 * pass ceil(n / 3840) blocks of 256 threads (static shared memory: the tile's pairs, 21-48 KB by key width; u64
 * keys sit 984 B under the 48 KB static limit, so a bigger tile needs dynamic memory and cudaFuncSetAttribute
 * per device; __launch_bounds__(256, 2): 80 registers for 4-byte keys, 3 blocks per SM; 8-byte keys 95-98, 2
 * blocks; no spills). Workspace: the status words (2 KB a tile), and two buffers of pairs (one for two passes, none for one).
 * Limits: fewer than 2^32 - 1 elements (32-bit payloads, 32-bit offsets).
 * Operands: x contiguous [outer, len, inner]; out, idx contiguous [outer, k, inner] (either may be NULL).
 */
#include "radix_common.cuh"
#include "../scan/single_pass.cuh" /* ld_volatile, st_volatile */

using namespace cksort;
using ckscan::ld_volatile;
using ckscan::st_volatile;

#define OS_BLOCK 256
#define OS_ITEMS 15
#define OS_WARPS (OS_BLOCK / 32)
#define OS_WARP_ITEMS (OS_ITEMS * 32)
#define OS_TILE (OS_BLOCK * OS_ITEMS)
#define OS_RADIX 256
#define OS_MAXP 12 /* 8 passes of a 64-bit key + 4 of a 32-bit line number */
#define OS_COUNT_MASK ((1ull << 48) - 1ull)

static_assert(OS_BLOCK == OS_RADIX, "one thread per digit for the counts and the look-back");

// ---------------------------------------------------------------- kernels

/* hist[p * 256 + d] += the number of pairs whose digit p is d, for every digit position p at once. The digits are
 * those of key_of(u) (identity for the frame's keys: KIND_UNSIGNED, ascending); the payloads matter only for line
 * digits (vals null: the fused path, where the payload is the element number e). */
template <class K, int KIND, int EB>
__global__ void __launch_bounds__(OS_BLOCK) onesweep_hist_kernel(const K *__restrict__ keys,
                                                                 const uint32_t *__restrict__ vals, int64_t n,
                                                                 int64_t len, int key_passes, int passes,
                                                                 int descending, uint32_t *hist) {
  __shared__ uint32_t sh[OS_MAXP * OS_RADIX];
  for (int i = threadIdx.x; i < passes * OS_RADIX; i += OS_BLOCK) sh[i] = 0;
  __syncthreads();
  const bool lines = passes > key_passes; /* payloads are read only when line digits need them */
  const int64_t stride = (int64_t)gridDim.x * OS_BLOCK;
  int64_t e = (int64_t)blockIdx.x * OS_BLOCK + threadIdx.x;
  for (; e + 3 * stride < n; e += 4 * stride) { /* four loads in flight per thread */
    K u[4];
    uint32_t g[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      u[q] = keys[e + q * stride];
      g[q] = !lines ? 0u : vals ? vals[e + q * stride] : (uint32_t)(e + q * stride);
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const K key = key_of<K, KIND, EB>(u[q], descending != 0);
      for (int p = 0; p < passes; ++p) atomicAdd(&sh[p * OS_RADIX + digit_of<K, 8>(key, g[q], p, key_passes, len)], 1u);
    }
  }
  for (; e < n; e += stride) {
    const K key = key_of<K, KIND, EB>(keys[e], descending != 0);
    const uint32_t g = !lines ? 0u : vals ? vals[e] : (uint32_t)e;
    for (int p = 0; p < passes; ++p) atomicAdd(&sh[p * OS_RADIX + digit_of<K, 8>(key, g, p, key_passes, len)], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < passes * OS_RADIX; i += OS_BLOCK)
    if (sh[i]) atomicAdd(&hist[i], sh[i]);
}

/* Exclusive scan of one value per thread over a 256-thread block (sums < 2^32); wsum: 8 words of shared memory. */
__device__ __forceinline__ uint32_t block_excl256(uint32_t v, uint32_t *wsum) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  uint32_t inc = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const uint32_t t = __shfl_up_sync(0xffffffffu, inc, o);
    if (lane >= o) inc += t;
  }
  if (lane == 31) wsum[w] = inc;
  __syncthreads();
  uint32_t before = 0;
  for (int q = 0; q < w; ++q) before += wsum[q];
  __syncthreads(); /* wsum may be reused */
  return before + inc - v;
}

/* offsets[p * 256 + d] = the number of pairs whose digit p is below d: block p scans position p. */
__global__ void __launch_bounds__(OS_RADIX) onesweep_offsets_kernel(const uint32_t *__restrict__ hist,
                                                                    uint32_t *offsets) {
  __shared__ uint32_t wsum[OS_WARPS];
  const int q = blockIdx.x * OS_RADIX + threadIdx.x;
  offsets[q] = block_excl256(hist[q], wsum);
}

template <class K> struct OsSmem {
  union {
    uint32_t wcnt[OS_WARPS][OS_RADIX]; /* ranking: each warp's count of each digit, then its offset */
    struct {
      K k[OS_TILE];
      uint32_t v[OS_TILE];
    } x; /* the tile reordered by digit */
  } u;
  uint32_t off[OS_RADIX];  /* where digit d starts in the reordered tile */
  uint32_t base[OS_RADIX]; /* global position of digit d's run minus off[d] (modulo 2^32) */
  uint32_t wsum[OS_WARPS];
  uint32_t tile;
};

enum { OS_FIRST = 1, OS_LAST = 2 };

/* One digit pass: pairs (keys, vals) -> (keys_out, vals_out), stably by digit `pass` of key_of(u). One tile per
 * block. MODE & OS_FIRST: the input is x itself (keys = x, the payload is the element number, vals unused);
 * MODE & OS_LAST: the output is the result: out[l, j] (keys_out, may be null) and idx[l, j] = r + 1 for the pair of
 * element r of line l landing on position j < k of its line. Both on the fused path only (lines back to back,
 * inner == 1), where the pairs carry x's bits rather than keys. */
template <class K, int KIND, int EB, int MODE>
__global__ void __launch_bounds__(OS_BLOCK, 2)
    onesweep_pass_kernel(const K *__restrict__ keys, const uint32_t *__restrict__ vals, K *keys_out, uint32_t *vals_out,
                         int64_t *idx_out, int64_t k, int64_t n, int64_t len, int pass, int key_passes, int descending,
                         const uint32_t *__restrict__ offsets, unsigned long long *status, uint32_t *ticket) {
  __shared__ OsSmem<K> sm;
  const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
  const bool desc = descending != 0;
  if (tid == 0) sm.tile = atomicAdd(ticket, 1u);
  for (int q = tid; q < OS_WARPS * OS_RADIX; q += OS_BLOCK) (&sm.u.wcnt[0][0])[q] = 0;
  __syncthreads();
  const int64_t t = sm.tile;
  const int64_t start = t * OS_TILE;
  const int nv = (int)(n - start < OS_TILE ? n - start : OS_TILE);

  /* warp w holds elements [w * 480, (w + 1) * 480) of the tile; item m of lane l is element w * 480 + m * 32 + l */
  K key[OS_ITEMS]; /* the pair's bits as stored (x's bits on the fused path); its digits are key_of's */
  uint32_t g[OS_ITEMS];
  uint32_t r[OS_ITEMS];
#pragma unroll
  for (int m = 0; m < OS_ITEMS; ++m) {
    const int i = w * OS_WARP_ITEMS + m * 32 + lane;
    key[m] = 0;
    g[m] = 0;
    if (i < nv) {
      key[m] = keys[start + i];
      g[m] = (MODE & OS_FIRST) ? (uint32_t)(start + i) : vals[start + i];
    }
  }

  /* rank within the warp: items in order, lanes in order (element order), equal digits found by match */
  const unsigned lt = (1u << lane) - 1u;
#pragma unroll
  for (int m = 0; m < OS_ITEMS; ++m) {
    const bool valid = w * OS_WARP_ITEMS + m * 32 + lane < nv;
    const int d = digit_of<K, 8>(key_of<K, KIND, EB>(key[m], desc), g[m], pass, key_passes, len);
    const unsigned peers = __match_any_sync(0xffffffffu, valid ? d : -1);
    const int leader = __ffs(peers) - 1;
    uint32_t old = 0;
    if (valid && lane == leader) {
      old = sm.u.wcnt[w][d];
      sm.u.wcnt[w][d] = old + (uint32_t)__popc(peers);
    }
    old = __shfl_sync(0xffffffffu, old, leader);
    r[m] = old + (uint32_t)__popc(peers & lt);
    __syncwarp();
  }
  __syncthreads();

  /* thread d: the warps' counts of digit d become their offsets; the tile's count of d */
  const int d = tid;
  uint32_t cnt = 0;
#pragma unroll
  for (int q = 0; q < OS_WARPS; ++q) {
    const uint32_t c = sm.u.wcnt[q][d];
    sm.u.wcnt[q][d] = cnt;
    cnt += c;
  }

  /* publish the tile's count of digit d, then look back for the count of d in every tile before this one */
  unsigned long long *st = status + t * OS_RADIX + d;
  const unsigned long long AGG = (unsigned long long)(2 * pass + 1) << 48;
  const unsigned long long PRE = (unsigned long long)(2 * pass + 2) << 48;
  uint32_t excl = 0;
  if (t == 0) {
    st_volatile(st, PRE | cnt);
  } else {
    st_volatile(st, AGG | cnt);
    for (int64_t j = t - 1;;) {
      const unsigned long long v = ld_volatile(status + j * OS_RADIX + d);
      const unsigned long long tag = v & ~OS_COUNT_MASK;
      if (tag == PRE) {
        excl += (uint32_t)(v & OS_COUNT_MASK);
        break;
      }
      if (tag == AGG) { /* tile 0 always publishes a prefix, so j stays >= 0 */
        excl += (uint32_t)(v & OS_COUNT_MASK);
        --j;
      }
    }
    st_volatile(st, PRE | (unsigned long long)(excl + cnt));
  }
  const uint32_t off = block_excl256(cnt, sm.wsum);
  sm.off[d] = off;
  sm.base[d] = offsets[d] + excl - off;
  __syncthreads();

  /* ranks in the reordered tile: digit start + warp offset + rank in the warp */
#pragma unroll
  for (int m = 0; m < OS_ITEMS; ++m) {
    if (w * OS_WARP_ITEMS + m * 32 + lane < nv) {
      const int dm = digit_of<K, 8>(key_of<K, KIND, EB>(key[m], desc), g[m], pass, key_passes, len);
      r[m] += sm.off[dm] + sm.u.wcnt[w][dm];
    }
  }
  __syncthreads(); /* the counters are read: the union becomes the reorder buffer */
#pragma unroll
  for (int m = 0; m < OS_ITEMS; ++m) {
    if (w * OS_WARP_ITEMS + m * 32 + lane < nv) {
      sm.u.x.k[r[m]] = key[m];
      sm.u.x.v[r[m]] = g[m];
    }
  }
  __syncthreads();
#pragma unroll
  for (int m = 0; m < OS_ITEMS; ++m) {
    const int i = m * OS_BLOCK + tid;
    if (i < nv) {
      const K u = sm.u.x.k[i];
      const uint32_t gi = sm.u.x.v[i];
      const int dm = digit_of<K, 8>(key_of<K, KIND, EB>(u, desc), gi, pass, key_passes, len);
      const uint32_t pos = sm.base[dm] + (uint32_t)i; /* < n < 2^32: exact modulo 2^32 */
      if (MODE & OS_LAST) {
        int64_t l = 0, j = pos; /* the line of position pos, which is the line of element gi */
        if (len != n) {
          l = (int64_t)pos / len;
          j = (int64_t)pos - l * len;
        }
        if (j < k) {
          const int64_t q = l * k + j;
          if (keys_out) keys_out[q] = u;
          if (idx_out) idx_out[q] = (int64_t)gi - l * len + 1; /* none: a sort without indices */
        }
      } else {
        keys_out[pos] = u;
        vals_out[pos] = gi;
      }
    }
  }
}

// ---------------------------------------------------------------- launcher

/* The passes over pairs held in (ka, va), or, fused (x != null: lines back to back), over x's own bits: the first
 * pass reads x and the last writes out (may be null) and idx, the first k positions of each line. Otherwise *sorted
 * gets the buffer of the final payloads. */
template <class K, int KIND, int EB>
static int onesweep_passes(const ck_env *env, const K *x, K *out, int64_t *idx, int64_t k, K *ka, uint32_t *va,
                           K *kb, uint32_t *vb, int64_t n, int64_t len, int64_t lines, int descending,
                           uint32_t **sorted) {
  cudaStream_t s = (cudaStream_t)env->stream;
  const bool fused = x != nullptr;
  int line_bits = 0;
  while (line_bits < 32 && ((int64_t)1 << line_bits) < lines) ++line_bits;
  const int key_passes = (int)sizeof(K), passes = key_passes + (int)cdiv(line_bits, 8);
  if (passes > OS_MAXP) return (int)cudaErrorInvalidValue;
  const int64_t ntiles = cdiv(n, OS_TILE);
  /* [status: ntiles x 256 u64 | hist: MAXP x 256 | offsets: MAXP x 256 | tickets: MAXP], all zeroed once */
  const size_t status_b = (size_t)ntiles * OS_RADIX * sizeof(unsigned long long);
  const size_t table_b = (size_t)OS_MAXP * OS_RADIX * sizeof(uint32_t);
  const size_t bytes = status_b + 2 * table_b + OS_MAXP * sizeof(uint32_t);
  Ws w(env, bytes);
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  unsigned long long *status = (unsigned long long *)w.p;
  uint32_t *hist = (uint32_t *)((char *)w.p + status_b), *offsets = hist + OS_MAXP * OS_RADIX;
  uint32_t *tickets = offsets + OS_MAXP * OS_RADIX;
  int err = (int)cudaMemsetAsync(w.p, 0, bytes, s);
  if (err) return err;

  const int64_t hblocks = cdiv(n, OS_BLOCK * 16);
  const auto hk = onesweep_hist_kernel<K, KIND, EB>;
  ck_note(env, hk, OS_BLOCK, 0);
  hk<<<(unsigned)(hblocks < 1024 ? hblocks : 1024), OS_BLOCK, 0, s>>>(fused ? x : ka, fused ? nullptr : va, n, len,
                                                                    key_passes, passes, descending, hist);
  if ((err = (int)cudaGetLastError())) return err;
  ck_note(env, onesweep_offsets_kernel, OS_RADIX, 0);
  onesweep_offsets_kernel<<<passes, OS_RADIX, 0, s>>>(hist, offsets);
  if ((err = (int)cudaGetLastError())) return err;

  for (int p = 0; p < passes; ++p) {
    const int mode = fused ? (p == 0 ? OS_FIRST : 0) | (p == passes - 1 ? OS_LAST : 0) : 0;
    const K *in = mode & OS_FIRST ? x : ka;
    K *ko = mode & OS_LAST ? out : kb;
    void (*kernel)(const K *, const uint32_t *, K *, uint32_t *, int64_t *, int64_t, int64_t, int64_t, int, int, int,
                   const uint32_t *, unsigned long long *, uint32_t *) =
        mode == 0          ? onesweep_pass_kernel<K, KIND, EB, 0>
        : mode == OS_FIRST ? onesweep_pass_kernel<K, KIND, EB, OS_FIRST>
        : mode == OS_LAST  ? onesweep_pass_kernel<K, KIND, EB, OS_LAST>
                           : onesweep_pass_kernel<K, KIND, EB, OS_FIRST | OS_LAST>;
    ck_note(env, kernel, OS_BLOCK, 0);
    kernel<<<(unsigned)ntiles, OS_BLOCK, 0, s>>>(in, va, ko, vb, idx, k, n, len, p, key_passes, descending,
                                                 offsets + p * OS_RADIX, status, tickets + p);
    if ((err = (int)cudaGetLastError())) return err;
    swap_buffers(ka, kb, va, vb);
  }
  if (sorted) *sorted = va;
  return 0;
}

/* Lines `inner` apart (inner > 1): the frame's keys and payloads (sort_common.cuh), passes over the key, then the
 * line number. */
struct OnesweepSorter {
  template <class K>
  int operator()(const ck_env *env, K *keys, uint32_t *vals, K *keys2, uint32_t *vals2, int64_t n, int64_t len,
                 int64_t lines, int key_bits, uint32_t **sorted) const {
    *sorted = vals;
    if (n <= 1) return 0;
    return onesweep_passes<K, KIND_UNSIGNED, 0>(env, nullptr, nullptr, nullptr, 0, keys, vals, keys2, vals2, n, len,
                                                lines, 0, sorted);
  }
};

/* Lines back to back (inner == 1): x's bits through the passes, no key or gather kernels. Ping-pong buffers only
 * for the passes between the first and the last (none for one-byte keys of one line: one pass from x to the
 * result). */
template <class K, int KIND, int EB> static int onesweep_lines(const ck_sort_desc &d, const ck_env *env) {
  const int64_t n = d.outer * d.len;
  int line_bits = 0;
  while (line_bits < 32 && ((int64_t)1 << line_bits) < d.outer) ++line_bits;
  const int passes = (int)sizeof(K) + (int)cdiv(line_bits, 8);
  const size_t pair = sizeof(K) + sizeof(uint32_t);
  Ws w(env, passes >= 2 ? (size_t)n * pair * (passes >= 3 ? 2 : 1) + 64 : 1);
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  K *ka = (K *)w.p, *kb = passes >= 3 ? ka + n : ka;
  char *after = (char *)(passes >= 3 ? kb + n : ka + n);
  uint32_t *va = (uint32_t *)(((uintptr_t)after + 15) & ~(uintptr_t)15), *vb = passes >= 3 ? va + n : va;
  /* the first pass writes (kb, vb) and swaps them into (ka, va): with two passes both name one buffer */
  return onesweep_passes<K, KIND, EB>(env, (const K *)d.x, (K *)d.out, d.idx, d.k, ka, va, kb, vb, n, d.len, d.outer,
                                      d.descending, nullptr);
}

extern "C" int ck_sort_onesweep(const void *desc, const ck_env *env) {
  const ck_sort_desc &d = *(const ck_sort_desc *)desc;
  if (d.inner != 1 || d.len <= 1) return run_sort(d, env, OnesweepSorter{});
  return by_key(d.dtype, [&](auto tag) {
    using Tg = decltype(tag);
    return onesweep_lines<typename Tg::key_t, Tg::kind, Tg::eb>(d, env);
  });
}

extern "C" const char *ck_sort_onesweep_supports(const void *desc) { return check_n((const ck_sort_desc *)desc); }
