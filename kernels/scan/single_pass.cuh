/*
 * single_pass.cuh — what the two single-pass rungs (05_chained, 06_lookback) share: tiles handed out in launch
 * order by an atomic ticket (so a tile's predecessors are always running or done: no deadlock, whatever the
 * scheduler does), and per-tile status in global memory. Two layouts:
 *   Status (05_chained): flags[g] (0 nothing yet, 1 the tile's aggregate is in agg[g], 2 its
 *     inclusive prefix is in inc[g]), written value-then-flag with a fence between and read flag-then-value
 *     (volatile loads, which bypass L1): [ticket | flags[total] | agg[total * width] | inc[total * width]], ticket
 *     and flags zeroed per launch (status_zero_bytes). width is how many values a tile publishes (one flag
 *     covers the tile's whole vector).
 *   Words (06_lookback; 10_cols_lookback, a word per column of a tile): flag and value in one word (8 bytes for a 4-byte accumulator, 16 for an 8-byte one),
 *     stored and loaded whole, so a look-back step is one load and publishing needs no fence: [ticket |
 *     words[total]], all zeroed per launch. This is what took rung 6 from 1.46-1.54 ms to ~1.0 ms on 2^28 f32
 *     (H100, lab/scan_lookback_probe.cu): the fence and the second dependent load were most of a tile's wait.
 *     The 16-byte word relies on an aligned 16-byte access being one transaction: a property of the hardware
 *     (sm_70 and later, sm_90a here), not a guarantee of the PTX memory model, which treats a vector access as
 *     separate accesses; CUB's ScanTileState relies on the same for 8-byte values (its TxnWord). A 4-byte
 *     accumulator's 8-byte word is single-copy atomic by the model.
 * A prefix policy (Chained, LookBack) names its layout (Prefix::Layout: FlagArrays or PackedWords, each with
 * State<A>, bytes(), zero_bytes() and at()), its tile (Prefix::items<A>() elements a thread) and whether its loads
 * and stores stream (Prefix::stream).
 */
#ifndef CK_SCAN_SINGLE_PASS_CUH
#define CK_SCAN_SINGLE_PASS_CUH

#include "ck_knob.h"
#include "scan_common.cuh"

namespace ckscan {

#define SP_BLOCK 256
/* Elements per thread: 16 (tiles of 4096) by default; a policy may ask for more (Prefix::items<A>). */
#define SP_ITEMS 16

template <class A> __device__ __forceinline__ A ld_volatile(const A *p) { return *(const volatile A *)p; }
template <class A> __device__ __forceinline__ void st_volatile(A *p, A v) { *(volatile A *)p = v; }

template <class A>
struct Status {
  unsigned long long *ticket;
  int *flags;
  A *agg, *inc;
};

/* The workspace layout (8-byte aligned pieces) and its size for `total` tiles of `width` values each; the part
 * to zero before a launch (the ticket and the flags). */
static inline size_t status_zero_bytes(int64_t total) { return 8 + (((size_t)total * sizeof(int) + 7) & ~(size_t)7); }
template <class A> static size_t status_bytes(int64_t total, int64_t width = 1) {
  return status_zero_bytes(total) + 2 * (size_t)total * (size_t)width * sizeof(A);
}
template <class A> static Status<A> status_at(void *p, int64_t total, int64_t width = 1) {
  Status<A> st;
  char *c = (char *)p;
  st.ticket = (unsigned long long *)c;
  st.flags = (int *)(c + 8);
  st.agg = (A *)(c + status_zero_bytes(total));
  st.inc = st.agg + total * width;
  return st;
}

/* The flag-and-value arrays as a prefix policy's layout (05_chained). */
struct FlagArrays {
  template <class A> using State = Status<A>;
  template <class A> static size_t bytes(int64_t total) { return status_bytes<A>(total); }
  template <class A> static size_t zero_bytes(int64_t total) { return status_zero_bytes(total); }
  template <class A> static Status<A> at(void *p, int64_t total) { return status_at<A>(p, total); }
};

// ---------------------------------------------------------------- packed status words (06_lookback)

template <class A> struct WordOf {
  static_assert(sizeof(A) == 4 || sizeof(A) == 8, "scan accumulators are 4 or 8 bytes");
  using type = std::conditional_t<sizeof(A) == 4, unsigned long long, ulonglong2>;
};

template <class A>
struct Words {
  using W = typename WordOf<A>::type;
  unsigned long long *ticket;
  W *w;
};

/* Tile g's word <- (flag, v), one store. */
template <class A> __device__ __forceinline__ void word_put(const Words<A> &st, int64_t g, unsigned flag, A v) {
  if constexpr (sizeof(A) == 4) {
    unsigned bits;
    memcpy(&bits, &v, 4);
    const unsigned long long w = ((unsigned long long)flag << 32) | bits;
    asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(st.w + g), "l"(w) : "memory");
  } else {
    unsigned long long bits;
    memcpy(&bits, &v, 8);
    asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(st.w + g), "l"((unsigned long long)flag), "l"(bits)
                 : "memory");
  }
}
/* Tile g's word, one load: its flag (0 while nothing is published), its value in v. */
template <class A> __device__ __forceinline__ unsigned word_get(const Words<A> &st, int64_t g, A &v) {
  if constexpr (sizeof(A) == 4) {
    unsigned long long w;
    asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(w) : "l"(st.w + g) : "memory");
    const unsigned bits = (unsigned)w;
    memcpy(&v, &bits, 4);
    return (unsigned)(w >> 32);
  } else {
    unsigned long long f, bits;
    asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(f), "=l"(bits) : "l"(st.w + g) : "memory");
    memcpy(&v, &bits, 8);
    return (unsigned)f;
  }
}

