/*
 * batched.cu — the `batched` variant of the elementwise, reduce and matmul ladders: small dense ops queued and
 * run by one kernel launch per batch.
 *
 * Idea: an op on 16 elements needs a few hundred nanoseconds of device time but a whole kernel launch of host
 * time (3.8-4.4 us per bare cudaLaunchKernel on the H100 host, lab/launch_floor.cu), so a script of small
 * ops runs at the launch rate, whatever the kernel. Fewer launches than ops is the only way past that floor
 * (ck.graph does it for a recorded sequence). Here the launcher of a small dense op does not launch: it writes
 * one 64-byte record (pointers, sizes, op, dtypes, scalars) into the context's batch (ck_kernels.h: ck_batch),
 * and ck_batch_flush starts one kernel of one block that runs the records in issue order, with a block barrier
 * between consecutive records (a record may read what the previous one wrote: __syncthreads makes the block's
 * global writes visible to the block, and the loads here are plain coherent loads, never the read-only path).
 * The core (src/core/context.c: ck_flush) flushes before anything else touches the stream, so the device still sees
 * the exact issue order; when the batch is full (CK_BATCH_MAX records) the launcher flushes it itself.
 * Each record computes what the ladders' other variants compute, with the same per-element code: elementwise
 * through ew_math.cuh's elem<> (bitwise the contiguous variant's results), reductions through red_ops.cuh's op
 * types (same NaN, tie and accumulator rules; a block tree for one output, a thread per output otherwise),
 * matmul as one dot product per thread in T with steps 1-3's alpha/beta epilogue.
 * Limits (supports()): dense row-major operands (elementwise: scalars allowed, no broadcast; eye needs its
 * 2-D index), at most CK_BATCH_MAX_ELEMS elements per op, matmul f32/f64 exact with batch 1 and k <= 256.
 * Launch: 1 block of 256 threads per batch; the records are the kernel's parameter (3.6 KB, by value).
 * Changed from the other variants: one launch per up to 56 ops instead of one (or more) per op.
 * Measured (H100, examples/small_ops_bench.lua --torch, 2026-11-24, one run beside PyTorch 2.11): host time per
 * op 0.66-1.86 us batched against 4.5-6.5 us one launch per op, 0.08-0.17x PyTorch's (fill, a + b, add_, the
 * sum of 16 elements, an 8x8 matmul); ptxas -v: 64 registers, 16 bytes of spill stores.
 */
#include <cuda_runtime.h>

#include "../elementwise/ew_math.cuh"
#include "../reduce/red_ops.cuh"

