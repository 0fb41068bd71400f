/*
 * cusolver_dl.c — loads cuSOLVER at run time (why: cusolver_dl.h). The handles are the device contexts' (made and
 * destroyed through this table by src/core/context.c, handed to launchers as ck_env.cusolver).
 *
 * The library is looked for as libcusolver.so.12 (the soname of CUDA 12 and 13 toolkits), first by name (the
 * loader's path, core.so's run path), then beside the libcublas this process already uses (dladdr), so that a
 * toolkit found at build time is found again. A missing routine makes the whole load fail with its name.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cublas_v2.h>

#include "../ck_kernels.h"
#include "cusolver_dl.h"

static ck_cusolver_api api;
static char why_not[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *open_lib(void) {
  static const char *const names[] = {"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so"};
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
  }
  Dl_info di; /* beside libcublas */
  void *f;
  cublasStatus_t (*create)(cublasHandle_t *) = cublasCreate_v2;
  memcpy(&f, &create, sizeof f);
  if (dladdr(f, &di) && di.dli_fname) {
    char path[512];
    const char *slash = strrchr(di.dli_fname, '/');
    if (slash) {
      snprintf(path, sizeof path, "%.*s/libcusolver.so.12", (int)(slash - di.dli_fname), di.dli_fname);
      void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h) return h;
    }
  }
  return NULL;
}

static void load(void) {
  void *h = open_lib();
  if (!h) {
    snprintf(why_not, sizeof why_not, "cuSOLVER not found (libcusolver.so.12: %s)", dlerror());
    return;
  }
  static const struct {
    const char *name;
    size_t off;
  } syms[] = {
#define CK_CUSOLVER_ROW(n) {"cusolverDn" #n, offsetof(ck_cusolver_api, n)},
      CK_CUSOLVER_SYMS(CK_CUSOLVER_ROW)
#undef CK_CUSOLVER_ROW
  };
  for (size_t i = 0; i < sizeof syms / sizeof *syms; ++i) {
    void *f = dlsym(h, syms[i].name);
    if (!f) {
      snprintf(why_not, sizeof why_not, "cuSOLVER was found but has no %s", syms[i].name);
      return;
    }
    memcpy((char *)&api + syms[i].off, &f, sizeof f);
  }
}

const ck_cusolver_api *ck_cusolver(const char **why) {
  pthread_once(&once, load);
  if (why) *why = why_not;
  return why_not[0] ? NULL : &api;
}

const char *ck_cusolver_status_name(int st) {
  switch (st) {
  case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
  case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
  case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
  case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
  case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
  case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
  case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
  case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
  case CUSOLVER_STATUS_IRS_NOT_SUPPORTED: return "CUSOLVER_STATUS_IRS_NOT_SUPPORTED";
  case CUSOLVER_STATUS_IRS_OUT_OF_RANGE: return "CUSOLVER_STATUS_IRS_OUT_OF_RANGE";
  case CUSOLVER_STATUS_IRS_INTERNAL_ERROR: return "CUSOLVER_STATUS_IRS_INTERNAL_ERROR";
  default: return "a cuSOLVER error";
  }
}
