/*
 * 01_gather.cu — all-reduce, step 1: gather everything to device 0, combine there, broadcast back.
 *
 * Idea: the obvious algorithm. Device 0's stream pulls peer j's buffer into its scratch (cudaMemcpyPeerAsync,
 * one peer at a time), combines it into buf[0] with ar_combine_kernel (buf[0] = op(buf[0], scratch[0]), peers
 * in order 1..n-1, AVG dividing by n at the last one), and when all are in, pushes buf[0] to every peer's buf
 * (cudaMemcpyPeerAsync again). Everything runs on device 0's stream, one transfer after another, and every
 * byte crosses device 0's links twice: time ~ 2 (n-1) count / link bandwidth, growing with n, while the other
 * devices' links and copy engines sit idle. The rungs after it spread that work.
 * Changed from step 0 (NCCL): our own schedule with plain peer copies and one combine kernel.
 * Ordering: every peer's stream records its event and device 0's stream waits for all of them before the first
 * peer read (the caller's earlier work on stream j comes first); after the broadcast device 0's stream records
 * its event and every peer's stream waits for it (the caller's later work on stream j sees the result). Device
 * 0's scratch is reused for each peer: the copy of peer j+1 follows the combine of peer j on the same stream.
 * Launch: per peer, one cudaMemcpyPeerAsync and one combine kernel (256 threads, grid-stride, <= 8 blocks per
 * SM, 16-byte accesses when buf[0] and scratch[0] are 16-byte aligned); then n-1 peer copies.
 * Rounding: f16/bf16 partial results are stored rounded in buf[0] after each peer (n-1 roundings).
 * Limits: none beyond ck_allreduce_supports; only scratch[0] is used.
 * Operands: ck_ar_desc (allreduce.h): buf[i] in place, scratch[0] as the landing buffer.
 */
#include "ar_common.cuh"

template <int DT, int OP> static int gather_run(const ar_ctx &c) {
  const ck_ar_desc *d = c.d;
  const int n = d->n, dev0 = d->device[0];
  const size_t bytes = (size_t)d->count * c.esize;
  // the peers' earlier work first
  for (int j = 1; j < n; ++j) AR_TRYI(ar_record(c, j));
  for (int j = 1; j < n; ++j) AR_TRYI(ar_wait(c, 0, j));
  AR_TRY(cudaSetDevice(dev0));
  // gather and combine, one peer at a time
  for (int j = 1; j < n; ++j) {
    AR_TRY(cudaMemcpyPeerAsync(c.scratch(0), dev0, c.buf(j), d->device[j], bytes, c.stream(0)));
    AR_TRYI((ar_launch_combine<DT, OP>(c, 0, c.buf(0), c.scratch(0), d->count, j == n - 1 ? n : 1)));
  }
  // broadcast
  for (int j = 1; j < n; ++j)
    AR_TRY(cudaMemcpyPeerAsync(c.buf(j), d->device[j], c.buf(0), dev0, bytes, c.stream(0)));
  // the peers' later work after it
  AR_TRYI(ar_record(c, 0));
  for (int j = 1; j < n; ++j) AR_TRYI(ar_wait(c, j, 0));
  return 0;
}

CK_AR_LAUNCHER(gather, gather_run)
