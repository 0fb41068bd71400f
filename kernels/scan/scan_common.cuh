/*
 * scan_common.cuh — what every rung of the scan ladder shares (issue 33): the ops, the block-level primitives
 * and the plumbing of multi-level scans. The rung files (kernels/scan/NN_*.cu) are about *how* a tile, a row
 * or a grid is scanned; *what* is scanned lives here, as an op type P with
 *   in_t, out_t, acc_t   what is read, written and carried (f32/f16/bf16 carry f32, f64 f64; integer and bool
 *                        sums and products carry uint64 and write i64, wrapping mod 2^64; cummax/cummin of
 *                        narrow integers carry int)
 *   identity()           the neutral element (exclusive scans start with it; tails are padded with it)
 *   combine(a, b)        a comes before b; MAX/MIN propagate NaN and keep a on ties (host_scan.c's rule)
 *   load(x), store(a)    in_t -> acc_t and acc_t -> out_t (f16/bf16 rounded once, to nearest even)
 *   reload(o)            out_t -> acc_t, for the rungs that add a carry to partial results already written
 * AccOp<P> is the same op over acc_t arrays (the block sums of the multi-level rungs).
 *
 * dispatch<ALL>(d, f) calls f(Tag<P>{}) for the descriptor's dtype and op; ALL = false instantiates only f32,
 * f64, i32, f16 and bf16 (the teaching rungs), ALL = true every dtype of dtypes.def (bool scans as u8 with
 * its own extremes).
 */
#ifndef CK_SCAN_COMMON_CUH
#define CK_SCAN_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>
#include <limits>
#include <type_traits>

#include "ck_kernels.h"
#include "half.h"

