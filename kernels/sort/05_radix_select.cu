/*
 * 05_radix_select.cu — sort step 5 (topk's rung): radix select, then a sort of the k winners only.
 *
 * Idea: topk(x, k) needs the k first elements of each sorted line, not the whole sort. A radix select finds the
 * k-th composite key (the ladder's key, then the position: select_common.cuh) digit by digit from the top, each
 * pass histogramming the candidates' next digit and keeping the bucket where the running count reaches k; then
 * one filter pass takes the elements at or below it (exactly k: ties at the threshold take the lowest positions)
 * and only those k are sorted (largest first for topk, as the ladder's other rungs order them). Change from the
 * steps before: O(n) reads per pass and no pass writes the n pairs; the sort is of k items.
 * Two shapes (picked by the launcher, same results):
 *  - rows: one block per line (lines > 4 x SMs, or lines of at most 16384). The line's keys stay in registers
 *    when it has at most 2048 elements (8 per thread), else each pass re-reads it (L1/L2); 8-bit digits; the k
 *    winners (k <= 2048) are sorted in shared memory (bitonic) and written by the same block: one launch.
 *  - grid: few long lines. 11-bit digits; a pass is a histogram kernel over the whole line (grid-stride, about 8
 *    blocks per SM over the lines, shared-memory counts added to the line's global histogram) and a one-block-per-line step kernel
 *    that picks the bucket and zeroes the histogram: the selection state stays on the device, no host round
 *    trip; passes whose line is already decided exit at once. When a pass leaves at most `bufcap` candidates,
 *    the next full read also compacts them into a buffer (and sends the elements already below the threshold to
 *    the winners), so the remaining passes and the filter read only the buffer: for random f32 data the line is
 *    read about 3 times. A last kernel sorts each line's k winners in shared memory (one block per line).
 *  k > 2048: the winners (composites, distinct) go through CUB's DeviceRadixSort (one line) or
 *  DeviceSegmentedSort (many) keys, then a gather writes values and indices.
 * Lines with inner > 1 are first copied contiguous (xl[l, r]); values are read from x (or that copy), so -0 and
 * NaN payloads survive.
 * Launch: 256 threads. Limits: fewer than 2^32 - 1 elements (32-bit positions); any k <= len, any dtype.
 * Operands: x contiguous [outer, len, inner]; out, idx contiguous [outer, k, inner] (either may be NULL).
 */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "select_common.cuh"

using namespace cksort;
using namespace cksel;

#define SEL_NT 256
#define SEL_KCAP 2048     /* winners sorted in shared memory up to this many per line */
#define ROW_ITEMS 8       /* rows of up to SEL_NT * ROW_ITEMS elements keep their keys in registers */
#define ROW_BITS 8        /* digit of the rows path */
#define ROW_MAX_LEN 16384 /* lines this short always take the rows path */
#define GRID_BITS 11      /* digit of the grid path */
#define GRID_U 4          /* loads in flight per thread in the grid path's full reads */

namespace {

// ---------------------------------------------------------------- lines made contiguous (inner > 1)

template <class K>
__global__ void __launch_bounds__(256) sel_lines_kernel(const K *__restrict__ x, K *xl, int64_t outer, int64_t len,
                                                        int64_t inner) {
  const int64_t n = outer * len * inner;
  for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < n; g += (int64_t)gridDim.x * blockDim.x) {
    const int64_t l = g / len, r = g % len, o = l / inner, i = l % inner;
    xl[g] = x[(o * len + r) * inner + i];
  }
}

// ---------------------------------------------------------------- rows: one block per line

/* f(valid, composite) for every element of a row, in rounds uniform over the block (vote needs whole warps):
 * from the keys held in registers (cached) or read again. */
template <class K, int KIND, int EB, class C, class F>
__device__ __forceinline__ void row_each(const C (&kc)[ROW_ITEMS], const K *__restrict__ row, bool cached, int64_t len,
                                         int ib, int desc, F &f) {
  if (cached) {
#pragma unroll
    for (int q = 0; q < ROW_ITEMS; ++q)
      if (q * SEL_NT < len) f(q * SEL_NT + (int64_t)threadIdx.x < len, kc[q]);
    return;
  }
  for (int64_t base = 0; base < len; base += SEL_NT) {
    const int64_t r = base + threadIdx.x;
    const bool v = r < len;
    f(v, comp_of<C>(v ? key_of<K, KIND, EB>(row[r], desc != 0) : (K)0, (uint32_t)r, ib));
  }
}