namespace {

constexpr int kThreads = 256;
using Rec = ck_batch_rec;

// ---------------------------------------------------------------- elementwise

template <int OP, typename TO, typename TI> __device__ __forceinline__ void ew_rec(const Rec &r) {
  constexpr int NIN = ckew::arity(OP);
  /* the batch takes f32 f64 i32 f16 bf16 (and bool results): i32 is the one integer, its scalar an i32 value */
  const ckew::Scal s{r.s1, r.s2, ckew::seed_of(r.s1), ckew::seed_of(r.s2), ckew::f2s<int32_t>(r.s1)};
  TO *out = (TO *)r.out;
  const TI *a = (const TI *)r.a, *b = (const TI *)r.b;
  const TI sv = ckew::scalar_of<TI>(s);
  for (int i = threadIdx.x; i < r.n0; i += kThreads) {
    const TI x = NIN >= 1 ? a[i] : TI(0);
    const TI y = (NIN == 2 && r.mode == ckew::BM_ARRAY) ? b[i] : sv;
    out[i] = r.mode == ckew::BM_LEFT ? ckew::elem<OP, TO, TI>(y, x, s, i, 0, 0) : ckew::elem<OP, TO, TI>(x, y, s, i, 0, 0);
  }
}

template <int OP, typename TO, typename TI> __device__ __forceinline__ void ew_valid_rec(const Rec &r) {
  if constexpr (ckew::valid<OP, TO, TI>()) ew_rec<OP, TO, TI>(r);
}

template <int OP, typename TO> __device__ __forceinline__ void ew_out(const Rec &r) {
  if constexpr (OP == CK_EW_COPY || ckew::to_bool(OP)) {
    switch (r.adt) {
    case CK_F32: ew_valid_rec<OP, TO, float>(r); break;
    case CK_F64: ew_valid_rec<OP, TO, double>(r); break;
    case CK_I32: ew_valid_rec<OP, TO, int32_t>(r); break;
    case CK_F16: ew_valid_rec<OP, TO, ck_f16_t>(r); break;
    case CK_BF16: ew_valid_rec<OP, TO, ck_bf16_t>(r); break;
    }
  } else if constexpr (OP != CK_EW_EYE && ckew::valid<OP, TO, TO>()) {
    ew_rec<OP, TO, TO>(r);
  }
}

template <int OP> __device__ __forceinline__ void ew_op(const Rec &r) {
  switch (r.odt) {
  case CK_F32: ew_out<OP, float>(r); break;
  case CK_F64: ew_out<OP, double>(r); break;
  case CK_I32: ew_out<OP, int32_t>(r); break;
  case CK_F16: ew_out<OP, ck_f16_t>(r); break;
  case CK_BF16: ew_out<OP, ck_bf16_t>(r); break;
  case CK_BOOL: ew_out<OP, ckew::b8>(r); break;
  }
}

__device__ void ew_any(const Rec &r) {
  switch (r.op) {
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR) \
  case CK_EW_##ID: ew_op<CK_EW_##ID>(r); break;
#include "elementwise/ew_ops.def"
#undef CK_EW_OP
  }
}

// ---------------------------------------------------------------- reductions

/* x viewed as [outer, len, inner]. One output: the block folds strided elements, then warps, then warp 0's
 * partials (sh: 8 accumulators). More outputs: a thread per output folds its row in order. */
template <class O> __device__ __forceinline__ void red_rec(const Rec &r, unsigned char *sh) {
  using T = typename O::value_t;
  using A = typename O::acc_t;
  const T *x = (const T *)r.a;
  typename O::out_t *out = (typename O::out_t *)r.out;
  int64_t *idx = (int64_t *)r.b;
  const int outer = r.n0, len = r.n1, inner = r.n2, nout = outer * inner;
  if (nout == 1) {
    A acc = O::identity();
    for (int i = threadIdx.x; i < len; i += kThreads) acc = O::combine(acc, O::make(x[i], i));
#pragma unroll
    for (int off = 16; off; off >>= 1) acc = O::combine(acc, ckred::shfl_down(acc, off, 32));
    A *part = reinterpret_cast<A *>(sh);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
      A t = part[0];
      for (int w = 1; w < kThreads / 32; ++w) t = O::combine(t, part[w]);
      O::store(t, out, idx, 0, len);
    }
  } else {
    for (int o = threadIdx.x; o < nout; o += kThreads) {
      const int ob = o / inner, ii = o - ob * inner;
      const T *row = x + (ob * len) * inner + ii;
      A acc = O::identity();
      for (int k = 0; k < len; ++k) acc = O::combine(acc, O::make(row[k * inner], k));
      O::store(acc, out, idx, o, len);
    }
  }
}

