/*
 * 03_ring.cu — all-reduce, step 3: ring reduce-scatter + all-gather with peer copies (NCCL's ring, by hand).
 *
 * Idea: split buf into n chunks and pass them around the ring 0 -> 1 -> ... -> n-1 -> 0. Reduce-scatter: in
 * step s = 0..n-2 device i sends chunk (i - s) mod n to device i+1, which combines it into its own copy of that
 * chunk (buf[i+1] chunk = op(partial, own)); after n-1 steps device i holds chunk (i + 1) mod n reduced over all
 * devices (AVG divides at that last combine). All-gather: in step s = 0..n-2 device i sends chunk (i + 1 - s)
 * mod n, fully reduced, to device i+1, which keeps it. Every device sends and receives 2 (n-1)/n x count
 * elements, on its own links, all links busy at once: the bus bandwidth of an all-reduce (algbw x 2 (n-1)/n)
 * equals the link bandwidth, independent of n. That is why NCCL uses it for large messages.
 * Changed from step 2: each device reads 2 (n-1)/n x count elements over NVLink instead of (n-1) x count, with
 * copy engines (cudaMemcpyPeerAsync pushed on the sender's stream into the receiver's scratch, at the chunk's
 * own offset) instead of SM loads; the price is 2 (n-1) dependent steps, each a copy, an event and (in the
 * reduce-scatter) a combine kernel, so small messages pay 2 (n-1) latencies where step 2 pays one.
 * NCCL does more: it cuts each chunk into slices so that step s+1 of one slice overlaps step s of the next
 * (here a step waits for the whole chunk), and receives and reduces in one kernel (here the combine reads the
 * landed chunk back from scratch).
 * Ordering: device i's stream writes only into device i+1's memory (scratch in the reduce-scatter, buf in the
 * all-gather), so it first waits for device i+1's start (the caller's earlier work on stream i+1), and before
 * the all-gather for the end of device i+1's reduce-scatter (its last reads of buf[i+1]); each step's receiver
 * waits for the sender's copy (event recorded after it on the sender's stream). The last all-gather step's wait
 * puts every write into buf[i] before the caller's later work on stream i. Each scratch chunk is written once.
 * Chunks: ceil(count / n) rounded up to a multiple of 16 bytes (so every chunk of a 16-byte aligned buffer is
 * aligned for the combine's vectors); chunk c covers [c x chunk, min((c+1) x chunk, count)), so the last chunks
 * may be shorter or empty (count < n x 16 bytes): an empty chunk's copy and combine are skipped, its events kept.
 * Launch: per device and step one cudaMemcpyPeerAsync; per reduce-scatter step one combine kernel per device
 * (ar_combine_kernel: 256 threads, grid-stride, <= 8 blocks per SM, 16-byte accesses when aligned).
 * Rounding: f16/bf16 partial results are stored rounded after each hop (n-1 roundings), in ring order
 * (chunk c is combined from device c+1's value on: op order differs per chunk, which only rounding can see).
 * Limits: none beyond ck_allreduce_supports.
 * Operands: ck_ar_desc (allreduce.h): buf[i] in place, scratch[i] for the chunks device i receives.
 */
#include "ar_common.cuh"

/* Chunk c of the split: elements [off(c), off(c) + len(c)). */
struct ring_split {
  int64_t chunk, count;
  int64_t off(int c) const { return (int64_t)c * chunk < count ? (int64_t)c * chunk : count; }
  int64_t len(int c) const {
    const int64_t e = off(c) + chunk;
    return (e < count ? e : count) - off(c);
  }
};

static inline int ring_mod(int a, int n) { return ((a % n) + n) % n; }

template <int DT, int OP> static int ring_run(const ar_ctx &c) {
  const ck_ar_desc *d = c.d;
  const int n = d->n;
  const size_t es = c.esize;
  const int64_t V = 16 / (int64_t)es;
  ring_split sp;
  sp.count = d->count;
  sp.chunk = ((d->count + n - 1) / n + V - 1) / V * V;
  // device i writes into device i+1: after device i+1's earlier work
  for (int i = 0; i < n; ++i) AR_TRYI(ar_record(c, i));
  for (int i = 0; i < n; ++i) AR_TRYI(ar_wait(c, i, c.next(i)));
  // reduce-scatter
  for (int s = 0; s < n - 1; ++s) {
    for (int i = 0; i < n; ++i) {
      const int ch = ring_mod(i - s, n), r = c.next(i);
      const int64_t off = sp.off(ch), len = sp.len(ch);
      AR_TRY(cudaSetDevice(d->device[i]));
      if (len > 0)
        AR_TRY(cudaMemcpyPeerAsync(c.scratch(r) + off * es, d->device[r], c.buf(i) + off * es, d->device[i],
                                   (size_t)len * es, c.stream(i)));
      AR_TRYI(ar_record(c, i));
    }
    for (int i = 0; i < n; ++i) {
      const int ch = ring_mod(i - s, n), r = c.next(i);
      const int64_t off = sp.off(ch), len = sp.len(ch);
      AR_TRYI(ar_wait(c, r, i)); // leaves device r current
      AR_TRYI((ar_launch_combine<DT, OP>(c, r, c.buf(r) + off * es, c.scratch(r) + off * es, len,
                                         s == n - 2 ? n : 1)));
    }
  }
  // the all-gather writes into buf[i+1]: after device i+1's reduce-scatter has read it
  for (int i = 0; i < n; ++i) AR_TRYI(ar_record(c, i));
  for (int i = 0; i < n; ++i) AR_TRYI(ar_wait(c, i, c.next(i)));
  // all-gather
  for (int s = 0; s < n - 1; ++s) {
    for (int i = 0; i < n; ++i) {
      const int ch = ring_mod(i + 1 - s, n), r = c.next(i);
      const int64_t off = sp.off(ch), len = sp.len(ch);
      AR_TRY(cudaSetDevice(d->device[i]));
      if (len > 0)
        AR_TRY(cudaMemcpyPeerAsync(c.buf(r) + off * es, d->device[r], c.buf(i) + off * es, d->device[i],
                                   (size_t)len * es, c.stream(i)));
      AR_TRYI(ar_record(c, i));
    }
    for (int i = 0; i < n; ++i) AR_TRYI(ar_wait(c, c.next(i), i));
  }
  return 0;
}

CK_AR_LAUNCHER(ring, ring_run)
