// lab/scan_lookback_probe.cu — issue 33: why the single-pass scan (rung 6, lookback) reads 2^28 f32 at 47% of
// memcpy while a block per row (rung 8) reaches 97%, and which change brings the flat scan to >= 90%.
// One kernel template, four knobs, each configuration timed on 2^28 f32 (CUDA events, 3 warm-ups, median of 15)
// beside CUB's DeviceScan::InclusiveSum and cudaMemcpyAsync of the same bytes, and checked first:
//   i32 (wraps mod 2^32) bit for bit against CUB, f32 against CUB within 1e-4 relative to the running |sum|.
// Knobs:
//   BLOCK, ITEMS  tile = BLOCK * ITEMS elements
//   PACK          1: flag and value in one 64-bit word (one load per look-back step, no fence between value and
//                 flag); 0: rung 6's separate flag and value arrays with a __threadfence between
//   PF            1: the block publishes its aggregate, takes its next ticket and loads that tile into registers
//                 before waiting on its look-back (see scan_k)
//   PERSIST       1: resident blocks take tickets in a loop; 0: a block per tile (one ticket each)
//   CS            1: streaming loads and stores (__ldcs/__stcs)
// First run (H100, 2^28 f32): memcpy 0.716 ms, CUB 0.880; rung 6 as is 1.459; packed status words 0.997; the
// first prefetch form (next ticket taken before publishing) 1.409; thread-blocked register loads 1.2-4.0.
// Second run (another H100): memcpy 0.720, CUB 0.882; packed B256 I16 1.055 (persistent), 1.011 (a block per
// tile), B256 I32 0.979, prefetch after publishing 1.110, streaming hints 1.017, other shapes 1.09-1.42.
// PROBE3=1 runs the third set (tiles of 8192, a block per tile, __nanosleep backoff in the spin: NS).
// PROBE6=1: the delays swept on PROBE5's best tile (B256 I32 streaming: names give d<first sleep> ns<re-poll sleep>).
// PROBE5=1 runs the fifth set on n = 3 * 2^(lg-2): CUB's sm90 tuning (128 threads x 24 items, a 1140 ns sleep before the
// first look-back read and 688 ns between re-polls), register caps (MINB blocks an SM) and streaming loads.
// PROBE4=1 runs the fourth set: LBW (status words a lane loads per look-back step: 32 * LBW predecessors a step),
// CNT (look-back steps and zero-flag re-polls a tile), and scan_cp (the next tile loaded by cp.async into a second
// shared buffer while the block looks back and stores).
//   nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/slp lab/scan_lookback_probe.cu && /tmp/slp [log2 n]
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#include "probe_time.cuh"


template <class T> __device__ __forceinline__ unsigned long long pack(T v, unsigned flag) {
  unsigned bits;
  memcpy(&bits, &v, 4);
  return ((unsigned long long)flag << 32) | bits;
}
template <class T> __device__ __forceinline__ T unpack(unsigned long long w) {
  unsigned bits = (unsigned)w;
  T v;
  memcpy(&v, &bits, 4);
  return v;
}

template <class T> __device__ __forceinline__ T warp_incl(T v) {
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    T n = __shfl_up_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) >= o) v += n;
  }
  return v;
}

/* The block's scan of its threads' ITEMS consecutive values in r (scanned in place): `before` gets everything ahead
 * of this thread's first value, `total` the tile's sum. wsum: NW values of shared memory; one barrier inside. */
template <class T, int ITEMS, int NW>
__device__ __forceinline__ void block_scan_regs(T (&r)[ITEMS], T *wsum, T &before, T &total) {
#pragma unroll
  for (int m = 1; m < ITEMS; ++m) r[m] += r[m - 1];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const T wi = warp_incl(r[ITEMS - 1]);
  if (lane == 31) wsum[w] = wi;
  __syncthreads();
  before = 0, total = 0;
#pragma unroll
  for (int k = 0; k < NW; ++k) {
    if (k < w) before += wsum[k];
    total += wsum[k];
  }
  before += wi - r[ITEMS - 1];
}

