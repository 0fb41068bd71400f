/*
 * 00_cufft.cu — FFT step 0: cuFFT, the library reference (any length, every kind and layout).
 *
 * The plan comes from the cache (cufft_plans.c: made once per length, batch, layout, kind and device); its work
 * area is taken from the caching allocator for this execution and given back after it (stream order makes that
 * safe). cuFFT's complex-to-real transforms overwrite their input, so C2R runs on a copy of x in the work area.
 * Columns (inner > 1) run one execution per outer slice on a plan strided by inner; two dims at once (n2) one
 * execution of a rank-2 plan batched over outer. cuFFT does not normalise: a scale other than 1 is one more pass
 * over out (scale_kernel).
 * Every cuFFT status is checked and returned as CK_KERR_CUFFT (ck_submit names it).
 * Operands: x contiguous [outer, xlen, inner], out contiguous [outer, outlen, inner] (fft.h).
 */
#include "cufft_plans.h"
#include "fft_common.cuh"

using namespace ckfft;

#define SCALE_BLOCK 256

template <class R> static int rescale(const ck_fft_desc &d, const ck_env *env) {
  using C = typename Cx<R>::T;
  const cudaStream_t st = (cudaStream_t)env->stream;
  const int64_t count = ck_fft_outcount(&d);
  if (d.kind == CK_FFT_C2R) {
    ck_note(env, scale_real_kernel<R>, SCALE_BLOCK, 0);
    scale_real_kernel<R><<<grid_for(count, SCALE_BLOCK), SCALE_BLOCK, 0, st>>>((R *)d.out, count, (R)d.scale);
  } else {
    ck_note(env, scale_kernel<C, R>, SCALE_BLOCK, 0);
    scale_kernel<C, R><<<grid_for(count, SCALE_BLOCK), SCALE_BLOCK, 0, st>>>((C *)d.out, count, (R)d.scale);
  }
  return (int)cudaGetLastError();
}

/* The executions of one plan over the descriptor: for C2R, x is copied to the start of ws (xbytes), and the plan's
 * work area follows at the next 256-byte boundary. */
static int execute(const ck_cufft_api *api, cufftHandle plan, const ck_fft_desc &d, const ck_env *env, char *ws,
                   size_t plan_ws, size_t xbytes) {
  const cudaStream_t st = (cudaStream_t)env->stream;
  int rc;
  if ((rc = api->SetStream(plan, st)) || (rc = api->SetWorkArea(plan, plan_ws ? ws + ((xbytes + 255) & ~(size_t)255) : NULL)))
    return CK_KERR_CUFFT(rc);
  const void *x = d.x;
  if (d.kind == CK_FFT_C2R) {
    ck_order_check(env);
    const cudaError_t e = cudaMemcpyAsync(ws, d.x, xbytes, cudaMemcpyDeviceToDevice, st);
    if (e != cudaSuccess) return (int)e;
    x = ws;
  }
  const size_t xes = d.kind == CK_FFT_R2C ? (d.fp64 ? 8 : 4) : (d.fp64 ? 16 : 8);
  const size_t oes = d.kind == CK_FFT_C2R ? (d.fp64 ? 8 : 4) : (d.fp64 ? 16 : 8);
  const int64_t slices = d.inner == 1 ? 1 : d.outer;
  const int dir = d.inverse ? CUFFT_INVERSE : CUFFT_FORWARD;
  for (int64_t o = 0; o < slices; ++o) {
    const char *xi = (const char *)x + (size_t)(o * ck_fft_xlen(&d) * d.inner) * xes;
    char *oi = (char *)d.out + (size_t)(o * ck_fft_outlen(&d) * d.inner) * oes;
    ck_order_check(env);
    if ((rc = api->XtExec(plan, (void *)xi, oi, dir))) return CK_KERR_CUFFT(rc);
  }
  return (int)cudaGetLastError();
}

extern "C" int ck_fft_cufft(const void *desc, const ck_env *env) {
  const ck_fft_desc &d = *(const ck_fft_desc *)desc;
  const ck_cufft_api *api = ck_cufft(NULL);
  if (!api) return CK_KERR_CUFFT(CUFFT_SETUP_FAILED);
  cufftHandle plan;
  size_t plan_ws = 0;
  int rc = ck_cufft_plan(env->device, &d, &plan, &plan_ws);
  if (rc) return CK_KERR_CUFFT(rc);
  const size_t xbytes = d.kind == CK_FFT_C2R ? (size_t)(d.outer * ck_fft_xlen(&d) * d.inner) * (d.fp64 ? 16 : 8) : 0;
  const size_t bytes = ((xbytes + 255) & ~(size_t)255) + plan_ws;
  char *ws = bytes ? (char *)env->ws_alloc(env->owner, bytes) : NULL;
  if (bytes && !ws) return (int)cudaErrorMemoryAllocation;
  rc = execute(api, plan, d, env, ws, plan_ws, xbytes);
  if (ws) env->ws_free(env->owner, ws);
  if (rc || d.scale == 1.0) return rc;
  return d.fp64 ? rescale<double>(d, env) : rescale<float>(d, env);
}

extern "C" const char *ck_fft_cufft_supports(const void *desc) {
  const char *why;
  return ck_cufft(&why) ? NULL : why;
}
