/*
 * 02_oneshot.cu — all-reduce, step 2: one shot — every device reads every peer's buffer directly.
 *
 * Idea: with peer access every device can load from every other device's memory through its UVA pointer, over
 * NVLink, from inside a kernel. So each device runs one kernel that, for its share of element indices, loads
 * buf[0..n-1][e] (its own and the n-1 peers'), combines them in device order 0, 1, ..., n-1 in the compute type
 * (f16/bf16 in f32, rounded once at the end; AVG divides once) and writes the full result into its own
 * scratch[i]. No device waits on another's partial result: one kernel, one round of NVLink reads per device,
 * all devices at once, so the latency is about one kernel launch plus one remote read (the rung for small
 * messages). Each device reads (n-1) x count elements over its links, so for large counts it moves (n-1)/2
 * times more bytes per device than the ring (step 3) and loses to it.
 * Changed from step 1: no copies through device 0 and no per-peer round trips; all n devices work at once,
 * each pulling over its own links with SM loads, and every device computes the result instead of receiving it.
 * Ordering: (1) a barrier — every stream records its event and waits for every other stream's, so no device
 * reads a peer's buf before the caller's earlier work on that peer's stream is done; (2) the kernels; (3) a
 * second barrier, since peers are still reading buf[i] until every kernel has finished; (4) each device copies
 * scratch[i] -> buf[i] on its own stream (cudaMemcpyAsync, device to device), which later work on stream i
 * follows.
 * Launch: per device one kernel, 256 threads, grid-stride over 16-byte vectors (16 / size elements each: every
 * load and the store are 16 bytes) when all n bufs and scratch[i] are 16-byte aligned, else element by element;
 * the count % V tail element by element; <= 8 blocks per SM. The peers' pointers travel in the kernel's
 * parameters (64 x 8 bytes).
 * Limits: none beyond ck_allreduce_supports.
 * Operands: ck_ar_desc (allreduce.h): buf[i] in place, scratch[i] as each device's result buffer.
 */
#include "ar_common.cuh"

/* Blocks per SM to plan registers for (ptxas -v, CUDA 13.0, sm_90a): with __launch_bounds__(256) alone ptxas held
 * these kernels to 32 registers and spilled (vector i32 sum/max/min, f32/bf16 avg: 12-28 bytes), 6 blocks still
 * spilled one, 5 (<= 48 registers) none, 4 let them take 64 for nothing. */
#define OS_MIN_BLOCKS 5

// ---------------------------------------------------------------- kernel

template <typename S> struct os_peers {
  const S *p[CK_AR_MAX_DEV];
};

/* out[e] = fin(op(... op(src.p[0][e], src.p[1][e]) ..., src.p[n-1][e])) for e < count. */
template <int DT, int OP, bool VEC>
__global__ void __launch_bounds__(AR_THREADS, OS_MIN_BLOCKS)
    allreduce_oneshot_kernel(const os_peers<typename ar_t<DT>::S> src, int n, typename ar_t<DT>::S *__restrict__ out,
                             int64_t count, int div) {
  typedef ar_t<DT> A;
  typedef typename A::S S;
  typedef typename A::C C;
  constexpr int V = 16 / sizeof(S);
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t e0 = 0;
  if (VEC) {
    const int64_t nv = count / V;
    for (int64_t v = t; v < nv; v += stride) {
      ar_pack<S> x;
      C acc[V];
      x.v = ((const uint4 *)src.p[0])[v];
#pragma unroll
      for (int k = 0; k < V; ++k) acc[k] = A::ld(x.e[k]);
      for (int j = 1; j < n; ++j) {
        x.v = ((const uint4 *)src.p[j])[v];
#pragma unroll
        for (int k = 0; k < V; ++k) acc[k] = ar_op<DT, OP>(acc[k], A::ld(x.e[k]));
      }
#pragma unroll
      for (int k = 0; k < V; ++k) x.e[k] = A::st(ar_fin<DT, OP>(acc[k], div));
      ((uint4 *)out)[v] = x.v;
    }
    e0 = nv * V;
  }
  for (int64_t e = e0 + t; e < count; e += stride) {
    C acc = A::ld(src.p[0][e]);
    for (int j = 1; j < n; ++j) acc = ar_op<DT, OP>(acc, A::ld(src.p[j][e]));
    out[e] = A::st(ar_fin<DT, OP>(acc, div));
  }
}

// ---------------------------------------------------------------- launcher

template <int DT, int OP> static int oneshot_run(const ar_ctx &c) {
  typedef typename ar_t<DT>::S S;
  constexpr int V = 16 / sizeof(S);
  const ck_ar_desc *d = c.d;
  const int n = d->n;
  const size_t bytes = (size_t)d->count * c.esize;
  const int div = OP == CK_AR_AVG ? n : 1;
  os_peers<S> src;
  bool vec = true;
  for (int j = 0; j < CK_AR_MAX_DEV; ++j) src.p[j] = j < n ? (const S *)d->buf[j] : nullptr;
  for (int j = 0; j < n; ++j) vec = vec && ar_aligned16(d->buf[j]);
  // (1) every device's earlier work before any read of its buf
  AR_TRYI(ar_barrier(c));
  // (2) every device computes the whole result into its scratch
  for (int i = 0; i < n; ++i) {
    AR_TRY(cudaSetDevice(d->device[i]));
    S *out = (S *)c.scratch(i);
    const bool v = vec && ar_aligned16(out);
    const unsigned grid = ar_blocks(v ? (d->count + V - 1) / V : d->count, c.sm[i]);
    if (v)
      allreduce_oneshot_kernel<DT, OP, true><<<grid, AR_THREADS, 0, c.stream(i)>>>(src, n, out, d->count, div);
    else
      allreduce_oneshot_kernel<DT, OP, false><<<grid, AR_THREADS, 0, c.stream(i)>>>(src, n, out, d->count, div);
    AR_TRY(cudaGetLastError());
  }
  // (3) no buf is overwritten while a peer may still read it
  AR_TRYI(ar_barrier(c));
  // (4) the result into place
  for (int i = 0; i < n; ++i) {
    AR_TRY(cudaSetDevice(d->device[i]));
    AR_TRY(cudaMemcpyAsync(c.buf(i), c.scratch(i), bytes, cudaMemcpyDeviceToDevice, c.stream(i)));
  }
  return 0;
}

CK_AR_LAUNCHER(oneshot, oneshot_run)
