/*
 * context.c — the session: error messages, sync and batching modes, the one launch function, synchronising and
 * timing. The devices and their contexts (stream, cuBLAS handle, allocator, batch queue) are device.c's.
 *
 * One context per Lua state. It never fails for lack of a GPU: when the driver or a device is missing it
 * records why and every array defaults to the host backend.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ck_internal.h"
#include "fft/cufft_plans.h"
#include "linalg/cusolver_dl.h"
#include "ew_ops.h"
#include "reduce_ops.h"

// ---------------------------------------------------------------- errors

const char *ck_errmsg(const ck_ctx *ctx) { return ctx->err[0] ? ctx->err : "unknown error"; }

ck_status ck_error(ck_ctx *ctx, ck_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
  va_end(ap);
  return st;
}

ck_status ck_error_prefix(ck_ctx *ctx, ck_status st, const char *fmt, ...) {
  char prefix[512], old[sizeof ctx->err];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, ctx->err, sizeof old);
  int k = snprintf(ctx->err, sizeof ctx->err, "%s: ", prefix);
  if (k >= 0 && (size_t)k < sizeof ctx->err) {
    size_t room = sizeof ctx->err - (size_t)k - 1, len = strnlen(old, sizeof old);
    memcpy(ctx->err + k, old, len < room ? len : room);
    ctx->err[(size_t)k + (len < room ? len : room)] = 0;
  }
  return st;
}

ck_status ck_cuda_fail(ck_ctx *ctx, int cuda_err, const char *file, int line, const char *what) {
  const char *base = strrchr(file, '/');
  return ck_error(ctx, CK_ERR_CUDA, "%s failed: %s (%s) at %s:%d", what, cudaGetErrorString((cudaError_t)cuda_err),
                  cudaGetErrorName((cudaError_t)cuda_err), base ? base + 1 : file, line);
}

static const char *cublas_status_name(cublasStatus_t s) {
  switch (s) {
  case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

ck_status ck_synchronize_device(ck_ctx *ctx, ck_device dev) {
  ck_status st = dev.kind == CK_HOST ? ck_check_device(ctx, dev) : CK_OK;
  if (st) return st;
  if (dev.kind == CK_CUDA && ctx->capture)
    return ck_error(ctx, CK_ERR_ARG, "cannot synchronise or read values on the host while a graph is being "
                                     "captured (ck.graph records device work only)");
  if ((st = ck_use_device(ctx, dev))) return st;
  ck_dctx *d = ck_dctx_get(ctx, dev);
  for (int i = 0; d && i < CK_MAX_STREAMS && !st; ++i) /* every stream of the device (host: their clocks) */
    if (d->strm[i]) st = ck_strm_sync(d->strm[i]);
  return st;
}

ck_status ck_synchronize(ck_ctx *ctx) {
  if (!ctx->has_cuda) return CK_OK;
  ck_dctx *d = ck_cur(ctx);
  return d ? ck_synchronize_device(ctx, d->dev) : CK_ERR_DEVICE;
}

ck_status ck_synchronize_all(ck_ctx *ctx) {
  for (int i = 0; i < ctx->ncuda; ++i)
    if (ctx->cuda[i]) {
      ck_status st = ck_synchronize_device(ctx, ctx->cuda[i]->dev);
      if (st) return st;
    }
  return CK_OK;
}

// ---------------------------------------------------------------- the session