namespace ckscan {

#define CKS_HD __host__ __device__ __forceinline__

// ---------------------------------------------------------------- ops

template <class T> constexpr bool is_half_v = std::is_same_v<T, ck_f16_t> || std::is_same_v<T, ck_bf16_t>;
template <class T> constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;
/* what cummax/cummin carry: halves widen to float, narrow integers to int (shuffles move 4 or 8 bytes) */
template <class T> struct Ext { using type = std::conditional_t<(sizeof(T) < 4), int, T>; };
template <> struct Ext<ck_f16_t> { using type = float; };
template <> struct Ext<ck_bf16_t> { using type = float; };

template <class T> CKS_HD float widen(T x) {
  if constexpr (std::is_same_v<T, ck_f16_t>) return ck_f16_to_f32(x.bits);
  else return ck_bf16_to_f32(x.bits);
}
template <class T> CKS_HD T narrow(float v) {
  T r;
  r.bits = std::is_same_v<T, ck_f16_t> ? ck_f32_to_f16(v) : ck_f32_to_bf16(v);
  return r;
}

template <class A> CKS_HD bool nan_of(A v) {
  if constexpr (std::is_floating_point_v<A>) return v != v;
  else return false;
}

template <class T, int OP, bool BOOL>
struct ScanOp {
  using in_t = T;
  static constexpr int op = OP;
  static constexpr bool arith = OP == CK_SCAN_SUM || OP == CK_SCAN_PROD;
  static constexpr bool wraps = arith && !is_float_v<T>; /* integer sums/products: uint64, written as i64 */
  using acc_t = std::conditional_t<wraps, uint64_t,
                                   std::conditional_t<arith, std::conditional_t<is_half_v<T>, float, T>, typename Ext<T>::type>>;
  using out_t = std::conditional_t<wraps, int64_t, T>;
  CKS_HD static acc_t identity() {
    if constexpr (OP == CK_SCAN_SUM) return (acc_t)0;
    else if constexpr (OP == CK_SCAN_PROD) return (acc_t)1;
    else if constexpr (is_float_v<T>) return OP == CK_SCAN_MAX ? (acc_t)-INFINITY : (acc_t)INFINITY;
    else if constexpr (BOOL) return OP == CK_SCAN_MAX ? 0 : 1;
    else return OP == CK_SCAN_MAX ? (acc_t)std::numeric_limits<T>::lowest() : (acc_t)std::numeric_limits<T>::max();
  }
  CKS_HD static acc_t combine(acc_t a, acc_t b) {
    if constexpr (OP == CK_SCAN_SUM) return a + b;
    else if constexpr (OP == CK_SCAN_PROD) return a * b;
    else if constexpr (OP == CK_SCAN_MAX) return nan_of(a) ? a : nan_of(b) ? b : (b > a ? b : a);
    else return nan_of(a) ? a : nan_of(b) ? b : (b < a ? b : a);
  }
  CKS_HD static acc_t load(in_t x) {
    if constexpr (is_half_v<T>) return widen(x);
    else if constexpr (wraps) return (acc_t)(int64_t)x; /* sign-extended, then modulo 2^64 */
    else return (acc_t)x;
  }
  CKS_HD static out_t store(acc_t a) {
    if constexpr (is_half_v<T>) return narrow<T>(a);
    else if constexpr (wraps) {
      int64_t r;
      memcpy(&r, &a, sizeof r);
      return r;
    } else return (out_t)a;
  }
  CKS_HD static acc_t reload(out_t o) {
    if constexpr (is_half_v<T>) return widen(o);
    else return (acc_t)o;
  }
};

/* P's combine over arrays of its accumulator (block sums): nothing to convert. */
template <class P>
struct AccOp {
  using acc_t = typename P::acc_t;
  using in_t = acc_t;
  using out_t = acc_t;
  CKS_HD static acc_t identity() { return P::identity(); }
  CKS_HD static acc_t combine(acc_t a, acc_t b) { return P::combine(a, b); }
  CKS_HD static acc_t load(in_t x) { return x; }
  CKS_HD static out_t store(acc_t a) { return a; }
  CKS_HD static acc_t reload(out_t o) { return o; }
};
/* The op of the level above (AccOp of an AccOp is itself, so a recursion over levels is one function). */
template <class P> struct Up { using type = AccOp<P>; };
template <class Q> struct Up<AccOp<Q>> { using type = AccOp<Q>; };
template <class P> using up_t = typename Up<P>::type;

template <class P> struct Tag { using type = P; };

template <class T, bool BOOL, class F> int by_op(int op, F &&f) {
  switch (op) {
  case CK_SCAN_SUM: return f(Tag<ScanOp<T, CK_SCAN_SUM, BOOL>>{});
  case CK_SCAN_PROD: return f(Tag<ScanOp<T, CK_SCAN_PROD, BOOL>>{});
  case CK_SCAN_MAX: return f(Tag<ScanOp<T, CK_SCAN_MAX, BOOL>>{});
  case CK_SCAN_MIN: return f(Tag<ScanOp<T, CK_SCAN_MIN, BOOL>>{});
  default: return (int)cudaErrorInvalidValue;
  }
}

template <bool ALL, class F> int dispatch(const ck_scan_desc &d, F &&f) {
  switch (d.dtype) {
  case CK_F32: return by_op<float, false>(d.op, f);
  case CK_F64: return by_op<double, false>(d.op, f);
  case CK_I32: return by_op<int32_t, false>(d.op, f);
  case CK_F16: return by_op<ck_f16_t, false>(d.op, f);
  case CK_BF16: return by_op<ck_bf16_t, false>(d.op, f);
  default: break;
  }
  if constexpr (ALL) {
    switch (d.dtype) {
    case CK_BOOL: return by_op<uint8_t, true>(d.op, f);
    case CK_U8: return by_op<uint8_t, false>(d.op, f);
    case CK_I8: return by_op<int8_t, false>(d.op, f);
    case CK_I16: return by_op<int16_t, false>(d.op, f);
    case CK_U32: return by_op<uint32_t, false>(d.op, f);
    case CK_I64: return by_op<int64_t, false>(d.op, f);
    default: break;
    }
  }
  return (int)cudaErrorInvalidValue;
}

// ---------------------------------------------------------------- host helpers

static inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline unsigned grid_for(int64_t blocks) { return (unsigned)(blocks < 65535 * 32 ? blocks : 65535 * 32); }

/* Workspace from the context's caching allocator, released (stream-ordered) at scope exit. Unlike kernels/ck_ws.cuh's
 * Ws it allocates even for 0 bytes: CUB's two-call protocol wants a non-null temporary pointer. */
struct Ws {
  const ck_env *env;
  void *p;
  Ws(const ck_env *e, size_t bytes) : env(e), p(e->ws_alloc(e->owner, bytes ? bytes : 1)) {}
  ~Ws() { if (p) env->ws_free(env->owner, p); }
  Ws(const Ws &) = delete;
  Ws &operator=(const Ws &) = delete;
};

/* A CUB-style call `run(temp, bytes)` made twice: once to size its temporary storage, once for real (the scan and
 * sort ladders' CUB rungs). */
template <class R> static int with_temp(const ck_env *env, R &&run) {
  size_t bytes = 0;
  int err = (int)run((void *)nullptr, bytes);
  if (err) return err;
  Ws w(env, bytes);
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  return (int)run(w.p, bytes);
}

// ---------------------------------------------------------------- warp and block primitives

template <class A> __device__ __forceinline__ A shfl_up(A v, int d) {
  static_assert(sizeof(A) == 4 || sizeof(A) == 8, "4- or 8-byte accumulators");
  if constexpr (sizeof(A) == 8) {
    unsigned long long u;
    memcpy(&u, &v, 8);
    u = __shfl_up_sync(0xffffffffu, u, d);
    memcpy(&v, &u, 8);
  } else {
    unsigned u;
    memcpy(&u, &v, 4);
    u = __shfl_up_sync(0xffffffffu, u, d);
    memcpy(&v, &u, 4);
  }
  return v;
}
template <class A> __device__ __forceinline__ A shfl_idx(A v, int src) {
  if constexpr (sizeof(A) == 8) {
    unsigned long long u;
    memcpy(&u, &v, 8);
    u = __shfl_sync(0xffffffffu, u, src);
    memcpy(&v, &u, 8);
  } else {
    unsigned u;
    memcpy(&u, &v, 4);
    u = __shfl_sync(0xffffffffu, u, src);
    memcpy(&v, &u, 4);
  }
  return v;
}

/* Inclusive scan across the 32 lanes (Kogge-Stone with shuffles: no shared memory, no barrier). */
template <class P> __device__ __forceinline__ typename P::acc_t warp_incl(typename P::acc_t v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const typename P::acc_t n = shfl_up(v, o);
    if (lane >= o) v = P::combine(n, v);
  }
  return v;
}

