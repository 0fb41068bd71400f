/*
 * 10_cols_lookback.cu — layout rung: scans along a leading dim (inner > 1) in one pass, tiles of rows x columns
 * chained down each column strip by decoupled look-back.
 *
 * Idea: step 9 (cols) gives each column a thread. That reads each element once only when there are enough
 * columns to fill the GPU (outer x inner >= 2^18); with fewer, long columns are cut into chunks scanned in three
 * passes (2 reads + 1 write: cumsum of 16384 x 16384 f32 along dim 1 ran at 62% of memcpy on the H100). Here
 * the [outer, len, inner] view is cut into strips of C adjacent columns (C = 32 x V: 128 columns of 4-byte
 * values, 64 of 8-byte ones) and each strip into tiles of R rows. A warp covers a row of its strip (a lane V
 * adjacent columns, one vector load of up to 16 bytes when inner allows) and ITEMS consecutive rows, scanned down each
 * column in registers; the 8 warps' column totals go through shared memory; then the tile publishes its vector
 * of C column aggregates and warp 0 looks back along the scan dim over the tiles above it in the same strip
 * (step 6's decoupled look-back, each column a chain of its own), publishes its C inclusive prefixes, and every
 * thread writes its rows after its carry. One read and one write of each element; the status words add 2 x C
 * word stores per tile of R x C elements (f32: 8-byte words, 3% more traffic, plus their zeroing).
 * Tickets (single_pass.cuh) run the tiles row band by row band (ticket = tile row x strips + strip), so the tiles
 * in flight sweep the array like a copy and a tile's predecessor is issued one band earlier; a predecessor's
 * ticket is always smaller, so it is running or done: no deadlock. Each column of a tile has its own status word
 * (flag and value together, single_pass.cuh's PackedWords): publishing is one store per column and needs no
 * fence (the first form, one flag per tile with fences around it, ran cumsum of 16384 x 16384 f32 along dim 1 at
 * 73.7% of memcpy on an H100; rung 6 lost most of its wait to the same fences).
 * Changed from step 9: one pass whatever the number of columns (no chunk totals, no carry pass), 16-byte vector
 * loads and stores across columns, the single-pass status machinery of step 6 with a word per column.
 * Launch: 256 threads (8 warps x 32 lanes), one tile of R = 8 x ITEMS rows (64, or 32 for 8-byte accumulators of
 * 4-byte-or-narrower inputs) x C columns per ticket; the vector kernel when inner % V == 0 and the pointers are
 * aligned, else the same kernel with scalar loads (lane l takes columns l, l + 32, ...: still coalesced).
 * Limits: supports() takes inner > 1 only (rows go to the row rungs). Narrow strips and short columns waste lanes
 * (inner = 3 uses 3 of 128 columns, len = 4 uses 4 of 64 rows), so the default order picks it only for large
 * arrays with inner >= 128 and len >= 64 (op_scan.c); it runs any shape when asked for. Workspace, all zeroed: 16 +
 * tiles x C words (8 bytes for 4-byte accumulators, 16 for 8-byte ones), whatever the strip's width (f32: 1/32
 * of the data's bytes for full strips; for inner = 2, asked for by name, 2x).
 * Operands: x contiguous [outer, len, inner], out contiguous [outer, len, inner]; any len >= 1, 64-bit indices.
 */
#include <utility>

#include "single_pass.cuh"

using namespace ckscan;

#define CL_BLOCK 256
#define CL_WARPS (CL_BLOCK / 32)

/* The tile of op P: V columns per lane, C per strip, ITEMS rows per warp, R per tile. */
template <class P> struct ColsGeom {
  static constexpr int V = sizeof(typename P::in_t) >= 8 ? 2 : 4;
  static constexpr int C = 32 * V;
  static constexpr int ITEMS = V * sizeof(typename P::acc_t) >= 32 ? 4 : 8; /* <= 32 registers of values */
  static constexpr int R = CL_WARPS * ITEMS;
};

template <int B> struct Raw;
template <> struct Raw<4> { using type = unsigned; };
template <> struct Raw<8> { using type = uint2; };
template <> struct Raw<16> { using type = uint4; };

/* V adjacent values, from an address aligned to their size, in one load. */
template <class T, int V> __device__ __forceinline__ void load_vec(const T *p, T (&e)[V]) {
  using R = typename Raw<V * sizeof(T)>::type;
  const R raw = __ldg(reinterpret_cast<const R *>(p));
  memcpy(e, &raw, sizeof raw);
}
/* V adjacent values in stores of up to 16 bytes (an i64 result of 4 narrower inputs is 32 bytes). */
template <int BYTES> struct StoreChunk { static constexpr int value = BYTES < 16 ? BYTES : 16; };
template <class T, int V> __device__ __forceinline__ void store_vec(T *p, const T (&e)[V]) {
  constexpr int B = V * (int)sizeof(T), CH = StoreChunk<B>::value;
  using R = typename Raw<CH>::type;
  R raw[B / CH];
  memcpy(raw, e, B);
#pragma unroll
  for (int k = 0; k < B / CH; ++k) reinterpret_cast<R *>(p)[k] = raw[k];
}