template <class K, int KIND, int EB>
__global__ void __launch_bounds__(SEL_NT) sel_rows_kernel(const K *__restrict__ xl, K *out, int64_t *idx,
                                                          Comp<K> *gcand, int64_t lines, int64_t len, int64_t k,
                                                          int64_t inner, int ib, int desc) {
  using C = Comp<K>;
  constexpr int R = 1 << ROW_BITS;
  using B = Bucket<R, SEL_NT>;
  __shared__ unsigned hist[R];
  __shared__ typename B::Temp temp;
  __shared__ typename B::Res res;
  __shared__ C win[SEL_KCAP];
  __shared__ unsigned nwin;
  const bool cached = len <= SEL_NT * ROW_ITEMS, in_smem = k <= SEL_KCAP;
  for (int64_t l = blockIdx.x; l < lines; l += gridDim.x) {
    const K *row = xl + l * len;
    C kc[ROW_ITEMS]; /* the composites of a short row, computed once */
    if (cached) {
#pragma unroll
      for (int q = 0; q < ROW_ITEMS; ++q) {
        const int64_t r = q * SEL_NT + threadIdx.x;
        kc[q] = comp_of<C>(r < len ? key_of<K, KIND, EB>(row[r], desc != 0) : (K)0, (uint32_t)r, ib);
      }
    }
    auto each = [&](auto &&f) { row_each<K, KIND, EB, C>(kc, row, cached, len, ib, desc, f); };
    /* nwin is cleared here, before the digit passes' barriers (done starts 0: at least one pass), not after the
       last pass with no barrier between: compute-sanitizer's racecheck (H100, round 3 session 6) reported the
       last pass's read of res (line "advance") against that write, at nwin's address, which sits just before
       res's three words (ptxas reading them as one 16-byte load is the likely reason) */
    if (threadIdx.x == 0) nwin = 0;
    Sel<C> s{(C)0, (long long)k, (int)sizeof(K) * 8 + ib, 0, 0, 0u, 0u};
    while (!s.done) {
      const int d = min(ROW_BITS, s.shift), ns = s.shift - d;
      const C mask = (C)((1u << d) - 1u);
      for (int b = threadIdx.x; b < R; b += SEL_NT) hist[b] = 0;
      __syncthreads();
      each([&](bool v, C c) { vote(hist, v && top_bits(c, s.shift) == s.prefix ? (int)((c >> ns) & mask) : -1); });
      __syncthreads();
      B::find(hist, s.krem, temp, res);
      advance(s, d, res.b, res.before, res.cnt);
    }
    each([&](bool v, C c) {
      if (v && top_bits(c, s.shift) <= s.prefix) {
        const unsigned p = atomicAdd(&nwin, 1u);
        if (p < k) {
          if (in_smem) win[p] = c;
          else gcand[l * k + p] = c;
        }
      }
    });
    __syncthreads();
    if (in_smem) {
      block_sort<C, SEL_NT>(win, (int)k);
      for (int64_t j = threadIdx.x; j < k; j += SEL_NT) put(row, out, idx, l, j, win[j], ib, k, inner);
    }
    __syncthreads(); /* win, nwin and hist are the next line's */
  }
}

// ---------------------------------------------------------------- grid: blocks per line, state on the device

template <class C>
__global__ void __launch_bounds__(256) sel_init_kernel(Sel<C> *st, unsigned *hist, int64_t lines, long long k, int tot) {
  const int64_t g0 = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t g = g0; g < lines * (1 << GRID_BITS); g += step) hist[g] = 0;
  for (int64_t g = g0; g < lines; g += step) st[g] = Sel<C>{(C)0, k, tot, 0, 0, 0u, 0u};
}

