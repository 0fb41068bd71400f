/* ck_internal.h — the context's layout, shared by context.c, storage.c and copy.c only. */
#ifndef CK_INTERNAL_H
#define CK_INTERNAL_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "ck.h"

/* One free block of device memory held by the cache. */
typedef struct ck_block {
  void *ptr;
  size_t cap;
  struct ck_block *next;
} ck_block;

#define CK_NBUCKETS 256
#define CK_SPARE_STORAGE 64

/* Live device allocations: open addressing, ptr -> cap (for workspace frees and stats). */
typedef struct ck_livemap {
  void **keys;
  size_t *caps;
  size_t n, mask; /* entries in use, capacity - 1 (power of two) */
} ck_livemap;

struct ck_ctx {
  char err[1024];
  bool has_cuda, sync;
  ck_devkind default_dev;
  ck_devinfo info;
  cudaStream_t stream;
  cublasHandle_t cublas;
  ck_env env; /* cached launch environment (cublas filled in lazily) */
  /* caching allocator */
  ck_block *free_[CK_NBUCKETS];
  /* Spare records, so that a steady-state loop of small ops calls no malloc/free: block nodes for the free
   * lists, and storage records (linked through their ptr field), at most CK_SPARE_STORAGE of them. */
  ck_block *spare_blocks;
  ck_storage *spare_storage;
  int nspare_storage;
  ck_livemap live;
  ck_memstats stats;
  size_t alloc_debt;
  ck_status alloc_st; /* why the last ck_dev_alloc returned NULL */
  void (*oom_hook)(void *ud);
  void *oom_ud;
  /* small ops waiting for one launch (kernels/batched/): flushed by ck_flush before other stream work */
  ck_batch batch;
  bool batching; /* CUKERN_BATCH=0 or ck.batching(false) turns it off */
  bool check_order; /* CUKERN_CHECK_ORDER=1: launchers below ck_launch check that the batch is empty */
  int order_faults; /* launches that found it was not (reported by the next ck_launch / ck_flush) */
  /* graph capture in progress (graph.c), or NULL */
  struct ck_graph *cap;
  /* introspection (kinfo.c): per ladder row, what it launched last; the kernel attribute cache */
  struct ck_seen *seen[CK_NOPKINDS];
  struct ck_kcache *kcache;
  /* benchmark scratch */
  void *flush_buf;
  size_t flush_bytes;
};

/* Internal status for CUDA calls in core files: records and jumps to cleanup. */
#define CK_CUDA(ctx, x)                                                                                   \
  do {                                                                                                    \
    cudaError_t e_ = (x);                                                                                 \
    if (e_ != cudaSuccess) {                                                                              \
      st = ck_cuda_fail((ctx), (int)e_, __FILE__, __LINE__, #x);                                          \
      goto cleanup;                                                                                       \
    }                                                                                                     \
  } while (0)

void ck_alloc_init(ck_ctx *ctx);
/* graph.c: what the allocator hands a capture in progress (see graph.c). */
void ck_graph_keep_storage(ck_ctx *ctx, ck_storage *s);
void ck_graph_defer_block(ck_ctx *ctx, void *p, size_t cap);
/* storage.c: a block back into the cache (bypassing capture deferral). */
void ck_cache_block(ck_ctx *ctx, void *p, size_t cap);
void ck_alloc_destroy(ck_ctx *ctx);
/* kinfo.c: the introspection records, released with the context. */
void ck_kinfo_free(ck_ctx *ctx);

#endif
