/*
 * 03_tiled.cu — elementwise variant 3 "tiled": operands in different memory orders.
 *
 * Idea: `c = a + b:t()` into a row-major c is a transpose as well as an add. The strided variant walks the
 * output in its memory order, so b is read with a large stride along the fast dim: every warp load touches
 * 32 different 32-byte sectors, and the pass runs at a few percent of memcpy. Here, as in the transpose
 * ladder's shared-memory rungs, the work is cut into tiles over two dims: X, the output's unit-stride dim,
 * and Y, the dim along which the mismatched ("staged") inputs are contiguous. A staged input is read by
 * warps walking Y (coalesced for it) into a padded shared tile; after one barrier the block walks X: the
 * output is written, the staged values come from shared memory, and an input in the output's order (a
 * "direct" one) is read in place. Every other dim is a batch of tiles. The dispatcher's descriptor already
 * has the dims in the output's memory order, broadcast dims at stride 0 and compatible dims coalesced
 * (src/ops/op_elementwise.c), so X is the last dim; a 3-D permute either coalesces to 2-D or leaves batch dims.
 *
 * This step follows the transpose ladder's `wide` rung (kernels/transpose/06_wide.cu, 94 % of memcpy):
 *  - 64 x 64 tiles (f32/i32), 16 elements per thread and input, and every global load of the tile (staged
 *    AND direct inputs) issued before the first shared store: 2 x 16 loads in flight per thread for
 *    a + b:t(), where the 32 x 32 kernel below had 4 (and its direct loads waited behind the barrier);
 *  - the input kinds are compile-time (template K): one staged input with a scalar or none (K_S), one
 *    staged and one direct (K_SU), two staged (K_SS); which operand is left is one uniform select, so
 *    `a:t() + b`, `a + b:t()`, `2 * a:t()` and `a:t() * 2` share an instance;
 *  - per-tile base pointers (the only 64-bit multiplies: once per tile and thread), unit strides known
 *    where the layout guarantees them (staged inputs along Y, the output along X);
 *  - full tiles take a path without bounds checks; edge tiles a guarded, rolled-up one (one copy of the
 *    op's math there instead of 16: the file compiles ~4x longer than the 32 x 32 kernel alone, not 16x);
 *  - one tile per block, tiles visited in groups of EW_GROUP tile rows (as tr_common.cuh: neighbours that
 *    share partial 32-byte sectors run close together), batch and tile index by one division each.
 * The tile per element size (TI: the staged type; a cast's source), so that shared memory stays under 48 KB
 * for two staged inputs and a thread keeps 32-64 bytes of each input in flight:
 *    2-byte (f16, bf16): 64 x 64 tile, 32 x 8 threads, 16 elements each; rows padded by 2 (66 halves = 33
 *                        words: column reads hit 32 banks);
 *    4-byte (f32, i32):  64 x 64 tile, 32 x 8 threads, 16 elements each; rows padded by 1;
 *    8-byte (f64):       32 x 32 tile, 32 x 4 threads,  8 elements each; rows padded by 1.
 * Launch bounds plan 64 registers a thread (4 blocks of 256 threads per SM, f64 8 of 128); ptxas gives
 * 40-54 for add/sub/mul, no spills.
 * Changed from the 32 x 32 kernel (commit 0709719): all of the above; that kernel had 4 elements per thread,
 * 64-bit index math per element, runtime staging flags tested per element and a grid-stride loop with
 * div/mod per tile.
 * Measured on an H100 80GB HBM3 (lab/ew.sh: examples/elementwise_bench.lua, 16384^2 f32, % of memcpy
 * counting bytes read + written, both kernels in one run): c = a:t() + b:t() into a row-major c 97.2 %
 * (32 x 32 kernel: 51.5 %), c = a + b:t() 97.1 % (47.1 %), c = x:t() * 2 96.1 % (45.2 %); 3-D
 * a + b:transpose(2,3) at 16 x 4096^2 98.9 % (45.8 %), a + b:permute(3,2,1) 95.7 % (43.8 %); f16
 * a + b:t() 69.2 % (25.1 %); the strided rung ran the same cases at 7-28 %.
 * Pairs (2-byte inputs, full tiles, where pairs_ok() finds every pair in one aligned word): a thread moves two
 * neighbouring elements per access, so a warp's load or store is 128 contiguous bytes instead of 64 (the
 * scalar path measured 68.7-69.2 % of memcpy in f16 above), with the same 16 elements a thread. The tile's row
 * pitch is then 65 halves: a thread reads X = 2 lane and 2 lane + 1 at one Y, words 65 lane + Y/2 and that +
 * 32, each a different bank across the warp; its stores (one X, Y = 2 lane, 2 lane + 1) are 16-bit into 32
 * consecutive words. (Pitch 66 makes those reads 2-way conflicts; 32-bit stores need an even pitch.) The pair's
 * output goes out as one packed store (store_two) and the pitch is a constant there. Measured (H200, one run each,
 * % of memcpy): bf16 a + b:t() 91.7 with pairs, 82.8 without; f16 73.6 / 70.3 with the conversions of kernels/half.h
 * behind a branch, 66.7 with pairs after they lost it (f16 contiguous 93.8 then): f16 here is not understood yet.
 * Not done here: output rows that do not start on a 32-byte sector (odd widths) share sectors between
 * neighbouring tiles, which cost the transpose's wide rung a quarter of its speed (08_aligned.cu fixes that
 * with a halo); 16-byte accesses (07_vec.cu measured them slower for the transpose).
 * Launch: 32 x 8 (f64: 32 x 4) threads, one tile per block, grid x = tiles (looping past 2^31 - 1).
 * Shared: one (K_S, K_SU) or two (K_SS) padded tiles: 16.6 / 33.3 KB (f32), 8.4 / 16.9 KB (f16, f64).
 * supports(): a unary or binary op (not a generator), the output contiguous along the last dim, and at least
 * one array input that is not (its unit stride along another dim Y, the same Y for every such input);
 * otherwise contiguous or strided is the right rung, and the dispatcher runs that. Any shape, any batch
 * dims, any strides of a direct input (broadcasts included).
 */
