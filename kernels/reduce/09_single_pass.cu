/*
 * 09_single_pass.cu — one launch: a last-block finish instead of a second pass.
 *
 * Idea: step 8 needs a second launch for the partials (a few microseconds of launch and tail per call).
 * Here each block folds its (row, item) share with 16-byte loads and a shuffle block reduction, writes its
 * partial, fences, and takes a ticket from the row's atomic counter: the block that draws the last ticket
 * reads the row's partials (through L2) and writes the result. No block ever waits on another, so there is
 * no deadlock whatever the scheduling. Tickets start from zero via cudaMemsetAsync on the stream (workspace
 * memory is not zeroed); the last block sets its row's counter back to zero, so a caller holding zeroed
 * counters may skip the memset (launch_cfg's `zeroed`). With one item per row there are no partials and
 * no tickets.
 * Knobs (template parameters): MAP (0: contiguous chunks; 1: contiguous whole-tile even shares; 2: CUB's
 * strip-mined tiles, GRID_MAPPING_STRIP_MINE: block b of G folds whole tiles b, b + G, ...), VB (bytes per
 * load: 16, 8 or 4, warp-striped: lane t loads the t-th VB bytes of each BS x VB row of the tile), FIN (0:
 * last-block ticket; 1: a separate one-block-per-row second launch). MAP 0 keeps a per-chunk remainder (one
 * vector per trip); MAP 1/2 have it once per row, in the last item. The default: MAP 2 with one wave of
 * resident blocks and the ticket finish ("m2w1").
 * Changed from step 8: one launch (the last-block finish) instead of a second pass.
 * Measured: 100.9% of cub::DeviceReduce::Sum on 2^28 f32 on the H100 (30 alternating pairs, 2026-11-24).
 * Launch: BS threads, grid = items (capped; blocks loop); full reductions cut a row into ~WAVES waves of
 * resident blocks (MAP 0: chunks a multiple of 16 bytes, >= one tile; MAP 1/2: at most one item per tile).
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]; any len >= 1, any alignment.
 * History (rounds 1 and 2 against CUB, the sweep's figures): docs/architecture.md, "Whole-array sums
 * against CUB".
 */
#include "red_ops.cuh"

using namespace ckred;

namespace sp {

/* One configuration of the rung: BS threads, U loads per thread per tile, MINB for __launch_bounds__
 * (1: no cap), WAVES of blocks per resident slot, MAP (0 chunks, 1 whole-tile shares, 2 strip-mined tiles),
 * VB bytes per load (16, 8, 4; at least one element), FIN (0 last-block ticket, 1 second launch). */
template <int BS_, int U_, int MINB_, int WAVES_, int MAP_, int VB_, int FIN_>
struct Cfg {
  static constexpr int BS = BS_, U = U_, MINB = MINB_, WAVES = WAVES_, MAP = MAP_, VB = VB_, FIN = FIN_;
  static_assert(VB_ == 4 || VB_ == 8 || VB_ == 16, "VB: 4, 8 or 16 bytes per load");
  static_assert(MAP_ >= 0 && MAP_ <= 2 && (FIN_ == 0 || FIN_ == 1), "MAP 0-2, FIN 0-1");
};

/* One load of B bytes of T (B = VB, or one element when T is wider), read-only path. */
template <typename T, int VB>
struct Ld {
  static constexpr int B = VB > (int)sizeof(T) ? VB : (int)sizeof(T);
  static constexpr int N = B / (int)sizeof(T);
  struct alignas(B) V {
    T e[N];
  };
  static __device__ __forceinline__ V ld(const T *p) {
    V v;
    if constexpr (B == 16) {
      const float4 r = __ldg(reinterpret_cast<const float4 *>(p));
      memcpy(&v, &r, 16);
    } else if constexpr (B == 8) {
      const float2 r = __ldg(reinterpret_cast<const float2 *>(p));
      memcpy(&v, &r, 8);
    } else {
      const float r = __ldg(reinterpret_cast<const float *>(p));
      memcpy(&v, &r, 4);
    }
    return v;
  }
};

/* First element of [beg, end) at a 16-byte boundary (x + beg may be misaligned when len % N != 0). */
template <typename T>
__device__ __forceinline__ int64_t aligned_start(const T *x, int64_t beg, int64_t end) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(x + beg);
  const int64_t head = (int64_t)(((16u - (unsigned)(addr & 15u)) & 15u) / sizeof(T));
  return beg + (head < end - beg ? head : end - beg);
}

