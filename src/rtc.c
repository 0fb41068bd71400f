/*
 * rtc.c — run-time kernels: CUDA C++ source string -> NVRTC -> CUBIN for this device -> cudaLibrary ->
 * launch on the context's stream. No build step: users write kernels in a Lua string.
 *
 * The entry is found through an NVRTC name expression, so both extern "C" kernels and C++ ones (templates
 * instantiated by name, e.g. "scale<float>") work. The compile log is returned on failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_internal.h"

struct ck_rtc_kernel {
  cudaLibrary_t lib;
  cudaKernel_t kern;
};

#define NVRTC(x)                                                                                          \
  do {                                                                                                    \
    nvrtcResult r_ = (x);                                                                                 \
    if (r_ != NVRTC_SUCCESS) {                                                                            \
      st = ck_error(ctx, CK_ERR_NVRTC, "kernel '%s': %s failed: %s", entry, #x, nvrtcGetErrorString(r_));  \
      goto cleanup;                                                                                       \
    }                                                                                                     \
  } while (0)

ck_status ck_rtc_compile(ck_ctx *ctx, const char *src, const char *entry, const char *opts, ck_rtc_kernel **out,
                         char **log_out) {
  ck_status st = CK_OK;
  nvrtcProgram prog = NULL;
  char *cubin = NULL, *optbuf = NULL;
  const char *argv[64];
  int argc = 0;
  char arch[32];
  ck_rtc_kernel *k = NULL;
  *out = NULL;
  if (log_out) *log_out = NULL;
  if (!ctx->has_cuda)
    return ck_error(ctx, CK_ERR_DEVICE, "kernel '%s': run-time kernels need a CUDA device (%s)", entry,
                    ctx->info.why_host);
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d%s", ctx->info.cc_major, ctx->info.cc_minor,
           ctx->info.cc_major == 9 ? "a" : "");
  argv[argc++] = arch;
  argv[argc++] = "--std=c++17";
  argv[argc++] = "-default-device";
  if (opts && *opts) { /* user options, split on spaces */
    optbuf = strdup(opts);
    if (!optbuf) return ck_error(ctx, CK_ERR_OOM, "out of host memory");
    for (char *tok = strtok(optbuf, " \t"); tok && argc < 64; tok = strtok(NULL, " \t")) argv[argc++] = tok;
  }
  NVRTC(nvrtcCreateProgram(&prog, src, "cukern_kernel.cu", 0, NULL, NULL));
  NVRTC(nvrtcAddNameExpression(prog, entry));
  nvrtcResult cr = nvrtcCompileProgram(prog, argc, argv);
  size_t logn = 0;
  if (nvrtcGetProgramLogSize(prog, &logn) == NVRTC_SUCCESS && logn > 1 && log_out) {
    *log_out = malloc(logn);
    if (*log_out && nvrtcGetProgramLog(prog, *log_out) != NVRTC_SUCCESS) (*log_out)[0] = 0;
  }
  if (cr != NVRTC_SUCCESS) {
    st = ck_error(ctx, CK_ERR_NVRTC, "kernel '%s': compilation failed (%s):\n%s", entry, nvrtcGetErrorString(cr),
                  log_out && *log_out ? *log_out : "(no log)");
    goto cleanup;
  }
  const char *lowered = NULL;
  NVRTC(nvrtcGetLoweredName(prog, entry, &lowered));
  size_t n = 0;
  NVRTC(nvrtcGetCUBINSize(prog, &n));
  if (!(cubin = malloc(n))) {
    st = ck_error(ctx, CK_ERR_OOM, "out of host memory");
    goto cleanup;
  }
  NVRTC(nvrtcGetCUBIN(prog, cubin));
  if (!(k = calloc(1, sizeof *k))) {
    st = ck_error(ctx, CK_ERR_OOM, "out of host memory");
    goto cleanup;
  }
  CK_CUDA(ctx, cudaLibraryLoadData(&k->lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
  CK_CUDA(ctx, cudaLibraryGetKernel(&k->kern, k->lib, lowered));
  *out = k;
  k = NULL;
cleanup:
  if (st) ck_error_prefix(ctx, st, "ck.kernel");
  if (k) {
    if (k->lib) cudaLibraryUnload(k->lib);
    free(k);
  }
  free(cubin);
  free(optbuf);
  if (prog) nvrtcDestroyProgram(&prog);
  return st;
}

ck_status ck_rtc_launch(ck_ctx *ctx, ck_rtc_kernel *k, const unsigned grid[3], const unsigned block[3], size_t smem,
                        void **args) {
  ck_status st = CK_OK;
  if (smem > 48 * 1024)
    CK_CUDA(ctx, cudaKernelSetAttributeForDevice(k->kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem, 0));
  dim3 g = {grid[0], grid[1], grid[2]}, b = {block[0], block[1], block[2]};
  cudaError_t e = cudaLaunchKernel((const void *)k->kern, g, b, args, smem, ctx->stream);
  return ck_after_launch(ctx, (int)e, "kernel launch");
cleanup:
  return st;
}

void ck_rtc_free(ck_rtc_kernel *k) {
  if (!k) return;
  if (k->lib) cudaLibraryUnload(k->lib);
  free(k);
}
