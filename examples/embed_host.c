/*
 * embed_host.c — an application that embeds Lua 5.4 and cukern through src/cukern.h.
 *
 * 1. It hands a script an array over its own buffer (not copied; handed back through a release callback),
 *    runs the script, reads the result into its own memory and checks it against its own computation. On a
 *    machine with a GPU it also hands over a device buffer of its own.
 * 2. It runs two Lua states in two threads at once, each with its own cukern context, each computing and
 *    checking its own result (on the GPU where there is one, else on the host backend).
 *
 *   build/embed_host [cukern checkout]      (`make embed` builds and runs it; `make test` runs it through
 *                                             spec/embed_spec.lua)
 * Prints one line per check and "embed: all ok" last; the exit status is 0 only if every check passed.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "embed_util.h"

/* Load `src` and call it with the values on top of the stack; results stay on the stack. */
static int run(lua_State *L, const char *name, const char *src, int nargs, int nresults) {
  if (luaL_loadbuffer(L, src, strlen(src), name) != LUA_OK) {
    check(0, name, lua_tostring(L, -1));
    return 0;
  }
  lua_insert(L, -(nargs + 1));
  if (lua_pcall(L, nargs, nresults, 0) != LUA_OK) {
    check(0, name, lua_tostring(L, -1));
    lua_pop(L, 1);
    return 0;
  }
  return 1;
}

// ---------------------------------------------------------------- 1. the application's buffer

struct release_count {
  int calls;
  void *data;
};

static void on_release(void *ud, void *data) {
  struct release_count *r = ud;
  r->calls++;
  r->data = data;
}

static const char *SCRIPT = "local ck = require 'cukern'\n"
                            "local x = ...                          -- the application's buffer, as an array\n"
                            "local y = ck.sum(x:to(ck.default_device()) * 2 + 1, 2)  -- on the GPU if there is one\n"
                            "x[{1, 1}] = 42                         -- written straight into the buffer\n"
                            "return y, ck.default_device()\n";

