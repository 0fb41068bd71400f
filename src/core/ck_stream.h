/*
 * ck_stream.h — the core's streams and events, the bookkeeping that keeps them correct, and NVTX (issue 36;
 * src/core/stream.c, nvtx.c). Included by ck.h, after the types it uses.
 */
#ifndef CK_STREAM_H
#define CK_STREAM_H

/* ---------------------------------------------------------------- streams and events (stream.c, issue 36)
 * Every device has its own stream (slot 0) and up to CK_MAX_STREAMS - 1 more; ops run on the current stream of
 * the device of their operands. Host devices have streams too, ordered trivially (the program's order), so that
 * scripts and the hazard check run the same without a GPU. */
#define CK_MAX_STREAMS 64
typedef struct ck_strm ck_stream;
typedef struct ck_event ck_event;
ck_status ck_stream_new(ck_ctx *ctx, ck_device dev, ck_stream **out);
/* An application's CUDA stream (cudaStream_t) as a stream of dev; never destroyed by cukern. */
ck_status ck_stream_borrow(ck_ctx *ctx, ck_device dev, void *cuda_stream, ck_stream **out);
void ck_stream_free(ck_ctx *ctx, ck_stream *s); /* waits for it first; its device's own stream becomes current */
ck_stream *ck_stream_current(ck_ctx *ctx, ck_device dev); /* NULL (error in ctx) when dev cannot be used */
ck_stream *ck_stream_own(ck_ctx *ctx, ck_device dev);     /* the device's own stream (slot 0) */
ck_stream *ck_stream_in_slot(ck_ctx *ctx, ck_device dev, int slot); /* ... or the own one if the slot is free */
ck_status ck_stream_set_current(ck_ctx *ctx, ck_stream *s); /* on its device: launches the queue of the one before */
/* ... after making s wait for the work issued so far on the stream current before (ck.with_stream: a fork). */
ck_status ck_stream_enter(ck_ctx *ctx, ck_stream *s);
ck_device ck_stream_device(const ck_stream *s);
int ck_stream_slot(const ck_stream *s);
bool ck_stream_borrowed(const ck_stream *s); /* an application's (ck_stream_borrow) */
void *ck_stream_handle(const ck_stream *s); /* the cudaStream_t (NULL on a host device) */
ck_status ck_stream_sync(ck_ctx *ctx, ck_stream *s);
/* Wait for dev's current stream (a result the host looks at next, e.g. a check word the last launch wrote). */
ck_status ck_stream_sync_current(ck_ctx *ctx, ck_device dev);
ck_status ck_stream_wait(ck_ctx *ctx, ck_stream *s, const ck_event *e); /* s's later work runs after e */
ck_status ck_event_new(ck_ctx *ctx, ck_device dev, ck_event **out);
ck_status ck_event_record(ck_ctx *ctx, ck_event *e, ck_stream *s); /* s must be on e's device */
ck_status ck_event_sync(ck_ctx *ctx, ck_event *e);
ck_status ck_event_elapsed(ck_ctx *ctx, const ck_event *a, const ck_event *b, double *ms);
ck_device ck_event_device(const ck_event *e);
void ck_event_free(ck_event *e);
/* An op is about to read or write t on the current stream of t's device: records the use (the allocator orders
 * the block's reuse after it) and, with CUKERN_CHECK_STREAMS=1, fails when t was written on another stream that
 * this one is not known to run after (no event waited on, no synchronisation since). */
ck_status ck_stream_touch(ck_ctx *ctx, const char *op, const ck_tensor *t);
void ck_stream_wrote(ck_ctx *ctx, const ck_tensor *t); /* ... and it wrote t there */
/* Host code is about to read t's memory: wait for the stream that wrote it last, if a device copy did (pinned). */
ck_status ck_stream_host_ready(ck_ctx *ctx, const ck_tensor *t);
bool ck_check_streams(const ck_ctx *ctx);
/* The stream that wrote t last (its device's own when that one is gone). */
ck_stream *ck_stream_at(ck_ctx *ctx, const ck_tensor *t);
/* An asynchronous transfer on the current stream of the device current now read or wrote t's (host) memory: it stays
 * alive until the stream passes this point; and (wrote_host) host code reading it waits for that stream. */
ck_status ck_pending_keep_tensor(ck_ctx *ctx, const ck_tensor *t);
void ck_stream_wrote_host(ck_ctx *ctx, const ck_tensor *t);
bool ck_stream_wrote_last(const ck_stream *s, const ck_tensor *t); /* s is the stream that wrote t last */

/* NVTX ranges (nvtx.c): pushed and popped on this thread; pop returns the depth left (< 0: none was open).
 * ck_nvtx_ops: CUKERN_NVTX=1, a range per op named after the calling Lua line. */
void ck_nvtx_push(const char *name);
int ck_nvtx_pop(void);
bool ck_nvtx_ops(void);

#endif
