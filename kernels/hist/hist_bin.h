/*
 * hist_bin.h — the histogram's bin rule, one text for the host oracle (C) and the kernels (CUDA), so that
 * both put every value, boundaries included, in the same bin: (v - lo) * bins / (hi - lo) in double (a
 * subtraction, a product and a division, each correctly rounded on both; nothing for a compiler to fuse),
 * truncated; v == hi goes to the last bin; NaN and values outside [lo, hi] give -1 (not counted).
 */
#ifndef CK_HIST_BIN_H
#define CK_HIST_BIN_H

#include <stdint.h>

#ifdef __CUDACC__
#define CK_HIST_HD __host__ __device__ __forceinline__
#else
#define CK_HIST_HD static inline
#endif

CK_HIST_HD int64_t ck_hist_bin(double v, double lo, double hi, int64_t bins) {
  if (!(v >= lo && v <= hi)) return -1;
  int64_t b = (int64_t)((v - lo) * (double)bins / (hi - lo));
  return b >= bins ? bins - 1 : b;
}

#endif