ck_status ck_ctx_create(ck_ctx **out) {
  ck_registry_init(); /* the ladders' preference orders (registry.c), before any op can pick a rung */
  ck_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return CK_ERR_OOM;
  ck_discover(ctx);
  /* the first CUDA device is built now: a GPU that cannot be used falls back to the host here, not at the first op */
  if (ctx->ncuda > 0) {
    ctx->has_cuda = true;
    if (ck_use_device(ctx, ck_device_make(CK_CUDA, 0))) {
      snprintf(ctx->info.why_host, sizeof ctx->info.why_host, "CUDA device unusable: %.130s", ctx->err);
      ctx->has_cuda = false;
      ctx->ncuda = 0;
      ctx->err[0] = 0;
    } else {
      ck_devinfo *in = &ctx->info, *d0 = &ctx->cuda[0]->info; /* the process's view shows device 0 */
      snprintf(in->name, sizeof in->name, "%s", d0->name);
      in->cc_major = d0->cc_major, in->cc_minor = d0->cc_minor, in->sm_count = d0->sm_count;
      in->total_mem = d0->total_mem, in->l2_bytes = d0->l2_bytes, in->smem_optin = d0->smem_optin;
      in->max_threads_per_sm = d0->max_threads_per_sm;
    }
  }
  ctx->default_dev = ctx->has_cuda ? ck_device_make(CK_CUDA, 0) : CK_DEV_HOST;
  const char *dev = getenv("CUKERN_DEVICE"); /* "host", "cuda:1", ...; one that does not exist is ignored */
  ck_device want;
  if (dev && *dev && ck_device_parse(dev, ctx->default_dev, &want) && !ck_check_device(ctx, want)) ctx->default_dev = want;
  ctx->err[0] = 0;
  const char *sync = getenv("CUKERN_SYNC");
  ctx->sync = sync && sync[0] && strcmp(sync, "0") != 0;
  const char *batch = getenv("CUKERN_BATCH");
  ctx->batching = !(batch && strcmp(batch, "0") == 0);
  const char *order = getenv("CUKERN_CHECK_ORDER"), *streams = getenv("CUKERN_CHECK_STREAMS");
  ctx->check_order = order && order[0] && strcmp(order, "0") != 0;
  ctx->check_streams = streams && streams[0] && strcmp(streams, "0") != 0;
  *out = ctx;
  return CK_OK;
}

void ck_ctx_destroy(ck_ctx *ctx) {
  if (!ctx) return;
  for (int i = 0; i < ctx->ncuda; ++i) {
    ck_dctx *d = ctx->cuda[i];
    if (!d) continue;
    (void)ck_use_device(ctx, d->dev);
    (void)ck_synchronize_device(ctx, d->dev); /* what the script issued last still runs */
    if (d->flush_buf) ck_dctx_free(d, d->flush_buf);
    if (d->check_word) (void)cudaFreeHost(d->check_word); /* (teardown: nothing to report a failure to) */
    if (d->cublaslt) cublasLtDestroy(d->cublaslt);
    if (d->cublas) cublasDestroy(d->cublas);
    if (d->cusolver) ck_cusolver(NULL)->Destroy(d->cusolver); /* (made through the table, which is loaded then) */
  }
  ck_alloc_destroy(ctx); /* every device's cache (its device current for the cudaFree calls) */
  ck_kinfo_free(ctx);
  for (int i = 0; i < ctx->ncuda; ++i) {
    ck_dctx *d = ctx->cuda[i];
    if (!d) continue;
    cudaSetDevice(i);
    cudaEventDestroy(d->order_ev);
    ck_strm_destroy_all(d);
    free(d);
  }
  for (int i = 0; i < ctx->nhost; ++i)
    if (ctx->host[i]) {
      ck_strm_destroy_all(ctx->host[i]);
      free(ctx->host[i]);
    }
  free(ctx);
}

bool ck_has_cuda(const ck_ctx *ctx) { return ctx->has_cuda; }
ck_device ck_default_device(const ck_ctx *ctx) { return ctx->default_dev; }
void ck_set_default_device(ck_ctx *ctx, ck_device dev) { ctx->default_dev = dev; }
bool ck_sync_mode(const ck_ctx *ctx) { return ctx->sync; }
void ck_set_sync_mode(ck_ctx *ctx, bool on) {
  if (on) (void)ck_flush_all(ctx); /* (a failure stays in the message for the next call to report) */
  ctx->sync = on;
}
bool ck_batching(const ck_ctx *ctx) { return ctx->batching; }
bool ck_batch_active(const ck_ctx *ctx) { return ctx->batching && !ctx->sync && !ctx->capture; }
ck_status ck_set_batching(ck_ctx *ctx, bool on) {
  ck_status st = on ? CK_OK : ck_flush_all(ctx);
  ctx->batching = on;
  return st;
}

