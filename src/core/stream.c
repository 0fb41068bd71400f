/*
 * stream.c — streams and events (issue 36): several streams per device, the order between them, the hazard check
 * (CUKERN_CHECK_STREAMS=1) and what keeps the caching allocator and asynchronous copies correct across streams.
 *
 * Each device context (ck_dctx) has its own stream in slot 0 and up to CK_MAX_STREAMS - 1 more. One of them is
 * current (d->cs): ck_submit launches there, so every op of the device runs on it. Only the current stream's small-op
 * queue can hold records: making another stream current launches it first, on the stream it was issued on.
 *
 * The allocator orders a block's reuse by *recorded uses*: a block is cached for the stream it was allocated on
 * (its home slot, kept in the live map) and handed out again only to work on that stream, which stream order
 * serialises; every op marks the streams that touch an array (ck_stream_touch), and when the storage is freed each
 * other stream that used it is joined into the home stream (an event recorded there and waited on by the home
 * stream), so the block's next use waits for those uses too. The cost is paid only by arrays that crossed streams.
 *
 * The hazard check keeps a vector clock per stream: the device counts the writes issued on it (d->seq), an array
 * remembers the stream and count of its last write, a stream remembers how far it has waited for each other stream
 * (events it waited on carry the recorder's clock), and the host remembers how far it has synchronised each one. A
 * touch of an array written on another stream that neither clock covers is the hazard: with CUKERN_CHECK_STREAMS=1
 * it is an error naming both streams. The clocks are kept on host devices too (whose streams run in program order),
 * so a script with a missing event fails the check in CI as it would race on a GPU.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ck_internal.h"

struct ck_event {
  ck_ctx *ctx;
  ck_dctx *d;
  cudaEvent_t ev; /* NULL on a host device */
  bool recorded;
  double host_ms; /* host devices: when it was recorded */
  int slot;       /* the stream it was recorded on */
  uint64_t seen[CK_MAX_STREAMS]; /* that stream's clock at the record, its own slot at the device's count */
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static ck_status cuda_err(ck_ctx *ctx, cudaError_t e, const char *what, const ck_strm *s) {
  (void)cudaGetLastError();
  return ck_error(ctx, CK_ERR_CUDA, "%s (stream %d of %s): %s (%s)", what, s->slot, ck_device_name(s->d->dev).s,
                  cudaGetErrorString(e), cudaGetErrorName(e));
}

static void merge(uint64_t *into, const uint64_t *from) {
  for (int i = 0; i < CK_MAX_STREAMS; ++i)
    if (from[i] > into[i]) into[i] = from[i];
}

// ---------------------------------------------------------------- a device's streams

