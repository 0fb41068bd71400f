/*
 * ix_common.cuh — the index ladder's shared plumbing (kernels/index/): element types by size, the walk from a
 * position of the index space to the operands' offsets, index loads and checks, the accumulating adds, the
 * check pass of the scatters. No rung's kernel body lives here.
 */
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

#include "../ck_kernels.h"
#include "../half.h"

namespace ckix {

/* An element of ES bytes, moved as one value (16: a future complex128, 16-byte aligned by the allocator). */
template <int ES> struct Elem;
template <> struct Elem<1> { using T = uint8_t; };
template <> struct Elem<2> { using T = uint16_t; };
template <> struct Elem<4> { using T = uint32_t; };
template <> struct Elem<8> { using T = unsigned long long; };
template <> struct Elem<16> { using T = uint4; };

/* flag[k] when nothing was found: bytes 0x7f (a large positive i64), set by the op before the launch
 * (src/ops/op_index.c: a memset of device flags, or the host's store into the check word). */
constexpr long long NONE = 0x7f7f7f7f7f7f7f7fLL;

__device__ __forceinline__ int64_t load_ix(const void *ix, int dt, int64_t off) {
  return dt == CK_I64 ? ((const int64_t *)ix)[off] : (int64_t)((const int32_t *)ix)[off];
}

/* A bad index found: flag[k] becomes some bad position (whichever store lands last). Only "found or not" is read:
 * the host scans the index again for the first bad one, so both backends report the same position. A plain store,
 * not an atomic: a gather's flag is the check word, pinned host memory written over the bus, where a device atomic
 * is not one. */
__device__ __forceinline__ void note_bad(int64_t *flag, int k, int64_t pos) {
  if (flag) *(volatile long long *)&flag[k] = (long long)pos;
}

/* The offsets of index-space position p (row-major over shape) in up to four stride sets. */
struct Offs {
  int64_t out, src, ix, y, dup;
};
__device__ __forceinline__ Offs walk(const ck_ix_desc &d, int64_t p) {
  Offs o = {0, 0, 0, 0, 0};
  for (int k = d.nd - 1; k >= 0; --k) {
    const int64_t n = d.shape[k];
    const int64_t i = p % n;
    p /= n;
    o.out += i * d.out_st[k];
    o.src += i * d.src_st[k];
    o.ix += i * d.ix_st[k];
    o.y += i * d.y_st[k];
    o.dup += i * d.dup_st[k];
  }
  return o;
}

/* The writing kernels of a scatter start here: nothing is written when the check found anything. */
__device__ __forceinline__ bool check_failed(const ck_ix_desc &d) {
  if (!d.flag) return false;
  const volatile long long *f = (const volatile long long *)d.flag;
  return f[0] != NONE || f[1] != NONE;
}

/* ---------------------------------------------------------------- accumulating adds, one per dtype
 * 4- and 8-byte dtypes use the hardware's atomicAdd (f32, f64, i32, u32, i64 as two's complement); 1- and
 * 2-byte dtypes a compare-and-swap on their aligned 32-bit word (f16/bf16 add in f32 and round once; bool is a
 * logical or). Float sums of repeated destinations therefore come in whatever order the atomics land. */
template <class T> struct Add;
#define CKIX_HW_ADD(T, U)                                                                                                    \
  template <> struct Add<T> {                                                                                                \
    using S = T;                                                                                                             \
    __device__ static void apply(S *p, S v) { atomicAdd((U *)p, (U)v); }                                                     \
  };
CKIX_HW_ADD(float, float)
CKIX_HW_ADD(double, double)
CKIX_HW_ADD(int32_t, int)
CKIX_HW_ADD(uint32_t, unsigned)
CKIX_HW_ADD(int64_t, unsigned long long)
#undef CKIX_HW_ADD

template <class S, class F> __device__ void cas_small(S *p, F f) {
  const uintptr_t a = (uintptr_t)p;
  unsigned *w = (unsigned *)(a & ~(uintptr_t)3);
  const int shift = (int)(a & 3) * 8;
  const unsigned mask = (sizeof(S) == 1 ? 0xffu : 0xffffu) << shift;
  unsigned old = *w, assumed;
  do {
    assumed = old;
    const S cur = (S)((assumed & mask) >> shift);
    const S nv = f(cur);
    old = atomicCAS(w, assumed, (assumed & ~mask) | (((unsigned)nv << shift) & mask));
  } while (assumed != old);
}
struct F16 {};
struct BF16 {};
struct Bool {};
template <> struct Add<F16> {
  using S = uint16_t;
  __device__ static void apply(S *p, S v) {
    cas_small(p, [v](S c) { return ck_f32_to_f16(ck_f16_to_f32(c) + ck_f16_to_f32(v)); });
  }
};
template <> struct Add<BF16> {
  using S = uint16_t;
  __device__ static void apply(S *p, S v) {
    cas_small(p, [v](S c) { return ck_f32_to_bf16(ck_bf16_to_f32(c) + ck_bf16_to_f32(v)); });
  }
};
template <> struct Add<Bool> {
  using S = uint8_t;
  __device__ static void apply(S *p, S v) { cas_small(p, [v](S c) { return (S)((c | v) ? 1 : 0); }); }
};
#define CKIX_CAS_ADD(T)                                                                                                      \
  template <> struct Add<T> {                                                                                                \
    using S = T;                                                                                                             \
    __device__ static void apply(S *p, S v) { cas_small(p, [v](S c) { return (S)(c + v); }); }                              \
  };
CKIX_CAS_ADD(uint8_t)
CKIX_CAS_ADD(int8_t)
CKIX_CAS_ADD(int16_t)
#undef CKIX_CAS_ADD

template <class A> __global__ void scatter_add_k(ck_ix_desc d) {
  using S = typename A::S;
  if (check_failed(d)) return;
  for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < d.numel; p += (int64_t)gridDim.x * blockDim.x) {
    const Offs o = walk(d, p);
    const int64_t i = load_ix(d.ix, d.ix_dt, o.ix);
    if (i < 1 || i > d.bound) continue; /* never reached after the check; kept so no launch can fault */
    A::apply((S *)d.out + o.out + (i - 1) * d.dim_st, ((const S *)d.src)[o.src]);
  }
}