/* The op names of the batch's records, for the message of a failed launch ("add, add, sum, ... (+n)"). */
static void batch_describe(const ck_batch *q, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < q->n && k + 40 < n; ++i) {
    const ck_batch_rec *r = &q->rec[i];
    const char *name = r->kind == CK_BATCH_EW ? ck_ew_op_name(r->op) : r->kind == CK_BATCH_RED ? ck_reduce_op_name(r->op) : "matmul";
    k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", name ? name : "?");
    if (k + 40 >= n && i + 1 < q->n) snprintf(buf + k, n - k, ", ... (%d more)", q->n - i - 1);
  }
}

/* CUKERN_CHECK_ORDER: a wrapper below ck_submit found batched ops still queued (ck_order_check). The launch it
 * belonged to went around ck_submit, so the device may have run it before ops issued earlier: fail loudly. */
static ck_status order_fault(ck_ctx *ctx, const char *at) {
  const int n = ctx->order_faults;
  ctx->order_faults = 0;
  return ck_error(ctx, CK_ERR_CUDA,
                  "launch order (CUKERN_CHECK_ORDER): %d launch%s found batched small ops still queued, so the "
                  "device could run %s before ops issued earlier; the path bypassed ck_submit (seen at %s)",
                  n, n == 1 ? "" : "es", n == 1 ? "it" : "them", at);
}

/* One device's queue, launched on that device's stream (made current for it, then the caller's device again). A
 * device's queue waits while other devices work: the next launch, read or peer copy involving it flushes it. */
ck_status ck_dctx_flush(ck_dctx *d) {
  ck_ctx *ctx = d->ctx;
  if (ctx->order_faults) return order_fault(ctx, "flush");
  ck_batch *q = &d->cs->batch; /* (only the current stream's queue holds records) */
  if (!q->n) return CK_OK;
  ck_dctx *keep = ctx->cur;
  ck_status st = keep == d ? CK_OK : ck_use_device(ctx, d->dev);
  if (st) return st;
  const int e = ck_batch_flush(q, d->cs->s);
  if (keep && keep != d) (void)ck_use_device(ctx, keep->dev);
  if (e == 0) return CK_OK;
  char ops[256];
  batch_describe(q, ops, sizeof ops);
  const int n = q->n;
  q->n = 0; /* dropped: the launch did not happen */
  (void)cudaGetLastError();
  return ck_error(ctx, CK_ERR_CUDA, "batched small ops on %s (%d: %s): kernel launch failed: %s (%s)",
                  ck_device_name(d->dev).s, n, ops, cudaGetErrorString((cudaError_t)e), cudaGetErrorName((cudaError_t)e));
}

ck_status ck_flush(ck_ctx *ctx) {
  if (ctx->order_faults) return order_fault(ctx, "flush");
  return ctx->cur ? ck_dctx_flush(ctx->cur) : CK_OK;
}

ck_status ck_flush_all(ck_ctx *ctx) {
  ck_status st = CK_OK;
  for (int i = 0; i < ctx->ncuda; ++i)
    if (ctx->cuda[i] && !st) st = ck_dctx_flush(ctx->cuda[i]);
  return st;
}

// ---------------------------------------------------------------- the one launch function

/* The device's cuSOLVER handle bound to the current stream, made on first use (cuSOLVER loaded then: it is a run-time
 * load, so only a launch that asks for it pays for it). */
