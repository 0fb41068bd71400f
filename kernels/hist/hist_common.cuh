/*
 * hist_common.cuh — what the histogram rungs share (issue 33): an element of any dtype as a double (the bin
 * rule's input, hist_bin.h), and the dtype dispatch.
 */
#ifndef CK_HIST_COMMON_CUH
#define CK_HIST_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "ck_kernels.h"
#include "half.h"
#include "hist_bin.h"
#include "../scan/scan_common.cuh" /* Ws, cdiv, grid_for, with_temp */

namespace ckhist {

using ckscan::cdiv;
using ckscan::grid_for;
using ckscan::with_temp;

template <class T> __host__ __device__ __forceinline__ double as_double(T x) {
  if constexpr (std::is_same_v<T, ck_f16_t>) return (double)ck_f16_to_f32(x.bits);
  else if constexpr (std::is_same_v<T, ck_bf16_t>) return (double)ck_bf16_to_f32(x.bits);
  else return (double)x;
}

/* The bin of element x (or -1), for the descriptor's range. */
template <class T> struct BinOf {
  double lo, hi;
  int64_t bins;
  __host__ __device__ __forceinline__ int operator()(const T &x) const { return (int)ck_hist_bin(as_double(x), lo, hi, bins); }
};

template <class F> int dispatch(const ck_hist_desc &d, F &&f) {
  switch (d.dtype) {
  case CK_F32: return f((const float *)d.x);
  case CK_F64: return f((const double *)d.x);
  case CK_I32: return f((const int32_t *)d.x);
  case CK_F16: return f((const ck_f16_t *)d.x);
  case CK_BF16: return f((const ck_bf16_t *)d.x);
  case CK_BOOL:
  case CK_U8: return f((const uint8_t *)d.x);
  case CK_I8: return f((const int8_t *)d.x);
  case CK_I16: return f((const int16_t *)d.x);
  case CK_U32: return f((const uint32_t *)d.x);
  case CK_I64: return f((const int64_t *)d.x);
  default: return (int)cudaErrorInvalidValue;
  }
}

} // namespace ckhist

#endif