struct PackedWords {
  template <class A> using State = Words<A>;
  template <class A> static size_t bytes(int64_t total) { return 16 + (size_t)total * sizeof(typename Words<A>::W); }
  template <class A> static size_t zero_bytes(int64_t total) { return bytes<A>(total); }
  template <class A> static Words<A> at(void *p, int64_t total) {
    Words<A> st;
    st.ticket = (unsigned long long *)p;
    st.w = (typename Words<A>::W *)((char *)p + 16); /* 16-byte aligned: the allocator's blocks are */
    return st;
  }
};

/* The look-back's sleeps, in ns (Merrill and Garland's look-back as CUB's sm90 tuning runs it): `first` before a
 * tile's first read of its predecessors' words, `poll` before each re-read of a word still empty. Polling at once
 * keeps the waiting warps issuing loads to the few lines that hold the newest words, against the other tiles' loads
 * and stores; asleep, the warp leaves the SM to the blocks that are loading. On an H100 (3 x 2^26 f32, rung 6's
 * tiles, lab/scan_lookback_probe.cu PROBE5 and PROBE6, one run each) polling at once ran at 74.8% of memcpy;
 * sleeping first 800, 1140, 1600, 2200 and 3000 ns (then 688 between re-polls) at 81.6, 84.7, 86.1, 88.8 and
 * 87.4%; the re-poll sleep mattered little (344-2000 ns: within 1%). CUB's sm90 f32 tuning sleeps 1140 and 688 (and
 * ran at 80.5% in the same run). CUB sleeps only in grids of at least 500 blocks; our tiles are 2.7x CUB's, and
 * the ladder (4-GPU host's H100, b0ac3c1, sleeping from 500 tiles) ran 2^22 f32 (512 tiles) in 0.0282 ms against
 * 0.0245 polling (session 11's run) while 2^24 (2048 tiles) gained (0.0699 -> 0.0648): so from 1024 tiles (kDelayGrid;
 * below, the wait is latency, not contention). CUKERN_SCAN_DELAY and CUKERN_SCAN_POLL set the two for rung 6 (0: no sleep),
 * whatever the grid, for lab/ sweeps and the sanitizer runs on small cases. */
struct Delay {
  unsigned first, poll;
};
constexpr int64_t kDelayGrid = 1024;
/* The device's peak memory bandwidth in GB/s (memory clock x bus width, two transfers a clock), once per device; 0
 * when the driver does not say. The look-back sleeps were tuned on an H100 (SXM: 3352 GB/s); a tile's load and
 * store take less time on faster memory, and so should the waits: rung 6 scales its sleeps by 3352 / this.
 * Measured on an H200 (x4 of session 14, 2^28 f32, one process per setting): 2200/688 ns 0.7310 ms, 1500/500
 * 0.7248, 1100/350 0.7210, 800/250 0.7557; CUB 0.6914 in session 13. */
static inline double mem_gbps(int device) {
  static ck_devcache cache; /* MB/s */
  int &v = cache.v[device];
  if (v == 0) {
    int khz = 0, bits = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess || khz <= 0 || bits <= 0)
      v = -1;
    else
      v = (int)(2.0 * khz * 1e3 * (bits / 8) / 1e6);
  }
  return v > 0 ? v / 1e3 : 0.0;
}
/* H100-tuned sleeps (first, poll) scaled to this device's bandwidth (within 1/2 .. 2x of them). */
static inline Delay scaled_delay(int device, unsigned first, unsigned poll) {
  const double bw = mem_gbps(device);
  double f = bw > 0 ? 3352.0 / bw : 1.0;
  f = f < 0.5 ? 0.5 : f > 2.0 ? 2.0 : f;
  return {(unsigned)(first * f + 0.5), (unsigned)(poll * f + 0.5)};
}
static inline Delay look_back_delay(int64_t tiles, const char *first_knob, const char *poll_knob, unsigned first,
                                    unsigned poll) {
  const bool big = tiles >= kDelayGrid; /* a knob that is set applies whatever the grid (the sanitizer runs use it) */
  return {(unsigned)ck_knob(first_knob, 0, 100000, big ? (int)first : 0),
          (unsigned)ck_knob(poll_knob, 0, 100000, big ? (int)poll : 0)};
}
__device__ __forceinline__ void sleep_ns(unsigned ns) {
  if (ns) __nanosleep(ns);
}