static ck_status cusolver_for(ck_ctx *ctx, ck_dctx *d) {
  const char *why = NULL;
  const ck_cusolver_api *s = ck_cusolver(&why);
  if (!s) return ck_error(ctx, CK_ERR_UNSUPPORTED, "%s", why);
  if (!d->cusolver) {
    cusolverStatus_t st = s->Create(&d->cusolver);
    if (st != CUSOLVER_STATUS_SUCCESS) {
      d->cusolver = NULL;
      return ck_error(ctx, CK_ERR_CUBLAS, "cusolverDnCreate on %s failed: %s", ck_device_name(d->dev).s,
                      ck_cusolver_status_name(st));
    }
    d->cusolver_stream = NULL; /* (bound below) */
  }
  if (d->cusolver_stream != (void *)d->cs->s) { /* the handle follows the current stream, as cuBLAS's does */
    cusolverStatus_t st = s->SetStream(d->cusolver, d->cs->s);
    if (st != CUSOLVER_STATUS_SUCCESS)
      return ck_error(ctx, CK_ERR_CUBLAS, "cusolverDnSetStream on %s failed: %s", ck_device_name(d->dev).s,
                      ck_cusolver_status_name(st));
    d->cusolver_stream = d->cs->s;
  }
  return CK_OK;
}

/* A stream about to be destroyed (ck_stream_free): the library handles bound to it go back to the device's own
 * stream, so none keeps a dead stream (a later SetStream, or Destroy at teardown, would meet it). */
void ck_handles_unbind(ck_dctx *d, void *stream) {
  if (d->cublas && d->env.stream == stream && cublasSetStream(d->cublas, d->main.s) == CUBLAS_STATUS_SUCCESS)
    d->env.stream = d->main.s;
  if (d->cusolver && d->cusolver_stream == stream && ck_cusolver(NULL)->SetStream(d->cusolver, d->main.s) == CUSOLVER_STATUS_SUCCESS)
    d->cusolver_stream = d->main.s;
}

/* The environment a launcher gets: the context's (stream, properties, workspace), the cuBLAS and cuBLASLt handles
 * created on first use, the cuSOLVER handle when the launch asks for it, where batched ops append, where launches
 * are noted, and the order check. */
static ck_status env_for(ck_ctx *ctx, ck_env *env, const ck_launch_req *r) {
  ck_launch_note *note = r->note;
  const bool joins_batch = r->joins_batch;
  ck_dctx *d = ck_cur(ctx); /* (current since the entry point's ck_use_device) */
  if (!d) return CK_ERR_DEVICE;
  if (!d->cublas) {
    cublasStatus_t s = cublasCreate(&d->cublas);
    if (s != CUBLAS_STATUS_SUCCESS) {
      d->cublas = NULL;
      return ck_error(ctx, CK_ERR_CUBLAS, "cublasCreate on %s failed: %s", ck_device_name(d->dev).s, cublas_status_name(s));
    }
    d->env.cublas = d->cublas;
    d->env.stream = NULL; /* (bound below) */
  }
  if (!d->cublaslt) {
    cublasStatus_t s = cublasLtCreate(&d->cublaslt);
    if (s != CUBLAS_STATUS_SUCCESS) {
      d->cublaslt = NULL;
      return ck_error(ctx, CK_ERR_CUBLAS, "cublasLtCreate on %s failed: %s", ck_device_name(d->dev).s, cublas_status_name(s));
    }
    d->env.cublaslt = d->cublaslt;
  }
  if (d->env.stream != d->cs->s) { /* the handle follows the current stream */
    cublasStatus_t s = cublasSetStream(d->cublas, d->cs->s);
    if (s != CUBLAS_STATUS_SUCCESS) return ck_error(ctx, CK_ERR_CUBLAS, "cublasSetStream failed: %s", cublas_status_name(s));
    d->env.stream = d->cs->s;
  }
  ck_status st;
  if (r->needs_cusolver && (st = cusolver_for(ctx, d))) return st;
  *env = d->env;
  env->cusolver = r->needs_cusolver ? d->cusolver : NULL;
  env->batch = ck_batch_active(ctx) ? &d->cs->batch : NULL;
  env->note = note;
  /* (a launch that joins the batch finds it non-empty by design: it is checked only when it launches alone) */
  if (ctx->check_order && !joins_batch) env->order_queued = &d->cs->batch.n, env->order_faults = &ctx->order_faults;
  return CK_OK;
}