static void buffer_example(const char *root) {
  enum { R = 5, C = 7 };
  float *data = malloc(sizeof(float) * R * C);
  for (int i = 0; i < R * C; ++i) data[i] = (float)(rand() % 2001 - 1000) / 64.0f + 0.5f; /* never all zeros */
  double want[R];
  for (int r = 0; r < R; ++r) {
    want[r] = 0;
    for (int c = 0; c < C; ++c) want[r] += 2.0 * data[r * C + c] + 1.0;
  }
  struct release_count rel = {0, NULL};
  lua_State *L = new_state(root);
  int64_t shape[2] = {R, C};
  int st = cukern_push_buffer(L, data, CUKERN_F32, 2, shape, CUKERN_HOST, on_release, &rel);
  check(st == CUKERN_OK, "cukern_push_buffer (host f32 5x7)", st ? lua_tostring(L, -1) : NULL);
  if (st) exit(1);
  lua_pushvalue(L, -1);
  lua_setglobal(L, "x"); /* the script may keep it too: release must wait for every reference */
  if (run(L, "=script", SCRIPT, 1, 2)) {
    const char *dev = lua_tostring(L, -1);
    int ndim = -1;
    int64_t ys[CUKERN_MAX_DIMS];
    cukern_dtype dt;
    check(cukern_info(L, -2, &ndim, ys, &dt, NULL) == 0 && ndim == 1 && ys[0] == R && dt == CUKERN_F32,
          "cukern_info: the script returned an f32 array of 5", NULL);
    double got[R];
    st = cukern_read(L, -2, got, sizeof got, CUKERN_F64);
    check(st == CUKERN_OK, "cukern_read (as f64)", st ? lua_tostring(L, -1) : NULL);
    double worst = 0;
    for (int r = 0; r < R; ++r) {
      double e = fabs(got[r] - want[r]) / (1 + fabs(want[r]));
      if (e > worst) worst = e;
    }
    char msg[160];
    snprintf(msg, sizeof msg, "row sums of 2x+1 on %s, worst relative error %.2g", dev, worst);
    check(worst < 1e-5, "the script's result matches the application's own computation", msg);
    float small[R - 1];
    st = cukern_read(L, -2, small, sizeof small, CUKERN_F32);
    check(st != CUKERN_OK && strstr(lua_tostring(L, -1), "needs"), "cukern_read refuses a buffer that is too small",
          lua_tostring(L, -1));
    check(data[0] == 42.0f, "the script wrote into the application's buffer (x[{1, 1}] = 42)", NULL);
  }
  lua_settop(L, 0);
  lua_gc(L, LUA_GCCOLLECT, 0);
  check(rel.calls == 0, "release is not called while an array over the buffer is live (global x)", NULL);
  lua_pushnil(L);
  lua_setglobal(L, "x");
  lua_gc(L, LUA_GCCOLLECT, 0);
  lua_gc(L, LUA_GCCOLLECT, 0);
  check(rel.calls == 1 && rel.data == data, "release(ud, data) called once after the arrays were collected", NULL);

  /* a:free() releases at once; lua_close releases what is left; neither twice */
  struct release_count rel2 = {0, NULL}, rel3 = {0, NULL};
  cukern_push_buffer(L, data, CUKERN_F32, 1, shape, CUKERN_HOST, on_release, &rel2);
  run(L, "=free", "local x = ...; x:free(); x:free()", 1, 0);
  check(rel2.calls == 1, "a:free() releases the buffer (once)", NULL);
  cukern_push_buffer(L, data, CUKERN_F32, 2, shape, CUKERN_HOST, on_release, &rel3);
  lua_setglobal(L, "kept");
  int e = cukern_push_buffer(L, data, (cukern_dtype)99, 1, shape, CUKERN_HOST, on_release, &rel3);
  check(e == CUKERN_ERR_ARG && rel3.calls == 0, "a bad dtype is refused and nothing is taken over", lua_tostring(L, -1));

  /* a device buffer of the application's own, where there is a GPU */
  if (cukern_has_cuda(L)) {
    void *dev = NULL;
    struct release_count drel = {0, NULL};
    if (cudaMalloc(&dev, sizeof(float) * R * C) != cudaSuccess ||
        cudaMemcpy(dev, data, sizeof(float) * R * C, cudaMemcpyHostToDevice) != cudaSuccess) {
      check(0, "cudaMalloc / cudaMemcpy", NULL);
    } else {
      st = cukern_push_buffer(L, dev, CUKERN_F32, 2, shape, CUKERN_CUDA, on_release, &drel);
      check(st == CUKERN_OK, "cukern_push_buffer (device f32 5x7)", st ? lua_tostring(L, -1) : NULL);
      if (run(L, "=device", "local x = ...; assert(x:device() == 'cuda:0'); return x:sum(2) * 1", 1, 1)) {
        double got[R], ref[R];
        for (int r = 0; r < R; ++r) {
          ref[r] = 0;
          for (int c = 0; c < C; ++c) ref[r] += data[r * C + c];
        }
        cukern_read(L, -1, got, sizeof got, CUKERN_F64);
        double worst = 0;
        for (int r = 0; r < R; ++r) worst = fmax(worst, fabs(got[r] - ref[r]) / (1 + fabs(ref[r])));
        check(worst < 1e-5, "row sums of the application's device buffer", NULL);
      }
      lua_settop(L, 0);
      lua_gc(L, LUA_GCCOLLECT, 0);
      lua_gc(L, LUA_GCCOLLECT, 0);
      check(drel.calls == 1 && drel.data == dev, "the device buffer is released once", NULL);
      cudaFree(dev);
    }
  } else {
    printf("skip: device buffer (no CUDA device here)\n");
  }
  lua_close(L);
  check(rel3.calls == 1, "lua_close releases the buffers still held", NULL);
  free(data);
}

// ---------------------------------------------------------------- 2. two states in two threads

struct job {
  const char *root;
  int id, n, reps;
  double got, want;
  char device[16];
  char error[512];
  pthread_barrier_t *start;
};

