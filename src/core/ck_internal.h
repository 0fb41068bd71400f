/* ck_internal.h — the context's layout, shared by context.c, storage.c and copy.c only. */
#ifndef CK_INTERNAL_H
#define CK_INTERNAL_H

#include <cublas_v2.h>
#include <cublasLt.h>
#include <cusolverDn.h>
#include <cuda_runtime_api.h>

#include "ck.h"

/* One free block of device memory held by the cache, for reuse by work on stream `slot` (stream.c). */
/* A 2 MiB cudaMalloc that small blocks are carved from (storage.c): `used` bytes carved so far, `live` of its blocks
 * not in a free list (in use, or held by a graph). */
typedef struct ck_segment {
  char *base;
  size_t used;
  int live;
} ck_segment;

typedef struct ck_block {
  void *ptr;
  size_t cap;
  int slot;
  ck_segment *seg; /* the segment it was carved from, or NULL for a block of its own cudaMalloc */
  struct ck_block *next;
} ck_block;

#define CK_NBUCKETS 256
#define CK_SPARE_STORAGE 64

/* Live device allocations: open addressing, ptr -> (cap, home stream slot) (for workspace frees and stats). */
typedef struct ck_livemap {
  void **keys;
  size_t *caps;
  int *slots;
  size_t n, mask; /* entries in use, capacity - 1 (power of two) */
} ck_livemap;

/* One stream of one device (issue 36; stream.c). Slot 0 is the device's own stream, made with its context; user
 * streams (ck.stream(), cukern_set_stream) take the free slots 1 .. CK_MAX_STREAMS-1. On host devices a stream has
 * no CUDA stream (s == NULL): its order is the program's, and only its clock is kept, so that the hazard check and
 * the scripts run the same there. */
typedef struct ck_strm {
  struct ck_dctx *d;
  cudaStream_t s;
  cudaEvent_t join; /* recorded here when another stream must wait for this one (allocator joins, ck_stream_after) */
  bool borrowed;    /* an application's stream (cukern_set_stream): never destroyed here */
  int slot;
  unsigned gen;     /* bumped each time the slot is given back, so that stale references are recognised */
  /* small ops waiting for one launch on this stream (kernels/batched/): only the current stream's queue is ever
   * non-empty, since switching streams launches it */
  ck_batch batch;
  /* the vector clock of the hazard check: the last op sequence number of each slot this stream is known to run
   * after (through events it waited on) */
  uint64_t seen[CK_MAX_STREAMS];
} ck_strm;

/* Work kept alive until the stream that uses it passes an event: a pinned source of an asynchronous copy that Lua
 * may free meanwhile (stream.c). */
typedef struct ck_pending {
  ck_storage *st;
  cudaEvent_t ev;
  struct ck_pending *next;
} ck_pending;

/* The context of one device (issue 31): what every launch on it needs, built on first use (ck_use_device). A
 * device's streams, cuBLAS handle, caching allocator and statistics, small-op batch queue, graph capture, kernel
 * attribute cache and benchmark scratch are its own; host:N devices use only the statistics. */
typedef struct ck_dctx {
  ck_ctx *ctx; /* the session it belongs to (its error message, spares, GC debt) */
  ck_device dev;
  ck_devinfo info;
  ck_strm main;                       /* slot 0: the device's own stream */
  ck_strm *cs;                        /* the current stream: every launch on this device goes there */
  ck_strm *strm[CK_MAX_STREAMS];      /* by slot; NULL where free */
  uint64_t seq;                       /* writes issued on this device (the hazard check's clock) */
  uint64_t host_seen[CK_MAX_STREAMS]; /* per slot, the point of that clock the host has waited for */
  ck_pending *pending;                /* storages kept alive by asynchronous copies in flight */
  cublasHandle_t cublas;
  cublasLtHandle_t cublaslt; /* made and destroyed with cublas */
  ck_env env; /* cached launch environment (cublas filled in lazily) */
  cudaEvent_t order_ev; /* cross-device ordering (ck_stream_after): recorded here, waited on by another device */
  unsigned long long peer[(CK_MAX_DEVICES + 63) / 64]; /* peers this device may access (enabled lazily) */
  /* caching allocator */
  ck_block *free_[CK_NBUCKETS];
  ck_segment **segs; /* small-block segments, sorted by base */
  int nsegs, segs_cap;
  ck_segment *carve; /* the one new small blocks are carved from (NULL: none yet, or it was given back) */
  ck_livemap live;
  ck_memstats stats;
  /* graph capture in progress on this device's stream (graph.c), or NULL */
  struct ck_graph *cap;
  struct ck_kcache *kcache; /* kernel attributes (kinfo.c): per device, as the attributes are */
  void *flush_buf; /* benchmark scratch */
  size_t flush_bytes;
  /* cuSOLVER's dense handle (linear algebra), made on the first launch that asks for it (cuSOLVER is loaded at run
   * time: kernels/linalg/cusolver_dl.h), destroyed with the context; bound to cusolver_stream */
  cusolverDnHandle_t cusolver;
  void *cusolver_stream;
  /* the check words (ck_check_word: the gathers' bounds flags, gesv_small's info flag): pinned host memory the device
   * writes directly, and its device address (the same pointer under unified addressing); NULL until first used */
  int64_t *check_word;
  void *check_word_dev;
} ck_dctx;

