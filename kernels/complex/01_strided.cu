/*
 * 01_strided.cu — complex step 1: one thread per element at any strides, one pass over memory.
 *
 * Idea: the composed form ran a complex op as 2-6 real ops over the parts' stride-2 views (each a pass over
 * memory, with temporaries for products). Here a thread reads its pair of each operand, computes the op in
 * registers (cx_math.h, the host oracle's text) and writes its result: one read of each operand and one write.
 * The element index is 64-bit and decomposed over the descriptor's dims (put in the output's memory order and
 * coalesced by the dispatcher), so transposed, narrowed and broadcast operands need no copy.
 * Sums: a thread per output folds its line of [outer, len, inner] in double (coalesced across inner only).
 * Launch: 256 threads, grid-stride, grid capped at 65535 * 16 blocks.
 * Limits: none (any shape, strides, offsets; the dispatcher handles empty results).
 * Operands: a, b complex (c64 or c128, the compute dtype) or b a number; out complex, real or bool.
 */
#include "cx_common.cuh"

using namespace ckcx;

#define ST_BLOCK 256

// ---------------------------------------------------------------- kernels

struct Geo {
  int nd;
  int64_t shape[CK_MAX_DIMS], out_st[CK_MAX_DIMS], a_st[CK_MAX_DIMS], b_st[CK_MAX_DIMS];
};

template <int FN, class R>
__global__ void __launch_bounds__(ST_BLOCK) cx_strided_kernel(Geo g, int64_t n, typename Out<FN, R>::T *out,
                                                              const typename M<R>::C *a, const typename M<R>::C *b,
                                                              typename M<R>::C s, int scalar_left) {
  using C = typename M<R>::C;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n; e += (int64_t)gridDim.x * blockDim.x) {
    int64_t rem = e, oo = 0, ao = 0, bo = 0;
    for (int k = g.nd - 1; k >= 0; --k) {
      const int64_t i = rem % g.shape[k];
      rem /= g.shape[k];
      oo += i * g.out_st[k], ao += i * g.a_st[k], bo += i * g.b_st[k];
    }
    C x = reinterpret_cast<const Vec<C, 1> *>(a)[ao].e[0];
    C y = b ? reinterpret_cast<const Vec<C, 1> *>(b)[bo].e[0] : s;
    if (scalar_left) {
      const C t = x;
      x = y, y = t;
    }
    out[oo] = apply<FN, R>(x, y);
  }
}

template <class R>
__global__ void __launch_bounds__(ST_BLOCK) cx_sum_lines_kernel(const typename M<R>::C *x, typename M<R>::C *out,
                                                                int64_t outer, int64_t len, int64_t inner, double scale) {
  using C = typename M<R>::C;
  const int64_t n = outer * inner;
  for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < n; j += (int64_t)gridDim.x * blockDim.x) {
    const Vec<C, 1> *p = reinterpret_cast<const Vec<C, 1> *>(x) + (j / inner) * len * inner + j % inner;
    double re = 0, im = 0;
    for (int64_t r = 0; r < len; ++r) {
      const C v = p[r * inner].e[0];
      re += (double)v.re, im += (double)v.im;
    }
    out[j] = M<R>::mk((R)(re * scale), (R)(im * scale));
  }
}

// ---------------------------------------------------------------- launcher

template <int FN, class R> static int run_ew(const ck_cx_desc &d, const ck_env *env) {
  using C = typename M<R>::C;
  Geo g;
  g.nd = d.ndim;
  for (int k = 0; k < CK_MAX_DIMS; ++k)
    g.shape[k] = d.shape[k], g.out_st[k] = d.out_st[k], g.a_st[k] = d.a_st[k], g.b_st[k] = d.b_st[k];
  ck_note(env, cx_strided_kernel<FN, R>, ST_BLOCK, 0);
  cx_strided_kernel<FN, R><<<grid_cap((d.numel + ST_BLOCK - 1) / ST_BLOCK, 65535 * 16), ST_BLOCK, 0,
                             (cudaStream_t)env->stream>>>(g, d.numel, (typename Out<FN, R>::T *)d.out, (const C *)d.a,
                                                          d.b_scalar ? nullptr : (const C *)d.b, scalar_of<R>(d),
                                                          d.scalar_left);
  return (int)cudaGetLastError();
}

template <class R> static int run(const ck_cx_desc &d, const ck_env *env) {
  using C = typename M<R>::C;
  if (d.fn >= CK_CX_FIRST_REDUCE) {
    ck_note(env, cx_sum_lines_kernel<R>, ST_BLOCK, 0);
    cx_sum_lines_kernel<R><<<grid_cap((d.outer * d.inner + ST_BLOCK - 1) / ST_BLOCK, 65535 * 16), ST_BLOCK, 0,
                             (cudaStream_t)env->stream>>>((const C *)d.a, (C *)d.out, d.outer, d.len, d.inner, d.scale);
    return (int)cudaGetLastError();
  }
  switch (d.fn) {
#define CKCX_CASE(FN) case FN: return run_ew<FN, R>(d, env);
    CKCX_EW_FNS(CKCX_CASE)
#undef CKCX_CASE
  default: return (int)cudaErrorInvalidValue;
  }
}

CK_CX_LAUNCHER(ck_complex_strided, run)
