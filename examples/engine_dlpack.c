/*
 * engine_dlpack.c — a C "engine" that hands its own buffers to a Lua script through DLPack and takes them back, with
 * no copy either way (src/cukern.h, issue 36).
 *
 * 1. The engine owns a row-major 6 x 9 f32 matrix. It exports the transposed 9 x 6 view of its columns 2..7 as a
 *    DLManagedTensor (NumPy-style strides {1, 9}, a byte_offset of two elements) and pushes it with cukern_push_dlpack.
 *    The script scales it in place and returns a strided view of it (every other row); the engine exports that with
 *    cukern_to_dlpack and checks that it points into its own buffer, with the strides and offset of the view, and that
 *    the values are its own computation. The engine's deleter runs exactly once, after the last array went.
 * 2. The same with a device buffer of the engine's (cudaMalloc) on a machine with a GPU, with the engine's own CUDA
 *    stream shared with the script (cukern_set_stream), and a host buffer page-locked on request (cukern_pin_buffer).
 *
 *   build/engine_dlpack [cukern checkout]      (spec/embed_spec.lua builds and runs it in `make test`)
 * Prints one line per check and "engine: all ok" last; the exit status is 0 only if every check passed.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <dlpack/dlpack.h>
#include "embed_util.h"

enum { R = 6, C = 9 };

// ---------------------------------------------------------------- the engine's side of DLPack

/* The engine's export: a view of its buffer; the deleter only counts (the engine keeps the memory). */
typedef struct {
  DLManagedTensor m;
  int64_t shape[2], strides[2];
  int deleted;
} engine_view;

static void engine_delete(DLManagedTensor *m) { ((engine_view *)m->manager_ctx)->deleted++; }

/* Columns 2..7 of the R x C row-major buffer, transposed: shape {6, R}, strides {1, C}, offset 2 elements. */
static void export_columns(engine_view *v, void *data, DLDeviceType where, int id) {
  memset(v, 0, sizeof *v);
  v->shape[0] = 6, v->shape[1] = R;
  v->strides[0] = 1, v->strides[1] = C;
  DLTensor *t = &v->m.dl_tensor;
  t->data = data;
  t->device.device_type = where;
  t->device.device_id = id;
  t->ndim = 2;
  t->dtype.code = kDLFloat, t->dtype.bits = 32, t->dtype.lanes = 1;
  t->shape = v->shape;
  t->strides = v->strides;
  t->byte_offset = 2 * sizeof(float);
  v->m.manager_ctx = v;
  v->m.deleter = engine_delete;
}

/* The script: x (6 x R, strided) scaled in place by 3 and shifted by 1, then rows 2..4 of it transposed, as a view. */
static const char *SCRIPT = "local ck = require 'cukern'\n"
                            "local x = ...\n"
                            "x:mul_(3):add_(1)\n"
                            "return x:narrow(1, 2, 4):t(), x:device()\n";

/* Run the round trip over `data` (the engine's R x C buffer, host or device) and check it; `host` is a host copy of
 * the buffer's values before (updated to the expected values after). */
