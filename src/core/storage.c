/*
 * storage.c — refcounted storage and the caching device allocator.
 *
 * Device memory is handed out in size classes (four per power of two, at least 512 bytes) and returned to
 * per-class free lists instead of cudaFree, so that steady-state loops allocate nothing from the driver. Blocks
 * up to 64 KiB (a reduction's result, a scan's flags, a library's scratch) are carved from 2 MiB segments rather
 * than each from its own cudaMalloc (10-20 us apiece on an H100, where the op they serve issues in 5-10 us): a
 * new small size class costs a bump of a pointer, and a segment goes back to the driver only with ck.empty_cache
 * once none of its blocks is in use (as PyTorch's small pool).
 * Each device has its own cache (in its ck_dctx). A cached block remembers the stream it was allocated on (its
 * home) and is handed out again only to work on that stream, so stream order serialises its uses without an event;
 * other streams that used it are joined into the home stream when it is freed (recorded uses: stream.c). A
 * block only ever returns to the device it came from; work of another device that reads it (a peer copy) is
 * ordered before the block's next use with an event (ck_memcpy_peer). Pinned host memory (cudaHostAlloc) is
 * storage of a host device, counted in its statistics; without a GPU it is ordinary memory. On cudaMalloc failure the binding's hook runs a
 * full Lua GC (which returns blocks to the cache), the cache is emptied and the allocation retried once.
 */
#include <stdlib.h>
#include <string.h>

#include "fft/fft.h"

#include "ck_internal.h"

// ---------------------------------------------------------------- size classes

static int size_class(size_t bytes, size_t *cap) {
  if (bytes < 512) bytes = 512;
  int k = 63 - __builtin_clzll((unsigned long long)bytes); /* 2^k <= bytes < 2^(k+1) */
  size_t base = (size_t)1 << k, quarter = base >> 2;
  size_t sub = (bytes - base + quarter - 1) / quarter; /* 0..4 */
  if (sub == 4) {
    k += 1;
    sub = 0;
    base <<= 1;
    quarter <<= 1;
  }
  *cap = base + sub * quarter;
  int idx = (k - 9) * 4 + (int)sub;
  return idx < CK_NBUCKETS ? idx : CK_NBUCKETS - 1;
}

// ---------------------------------------------------------------- live map (ptr -> cap)

