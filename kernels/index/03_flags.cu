/*
 * 03_flags.cu — index ladder, rung 3: an own stream compaction for nonzero / find / masked_select over a dense
 * 1-byte mask (bool, u8, i8), the "flags, scan, scatter" step of issue 33 beside CUB's DeviceSelect (rung 0).
 *   1. tile_count_k: a block per tile of 4096 mask bytes (256 threads x 16, one 16-byte load each) counts its
 *      nonzero bytes into tile_count[b] (the block scans are the scan ladder's block_excl, scan_common.cuh);
 *   2. scan_tiles_k: one block turns the tile counts into exclusive offsets (chunks of 1024, a running carry);
 *   3. select_k: a block per tile again: each thread counts its 16 bytes, the block's exclusive scan gives each
 *      thread its first place in the tile's list of selected positions (shared memory), and the block then writes
 *      the tile's outputs from that list, consecutive threads on consecutive outputs: 1-based row-major
 *      positions (find, 1-D nonzero), their subscripts ([k, ndim] nonzero, ix_common.cuh's Subs2 / SubsN, as
 *      rung 0), or the source's elements (masked_select, by element size).
 * Three passes over the mask (the count the caller read back first is rung 0's DeviceReduce): no look-back, no
 * decoupled state, nothing that depends on the order blocks run in. The caller allocated the output from the count,
 * so the offsets here end exactly at it.
 * Why an own rung: on an H200 CUB's selection took about 170 us of nonzero's 224 over a 2^26 mask at 1% (session 13,
 * lab/select_host.lua), where a pass over 64 MB of flags is about 20 us; PyTorch's nonzero is the same CUB call.
 * The default for the compactions it takes since session 14: rung 0 (CUB) leaves them to it unless CUKERN_IX_FLAGS=0.
 * Measured with CUKERN_IX_FLAGS=1 (x4, H200, 2^26 masks, before the ordered writes through shared memory): 0.141 ms
 * against CUB's 0.223 at 1% (PyTorch 0.203), but 0.642 against 0.255 dense.
 * Launch: tile_count_k and select_k a block of 256 threads per 4096-byte tile (grid = tiles, at most 2^31 - 1);
 * scan_tiles_k one block of 1024. Workspace: 8 bytes a tile (the counts, then the offsets in place).
 * supports(): nonzero or masked_select; the mask contiguous, 1 byte a element, 16-byte aligned; masked_select's
 * source contiguous. The rest stays with rung 0.
 */
#include "ck_knob.h"
#include "ix_common.cuh"
#include "scan/scan_common.cuh"

using namespace ckix;

namespace {

constexpr int FT = 256;            /* threads a block */
constexpr int FB = 16;             /* mask bytes a thread */
constexpr int FTILE = FT * FB;     /* mask bytes a tile */
constexpr int SCAN_T = 1024;       /* scan_tiles_k's block */

/* thread t's 16 mask bytes of tile b, as bytes (zeros past n) */
__device__ __forceinline__ void load16(const uint8_t *m, int64_t n, int64_t b, int t, uint8_t v[FB]) {
  const int64_t p0 = b * FTILE + (int64_t)t * FB;
  if (p0 + FB <= n) {
    const uint4 w = *(const uint4 *)(m + p0);
    memcpy(v, &w, FB);
  } else {
#pragma unroll
    for (int j = 0; j < FB; ++j) v[j] = p0 + j < n ? m[p0 + j] : 0;
  }
}

__device__ __forceinline__ int count16(const uint8_t v[FB]) {
  int c = 0;
#pragma unroll
  for (int j = 0; j < FB; ++j) c += v[j] != 0;
  return c;
}

/* The block scans are the scan ladder's (scan_common.cuh: warps scan with shuffles, warp 0 the warp totals), over
 * plain 64-bit sums. */
struct Add {
  using acc_t = long long;
  __device__ static acc_t identity() { return 0; }
  __device__ static acc_t combine(acc_t a, acc_t b) { return a + b; }
};

__global__ void __launch_bounds__(FT) tile_count_k(const uint8_t *m, int64_t n, int64_t *tile_count) {
  __shared__ long long wsum[FT / 32];
  uint8_t v[FB];
  const int64_t b = blockIdx.x;
  load16(m, n, b, threadIdx.x, v);
  long long total;
  ckscan::block_excl<Add, FT>(count16(v), total, wsum);
  if (threadIdx.x == 0) tile_count[b] = total;
}

__global__ void __launch_bounds__(SCAN_T) scan_tiles_k(int64_t *tile, int64_t ntiles) {
  __shared__ long long wsum[SCAN_T / 32];
  int64_t carry = 0;
  for (int64_t c0 = 0; c0 < ntiles; c0 += SCAN_T) {
    const int64_t i = c0 + threadIdx.x;
    long long total;
    const long long ex = ckscan::block_excl<Add, SCAN_T>(i < ntiles ? tile[i] : 0, total, wsum);
    if (i < ntiles) tile[i] = carry + ex;
    carry += total;
  }
}

/* Where selected element k (0-based output row) at mask position p goes. */
struct Pos { /* find / 1-D nonzero: 1-based positions */
  int64_t *out;
  __device__ __forceinline__ void operator()(int64_t k, int64_t p) const { out[k] = p + 1; }
};
template <int ES> struct Vals { /* masked_select: the source's element */
  using T = typename Elem<ES>::T;
  const T *src;
  T *out;
  __device__ __forceinline__ void operator()(int64_t k, int64_t p) const { out[k] = src[p]; }
};

/* The tile's selected positions are first put in order in shared memory (12-bit offsets in the tile, by each
 * thread from its exclusive count), then the block writes its outputs k0, k0 + 1, ... with consecutive threads on
 * consecutive outputs. Written by each thread from its own 16 bytes instead (session 13's form), the outputs of a
 * warp's store were 16 x density elements apart: on a dense 2^26 mask (x4, H200) nonzero took 0.642 ms against
 * CUB's 0.255, masked_select 0.940 against 0.478, while at 1% it was 0.141 against 0.223. */
template <class W> __global__ void __launch_bounds__(FT) select_k(const uint8_t *m, int64_t n, const int64_t *tile_off, W w) {
  __shared__ long long wsum[FT / 32];
  __shared__ uint16_t loc[FTILE];
  uint8_t v[FB];
  const int64_t b = blockIdx.x;
  load16(m, n, b, threadIdx.x, v);
  long long total;
  int k = (int)ckscan::block_excl<Add, FT>(count16(v), total, wsum);
  const int q0 = threadIdx.x * FB;
#pragma unroll
  for (int j = 0; j < FB; ++j)
    if (v[j]) loc[k++] = (uint16_t)(q0 + j);
  __syncthreads();
  const int64_t k0 = tile_off[b], p0 = b * FTILE;
  for (int i = threadIdx.x; i < (int)total; i += FT) w(k0 + i, p0 + loc[i]);
}

} // namespace