#include <cuda_runtime.h>
#include <cmath>

#include "ck_knob.h"
#include "ew_math.cuh"

namespace {

using namespace ckew;

// ---------------------------------------------------------------- geometry

/* The tile for staged elements of type TI (see the header). */
template <typename TI> struct Geo {
  static constexpr int ES = (int)sizeof(TI);
  static constexpr int T = ES == 8 ? 32 : 64; /* tile edge along X and Y */
  static constexpr int BY = ES == 8 ? 4 : 8;  /* block 32 x BY */
  static constexpr int NI = T / BY;           /* rows of the tile per thread */
  static constexpr int NH = T / 32;           /* columns per thread (a warp spans 32) */
  static constexpr int PAD = ES == 2 ? 2 : 1;
  static constexpr int THREADS = 32 * BY;
  /* Blocks per SM to plan registers for: 64 registers a thread (4 x 256 or 8 x 128 threads), as the transpose
   * ladder found best (08_aligned.cu: 4 blocks of 256 beat the compiler's 3). */
  static constexpr int MINB = ES == 8 ? 8 : 4;
};

/* two neighbouring elements, moved as one access */
template <typename E> struct alignas(2 * sizeof(E)) Two { E v[2]; };
/* ... and stored as one: the two elements' bits packed into one integer (a struct store of Two<E> came out of the
 * compiler as two 16-bit stores) */
template <typename E> __device__ __forceinline__ void store_two(E *p, E x0, E x1) {
  if constexpr (sizeof(E) <= 4) {
    using U = std::conditional_t<sizeof(E) == 1, uint16_t, std::conditional_t<sizeof(E) == 2, uint32_t, unsigned long long>>;
    using H = std::conditional_t<sizeof(E) == 1, uint8_t, std::conditional_t<sizeof(E) == 2, uint16_t, uint32_t>>;
    H h0, h1;
    memcpy(&h0, &x0, sizeof(E));
    memcpy(&h1, &x1, sizeof(E));
    *(U *)p = (U)h0 | ((U)h1 << (8 * sizeof(E)));
  } else {
    Two<E> o;
    o.v[0] = x0, o.v[1] = x1;
    *(Two<E> *)p = o;
  }
}

enum { K_S = 0, K_SU = 1, K_SS = 2 }; /* staged (+ scalar or nothing); staged + direct; staged + staged */

#ifndef EW_GROUP
#define EW_GROUP 8 /* tile rows (along Y) visited together, as CK_TR_GROUP */
#endif

struct WideArgs {
  const void *s0, *s1; /* the staged input; the other one (K_SS: staged, K_SU: direct) */
  void *out;
  int64_t nx, ny;            /* extents along X and Y */
  int64_t ntx, nty, ntiles;  /* tiles along X and Y, per matrix */
  int64_t tiles;             /* all tiles */
  int64_t osy, s0x, s1x, s1y; /* strides: out along Y (1 along X); s0 along X (1 along Y); s1 (staged: 1 along Y) */
  int nb, swap;              /* batch dims; s0 is the right operand (the other, or the scalar, the left) */
  int pair;                  /* 2-byte inputs: full tiles move element pairs (go() checks the alignment) */
  int64_t bshape[CK_MAX_DIMS], obs[CK_MAX_DIMS], s0b[CK_MAX_DIMS], s1b[CK_MAX_DIMS];
  Scal s;
};

/* q = a / b, r = a - q b for a, b >= 0; 32-bit division when both fit (64-bit division is a long sequence). */
__device__ __forceinline__ void divmod(int64_t a, int64_t b, int64_t &q, int64_t &r) {
  if (((uint64_t)a | (uint64_t)b) <= 0xffffffffull) {
    const uint32_t q32 = (uint32_t)a / (uint32_t)b;
    q = q32;
    r = (int64_t)((uint32_t)a - q32 * (uint32_t)b);
  } else {
    q = a / b;
    r = a - q * b;
  }
}

// ---------------------------------------------------------------- kernel

template <int OP, typename TO, typename TI, int K>
__global__ void __launch_bounds__(Geo<TI>::THREADS, Geo<TI>::MINB) ew_wide_kernel(const WideArgs p) {
  using G = Geo<TI>;
  constexpr int T = G::T, BY = G::BY, NI = G::NI, NH = G::NH;
  constexpr int NIN = arity(OP);
  constexpr bool ST1 = K == K_SS, DI1 = K == K_SU; /* the second input: staged, direct */
  static_assert(NIN == 2 || K == K_S, "unary ops have one (staged) input");
  __shared__ TI sh0[T][T + G::PAD];
  __shared__ TI sh1[ST1 ? T : 1][ST1 ? T + G::PAD : 1];
  /* the tiles as flat arrays of row pitch P: T + PAD, except 2-byte tiles moved in pairs (p.pair), whose pitch is
   * odd (T + 1; see "Pairs" in the header) */
  const bool pair = G::ES == 2 && p.pair;
  const int P = pair ? T + 1 : T + G::PAD;
  TI *const f0 = &sh0[0][0];
  [[maybe_unused]] TI *const f1 = &sh1[0][0];
  const int tx = threadIdx.x, ty = threadIdx.y;
  [[maybe_unused]] const TI sv = scalar_of<TI>(p.s);
  const bool swap = p.swap;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    // tile t: batch m, then groups of EW_GROUP tile rows (Y), down a column of the group, then along X
    int64_t m, r, g, in, q, k;
    divmod(t, p.ntiles, m, r);
    divmod(r, (int64_t)EW_GROUP * p.ntx, g, in);
    const int64_t gr = p.nty - g * EW_GROUP < EW_GROUP ? p.nty - g * EW_GROUP : EW_GROUP;
    divmod(in, gr, q, k);
    const int64_t x0 = q * T, y0 = (g * EW_GROUP + k) * T;
    int64_t oo = 0, o0 = 0, o1 = 0;
    for (int d = p.nb - 1; d >= 0; --d) {
      int64_t mq, c;
      divmod(m, p.bshape[d], mq, c);
      m = mq;
      oo += c * p.obs[d], o0 += c * p.s0b[d], o1 += c * p.s1b[d];
    }
    const int nxr = (int)(p.nx - x0 < T ? p.nx - x0 : T), nyr = (int)(p.ny - y0 < T ? p.ny - y0 : T);
    // per-thread base pointers: stage phase at (X, Y) = (ty, tx), compute phase at (tx, ty)
    const TI *q0 = (const TI *)p.s0 + o0 + (x0 + ty) * p.s0x + (y0 + tx);
    [[maybe_unused]] const TI *q1 = nullptr;
    if constexpr (ST1) q1 = (const TI *)p.s1 + o1 + (x0 + ty) * p.s1x + (y0 + tx);
    if constexpr (DI1) q1 = (const TI *)p.s1 + o1 + (x0 + tx) * p.s1x + (y0 + ty) * p.s1y;
    TO *qo = (TO *)p.out + oo + (y0 + ty) * p.osy + (x0 + tx);

    /* the result at tile (X, Y): staged values from shared memory, a direct one (w) from registers */
    /* (the pitch an argument: the pair path passes its constant, so that the tile offsets fold into immediates) */
    auto one = [&](int X, int Y, TI w, int pitch) -> TO {
      const TI u = f0[X * pitch + Y];
      if constexpr (NIN == 2) {
        if constexpr (ST1) w = f1[X * pitch + Y];
        else if constexpr (!DI1) w = sv;
      } else {
        w = u;
      }
      const TI xx = swap ? w : u, yy = swap ? u : w;
      return elem<OP, TO, TI>(xx, yy, p.s, 0, 0, 0);
    };

    if (pair && nxr == T && nyr == T) {
      // full tile of 2-byte elements in pairs: a warp's access is 32 x 4 contiguous bytes (the scalar path below
      // moves 64); staged inputs along Y (lane = Y pair), the direct one and the output along X (lane = X pair)
      const TI *r0 = (const TI *)p.s0 + o0 + (x0 + ty) * p.s0x + (y0 + 2 * tx);
      [[maybe_unused]] const TI *r1 = nullptr;
      if constexpr (ST1) r1 = (const TI *)p.s1 + o1 + (x0 + ty) * p.s1x + (y0 + 2 * tx);
      if constexpr (DI1) r1 = (const TI *)p.s1 + o1 + (x0 + 2 * tx) + (y0 + ty) * p.s1y; /* s1x == 1 */
      TO *ro = (TO *)p.out + oo + (y0 + ty) * p.osy + (x0 + 2 * tx);
      constexpr int PP = T + 1; /* the pair path's pitch (P, known here) */
      Two<TI> a0[NI];
      [[maybe_unused]] Two<TI> a1[NI];
#pragma unroll
      for (int i = 0; i < NI; ++i) {
        a0[i] = *(const Two<TI> *)(r0 + (int64_t)(BY * i) * p.s0x);
        if constexpr (ST1) a1[i] = *(const Two<TI> *)(r1 + (int64_t)(BY * i) * p.s1x);
        if constexpr (DI1) a1[i] = *(const Two<TI> *)(r1 + (int64_t)(BY * i) * p.s1y);
      }
#pragma unroll
      for (int i = 0; i < NI; ++i) {
        const int X = ty + BY * i;
        f0[X * PP + 2 * tx] = a0[i].v[0], f0[X * PP + 2 * tx + 1] = a0[i].v[1];
        if constexpr (ST1) f1[X * PP + 2 * tx] = a1[i].v[0], f1[X * PP + 2 * tx + 1] = a1[i].v[1];
      }
      __syncthreads();
#pragma unroll
      for (int i = 0; i < NI; ++i) {
        const int Y = ty + BY * i;
        TI w0 = TI(0), w1 = TI(0);
        if constexpr (DI1) w0 = a1[i].v[0], w1 = a1[i].v[1];
        store_two(ro + (int64_t)(BY * i) * p.osy, one(2 * tx, Y, w0, PP), one(2 * tx + 1, Y, w1, PP));
      }
    } else if (nxr == T && nyr == T) {
      // full tile, no bounds checks. 1. every load of the tile: staged inputs along Y (lane = Y), the direct
      // one along X (lane = X), all issued before the first use
      TI v0[NI][NH];
      [[maybe_unused]] TI v1[NI][NH];
#pragma unroll
      for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int h = 0; h < NH; ++h) {
          v0[i][h] = q0[(int64_t)(BY * i) * p.s0x + 32 * h];
          if constexpr (ST1) v1[i][h] = q1[(int64_t)(BY * i) * p.s1x + 32 * h];
          if constexpr (DI1) v1[i][h] = q1[(int64_t)(32 * h) * p.s1x + (int64_t)(BY * i) * p.s1y];
        }
      // 2. staged values to shared memory, rows = X, columns = Y
#pragma unroll
      for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int h = 0; h < NH; ++h) {
          f0[(ty + BY * i) * P + tx + 32 * h] = v0[i][h];
          if constexpr (ST1) f1[(ty + BY * i) * P + tx + 32 * h] = v1[i][h];
        }
      __syncthreads();
      // 3. compute along X (lane = X) and store
#pragma unroll
      for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int h = 0; h < NH; ++h) {
          TI w = TI(0);
          if constexpr (DI1) w = v1[i][h];
          qo[(int64_t)(BY * i) * p.osy + 32 * h] = one(tx + 32 * h, ty + BY * i, w, P);
        }
    } else {
      // edge tile: element by element with bounds checks, rolled up (edge tiles are few; this keeps one copy
      // of the op's math instead of NI x NH)
#pragma unroll 1
      for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int h = 0; h < NH; ++h)
          if (ty + BY * i < nxr && tx + 32 * h < nyr) {
            f0[(ty + BY * i) * P + tx + 32 * h] = q0[(int64_t)(BY * i) * p.s0x + 32 * h];
            if constexpr (ST1) f1[(ty + BY * i) * P + tx + 32 * h] = q1[(int64_t)(BY * i) * p.s1x + 32 * h];
          }
      __syncthreads();