template <typename T> __device__ __forceinline__ void red_t(const Rec &r, unsigned char *sh) {
  switch (r.op) { /* one case per row of reduce/reduce_ops.def (the record holds the effective op) */
#define CK_RED_OP(ID, NAME, FAMILY, IDENT, COMBINE, MEAN, EMPTY, MAXLIKE, FLOAT, WITH_IDX)                            \
  case CK_RED_##ID:                                                                                                   \
    if constexpr (!ckred::Row<CK_RED_##ID>::float_only || std::is_floating_point<ckred::wide_t<T>>::value)            \
      red_rec<ckred::Op<T, CK_RED_##ID>>(r, sh);                                                                      \
    break;
#include "../reduce/reduce_ops.def"
#undef CK_RED_OP
  }
}

__device__ void red_any(const Rec &r, unsigned char *sh) {
  switch (r.odt) {
  case CK_F32: red_t<float>(r, sh); break;
  case CK_F64: red_t<double>(r, sh); break;
  case CK_I32: red_t<int32_t>(r, sh); break;
  case CK_F16: red_t<ck_f16_t>(r, sh); break;
  case CK_BF16: red_t<ck_bf16_t>(r, sh); break;
  }
}

// ---------------------------------------------------------------- matmul

/* C[m,n] = alpha * A[m,k] B[k,n] + beta * C (beta == 0: C is not read), all dense row-major; a thread per
 * result, the dot product in T (steps 1-3's epilogue). */
template <typename T> __device__ __forceinline__ void mm_rec(const Rec &r) {
  const T *A = (const T *)r.a, *B = (const T *)r.b;
  T *C = (T *)r.out;
  const int m = r.n0, n = r.n1, k = r.n2;
  const T alpha = (T)r.s1, beta = (T)r.s2;
  for (int o = threadIdx.x; o < m * n; o += kThreads) {
    const int i = o / n, j = o - i * n;
    T acc = 0;
    for (int p = 0; p < k; ++p) acc += A[i * k + p] * B[p * n + j];
    C[o] = beta == T(0) ? alpha * acc : alpha * acc + beta * C[o];
  }
}

// ---------------------------------------------------------------- the kernel

__global__ void __launch_bounds__(kThreads) batched_kernel(const ck_batch q) {
  __shared__ __align__(16) unsigned char sh[kThreads / 32 * 16];
  for (int i = 0; i < q.n; ++i) {
    const Rec r = q.rec[i];
    switch (r.kind) {
    case CK_BATCH_EW: ew_any(r); break;
    case CK_BATCH_RED: red_any(r, sh); break;
    case CK_BATCH_MM:
      if (r.odt == CK_F64) mm_rec<double>(r);
      else mm_rec<float>(r);
      break;
    }
    __syncthreads(); /* the next record may read what this one wrote (and reuses sh) */
  }
}

int launch(const ck_batch &q, void *stream) {
  batched_kernel<<<1, kThreads, 0, (cudaStream_t)stream>>>(q);
  return (int)cudaGetLastError();
}

/* Append r to the batch, flushing a full one first; with no batch (batching off, CUKERN_SYNC, a graph being
 * captured), launch r alone. */
int push(const ck_env *env, const Rec &r) {
  ck_note(env, batched_kernel, kThreads, 0);
  ck_batch *q = env->batch;
  if (!q) {
    ck_batch one;
    one.n = 1;
    one.pad_ = 0;
    one.rec[0] = r;
    return launch(one, env->stream);
  }
  if (q->n == CK_BATCH_MAX) {
    const int e = ck_batch_flush(q, env->stream);
    if (e) {
      q->n = 0; /* the launch failed: the queued ops are dropped, and this op's error says so */
      return e;
    }
  }
  q->rec[q->n++] = r;
  return 0;
}

const char *const kTooBig = "more than 4096 elements (the batch is for launch-bound sizes)";

} // namespace

extern "C" int ck_batch_flush(ck_batch *q, void *stream) {
  if (!q || q->n == 0) return 0;
  const int e = launch(*q, stream);
  if (e == 0) q->n = 0; /* on failure the records stay, for the core's message (it empties the batch) */
  return e;
}

// ---------------------------------------------------------------- elementwise

extern "C" const char *ck_ew_batched_supports(const void *desc) {
  const ck_ew_desc *d = (const ck_ew_desc *)desc;
  if (d->op < 0 || d->op >= CK_EW_NOPS) return "unknown op";
  if (d->numel > CK_BATCH_MAX_ELEMS) return kTooBig;
  if (!(CK_DT_ALL5 & CK_DT_BIT(ckew::in_dtype_of(d))) ||
      !((CK_DT_ALL5 | CK_DT_BIT(CK_BOOL)) & CK_DT_BIT(d->out_dtype)) || (d->out_dtype == CK_BOOL && d->op != CK_EW_COPY && !ckew::to_bool(d->op)))
    return "f32, f64, i32, f16 and bf16 (and their bool results) only; the contiguous rung takes the other dtypes";
  return ck_ew_contiguous_supports(desc); /* the same dense layouts the contiguous rung takes (and not eye) */
}

