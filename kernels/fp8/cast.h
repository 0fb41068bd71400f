/*
 * cast.h — the one CUDA kernel the FP8 dtypes need to move: a contiguous cast between an FP8 dtype (e4m3, e5m2)
 * and a float dtype (f32, f64, f16, bf16) or the other FP8 dtype, with kernels/fp8.h's conversions (the host's
 * own: bit-identical results). src/ops/copy.c stages everything else (views, integer sides) through contiguous
 * copies, so the kernel stays one grid-stride loop. Not a ladder: a cast is bound by memory, and a byte-per-
 * element loop of 16-byte accesses per thread is the whole story (the elementwise ladder teaches the rest).
 */
#ifndef CK_FP8_CAST_H
#define CK_FP8_CAST_H

#include "ck_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ck_fp8_cast_desc {
  void *dst;
  const void *src;
  int64_t n;
  int dst_dt, src_dt; /* ck_dtype: one of them e4m3 or e5m2, the other f32, f64, f16, bf16, e4m3 or e5m2 */
} ck_fp8_cast_desc;

/* Whether the pair is one the kernel converts (NULL) or why not. */
const char *ck_fp8_cast_supports(const ck_fp8_cast_desc *d);
/* The launcher (ck_kernels.h's contract: 0 or a cudaError_t; notes its launch). */
int ck_fp8_cast(const void *desc, const ck_env *env);

#ifdef __cplusplus
}
#endif

#endif