ck_status ck_submit(ck_ctx *ctx, const ck_launch_req *r) {
  ck_status st;
  ck_env env;
  char what[400];
  if ((st = env_for(ctx, &env, r))) goto fail;
  /* batched ops issued before this launch run before it, unless it is one of them */
  if (!r->joins_batch && (st = ck_flush(ctx))) goto fail;
  const int kerr = r->fn(r->arg, &env);
  if (ctx->order_faults) return order_fault(ctx, r->what ? r->what : "a launch");
  if (kerr == 0 && !(ctx->sync && !ctx->capture)) return CK_OK; /* (no synchronising inside a graph capture) */
  if (r->describe) r->describe(r->describe_ud, what, sizeof what);
  else snprintf(what, sizeof what, "%s", r->what ? r->what : "launch");
  if (kerr >= CK_KERR_CUFFT(0))
    return ck_error(ctx, CK_ERR_CUBLAS, "%s: cuFFT failed: %s", what, ck_cufft_status_name(kerr - CK_KERR_CUFFT(0)));
  if (kerr >= 100000)
    return ck_error(ctx, CK_ERR_CUBLAS, "%s: cuBLAS failed: %s", what, cublas_status_name((cublasStatus_t)(kerr - 100000)));
  if (kerr != 0) {
    (void)cudaGetLastError();
    return ck_error(ctx, CK_ERR_CUDA, "%s: kernel launch failed: %s (%s)", what, cudaGetErrorString((cudaError_t)kerr),
                    cudaGetErrorName((cudaError_t)kerr));
  }
  cudaError_t e = cudaStreamSynchronize(ctx->cur->cs->s); /* CUKERN_SYNC: a device fault names this launch */
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess)
    return ck_error(ctx, CK_ERR_CUDA, "%s: device fault (CUKERN_SYNC): %s (%s)", what, cudaGetErrorString(e),
                    cudaGetErrorName(e));
  return CK_OK;
fail:
  if (r->describe) r->describe(r->describe_ud, what, sizeof what);
  else snprintf(what, sizeof what, "%s", r->what ? r->what : "launch");
  return ck_error_prefix(ctx, st, "%s", what);
}

ck_status ck_submit_multi(ck_ctx *ctx, const ck_multi_req *r) {
  ck_dctx *keep = ctx->cur;
  ck_status st = CK_OK;
  if (ctx->capture) return ck_error(ctx, CK_ERR_ARG, "work across several devices cannot be recorded in a graph");
  for (int i = 0; i < r->n && !st; ++i) /* each device's queued small ops run before its part */
    if (!(st = ck_use_device(ctx, r->devs[i]))) st = ck_flush(ctx);
  const int code = st ? 0 : r->fn(r->arg);
  if (!st && code) {
    char what[400];
    (void)cudaGetLastError();
    r->describe(r->describe_ud, code, what, sizeof what);
    st = ck_error(ctx, CK_ERR_CUDA, "%s", what);
  }
  for (int i = 0; i < r->n && !st && ctx->sync; ++i) st = ck_synchronize_device(ctx, r->devs[i]);
  if (keep) (void)ck_use_device(ctx, keep->dev); /* (the work may leave another device current) */
  return st;
}

/* memcpy / memset as launchers, so that they take the same road as kernels */
typedef struct {
  void *dst;
  const void *src;
  size_t bytes;
  int kind; /* cudaMemcpyKind, or -1: memset to (int)(uintptr_t)src */
} mem_args;

static int mem_launch(const void *arg, const ck_env *env) {
  const mem_args *m = (const mem_args *)arg;
  ck_order_check(env);
  if (m->kind < 0) return (int)cudaMemsetAsync(m->dst, (int)(uintptr_t)m->src, m->bytes, (cudaStream_t)env->stream);
  return (int)cudaMemcpyAsync(m->dst, m->src, m->bytes, (enum cudaMemcpyKind)m->kind, (cudaStream_t)env->stream);
}