static void round_trip(lua_State *L, void *data, DLDeviceType where, int id, float *host, const char *label) {
  char what[160], msg[200];
  engine_view v;
  export_columns(&v, data, where, id);
  int st = cukern_push_dlpack(L, &v.m);
  snprintf(what, sizeof what, "%s: cukern_push_dlpack of a strided view (shape {6, %d}, strides {1, %d}, offset 2)", label, R, C);
  check(st == CUKERN_OK, what, st ? lua_tostring(L, -1) : NULL);
  if (st) return;
  if (luaL_loadstring(L, SCRIPT) != LUA_OK) {
    check(0, "script", lua_tostring(L, -1));
    return;
  }
  lua_insert(L, -2);
  if (lua_pcall(L, 1, 2, 0) != LUA_OK) {
    check(0, "the script ran", lua_tostring(L, -1));
    lua_pop(L, 1);
    return;
  }
  DLManagedTensor *back = NULL;
  st = cukern_to_dlpack(L, -2, &back);
  snprintf(what, sizeof what, "%s: cukern_to_dlpack of the script's strided result", label);
  check(st == CUKERN_OK, what, st ? lua_tostring(L, -1) : NULL);
  if (st) return;
  const DLTensor *b = &back->dl_tensor;
  /* rows 2..4 of the transposed view, transposed back: columns 3..5 of the buffer; shape {R, 3}, strides {C, 1},
   * offset 3 elements */
  snprintf(msg, sizeof msg, "data %p (engine's %p), byte_offset %llu, shape {%lld, %lld}, strides {%lld, %lld}", b->data,
           data, (unsigned long long)b->byte_offset, (long long)b->shape[0], (long long)b->shape[1], (long long)b->strides[0],
           (long long)b->strides[1]);
  snprintf(what, sizeof what, "%s: the result is the engine's own memory (no copy), with the view's strides", label);
  check(b->data == data && b->byte_offset == 3 * sizeof(float) && b->ndim == 2 && b->shape[0] == R && b->shape[1] == 3 &&
            b->strides[0] == C && b->strides[1] == 1 && b->device.device_type == where && b->dtype.bits == 32,
        what, msg);
  /* the engine reads its buffer: columns 2..7 became 3x + 1, the others did not move */
  float now[R * C];
  if (where == kDLCUDA) cudaMemcpy(now, data, sizeof now, cudaMemcpyDeviceToHost);
  else memcpy(now, data, sizeof now);
  double worst = 0;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      const float want = c >= 2 && c < 8 ? 3 * host[r * C + c] + 1 : host[r * C + c];
      const double e = fabs(now[r * C + c] - want) / (1 + fabs(want));
      if (e > worst) worst = e;
      host[r * C + c] = want;
    }
  snprintf(msg, sizeof msg, "on %s, worst relative error %.2g", lua_tostring(L, -1), worst);
  snprintf(what, sizeof what, "%s: the script wrote 3x + 1 into the engine's buffer through the view", label);
  check(worst < 1e-6, what, msg);
  lua_settop(L, 0);
  lua_gc(L, LUA_GCCOLLECT, 0);
  lua_gc(L, LUA_GCCOLLECT, 0);
  snprintf(what, sizeof what, "%s: the engine's deleter waits while its export is held", label);
  check(v.deleted == 0, what, NULL);
  back->deleter(back);
  snprintf(what, sizeof what, "%s: the engine's deleter runs once, after the script's arrays and the export went", label);
  check(v.deleted == 1, what, NULL);
}

// ---------------------------------------------------------------- the frames

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  float buf[R * C], host[R * C];
  for (int i = 0; i < R * C; ++i) buf[i] = host[i] = (float)(rand() % 2001 - 1000) / 64.0f + 0.25f;
  lua_State *L = new_state(root);
  round_trip(L, buf, kDLCPU, 0, host, "host");

  /* a refusal takes nothing over: an unknown dtype leaves the deleter to the engine */
  engine_view bad;
  export_columns(&bad, buf, kDLCPU, 0);
  bad.m.dl_tensor.dtype.lanes = 4;
  check(cukern_push_dlpack(L, &bad.m) != CUKERN_OK && bad.deleted == 0, "cukern_push_dlpack refuses vector lanes and "
        "takes nothing over", lua_tostring(L, -1));
  lua_settop(L, 0);

  int64_t shape[1] = {R * C};
  cukern_push_buffer(L, buf, CUKERN_F32, 1, shape, CUKERN_HOST, NULL, NULL);
  int st = cukern_pin_buffer(L, -1);
  check(st == CUKERN_OK, "cukern_pin_buffer (cudaHostRegister with a GPU; nothing without one)", st ? lua_tostring(L, -1) : NULL);
  lua_settop(L, 0);

  if (cukern_has_cuda(L)) {
    void *dbuf = NULL;
    cudaStream_t app = NULL;
    if (cudaMalloc(&dbuf, sizeof buf) != cudaSuccess || cudaStreamCreate(&app) != cudaSuccess) {
      check(0, "cudaMalloc / cudaStreamCreate", NULL);
      return 1;
    }
    cudaMemcpy(dbuf, host, sizeof host, cudaMemcpyHostToDevice);
    st = cukern_set_stream(L, 0, app);
    check(st == CUKERN_OK, "cukern_set_stream: the script runs on the engine's stream", st ? lua_tostring(L, -1) : NULL);
    round_trip(L, dbuf, kDLCUDA, 0, host, "device");
    check(cukern_set_stream(L, 0, NULL) == CUKERN_OK, "cukern_set_stream(NULL) gives cukern its own stream back", NULL);
    cudaStreamSynchronize(app);
    lua_close(L);
    cudaStreamDestroy(app);
    cudaFree(dbuf);
  } else {
    check(cukern_set_stream(L, 0, (void *)1) == CUKERN_ERR_DEVICE, "cukern_set_stream without a GPU says so", lua_tostring(L, -1));
    lua_close(L);
  }
  printf(failures ? "engine: %d FAILED\n" : "engine: all ok\n", failures);
  return failures ? 1 : 0;
}