static const char *THREAD_SCRIPT =
    "local ck = require 'cukern'\n"
    "local n, id, reps, buf = ...\n"
    "local gpus = 0                        -- with two GPUs, each thread's state works on its own one\n"
    "for _, d in ipairs(ck.devices()) do if d.backend == 'cuda' then gpus = gpus + 1 end end\n"
    "if gpus >= 2 then ck.default_device('cuda:' .. (id - 1) % gpus) end\n"
    "ck.seed(id * 1000 + 7)\n"
    "local total = 0\n"
    "for r = 1, reps do\n"
    "  local a = ck.rand(n, n, {dtype = 'f64'})\n"
    "  local b = ck.randn(n, n, {dtype = 'f64'})\n"
    "  local c = a * b                     -- the default device: the GPU where there is one\n"
    "  local ref = a:host() * b:host()     -- the host reference\n"
    "  assert(ck.allclose(c, ref:to(c:device()), 1e-12, 1e-12), 'matmul differs from the host reference')\n"
    "  total = total + ck.arange(n * id, {dtype = 'f64'}):sum():item() + buf:to(c:device()):sum():item()\n"
    "end\n"
    "return total, ck.default_device()\n";

static void *thread_main(void *p) {
  struct job *j = p;
  lua_State *L = new_state(j->root);
  int m = j->n * j->id, len = 50 + j->id;
  int32_t *buf = malloc(sizeof(int32_t) * (size_t)len); /* this thread's own buffer: 1..len */
  for (int i = 0; i < len; ++i) buf[i] = i + 1;
  j->want = j->reps * ((double)m * (m - 1) / 2 + (double)len * (len + 1) / 2);
  pthread_barrier_wait(j->start); /* both states compute at the same time */
  lua_pushinteger(L, j->n);
  lua_pushinteger(L, j->id);
  lua_pushinteger(L, j->reps);
  int64_t shape[1] = {len};
  if (cukern_push_buffer(L, buf, CUKERN_I32, 1, shape, CUKERN_HOST, NULL, NULL) != CUKERN_OK) {
    snprintf(j->error, sizeof j->error, "%s", lua_tostring(L, -1));
  } else if (luaL_loadbuffer(L, THREAD_SCRIPT, strlen(THREAD_SCRIPT), "=thread") != LUA_OK) {
    snprintf(j->error, sizeof j->error, "%s", lua_tostring(L, -1));
  } else {
    lua_insert(L, -5);
    if (lua_pcall(L, 4, 2, 0) != LUA_OK) {
      snprintf(j->error, sizeof j->error, "%s", lua_tostring(L, -1));
    } else {
      j->got = lua_tonumber(L, -2);
      snprintf(j->device, sizeof j->device, "%s", lua_tostring(L, -1));
    }
  }
  lua_close(L); /* release is NULL: buf is still ours, and no array over it is left after lua_close */
  free(buf);
  return NULL;
}

static void thread_example(const char *root) {
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, 2);
  struct job jobs[2];
  pthread_t th[2];
  for (int i = 0; i < 2; ++i) {
    memset(&jobs[i], 0, sizeof jobs[i]);
    jobs[i].root = root;
    jobs[i].id = i + 1;
    jobs[i].n = 24 + 9 * i;
    jobs[i].reps = 40;
    jobs[i].start = &start;
    if (pthread_create(&th[i], NULL, thread_main, &jobs[i])) {
      check(0, "pthread_create", NULL);
      exit(1);
    }
  }
  for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&start);
  for (int i = 0; i < 2; ++i) {
    char what[64], msg[600];
    snprintf(what, sizeof what, "thread %d: its own Lua state and cukern context", jobs[i].id);
    if (jobs[i].error[0]) snprintf(msg, sizeof msg, "%s", jobs[i].error);
    else
      snprintf(msg, sizeof msg, "%d matmuls checked against the host on %s; total %.17g, expected %.17g", jobs[i].reps,
               jobs[i].device, jobs[i].got, jobs[i].want);
    check(!jobs[i].error[0] && jobs[i].got == jobs[i].want, what, msg);
  }
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  srand((unsigned)time(NULL) ^ (unsigned)getpid());
  buffer_example(root);
  thread_example(root);
  if (failures) {
    printf("embed: %d check(s) failed\n", failures);
    return 1;
  }
  printf("embed: all ok\n");
  return 0;
}