/* The launches of the accumulating scatter, by dtype. */
template <class Launch> int by_add_dtype(int dt, Launch &&l) {
  switch (dt) {
  case CK_F32: return l(Add<float>());
  case CK_F64: return l(Add<double>());
  case CK_I32: return l(Add<int32_t>());
  case CK_U32: return l(Add<uint32_t>());
  case CK_I64: return l(Add<int64_t>());
  case CK_F16: return l(Add<F16>());
  case CK_BF16: return l(Add<BF16>());
  case CK_BOOL: return l(Add<Bool>());
  case CK_U8: return l(Add<uint8_t>());
  case CK_I8: return l(Add<int8_t>());
  case CK_I16: return l(Add<int16_t>());
  default: return (int)cudaErrorInvalidValue;
  }
}

/* Element-size dispatch: f(Elem-size tag) for 1, 2, 4, 8, 16. */
template <int ES> struct Es {
  static constexpr int value = ES;
};
template <class Launch> int by_size(int es, Launch &&l) {
  switch (es) {
  case 1: return l(Es<1>());
  case 2: return l(Es<2>());
  case 4: return l(Es<4>());
  case 8: return l(Es<8>());
  case 16: return l(Es<16>());
  default: return (int)cudaErrorInvalidValue;
  }
}

inline unsigned grid_for(int64_t n, int block, const ck_env *env, int per_sm = 32) {
  int64_t g = (n + block - 1) / block;
  const int64_t cap = (int64_t)(env->sm_count > 0 ? env->sm_count : 80) * per_sm;
  if (g > cap) g = cap;
  return (unsigned)(g < 1 ? 1 : g);
}

/* Scatter family, shared by the rungs: the check pass (with its bitmap) and the add. Returns 0 or a cudaError. */
int scatter_prologue(const ck_ix_desc &d, const ck_env *env, void **bits_out);
int scatter_add_launch(const ck_ix_desc &d, const ck_env *env);
/* Whether strides st walk the descriptor's shape in row-major order with no gaps (dims of 1 ignored). */
inline bool contiguous_over(const ck_ix_desc &d, const int64_t *st) {
  int64_t want = 1;
  for (int k = d.nd - 1; k >= 0; --k) {
    if (d.shape[k] != 1 && st[k] != want) return false;
    want *= d.shape[k];
  }
  return true;
}

/* q = p / n and r = p % n for p >= 0, n > 0: in 32 bits while both fit (a few instructions; a 64-bit division
 * is a call), else in 64. Every index rung's position arithmetic goes through it. */
__host__ __device__ __forceinline__ void divmod(int64_t p, int64_t n, int64_t &q, int64_t &r) {
  if (((p | n) >> 32) == 0) {
    const uint32_t uq = (uint32_t)p / (uint32_t)n;
    q = uq, r = (int64_t)((uint32_t)p - uq * (uint32_t)n);
  } else {
    q = p / n, r = p - q * n;
  }
}

/* nonzero's writers of row k of an [n, nd] result as position p's 1-based row-major subscripts (rung 0 through a
 * tabulate_output_iterator, rung 3 directly). */
struct Subs2 { /* [rows, cols]: one division */
  int64_t *out;
  int64_t cols;
  __host__ __device__ __forceinline__ void operator()(int64_t k, int64_t p) const {
    int64_t q, r;
    divmod(p, cols, q, r);
    out[2 * k] = q + 1;
    out[2 * k + 1] = r + 1;
  }
};
struct SubsN { /* any number of dims */
  int64_t *out;
  int nd;
  int64_t shape[CK_MAX_DIMS];
  __host__ __device__ __forceinline__ void operator()(int64_t k, int64_t p) const {
    int64_t *row = out + k * nd;
    for (int j = nd - 1; j > 0; --j) {
      int64_t q, r;
      divmod(p, shape[j], q, r);
      row[j] = r + 1;
      p = q;
    }
    row[0] = p + 1;
  }
};

/* Rung 3 (03_flags.cu): whether it takes this compaction in rung 0's place (the default; CUKERN_IX_FLAGS=0: not). */
extern "C" int ck_index_flags_preferred(const void *desc);
/* cat: one launch per CK_CAT_MAX inputs; `wide`: the widest move (<= 16 bytes) every input's geometry allows. */
int cat_launch(const ck_ix_desc &d, const ck_env *env, bool wide);

} // namespace ckix