/* f(std::integral_constant<int, 0>{}), ..., f(<N - 1>): a loop unrolled whatever the body's size. */
template <class F, int... I> __device__ __forceinline__ void unrolled_seq(F &f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F> __device__ __forceinline__ void unrolled(F &&f) {
  unrolled_seq(f, std::make_integer_sequence<int, N>{});
}

// ---------------------------------------------------------------- the look-back, per column

/* Warp 0 of tile g (row band t of its strip; the tile above it is g - chains): publish the tile's C column
 * aggregates (a strip's first tile: its inclusive prefixes), then look back up each column: lane l holds slots
 * l, l + 32, ... of the vector, and each column is a chain of its own, so a lane walks up its columns' words
 * together (waiting until each has something), combining until each column meets an inclusive prefix, and
 * publishes its inclusive prefixes. Every slot is one word (flag and value, single_pass.cuh's PackedWords), so
 * nothing is fenced and a step is one load per column. The tile above was ticketed a band earlier (chains tiles
 * before), so it has usually published its inclusive prefixes already: a step or two. Returns each slot's carry in
 * pre. */
template <class P, int V>
__device__ __forceinline__ void look_back(const Words<typename P::acc_t> &st, int64_t g, int64_t t, int64_t chains,
                                          const typename P::acc_t (&agg)[V], typename P::acc_t (&pre)[V], Delay dl) {
  using acc_t = typename P::acc_t;
  constexpr int C = 32 * V;
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int v = 0; v < V; ++v) word_put(st, g * C + v * 32 + lane, t == 0 ? 2u : 1u, agg[v]);
#pragma unroll
  for (int v = 0; v < V; ++v) pre[v] = P::identity();
  if (t == 0) return;
  sleep_ns(dl.first);
  unsigned open = (1u << V) - 1; /* the columns still looking back (the strip's first tile is inclusive) */
  for (int64_t tile = g - chains; open; tile -= chains) {
    acc_t x[V];
    unsigned f[V];
    bool wait;
    for (int pass = 0;; ++pass) {
      if (pass) sleep_ns(dl.poll);
      wait = false;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        f[v] = 2;
        x[v] = P::identity();
        if (open >> v & 1) {
          f[v] = word_get(st, tile * C + v * 32 + lane, x[v]);
          wait |= f[v] == 0;
        }
      }
      if (!wait) break;
    }
#pragma unroll
    for (int v = 0; v < V; ++v)
      if (open >> v & 1) {
        pre[v] = P::combine(x[v], pre[v]); /* the tile above comes first */
        if (f[v] == 2) open &= ~(1u << v);
      }
  }
#pragma unroll
  for (int v = 0; v < V; ++v) word_put(st, g * C + v * 32 + lane, 2u, P::combine(pre[v], agg[v]));
}

// ---------------------------------------------------------------- kernel