/* Geometry of a configuration's tiles for op O: NL elements per load, VS per row of loads, TILE per tile;
 * A accumulators (load u folds into acc[u % A]). */
template <class O, class C>
struct Geo {
  using T = typename O::value_t;
  static constexpr int NL = Ld<T, C::VB>::N, VS = C::BS * NL, TILE = VS * C::U, A = C::U < 4 ? C::U : 4;
};

template <class O, int NL, class V>
__device__ __forceinline__ void fold_ld(typename O::acc_t &a, const V &r, int64_t pos) {
#pragma unroll
  for (int j = 0; j < NL; ++j) a = O::combine(a, O::make(r.e[j], O::indexed ? pos + j : 0));
}

/* Whole tiles first, first + stride, ... (count of them) of the segment at base (16-byte aligned, row
 * position pos0): U loads issued back to back at compile-time offsets from one pointer, then folded. */
template <class O, class C>
__device__ __forceinline__ void fold_tiles(typename O::acc_t (&acc)[Geo<O, C>::A], const typename O::value_t *base,
                                           int64_t pos0, int64_t first, int64_t count, int64_t stride) {
  using G = Geo<O, C>;
  using L = Ld<typename O::value_t, C::VB>;
  const typename O::value_t *p = base + first * G::TILE + threadIdx.x * G::NL;
  const int64_t step = stride * G::TILE;
#pragma unroll 1
  for (int64_t i = 0; i < count; ++i, p += step) {
    typename L::V r[C::U];
#pragma unroll
    for (int u = 0; u < C::U; ++u) r[u] = L::ld(p + u * G::VS);
#pragma unroll
    for (int u = 0; u < C::U; ++u) fold_ld<O, G::NL>(acc[u % G::A], r[u], pos0 + (p - base) + u * G::VS);
  }
}

/* The segment's elements [ntile * TILE, n) after its whole tiles (fewer than a tile): one load per trip
 * (loads in flight cost registers, and a predicated trip of U loads spilled at the 32-register cap), then
 * scalars. */
template <class O, class C>
__device__ __forceinline__ void fold_tail(typename O::acc_t (&acc)[Geo<O, C>::A], const typename O::value_t *base,
                                          int64_t pos0, int64_t ntile, int64_t n) {
  using G = Geo<O, C>;
  using T = typename O::value_t;
  using L = Ld<T, C::VB>;
  const T *const vend = base + n / G::NL * G::NL;
#pragma unroll 1
  for (const T *p = base + ntile * G::TILE + threadIdx.x * G::NL; p < vend; p += G::VS)
    fold_ld<O, G::NL>(acc[0], L::ld(p), pos0 + (p - base));
#pragma unroll 1
  for (int64_t j = (vend - base) + threadIdx.x; j < n; j += C::BS) acc[0] = O::combine(acc[0], O::make(base[j], pos0 + j));
}

/* Item c (of per_row) of row x[0, len): MAP 0 folds the contiguous chunk [c * chunk, ...); MAP 1 the c-th
 * even share of whole tiles (contiguous; the first ntile % per_row items get one tile more); MAP 2 tiles
 * c, c + per_row, ... . MAP 1/2: item 0 also folds the misaligned head, the last item the sub-tile tail. */