struct St {
  unsigned long long *ticket;
  unsigned long long *word; /* PACK */
  int *flags;               /* !PACK */
  void *agg, *inc;          /* !PACK */
  unsigned long long *cnt;  /* CNT: [0] look-back steps, [1] re-polls of a zero flag (summed over lanes), [2] tiles */
};

/* warp 0, after publish_agg: look back, publish the inclusive prefix; returns the exclusive prefix.
 * LBW (PACK only): each lane loads LBW status words per step, so a step sees 32 * LBW predecessors (lane l holds
 * tiles end-1-l*LBW-j, j = 0 nearest). CNT: look-back steps and zero-flag re-polls added to st.cnt[0], st.cnt[1]. */
template <class T, int PACK, int NS, int LBW = 1, int CNT = 0, int D0 = 0>
__device__ T look_back(const St &st, int64_t g, T total) {
  const int lane = threadIdx.x & 31;
  T *agg = (T *)st.agg, *inc = (T *)st.inc;
  T prefix = 0;
  if (g == 0) return prefix;
  if (D0) __nanosleep(D0); /* CUB's L2 write latency: give the predecessors' words time to land before reading */
  unsigned steps = 0, spins = 0;
  for (int64_t end = g;; end -= 32 * LBW) {
    ++steps;
    unsigned f = 2;
    T v = 0;
    if (PACK && LBW > 1) {
      unsigned long long w[LBW];
#pragma unroll
      for (int j = 0; j < LBW; ++j) {
        const int64_t at = end - 1 - lane * LBW - j;
        w[j] = at >= 0 ? *(volatile unsigned long long *)(st.word + at) : (2ull << 32); /* before tile 0: stop */
      }
#pragma unroll
      for (int j = 0; j < LBW; ++j)
        while ((w[j] >> 32) == 0) {
          w[j] = *(volatile unsigned long long *)(st.word + (end - 1 - lane * LBW - j));
          if (CNT) ++spins;
        }
      bool stop = false;
#pragma unroll
      for (int j = 0; j < LBW; ++j)
        if (!stop) {
          v += unpack<T>(w[j]);
          stop = (w[j] >> 32) == 2;
        }
      f = stop ? 2 : 1;
    } else {
      const int64_t at = end - 1 - lane;
      if (at >= 0) {
        if (PACK) {
          unsigned long long w;
          unsigned ns = NS;
          for (;;) {
            w = *(volatile unsigned long long *)(st.word + at);
            if ((w >> 32) != 0) break;
            if (CNT) ++spins;
            if (NS) { __nanosleep(ns); ns = ns < 512 ? 2 * ns : ns; }
          }
          f = (unsigned)(w >> 32);
          v = unpack<T>(w);
        } else {
          do f = ((volatile int *)st.flags)[at];
          while (f == 0);
          __threadfence();
          v = ((volatile T *)(f == 2 ? inc : agg))[at];
        }
      }
    }
    const unsigned incl = __ballot_sync(0xffffffffu, f == 2);
    const int stop = incl ? __ffs(incl) - 1 : 32;
    if (lane > stop) v = 0;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    prefix += v;
    if (incl) break;
  }
  if (CNT) {
    spins = __reduce_add_sync(0xffffffffu, spins);
    if (lane == 0) {
      atomicAdd(st.cnt, (unsigned long long)steps);
      atomicAdd(st.cnt + 1, (unsigned long long)spins);
      atomicAdd(st.cnt + 2, 1ull);
    }
  }
  if (lane == 0) {
    const T ip = prefix + total;
    if (PACK) *(volatile unsigned long long *)(st.word + g) = pack(ip, 2u);
    else {
      ((volatile T *)inc)[g] = ip;
      __threadfence();
      ((volatile int *)st.flags)[g] = 2;
    }
  }
  return prefix;
}

/* publish the tile's aggregate (lane 0 of warp 0) */
template <class T, int PACK> __device__ __forceinline__ void publish_agg(const St &st, int64_t g, T total) {
  if (PACK) *(volatile unsigned long long *)(st.word + g) = pack(total, g == 0 ? 2u : 1u);
  else {
    ((volatile T *)(g == 0 ? (T *)st.inc : (T *)st.agg))[g] = total;
    __threadfence();
    ((volatile int *)st.flags)[g] = g == 0 ? 2 : 1;
  }
}