extern "C" int ck_ew_batched(const void *desc, const ck_env *env) {
  const ck_ew_desc *d = (const ck_ew_desc *)desc;
  if (d->numel == 0) return 0;
  Rec r = {};
  r.kind = CK_BATCH_EW;
  r.op = (int16_t)d->op;
  r.out = d->out;
  r.a = d->a;
  r.b = d->b_scalar ? nullptr : d->b;
  r.s1 = d->s1;
  r.s2 = d->s2;
  r.n0 = (int32_t)d->numel;
  r.odt = (uint8_t)d->out_dtype;
  r.adt = (uint8_t)ckew::in_dtype_of(d);
  r.mode = (uint8_t)ckew::bmode_of(d);
  return push(env, r);
}

// ---------------------------------------------------------------- reduce

extern "C" const char *ck_reduce_batched_supports(const void *desc) {
  const ck_red_desc *d = (const ck_red_desc *)desc;
  if (const char *why = ckred::check_common(d)) return why;
  if (d->outer > CK_BATCH_MAX_ELEMS || d->len > CK_BATCH_MAX_ELEMS || d->inner > CK_BATCH_MAX_ELEMS ||
      d->outer * d->len * d->inner > CK_BATCH_MAX_ELEMS)
    return kTooBig;
  if (!(CK_DT_ALL5 & CK_DT_BIT(d->dtype))) return "f32, f64, i32, f16 and bf16 only (the rows rungs take the other dtypes)";
  return nullptr;
}

extern "C" int ck_reduce_batched(const void *desc, const ck_env *env) {
  const ck_red_desc *d = (const ck_red_desc *)desc;
  Rec r = {};
  r.kind = CK_BATCH_RED;
  r.op = (int16_t)ckred::effective_op(d);
  r.out = d->out;
  r.a = d->x;
  r.b = d->idx;
  r.n0 = (int32_t)d->outer;
  r.n1 = (int32_t)d->len;
  r.n2 = (int32_t)d->inner;
  r.odt = r.adt = (uint8_t)d->dtype;
  return push(env, r);
}

// ---------------------------------------------------------------- matmul

extern "C" const char *ck_matmul_batched_supports(const void *desc) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->dtype != CK_F32 && d->dtype != CK_F64) return "f32 and f64 only";
  if (d->c_dtype != d->dtype || d->precision != CK_MM_EXACT) return "C in the input dtype, exact precision only";
  if (d->batch != 1) return "one product (batch 1) only";
  if (d->m < 1 || d->n < 1 || d->k < 1) return "needs m, n, k >= 1";
  if (d->m > CK_BATCH_MAX_ELEMS || d->n > CK_BATCH_MAX_ELEMS || d->m * d->n > CK_BATCH_MAX_ELEMS || d->k > 256)
    return "more than 4096 results or k > 256 (the batch is for launch-bound sizes)";
  if ((d->a_cs != 1 && d->k > 1) || (d->a_rs != d->k && d->m > 1) || (d->b_cs != 1 && d->n > 1) ||
      (d->b_rs != d->n && d->k > 1) || (d->c_cs != 1 && d->n > 1) || (d->c_rs != d->n && d->m > 1))
    return "dense row-major operands only";
  return nullptr;
}

extern "C" int ck_matmul_batched(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  Rec r = {};
  r.kind = CK_BATCH_MM;
  r.out = d->c;
  r.a = d->a;
  r.b = d->b;
  r.s1 = d->alpha;
  r.s2 = d->beta;
  r.n0 = (int32_t)d->m;
  r.n1 = (int32_t)d->n;
  r.n2 = (int32_t)d->k;
  r.odt = r.adt = (uint8_t)d->dtype;
  return push(env, r);
}