/* Library handles bound to `stream` go back to the device's own stream (context.c; before the stream dies). */
void ck_handles_unbind(ck_dctx *d, void *stream);

/* One per Lua state (or embedding application): the devices' contexts, and what is the same on all of them. */
struct ck_ctx {
  char err[1024];
  bool has_cuda, sync;
  ck_device default_dev;
  ck_devinfo info; /* the process's view: driver and runtime versions, device count, why the host */
  int ncuda, nhost;  /* cuda:0 .. ncuda-1 (0 without a GPU), host:0 .. nhost-1 (CUKERN_HOST_DEVICES, default 1) */
  ck_dctx *cuda[CK_MAX_DEVICES], *host[CK_MAX_DEVICES];
  ck_dctx *cur;      /* the CUDA device the calls in progress run on (ck_use_device), NULL before the first */
  ck_dctx *capture;  /* the device whose stream a graph capture is recording, or NULL */
  /* Spare records, so that a steady-state loop of small ops calls no malloc/free: block nodes for the free
   * lists, and storage records (linked through their ptr field), at most CK_SPARE_STORAGE of them. */
  ck_block *spare_blocks;
  ck_storage *spare_storage;
  int nspare_storage;
  size_t alloc_debt;
  ck_status alloc_st; /* why the last ck_dev_alloc returned NULL */
  void (*oom_hook)(void *ud);
  void *oom_ud;
  bool batching; /* CUKERN_BATCH=0 or ck.batching(false) turns it off */
  bool check_order; /* CUKERN_CHECK_ORDER=1: launchers below ck_launch check that the batch is empty */
  bool check_streams; /* CUKERN_CHECK_STREAMS=1: the cross-stream hazard check (stream.c) */
  int order_faults; /* launches that found it was not (reported by the next ck_launch / ck_flush) */
  /* introspection (kinfo.c): per ladder row, what it launched last */
  struct ck_seen *seen[CK_NOPKINDS];
};

void ck_discover(ck_ctx *ctx); /* device.c: counts the devices (their contexts come on first use) */
/* The context of `dev`, built on first use (NULL with the error in ctx when it cannot be). */
ck_dctx *ck_dctx_get(ck_ctx *ctx, ck_device dev);
/* stream.c: a device's own stream set up (slot 0) and every stream of it torn down with the context. */
ck_status ck_strm_init(ck_dctx *d);
void ck_strm_destroy_all(ck_dctx *d);
/* Synchronise one stream: its queue flushed, the host's clock advanced. */
ck_status ck_strm_sync(ck_strm *s);
/* The stream of `slot` on d, or d's own stream when the slot was given back (its work has finished then). */
ck_strm *ck_strm_at(ck_dctx *d, int slot);
/* Make `waiter` run its later work after everything issued so far on `producer` (an event). */
ck_status ck_strm_join(ck_strm *waiter, ck_strm *producer);
/* Release the storages of asynchronous copies that have finished (all of them, waiting, with `wait`). */
void ck_pending_poll(ck_dctx *d, bool wait);
/* Keep st alive until the current stream of d passes this point (an asynchronous copy reads or writes it). */
ck_status ck_pending_keep(ck_dctx *d, ck_storage *st);
/* A block of home stream `home` is freed: the other streams in `uses` (a bit per slot) join the home stream. */
void ck_stream_join_uses(ck_dctx *d, int home, uint64_t uses);
/* The current CUDA device's context, or NULL (with an error in ctx) when there is none. */
ck_dctx *ck_cur(ck_ctx *ctx);
/* Device memory from (and back to) one device's cache; the device must be current. */
void *ck_dctx_alloc(ck_dctx *d, size_t bytes);
void ck_dctx_free(ck_dctx *d, void *p);
void ck_dctx_free_used(ck_dctx *d, void *p, uint64_t uses); /* ... after the streams in `uses` (ck_stream_join_uses) */
ck_status ck_dctx_flush(ck_dctx *d);

/* Internal status for CUDA calls in core files: records and jumps to cleanup. */
#define CK_CUDA(ctx, x)                                                                                   \
  do {                                                                                                    \
    cudaError_t e_ = (x);                                                                                 \
    if (e_ != cudaSuccess) {                                                                              \
      st = ck_cuda_fail((ctx), (int)e_, __FILE__, __LINE__, #x);                                          \
      goto cleanup;                                                                                       \
    }                                                                                                     \
  } while (0)

/* graph.c: what the allocator hands a capture in progress (see graph.c). */
void ck_graph_keep_storage(ck_dctx *d, ck_storage *s);
void ck_graph_defer_block(ck_dctx *d, void *p, size_t cap);
/* storage.c: a block back into the cache for stream `slot` (bypassing capture deferral); a device's cache emptied /
 * released. */
void ck_cache_block(ck_dctx *d, void *p, size_t cap, int slot);
void ck_dctx_empty_cache(ck_dctx *d);
void ck_alloc_destroy(ck_ctx *ctx);
/* kinfo.c: the introspection records, released with the context (and a device's attribute cache). */
void ck_kinfo_free(ck_ctx *ctx);
void ck_kcache_free(ck_dctx *d);

#endif