template <class T, int CS> __device__ __forceinline__ uint4 ld4(const uint4 *p) { return CS ? __ldcs(p) : __ldg(p); }
template <class T, int CS> __device__ __forceinline__ void st4(uint4 *p, uint4 v) { if (CS) __stcs(p, v); else *p = v; }

/* PF 0: load, scan, look back, store, then the next ticket (rung 6's order).
 * PF 1: after publishing this tile's aggregate the block takes its next ticket and issues that tile's loads into
 *       registers, then waits on its look-back and stores: loads stay in flight across the wait, and a tile's
 *       aggregate is published before its block takes another ticket (so successors never wait on a tile whose
 *       holder is still busy with an earlier one before publishing). */
template <class T, int BLOCK, int ITEMS, int PACK, int PF, int PERSIST, int CS, int NS = 0, int LBW = 1, int CNT = 0,
          int MINB = 0, int D0 = 0>
__global__ void __launch_bounds__(BLOCK, MINB) scan_k(const T *__restrict__ x, T *__restrict__ y, int64_t ntiles, St st) {
  constexpr int N = BLOCK * ITEMS, V = ITEMS / 4, NW = BLOCK / 32;
  __shared__ T s[N + N / 32];
  __shared__ T wsum[NW];
  __shared__ T carry;
  __shared__ int64_t tk[2];
  auto pad = [](int i) { return i + (i >> 5); };
  uint4 raw[V];
  auto fetch = [&](int64_t g) {
    const uint4 *p = reinterpret_cast<const uint4 *>(x + g * N);
#pragma unroll
    for (int k = 0; k < V; ++k) raw[k] = ld4<T, CS>(p + k * BLOCK + threadIdx.x);
  };
  if (threadIdx.x == 0) tk[0] = (int64_t)atomicAdd(st.ticket, 1ull);
  __syncthreads();
  int64_t g = tk[0];
  if (g < ntiles) fetch(g);
  for (int it = 0;; ++it) {
    if (g >= ntiles) break;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      T e[4];
      memcpy(e, &raw[k], 16);
#pragma unroll
      for (int m = 0; m < 4; ++m) s[pad((k * BLOCK + threadIdx.x) * 4 + m)] = e[m];
    }
    __syncthreads();
    T r[ITEMS];
#pragma unroll
    for (int m = 0; m < ITEMS; ++m) r[m] = s[pad(threadIdx.x * ITEMS + m)];
    T before, total;
    block_scan_regs<T, ITEMS, NW>(r, wsum, before, total);
    int64_t gn = ntiles;
    if (PF) {
      if (threadIdx.x == 0) {
        publish_agg<T, PACK>(st, g, total);
        tk[(it + 1) & 1] = (int64_t)atomicAdd(st.ticket, 1ull);
      }
      __syncthreads();
      gn = tk[(it + 1) & 1];
      if (gn < ntiles) fetch(gn);
    }
    if (threadIdx.x < 32) {
      if (!PF && threadIdx.x == 0) publish_agg<T, PACK>(st, g, total);
      const T pre = look_back<T, PACK, NS, LBW, CNT, D0>(st, g, total);
      if (threadIdx.x == 0) carry = pre;
    }
    __syncthreads();
    before += carry;
#pragma unroll
    for (int m = 0; m < ITEMS; ++m) s[pad(threadIdx.x * ITEMS + m)] = before + r[m];
    __syncthreads();
    uint4 *q = reinterpret_cast<uint4 *>(y + g * N);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      T e[4];
#pragma unroll
      for (int m = 0; m < 4; ++m) e[m] = s[pad((k * BLOCK + threadIdx.x) * 4 + m)];
      uint4 o;
      memcpy(&o, e, 16);
      st4<T, CS>(q + k * BLOCK + threadIdx.x, o);
    }
    if (PF) g = gn;
    else if (!PERSIST) break;
    else {
      if (threadIdx.x == 0) tk[0] = (int64_t)atomicAdd(st.ticket, 1ull);
      __syncthreads();
      g = tk[0];
      if (g < ntiles) fetch(g);
    }
    __syncthreads();
  }
}

