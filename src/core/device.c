/*
 * device.c — the devices of a context (issue 31): discovery, one context per device built on first use, which
 * one is current, peer access and the ordering of work across two devices' streams.
 *
 * A session (ck_ctx: one per Lua state or embedding application) drives cuda:0 .. cuda:N-1 and host:0 ..
 * host:M-1. Each CUDA device gets its own ck_dctx on first use: streams (stream.c), cuBLAS handle, caching allocator and
 * statistics, small-op batch queue, graph capture and kernel attribute cache. Nothing is shared between two
 * devices, so nothing on one can wait for the other by accident; what must (a peer copy) says so with events.
 *
 * The current CUDA device is per host thread (cudaSetDevice). Every entry point that touches a device calls
 * ck_use_device, which makes that device's context the session's current one and calls cudaSetDevice only when
 * the thread's device differs, so two Lua states in two threads on two devices each keep their own.
 *
 * host:N exist so that CI, with no GPU, runs every rule of several devices (mixed-device errors, :to, shards,
 * collectives): CUKERN_HOST_DEVICES=N makes N of them. They share the host backend; only their statistics
 * and the label on each array differ.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_internal.h"

// ---------------------------------------------------------------- names

ck_devname ck_device_name(ck_device d) {
  ck_devname n;
  snprintf(n.s, sizeof n.s, "%s:%d", d.kind == CK_CUDA ? "cuda" : "host", d.index);
  return n;
}

/* "cuda", "cuda:1", "gpu", "host", "host:2", "cpu"; a bare kind means that kind's device in `dflt` when dflt has
 * that kind, else its device 0 ("cuda" is the current default CUDA device). */
bool ck_device_parse(const char *s, ck_device dflt, ck_device *out) {
  ck_devkind kind;
  size_t n;
  if (strncmp(s, "cuda", 4) == 0) kind = CK_CUDA, n = 4;
  else if (strncmp(s, "gpu", 3) == 0) kind = CK_CUDA, n = 3;
  else if (strncmp(s, "host", 4) == 0) kind = CK_HOST, n = 4;
  else if (strncmp(s, "cpu", 3) == 0) kind = CK_HOST, n = 3;
  else return false;
  if (s[n] == 0) {
    *out = ck_device_make(kind, dflt.kind == kind ? dflt.index : 0);
    return true;
  }
  if (s[n] != ':' || s[n + 1] < '0' || s[n + 1] > '9') return false;
  char *end = NULL;
  long i = strtol(s + n + 1, &end, 10);
  if (*end || i < 0 || i > 1000000) return false;
  *out = ck_device_make(kind, (int)i);
  return true;
}

int ck_device_count(const ck_ctx *ctx, ck_devkind kind) { return kind == CK_CUDA ? ctx->ncuda : ctx->nhost; }

ck_status ck_check_device(ck_ctx *ctx, ck_device dev) {
  const int n = ck_device_count(ctx, dev.kind);
  if (dev.index >= 0 && dev.index < n) return CK_OK;
  if (dev.kind == CK_CUDA && n == 0)
    return ck_error(ctx, CK_ERR_DEVICE, "no CUDA device for %s (%s)", ck_device_name(dev).s, ctx->info.why_host);
  if (dev.kind == CK_CUDA)
    return ck_error(ctx, CK_ERR_DEVICE, "device %s does not exist (this process has %d CUDA device%s, cuda:0 .. cuda:%d)",
                    ck_device_name(dev).s, n, n == 1 ? "" : "s", n - 1);
  return ck_error(ctx, CK_ERR_DEVICE, "device %s does not exist (there %s %d host device%s, host:0 .. host:%d; "
                  "CUKERN_HOST_DEVICES=N makes N)", ck_device_name(dev).s, n == 1 ? "is" : "are", n, n == 1 ? "" : "s", n - 1);
}

// ---------------------------------------------------------------- discovery and device contexts

static void *ws_alloc_cb(void *owner, size_t bytes) { return ck_dctx_alloc((ck_dctx *)owner, bytes); }
static void ws_free_cb(void *owner, void *p) { ck_dctx_free((ck_dctx *)owner, p); }