/* Slot s = v * 32 + lane of a tile's vector is column (VEC ? lane * V + v : s) of its strip. */
template <class P, bool VEC>
__global__ void __launch_bounds__(CL_BLOCK)
    scan_cols_lookback_kernel(const typename P::in_t *__restrict__ x, typename P::out_t *__restrict__ out, int64_t len,
                              int64_t inner, int64_t nstrips, int64_t chains, int64_t total, int exclusive,
                              Words<typename P::acc_t> st, Delay dl) {
  using G = ColsGeom<P>;
  using acc_t = typename P::acc_t;
  using in_t = typename P::in_t;
  using out_t = typename P::out_t;
  constexpr int V = G::V, C = G::C, ITEMS = G::ITEMS;
  __shared__ acc_t tot[CL_WARPS][C];
  __shared__ acc_t carry[C];
  __shared__ int64_t gsh;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  for (;;) {
    const int64_t g = next_tile(st.ticket, &gsh);
    if (g >= total) break;
    const int64_t t = g / chains, chain = g - t * chains;
    const int64_t o = chain / nstrips, c0 = (chain - o * nstrips) * C;
    const int64_t width = inner - c0 < C ? inner - c0 : C; /* columns of this strip */
    const int64_t r0 = t * G::R + w * ITEMS;                /* this warp's first row */
    const int64_t at = (o * len + r0) * inner + c0;         /* element (o, r0, c0) */

    acc_t a[ITEMS][V];
    if constexpr (VEC) {
      const bool colok = lane * V < width; /* width is a multiple of V */
#pragma unroll
      for (int m = 0; m < ITEMS; ++m) {
        if (colok && r0 + m < len) {
          in_t e[V];
          load_vec<in_t, V>(x + (at + m * inner + lane * V), e);
#pragma unroll
          for (int v = 0; v < V; ++v) a[m][v] = P::load(e[v]);
        } else {
#pragma unroll
          for (int v = 0; v < V; ++v) a[m][v] = P::identity();
        }
      }
    } else {
#pragma unroll
      for (int m = 0; m < ITEMS; ++m)
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const int col = v * 32 + lane;
          a[m][v] = col < width && r0 + m < len ? P::load(x[at + m * inner + col]) : P::identity();
        }
    }
#pragma unroll
    for (int m = 1; m < ITEMS; ++m)
#pragma unroll
      for (int v = 0; v < V; ++v) a[m][v] = P::combine(a[m - 1][v], a[m][v]);
#pragma unroll
    for (int v = 0; v < V; ++v) tot[w][v * 32 + lane] = a[ITEMS - 1][v];
    __syncthreads();

    acc_t before[V]; /* the warps above this one in the tile */
#pragma unroll
    for (int v = 0; v < V; ++v) {
      before[v] = P::identity();
#pragma unroll
      for (int q = 0; q < CL_WARPS - 1; ++q)
        if (q < w) before[v] = P::combine(before[v], tot[q][v * 32 + lane]);
    }
    if (w == 0) {
      acc_t agg[V], pre[V];
#pragma unroll
      for (int v = 0; v < V; ++v) {
        agg[v] = tot[0][v * 32 + lane];
#pragma unroll
        for (int q = 1; q < CL_WARPS; ++q) agg[v] = P::combine(agg[v], tot[q][v * 32 + lane]);
      }
      look_back<P, V>(st, g, t, chains, agg, pre, dl);
#pragma unroll
      for (int v = 0; v < V; ++v) carry[v * 32 + lane] = pre[v];
    }
    __syncthreads();
    acc_t base[V], prev[V]; /* everything before this warp's rows; the inclusive result of the row above */
#pragma unroll
    for (int v = 0; v < V; ++v) prev[v] = base[v] = P::combine(carry[v * 32 + lane], before[v]);
    unrolled<ITEMS>([&](auto m_) { /* unrolled by hand: with f16's long conversions nvcc kept a[] in memory */
      constexpr int m = decltype(m_)::value;
      out_t e[V];
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const acc_t inc = P::combine(base[v], a[m][v]);
        e[v] = P::store(exclusive ? prev[v] : inc);
        prev[v] = inc;
      }
      if (r0 + m >= len) return;
      if constexpr (VEC) {
        if (lane * V < width) store_vec<out_t, V>(out + (at + m * inner + lane * V), e);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v)
          if (v * 32 + lane < width) out[at + m * inner + v * 32 + lane] = e[v];
      }
    });
  }
}

// ---------------------------------------------------------------- launcher

static bool aligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

template <class P> static int launch(const ck_scan_desc &d, const ck_env *env) {
  using G = ColsGeom<P>;
  using acc_t = typename P::acc_t;
  using in_t = typename P::in_t;
  using out_t = typename P::out_t;
  cudaStream_t s = (cudaStream_t)env->stream;
  const int64_t nstrips = cdiv(d.inner, G::C), chains = d.outer * nstrips, total = chains * cdiv(d.len, G::R);
  Ws w(env, PackedWords::bytes<acc_t>(total * G::C)); /* a word per column of each tile */
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  int err = (int)cudaMemsetAsync(w.p, 0, PackedWords::zero_bytes<acc_t>(total * G::C), s);
  if (err) return err;
  const bool vec = d.inner % G::V == 0 && aligned(d.x, G::V * sizeof(in_t)) &&
                   aligned(d.out, StoreChunk<G::V * (int)sizeof(out_t)>::value);
  const auto kernel = vec ? scan_cols_lookback_kernel<P, true> : scan_cols_lookback_kernel<P, false>;
  ck_note(env, kernel, CL_BLOCK, 0);
  /* rung 6's sleeps (single_pass.cuh's Delay) are off here by default: the tile above was ticketed a band earlier
   * and has mostly published, so a sleep before the first read would only add latency; CUKERN_SCAN_COLS_DELAY and
   * CUKERN_SCAN_COLS_POLL set them for lab/ sweeps */
  const Delay dl = look_back_delay(total, "CUKERN_SCAN_COLS_DELAY", "CUKERN_SCAN_COLS_POLL", 0, 0);
  kernel<<<grid_for(total), CL_BLOCK, 0, s>>>((const in_t *)d.x, (out_t *)d.out, d.len, d.inner, nstrips, chains,
                                              total, d.exclusive, PackedWords::at<acc_t>(w.p, total * G::C), dl);
  return (int)cudaGetLastError();
}

CK_SCAN_LAUNCHER(ck_scan_cols_lookback, true, launch)

extern "C" const char *ck_scan_cols_lookback_supports(const void *desc) {
  const ck_scan_desc *d = (const ck_scan_desc *)desc;
  if (d->inner == 1) return "scans leading dims only (inner > 1): rows go to the row rungs";
  return nullptr;
}
