/*
 * 09_single_pass.cu — one launch: a last-block finish instead of a second pass.
 *
 * Idea: step 8 needs a second launch for the partials (a few microseconds of launch and tail per call).
 * Here each block folds its (row, chunk) item with 16-byte loads and a shuffle block reduction, writes its
 * partial, fences, and takes a ticket from the row's atomic counter: the block that draws the last ticket
 * reads the row's partials (through L2) and writes the result. No block ever waits on another, so there is
 * no deadlock whatever the scheduling. Tickets start from zero via cudaMemsetAsync on the stream (workspace
 * memory is not zeroed); the last block sets its row's counter back to zero, so a caller holding zeroed
 * counters may skip the memset (launch_cfg's `zeroed`). With one chunk per row there are no partials and
 * no tickets.
 * Changed (sum sweep, bench/exp/sum.sh): the first version folded with fold_range_vec (runtime strides, a
 * predicated U-vector remainder) in 44 registers, 5 blocks/SM, ~4 waves, and measured 95.4% of CUB on 2^28
 * f32 on the H100 (2852.7 vs 2990.6 GB/s; ~97% on the H200), with no gain from more waves, U = 8 or capping
 * registers (it spilled). CUB's sm_90 policy (tuning_reduce.cuh, Policy600) is 256 threads x 16 items as
 * 4 float4 loads per tile, 32 registers -> 8 blocks/SM, grid = 5 x resident blocks, contiguous even shares:
 * 2048 threads/SM with 64 bytes each in flight, 1.6x ours. Now the fold is CUB's shape: whole tiles of
 * BS x U vectors at compile-time offsets from one pointer (fold_tiles), then one vector at a time, then
 * scalars; that fits 32 registers without spilling for f32/i32 (__launch_bounds__(256, 8); other dtypes
 * and ops get the cap they fit, min_blocks). Two register-free ways to keep more bytes in flight are here
 * too (sm_90): an L2 bulk prefetch PF tiles ahead (cp.async.bulk.prefetch.L2) and tiles copied into shared
 * memory by the bulk-copy engine, S stages per block (fold_bulk: cp.async.bulk + mbarrier).
 * Configurations (sp::Cfg: BS, U, MINB, WAVES, PF, S): SpDefault is what the rung runs; bench/exp/sum.sh
 * times the others against cub::DeviceReduce::Sum with this file's own launcher. Not yet measured.
 * Launch: BS threads, grid = items (capped; blocks loop); full reductions cut the array into ~WAVES waves of
 * resident blocks (chunks a multiple of the vector width, >= one tile); S > 0: S x BS x U x 16 bytes of
 * dynamic shared memory.
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]; any len >= 1, any alignment.
 */
#include "red_ops.cuh"

using namespace ckred;

namespace sp {

// ---------------------------------------------------------------- sm_90 bulk-copy helpers

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* Ask L2 to fetch [p, p + bytes) (16-byte aligned, bytes a multiple of 16); no register waits for it. */
__device__ __forceinline__ void prefetch_l2(const void *p, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#endif
}
__device__ __forceinline__ void mbar_init(uint64_t *b, uint32_t count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(b)), "r"(count) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
/* Thread 0: this stage's barrier expects `bytes`, then the copy engine moves them global -> shared. */
__device__ __forceinline__ void bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(b)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_u32(dst)),
               "l"(src), "r"(bytes), "r"(smem_u32(b))
               : "memory");
#endif
}
__device__ __forceinline__ void mbar_wait(uint64_t *b, uint32_t parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("{\n\t.reg .pred P;\n"
               "WAIT:\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n\t"
               "@!P bra WAIT;\n}" ::"r"(smem_u32(b)),
               "r"(parity)
               : "memory");
#endif
}

// ---------------------------------------------------------------- folds of one chunk

/* First element of [beg, end) at a 16-byte boundary (x + beg may be misaligned when len % N != 0). */
template <typename T>
__device__ __forceinline__ int64_t aligned_start(const T *x, int64_t beg, int64_t end) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(x + beg);
  const int64_t head = (int64_t)(((16u - (unsigned)(addr & 15u)) & 15u) / sizeof(T));
  return beg + (head < end - beg ? head : end - beg);
}

template <class O, int N>
__device__ __forceinline__ void fold_vec(typename O::acc_t &a, const Vec<typename O::value_t> &r, int64_t pos) {
#pragma unroll
  for (int j = 0; j < N; ++j) a = O::combine(a, O::make(r.e[j], O::indexed ? pos + j : 0));
}

/* After the whole tiles: p = this thread's next vector; the rest one vector at a time, then scalars. */
template <class O, int BS>
__device__ __forceinline__ typename O::acc_t fold_rest(const typename O::value_t *__restrict__ x, const typename O::value_t *p,
                                                       int64_t vbeg, int64_t end, typename O::acc_t a) {
  using T = typename O::value_t;
  constexpr int N = Vec<T>::N;
  const T *const vend = x + vbeg + (end - vbeg) / N * N;
#pragma unroll 1
  for (; p < vend; p += BS * N) fold_vec<O, N>(a, ld_vec(p), p - x);
#pragma unroll 1
  for (int64_t j = (vend - x) + threadIdx.x; j < end; j += BS) a = O::combine(a, O::make(x[j], j));
  return a;
}