ck_status ck_memcpy(ck_ctx *ctx, void *dst, const void *src, size_t bytes, int kind, bool wait, const char *what) {
  const mem_args m = {dst, src, bytes, kind};
  const ck_launch_req r = {.fn = mem_launch, .arg = &m, .what = what};
  ck_status st = ck_submit(ctx, &r);
  if (st || !wait) return st;
  st = ck_strm_sync(ctx->cur->cs); /* (the current stream only) */
  return st ? ck_error_prefix(ctx, st, "%s", what) : CK_OK;
}

ck_status ck_memset(ck_ctx *ctx, void *dst, int value, size_t bytes, const char *what) {
  const mem_args m = {dst, (const void *)(uintptr_t)(unsigned char)value, bytes, -1};
  const ck_launch_req r = {.fn = mem_launch, .arg = &m, .what = what};
  return ck_submit(ctx, &r);
}

ck_status ck_check_word(ck_ctx *ctx, ck_device dev, int64_t **host, void **device) {
  ck_dctx *d = dev.kind == CK_CUDA ? ck_dctx_get(ctx, dev) : NULL;
  if (!d) return dev.kind == CK_CUDA ? CK_ERR_DEVICE : ck_error(ctx, CK_ERR_DEVICE, "check word: %s is not a GPU",
                                                                ck_device_name(dev).s);
  if (!d->check_word) {
    void *p = NULL, *dp = NULL;
    cudaError_t e = cudaHostAlloc(&p, 64, cudaHostAllocPortable | cudaHostAllocMapped);
    if (e == cudaSuccess && (e = cudaHostGetDevicePointer(&dp, p, 0)) != cudaSuccess) (void)cudaFreeHost(p);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return ck_error(ctx, e == cudaErrorMemoryAllocation ? CK_ERR_OOM : CK_ERR_CUDA,
                      "check word: mapped pinned memory on %s: %s", ck_device_name(dev).s, cudaGetErrorString(e));
    }
    d->check_word = (int64_t *)p;
    d->check_word_dev = dp;
  }
  *host = d->check_word;
  *device = d->check_word_dev;
  return CK_OK;
}

// ---------------------------------------------------------------- timing

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#define CK_MAX_REPS (1 << 24)

ck_status ck_time_op(ck_ctx *ctx, ck_device dev, ck_bench_fn fn, void *ud, int warmup, int reps,
                     size_t flush_bytes, double *ms_out) {
  ck_status st = CK_OK;
  cudaEvent_t *ev = NULL;
  /* 2 * reps events are indexed with int: keep reps far below INT_MAX / 2 (and the event array small) */
  if (warmup < 0 || reps < 1 || reps > CK_MAX_REPS)
    return ck_error(ctx, CK_ERR_ARG, "benchmark: warmup %d and reps %d must be >= 0 and 1..%d", warmup, reps,
                    CK_MAX_REPS);
  if (flush_bytes > ((size_t)1 << 40))
    return ck_error(ctx, CK_ERR_ARG, "benchmark: L2 flush of %zu bytes is not plausible (at most 2^40)", flush_bytes);
  for (int i = 0; i < warmup; ++i)
    if ((st = fn(ctx, ud)) != CK_OK) return st;
  if (dev.kind == CK_HOST || !ctx->has_cuda) {
    for (int i = 0; i < reps; ++i) {
      double t0 = now_ms();
      if ((st = fn(ctx, ud)) != CK_OK) return st;
      ms_out[i] = now_ms() - t0;
    }
    return CK_OK;
  }
  if ((st = ck_use_device(ctx, dev))) return st; /* (the op ran there: its events go on that device's stream) */
  ck_dctx *d = ctx->cur;
  if (flush_bytes > d->flush_bytes) {
    if (d->flush_buf) ck_dctx_free(d, d->flush_buf);
    d->flush_bytes = 0;
    if (!(d->flush_buf = ck_dctx_alloc(d, flush_bytes)))
      return ck_error_prefix(ctx, CK_ERR_OOM, "benchmark L2 flush buffer");
    d->flush_bytes = flush_bytes;
  }
  ev = calloc((size_t)reps * 2, sizeof *ev);
  if (!ev) return ck_error(ctx, CK_ERR_OOM, "benchmark: out of host memory");
  for (int i = 0; i < 2 * reps; ++i) CK_CUDA(ctx, cudaEventCreate(&ev[i]));
  if ((st = ck_flush(ctx))) goto cleanup;
  CK_CUDA(ctx, cudaStreamSynchronize(d->cs->s));
  for (int i = 0; i < reps; ++i) {
    if (flush_bytes && (st = ck_memset(ctx, d->flush_buf, i & 0xff, flush_bytes, "benchmark L2 flush")))
      goto cleanup;
    CK_CUDA(ctx, cudaEventRecord(ev[2 * i], d->cs->s));
    if ((st = fn(ctx, ud)) != CK_OK) goto cleanup;
    if ((st = ck_use_device(ctx, dev)) || (st = ck_flush(ctx))) goto cleanup; /* the rep's batched ops run inside its events */
    CK_CUDA(ctx, cudaEventRecord(ev[2 * i + 1], d->cs->s));
  }
  CK_CUDA(ctx, cudaStreamSynchronize(d->cs->s));
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    CK_CUDA(ctx, cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    ms_out[i] = ms;
  }
cleanup:
  if (ev) {
    for (int i = 0; i < 2 * reps; ++i)
      if (ev[i]) cudaEventDestroy(ev[i]);
    free(ev);
  }
  return st;
}

