/*
 * 12_cols.cu — layout variant: reduction over a leading dim (inner > 1), e.g. column sums.
 *
 * Idea: x is [outer, len, inner] and the reduced index r has stride `inner`, so a thread per output reading
 * down its column would stride through memory. Instead the threads of a block are laid out TX x TY: TX
 * threads side by side across `inner` (each owning V adjacent outputs, read as one 16-byte vector when
 * inner % V == 0 and x is 16-byte aligned, else V = 1), TY thread rows walking r. A warp then reads
 * TX*V*sizeof(T) contiguous bytes of one row of x (512 B for f32 when TX = 32): coalesced, U = 4 row loads
 * in flight per thread. The TY partial sums meet in shared memory. When outer x column tiles is too small
 * to fill the device, len is split across blocks (nsplit) and a second pass (finish_cols) reduces the
 * [outer, nsplit, inner] partials.
 * Launch: 256 threads; TX = min(32, next power of two >= ceil(inner/V)), TY = 256/TX; grid = outer x
 * ceil(inner/(TX*V)) x nsplit (folded into x, capped; blocks loop).
 * Operands: x contiguous [outer, len, inner] with inner > 1, out/idx [outer, inner]; any sizes.
 */
#include "red_ops.cuh"

using namespace ckred;

// ---------------------------------------------------------------- kernel

template <class O, int V, int U>
__global__ void __launch_bounds__(256) reduce_cols_kernel(const typename O::value_t *__restrict__ x, int64_t outer,
                                                          int64_t len, int64_t inner, int tx_log2, int64_t ntile,
                                                          int64_t nsplit, int64_t rows_per_split,
                                                          typename O::acc_t *part, typename O::out_t *out,
                                                          int64_t *idx) {
  using T = typename O::value_t;
  using acc_t = typename O::acc_t;
  static_assert(V == 1 || V == Vec<T>::N, "vector width");
  __shared__ acc_t sm[256 * V]; /* [TY][TX*V] */
  const int TX = 1 << tx_log2, TY = 256 >> tx_log2;
  const int tx = threadIdx.x & (TX - 1), ty = threadIdx.x >> tx_log2;
  const int W = TX * V; /* columns per tile */
  for (int64_t b = blockIdx.x; b < outer * ntile * nsplit; b += gridDim.x) {
    const int64_t split = b % nsplit, rest = b / nsplit;
    const int64_t tile = rest % ntile, o = rest / ntile;
    const int64_t i0 = tile * W + (int64_t)tx * V; /* first column of this thread */
    const int64_t r0 = split * rows_per_split;
    const int64_t r1 = r0 + rows_per_split < len ? r0 + rows_per_split : len;
    acc_t a[V];
#pragma unroll
    for (int j = 0; j < V; ++j) a[j] = O::identity();
    if (i0 < inner) { /* V > 1 implies inner % V == 0: the whole vector is in range */
      const T *col = x + o * len * inner + i0;
      for (int64_t r = r0 + ty; r < r1; r += (int64_t)U * TY) {
        T v[U][V];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int64_t rr = r + (int64_t)u * TY;
          if (rr < r1) {
            if constexpr (V > 1) {
              const Vec<T> q = ld_vec(col + rr * inner);
#pragma unroll
              for (int j = 0; j < V; ++j) v[u][j] = q.e[j];
            } else {
              v[u][0] = ldg(col + rr * inner);
            }
          }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int64_t rr = r + (int64_t)u * TY;
          if (rr < r1) {
#pragma unroll
            for (int j = 0; j < V; ++j) a[j] = O::combine(a[j], O::make(v[u][j], rr));
          }
        }
      }
    }
#pragma unroll
    for (int j = 0; j < V; ++j) sm[ty * W + tx * V + j] = a[j];
    __syncthreads();
    if ((int)threadIdx.x < W) {
      const int64_t col = tile * W + threadIdx.x;
      acc_t s = O::identity();
      for (int y = 0; y < TY; ++y) s = O::combine(s, sm[y * W + threadIdx.x]);
      if (col < inner) {
        if (part) part[(o * nsplit + split) * inner + col] = s;
        else O::store(s, out, idx, o * inner + col, len);
      }
    }
    __syncthreads();
  }
}

// ---------------------------------------------------------------- launcher

template <class O, int V>
static int launch_v(const ck_red_desc &d, const ck_env *env) {
  using acc_t = typename O::acc_t;
  using T = typename O::value_t;
  constexpr int U = 4;
  static ck_devcache occs; /* per instantiation and device; a benign race if two threads fill it */
  int &occ = occs.v[env->device];
  if (!occ) occ = occupancy((const void *)reduce_cols_kernel<O, V, U>, 256, 0);
  const int64_t ncolv = cdiv(d.inner, V);
  int tx_log2 = 0;
  while (tx_log2 < 5 && ((int64_t)1 << tx_log2) < ncolv) ++tx_log2;
  const int64_t TX = (int64_t)1 << tx_log2, TY = 256 / TX;
  const int64_t ntile = cdiv(ncolv, TX);
  const int64_t base = d.outer * ntile, target = (int64_t)env->sm_count * occ;
  int64_t nsplit = 1;
  if (base < target) {
    nsplit = target / base;
    const int64_t most = cdiv(d.len, 2 * U * TY); /* each split: >= 2 trips of U loads per thread */
    if (nsplit > most) nsplit = most;
    if (nsplit < 1) nsplit = 1;
  }
  const int64_t rows = cdiv(d.len, nsplit);
  nsplit = cdiv(d.len, rows);
  cudaStream_t s = (cudaStream_t)env->stream;
  const unsigned grid = grid_for(base * nsplit);
  ck_note(env, reduce_cols_kernel<O, V, U>, 256, 0);
  if (nsplit == 1) {
    reduce_cols_kernel<O, V, U><<<grid, 256, 0, s>>>((const T *)d.x, d.outer, d.len, d.inner, tx_log2, ntile, 1,
                                                     rows, nullptr, (typename O::out_t *)d.out, d.idx);
    return (int)cudaGetLastError();
  }
  Ws w(env, (size_t)(d.outer * nsplit * d.inner) * sizeof(acc_t));
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  reduce_cols_kernel<O, V, U><<<grid, 256, 0, s>>>((const T *)d.x, d.outer, d.len, d.inner, tx_log2, ntile, nsplit,
                                                   rows, (acc_t *)w.p, nullptr, nullptr);
  const int err = (int)cudaGetLastError();
  if (err) return err;
  return finish_cols<O>(env, (const acc_t *)w.p, d.outer, nsplit, d.inner, (typename O::out_t *)d.out, d.idx, d.len);
}

template <class O>
static int launch(const ck_red_desc &d, const ck_env *env) {
  constexpr int N = Vec<typename O::value_t>::N;
  if (d.inner % N == 0 && ((uintptr_t)d.x & 15u) == 0) return launch_v<O, N>(d, env);
  return launch_v<O, 1>(d, env);
}

CK_RED_LAUNCHER_H(ck_reduce_cols, launch)

extern "C" const char *ck_reduce_cols_supports(const void *desc) {
  const ck_red_desc *d = (const ck_red_desc *)desc;
  if (d->inner == 1) return "reduces a leading dim (inner > 1); rows (inner == 1) go to the row variants";
  return check_common(d);
}
