/*
 * nvtx_log.c — an NVTX injection library for spec/nvtx_spec.lua (issue 36): what Nsight would see, without Nsight.
 * NVTX3 loads the library named by NVTX_INJECTION64_PATH on the first NVTX call and asks it for callbacks; this one
 * takes nvtxRangePushA and nvtxRangePop and appends "push <name>" / "pop" lines to the file named by NVTX_LOG, so a
 * spec on a machine without a GPU or a profiler can check the ranges cukern opens (CUKERN_NVTX=1: one per op, named
 * after the calling Lua line; ck.nvtx.range/push/pop).
 *   cc -shared -fPIC -I$CUDA_HOME/include spec/c/nvtx_log.c -o build/nvtx_log.so
 */
#include <stdio.h>
#include <stdlib.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop

static FILE *log_file;
static int depth;

static int push_a(const char *name) {
  if (log_file) fprintf(log_file, "push %s\n", name), fflush(log_file);
  return depth++;
}

static int pop(void) {
  if (log_file) fputs("pop\n", log_file), fflush(log_file);
  return --depth;
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get_table(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable core = NULL;
  unsigned int n = 0;
  if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &n) || !core) return 0;
  const char *path = getenv("NVTX_LOG");
  log_file = path ? fopen(path, "w") : NULL;
  *core[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)push_a;
  *core[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)pop;
  return 1;
}