/* Full read of line blockIdx.y (mode 0/1) or of its buffer (mode 2): f(valid, composite, from_line). */
template <class K, int KIND, int EB, class C, class F>
__device__ __forceinline__ void grid_each(const K *__restrict__ line, const C *lb, int64_t len, unsigned nbuf,
                                          int mode, int ib, int desc, F &&f) {
  const int64_t step = (int64_t)gridDim.x * SEL_NT * GRID_U;
  if (mode == 2) {
    for (int64_t base = (int64_t)blockIdx.x * SEL_NT * GRID_U; base < nbuf; base += step)
#pragma unroll
      for (int q = 0; q < GRID_U; ++q) {
        const int64_t j = base + q * SEL_NT + threadIdx.x;
        f(j < nbuf, j < nbuf ? lb[j] : (C)0);
      }
    return;
  }
  for (int64_t base = (int64_t)blockIdx.x * SEL_NT * GRID_U; base < len; base += step) {
    K kv[GRID_U];
#pragma unroll
    for (int q = 0; q < GRID_U; ++q) {
      const int64_t r = base + q * SEL_NT + threadIdx.x;
      kv[q] = r < len ? line[r] : (K)0;
    }
#pragma unroll
    for (int q = 0; q < GRID_U; ++q) {
      const int64_t r = base + q * SEL_NT + threadIdx.x;
      f(r < len, comp_of<C>(key_of<K, KIND, EB>(kv[q], desc != 0), (uint32_t)r, ib));
    }
  }
}

template <class K, int KIND, int EB>
__global__ void __launch_bounds__(SEL_NT) sel_hist_kernel(const K *__restrict__ xl, Sel<Comp<K>> *st, unsigned *hist,
                                                          Comp<K> *buf, Comp<K> *cand, int64_t len, int64_t k,
                                                          int64_t bufcap, int ib, int desc) {
  using C = Comp<K>;
  constexpr int R = 1 << GRID_BITS;
  __shared__ unsigned h[R];
  const int64_t l = blockIdx.y;
  Sel<C> *sl = st + l;
  if (sl->done) return;
  const C prefix = sl->prefix;
  const int shift = sl->shift, mode = sl->mode, d = min(GRID_BITS, shift), ns = shift - d;
  const C mask = (C)((1u << d) - 1u);
  for (int b = threadIdx.x; b < R; b += SEL_NT) h[b] = 0;
  __syncthreads();
  C *lb = buf + l * bufcap, *lc = cand + l * k;
  grid_each<K, KIND, EB>(xl + l * len, (const C *)lb, len, mode == 2 ? sl->nbuf : 0u, mode, ib, desc,
                         [&](bool v, C c) {
                           const C t = top_bits(c, shift);
                           vote(h, v && t == prefix ? (int)((c >> ns) & mask) : -1);
                           if (mode == 1 && v && t <= prefix) { /* compact: candidates to buf, winners to cand */
                             if (t == prefix) {
                               const unsigned p = atomicAdd(&sl->nbuf, 1u);
                               if (p < bufcap) lb[p] = c;
                             } else {
                               const unsigned p = atomicAdd(&sl->ncand, 1u);
                               if (p < k) lc[p] = c;
                             }
                           }
                         });
  __syncthreads();
  for (int b = threadIdx.x; b < R; b += SEL_NT)
    if (h[b]) atomicAdd(&hist[l * R + b], h[b]);
}

template <class C>
__global__ void __launch_bounds__(SEL_NT) sel_step_kernel(Sel<C> *st, unsigned *hist, int64_t bufcap) {
  constexpr int R = 1 << GRID_BITS;
  using B = Bucket<R, SEL_NT>;
  __shared__ typename B::Temp temp;
  __shared__ typename B::Res res;
  const int64_t l = blockIdx.x;
  Sel<C> s = st[l];
  if (s.done) return;
  unsigned *h = hist + l * R;
  B::find(h, s.krem, temp, res);
  advance(s, min(GRID_BITS, s.shift), res.b, res.before, res.cnt);
  if (s.mode == 1) s.mode = 2; /* the pass just run compacted the line */
  else if (s.mode == 0 && !s.done && (int64_t)res.cnt <= bufcap) s.mode = 1;
  for (int b = threadIdx.x; b < R; b += SEL_NT) h[b] = 0;
  if (threadIdx.x == 0) st[l] = s;
}