template <class T, int BLOCK, int ITEMS, int PACK, int PF, int PERSIST, int CS, int NS = 0, int LBW = 1, int CNT = 0,
          int MINB = 0, int D0 = 0>
void run_cfg(const void *x, void *y, int64_t n, void *ws, cudaStream_t s, bool) {
  constexpr int N = BLOCK * ITEMS;
  const int64_t nt = n / N;
  St st;
  char *c = (char *)ws;
  st.ticket = (unsigned long long *)c;
  st.word = (unsigned long long *)(c + 256);
  st.flags = (int *)(c + 256);
  st.agg = c + 256 + 8 * nt;
  st.inc = c + 256 + 16 * nt;
  st.cnt = (unsigned long long *)(c + 64);
  CK(cudaMemsetAsync(ws, 0, 256 + 8 * nt, s));
  static int grid = 0;
  const auto k = scan_k<T, BLOCK, ITEMS, PACK, PF, PERSIST, CS, NS, LBW, CNT, MINB, D0>;
  if (!grid) {
    int per = 0, sms = 0, dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, BLOCK, 0));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, k));
    grid = per * sms;
    printf("      (%d blocks/SM, %d registers, %d B local)\n", per, fa.numRegs, (int)fa.localSizeBytes);
  }
  /* not persistent: a block per tile (still by ticket, so predecessors are running or done) */
  const int64_t gr = PERSIST ? std::min<int64_t>(grid, nt) : nt;
  k<<<(unsigned)gr, BLOCK, 0, s>>>((const T *)x, (T *)y, nt, st);
  CK(cudaGetLastError());
}

// ---------------------------------------------------------------- PROBE4: the next tile's loads in flight (cp.async)
/* A persistent block keeps two tile buffers in shared memory. After publishing tile g's aggregate it takes its
 * next ticket and issues that tile's loads with cp.async (16 bytes a thread at a time, no registers held), then
 * looks back for g and stores it: the next tile's loads are in flight through the look-back and the store.
 * Buffers are in 16-byte chunks with one chunk of padding per 8 (phys), so that a thread's ITEMS/4 consecutive
 * chunks (the thread-blocked scan) and the striped chunks (loads and stores) are both conflict-free. */
__device__ __forceinline__ int phys(int c) { return c + (c >> 3); }
__device__ __forceinline__ void cp16(void *smem, const void *g) {
  const unsigned a = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a), "l"(g) : "memory");
}