#pragma unroll 1
      for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int h = 0; h < NH; ++h)
          if (tx + 32 * h < nxr && ty + BY * i < nyr) {
            TI w = TI(0);
            if constexpr (DI1) w = q1[(int64_t)(32 * h) * p.s1x + (int64_t)(BY * i) * p.s1y];
            qo[(int64_t)(BY * i) * p.osy + 32 * h] = one(tx + 32 * h, ty + BY * i, w, P);
          }
    }
    if (t + gridDim.x < p.tiles) __syncthreads(); // the next tile overwrites shared rows still being read
  }
}

// ---------------------------------------------------------------- launcher

/* Whether full tiles can move 2-byte elements in pairs: every pair is two elements of one aligned 4-byte word
 * (8 or 2 for the output, by its size): arrays aligned, a staged input's stride across X and every batch stride
 * even, the direct input and the output unit-stride along X with an even stride along Y. */
bool pairs_ok(const WideArgs &p, int kind, size_t to_size) {
  auto even = [](int64_t v) { return (v & 1) == 0; };
  auto al = [](const void *q, size_t a) { return ((uintptr_t)q % a) == 0; };
  bool ok = al(p.s0, 4) && even(p.s0x) && al(p.out, 2 * to_size) && even(p.osy);
  if (kind == K_SS) ok = ok && al(p.s1, 4) && even(p.s1x);
  if (kind == K_SU) ok = ok && al(p.s1, 4) && p.s1x == 1 && even(p.s1y);
  for (int k = 0; k < p.nb; ++k) ok = ok && even(p.obs[k]) && even(p.s0b[k]) && (kind == K_S || even(p.s1b[k]));
  return ok;
}