/* Exclusive scan of one value per thread over a block of BLOCK threads: warps scan with shuffles, warp 0 scans
 * the warp totals. `total` gets the block's total. wsum: BLOCK/32 accumulators of shared memory. Ends with a
 * barrier, so wsum may be reused at once. */
template <class P, int BLOCK>
__device__ __forceinline__ typename P::acc_t block_excl(typename P::acc_t v, typename P::acc_t &total,
                                                        typename P::acc_t *wsum) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "block size");
  using acc_t = typename P::acc_t;
  constexpr int NW = BLOCK / 32;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const acc_t inc = warp_incl<P>(v);
  if (lane == 31) wsum[w] = inc;
  __syncthreads();
  if (w == 0) {
    acc_t t = lane < NW ? wsum[lane] : P::identity();
    t = warp_incl<P>(t);
    if (lane < NW) wsum[lane] = t;
  }
  __syncthreads();
  acc_t ex = shfl_up(inc, 1);
  if (lane == 0) ex = P::identity();
  const acc_t r = w ? P::combine(wsum[w - 1], ex) : ex;
  total = wsum[NW - 1];
  __syncthreads();
  return r;
}

// ---------------------------------------------------------------- tiles of BLOCK x ITEMS elements

/* A tile in shared memory, one accumulator per element, padded by one word per 32 (pad()) so that a thread
 * reading its ITEMS consecutive elements does not conflict with its neighbours. Loads and stores are striped
 * (coalesced), with 16-byte vectors when the tile is full and aligned; STREAM makes those vectors streaming
 * (__ldcs/__stcs: each element is touched once, so it need not stay in L1 or L2). */
