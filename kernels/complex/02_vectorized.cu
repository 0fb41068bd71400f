/*
 * 02_vectorized.cu — complex step 2: dense operands through 16-byte loads; sums in one launch.
 *
 * Idea (elementwise): when every operand is dense in the output's order (one coalesced dim with unit strides; a
 * broadcast 0-d operand or a number allowed), the index math goes and each load moves 16 bytes: two c64 pairs
 * (float4) or one c128 pair (double2). Each thread keeps U = 4 loads per operand in flight before it computes,
 * so the memory system sees enough bytes to stream at copy speed. Misaligned c64 operands (an odd offset) take
 * 8-byte loads (V = 1); an odd element count's last element is done by thread 0 after the loop.
 * Changed from step 1: no per-element index decomposition, 16-byte instead of 8-byte (c64) accesses, 4 in flight.
 * Idea (sums over [outer, len, inner], x contiguous): the slab of one output row o is contiguous (len * inner
 * pairs), so blocks read it in order: with inner <= 256, thread t of a block reads every `step`-th pair of its
 * chunk (step = 256 - 256 % inner: a thread keeps one column), columns are folded by a shared-memory tree; with
 * inner > 256 a thread keeps one column of a 256-wide tile. A row longer than the device needs is cut into
 * chunks; each chunk's block writes its partial sums (double), fences and draws a ticket from its row's counter,
 * and the last one folds the partials in chunk order: one launch, deterministic, no second pass over the data.
 * Whole-array sums (outer = inner = 1) read through 16-byte loads as above. Accumulation in double for c64 too.
 * Launch: 256 threads; elementwise grid = min(tiles, 8 blocks per SM) grid-stride; sums: about one wave of
 * blocks (8 per SM) over (row, tile, chunk) items, chunks of at least 4096 pairs.
 * Limits: elementwise: one dim after coalescing with unit strides (supports() declines the rest: strided runs).
 * Operands: as 01_strided.cu; sums: x contiguous complex, out contiguous.
 */
#include "cx_common.cuh"

using namespace ckcx;

#define VB 256 /* threads per block */
#define VU 4   /* loads in flight per thread and operand */

// ---------------------------------------------------------------- elementwise

template <int FN, class R, int V>
__global__ void __launch_bounds__(VB) cx_vec_kernel(int64_t n, typename Out<FN, R>::T *out,
                                                    const typename M<R>::C *a,
                                                    const typename M<R>::C *b, typename M<R>::C s,
                                                    int a_one, int b_one, int scalar_left) {
  using C = typename M<R>::C;
  using O = typename Out<FN, R>::T;
  const Vec<C, V> *va = reinterpret_cast<const Vec<C, V> *>(a), *vb = reinterpret_cast<const Vec<C, V> *>(b);
  Vec<O, V> *vo = reinterpret_cast<Vec<O, V> *>(out);
  const C a0 = a_one ? reinterpret_cast<const Vec<C, 1> *>(a)->e[0] : s;
  const C b0 = b && b_one ? reinterpret_cast<const Vec<C, 1> *>(b)->e[0] : s;
  const bool a_vec = !a_one, b_vec = b && !b_one;
  const int64_t nvec = n / V;
  for (int64_t base = (int64_t)blockIdx.x * VB * VU + threadIdx.x; base < nvec; base += (int64_t)gridDim.x * VB * VU) {
    Vec<C, V> xa[VU], xb[VU];
#pragma unroll
    for (int u = 0; u < VU; ++u) {
      const int64_t v = base + (int64_t)u * VB;
      if (v < nvec) {
        if (a_vec) xa[u] = va[v];
        if (b_vec) xb[u] = vb[v];
      }
    }
#pragma unroll
    for (int u = 0; u < VU; ++u) {
      const int64_t v = base + (int64_t)u * VB;
      if (v < nvec) {
        Vec<O, V> r;
#pragma unroll
        for (int k = 0; k < V; ++k) {
          C x = a_vec ? xa[u].e[k] : a0, y = b_vec ? xb[u].e[k] : b0;
          if (scalar_left) {
            const C t = x;
            x = y, y = t;
          }
          r.e[k] = apply<FN, R>(x, y);
        }
        vo[v] = r;
      }
    }
  }
  if (V > 1 && blockIdx.x == 0 && threadIdx.x == 0)
    for (int64_t e = nvec * V; e < n; ++e) {
      C x = a_vec ? reinterpret_cast<const Vec<C, 1> *>(a)[e].e[0] : a0;
      C y = b_vec ? reinterpret_cast<const Vec<C, 1> *>(b)[e].e[0] : b0;
      if (scalar_left) {
        const C t = x;
        x = y, y = t;
      }
      out[e] = apply<FN, R>(x, y);
    }
}