template <class K, int KIND, int EB>
__global__ void __launch_bounds__(SEL_NT) sel_filter_kernel(const K *__restrict__ xl, Sel<Comp<K>> *st,
                                                            const Comp<K> *buf, Comp<K> *cand, int64_t len, int64_t k,
                                                            int64_t bufcap, int ib, int desc) {
  using C = Comp<K>;
  const int64_t l = blockIdx.y;
  Sel<C> *sl = st + l;
  const C prefix = sl->prefix;
  const int shift = sl->shift, mode = sl->mode;
  C *lc = cand + l * k;
  grid_each<K, KIND, EB>(xl + l * len, buf + l * bufcap, len, mode == 2 ? sl->nbuf : 0u, mode, ib, desc,
                         [&](bool v, C c) {
                           if (v && top_bits(c, shift) <= prefix) {
                             const unsigned p = atomicAdd(&sl->ncand, 1u);
                             if (p < k) lc[p] = c;
                           }
                         });
}

/* Each line's k (<= SEL_KCAP) winners sorted in shared memory, then written. */
template <class K>
__global__ void __launch_bounds__(SEL_NT) sel_sort_kernel(const Comp<K> *cand, const K *__restrict__ xl, K *out,
                                                          int64_t *idx, int64_t len, int64_t k, int64_t inner, int ib) {
  using C = Comp<K>;
  __shared__ C win[SEL_KCAP];
  const int64_t l = blockIdx.x;
  for (int64_t j = threadIdx.x; j < k; j += SEL_NT) win[j] = cand[l * k + j];
  __syncthreads();
  block_sort<C, SEL_NT>(win, (int)k);
  for (int64_t j = threadIdx.x; j < k; j += SEL_NT) put(xl + l * len, out, idx, l, j, win[j], ib, k, inner);
}

/* After a device-wide sort of the winners (k > SEL_KCAP). */
template <class K>
__global__ void __launch_bounds__(256) sel_gather_kernel(const Comp<K> *sorted, const K *__restrict__ xl, K *out,
                                                         int64_t *idx, int64_t lines, int64_t len, int64_t k,
                                                         int64_t inner, int ib) {
  for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < lines * k; q += (int64_t)gridDim.x * blockDim.x)
    put(xl + (q / k) * len, out, idx, q / k, q % k, sorted[q], ib, k, inner);
}

struct LineStart {
  int64_t len;
  __host__ __device__ __forceinline__ int64_t operator()(int64_t l) const { return l * len; }
};

/* The winners (distinct composites) of every line in order: a radix sort of the keys, by segment for many lines. */
template <class C> static int sort_winners(const ck_env *env, const C *cand, C *sorted, int64_t lines, int64_t k, int tot) {
  ck_order_check(env);
  cudaStream_t s = (cudaStream_t)env->stream;
  if (lines == 1)
    return with_temp(env, [&](void *t, size_t &b) {
      return cub::DeviceRadixSort::SortKeys(t, b, cand, sorted, k, 0, tot, s);
    });
  auto begins = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LineStart{k});
  return with_temp(env, [&](void *t, size_t &b) {
    return cub::DeviceSegmentedSort::SortKeys(t, b, cand, sorted, lines * k, lines, begins, begins + 1, s);
  });
}

static inline size_t al(size_t b) { return (b + 255) & ~(size_t)255; }