extern "C" const char *ck_index_flags_supports(const void *desc) {
  const ck_ix_desc &d = *(const ck_ix_desc *)desc;
  if (d.fn != CK_IX_NONZERO && d.fn != CK_IX_MASKED_SELECT) return "runs nonzero and masked_select only (the count is rung 0's)";
  if (d.ix_es != 1 || !contiguous_over(d, d.ix_st) || ((uintptr_t)d.ix % 16) != 0)
    return "takes a contiguous, 16-byte aligned mask of 1-byte elements (bool, u8, i8)";
  if (d.fn == CK_IX_MASKED_SELECT && !contiguous_over(d, d.src_st)) return "takes a contiguous source";
  return nullptr;
}

/* Whether rung 3 takes this compaction when rung 0 is asked (unless CUKERN_IX_FLAGS=0; see the header). */
extern "C" int ck_index_flags_preferred(const void *desc) {
  return ck_knob("CUKERN_IX_FLAGS", 0, 1, 1) && ck_index_flags_supports(desc) == nullptr;
}

extern "C" int ck_index_flags(const void *desc, const ck_env *env) {
  const ck_ix_desc &d = *(const ck_ix_desc *)desc;
  cudaStream_t s = (cudaStream_t)env->stream;
  const int64_t n = d.numel;
  if (n == 0) return 0;
  const int64_t ntiles = (n + FTILE - 1) / FTILE;
  if (ntiles > 0x7fffffffLL) return (int)cudaErrorInvalidValue;
  int64_t *tile = (int64_t *)env->ws_alloc(env->owner, (size_t)ntiles * sizeof(int64_t));
  if (!tile) return (int)cudaErrorMemoryAllocation;
  const uint8_t *m = (const uint8_t *)d.ix;
  const unsigned grid = (unsigned)ntiles;
  ck_note(env, tile_count_k, FT, 0);
  tile_count_k<<<grid, FT, 0, s>>>(m, n, tile);
  ck_note(env, scan_tiles_k, SCAN_T, 0);
  scan_tiles_k<<<1, SCAN_T, 0, s>>>(tile, ntiles);
  int err = 0;
  auto go = [&](auto w) {
    ck_note(env, select_k<decltype(w)>, FT, 0);
    select_k<decltype(w)><<<grid, FT, 0, s>>>(m, n, tile, w);
    return (int)cudaGetLastError();
  };
  if (d.fn == CK_IX_NONZERO) {
    if (d.dim_st != 1 || d.nd <= 1) {
      err = go(Pos{(int64_t *)d.out});
    } else if (d.nd == 2) {
      err = go(Subs2{(int64_t *)d.out, d.shape[1]});
    } else {
      SubsN w;
      w.out = (int64_t *)d.out, w.nd = d.nd;
      for (int j = 0; j < d.nd; ++j) w.shape[j] = d.shape[j];
      err = go(w);
    }
  } else {
    err = by_size(d.es, [&](auto es) {
      using T = typename Elem<es.value>::T;
      return go(Vals<es.value>{(const T *)d.src, (T *)d.out});
    });
  }
  env->ws_free(env->owner, tile);
  return err;
}