template <class T, int BLOCK, int ITEMS, int LBW, int CNT, int CS>
__global__ void __launch_bounds__(BLOCK) scan_cp(const T *__restrict__ x, T *__restrict__ y, int64_t ntiles, St st) {
  constexpr int N = BLOCK * ITEMS, C = N / 4, PC = C + C / 8, CPT = ITEMS / 4, NW = BLOCK / 32;
  extern __shared__ uint4 sm[]; /* 2 * PC chunks */
  __shared__ T wsum[NW];
  __shared__ T carry;
  __shared__ int64_t tk;
  auto issue = [&](int64_t g, uint4 *buf) {
    const uint4 *p = reinterpret_cast<const uint4 *>(x + g * N);
#pragma unroll
    for (int k = 0; k < CPT; ++k) {
      const int c = k * BLOCK + threadIdx.x;
      cp16(buf + phys(c), p + c);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  if (threadIdx.x == 0) tk = (int64_t)atomicAdd(st.ticket, 1ull);
  __syncthreads();
  int64_t g = tk;
  if (g < ntiles) issue(g, sm);
  int cur = 0;
  while (g < ntiles) {
    uint4 *b = sm + cur * PC;
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncthreads();
    T r[ITEMS];
#pragma unroll
    for (int k = 0; k < CPT; ++k) {
      const uint4 q = b[phys(threadIdx.x * CPT + k)];
      memcpy(&r[4 * k], &q, 16);
    }
    T before, total;
    block_scan_regs<T, ITEMS, NW>(r, wsum, before, total);
    if (threadIdx.x == 0) {
      publish_agg<T, 1>(st, g, total);
      tk = (int64_t)atomicAdd(st.ticket, 1ull);
    }
    __syncthreads();
    const int64_t gn = tk;
    if (gn < ntiles) issue(gn, sm + (cur ^ 1) * PC);
    if (threadIdx.x < 32) {
      const T pre = look_back<T, 1, 0, LBW, CNT>(st, g, total);
      if (threadIdx.x == 0) carry = pre;
    }
    __syncthreads();
    before += carry;
#pragma unroll
    for (int k = 0; k < CPT; ++k) {
      T e[4];
#pragma unroll
      for (int m = 0; m < 4; ++m) e[m] = before + r[4 * k + m];
      memcpy(&b[phys(threadIdx.x * CPT + k)], e, 16);
    }
    __syncthreads();
    uint4 *q = reinterpret_cast<uint4 *>(y + g * N);
#pragma unroll
    for (int k = 0; k < CPT; ++k) {
      const int c = k * BLOCK + threadIdx.x;
      st4<T, CS>(q + c, b[phys(c)]);
    }
    g = gn;
    cur ^= 1;
  }
}

template <class T, int BLOCK, int ITEMS, int LBW, int CNT = 0, int CS = 0>
void run_cp(const void *x, void *y, int64_t n, void *ws, cudaStream_t s, bool) {
  constexpr int N = BLOCK * ITEMS, C = N / 4, PC = C + C / 8;
  constexpr size_t smem = 2 * PC * 16;
  const int64_t nt = n / N;
  St st;
  char *c = (char *)ws;
  st.ticket = (unsigned long long *)c;
  st.word = (unsigned long long *)(c + 256);
  st.cnt = (unsigned long long *)(c + 64);
  CK(cudaMemsetAsync(ws, 0, 256 + 8 * nt, s));
  static int grid = 0;
  const auto k = scan_cp<T, BLOCK, ITEMS, LBW, CNT, CS>;
  if (!grid) {
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per = 0, sms = 0, dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, BLOCK, smem));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, k));
    grid = per * sms;
    printf("      (%d blocks/SM, %d registers, %zu B dynamic smem)\n", per, fa.numRegs, smem);
  }
  k<<<(unsigned)std::min<int64_t>(grid, nt), BLOCK, smem, s>>>((const T *)x, (T *)y, nt, st);
  CK(cudaGetLastError());
}