struct WideLaunch {
  WideArgs &p;
  int kind;
  const ck_env *env;
  template <int OP, typename TO, typename TI> int run() {
    if constexpr (arity(OP) == 0) {
      return (int)cudaErrorInvalidValue; // generators: supports() refuses them
    } else if constexpr (arity(OP) == 1) {
      return go<OP, TO, TI, K_S>();
    } else {
      return kind == K_SS ? go<OP, TO, TI, K_SS>() : kind == K_SU ? go<OP, TO, TI, K_SU>() : go<OP, TO, TI, K_S>();
    }
  }
  template <int OP, typename TO, typename TI, int K> int go() {
    using G = Geo<TI>;
    p.ntx = (p.nx + G::T - 1) / G::T, p.nty = (p.ny + G::T - 1) / G::T;
    p.ntiles = p.ntx * p.nty;
    int64_t batch = 1;
    for (int k = 0; k < p.nb; ++k) batch *= p.bshape[k];
    p.tiles = p.ntiles * batch;
    p.pair = 0;
    /* CUKERN_EW_PAIRS=0: the scalar path for 2-byte tiles too (the form before, to compare in one run) */
    if constexpr (sizeof(TI) == 2) p.pair = ck_knob("CUKERN_EW_PAIRS", 0, 1, 1) && pairs_ok(p, K, sizeof(TO));
    const unsigned grid = (unsigned)(p.tiles < 0x7fffffffLL ? p.tiles : 0x7fffffffLL);
    const auto kern = ew_wide_kernel<OP, TO, TI, K>;
    ck_note(env, kern, G::THREADS, 0);
    kern<<<grid, dim3(32, G::BY), 0, (cudaStream_t)env->stream>>>(p);
    return (int)cudaGetLastError();
  }
};