// ---------------------------------------------------------------- stopwatch

struct ck_timer {
  bool cuda;
  ck_device dev; /* the default device when it was made: its stream carries the events */
  cudaEvent_t start, stop;
  double t0;
};

ck_status ck_timer_new(ck_ctx *ctx, ck_timer **out) {
  ck_status st = CK_OK;
  ck_timer *t = calloc(1, sizeof *t);
  if (!t) return ck_error(ctx, CK_ERR_OOM, "timer: out of host memory");
  t->dev = ctx->default_dev.kind == CK_CUDA ? ctx->default_dev : ck_device_make(CK_CUDA, 0);
  t->cuda = ctx->has_cuda;
  if (t->cuda) {
    if ((st = ck_use_device(ctx, t->dev))) goto cleanup;
    CK_CUDA(ctx, cudaEventCreate(&t->start));
    CK_CUDA(ctx, cudaEventCreate(&t->stop));
  }
  *out = t;
  return CK_OK;
cleanup:
  ck_timer_free(t);
  return st;
}

ck_status ck_timer_start(ck_ctx *ctx, ck_timer *t) {
  ck_status st = CK_OK;
  if (t->cuda) {
    if ((st = ck_use_device(ctx, t->dev)) || (st = ck_flush(ctx))) return st; /* earlier batched ops run before the start */
    CK_CUDA(ctx, cudaEventRecord(t->start, ctx->cur->cs->s));
  } else t->t0 = now_ms();
cleanup:
  return st;
}

ck_status ck_timer_stop(ck_ctx *ctx, ck_timer *t, double *ms) {
  ck_status st = CK_OK;
  if (!t->cuda) {
    *ms = now_ms() - t->t0;
    return CK_OK;
  }
  float f = 0;
  if ((st = ck_use_device(ctx, t->dev)) || (st = ck_flush(ctx))) return st;
  CK_CUDA(ctx, cudaEventRecord(t->stop, ctx->cur->cs->s));
  CK_CUDA(ctx, cudaEventSynchronize(t->stop));
  CK_CUDA(ctx, cudaEventElapsedTime(&f, t->start, t->stop));
  *ms = f;
cleanup:
  return st;
}

bool ck_timer_is_cuda(const ck_timer *t) { return t->cuda; }

void ck_timer_free(ck_timer *t) {
  if (!t) return;
  if (t->start) cudaEventDestroy(t->start);
  if (t->stop) cudaEventDestroy(t->stop);
  free(t);
}
