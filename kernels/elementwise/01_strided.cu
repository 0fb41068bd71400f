/*
 * 01_strided.cu — elementwise variant 1 "strided": the general case.
 *
 * Idea (the seed's map/zip kernels): one thread per output element. The thread turns its linear index
 * into an ndim-d index (to_index: div/mod from the last dim), and dots that index with each operand's
 * element strides (index_to_position). Broadcasting is a stride of 0 (the dispatcher builds them, which
 * replaces the seed's broadcast_index), so one formula serves out, a and b.
 * What changed from the seed: any ndim <= CK_MAX_DIMS, any strides (views, transposes, expands), int64
 * offsets, a grid-stride loop (any numel, grid sized from the SM count), all ops and dtypes (one template
 * instance per (op, dtype), the math shared with 02_contiguous in ew_math.cuh), COPY with casts, and the
 * generators (RAND/RANDN draw Philox with the same linear index as the host, so both give equal values).
 * The div/mod runs in 32 bits when numel < 2^32 (64-bit division is a long software sequence).
 * Launch: 256 threads, grid = min(ceil(numel/256), 8 blocks per SM), grid-stride.
 * Operands: desc->shape[ndim] (the broadcast shape, possibly coalesced), element strides per operand,
 * a scalar b (or a, scalar_left) from desc->s1. Limits: none beyond ndim <= 8; numel == 0 launches nothing.
 */
#include <cuda_runtime.h>

#include "ew_math.cuh"

namespace {

using namespace ckew;

constexpr int kThreads = 256;

struct StridedArgs {
  int ndim, bmode;
  int64_t numel;
  int64_t shape[CK_MAX_DIMS], ost[CK_MAX_DIMS], ast[CK_MAX_DIMS], bst[CK_MAX_DIMS];
  void *out;
  const void *a, *b;
  Scal s;
};

// ---------------------------------------------------------------- kernel

template <int OP, typename TO, typename TI, typename IDX>
__global__ void __launch_bounds__(kThreads) ew_strided_kernel(const StridedArgs p) {
  constexpr int NIN = arity(OP);
  TO *out = (TO *)p.out;
  const TI *a = (const TI *)p.a;
  const TI *b = (const TI *)p.b;
  const TI sv = scalar_of<TI>(p.s); /* the scalar operand, rounded once to the operand type */
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t lin = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; lin < p.numel; lin += step) {
    IDX rem = (IDX)lin;
    int64_t oo = 0, ao = 0, bo = 0, ri = 0, j = 0;
    /* to_index + index_to_position fused, last dim first; unrolled so the params are indexed statically */
#pragma unroll
    for (int k = CK_MAX_DIMS - 1; k >= 0; --k) {
      if (k < p.ndim) {
        const IDX sh = (IDX)p.shape[k];
        const IDX q = rem / sh;
        const int64_t c = (int64_t)(rem - q * sh);
        rem = q;
        oo += c * p.ost[k];
        if constexpr (NIN >= 1) ao += c * p.ast[k];
        if constexpr (NIN == 2) bo += c * p.bst[k];
        if constexpr (OP == CK_EW_EYE) {
          if (k == p.ndim - 1) j = c;
          if (k == p.ndim - 2) ri = c;
        }
      }
    }
    TI x = TI(0), y = TI(0);
    if constexpr (NIN >= 1) x = a[ao];
    if constexpr (NIN == 2) {
      const TI u = p.bmode == BM_ARRAY ? b[bo] : sv;
      y = p.bmode == BM_LEFT ? x : u;
      x = p.bmode == BM_LEFT ? u : x;
    }
    out[oo] = elem<OP, TO, TI>(x, y, p.s, lin, ri, j);
  }
}

// ---------------------------------------------------------------- launcher

struct StridedLaunch {
  const StridedArgs &p;
  unsigned grid;
  const ck_env *env;
  template <int OP, typename TO, typename TI> int run() {
    const auto kern = p.numel <= (int64_t)UINT32_MAX ? ew_strided_kernel<OP, TO, TI, uint32_t>
                                                      : ew_strided_kernel<OP, TO, TI, uint64_t>;
    ck_note(env, kern, kThreads, 0);
    kern<<<grid, kThreads, 0, (cudaStream_t)env->stream>>>(p);
    return (int)cudaGetLastError();
  }
};

}  // namespace

extern "C" const char *ck_ew_strided_supports(const void *desc) {
  const ck_ew_desc *d = (const ck_ew_desc *)desc;
  if (d->ndim < 0 || d->ndim > CK_MAX_DIMS) return "ndim out of range";
  if (d->op == CK_EW_COPY && (d->a_dtype < 0 || d->a_dtype >= CK_NDTYPES)) return "copy source dtype unknown";
  return nullptr;
}

extern "C" int ck_ew_strided(const void *desc, const ck_env *env) {
  const ck_ew_desc *d = (const ck_ew_desc *)desc;
  StridedArgs p = {};
  p.ndim = d->ndim;
  p.bmode = bmode_of(d);
  p.numel = 1;
  for (int k = 0; k < d->ndim; ++k) {
    p.shape[k] = d->shape[k];
    p.ost[k] = d->out_st[k];
    p.ast[k] = d->a_st[k];
    p.bst[k] = d->b_scalar ? 0 : d->b_st[k];
    p.numel *= d->shape[k];
  }
  if (p.numel == 0) return 0;
  p.out = d->out;
  p.a = d->a;
  p.b = d->b;
  p.s = scal_of(d);
  StridedLaunch L{p, grid_for(p.numel, kThreads, env->sm_count, 2048 / kThreads), env};
  return dispatch<true>(d, L);
}