/* Sets ctx->ncuda / nhost and the process's info; the devices' own contexts come later (ck_dctx_get). */
void ck_discover(ck_ctx *ctx) {
  ck_devinfo *in = &ctx->info;
  int n = 0;
  const char *hd = getenv("CUKERN_HOST_DEVICES");
  ctx->nhost = 1;
  if (hd && *hd) {
    char *end = NULL;
    long k = strtol(hd, &end, 10);
    if (!*end && k >= 1 && k <= CK_MAX_DEVICES) ctx->nhost = (int)k;
  }
  cudaDriverGetVersion(&in->driver_version);
  cudaRuntimeGetVersion(&in->runtime_version);
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (in->driver_version == 0)
      snprintf(in->why_host, sizeof in->why_host, "no NVIDIA driver (libcuda.so.1 not found)");
    else
      snprintf(in->why_host, sizeof in->why_host, "no CUDA device: %s",
               e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount returned 0");
    (void)cudaGetLastError();
    return;
  }
  ctx->ncuda = n < CK_MAX_DEVICES ? n : CK_MAX_DEVICES;
  in->device_count = n;
}

static ck_dctx *dctx_new(ck_ctx *ctx, ck_device dev) {
  ck_dctx *d = calloc(1, sizeof *d);
  if (!d) {
    ck_error(ctx, CK_ERR_OOM, "out of host memory (context of %s)", ck_device_name(dev).s);
    return NULL;
  }
  d->ctx = ctx;
  d->dev = dev;
  if (dev.kind == CK_HOST) {
    snprintf(d->info.backend, sizeof d->info.backend, "host");
    snprintf(d->info.name, sizeof d->info.name, "host CPU (reference backend)");
    (void)ck_strm_init(d); /* (no CUDA stream: cannot fail) */
    return d;
  }
  struct cudaDeviceProp p;
  cudaError_t e;
  if ((e = cudaSetDevice(dev.index)) != cudaSuccess || (e = cudaGetDeviceProperties(&p, dev.index)) != cudaSuccess ||
      (e = cudaEventCreateWithFlags(&d->order_ev, cudaEventDisableTiming)) != cudaSuccess || ck_strm_init(d)) {
    ck_error(ctx, CK_ERR_CUDA, "%s unusable: %s (%s)", ck_device_name(dev).s, cudaGetErrorString(e), cudaGetErrorName(e));
    (void)cudaGetLastError();
    if (d->main.s) cudaStreamDestroy(d->main.s);
    if (d->order_ev) cudaEventDestroy(d->order_ev);
    free(d);
    return NULL;
  }
  ck_devinfo *in = &d->info;
  snprintf(in->backend, sizeof in->backend, "cuda");
  snprintf(in->name, sizeof in->name, "%s", p.name);
  in->cc_major = p.major;
  in->cc_minor = p.minor;
  in->sm_count = p.multiProcessorCount;
  in->total_mem = p.totalGlobalMem;
  in->l2_bytes = (size_t)p.l2CacheSize;
  in->smem_optin = p.sharedMemPerBlockOptin;
  in->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  in->driver_version = ctx->info.driver_version;
  in->runtime_version = ctx->info.runtime_version;
  in->device_count = ctx->info.device_count;
  ck_env *env = &d->env;
  env->device = dev.index; /* (the stream is the current one's, set at each launch: env_for) */
  env->sm_count = p.multiProcessorCount;
  env->cc_major = p.major;
  env->cc_minor = p.minor;
  env->smem_optin = p.sharedMemPerBlockOptin;
  env->l2_bytes = (size_t)p.l2CacheSize;
  env->ws_alloc = ws_alloc_cb;
  env->ws_free = ws_free_cb;
  env->owner = d;
  return d;
}

ck_dctx *ck_dctx_get(ck_ctx *ctx, ck_device dev) {
  if (ck_check_device(ctx, dev)) return NULL;
  ck_dctx **slot = dev.kind == CK_CUDA ? &ctx->cuda[dev.index] : &ctx->host[dev.index];
  if (!*slot) *slot = dctx_new(ctx, dev);
  return *slot;
}