template <class T> std::vector<void (*)(const void *, void *, int64_t, void *, cudaStream_t, bool)> fns() {
  if (getenv("PROBE6")) /* the delays swept on the best tile of PROBE5 (B256 I32, streaming) */
    return {run_cfg<T, 256, 32, 1, 0, 0, 1, 688, 1, 0, 0, 1140>,  run_cfg<T, 256, 32, 1, 0, 0, 1, 688, 1, 0, 0, 800>,
            run_cfg<T, 256, 32, 1, 0, 0, 1, 688, 1, 0, 0, 1600>,  run_cfg<T, 256, 32, 1, 0, 0, 1, 688, 1, 0, 0, 2200>,
            run_cfg<T, 256, 32, 1, 0, 0, 1, 688, 1, 0, 0, 3000>,  run_cfg<T, 256, 32, 1, 0, 0, 1, 344, 1, 0, 0, 1140>,
            run_cfg<T, 256, 32, 1, 0, 0, 1, 1376, 1, 0, 0, 1140>, run_cfg<T, 256, 32, 1, 0, 0, 1, 1000, 1, 0, 0, 1600>,
            run_cfg<T, 256, 16, 1, 0, 0, 1, 688, 1, 0, 4, 1600>,  run_cfg<T, 128, 32, 1, 0, 0, 1, 688, 1, 0, 0, 1600>,
            run_cfg<T, 256, 32, 1, 0, 0, 1, 688, 4, 0, 0, 1140>,  run_cfg<T, 256, 32, 1, 0, 0, 1, 1376, 1, 0, 0, 2200>,
            run_cfg<T, 256, 32, 1, 0, 0, 1, 688, 1, 1, 0, 1600>,  run_cfg<T, 256, 32, 1, 0, 0, 1, 2000, 1, 0, 0, 1600>};
  if (getenv("PROBE5")) /* CUB's sm90 f32 tuning: 128 threads x 24 items, L2 write latency 1140 ns, delay 688 ns */
    return {run_cfg<T, 256, 32, 1, 0, 0, 1>,                       run_cfg<T, 128, 24, 1, 0, 0, 1, 688, 1, 0, 0, 1140>,
            run_cfg<T, 128, 24, 1, 0, 0, 1>,                       run_cfg<T, 128, 24, 1, 0, 0, 1, 688, 1, 0, 8, 1140>,
            run_cfg<T, 256, 24, 1, 0, 0, 1, 688, 1, 0, 0, 1140>,   run_cfg<T, 128, 32, 1, 0, 0, 1, 688, 1, 0, 0, 1140>,
            run_cfg<T, 256, 32, 1, 0, 0, 1, 688, 1, 0, 0, 1140>,   run_cfg<T, 128, 16, 1, 0, 0, 1, 688, 1, 0, 10, 1140>,
            run_cfg<T, 256, 32, 1, 0, 0, 1, 0, 1, 0, 0, 600>,      run_cfg<T, 128, 24, 1, 0, 0, 1, 300, 1, 0, 0, 600>,
            run_cfg<T, 128, 24, 1, 0, 0, 1, 688, 1, 1, 0, 1140>,   run_cfg<T, 256, 16, 1, 0, 0, 1, 688, 1, 0, 4, 1140>,
            run_cfg<T, 128, 24, 1, 0, 0, 1, 688, 1, 0, 6, 1140>,   run_cfg<T, 256, 24, 1, 0, 0, 1, 688, 1, 0, 4, 1140>};
  if (getenv("PROBE4"))
    return {run_cfg<T, 256, 32, 1, 0, 0, 0, 0, 1, 1>, run_cfg<T, 256, 32, 1, 0, 0, 0, 0, 1>,
            run_cfg<T, 256, 32, 1, 0, 0, 0, 0, 4, 1>, run_cfg<T, 256, 32, 1, 0, 0, 0, 0, 4>,
            run_cfg<T, 256, 32, 1, 0, 0, 0, 0, 8>,    run_cfg<T, 256, 16, 1, 0, 0, 0, 0, 4>,
            run_cfg<T, 256, 32, 1, 0, 0, 1, 0, 4>,    run_cp<T, 256, 32, 1, 1>,
            run_cp<T, 256, 32, 4, 1>,                 run_cp<T, 256, 32, 4>,
            run_cp<T, 256, 16, 4>,                    run_cp<T, 256, 32, 4, 0, 1>,
            run_cp<T, 512, 16, 4>,                    run_cp<T, 128, 32, 4>,
            run_cp<T, 256, 16, 8, 1>,                 run_cp<T, 256, 32, 8>};
  if (getenv("PROBE3"))
    return {run_cfg<T, 256, 32, 1, 0, 1, 0>,     run_cfg<T, 256, 32, 1, 0, 0, 0>,    run_cfg<T, 256, 32, 1, 0, 0, 0, 32>,
            run_cfg<T, 256, 16, 1, 0, 0, 0, 32>, run_cfg<T, 128, 32, 1, 0, 0, 0>,    run_cfg<T, 256, 32, 1, 0, 0, 1>,
            run_cfg<T, 256, 32, 1, 0, 1, 0, 32>, run_cfg<T, 128, 32, 1, 0, 0, 0, 32>, run_cfg<T, 256, 32, 1, 0, 0, 1, 32>};
  return {run_cfg<T, 256, 16, 0, 0, 1, 0>, run_cfg<T, 256, 16, 1, 0, 1, 0>, run_cfg<T, 256, 16, 1, 0, 0, 0>,
          run_cfg<T, 256, 16, 1, 1, 1, 0>, run_cfg<T, 256, 16, 1, 0, 1, 1>, run_cfg<T, 256, 16, 1, 1, 1, 1>,
          run_cfg<T, 256, 32, 1, 0, 1, 0>, run_cfg<T, 256, 24, 1, 0, 1, 0>, run_cfg<T, 512, 16, 1, 0, 1, 0>,
          run_cfg<T, 512, 8, 1, 0, 1, 0>,  run_cfg<T, 128, 16, 1, 0, 1, 0>, run_cfg<T, 1024, 8, 1, 0, 1, 0>,
          run_cfg<T, 256, 8, 1, 0, 1, 0>,  run_cfg<T, 512, 8, 1, 1, 1, 0>,  run_cfg<T, 128, 32, 1, 1, 1, 0>,
          run_cfg<T, 256, 24, 1, 1, 1, 0>};
}
static const char *names2[] = {"B256 I16 pack0 (rung 6)", "B256 I16", "B256 I16 one tile/block", "B256 I16 pf",
                               "B256 I16 cs", "B256 I16 pf cs", "B256 I32", "B256 I24", "B512 I16", "B512 I8", "B128 I16",
                               "B1024 I8", "B256 I8", "B512 I8 pf", "B128 I32 pf", "B256 I24 pf"};