template <class K, int KIND, int EB> static int run_select(const ck_sort_desc &d, const ck_env *env) {
  using C = Comp<K>;
  cudaStream_t s = (cudaStream_t)env->stream;
  const int64_t lines = d.outer * d.inner, len = d.len, k = d.k, n = lines * len;
  if (k <= 0 || n == 0) return 0;
  int ib = 0;
  while (((int64_t)1 << ib) < len) ++ib; /* bits of the largest position, len - 1 */
  const int tot = (int)sizeof(K) * 8 + ib;
  const int sms = env->sm_count > 0 ? env->sm_count : 1;
  const bool rows = len <= ROW_MAX_LEN || lines > 4 * (int64_t)sms;
  const int64_t bufcap = rows ? 0 : std::min<int64_t>(len, std::max<int64_t>(4096, ((int64_t)1 << 21) / lines));
  const bool big_k = k > SEL_KCAP;
  /* one workspace: the contiguous lines, the winners (and their sorted copy), the grid path's state */
  const size_t b_xl = d.inner > 1 ? al(n * sizeof(K)) : 0, b_cand = (rows && !big_k) ? 0 : al(lines * k * sizeof(C));
  const size_t b_sorted = big_k ? b_cand : 0, b_st = rows ? 0 : al(lines * sizeof(Sel<C>));
  const size_t b_hist = rows ? 0 : al(lines * ((size_t)1 << GRID_BITS) * sizeof(unsigned));
  const size_t b_buf = al(lines * bufcap * sizeof(C));
  Ws w(env, b_xl + b_cand + b_sorted + b_st + b_hist + b_buf);
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  char *p = (char *)w.p;
  K *xc = (K *)p;
  C *cand = (C *)(p += b_xl), *sorted = (C *)(p += b_cand);
  Sel<C> *st = (Sel<C> *)(p += b_sorted);
  unsigned *hist = (unsigned *)(p += b_st);
  C *buf = (C *)(p += b_hist);
  const K *xl = (const K *)d.x;
  int err;
  if (d.inner > 1) {
    ck_note(env, sel_lines_kernel<K>, 256, 0);
    sel_lines_kernel<K><<<grid_for(cdiv(n, 256)), 256, 0, s>>>((const K *)d.x, xc, d.outer, len, d.inner);
    if ((err = (int)cudaGetLastError())) return err;
    xl = xc;
  }
  if (rows) {
    ck_note(env, sel_rows_kernel<K, KIND, EB>, SEL_NT, 0);
    sel_rows_kernel<K, KIND, EB><<<grid_for(lines), SEL_NT, 0, s>>>(xl, (K *)d.out, d.idx, cand, lines, len, k,
                                                                    d.inner, ib, d.descending);
    if ((err = (int)cudaGetLastError())) return err;
  } else {
    ck_note(env, sel_init_kernel<C>, 256, 0);
    sel_init_kernel<C><<<grid_for(cdiv(lines << GRID_BITS, 256)), 256, 0, s>>>(st, hist, lines, (long long)k, tot);
    const dim3 g((unsigned)std::max<int64_t>(1, std::min<int64_t>(cdiv(len, SEL_NT * GRID_U), cdiv(8 * sms, lines))),
                 (unsigned)lines);
    for (int pass = 0; pass < (int)cdiv(tot, GRID_BITS); ++pass) {
      ck_note(env, sel_hist_kernel<K, KIND, EB>, SEL_NT, 0);
      sel_hist_kernel<K, KIND, EB><<<g, SEL_NT, 0, s>>>(xl, st, hist, buf, cand, len, k, bufcap, ib, d.descending);
      ck_note(env, sel_step_kernel<C>, SEL_NT, 0);
      sel_step_kernel<C><<<(unsigned)lines, SEL_NT, 0, s>>>(st, hist, bufcap);
      if ((err = (int)cudaGetLastError())) return err;
    }
    ck_note(env, sel_filter_kernel<K, KIND, EB>, SEL_NT, 0);
    sel_filter_kernel<K, KIND, EB><<<g, SEL_NT, 0, s>>>(xl, st, buf, cand, len, k, bufcap, ib, d.descending);
    if ((err = (int)cudaGetLastError())) return err;
    if (!big_k) {
      ck_note(env, sel_sort_kernel<K>, SEL_NT, 0);
      sel_sort_kernel<K><<<(unsigned)lines, SEL_NT, 0, s>>>(cand, xl, (K *)d.out, d.idx, len, k, d.inner, ib);
      return (int)cudaGetLastError();
    }
  }
  if (!big_k) return 0;
  if ((err = sort_winners<C>(env, cand, sorted, lines, k, tot))) return err;
  ck_note(env, sel_gather_kernel<K>, 256, 0);
  sel_gather_kernel<K><<<grid_for(cdiv(lines * k, 256)), 256, 0, s>>>(sorted, xl, (K *)d.out, d.idx, lines, len, k,
                                                                      d.inner, ib);
  return (int)cudaGetLastError();
}

} // namespace

extern "C" int ck_sort_radix_select(const void *desc, const ck_env *env) {
  const ck_sort_desc &d = *(const ck_sort_desc *)desc;
  return by_key(d.dtype, [&](auto tag) {
    using Tg = decltype(tag);
    return run_select<typename Tg::key_t, Tg::kind, Tg::eb>(d, env);
  });
}

extern "C" const char *ck_sort_radix_select_supports(const void *desc) { return check_n((const ck_sort_desc *)desc); }