ck_status ck_strm_init(ck_dctx *d) {
  ck_strm *m = &d->main;
  m->d = d;
  d->strm[0] = d->cs = m;
  if (d->dev.kind == CK_HOST) return CK_OK;
  cudaError_t e = cudaStreamCreateWithFlags(&m->s, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaEventCreateWithFlags(&m->join, cudaEventDisableTiming);
  return e == cudaSuccess ? CK_OK : cuda_err(d->ctx, e, "creating the device's stream", m);
}

ck_strm *ck_strm_at(ck_dctx *d, int slot) { return slot >= 0 && slot < CK_MAX_STREAMS && d->strm[slot] ? d->strm[slot] : &d->main; }

/* The queue of the current stream is the device's only non-empty one: launch it before another stream runs. */
static ck_status flush_if_current(ck_strm *s) { return s->d->cs == s ? ck_dctx_flush(s->d) : CK_OK; }

ck_status ck_strm_join(ck_strm *waiter, ck_strm *producer) {
  ck_ctx *ctx = waiter->d->ctx;
  ck_status st;
  if (waiter == producer) return CK_OK;
  if ((st = flush_if_current(producer))) return st;
  if (producer->s) {
    cudaError_t e = cudaEventRecord(producer->join, producer->s);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(waiter->s, producer->join, 0);
    if (e != cudaSuccess) return cuda_err(ctx, e, "ordering one stream after another", producer);
  }
  merge(waiter->seen, producer->seen);
  waiter->seen[producer->slot] = producer->d->seq;
  return CK_OK;
}

ck_status ck_strm_sync(ck_strm *s) {
  ck_dctx *d = s->d;
  ck_status st;
  if ((st = flush_if_current(s))) return st;
  if (s->s) {
    cudaError_t e = cudaStreamSynchronize(s->s);
    if (e != cudaSuccess) return cuda_err(d->ctx, e, "synchronize", s);
  }
  d->host_seen[s->slot] = d->seq;
  merge(d->host_seen, s->seen);
  ck_pending_poll(d, false);
  return CK_OK;
}

void ck_strm_destroy_all(ck_dctx *d) {
  ck_pending_poll(d, true);
  for (int i = 1; i < CK_MAX_STREAMS; ++i)
    if (d->strm[i]) ck_stream_free(d->ctx, d->strm[i]);
  if (d->main.join) cudaEventDestroy(d->main.join);
  if (d->main.s) cudaStreamDestroy(d->main.s);
}

/* The device's context made current (CUDA devices), for a call on one of its streams. */
static ck_status use(ck_ctx *ctx, ck_dctx *d) { return ck_use_device(ctx, d->dev); }

static ck_status add_stream(ck_ctx *ctx, ck_device dev, cudaStream_t borrowed, ck_stream **out) {
  ck_status st = ck_use_device(ctx, dev);
  ck_dctx *d = st ? NULL : ck_dctx_get(ctx, dev);
  if (!d) return st ? st : CK_ERR_DEVICE;
  int slot = 1;
  while (slot < CK_MAX_STREAMS && d->strm[slot]) ++slot;
  if (slot == CK_MAX_STREAMS)
    return ck_error(ctx, CK_ERR_ARG, "stream: %s has %d streams already (the most a device takes); free one first "
                    "(s:free(), or let it be collected)", ck_device_name(dev).s, CK_MAX_STREAMS);
  ck_strm *s = calloc(1, sizeof *s);
  if (!s) return ck_error(ctx, CK_ERR_OOM, "stream: out of host memory");
  s->d = d;
  s->slot = slot;
  if (dev.kind == CK_CUDA) {
    cudaError_t e = cudaSuccess;
    s->borrowed = borrowed != NULL;
    if (borrowed) s->s = borrowed;
    else e = cudaStreamCreateWithFlags(&s->s, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&s->join, cudaEventDisableTiming);
    if (e != cudaSuccess) {
      st = cuda_err(ctx, e, "creating a stream", s);
      if (s->s && !s->borrowed) cudaStreamDestroy(s->s);
      free(s);
      return st;
    }
  }
  d->strm[slot] = s;
  *out = s;
  return CK_OK;
}

ck_status ck_stream_new(ck_ctx *ctx, ck_device dev, ck_stream **out) { return add_stream(ctx, dev, NULL, out); }

ck_status ck_stream_borrow(ck_ctx *ctx, ck_device dev, void *cuda_stream, ck_stream **out) {
  if (dev.kind != CK_CUDA || !cuda_stream)
    return ck_error(ctx, CK_ERR_ARG, "set_stream: needs a CUDA device and a cudaStream_t (got %s and %p)",
                    ck_device_name(dev).s, cuda_stream);
  return add_stream(ctx, dev, (cudaStream_t)cuda_stream, out);
}

/* Blocks cached for a slot that is given back go to the device's own stream: the slot's work has finished. */
static void retag_cache(ck_dctx *d, int slot) {
  for (int b = 0; b < CK_NBUCKETS; ++b)
    for (ck_block *k = d->free_[b]; k; k = k->next)
      if (k->slot == slot) k->slot = 0;
}

void ck_stream_free(ck_ctx *ctx, ck_stream *s) {
  if (!s || s == &s->d->main) return;
  ck_dctx *d = s->d;
  ck_dctx *keep = ctx->cur;
  if (!use(ctx, d)) (void)ck_strm_sync(s); /* (a failure stays in the message for the next call to report) */
  if (d->cs == s) d->cs = &d->main;
  d->strm[s->slot] = NULL;
  retag_cache(d, s->slot);
  if (s->join) cudaEventDestroy(s->join);
  ck_handles_unbind(d, s->s); /* (a borrowed stream may die with its owner too) */
  if (s->s && !s->borrowed) cudaStreamDestroy(s->s);
  free(s);
  if (keep) (void)ck_use_device(ctx, keep->dev);
}

ck_stream *ck_stream_current(ck_ctx *ctx, ck_device dev) {
  ck_dctx *d = ck_check_device(ctx, dev) ? NULL : ck_dctx_get(ctx, dev);
  return d ? d->cs : NULL;
}

ck_stream *ck_stream_own(ck_ctx *ctx, ck_device dev) { return ck_stream_in_slot(ctx, dev, 0); }

ck_stream *ck_stream_in_slot(ck_ctx *ctx, ck_device dev, int slot) {
  ck_dctx *d = ck_check_device(ctx, dev) ? NULL : ck_dctx_get(ctx, dev);
  return d ? ck_strm_at(d, slot) : NULL;
}

/* A graph capture records one stream: no other may become current (nor be joined to it) until it ends. */
static ck_status capture_refuses(ck_ctx *ctx, const ck_strm *s) {
  const ck_dctx *d = s->d;
  if (!d->cap || d->cs == s) return CK_OK;
  return ck_error(ctx, CK_ERR_ARG, "with_stream: a graph is being captured on stream %d of %s; the stream cannot "
                  "change until it ends", d->cs->slot, ck_device_name(d->dev).s);
}

ck_status ck_stream_enter(ck_ctx *ctx, ck_stream *s) {
  ck_status st = capture_refuses(ctx, s);
  if (!st) st = use(ctx, s->d);
  if (!st) st = ck_strm_join(s, s->d->cs);
  return st ? st : ck_stream_set_current(ctx, s);
}

ck_status ck_stream_set_current(ck_ctx *ctx, ck_stream *s) {
  ck_dctx *d = s->d;
  ck_status st;
  if (d->cs == s) return CK_OK;
  if ((st = capture_refuses(ctx, s)) || (st = use(ctx, d)) || (st = ck_dctx_flush(d))) return st;
  d->cs = s;
  return CK_OK;
}

ck_device ck_stream_device(const ck_stream *s) { return s->d->dev; }
int ck_stream_slot(const ck_stream *s) { return s->slot; }
bool ck_stream_borrowed(const ck_stream *s) { return s->borrowed; }
void *ck_stream_handle(const ck_stream *s) { return s->s; }

ck_status ck_stream_sync(ck_ctx *ctx, ck_stream *s) {
  ck_status st = use(ctx, s->d);
  return st ? st : ck_strm_sync(s);
}

ck_status ck_stream_sync_current(ck_ctx *ctx, ck_device dev) {
  ck_stream *s = ck_stream_current(ctx, dev);
  return s ? ck_stream_sync(ctx, s) : CK_ERR_DEVICE;
}

ck_status ck_stream_wait(ck_ctx *ctx, ck_stream *s, const ck_event *e) {
  ck_status st;
  if (e->d != s->d)
    return ck_error(ctx, CK_ERR_DEVICE, "s:wait: the event belongs to %s and the stream to %s (an event orders the "
                    "streams of its own device)", ck_device_name(e->d->dev).s, ck_device_name(s->d->dev).s);
  if (!e->recorded) return CK_OK; /* as cudaStreamWaitEvent: an event never recorded is complete */
  if ((st = use(ctx, s->d)) || (st = flush_if_current(s))) return st;
  if (s->s) {
    cudaError_t err = cudaStreamWaitEvent(s->s, e->ev, 0);
    if (err != cudaSuccess) return cuda_err(ctx, err, "s:wait", s);
  }
  merge(s->seen, e->seen);
  return CK_OK;
}

// ---------------------------------------------------------------- events

ck_status ck_event_new(ck_ctx *ctx, ck_device dev, ck_event **out) {
  ck_status st = ck_use_device(ctx, dev);
  ck_dctx *d = st ? NULL : ck_dctx_get(ctx, dev);
  if (!d) return st ? st : CK_ERR_DEVICE;
  ck_event *e = calloc(1, sizeof *e);
  if (!e) return ck_error(ctx, CK_ERR_OOM, "event: out of host memory");
  e->ctx = ctx;
  e->d = d;
  cudaError_t err = dev.kind == CK_CUDA ? cudaEventCreate(&e->ev) : cudaSuccess;
  if (err != cudaSuccess) {
    free(e);
    return cuda_err(ctx, err, "creating an event", d->cs);
  }
  *out = e;
  return CK_OK;
}

ck_status ck_event_record(ck_ctx *ctx, ck_event *e, ck_stream *s) {
  ck_status st;
  if (e->d != s->d)
    return ck_error(ctx, CK_ERR_DEVICE, "e:record: the event belongs to %s and the stream to %s (record it on a "
                    "stream of its own device)", ck_device_name(e->d->dev).s, ck_device_name(s->d->dev).s);
  if ((st = use(ctx, s->d)) || (st = flush_if_current(s))) return st;
  if (s->s) {
    cudaError_t err = cudaEventRecord(e->ev, s->s);
    if (err != cudaSuccess) return cuda_err(ctx, err, "e:record", s);
  } else e->host_ms = now_ms();
  memcpy(e->seen, s->seen, sizeof e->seen);
  e->seen[s->slot] = s->d->seq;
  e->slot = s->slot;
  e->recorded = true;
  return CK_OK;
}

ck_status ck_event_sync(ck_ctx *ctx, ck_event *e) {
  if (!e->recorded) return CK_OK;
  ck_status st = use(ctx, e->d);
  if (st) return st;
  if (e->ev) {
    cudaError_t err = cudaEventSynchronize(e->ev);
    if (err != cudaSuccess) return cuda_err(ctx, err, "e:sync", ck_strm_at(e->d, e->slot));
  }
  merge(e->d->host_seen, e->seen);
  return CK_OK;
}

ck_status ck_event_elapsed(ck_ctx *ctx, const ck_event *a, const ck_event *b, double *ms) {
  if (!a->recorded || !b->recorded) return ck_error(ctx, CK_ERR_ARG, "e:elapsed: both events must be recorded first");
  if (a->d != b->d)
    return ck_error(ctx, CK_ERR_DEVICE, "e:elapsed: the events belong to %s and %s", ck_device_name(a->d->dev).s,
                    ck_device_name(b->d->dev).s);
  if (!a->ev) {
    *ms = b->host_ms - a->host_ms;
    return CK_OK;
  }
  ck_status st = use(ctx, a->d);
  float f = 0;
  cudaError_t err = st ? cudaSuccess : cudaEventSynchronize(b->ev);
  if (st) return st;
  if (err == cudaSuccess) err = cudaEventElapsedTime(&f, a->ev, b->ev);
  if (err != cudaSuccess) return cuda_err(ctx, err, "e:elapsed", ck_strm_at(b->d, b->slot));
  *ms = f;
  return CK_OK;
}

ck_device ck_event_device(const ck_event *e) { return e->d->dev; }

void ck_event_free(ck_event *e) {
  if (!e) return;
  if (e->ev) cudaEventDestroy(e->ev);
  free(e);
}

// ---------------------------------------------------------------- uses, writes and the hazard check

bool ck_check_streams(const ck_ctx *ctx) { return ctx->check_streams; }

/* The stream an op on t runs on: the current one of t's device. */
static ck_strm *stream_of(const ck_tensor *t) { return t->st && t->st->dctx ? t->st->dctx->cs : NULL; }

ck_status ck_stream_touch(ck_ctx *ctx, const char *op, const ck_tensor *t) {
  ck_strm *s = stream_of(t);
  if (!s) return CK_OK;
  ck_storage *st = t->st;
  st->uses |= 1ull << s->slot;
  if (!ctx->check_streams || !st->wseq || (st->wd && st->wd != s->d)) return CK_OK;
  const int w = st->wslot;
  if (w == s->slot || s->seen[w] >= st->wseq || s->d->host_seen[w] >= st->wseq) return CK_OK;
  return ck_error(ctx, CK_ERR_ARG, "%s: stream hazard (CUKERN_CHECK_STREAMS): an array on %s was written on stream "
                  "%d and is used on stream %d with no event between; record an event after the write and make "
                  "this stream wait for it (e:record(s1); s2:wait(e)), or synchronise the writer (s1:sync())", op,
                  ck_device_name(s->d->dev).s, w, s->slot);
}

void ck_stream_wrote(ck_ctx *ctx, const ck_tensor *t) {
  ck_strm *s = stream_of(t);
  if (!s) return;
  t->st->wslot = s->slot;
  t->st->wseq = ++s->d->seq;
  t->st->wd = NULL;
}

ck_stream *ck_stream_at(ck_ctx *ctx, const ck_tensor *t) {
  ck_storage *st = t->st;
  return st && st->dctx ? ck_strm_at(st->dctx, st->wseq ? st->wslot : st->dctx->cs->slot) : NULL;
}

void ck_stream_wrote_host(ck_ctx *ctx, const ck_tensor *t) {
  ck_dctx *d = ctx->cur;
  if (!d || !t->st) return;
  t->st->wd = d;
  t->st->wslot = d->cs->slot;
  t->st->wseq = ++d->seq;
}

bool ck_stream_wrote_last(const ck_stream *s, const ck_tensor *t) {
  const ck_storage *st = t->st;
  return st && (st->wd ? st->wd : st->dctx) == s->d && st->wslot == s->slot;
}

ck_status ck_pending_keep_tensor(ck_ctx *ctx, const ck_tensor *t) {
  return ctx->cur ? ck_pending_keep(ctx->cur, t->st) : CK_ERR_DEVICE;
}

ck_status ck_stream_host_ready(ck_ctx *ctx, const ck_tensor *t) {
  ck_storage *st = t->st;
  if (!st || !st->wd || st->wd->host_seen[st->wslot] >= st->wseq) return CK_OK;
  ck_dctx *keep = ctx->cur;
  ck_status s = use(ctx, st->wd);
  if (!s) s = ck_strm_sync(ck_strm_at(st->wd, st->wslot));
  if (keep) (void)ck_use_device(ctx, keep->dev);
  return s;
}

// ---------------------------------------------------------------- storages kept alive by copies in flight

void ck_pending_poll(ck_dctx *d, bool wait) {
  for (ck_pending **pp = &d->pending; *pp;) {
    ck_pending *p = *pp;
    cudaError_t e = wait ? cudaEventSynchronize(p->ev) : cudaEventQuery(p->ev);
    if (e == cudaErrorNotReady) {
      pp = &p->next;
      continue;
    }
    (void)cudaGetLastError();
    *pp = p->next;
    cudaEventDestroy(p->ev);
    ck_storage_release(p->st);
    free(p);
  }
}

/* Keep st alive until the current stream of d passes this point (an asynchronous copy reads or writes it). */
ck_status ck_pending_keep(ck_dctx *d, ck_storage *st) {
  ck_ctx *ctx = d->ctx;
  ck_pending *p = calloc(1, sizeof *p);
  if (!p) return ck_error(ctx, CK_ERR_OOM, "asynchronous copy: out of host memory");
  cudaError_t e = cudaEventCreateWithFlags(&p->ev, cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaEventRecord(p->ev, d->cs->s);
  if (e != cudaSuccess) {
    if (p->ev) cudaEventDestroy(p->ev);
    free(p);
    return cuda_err(ctx, e, "asynchronous copy: recording its event", d->cs);
  }
  ck_storage_retain(st);
  p->st = st;
  p->next = d->pending;
  d->pending = p;
  ck_pending_poll(d, false); /* (the older ones that finished meanwhile go) */
  return CK_OK;
}

/* The storage is freed: every other stream that used it joins its home stream, whose work alone reuses the block. */
void ck_stream_join_uses(ck_dctx *d, int home, uint64_t uses) {
  ck_strm *h = ck_strm_at(d, home);
  uses &= ~(1ull << h->slot);
  for (int i = 0; uses && i < CK_MAX_STREAMS; ++i)
    if (uses & (1ull << i)) {
      uses &= ~(1ull << i);
      if (d->strm[i]) (void)ck_strm_join(h, d->strm[i]); /* (a given-back slot's work has finished) */
    }
}
