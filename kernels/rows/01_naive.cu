/*
 * 01_naive.cu — rung 1: a thread per line, three passes over memory.
 *
 * Idea: the textbook definition, read literally. Softmax is max, then the sum of exp(x - max), then the
 * normalised write: three trips through the line. layer_norm: the mean, then the variance around it (the
 * two-pass formula, stable), then the write; rms_norm: the mean square, then the write.
 * What it costs: every element is read three times (twice for rms_norm); along the last dim the 32 threads of
 * a warp read 32 different rows (strided, uncoalesced), along a leading dim they read neighbours (coalesced).
 * Launch: 256 threads, a thread per line (o, i) of [outer, len, inner], grid-stride.
 * Limits: none (any len, any inner). Operands: x, out contiguous [outer, len, inner]; w, b [len] or NULL.
 */
#include "rows_common.cuh"

using namespace ckrows;

// ---------------------------------------------------------------- kernel

template <class Op> __global__ void __launch_bounds__(256) rows_naive_kernel(const ck_rows_desc d) {
  using A = typename Op::A;
  const int64_t lines = d.outer * d.inner, n = d.len, in = d.inner;
  for (int64_t l = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; l < lines; l += (int64_t)gridDim.x * blockDim.x) {
    const int64_t base = line_base(d, l);
    const typename Op::T *x = (const typename Op::T *)d.x + base;
    typename Op::Stat s;
    s.init();
    if constexpr (Op::softmax) { /* pass 1: max; pass 2: sum of exp */
      for (int64_t r = 0; r < n; ++r) s.m = fmax(s.m, ld<A>(x[r * in]));
      for (int64_t r = 0; r < n; ++r) s.s += ex(ld<A>(x[r * in]) - s.m);
    } else if constexpr (Op::layer) { /* pass 1: mean; pass 2: squared deviations */
      A sum = 0;
      for (int64_t r = 0; r < n; ++r) sum += ld<A>(x[r * in]);
      s.n = (A)n, s.mean = sum / (A)n;
      for (int64_t r = 0; r < n; ++r) {
        const A dv = ld<A>(x[r * in]) - s.mean;
        s.m2 += dv * dv;
      }
    } else {
      for (int64_t r = 0; r < n; ++r) s.add(ld<A>(x[r * in]));
    }
    write_line<Op>(d, base, Op::finish(s, n, d.eps)); /* the last pass */
  }
}

// ---------------------------------------------------------------- launcher

template <class Op> static int launch(const ck_rows_desc &d, const ck_env *env) {
  ck_note(env, rows_naive_kernel<Op>, 256, 0);
  rows_naive_kernel<Op><<<grid_for(cdiv(d.outer * d.inner, 256)), 256, 0, (cudaStream_t)env->stream>>>(d);
  return (int)cudaGetLastError();
}

CK_ROWS_LAUNCHER(ck_rows_naive, launch)
