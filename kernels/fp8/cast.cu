/*
 * cast.cu — contiguous casts to and from the FP8 dtypes on the device (see cast.h). Every value goes through
 * float, or through double from f64 (ck_f64_to_e4m3 rounds once), with kernels/fp8.h's conversions.
 */
#include <cuda_runtime.h>

#include "fp8.h"
#include "fp8/cast.h"

namespace {

__device__ __forceinline__ double load_as(const void *p, int dt, int64_t i) {
  switch (dt) {
  case CK_F32: return ((const float *)p)[i];
  case CK_F64: return ((const double *)p)[i];
  case CK_F16: return ck_f16_to_f32(((const uint16_t *)p)[i]);
  case CK_BF16: return ck_bf16_to_f32(((const uint16_t *)p)[i]);
  case CK_E4M3: return ck_e4m3_to_f32(((const uint8_t *)p)[i]);
  default: return ck_e5m2_to_f32(((const uint8_t *)p)[i]);
  }
}

__device__ __forceinline__ void store_as(void *p, int dt, int64_t i, double v) {
  switch (dt) {
  case CK_F32: ((float *)p)[i] = (float)v; break;
  case CK_F64: ((double *)p)[i] = v; break;
  case CK_F16: ((uint16_t *)p)[i] = ck_f64_to_f16(v); break;
  case CK_BF16: ((uint16_t *)p)[i] = ck_f64_to_bf16(v); break;
  case CK_E4M3: ((uint8_t *)p)[i] = ck_f64_to_e4m3(v); break;
  default: ((uint8_t *)p)[i] = ck_f64_to_e5m2(v); break;
  }
}

/* (a double holds every value of the six dtypes exactly, so loading into it and storing from it rounds once) */
__global__ void fp8_cast_kernel(ck_fp8_cast_desc d) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < d.n; i += stride)
    store_as(d.dst, d.dst_dt, i, load_as(d.src, d.src_dt, i));
}

bool castable(int dt) {
  return dt == CK_F32 || dt == CK_F64 || dt == CK_F16 || dt == CK_BF16 || dt == CK_E4M3 || dt == CK_E5M2;
}

} // namespace

extern "C" const char *ck_fp8_cast_supports(const ck_fp8_cast_desc *d) {
  if (!castable(d->dst_dt) || !castable(d->src_dt)) return "the FP8 cast takes f32, f64, f16, bf16, e4m3 and e5m2";
  if (d->dst_dt != CK_E4M3 && d->dst_dt != CK_E5M2 && d->src_dt != CK_E4M3 && d->src_dt != CK_E5M2)
    return "neither side is FP8";
  return NULL;
}

extern "C" int ck_fp8_cast(const void *desc, const ck_env *env) {
  const ck_fp8_cast_desc *d = (const ck_fp8_cast_desc *)desc;
  if (d->n <= 0) return 0;
  const int block = 256;
  const int64_t want = (d->n + block - 1) / block, cap = (int64_t)env->sm_count * 16;
  const int grid = (int)(want < cap ? want : cap);
  ck_note(env, fp8_cast_kernel, block, 0);
  fp8_cast_kernel<<<grid, block, 0, (cudaStream_t)env->stream>>>(*d);
  return (int)cudaGetLastError();
}
