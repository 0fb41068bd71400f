/*
 * sort_common.cuh — what every rung of the sort ladder shares (issue 33): keys, the line layout, and the
 * steps before and after the sort proper.
 *
 * Keys. Each dtype's bits map to an unsigned integer of its width (K = u8, u16, u32, u64) that orders as the
 * values do: floats flip every bit of negatives and the sign bit of the rest (the sign-flip trick), signed
 * integers flip the sign bit, unsigned integers and bool are their bits. -0 is mapped to +0 (NumPy sorts
 * them as equal and keeps their order) and every NaN to the all-ones key (NaN is the largest value, sorted
 * last, as NumPy and MATLAB do). Descending sorts complement the key, so NaN comes first (torch, MATLAB), and
 * the sort stays stable (equal keys keep their order).
 * Lines. x is [outer, len, inner]; line l = o*inner + i has its elements `inner` apart. make_keys writes each
 * line's keys contiguously (keys[l*len + r]) with the payload g = l*len + r (u32: n < 2^32), so a rung sorts
 * the pairs (key, g) of every line; the rungs that sort the whole array at once (1-4) order by (line, key, g),
 * the line being g / len. gather() then writes out[o, j, i] = x[o, r, i] and idx = r + 1 (1-based i64) for
 * the first k positions j of each line: values are copied, not rebuilt from keys, so -0 and NaN payloads
 * survive.
 */
#ifndef CK_SORT_COMMON_CUH
#define CK_SORT_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>
#include <type_traits>

#include "ck_kernels.h"
#include "../scan/scan_common.cuh" /* Ws, cdiv, grid_for, with_temp */

namespace cksort {

using ckscan::cdiv;
using ckscan::grid_for;
using ckscan::with_temp;
using ckscan::Ws;

/* Swap a rung's ping-pong buffers after a pass. */
template <class K> __host__ inline void swap_buffers(K *&ka, K *&kb, uint32_t *&va, uint32_t *&vb) {
  K *tk = ka;
  ka = kb;
  kb = tk;
  uint32_t *tv = va;
  va = vb;
  vb = tv;
}

// ---------------------------------------------------------------- keys

enum { KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED };

template <class K, int KIND>
__device__ __forceinline__ K to_key(K u, bool descending) {
  constexpr K SIGN = (K)((K)1 << (sizeof(K) * 8 - 1));
  K k;
  if constexpr (KIND == KIND_FLOAT) {


    if (u == SIGN) u = 0; /* -0 -> +0 */
    k = (u & SIGN) ? (K)~u : (K)(u | SIGN);
  } else if constexpr (KIND == KIND_SIGNED) {
    k = u ^ SIGN;
  } else {
    k = u;
  }
  return descending ? (K)~k : k;
}

/* Is the float with bits u (width K, exponent bits EB) a NaN? */
template <class K, int EB> __device__ __forceinline__ bool is_nan_bits(K u) {
  constexpr int W = sizeof(K) * 8;
  constexpr K EXP = (K)((((K)1 << EB) - 1) << (W - 1 - EB));
  constexpr K MAN = (K)(((K)1 << (W - 1 - EB)) - 1);
  return (u & EXP) == EXP && (u & MAN) != 0;
}

/* The key of the value with bits u: to_key, with every NaN the largest (smallest descending). */
template <class K, int KIND, int EB> __device__ __forceinline__ K key_of(K u, bool descending) {
  if constexpr (KIND == KIND_FLOAT)
    if (is_nan_bits<K, EB>(u)) return descending ? (K)0 : (K)~(K)0;
  return to_key<K, KIND>(u, descending);
}

/* keys[l*len + r] and vals[l*len + r] = l*len + r for every line l = o*inner + i. */
template <class K, int KIND, int EB>
__global__ void __launch_bounds__(256) sort_make_keys_kernel(const K *__restrict__ x, K *keys, uint32_t *vals,
                                                             int64_t outer, int64_t len, int64_t inner,
                                                             int descending) {
  const int64_t n = outer * len * inner;
  for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < n; g += (int64_t)gridDim.x * blockDim.x) {
    const int64_t l = g / len, r = g % len;
    const int64_t o = l / inner, i = l % inner;
    K u = x[(o * len + r) * inner + i];
    keys[g] = key_of<K, KIND, EB>(u, descending != 0);
    vals[g] = (uint32_t)g;
  }
}

/* out[o, j, i] = x[o, r, i], idx[o, j, i] = r + 1 for j < k, r = sorted[l*len + j] - l*len (each output only
 * where given). */
template <class E>
__global__ void __launch_bounds__(256) sort_gather_kernel(const E *__restrict__ x, const uint32_t *__restrict__ sorted,
                                                          E *out, int64_t *idx, int64_t outer, int64_t len,
                                                          int64_t inner, int64_t k) {
  const int64_t n = outer * k * inner;
  for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < n; q += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = q % inner, j = (q / inner) % k, o = q / (inner * k);
    const int64_t l = o * inner + i;
    const int64_t r = (int64_t)sorted[l * len + j] - l * len;
    if (out) out[q] = x[(o * len + r) * inner + i];
    if (idx) idx[q] = r + 1; /* a sort without indices ({indices = false}) passes none */
  }
}