static bool aligned(const void *p, size_t to) { return ((uintptr_t)p % to) == 0; }

template <int FN, class R> static int run_ew(const ck_cx_desc &d, const ck_env *env) {
  using C = typename M<R>::C;
  using O = typename Out<FN, R>::T;
  const bool a_one = d.a_st[0] == 0, b_one = !d.b_scalar && d.b_st[0] == 0;
  const C *b = d.b_scalar ? nullptr : (const C *)d.b;
  /* V = 2 (c64): every streamed operand 16-byte aligned, and out at 2 of its elements */
  const bool two = sizeof(C) == 8 && aligned(d.out, 2 * sizeof(O)) && (a_one || aligned(d.a, 16)) &&
                   (!b || b_one || aligned(d.b, 16));
  const int64_t nvec = two ? d.numel / 2 : d.numel;
  const unsigned grid = grid_cap((nvec + VB * VU - 1) / (VB * VU), (int64_t)env->sm_count * 8);
  cudaStream_t st = (cudaStream_t)env->stream;
  if constexpr (sizeof(C) == 8) { /* (c128: one pair is 16 bytes already) */
    if (two) {
      ck_note(env, cx_vec_kernel<FN, R, 2>, VB, 0);
      cx_vec_kernel<FN, R, 2><<<grid, VB, 0, st>>>(d.numel, (O *)d.out, (const C *)d.a, b, scalar_of<R>(d), a_one,
                                                   b_one, d.scalar_left);
      return (int)cudaGetLastError();
    }
  }
  {
    ck_note(env, cx_vec_kernel<FN, R, 1>, VB, 0);
    cx_vec_kernel<FN, R, 1><<<grid, VB, 0, st>>>(d.numel, (O *)d.out, (const C *)d.a, b, scalar_of<R>(d), a_one, b_one,
                                                 d.scalar_left);
  }
  return (int)cudaGetLastError();
}

// ---------------------------------------------------------------- sums

/* Fold acc (this thread's column t % inner, t < step) over the block: column i's total lands in sh[i]. */
__device__ __forceinline__ void fold_columns(double2 *sh, double2 acc, int step, int inner) {
  const int t = threadIdx.x, m = step / inner;
  sh[t] = t < step ? acc : make_double2(0, 0);
  __syncthreads();
  int h = 1;
  while (h < m) h <<= 1;
  for (h >>= 1; h >= 1; h >>= 1) {
    if (t < h * inner && t / inner + h < m) {
      const double2 o = sh[t + h * inner];
      sh[t].x += o.x, sh[t].y += o.y;
    }
    __syncthreads();
  }
}

/* Sum of p[k] over k = k0 + t, k0 + t + step, ... < k1 (V pairs per load), U loads in flight. */
template <class C, int V>
__device__ __forceinline__ double2 fold_range(const C *__restrict__ p, int64_t k0, int64_t k1, int step) {
  double re = 0, im = 0;
  const Vec<C, V> *vp = reinterpret_cast<const Vec<C, V> *>(p);
  int64_t k = k0 / V + threadIdx.x;
  const int64_t kend = k1 / V;
  for (; k + (int64_t)(VU - 1) * step < kend; k += (int64_t)VU * step) {
    Vec<C, V> x[VU];
#pragma unroll
    for (int u = 0; u < VU; ++u) x[u] = vp[k + (int64_t)u * step];
#pragma unroll
    for (int u = 0; u < VU; ++u)
#pragma unroll
      for (int e = 0; e < V; ++e) re += (double)x[u].e[e].re, im += (double)x[u].e[e].im;
  }
  for (; k < kend; k += step) {
    const Vec<C, V> x = vp[k];
#pragma unroll
    for (int e = 0; e < V; ++e) re += (double)x.e[e].re, im += (double)x.e[e].im;
  }
  return make_double2(re, im);
}