/* The device's context, made current on this thread (cudaSetDevice only when the thread's device differs). */
static ck_status make_current(ck_ctx *ctx, ck_dctx *d) {
  int cur = -1;
  cudaError_t e = cudaGetDevice(&cur);
  if (e == cudaSuccess && cur != d->dev.index) e = cudaSetDevice(d->dev.index);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return ck_error(ctx, CK_ERR_CUDA, "cudaSetDevice(%d) failed: %s (%s)", d->dev.index, cudaGetErrorString(e),
                    cudaGetErrorName(e));
  }
  ctx->cur = d;
  return CK_OK;
}

ck_status ck_use_device(ck_ctx *ctx, ck_device dev) {
  if (dev.kind == CK_HOST) return ck_check_device(ctx, dev);
  if (ctx->capture && ctx->capture->dev.index != dev.index)
    return ck_error(ctx, CK_ERR_DEVICE, "a graph is being captured on %s: work on %s cannot be part of it (a graph "
                    "records one device's stream)", ck_device_name(ctx->capture->dev).s, ck_device_name(dev).s);
  ck_dctx *d = ctx->cur && ctx->cur->dev.index == dev.index ? ctx->cur : ck_dctx_get(ctx, dev);
  if (!d) return ck_check_device(ctx, dev) ? CK_ERR_DEVICE : CK_ERR_CUDA;
  return make_current(ctx, d);
}

ck_dctx *ck_cur(ck_ctx *ctx) {
  if (ctx->cur) {
    if (make_current(ctx, ctx->cur)) return NULL; /* (another state on this thread may have moved it) */
    return ctx->cur;
  }
  if (!ctx->has_cuda) {
    ck_error(ctx, CK_ERR_DEVICE, "no CUDA device (%s)", ctx->info.why_host);
    return NULL;
  }
  const ck_device dev = ctx->default_dev.kind == CK_CUDA ? ctx->default_dev : ck_device_make(CK_CUDA, 0);
  return ck_use_device(ctx, dev) ? NULL : ctx->cur;
}

ck_device ck_current_device(ck_ctx *ctx) {
  ck_dctx *d = ck_cur(ctx);
  return d ? d->dev : CK_DEV_HOST;
}

int ck_sm_count(ck_ctx *ctx) {
  if (!ctx->has_cuda) return 0;
  ck_dctx *d = ck_cur(ctx);
  return d ? d->info.sm_count : 0;
}

// ---------------------------------------------------------------- information

void ck_device_info(ck_ctx *ctx, ck_device dev, ck_devinfo *info) {
  ck_dctx *d = ck_check_device(ctx, dev) ? NULL : ck_dctx_get(ctx, dev);
  if (!d) { /* no such device: the process's view, backend "host" */
    *info = ctx->info;
    snprintf(info->backend, sizeof info->backend, "host");
    snprintf(info->name, sizeof info->name, "host CPU (reference backend)");
    return;
  }
  *info = d->info;
  snprintf(info->why_host, sizeof info->why_host, "%s", ctx->info.why_host);
  info->device_count = ctx->info.device_count;
  info->driver_version = ctx->info.driver_version;
  info->runtime_version = ctx->info.runtime_version;
  if (dev.kind == CK_CUDA) {
    size_t fr = 0, tot = 0;
    ck_dctx *keep = ctx->cur;
    if (!make_current(ctx, d) && cudaMemGetInfo(&fr, &tot) == cudaSuccess) info->free_mem = fr;
    else (void)cudaGetLastError();
    if (keep) (void)make_current(ctx, keep);
  }
}

// ---------------------------------------------------------------- several devices: peers and ordering

/* Let `d` read and write `peer`'s memory (NVLink or PCIe), once; false when the pair cannot (copies between them
 * then go through the host, which cudaMemcpyPeerAsync does by itself). `d` must be current. */
static bool enable_peer(ck_dctx *d, int peer) {
  unsigned long long bit = 1ull << (peer % 64);
  if (d->peer[peer / 64] & bit) return true;
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, d->dev.index, peer) != cudaSuccess || !can) {
    (void)cudaGetLastError();
    return false;
  }
  cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
  if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();
    return false;
  }
  (void)cudaGetLastError(); /* (already enabled leaves its error behind) */
  d->peer[peer / 64] |= bit;
  return true;
}

