/*
 * frame_loop.c — what an application that embeds cukern does every frame (issue 36): it updates a frame buffer of its
 * own, a Lua script uploads it, runs an elementwise chain and a sum on it and downloads the result into a pinned
 * array, and the application reads the sum back. Run two ways:
 *   serial      one stream; each frame's result is read before the next frame starts;
 *   overlapped  two streams and two frame buffers (page-locked with cukern_pin_buffer): frame f runs on stream f % 2
 *               while the application reads frame f - 1's result and updates frame f + 1's buffer.
 * Every frame's sum is checked against the application's own computation. Prints the time per frame of each and
 * the ratio; on the host backend both run in program order (the ratio is then ~1).
 *   build/frame_loop [cukern checkout] [elements per frame] [frames]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "embed_util.h"

enum { CHAIN = 8 };

static const char *SCRIPT =
    "local ck = require 'cukern'\n"
    "local n, chain = ...\n"
    "local dev = ck.has_cuda() and 'cuda' or 'host'\n"
    "local S, dbuf, out, sums = {}, {}, {}, {}\n"
    "for k = 1, 2 do\n"
    "  S[k] = ck.stream(dev)\n"
    "  dbuf[k] = ck.with_stream(S[k], function() return ck.empty(n, {device = dev}) end)\n"
    "  out[k] = ck.empty(n, {device = 'host', pinned = true})\n"
    "end\n"
    "-- frame(x, k): upload the application's buffer x, the chain and the sum, download; on stream k, nothing waits\n"
    "function frame(x, k)\n"
    "  ck.with_stream(S[k], function()\n"
    "    local d = dbuf[k]\n"
    "    d:copy_(x)\n"
    "    for _ = 1, chain do d:mul_(0.5):add_(1) end\n"
    "    sums[k] = ck.sum(d, 1)\n"
    "    out[k]:copy_(d)\n"
    "  end)\n"
    "end\n"
    "-- result(k): the sum of stream k's last frame (reading it waits for stream k only)\n"
    "function result(k) return sums[k]:item() end\n"
    "return dev\n";

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The frame's data: a fixed pattern, of which the application rewrites the head each frame (an engine's frame changes
 * a part of its buffer; rewriting all of it would time the host's loop, not the transfers). */
enum { HEAD = 4096 };
static void pattern(float *x, long n) {
  for (long i = 0; i < n; ++i) x[i] = (float)((i * 7) % 1000) / 250.0f - 1.5f;
}

static void fill(float *x, long n, int frame) {
  for (long i = 0; i < n && i < HEAD; ++i) x[i] = (float)((i * 7 + frame * 13) % 1000) / 250.0f - 1.5f;
}

/* The application's own result of a frame: the chain x -> x / 2 + 1, CHAIN times, then the sum. */
static double expect(const float *x, long n) {
  double s = 0;
  for (long i = 0; i < n; ++i) {
    double v = x[i];
    for (int k = 0; k < CHAIN; ++k) v = v * 0.5 + 1;
    s += v;
  }
  return s;
}

static int call(lua_State *L, const char *fn, int bufref, int k, double *out) {
  lua_getglobal(L, fn);
  if (bufref) lua_rawgeti(L, LUA_REGISTRYINDEX, bufref);
  lua_pushinteger(L, k);
  if (lua_pcall(L, bufref ? 2 : 1, out ? 1 : 0, 0) != LUA_OK) {
    check(0, fn, lua_tostring(L, -1));
    lua_pop(L, 1);
    return 0;
  }
  if (out) *out = lua_tonumber(L, -1), lua_pop(L, 1);
  return 1;
}

static void compare(double got, double want, int frame) {
  if (fabs(got - want) > 1e-4 * (1 + fabs(want))) {
    char msg[160];
    snprintf(msg, sizeof msg, "frame %d: the script's sum %.6g, the application's %.6g", frame, got, want);
    check(0, "a frame's sum", msg);
  }
}

/* One run of `frames` frames; returns the seconds per frame. With `verify`, every frame's sum is compared with the
 * application's own (host time that the timed runs leave out). */
static double run(lua_State *L, float *x[2], const int ref[2], long n, int frames, int overlapped, int verify) {
  double want[2] = {0, 0}, got = 0;
  const double t0 = now();
  for (int f = 0; f < frames && !failures; ++f) {
    const int k = overlapped ? f % 2 : 0;
    fill(x[k], n, f); /* (frame f - 2 used this buffer: its result was read below, so its upload is done) */
    if (verify) want[k] = expect(x[k], n);
    if (!call(L, "frame", ref[k], k + 1, NULL)) break;
    if (!overlapped || f > 0) { /* overlapped: frame f - 1's result, while frame f runs */
      const int j = overlapped ? 1 - k : 0;
      if (call(L, "result", 0, j + 1, &got) && verify) compare(got, want[j], overlapped ? f - 1 : f);
    }
  }
  const int last = (frames - 1) % 2;
  if (overlapped && call(L, "result", 0, last + 1, &got) && verify) compare(got, want[last], frames - 1);
  return (now() - t0) / frames;
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  const long n = argc > 2 ? atol(argv[2]) : 1 << 22;
  const int frames = argc > 3 ? atoi(argv[3]) : 40;
  lua_State *L = new_state(root);
  lua_pushinteger(L, n);
  lua_pushinteger(L, CHAIN);
  if (luaL_loadstring(L, SCRIPT) != LUA_OK || (lua_insert(L, -3), lua_pcall(L, 2, 1, 0)) != LUA_OK) {
    printf("FAIL: the script: %s\n", lua_tostring(L, -1));
    return 1;
  }
  const char *dev = lua_tostring(L, -1);
  printf("frame_loop: %ld f32 per frame, %d frames, on %s\n", n, frames, dev);
  lua_pop(L, 1);
  float *x[2];
  int ref[2];
  for (int k = 0; k < 2; ++k) { /* the application's two frame buffers, as arrays over them, page-locked */
    x[k] = malloc(sizeof(float) * (size_t)n);
    const int64_t shape[1] = {n};
    if (!x[k] || cukern_push_buffer(L, x[k], CUKERN_F32, 1, shape, CUKERN_HOST, NULL, NULL) || cukern_pin_buffer(L, -1)) {
      printf("FAIL: the frame buffers: %s\n", x[k] ? lua_tostring(L, -1) : "out of memory");
      return 1;
    }
    ref[k] = luaL_ref(L, LUA_REGISTRYINDEX);
    pattern(x[k], n);
  }
  run(L, x, ref, n, 4, 0, 1); /* checked, and the warm-up: streams, allocator, kernels */
  run(L, x, ref, n, 5, 1, 1);
  const double serial = run(L, x, ref, n, frames, 0, 0);
  const double overlapped = run(L, x, ref, n, frames, 1, 0);
  printf("serial     %8.3f ms per frame\noverlapped %8.3f ms per frame\nspeedup    %8.2fx (on %s)\n", serial * 1e3,
         overlapped * 1e3, serial / overlapped, dev);
  lua_close(L); /* (the buffers' arrays go first: their page-locking is undone before the memory is freed) */
  free(x[0]);
  free(x[1]);
  printf(failures ? "frame_loop: %d FAILED\n" : "frame_loop: all ok\n", failures);
  return failures ? 1 : 0;
}
