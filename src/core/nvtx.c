/*
 * nvtx.c — NVTX ranges (issue 36), so that Nsight Systems and Nsight Compute show the script's structure: ck.nvtx's
 * push/pop/range, and with CUKERN_NVTX=1 one range per op named after the Lua line that called it (the binding
 * names it; src/lua/l_ops.c).
 *
 * NVTX3 is header-only and comes with the CUDA toolkit: without a profiler attached each call is a test of a
 * function pointer, and nothing is linked. Its injection loader converts a dlsym result to a function pointer, which
 * ISO C does not allow, so -Wpedantic is off for the header alone.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop

#include "ck.h"

void ck_nvtx_push(const char *name) { nvtxRangePushA(name); }

int ck_nvtx_pop(void) { return nvtxRangePop(); }

bool ck_nvtx_ops(void) {
  static int on = -1; /* (read once: the environment of the process) */
  if (on < 0) {
    const char *v = getenv("CUKERN_NVTX");
    on = v && v[0] && strcmp(v, "0") != 0;
  }
  return on;
}