/* Elements [beg, end) of row x, tiles of BS*U vectors through registers: U loads issued back to back at
 * compile-time offsets (one base pointer per thread), each folded into its own accumulator. PF > 0: thread 0
 * has L2 fetch the tile PF ahead. */
template <class O, int BS, int U, int PF>
__device__ __forceinline__ typename O::acc_t fold_tiles(const typename O::value_t *__restrict__ x, int64_t beg,
                                                        int64_t end) {
  using T = typename O::value_t;
  using acc_t = typename O::acc_t;
  constexpr int N = Vec<T>::N, VS = BS * N, TILE = VS * U;
  const int t = threadIdx.x;
  acc_t acc[U];
#pragma unroll
  for (int u = 0; u < U; ++u) acc[u] = O::identity();
  const int64_t vbeg = aligned_start(x, beg, end);
#pragma unroll 1
  for (int64_t j = beg + t; j < vbeg; j += BS) acc[0] = O::combine(acc[0], O::make(x[j], j));
  const int64_t ntile = (end - vbeg) / TILE;
  const T *p = x + vbeg + t * N;
  const T *const pend = p + ntile * TILE;
  if (PF > 0 && t == 0)
    for (int64_t i = 0; i < PF && i < ntile; ++i) prefetch_l2(p + i * TILE, TILE * sizeof(T));
#pragma unroll 1
  for (; p < pend; p += TILE) {
    if (PF > 0 && t == 0 && p + PF * TILE < pend) prefetch_l2(p + PF * TILE, TILE * sizeof(T));
    Vec<T> r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = ld_vec(p + u * VS);
#pragma unroll
    for (int u = 0; u < U; ++u) fold_vec<O, N>(acc[u], r[u], (p - x) + u * VS);
  }
#pragma unroll
  for (int u = 1; u < U; ++u) acc[0] = O::combine(acc[0], acc[u]);
  return fold_rest<O, BS>(x, p, vbeg, end, acc[0]);
}

/* The same walk with tiles moved global -> shared memory by the bulk-copy engine: S stages (tiles) in flight
 * per block; thread 0 refills a stage once the whole block has read it (__syncthreads). k counts the tiles
 * this block has consumed so far (all chunks), which gives each stage's barrier parity. */
template <class O, int BS, int U, int S>
__device__ __forceinline__ typename O::acc_t fold_bulk(const typename O::value_t *__restrict__ x, int64_t beg,
                                                       int64_t end, unsigned char *smem, uint64_t *bar, uint32_t &k) {
  using T = typename O::value_t;
  using acc_t = typename O::acc_t;
  constexpr int N = Vec<T>::N, VS = BS * N, TILE = VS * U;
  constexpr uint32_t TB = TILE * sizeof(T);
  static_assert((S & (S - 1)) == 0, "stages: a power of two (barrier parity across 2^32 tiles)");
  const int t = threadIdx.x;
  acc_t acc[U];
#pragma unroll
  for (int u = 0; u < U; ++u) acc[u] = O::identity();
  const int64_t vbeg = aligned_start(x, beg, end);
#pragma unroll 1
  for (int64_t j = beg + t; j < vbeg; j += BS) acc[0] = O::combine(acc[0], O::make(x[j], j));
  const int64_t ntile = (end - vbeg) / TILE;
  const T *const base = x + vbeg;
  if (t == 0)
    for (int64_t i = 0; i < S && i < ntile; ++i) {
      const uint32_t s = (k + (uint32_t)i) % S;
      bulk_load(smem + s * TB, base + i * TILE, TB, &bar[s]);
    }
#pragma unroll 1
  for (int64_t i = 0; i < ntile; ++i, ++k) {
    const uint32_t s = k % S;
    mbar_wait(&bar[s], (k / S) & 1u);
    const float4 *tile = reinterpret_cast<const float4 *>(smem + s * TB); /* LDS.128 (Vec<T> is T-aligned) */
    Vec<T> r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const float4 v = tile[u * BS + t];
      memcpy(&r[u], &v, 16);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) fold_vec<O, N>(acc[u], r[u], vbeg + i * TILE + (int64_t)(u * BS + t) * N);
    __syncthreads(); /* the whole block is done with stage s */
    if (t == 0 && i + S < ntile) bulk_load(smem + s * TB, base + (i + S) * TILE, TB, &bar[s]);
  }
#pragma unroll
  for (int u = 1; u < U; ++u) acc[0] = O::combine(acc[0], acc[u]);
  return fold_rest<O, BS>(x, base + ntile * TILE + t * N, vbeg, end, acc[0]);
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

/* One configuration of the rung: BS threads, U vectors per thread per tile, MINB for __launch_bounds__
 * (1: no cap), WAVES of blocks per resident slot, PF tiles of L2 prefetch (regs), S bulk stages (0: regs). */