static const char *names3[] = {"B256 I32", "B256 I32 one tile/block", "B256 I32 one tile ns32", "B256 I16 one tile ns32",
                               "B128 I32 one tile", "B256 I32 one tile cs", "B256 I32 ns32", "B128 I32 one tile ns32",
                               "B256 I32 one tile cs ns32"};
static const char *names4[] = {"B256 I32 one tile (rung 6) cnt", "B256 I32 one tile (rung 6)", "B256 I32 one tile lbw4 cnt",
                               "B256 I32 one tile lbw4", "B256 I32 one tile lbw8", "B256 I16 one tile lbw4",
                               "B256 I32 one tile lbw4 cs", "cp B256 I32 lbw1 cnt", "cp B256 I32 lbw4 cnt",
                               "cp B256 I32 lbw4", "cp B256 I16 lbw4", "cp B256 I32 lbw4 cs", "cp B512 I16 lbw4",
                               "cp B128 I32 lbw4", "cp B256 I16 lbw8 cnt", "cp B256 I32 lbw8"};
static const char *names5[] = {"B256 I32 cs (rung 6)", "B128 I24 cs d1140 ns688 (CUB's)", "B128 I24 cs",
                               "B128 I24 cs d1140 ns688 min8", "B256 I24 cs d1140 ns688", "B128 I32 cs d1140 ns688",
                               "B256 I32 cs d1140 ns688", "B128 I16 cs d1140 ns688 min10", "B256 I32 cs d600",
                               "B128 I24 cs d600 ns300", "B128 I24 cs d1140 ns688 cnt", "B256 I16 cs d1140 ns688 min4",
                               "B128 I24 cs d1140 ns688 min6", "B256 I24 cs d1140 ns688 min4"};
static const char *names6[] = {"d1140 ns688", "d800 ns688", "d1600 ns688", "d2200 ns688", "d3000 ns688",
                               "d1140 ns344", "d1140 ns1376", "d1600 ns1000", "B256 I16 min4 d1600 ns688",
                               "B128 I32 d1600 ns688", "d1140 ns688 lbw4", "d2200 ns1376", "d1600 ns688 cnt",
                               "d1600 ns2000"};
static const char **names = names2;