// ---------------------------------------------------------------- which dims

/* The dim along which input `st` is contiguous, if it is mismatched with the output (not along X = the last
 * dim, and not broadcast along it); -1 when it can be read as it is. */
int fast_dim(const ck_ew_desc *d, const int64_t *st) {
  const int x = d->ndim - 1;
  if (st[x] == 1 || st[x] == 0 || d->shape[x] <= 1) return -1;
  for (int k = 0; k < x; ++k)
    if (st[k] == 1 && d->shape[k] > 1) return k;
  return -1;
}

/* Y (the staged inputs' unit-stride dim) or -1, and why not in *why. */
int y_dim(const ck_ew_desc *d, int *stage_a, int *stage_b, const char **why) {
  *stage_a = *stage_b = 0;
  *why = nullptr;
  if (arity(d->op) == 0) return *why = "generators have no input to tile", -1;
  if (d->ndim < 2) return *why = "needs two dims (after merging): operands in one memory order", -1;
  if (d->out_st[d->ndim - 1] != 1) return *why = "the output is not contiguous along its fastest dim", -1;
  const int ya = fast_dim(d, d->a_st);
  const int yb = arity(d->op) == 2 && !d->b_scalar ? fast_dim(d, d->b_st) : -1;
  if (ya < 0 && yb < 0) return *why = "every input follows the output's memory order (contiguous or strided runs it)", -1;
  if (ya >= 0 && yb >= 0 && ya != yb) return *why = "the inputs are contiguous along different dims", -1;
  *stage_a = ya >= 0, *stage_b = yb >= 0;
  return ya >= 0 ? ya : yb;
}

} // namespace