template <int BS_, int U_, int MINB_, int WAVES_, int PF_, int S_>
struct Cfg {
  static constexpr int BS = BS_, U = U_, MINB = MINB_, WAVES = WAVES_, PF = PF_, S = S_;
  static constexpr size_t smem = (size_t)S_ * BS_ * U_ * 16;
};

} // namespace sp

// ---------------------------------------------------------------- kernel

template <class O, int BS, int U, int MINB, int PF, int S>
__global__ void __launch_bounds__(BS, sp::min_blocks<O, BS, MINB>()) reduce_single_pass_kernel(const typename O::value_t *__restrict__ x,
                                                                      int64_t outer, int64_t len, int64_t per_row,
                                                                      int64_t chunk, typename O::acc_t *part,
                                                                      unsigned *tickets, typename O::value_t *out,
                                                                      int32_t *idx) {
  using acc_t = typename O::acc_t;
  extern __shared__ __align__(128) unsigned char sp_stages[];
  __shared__ __align__(8) uint64_t sp_bar[S > 0 ? S : 1];
  __shared__ bool am_last;
  uint32_t k = 0;
  if constexpr (S > 0) {
    if (threadIdx.x == 0)
      for (int s = 0; s < S; ++s) sp::mbar_init(&sp_bar[s], 1);
    __syncthreads();
  }
  for (int64_t b = blockIdx.x; b < outer * per_row; b += gridDim.x) {
    const int64_t row = b / per_row, c = b - row * per_row;
    const int64_t beg = c * chunk, end = beg + chunk < len ? beg + chunk : len;
    acc_t a;
    if constexpr (S > 0) a = sp::fold_bulk<O, BS, U, S>(x + row * len, beg, end, sp_stages, sp_bar, k);
    else a = sp::fold_tiles<O, BS, U, PF>(x + row * len, beg, end);
    a = block_reduce<O, BS>(a);
    if (per_row == 1) {
      if (threadIdx.x == 0) O::store(a, out, idx, row, len);
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

/* The configuration the rung runs (bench/exp/sum.sh times the others against CUB). */
using SpDefault = sp::Cfg<256, 4, 8, 5, 0, 0>;

/* zeroed: d.outer counters that are zero and that the kernel leaves zero (bench/exp/sum.sh measures the
 * cost of the memset that a NULL here means). */
template <class O, class C>
static int launch_cfg(const ck_red_desc &d, const ck_env *env, unsigned *zeroed = nullptr) {
  using acc_t = typename O::acc_t;
  constexpr int N = Vec<typename O::value_t>::N;
  if constexpr (C::S > 0 || C::PF > 0) { /* bulk copies and bulk prefetches are sm_90 instructions */
    if (env->cc_major < 9) return launch_cfg<O, sp::Cfg<C::BS, C::U, C::MINB, C::WAVES, 0, 0>>(d, env, zeroed);
  }
  auto kernel = reduce_single_pass_kernel<O, C::BS, C::U, C::MINB, C::PF, C::S>;
  cudaStream_t s = (cudaStream_t)env->stream;
  static int occ = 0;
  if (!occ) {
    if (C::smem > 48 * 1024) {
      const int err = (int)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::smem);
      if (err) return err;
    }
    occ = occupancy((const void *)kernel, C::BS, C::smem);
  }
  const Plan p = plan_rows(d.outer, d.len, (int64_t)env->sm_count * occ * C::WAVES, (int64_t)C::BS * N * C::U, N);
  const unsigned grid = grid_for(p.items);
  typename O::value_t *out = (typename O::value_t *)d.out;
  ck_note(env, kernel, C::BS, C::smem); /* one kernel either way: the last block finishes */
  if (p.per_row == 1) {
    kernel<<<grid, C::BS, C::smem, s>>>((const typename O::value_t *)d.x, d.outer, d.len, 1, p.chunk, nullptr,
                                        nullptr, out, d.idx);
    return (int)cudaGetLastError();
  }
  const size_t part_bytes = ((size_t)p.items * sizeof(acc_t) + 255) & ~(size_t)255;
  Ws w(env, part_bytes + (zeroed ? 0 : (size_t)d.outer * sizeof(unsigned)));
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  unsigned *tickets = zeroed;
  if (!tickets) {
    tickets = (unsigned *)((char *)w.p + part_bytes);
    const int err = (int)cudaMemsetAsync(tickets, 0, (size_t)d.outer * sizeof(unsigned), s);
    if (err) return err;
  }
  kernel<<<grid, C::BS, C::smem, s>>>((const typename O::value_t *)d.x, d.outer, d.len, p.per_row, p.chunk,
                                      (acc_t *)w.p, tickets, out, d.idx);
  return (int)cudaGetLastError();
}

template <class O>
static int launch(const ck_red_desc &d, const ck_env *env) {
  return launch_cfg<O, SpDefault>(d, env);
}

CK_RED_LAUNCHER_H(ck_reduce_single_pass, launch)

extern "C" const char *ck_reduce_single_pass_supports(const void *desc) {
  return check_rows((const ck_red_desc *)desc);
}