template <class O, class C>
__device__ __forceinline__ typename O::acc_t fold_item(const typename O::value_t *__restrict__ x, int64_t len, int64_t c,
                                                       int64_t per_row, int64_t chunk) {
  using G = Geo<O, C>;
  typename O::acc_t acc[G::A];
#pragma unroll
  for (int k = 0; k < G::A; ++k) acc[k] = O::identity();
  const int t = threadIdx.x;
  if constexpr (C::MAP == 0) {
    const int64_t beg = c * chunk, end = beg + chunk < len ? beg + chunk : len;
    const int64_t vbeg = aligned_start(x, beg, end);
#pragma unroll 1
    for (int64_t j = beg + t; j < vbeg; j += C::BS) acc[0] = O::combine(acc[0], O::make(x[j], j));
    const int64_t ntile = (end - vbeg) / G::TILE;
    fold_tiles<O, C>(acc, x + vbeg, vbeg, 0, ntile, 1);
    fold_tail<O, C>(acc, x + vbeg, vbeg, ntile, end - vbeg);
  } else {
    const int64_t vbeg = aligned_start(x, 0, len);
    if (c == 0) {
#pragma unroll 1
      for (int64_t j = t; j < vbeg; j += C::BS) acc[0] = O::combine(acc[0], O::make(x[j], j));
    }
    const int64_t ntile = (len - vbeg) / G::TILE;
    if constexpr (C::MAP == 1) {
      const int64_t k = ntile / per_row, big = ntile - k * per_row;
      fold_tiles<O, C>(acc, x + vbeg, vbeg, c * k + (c < big ? c : big), k + (c < big), 1);
    } else {
      fold_tiles<O, C>(acc, x + vbeg, vbeg, c, c < ntile ? (ntile - 1 - c) / per_row + 1 : 0, per_row);
    }
    if (c == per_row - 1) fold_tail<O, C>(acc, x + vbeg, vbeg, ntile, len - vbeg);
  }
#pragma unroll
  for (int k = 1; k < G::A; ++k) acc[0] = O::combine(acc[0], acc[k]);
  return acc[0];
}

/* __launch_bounds__ minimum blocks per SM (the register cap) per op type, by what ptxas showed without
 * spills at BS = 256: the plain ops on 4-byte values (f32, i32) fit MINB = 8 (32 registers); f64, bf16 and the
 * indexed f32/i32 ops fit 5 (48); f16 (its software conversion) and the indexed f64 ops spill under either
 * cap and are left to the compiler. */
template <class O, int BS, int MINB>
constexpr int min_blocks() {
  using T = typename O::value_t;
  constexpr int mid = 5 * 256 / BS > 1 ? 5 * 256 / BS : 1;
  if (std::is_same_v<T, ck_f16_t> || (O::indexed && sizeof(T) == 8)) return 1;
  if (!O::indexed && sizeof(T) == 4) return MINB;
  return MINB < mid ? MINB : mid;
}

} // namespace sp

// ---------------------------------------------------------------- kernel

template <class O, class C>
__global__ void __launch_bounds__(C::BS, sp::min_blocks<O, C::BS, C::MINB>())
    reduce_single_pass_kernel(const typename O::value_t *__restrict__ x, int64_t outer, int64_t len, int64_t per_row,
                              int64_t chunk, typename O::acc_t *part, unsigned *tickets, typename O::out_t *out,
                              int64_t *idx) {
  using acc_t = typename O::acc_t;
  constexpr int BS = C::BS;
  __shared__ bool am_last;
  for (int64_t b = blockIdx.x; b < outer * per_row; b += gridDim.x) {
    const int64_t row = b / per_row, c = b - row * per_row;
    acc_t a = sp::fold_item<O, C>(x + row * len, len, c, per_row, chunk);
    a = block_reduce<O, BS>(a);
    if (per_row == 1) {
      if (threadIdx.x == 0) O::store(a, out, idx, row, len);
      __syncthreads();
      continue;
    }
    if constexpr (C::FIN == 1) { /* the second launch finishes */
      if (threadIdx.x == 0) part[b] = a;
      __syncthreads();
      continue;
    }
    if (threadIdx.x == 0) {
      part[b] = a;
      __threadfence(); /* the partial is visible device-wide before the ticket is */
      am_last = atomicAdd(&tickets[row], 1u) == (unsigned)(per_row - 1);
    }
    __syncthreads();
    if (am_last) {
      __threadfence();
      acc_t s = fold_partials<O, true>(part + row * per_row, 0, per_row, threadIdx.x, BS);
      s = block_reduce<O, BS>(s);
      if (threadIdx.x == 0) {
        O::store(s, out, idx, row, len);
        tickets[row] = 0; /* every ticket is drawn: leave the counter as found (reusable without a memset) */
      }
    }
    __syncthreads();
  }
}