__device__ __forceinline__ int pad(int j) { return j + (j >> 5); }

template <class P, int BLOCK, int ITEMS, bool STREAM = false>
struct Tile {
  using acc_t = typename P::acc_t;
  using in_t = typename P::in_t;
  using out_t = typename P::out_t;
  static constexpr int N = BLOCK * ITEMS;
  static constexpr int SMEM = N + N / 32; /* accumulators */

  /* Elements [start, start + N) of row (n elements) into s; past n, the identity. */
  __device__ static void load(const in_t *row, int64_t start, int64_t n, acc_t *s) {
    constexpr int V = 16 / (int)sizeof(in_t);
    const in_t *p = row + start;
    if constexpr (V > 1 && N % (V * BLOCK) == 0) {
      if (start + N <= n && (reinterpret_cast<uintptr_t>(p) & 15) == 0) {
#pragma unroll
        for (int k = 0; k < N / (V * BLOCK); ++k) {
          const int v = k * BLOCK + threadIdx.x;
          uint4 raw;
          if constexpr (STREAM) raw = __ldcs(reinterpret_cast<const uint4 *>(p) + v);
          else raw = __ldg(reinterpret_cast<const uint4 *>(p) + v);
          in_t e[V];
          memcpy(e, &raw, 16);
#pragma unroll
          for (int m = 0; m < V; ++m) s[pad(v * V + m)] = P::load(e[m]);
        }
        return;
      }
    }
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int j = k * BLOCK + threadIdx.x;
      s[pad(j)] = start + j < n ? P::load(p[j]) : P::identity();
    }
  }

  /* s -> out elements [start, min(start + N, n)). */
  __device__ static void store(out_t *row, int64_t start, int64_t n, const acc_t *s) {
    constexpr int V = 16 / (int)sizeof(out_t);
    out_t *p = row + start;
    if constexpr (V > 1 && N % (V * BLOCK) == 0) {
      if (start + N <= n && (reinterpret_cast<uintptr_t>(p) & 15) == 0) {
#pragma unroll
        for (int k = 0; k < N / (V * BLOCK); ++k) {
          const int v = k * BLOCK + threadIdx.x;
          out_t e[V];
#pragma unroll
          for (int m = 0; m < V; ++m) e[m] = P::store(s[pad(v * V + m)]);
          uint4 raw;
          memcpy(&raw, e, 16);
          if constexpr (STREAM) __stcs(reinterpret_cast<uint4 *>(p) + v, raw);
          else reinterpret_cast<uint4 *>(p)[v] = raw;
        }
        return;
      }
    }
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int j = k * BLOCK + threadIdx.x;
      if (start + j < n) p[j] = P::store(s[pad(j)]);
    }
  }

  /* This thread's ITEMS consecutive elements, scanned in registers; returns their total. */
  __device__ static acc_t thread_scan(const acc_t *s, acc_t (&r)[ITEMS]) {
    const int b = threadIdx.x * ITEMS;
#pragma unroll
    for (int m = 0; m < ITEMS; ++m) r[m] = s[pad(b + m)];
#pragma unroll
    for (int m = 1; m < ITEMS; ++m) r[m] = P::combine(r[m - 1], r[m]);
    return r[ITEMS - 1];
  }

  /* Write the scanned elements back, each preceded by `before` (everything ahead of this thread's first). */
  __device__ static void put_back(acc_t *s, const acc_t (&r)[ITEMS], acc_t before, bool exclusive) {
    const int b = threadIdx.x * ITEMS;
#pragma unroll
    for (int m = 0; m < ITEMS; ++m)
      s[pad(b + m)] = exclusive ? (m ? P::combine(before, r[m - 1]) : before) : P::combine(before, r[m]);
  }

  /* The tile in s scanned in place after `carry` (everything before the tile); returns the tile's total. The
   * caller has synchronised after filling s; this ends synchronised. wsum: BLOCK/32 accumulators. */
  __device__ static acc_t scan(acc_t *s, acc_t carry, bool exclusive, acc_t *wsum) {
    acc_t r[ITEMS];
    const acc_t mine = thread_scan(s, r);
    acc_t total;
    const acc_t ex = block_excl<P, BLOCK>(mine, total, wsum);
    put_back(s, r, P::combine(carry, ex), exclusive);
    __syncthreads();
    return total;
  }
};