bool ck_peer_access(ck_ctx *ctx, ck_device a, ck_device b) {
  if (a.kind != CK_CUDA || b.kind != CK_CUDA || a.index == b.index) return a.kind == CK_CUDA && ck_dev_eq(a, b);
  ck_dctx *da = ck_dctx_get(ctx, a), *db = ck_dctx_get(ctx, b);
  if (!da || !db) return false;
  ck_dctx *keep = ctx->cur;
  bool ok = !make_current(ctx, da) && enable_peer(da, b.index);
  ok = !make_current(ctx, db) && enable_peer(db, a.index) && ok;
  if (keep) (void)make_current(ctx, keep);
  return ok;
}

/* Work issued on `waiter` from now on runs after everything issued so far on `producer` (its batch included). */
ck_status ck_stream_after(ck_ctx *ctx, ck_device waiter, ck_device producer) {
  if (waiter.kind != CK_CUDA || producer.kind != CK_CUDA || waiter.index == producer.index) return CK_OK;
  ck_dctx *w = ck_dctx_get(ctx, waiter), *p = ck_dctx_get(ctx, producer);
  if (!w || !p) return CK_ERR_DEVICE;
  ck_status st = ck_dctx_flush(p);
  if (st) return st;
  cudaError_t e = cudaEventRecord(p->order_ev, p->cs->s);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(w->cs->s, p->order_ev, 0);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return ck_error(ctx, CK_ERR_CUDA, "ordering %s after %s: %s (%s)", ck_device_name(waiter).s,
                    ck_device_name(producer).s, cudaGetErrorString(e), cudaGetErrorName(e));
  }
  return CK_OK;
}

/* Copy `bytes` from src (on sdev) to dst (on ddev), both CUDA: on ddev's stream after the work already issued on
 * sdev (so the copy reads finished values), and sdev's stream then waits for the copy (so sdev's allocator may
 * not hand the source's block to new work before the copy has read it). Peer access is enabled on first use. */
typedef struct {
  void *dst;
  const void *src;
  int ddev, sdev;
  size_t bytes;
} peer_args;

static int peer_launch(const void *arg, const ck_env *env) {
  const peer_args *a = (const peer_args *)arg;
  ck_order_check(env);
  return (int)cudaMemcpyPeerAsync(a->dst, a->ddev, a->src, a->sdev, a->bytes, (cudaStream_t)env->stream);
}

ck_status ck_memcpy_peer(ck_ctx *ctx, void *dst, ck_device ddev, const void *src, ck_device sdev, size_t bytes) {
  ck_status st;
  (void)ck_peer_access(ctx, ddev, sdev);
  if ((st = ck_stream_after(ctx, ddev, sdev)) || (st = ck_use_device(ctx, ddev))) return st;
  const peer_args a = {dst, src, ddev.index, sdev.index, bytes};
  char what[64];
  snprintf(what, sizeof what, "peer copy %s -> %s", ck_device_name(sdev).s, ck_device_name(ddev).s);
  const ck_launch_req r = {.fn = peer_launch, .arg = &a, .what = what};
  if ((st = ck_submit(ctx, &r))) return st;
  return ck_stream_after(ctx, sdev, ddev);
}

void *ck_device_stream(ck_ctx *ctx, ck_device dev) {
  ck_dctx *d = dev.kind == CK_CUDA ? ck_dctx_get(ctx, dev) : NULL;
  if (!d && dev.kind != CK_CUDA) ck_error(ctx, CK_ERR_DEVICE, "%s has no stream (a host device)", ck_device_name(dev).s);
  return d ? (void *)d->cs->s : NULL;
}

void *ck_device_event(ck_ctx *ctx, ck_device dev) {
  ck_dctx *d = dev.kind == CK_CUDA ? ck_dctx_get(ctx, dev) : NULL;
  if (!d && dev.kind != CK_CUDA) ck_error(ctx, CK_ERR_DEVICE, "%s has no stream (a host device)", ck_device_name(dev).s);
  return d ? (void *)d->order_ev : NULL;
}