int main(int argc, char **argv) {
  const int lg = argc > 1 ? atoi(argv[1]) : 28;
  if (getenv("PROBE3")) names = names3;
  if (getenv("PROBE4")) names = names4;
  if (getenv("PROBE5")) names = names5;
  if (getenv("PROBE6")) names = names6;
  /* PROBE5: n = 3 * 2^(lg - 2) (2^28 -> 201326592), a whole number of tiles of 3072, 6144, 4096 or 8192 */
  const int64_t n = getenv("PROBE5") || getenv("PROBE6") ? (int64_t)3 << (lg - 2) : (int64_t)1 << lg;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  cudaDeviceProp pr;
  CK(cudaGetDeviceProperties(&pr, 0));
  printf("scan look-back probe on %s, n = %lld\n", pr.name, (long long)n);
  void *x, *y, *ref, *ws;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&y, n * 4));
  CK(cudaMalloc(&ref, n * 4));
  CK(cudaMalloc(&ws, 256 + 16 * (n / 1024 + 1)));
  void *cubws = nullptr;
  size_t cubb = 0;
  CK(cub::DeviceScan::InclusiveSum(nullptr, cubb, (float *)x, (float *)y, n, s));
  CK(cudaMalloc(&cubws, cubb));
  std::vector<int> h(n), hy(n), hr(n);
  srand(7);
  for (int64_t i = 0; i < n; ++i) h[i] = rand() % 2001 - 1000;
  auto fs_i = fns<int>();
  auto fs_f = fns<float>();
  /* i32: bit for bit against CUB (sums wrap mod 2^32 alike) */
  CK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cub::DeviceScan::InclusiveSum(cubws, cubb, (int *)x, (int *)ref, n, s));
  CK(cudaMemcpy(hr.data(), ref, n * 4, cudaMemcpyDeviceToHost));
  bool ok_i[32];
  for (size_t c = 0; c < fs_i.size(); ++c) {
    CK(cudaMemset(y, 0xff, n * 4));
    fs_i[c](x, y, n, ws, s, true);
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(hy.data(), y, n * 4, cudaMemcpyDeviceToHost));
    ok_i[c] = memcmp(hy.data(), hr.data(), n * 4) == 0;
  }
  /* f32 data: uniform [0, 1) */
  std::vector<float> hf(n), hfy(n), hfr(n);
  for (int64_t i = 0; i < n; ++i) hf[i] = (float)(rand() & 0xffff) / 65536.0f;
  CK(cudaMemcpy(x, hf.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cub::DeviceScan::InclusiveSum(cubws, cubb, (float *)x, (float *)ref, n, s));
  CK(cudaMemcpy(hfr.data(), ref, n * 4, cudaMemcpyDeviceToHost));
  const float t_cub = probe_ms([&] { CK(cub::DeviceScan::InclusiveSum(cubws, cubb, (float *)x, (float *)y, n, s)); }, s);
  const float t_cpy = probe_ms([&] { CK(cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice, s)); }, s);
  const double gb = 2.0 * n * 4 / 1e9;
  printf("  %-36s %8.3f ms %7.1f GB/s\n", "memcpy", t_cpy, gb / t_cpy * 1e3);
  printf("  %-36s %8.3f ms %7.1f GB/s  %5.1f%% memcpy\n", "CUB InclusiveSum", t_cub, gb / t_cub * 1e3, 100 * t_cpy / t_cub);
  for (size_t c = 0; c < fs_f.size(); ++c) {
    CK(cudaMemset(y, 0xff, n * 4));
    fs_f[c](x, y, n, ws, s, true);
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(hfy.data(), y, n * 4, cudaMemcpyDeviceToHost));
    unsigned long long cnt[3];
    CK(cudaMemcpy(cnt, (char *)ws + 64, 24, cudaMemcpyDeviceToHost));
    if (cnt[2]) printf("      (look-back steps %.2f a tile, zero-flag re-polls %.2f a tile, over %llu tiles)\n",
                       (double)cnt[0] / cnt[2], (double)cnt[1] / cnt[2], cnt[2]);
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) worst = std::max(worst, (double)fabsf(hfy[i] - hfr[i]) / (fabsf(hfr[i]) + 1.0));
    const float t = probe_ms([&] { fs_f[c](x, y, n, ws, s, false); }, s);
    printf("  %-36s %8.3f ms %7.1f GB/s  %5.1f%% memcpy  %5.1f%% CUB   i32 %s, f32 rel %.1e%s\n", names[c], t,
           gb / t * 1e3, 100 * t_cpy / t, 100 * t_cub / t, ok_i[c] ? "exact" : "DIFFERS", worst,
           worst < 1e-4 ? "" : " BAD");
  }
  return 0;
}