extern "C" const char *ck_ew_tiled_supports(const void *desc) {
  const ck_ew_desc *d = (const ck_ew_desc *)desc;
  if (d->ndim < 0 || d->ndim > CK_MAX_DIMS) return "ndim out of range";
  if (!(CK_DT_ALL5 & CK_DT_BIT(d->out_dtype)) || !(CK_DT_ALL5 & CK_DT_BIT(in_dtype_of(d))))
    return "f32, f64, i32, f16 and bf16 only (the other dtypes are not instantiated here: the strided rung takes them)";
  int sa, sb;
  const char *why;
  const int y = y_dim(d, &sa, &sb, &why);
  if (y < 0) return why;
  /* Tiles mostly idle (each of a batch of 8 x 8 transposes in its own 64 x 64 tile: a block of 256 threads for 64
   * elements) cost a block a tile whatever they hold, while the strided rung reads whole sectors there (8 x 8 f32 is
   * 256 contiguous bytes). ck.solve of 10^4 x 8 x 8 f32 matrices copied each into a column-major buffer through this
   * rung, and took 92 us against f64's 62 (round 3 session 15, H200). Declined where the tiles hold less than half
   * their slots on average (f64, whose strided reads use sectors twice as well: three quarters): lab/ew_small_tiles.lua
   * measured the tiled rung 1.1-9x slower than the strided one at every shape below that and 0.34-0.89x at every
   * shape above it (H200: batches of 8 x 8 to 64 x 64, 8 / 16 / 32 x 4096-8192, 2 x 2^22; f32, f64, f16).
   * CUKERN_EW_TILE_FILL=p: p percent instead (0: never decline), for that measurement. ck_copy_permuted's rule for the
   * transpose ladder differs (src/ops/op_transpose.c: its tiles are 64 x 64 for every dtype, and were measured apart). */
  const double t = in_dtype_of(d) == CK_F64 ? Geo<double>::T : Geo<float>::T; /* (f64 the one 8-byte dtype here) */
  const double nx = (double)d->shape[d->ndim - 1], ny = (double)d->shape[y];
  const double slots = std::ceil(nx / t) * std::ceil(ny / t) * t * t;
  const int fill = ck_knob("CUKERN_EW_TILE_FILL", 0, 100, in_dtype_of(d) == CK_F64 ? 75 : 50);
  if (fill > 0 && nx * ny * 100 < fill * slots)
    return fill != (in_dtype_of(d) == CK_F64 ? 75 : 50)
               ? "the tiles would be mostly idle (under CUKERN_EW_TILE_FILL percent of each tile used; strided runs it)"
           : in_dtype_of(d) == CK_F64
               ? "the tiles would be mostly idle (short tiled dims: under 3/4 of each 32 x 32 tile used; strided runs it)"
               : "the tiles would be mostly idle (short tiled dims: under half of each 64 x 64 tile used; strided runs it)";
  return nullptr;
}

