/*
 * 02_online.cu — rung 2: a thread per line, two passes (the online normaliser; Welford).
 *
 * Idea: the max and the sum of exp need not be two passes. Milakov & Gimelshein (2018, "Online normalizer
 * calculation for softmax") keep the running max m and the sum s of exp(x - m): a larger x rescales s by
 * exp(m_old - x). For layer_norm, Welford's update keeps the mean and the sum of squared deviations in one
 * pass, without the cancellation of E[x^2] - E[x]^2. Change from rung 1: one read fewer per element (2n + n
 * writes instead of 3n + n); the per-element work grows a little (one exp or one division more).
 * Along a leading dim (inner > 1) a warp's 32 lines are neighbours in memory, so this is also the ladder's
 * strided rung: the default for a non-last dim (no transpose is needed, reads and writes are coalesced).
 * Launch: 256 threads, a thread per line (o, i) of [outer, len, inner], grid-stride.
 * Limits: none. Operands: x, out contiguous [outer, len, inner]; w, b [len] or NULL.
 */
#include "rows_common.cuh"

using namespace ckrows;

// ---------------------------------------------------------------- kernel

template <class Op> __global__ void __launch_bounds__(256) rows_online_kernel(const ck_rows_desc d) {
  using A = typename Op::A;
  const int64_t lines = d.outer * d.inner;
  for (int64_t l = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; l < lines; l += (int64_t)gridDim.x * blockDim.x) {
    const int64_t base = line_base(d, l);
    const typename Op::T *x = (const typename Op::T *)d.x + base;
    typename Op::Stat s;
    s.init();
    for (int64_t r = 0; r < d.len; ++r) s.add(ld<A>(x[r * d.inner]));
    write_line<Op>(d, base, Op::finish(s, d.len, d.eps));
  }
}

// ---------------------------------------------------------------- launcher

template <class Op> static int launch(const ck_rows_desc &d, const ck_env *env) {
  ck_note(env, rows_online_kernel<Op>, 256, 0);
  rows_online_kernel<Op><<<grid_for(cdiv(d.outer * d.inner, 256)), 256, 0, (cudaStream_t)env->stream>>>(d);
  return (int)cudaGetLastError();
}

CK_ROWS_LAUNCHER(ck_rows_online, launch)