// ---------------------------------------------------------------- the frame every rung runs in

/* The rung's sort proper: `template <class K> int operator()(const ck_env *env, K *keys, uint32_t *vals, K *keys2,
 * uint32_t *vals2, int64_t n, int64_t len, int64_t lines, int key_bits, uint32_t **sorted)` sorts the n pairs by
 * (line, key, g) (any buffers may be used; *sorted says where the payloads ended). */
template <class K, int KIND, int EB, class Sorter>
static int run_sort_as(const ck_sort_desc &d, const ck_env *env, const Sorter &sorter) {
  cudaStream_t s = (cudaStream_t)env->stream;
  const int64_t n = d.outer * d.len * d.inner, lines = d.outer * d.inner;
  Ws w(env, (size_t)n * 2 * (sizeof(K) + sizeof(uint32_t)) + 64);
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  K *keys = (K *)w.p, *keys2 = keys + n;
  uint32_t *vals = (uint32_t *)(((uintptr_t)(keys2 + n) + 15) & ~(uintptr_t)15), *vals2 = vals + n;
  ck_note(env, sort_make_keys_kernel<K, KIND, EB>, 256, 0);
  sort_make_keys_kernel<K, KIND, EB><<<grid_for(cdiv(n, 256)), 256, 0, s>>>((const K *)d.x, keys, vals, d.outer, d.len,
                                                                          d.inner, d.descending);
  int err = (int)cudaGetLastError();
  if (err) return err;
  uint32_t *sorted = vals;
  if ((err = sorter(env, keys, vals, keys2, vals2, n, d.len, lines, (int)sizeof(K) * 8, &sorted))) return err;
  ck_note(env, sort_gather_kernel<K>, 256, 0);
  sort_gather_kernel<K><<<grid_for(cdiv(d.outer * d.k * d.inner, 256)), 256, 0, s>>>(
      (const K *)d.x, sorted, (K *)d.out, d.idx, d.outer, d.len, d.inner, d.k);
  return (int)cudaGetLastError();
}

/* A dtype's key type, kind and exponent bits: f(KeyTag<K, KIND, EB>{}). */
template <class K, int KIND, int EB> struct KeyTag {
  using key_t = K;
  static constexpr int kind = KIND, eb = EB;
};
template <class F> static int by_key(int dtype, F &&f) {
  switch (dtype) {
  case CK_F32: return f(KeyTag<uint32_t, KIND_FLOAT, 8>{});
  case CK_F64: return f(KeyTag<uint64_t, KIND_FLOAT, 11>{});
  case CK_F16: return f(KeyTag<uint16_t, KIND_FLOAT, 5>{});
  case CK_BF16: return f(KeyTag<uint16_t, KIND_FLOAT, 8>{});
  case CK_I32: return f(KeyTag<uint32_t, KIND_SIGNED, 0>{});
  case CK_I8: return f(KeyTag<uint8_t, KIND_SIGNED, 0>{});
  case CK_I16: return f(KeyTag<uint16_t, KIND_SIGNED, 0>{});
  case CK_I64: return f(KeyTag<uint64_t, KIND_SIGNED, 0>{});
  case CK_BOOL:
  case CK_U8: return f(KeyTag<uint8_t, KIND_UNSIGNED, 0>{});
  case CK_U32: return f(KeyTag<uint32_t, KIND_UNSIGNED, 0>{});
  default: return (int)cudaErrorInvalidValue;
  }
}

/* The descriptor's dtype to its key type, kind and exponent bits. */
template <class Sorter> static int run_sort(const ck_sort_desc &d, const ck_env *env, const Sorter &sorter) {
  return by_key(d.dtype, [&](auto tag) {
    using Tg = decltype(tag);
    return run_sort_as<typename Tg::key_t, Tg::kind, Tg::eb>(d, env, sorter);
  });
}

/* The order of the rungs that sort every line at once: (line, key, g), the line being g / len. */
template <class K> struct Less {
  int64_t len;
  __device__ __forceinline__ bool operator()(K ka, uint32_t ga, K kb, uint32_t gb) const {
    const uint32_t la = (uint32_t)(ga / (uint64_t)len), lb = (uint32_t)(gb / (uint64_t)len);
    if (la != lb) return la < lb;
    if (ka != kb) return ka < kb;
    return ga < gb;
  }
};

/* supports() shared by the rungs: 32-bit payloads. */
static inline const char *check_n(const ck_sort_desc *d) {
  if ((double)d->outer * (double)d->len * (double)d->inner >= 4294967295.0)
    return "sorts fewer than 2^32 - 1 elements (32-bit payloads)";
  return nullptr;
}

} // namespace cksort

#endif