// ---------------------------------------------------------------- launcher

/* The configuration the rung runs (lab/sum.sh times the others against CUB and prints the line that
 * would replace this one by its rule). */
using SpDefault = sp::Cfg<256, 4, 8, 1, 2, 16, 0>; // "m2w1" in lab/sum.sh: see the header

/* zeroed: d.outer counters that are zero and that the kernel leaves zero (lab/sum.sh measures the
 * cost of the memset that a NULL here means; FIN 1 needs none). */
template <class O, class C>
static int launch_cfg(const ck_red_desc &d, const ck_env *env, unsigned *zeroed = nullptr) {
  using acc_t = typename O::acc_t;
  using G = sp::Geo<O, C>;
  auto kernel = reduce_single_pass_kernel<O, C>;
  cudaStream_t s = (cudaStream_t)env->stream;
  static ck_devcache occs; /* per instantiation and device; a benign race if two threads fill it */
  int &occ = occs.v[env->device];
  if (!occ) occ = occupancy((const void *)kernel, C::BS, 0);
  const int64_t target = (int64_t)env->sm_count * occ * C::WAVES;
  Plan p;
  if constexpr (C::MAP == 0) {
    p = plan_rows(d.outer, d.len, target, (int64_t)G::TILE, Vec<typename O::value_t>::N);
  } else { /* at most one item per whole tile; the head/tail go to the first/last item */
    int64_t per = d.outer >= target ? 1 : target / d.outer;
    const int64_t ntile = d.len / G::TILE;
    if (per > ntile) per = ntile;
    if (per < 1) per = 1;
    p.per_row = per;
    p.chunk = 0;
    p.items = d.outer * per;
  }
  const unsigned grid = grid_for(p.items);
  typename O::out_t *out = (typename O::out_t *)d.out;
  ck_note(env, kernel, C::BS, 0);
  if (p.per_row == 1) {
    kernel<<<grid, C::BS, 0, s>>>((const typename O::value_t *)d.x, d.outer, d.len, 1, p.chunk, nullptr, nullptr, out,
                                  d.idx);
    return (int)cudaGetLastError();
  }
  const size_t part_bytes = ((size_t)p.items * sizeof(acc_t) + 255) & ~(size_t)255;
  const bool memset_tickets = C::FIN == 0 && !zeroed;
  Ws w(env, part_bytes + (memset_tickets ? (size_t)d.outer * sizeof(unsigned) : 0));
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  unsigned *tickets = C::FIN == 0 ? zeroed : nullptr;
  if (memset_tickets) {
    tickets = (unsigned *)((char *)w.p + part_bytes);
    const int err = (int)cudaMemsetAsync(tickets, 0, (size_t)d.outer * sizeof(unsigned), s);
    if (err) return err;
  }
  kernel<<<grid, C::BS, 0, s>>>((const typename O::value_t *)d.x, d.outer, d.len, p.per_row, p.chunk, (acc_t *)w.p,
                                tickets, out, d.idx);
  int err = (int)cudaGetLastError();
  if (C::FIN == 1 && !err) { /* one block per row folds the row's per_row partials */
    ck_note(env, red_acc_rows_kernel<O, 256>, 256, 0);
    red_acc_rows_kernel<O, 256><<<grid_for(d.outer), 256, 0, s>>>((const acc_t *)w.p, d.outer, p.per_row, p.per_row, 1,
                                                                  nullptr, out, d.idx, d.len);
    err = (int)cudaGetLastError();
  }
  return err;
}

template <class O>
static int launch(const ck_red_desc &d, const ck_env *env) {
  return launch_cfg<O, SpDefault>(d, env);
}

CK_RED_LAUNCHER_H(ck_reduce_single_pass, launch)

extern "C" const char *ck_reduce_single_pass_supports(const void *desc) {
  return check_rows((const ck_red_desc *)desc);
}