extern "C" int ck_ew_tiled(const void *desc, const ck_env *env) {
  const ck_ew_desc *d = (const ck_ew_desc *)desc;
  int sa, sb;
  const char *why;
  const int y = y_dim(d, &sa, &sb, &why), x = d->ndim - 1;
  if (y < 0) return (int)cudaErrorInvalidValue;
  for (int k = 0; k < d->ndim; ++k)
    if (d->shape[k] == 0) return 0;
  const bool binary = arity(d->op) == 2, barr = binary && !d->b_scalar;
  /* s0: the staged input (a if it is staged, else b); s1: the other array input, if any */
  const int64_t *s0st = sa ? d->a_st : d->b_st;
  const int64_t *s1st = sa ? d->b_st : d->a_st;
  WideArgs p = {};
  int kind = K_S;
  p.s0 = sa ? d->a : d->b;
  if (barr) {
    p.s1 = sa ? d->b : d->a;
    kind = sa && sb ? K_SS : K_SU;
  }
  /* s0 is the right operand when it is b (a direct a on the left) or when a scalar stands on the left */
  p.swap = binary && (!sa || (d->b_scalar && d->scalar_left));
  p.out = d->out;
  p.nx = d->shape[x], p.ny = d->shape[y];
  p.osy = d->out_st[y], p.s0x = s0st[x];
  if (barr) p.s1x = s1st[x], p.s1y = s1st[y];
  for (int k = 0; k < d->ndim; ++k) {
    if (k == x || k == y) continue;
    p.bshape[p.nb] = d->shape[k], p.obs[p.nb] = d->out_st[k], p.s0b[p.nb] = s0st[k];
    p.s1b[p.nb] = barr ? s1st[k] : 0;
    ++p.nb;
  }
  p.s = scal_of(d);
  WideLaunch L{p, kind, env};
  return dispatch<false>(d, L);
}