struct SumPlan {
  int64_t ntiles, per, rows; /* column tiles per row (inner > VB), chunks per row tile, rows per chunk */
  int step, width;           /* threads reading (narrow), columns a block keeps */
};

template <class R, int V>
__global__ void __launch_bounds__(VB) cx_sum_kernel(const typename M<R>::C *__restrict__ x, typename M<R>::C *out,
                                                    int64_t outer, int64_t len, int64_t inner, SumPlan pl,
                                                    double scale, double2 *part, unsigned *tickets) {
  using C = typename M<R>::C;
  __shared__ double2 sh[VB];
  __shared__ bool last;
  const int t = threadIdx.x;
  const bool narrow = inner <= VB;
  const int64_t items = outer * pl.ntiles * pl.per;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t c = item % pl.per, g = item / pl.per; /* g: (row, tile) */
    const int64_t o = g / pl.ntiles, tile = g % pl.ntiles;
    const int64_t r0 = c * pl.rows, r1 = min(len, r0 + pl.rows);
    const C *slab = x + o * len * inner;
    double2 acc = make_double2(0, 0);
    int cols;
    if (narrow) {
      cols = (int)inner;
      if (t < pl.step) acc = fold_range<C, V>(slab, r0 * inner, r1 * inner, pl.step);
      if (V > 1 && t == 0 && ((r1 - r0) & 1)) { /* an odd chunk's last pair (whole-array sums of odd length) */
        const C e = reinterpret_cast<const Vec<C, 1> *>(slab)[r1 - 1].e[0];
        acc.x += (double)e.re, acc.y += (double)e.im;
      }
      fold_columns(sh, acc, pl.step, cols);
    } else {
      const int64_t col = tile * VB + t;
      cols = (int)min((int64_t)VB, inner - tile * VB);
      if (col < inner) {
        const Vec<C, 1> *p = reinterpret_cast<const Vec<C, 1> *>(slab) + col;
        double re = 0, im = 0;
        for (int64_t r = r0; r < r1; ++r) {
          const C e = p[r * inner].e[0];
          re += (double)e.re, im += (double)e.im;
        }
        acc = make_double2(re, im);
      }
      sh[t] = acc;
      __syncthreads();
    }
    C *dst = out + o * inner + tile * VB;
    if (pl.per == 1) {
      if (t < cols) dst[t] = M<R>::mk((R)(sh[t].x * scale), (R)(sh[t].y * scale));
      __syncthreads();
      continue;
    }
    /* a chunk of a longer row: its partials, then the row tile's last block folds them in chunk order */
    double2 *gp = part + g * pl.per * pl.width;
    if (t < cols) gp[c * pl.width + t] = sh[t];
    __threadfence();
    __syncthreads();
    if (t == 0) last = atomicAdd(&tickets[g], 1u) == (unsigned)(pl.per - 1);
    __syncthreads();
    if (last) {
      __threadfence();
      double re = 0, im = 0;
      if (narrow) { /* the partials are [per][inner]: the same column walk as the data */
        for (int64_t k = t; t < pl.step && k < pl.per * inner; k += pl.step) {
          const double2 v = __ldcg(gp + k);
          re += v.x, im += v.y;
        }
        fold_columns(sh, make_double2(re, im), pl.step, cols);
      } else {
        if (t < cols)
          for (int64_t k = 0; k < pl.per; ++k) {
            const double2 v = __ldcg(gp + k * pl.width + t);
            re += v.x, im += v.y;
          }
        sh[t] = make_double2(re, im);
        __syncthreads();
      }
      if (t < cols) dst[t] = M<R>::mk((R)(sh[t].x * scale), (R)(sh[t].y * scale));
    }
    __syncthreads();
  }
}