static size_t hash_ptr(void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static bool live_grow(ck_livemap *m) {
  size_t ncap = m->keys ? (m->mask + 1) * 2 : 64;
  void **keys = calloc(ncap, sizeof *keys);
  size_t *caps = calloc(ncap, sizeof *caps);
  int *slots = calloc(ncap, sizeof *slots);
  if (!keys || !caps || !slots) {
    free(keys);
    free(caps);
    free(slots);
    return false;
  }
  if (m->keys) {
    for (size_t i = 0; i <= m->mask; ++i) {
      if (!m->keys[i]) continue;
      size_t j = hash_ptr(m->keys[i]) & (ncap - 1);
      while (keys[j]) j = (j + 1) & (ncap - 1);
      keys[j] = m->keys[i];
      caps[j] = m->caps[i];
      slots[j] = m->slots[i];
    }
  }
  free(m->keys);
  free(m->caps);
  free(m->slots);
  m->keys = keys;
  m->caps = caps;
  m->slots = slots;
  m->mask = ncap - 1;
  return true;
}

static bool live_put(ck_livemap *m, void *p, size_t cap, int slot) {
  if (!m->keys || (m->n + 1) * 2 > m->mask + 1)
    if (!live_grow(m)) return false;
  size_t j = hash_ptr(p) & m->mask;
  while (m->keys[j]) j = (j + 1) & m->mask;
  m->keys[j] = p;
  m->caps[j] = cap;
  m->slots[j] = slot;
  m->n++;
  return true;
}

/* Removes p; returns its cap (0 if unknown) and its home slot. Backward-shift deletion keeps probe chains intact. */
static size_t live_take(ck_livemap *m, void *p, int *slot) {
  if (!m->keys) return 0;
  size_t j = hash_ptr(p) & m->mask;
  while (m->keys[j] && m->keys[j] != p) j = (j + 1) & m->mask;
  if (!m->keys[j]) return 0;
  size_t cap = m->caps[j];
  *slot = m->slots[j];
  m->keys[j] = NULL;
  m->n--;
  for (size_t k = (j + 1) & m->mask; m->keys[k]; k = (k + 1) & m->mask) {
    size_t home = hash_ptr(m->keys[k]) & m->mask;
    /* move k back into the hole j if its home is not in (j, k] cyclically */
    if (((k - home) & m->mask) >= ((k - j) & m->mask)) {
      m->keys[j] = m->keys[k];
      m->caps[j] = m->caps[k];
      m->slots[j] = m->slots[k];
      m->keys[k] = NULL;
      j = k;
    }
  }
  return cap;
}

// ---------------------------------------------------------------- small-block segments

#define CK_SMALL_MAX ((size_t)64 << 10) /* blocks up to this cap are carved from segments */
#define CK_SEGMENT ((size_t)2 << 20)

/* A carved block takes its cap rounded up to 256 bytes, so that every block starts where a cudaMalloc would
 * (256-byte aligned: cuFFT's work area, TMA and the libraries' workspaces count on it). */
static size_t carve_end(size_t cap) { return (cap + 255) & ~(size_t)255; }

/* The segment holding p, or NULL (binary search of the sorted segments). */
static ck_segment *seg_of(const ck_dctx *d, const void *p) {
  int lo = 0, hi = d->nsegs - 1;
  const char *c = p;
  while (lo <= hi) {
    const int mid = (lo + hi) / 2;
    ck_segment *s = d->segs[mid];
    if (c < s->base) hi = mid - 1;
    else if (c >= s->base + CK_SEGMENT) lo = mid + 1;
    else return s;
  }
  return NULL;
}

/* The segments' bookkeeping for a new one at base (kept sorted); false when out of host memory. */
static bool seg_insert(ck_dctx *d, ck_segment *s) {
  if (d->nsegs == d->segs_cap) {
    const int ncap = d->segs_cap ? 2 * d->segs_cap : 8;
    ck_segment **v = realloc(d->segs, sizeof *v * (size_t)ncap);
    if (!v) return false;
    d->segs = v, d->segs_cap = ncap;
  }
  int i = d->nsegs;
  while (i > 0 && d->segs[i - 1]->base > s->base) d->segs[i] = d->segs[i - 1], --i;
  d->segs[i] = s;
  d->nsegs++;
  return true;
}

/* Every segment none of whose blocks is in use back to the driver: one pass over the small classes' free lists
 * takes their blocks out (marked by live == -1 meanwhile), then the segments go. */
static void release_free_segments(ck_dctx *d) {
  ck_ctx *ctx = d->ctx;
  int n = 0;
  for (int i = 0; i < d->nsegs; ++i)
    if (d->segs[i]->live == 0) d->segs[i]->live = -1, ++n;
  if (!n) return;
  size_t cap;
  const int last = size_class(CK_SMALL_MAX, &cap);
  for (int b = 0; b <= last; ++b)
    for (ck_block **pp = &d->free_[b]; *pp;) {
      ck_block *blk = *pp;
      if (!blk->seg || blk->seg->live != -1) {
        pp = &blk->next;
        continue;
      }
      *pp = blk->next;
      d->stats.cached -= blk->cap;
      blk->next = ctx->spare_blocks;
      ctx->spare_blocks = blk;
    }
  int k = 0;
  for (int i = 0; i < d->nsegs; ++i) {
    ck_segment *s = d->segs[i];
    if (s->live != -1) {
      d->segs[k++] = s;
      continue;
    }
    cudaFree(s->base);
    d->stats.segments -= CK_SEGMENT;
    if (d->carve == s) d->carve = NULL;
    free(s);
  }
  d->nsegs = k;
}

// ---------------------------------------------------------------- allocator

void ck_dctx_empty_cache(ck_dctx *d) {
  ck_ctx *ctx = d->ctx;
  if (d->dev.kind != CK_CUDA || d->cap) return; /* no cudaFree (or synchronise) while a graph is being captured */
  ck_dctx *keep = ctx->cur;
  if (ck_synchronize_device(ctx, d->dev)) return; /* queued ops of any stream may still use a cached block */
  for (int b = 0; b < CK_NBUCKETS; ++b)
    for (ck_block **pp = &d->free_[b]; *pp;) {
      ck_block *blk = *pp;
      if (blk->seg) { /* carved: it goes with its segment, below */
        pp = &blk->next;
        continue;
      }
      *pp = blk->next;
      cudaFree(blk->ptr);
      d->stats.cached -= blk->cap;
      blk->next = ctx->spare_blocks;
      ctx->spare_blocks = blk;
    }
  release_free_segments(d);
  if (keep) (void)ck_use_device(ctx, keep->dev);
}

void ck_empty_cache(ck_ctx *ctx) {
  for (int i = 0; i < ctx->ncuda; ++i)
    if (ctx->cuda[i]) ck_dctx_empty_cache(ctx->cuda[i]);
  if (ctx->ncuda && !ck_capturing(ctx)) ck_fft_plans_clear(); /* cuFFT's plans (every stream is idle now) */
}

void ck_alloc_destroy(ck_ctx *ctx) {
  ck_empty_cache(ctx);
  for (ck_block *b = ctx->spare_blocks, *next; b; b = next) next = b->next, free(b);
  ctx->spare_blocks = NULL;
  for (ck_storage *s = ctx->spare_storage, *next; s; s = next) next = (ck_storage *)s->ptr, free(s);
  ctx->spare_storage = NULL;
  ctx->nspare_storage = 0;
  for (int i = 0; i < ctx->ncuda; ++i)
    if (ctx->cuda[i]) {
      ck_dctx *d = ctx->cuda[i];
      /* what empty_cache kept (the free blocks of segments that live arrays still use, or everything when it could
       * not synchronise): the records go, the device memory goes with the CUDA context */
      for (int b = 0; b < CK_NBUCKETS; ++b) {
        for (ck_block *blk = d->free_[b], *next; blk; blk = next) next = blk->next, free(blk);
        d->free_[b] = NULL;
      }
      for (int j = 0; j < d->nsegs; ++j) free(d->segs[j]); /* (still holding live arrays: their memory stays) */
      free(d->segs);
      d->segs = NULL, d->nsegs = d->segs_cap = 0, d->carve = NULL;
      free(ctx->cuda[i]->live.keys);
      free(ctx->cuda[i]->live.caps);
      free(ctx->cuda[i]->live.slots);
    }
}

/* No array can need more (ck_check_shape caps numel * dtype size at 2^62 bytes); a larger request is a
 * caller's bug or an unchecked size (e.g. a negative flush size cast to size_t), and would wrap the size
 * classes' arithmetic. */
#define CK_MAX_ALLOC ((size_t)1 << 62)

void *ck_dctx_alloc(ck_dctx *d, size_t bytes) {
  ck_ctx *ctx = d->ctx;
  size_t cap;
  void *p = NULL;
  if (bytes > CK_MAX_ALLOC) {
    ctx->alloc_st = ck_error(ctx, CK_ERR_OOM, "cannot allocate %zu bytes of device memory (more than 2^62)", bytes);
    return NULL;
  }
  int b = size_class(bytes, &cap);
  const int slot = d->cs->slot; /* only blocks of this stream: their earlier uses are in its order */
  const bool small = cap <= CK_SMALL_MAX;
  ck_segment *seg = NULL;
  cudaError_t e = cudaSuccess;
  /* a cached block of the class, a carve of the current segment, or the driver's memory: a new segment for a small
   * class (a block of its own when that fails: one block in use keeps a segment), a block of its own otherwise; on
   * running out, the binding's hook (a full Lua GC returns blocks to the cache) and an emptied cache, then all again */
  for (int attempt = 0; attempt < 2 && !p; ++attempt) {
    if (attempt) {
      (void)cudaGetLastError();
      d->stats.oom_retries++;
      if (ctx->oom_hook) ctx->oom_hook(ctx->oom_ud);
      ck_dctx_empty_cache(d);
    }
    for (ck_block **pp = &d->free_[b]; *pp; pp = &(*pp)->next) {
      if ((*pp)->cap == cap && (*pp)->slot == slot) {
        ck_block *blk = *pp;
        *pp = blk->next;
        p = blk->ptr;
        if ((seg = blk->seg)) seg->live++;
        blk->next = ctx->spare_blocks; /* the node is kept for the next ck_cache_block */
        ctx->spare_blocks = blk;
        d->stats.cached -= cap;
        d->stats.cache_hits++;
        break;
      }
    }
    if (p) break;
    if (small && d->carve && d->carve->used + cap <= CK_SEGMENT) { /* carved from the current segment */
      seg = d->carve;
      p = seg->base + seg->used;
      seg->used += carve_end(cap);
      seg->live++;
      break;
    }
    if (small && (e = cudaMalloc(&p, CK_SEGMENT)) == cudaSuccess) { /* a new segment to carve from */
      if ((seg = malloc(sizeof *seg))) seg->base = p, seg->used = carve_end(cap), seg->live = 1; /* (sorted by base) */
      if (!seg || !seg_insert(d, seg)) {
        free(seg);
        cudaFree(p);
        ctx->alloc_st = ck_error(ctx, CK_ERR_OOM, "out of host memory (allocator bookkeeping)");
        return NULL;
      }
      d->carve = seg; /* (what the old one had left, less than this block, stays unused) */
      d->stats.segments += CK_SEGMENT;
      d->stats.cuda_mallocs++;
      ctx->alloc_debt += CK_SEGMENT;
      break;
    }
    p = NULL;
    if (small && e != cudaErrorMemoryAllocation) break;
    if ((e = cudaMalloc(&p, cap)) == cudaSuccess) { /* a block of its own */
      d->stats.cuda_mallocs++;
      ctx->alloc_debt += cap;
      break;
    }
    p = NULL;
    if (e != cudaErrorMemoryAllocation) break;
  }
  if (!p) {
    (void)cudaGetLastError();
    ctx->alloc_st = ck_error(ctx, e == cudaErrorMemoryAllocation ? CK_ERR_OOM : CK_ERR_CUDA,
             "%s allocating %zu bytes on %s (%s; in use %zu, cached %zu)",
             e == cudaErrorMemoryAllocation ? "out of device memory" : "cudaMalloc failed", bytes,
             ck_device_name(d->dev).s, cudaGetErrorString(e), d->stats.in_use, d->stats.cached);
    return NULL;
  }
  if (!live_put(&d->live, p, cap, slot)) {
    if (seg) ck_cache_block(d, p, cap, slot); /* back to the free list: its segment keeps it */
    else cudaFree(p);
    ctx->alloc_st = ck_error(ctx, CK_ERR_OOM, "out of host memory (allocator bookkeeping)");
    return NULL;
  }
  d->stats.allocations++;
  d->stats.in_use += cap;
  if (d->stats.in_use > d->stats.peak) d->stats.peak = d->stats.in_use;
  return p;
}

void *ck_dev_alloc(ck_ctx *ctx, size_t bytes) {
  ck_dctx *d = ck_cur(ctx);
  if (!d) {
    ctx->alloc_st = CK_ERR_DEVICE;
    return NULL;
  }
  return ck_dctx_alloc(d, bytes);
}

void ck_cache_block(ck_dctx *d, void *p, size_t cap, int slot) {
  ck_ctx *ctx = d->ctx;
  size_t c2;
  int b = size_class(cap, &c2);
  ck_segment *seg = cap <= CK_SMALL_MAX ? seg_of(d, p) : NULL;
  if (seg) seg->live--;
  ck_block *blk = ctx->spare_blocks;
  if (blk) ctx->spare_blocks = blk->next;
  else if (!(blk = malloc(sizeof *blk))) { /* cannot cache it: give it back, after the ops queued on it */
    if (seg) return; /* (carved: it goes back with its segment) */
    ck_dctx *keep = ctx->cur;
    if (ck_synchronize_device(ctx, d->dev)) return; /* (leaked rather than freed on the wrong device) */
    cudaFree(p);
    if (keep) (void)ck_use_device(ctx, keep->dev);
    return;
  }
  blk->ptr = p;
  blk->cap = cap;
  blk->seg = seg;
  blk->slot = d->strm[slot] ? slot : 0; /* (a given-back slot's work has finished: any stream of the device may) */
  blk->next = d->free_[b];
  d->free_[b] = blk;
  d->stats.cached += cap;
}

void ck_dctx_free_used(ck_dctx *d, void *p, uint64_t uses) {
  if (!p) return;
  int slot = 0;
  size_t cap = live_take(&d->live, p, &slot);
  if (!cap) return; /* not ours: ignore rather than corrupt the cache */
  d->stats.in_use -= cap;
  d->stats.frees++;
  /* while a graph is being captured, the captured work may still use this block at every replay: the graph
   * holds it and gives it back to the cache when it is freed */
  if (d->cap) {
    ck_graph_defer_block(d, p, cap);
    return;
  }
  ck_stream_join_uses(d, slot, uses);
  ck_cache_block(d, p, cap, slot);
}

void ck_dctx_free(ck_dctx *d, void *p) { ck_dctx_free_used(d, p, 0); }

void ck_dev_free(ck_ctx *ctx, void *p) {
  if (p && ctx->cur) ck_dctx_free(ctx->cur, p);
}

void ck_memory_stats(ck_ctx *ctx, ck_device dev, ck_memstats *out) {
  memset(out, 0, sizeof *out);
  ck_dctx *d = ck_check_device(ctx, dev) ? NULL : dev.kind == CK_CUDA ? ctx->cuda[dev.index] : ctx->host[dev.index];
  if (d) *out = d->stats;
  if (d && dev.kind == CK_HOST) out->in_use = out->peak = d->stats.host_in_use; /* (host devices count bytes only) */
  out->host_in_use = out->pinned = 0; /* every host device's bytes */
  for (int i = 0; i < ctx->nhost; ++i)
    if (ctx->host[i]) out->host_in_use += ctx->host[i]->stats.host_in_use, out->pinned += ctx->host[i]->stats.pinned;
}
void ck_set_oom_hook(ck_ctx *ctx, void (*hook)(void *ud), void *ud) {
  ctx->oom_hook = hook;
  ctx->oom_ud = ud;
}
size_t ck_take_alloc_debt(ck_ctx *ctx) {
  size_t d = ctx->alloc_debt;
  ctx->alloc_debt = 0;
  return d;
}

// ---------------------------------------------------------------- storage

/* A new storage record with one reference (NULL: out of host memory, with the error in ctx). */
static ck_storage *storage_record(ck_ctx *ctx, ck_device dev, size_t bytes) {
  ck_storage *s = ctx->spare_storage;
  if (s) {
    ctx->spare_storage = (ck_storage *)s->ptr;
    ctx->nspare_storage--;
    memset(s, 0, sizeof *s);
  } else if (!(s = calloc(1, sizeof *s))) {
    ck_error(ctx, CK_ERR_OOM, "out of host memory");
    return NULL;
  }
  s->refs = 1;
  s->dev = dev;
  s->bytes = bytes;
  s->ctx = ctx;
  return s;
}

/* Host memory: 64-byte aligned, or page-locked (cudaHostAlloc) when pinned and there is a GPU; NULL past 2^40 bytes
 * (1 TiB: no host here has the memory; sanitizers' allocators abort on such a request instead of returning NULL, and
 * ck.histc(a, 2^40, ...) made one). */
static void *host_alloc(ck_ctx *ctx, size_t cap, bool *pinned) {
  if (cap >= ((size_t)1 << 40)) return NULL;
  void *p = NULL;
  if (*pinned && ctx->has_cuda) {
    if (cudaHostAlloc(&p, cap, cudaHostAllocPortable) == cudaSuccess) return p;
    (void)cudaGetLastError();
    return NULL;
  }
  *pinned = false; /* (without a GPU there is nothing to pin for: ordinary memory, so the same script runs) */
  return aligned_alloc(64, cap);
}

static void host_free(ck_storage *s) {
  s->dctx->stats.host_in_use -= s->cap;
  if (s->pinned) {
    s->dctx->stats.pinned -= s->cap;
    cudaFreeHost(s->ptr);
  } else free(s->ptr);
}

ck_status ck_storage_new(ck_ctx *ctx, ck_device dev, size_t bytes, ck_storage **out) {
  return ck_storage_new_pinned(ctx, dev, bytes, false, out);
}

ck_status ck_storage_new_pinned(ck_ctx *ctx, ck_device dev, size_t bytes, bool pinned, ck_storage **out) {
  if (bytes > CK_MAX_ALLOC)
    return ck_error(ctx, CK_ERR_OOM, "cannot allocate %zu bytes of %s memory (more than 2^62)", bytes,
                    dev.kind == CK_CUDA ? "device" : "host");
  ck_status st = ck_use_device(ctx, dev); /* (checks the device; a CUDA one becomes current for the cudaMalloc) */
  ck_dctx *d = st ? NULL : dev.kind == CK_CUDA ? ctx->cur : ck_dctx_get(ctx, dev);
  if (!d) return st ? st : CK_ERR_OOM;
  ck_storage *s = storage_record(ctx, dev, bytes);
  if (!s) return CK_ERR_OOM;
  s->dctx = d;
  if (dev.kind == CK_CUDA) {
    s->ptr = ck_dctx_alloc(d, bytes);
    if (!s->ptr) {
      free(s);
      return ctx->alloc_st;
    }
    size_t cap;
    size_class(bytes, &cap);
    s->cap = cap;
    if (d->cap) ck_graph_keep_storage(d, s); /* arrays made during a capture live as long as the graph */
  } else {
    size_t cap = (bytes + 63) & ~(size_t)63;
    if (cap == 0) cap = 64;
    const bool want = pinned;
    s->ptr = host_alloc(ctx, cap, &pinned);
    if (!s->ptr) {
      free(s);
      return ck_error(ctx, CK_ERR_OOM, "out of %s host memory allocating %zu bytes", want ? "pinned" : "", bytes);
    }
    s->cap = cap;
    s->pinned = pinned;
    d->stats.host_in_use += cap;
    if (pinned) d->stats.pinned += cap;
    ctx->alloc_debt += cap; /* host arrays count for Lua's GC too */
  }
  *out = s;
  return CK_OK;
}

/* A storage record back to the context's spares (or to the heap when there are enough). */
static void spare_record(ck_ctx *ctx, ck_storage *s) {
  if (ctx->nspare_storage >= CK_SPARE_STORAGE) {
    free(s);
    return;
  }
  s->ptr = ctx->spare_storage;
  ctx->spare_storage = s;
  ctx->nspare_storage++;
}

void ck_storage_retain(ck_storage *s) {
  if (s) s->refs++;
}

void ck_storage_release(ck_storage *s) {
  if (!s || --s->refs > 0) return;
  if (s->release) { /* an application's buffer (ck_storage_wrap): hand it back once queued work is done */
    if (s->dev.kind == CK_CUDA || s->registered) (void)ck_synchronize_all(s->ctx);
    if (s->registered) cudaHostUnregister(s->ptr);
    s->release(s->release_ud, s->ptr);
    free(s);
    return;
  }
  ck_ctx *ctx = s->ctx;
  if (s->dev.kind == CK_CUDA) ck_dctx_free_used(s->dctx, s->ptr, s->uses);
  else host_free(s);
  spare_record(ctx, s);
}

// ---------------------------------------------------------------- application buffers (embedding)

static void keep_buffer(void *ud, void *ptr) { (void)ud, (void)ptr; }

/* Storage over an application's buffer (src/cukern.h's cukern_push_buffer). cap stays 0: nothing was
 * allocated here, so nothing is counted in the memory stats or owed to Lua's GC. `release` is never NULL in
 * wrapped storage (ck_storage_release tells them apart by it). */
ck_status ck_storage_wrap(ck_ctx *ctx, ck_device dev, void *ptr, size_t bytes, void (*release)(void *ud, void *ptr),
                          void *ud, ck_storage **out) {
  if (dev.kind == CK_CUDA && !ctx->has_cuda) return ck_error(ctx, CK_ERR_DEVICE, "wrap: a device buffer needs a CUDA device");
  if (ck_check_device(ctx, dev)) return ck_error_prefix(ctx, CK_ERR_DEVICE, "wrap");
  if (!ptr && bytes) return ck_error(ctx, CK_ERR_ARG, "wrap: NULL buffer of %zu bytes", bytes);
  ck_storage *s = storage_record(ctx, dev, bytes);
  if (!s) return CK_ERR_OOM;
  s->ptr = ptr;
  s->dctx = ck_dctx_get(ctx, dev);
  s->release = release ? release : keep_buffer;
  s->release_ud = ud;
  *out = s;
  return CK_OK;
}

ck_status ck_storage_register(ck_ctx *ctx, ck_storage *s) {
  if (s->dev.kind != CK_HOST || !s->release || s->pinned || !ctx->has_cuda || !s->bytes) return CK_OK;
  cudaError_t e = cudaHostRegister(s->ptr, s->bytes, cudaHostRegisterPortable);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return ck_error(ctx, CK_ERR_CUDA, "cudaHostRegister of an application buffer of %zu bytes failed: %s (%s)",
                    s->bytes, cudaGetErrorString(e), cudaGetErrorName(e));
  }
  s->pinned = s->registered = true;
  return CK_OK;
}