// ---------------------------------------------------------------- the carry pass of the multi-level rungs

/* out(row, j) = carry[row, j / tile] (+) out(row, j) for every j past the first tile: the exclusive scan of the
 * block totals is added to the partial (tile-local) scans the first pass wrote. */
template <class P>
__global__ void __launch_bounds__(256) scan_add_carry_kernel(typename P::out_t *out, const typename P::acc_t *carry,
                                                             int64_t outer, int64_t len, int64_t ntiles, int tile) {
  const int64_t per_row = len - tile; /* elements after the first tile */
  const int64_t total = outer * per_row;
  for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < total; k += (int64_t)gridDim.x * blockDim.x) {
    const int64_t row = k / per_row, j = tile + k % per_row;
    typename P::out_t *o = out + row * len + j;
    *o = P::store(P::combine(carry[row * ntiles + j / tile], P::reload(*o)));
  }
}

template <class P>
static int add_carry(const ck_env *env, typename P::out_t *out, const typename P::acc_t *carry, int64_t outer,
                     int64_t len, int64_t ntiles, int tile) {
  ck_note(env, scan_add_carry_kernel<P>, 256, 0);
  scan_add_carry_kernel<P><<<grid_for(cdiv(outer * (len - tile), 256)), 256, 0, (cudaStream_t)env->stream>>>(
      out, carry, outer, len, ntiles, tile);
  return (int)cudaGetLastError();
}

/* The three-step scan of the teaching rungs 1-3 ("scan the tiles, scan their totals, add"): Pass is the rung's
 * tile pass, `template <class Q> int operator()(Tag<Q>, env, x, out, sums, outer, len, ntiles, exclusive)`, which
 * writes tile-local scans to out and (sums != NULL) each tile's total to sums[row * ntiles + tile]. The totals
 * are scanned (exclusively, in place) by the same function one level up, then added. */
template <class P, int TILE, class Pass>
static int scan_levels(const ck_env *env, const typename P::in_t *x, typename P::out_t *out, int64_t outer,
                       int64_t len, bool exclusive, const Pass &pass) {
  using acc_t = typename P::acc_t;
  const int64_t ntiles = cdiv(len, TILE);
  if (ntiles == 1) return pass(Tag<P>{}, env, x, out, (acc_t *)nullptr, outer, len, ntiles, exclusive);
  Ws w(env, (size_t)(outer * ntiles) * sizeof(acc_t));
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  acc_t *sums = (acc_t *)w.p;
  int err = pass(Tag<P>{}, env, x, out, sums, outer, len, ntiles, exclusive);
  if (!err) err = scan_levels<up_t<P>, TILE>(env, sums, sums, outer, ntiles, true, pass);
  if (!err) err = add_carry<P>(env, out, sums, outer, len, ntiles, TILE);
  return err;
}

/* supports() of the rungs that scan contiguous rows (all but cols). */
static inline const char *rows_only(const ck_scan_desc *d) {
  if (d->inner != 1) return "scans contiguous rows only (inner == 1); 'cols' scans leading dims";
  return nullptr;
}

} // namespace ckscan

/* A rung's launcher: the descriptor's dtype and op to an instance of launch<P>(desc, env). */
#define CK_SCAN_LAUNCHER(NAME, ALL, FN)                                                                               \
  extern "C" int NAME(const void *desc, const ck_env *env) {                                                          \
    const ck_scan_desc &d = *(const ck_scan_desc *)desc;                                                              \
    return ckscan::dispatch<ALL>(d, [&](auto tag) { return FN<typename decltype(tag)::type>(d, env); });             \
  }

#endif