template <class R> static int run_sum(const ck_cx_desc &d, const ck_env *env) {
  using C = typename M<R>::C;
  cudaStream_t st = (cudaStream_t)env->stream;
  const bool narrow = d.inner <= VB;
  /* 16-byte loads: c64 rows that all start 16-byte aligned (whole arrays, or even rows), chunks of even length */
  const bool two = sizeof(C) == 8 && d.inner == 1 && aligned(d.a, 16) && (d.outer == 1 || d.len % 2 == 0);
  SumPlan pl;
  pl.ntiles = narrow ? 1 : (d.inner + VB - 1) / VB;
  pl.step = narrow ? VB - VB % (int)d.inner : VB;
  pl.width = narrow ? (int)d.inner : VB;
  const int64_t groups = d.outer * pl.ntiles, target = (int64_t)env->sm_count * 8;
  const int64_t per_max = narrow ? (d.len * d.inner) / 4096 : d.len / 64;
  int64_t per = (target + groups - 1) / groups;
  if (per > per_max) per = per_max;
  if (per < 1) per = 1;
  pl.rows = (d.len + per - 1) / per;
  if (two && (pl.rows & 1) && pl.rows < d.len) ++pl.rows;
  pl.per = (d.len + pl.rows - 1) / pl.rows;
  const int64_t items = groups * pl.per;
  const unsigned grid = grid_cap(items, (int64_t)1 << 30);
  const size_t part_bytes = pl.per > 1 ? ((size_t)(groups * pl.per * pl.width) * sizeof(double2) + 255) & ~(size_t)255 : 0;
  const size_t ticket_bytes = pl.per > 1 ? (size_t)groups * sizeof(unsigned) : 0;
  Ws w(env, part_bytes + ticket_bytes);
  if (part_bytes && !w.p) return (int)cudaErrorMemoryAllocation;
  double2 *part = (double2 *)w.p;
  unsigned *tickets = part_bytes ? (unsigned *)((char *)w.p + part_bytes) : nullptr;
  if (tickets) {
    const int err = (int)cudaMemsetAsync(tickets, 0, ticket_bytes, st);
    if (err) return err;
  }
  if constexpr (sizeof(C) == 8) {
    if (two) {
      ck_note(env, cx_sum_kernel<R, 2>, VB, 0);
      cx_sum_kernel<R, 2><<<grid, VB, 0, st>>>((const C *)d.a, (C *)d.out, d.outer, d.len, d.inner, pl, d.scale,
                                               part, tickets);
      return (int)cudaGetLastError();
    }
  }
  {
    ck_note(env, cx_sum_kernel<R, 1>, VB, 0);
    cx_sum_kernel<R, 1><<<grid, VB, 0, st>>>((const C *)d.a, (C *)d.out, d.outer, d.len, d.inner, pl, d.scale, part,
                                             tickets);
  }
  return (int)cudaGetLastError();
}

// ---------------------------------------------------------------- launcher

template <class R> static int run(const ck_cx_desc &d, const ck_env *env) {
  if (d.fn >= CK_CX_FIRST_REDUCE) return run_sum<R>(d, env);
  switch (d.fn) {
#define CKCX_CASE(FN) case FN: return run_ew<FN, R>(d, env);
    CKCX_EW_FNS(CKCX_CASE)
#undef CKCX_CASE
  default: return (int)cudaErrorInvalidValue;
  }
}

CK_CX_LAUNCHER(ck_complex_vectorized, run)

extern "C" const char *ck_complex_vectorized_supports(const void *desc) {
  const ck_cx_desc *d = (const ck_cx_desc *)desc;
  if (d->fn >= CK_CX_FIRST_REDUCE) return NULL;
  const bool unary = d->fn >= CK_CX_FIRST_UNARY;
  if (d->ndim != 1 || d->out_st[0] != 1 || (d->a_st[0] != 0 && d->a_st[0] != 1) ||
      (!unary && !d->b_scalar && d->b_st[0] != 0 && d->b_st[0] != 1))
    return "operands not dense in one order (a view, or broadcasting along a dim): the strided rung takes them";
  return NULL;
}