/* The next tile for this block (all threads get it). */
__device__ __forceinline__ int64_t next_tile(unsigned long long *ticket, int64_t *sh) {
  if (threadIdx.x == 0) *sh = (int64_t)atomicAdd(ticket, 1ull);
  __syncthreads();
  return *sh;
}

/* The single-pass kernel: each ticket's tile is loaded and scanned locally, then Prefix::get (run by the first
 * warp, lane 0's result counts) finds everything before the tile and publishes the tile's own status; the tile
 * is written after its carry. Prefix is what steps 5 and 6 differ in (05_chained.cu, 06_lookback.cu): its
 * layout (Prefix::Layout), its tile (Prefix::items<acc_t>() elements a thread, Prefix::stream: streaming loads
 * and stores) and its wait. Tiles of 8192 (ITEMS 32) are capped at 80 registers, three blocks an SM (uncapped,
 * rung 6 took 127 and ran 2^28 f32 in 1.159 ms against 0.986 capped, H100); smaller tiles get no minimum (0: as
 * if none were given; a minimum of 1 let ptxas take 72 registers for the chained rung's 48). */
template <class P, class Prefix, int ITEMS>
__global__ void __launch_bounds__(SP_BLOCK, ITEMS >= 32 ? 3 : 0) scan_single_pass_kernel(
    const typename P::in_t *__restrict__ x, typename P::out_t *out, int64_t outer, int64_t len, int64_t ntiles,
    int exclusive, typename Prefix::Layout::template State<typename P::acc_t> st, Delay dl) {
  using T = Tile<P, SP_BLOCK, ITEMS, Prefix::stream>;
  using acc_t = typename P::acc_t;
  __shared__ acc_t s[T::SMEM];
  __shared__ acc_t wsum[SP_BLOCK / 32];
  __shared__ acc_t carry;
  __shared__ int64_t gsh;
  for (;;) {
    const int64_t g = next_tile(st.ticket, &gsh);
    if (g >= outer * ntiles) break;
    const int64_t row = g / ntiles, t = g % ntiles;
    T::load(x + row * len, t * T::N, len, s);
    __syncthreads();
    acc_t r[ITEMS];
    const acc_t mine = T::thread_scan(s, r);
    acc_t total;
    const acc_t ex = block_excl<P, SP_BLOCK>(mine, total, wsum);
    if (threadIdx.x < 32) {
      const acc_t prefix = Prefix::template get<P>(st, g, t, total, dl);
      if (threadIdx.x == 0) carry = prefix;
    }
    __syncthreads();
    T::put_back(s, r, P::combine(carry, ex), exclusive != 0);
    __syncthreads();
    T::store(out + row * len, t * T::N, len, s);
    __syncthreads();
  }
}

/* Launch the single-pass kernel over outer x ntiles tiles with a zeroed status block. */
template <class P, class Prefix>
static int run_single_pass(const ck_env *env, const ck_scan_desc &d) {
  using acc_t = typename P::acc_t;
  using L = typename Prefix::Layout;
  constexpr int items = Prefix::template items<acc_t>();
  const auto kernel = scan_single_pass_kernel<P, Prefix, items>;
  cudaStream_t s = (cudaStream_t)env->stream;
  const int64_t ntiles = cdiv(d.len, (int64_t)SP_BLOCK * items), total = d.outer * ntiles;
  Ws w(env, L::template bytes<acc_t>(total));
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  int err = (int)cudaMemsetAsync(w.p, 0, L::template zero_bytes<acc_t>(total), s);
  if (err) return err;
  ck_note(env, kernel, SP_BLOCK, 0);
  const Delay dl0 = scaled_delay(env->device, 2200, 688);
  kernel<<<grid_for(total), SP_BLOCK, 0, s>>>((const typename P::in_t *)d.x, (typename P::out_t *)d.out, d.outer,
                                              d.len, ntiles, d.exclusive, L::template at<acc_t>(w.p, total),
                                              look_back_delay(total, "CUKERN_SCAN_DELAY", "CUKERN_SCAN_POLL", dl0.first, dl0.poll));
  return (int)cudaGetLastError();
}

} // namespace ckscan

#endif
