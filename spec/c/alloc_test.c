/*
 * spec/c/alloc_test.c — the caching device allocator (src/core/storage.c) without a GPU: storage.c is compiled into
 * this file with cudaMalloc and cudaFree replaced by a fake device heap that remembers every block it handed out, and
 * the few core functions the allocator calls stubbed. A seeded random walk of allocations and frees (sizes across
 * the carved small classes and past them, several streams, empty_cache now and then, a simulated graph deferral)
 * checks after every step:
 *   - each block is 256-byte aligned and lies inside a live fake allocation (a segment or its own cudaMalloc);
 *   - no two live blocks overlap (sorted by address now and then; and each block's bytes, stamped with its id, are
 *     checked when it is freed);
 *   - cudaFree only ever receives a pointer cudaMalloc returned, with none of its blocks live;
 *   - the statistics add up (in_use, cached, segments) and blocks up to 64 KiB cost one cudaMalloc per 2 MiB;
 *   - at the end, after every block is freed and the cache emptied, the fake heap is empty.
 * Prints "ok - ..." / "not ok - ..." lines; exits nonzero on any failure. Built and run by spec/alloc_spec.lua
 * (make alloc-test, mk/alloc_test.mk); round 3 session 10, after a first version sorted each new segment by a base it
 * had not set yet and so freed segments in use (found on the GPU host, not here: this test is why).
 */
#define cudaMalloc fake_cudaMalloc
#define cudaFree fake_cudaFree
#include "../../src/core/storage.c"
#undef cudaMalloc
#undef cudaFree

#include <stdarg.h>
#include <stdio.h>

// ---------------------------------------------------------------- the fake device heap

typedef struct {
  char *p;
  size_t n;
} fake_block;
static fake_block heap[100000];
static int nheap, failures, mallocs;
static size_t heap_bytes, heap_limit = (size_t)-1; /* the fake device's memory: cudaMalloc past the limit fails */

cudaError_t fake_cudaMalloc(void **p, size_t n) {
  if (heap_bytes + n > heap_limit || nheap == (int)(sizeof heap / sizeof *heap)) return cudaErrorMemoryAllocation;
  char *q = aligned_alloc(256, (n + 255) & ~(size_t)255);
  if (!q) return cudaErrorMemoryAllocation;
  heap[nheap++] = (fake_block){q, n};
  heap_bytes += n;
  ++mallocs;
  *p = q;
  return cudaSuccess;
}

static int heap_index(const void *p) {
  for (int i = 0; i < nheap; ++i)
    if (heap[i].p == p) return i;
  return -1;
}

static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("not ok - ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  ++failures;
}

// live blocks of the walk: pointer, size, id (its bytes hold the id's low byte)
typedef struct {
  unsigned char *p;
  size_t n;
  int id, dev_slot;
} live_block;
static live_block live[1500];
static int nlive;

cudaError_t fake_cudaFree(void *p) {
  const int i = heap_index(p);
  if (i < 0) {
    fail("cudaFree(%p): not a pointer cudaMalloc returned", p);
    return cudaErrorInvalidValue;
  }
  for (int k = 0; k < nlive; ++k)
    if ((char *)live[k].p >= heap[i].p && (char *)live[k].p < heap[i].p + heap[i].n)
      fail("cudaFree(%p) while block %d inside it is live", p, live[k].id);
  free(heap[i].p);
  heap_bytes -= heap[i].n;
  heap[i] = heap[--nheap];
  return cudaSuccess;
}

// ---------------------------------------------------------------- what storage.c calls besides

cudaError_t cudaGetLastError(void) { return cudaSuccess; }
const char *cudaGetErrorString(cudaError_t e) { return e ? "fake error" : "no error"; }
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned f) { (void)f; *p = malloc(n); return *p ? cudaSuccess : cudaErrorMemoryAllocation; }
cudaError_t cudaFreeHost(void *p) { free(p); return cudaSuccess; }
ck_status ck_error(ck_ctx *ctx, ck_status st, const char *fmt, ...) { (void)ctx, (void)fmt; return st; }
ck_status ck_error_prefix(ck_ctx *ctx, ck_status st, const char *fmt, ...) { (void)ctx, (void)fmt; return st; }
ck_status ck_synchronize_device(ck_ctx *ctx, ck_device dev) { (void)ctx, (void)dev; return CK_OK; }
ck_status ck_use_device(ck_ctx *ctx, ck_device dev) { (void)ctx, (void)dev; return CK_OK; }
ck_dctx *ck_cur(ck_ctx *ctx) { return ctx->cur; }
ck_status ck_check_device(ck_ctx *ctx, ck_device dev) { (void)ctx, (void)dev; return CK_OK; }
ck_devname ck_device_name(ck_device dev) { ck_devname n; snprintf(n.s, sizeof n.s, "cuda:%d", dev.index); return n; }
void ck_stream_join_uses(ck_dctx *d, int slot, uint64_t uses) { (void)d, (void)slot, (void)uses; }
bool ck_capturing(const ck_ctx *ctx) { (void)ctx; return false; }
void ck_fft_plans_clear(void) {}
/* (the storage records above the allocator, not exercised here) */
ck_dctx *ck_dctx_get(ck_ctx *ctx, ck_device dev) { (void)dev; return ctx->cur; }
void ck_graph_keep_storage(ck_dctx *d, ck_storage *s) { (void)d, (void)s; }
ck_status ck_synchronize_all(ck_ctx *ctx) { (void)ctx; return CK_OK; }
cudaError_t cudaHostRegister(void *p, size_t n, unsigned f) { (void)p, (void)n, (void)f; return cudaSuccess; }
cudaError_t cudaHostUnregister(void *p) { (void)p; return cudaSuccess; }
const char *cudaGetErrorName(cudaError_t e) { return e ? "fakeError" : "cudaSuccess"; }
static void *deferred[64];
static size_t deferred_cap[64];
static int ndeferred;
void ck_graph_defer_block(ck_dctx *d, void *p, size_t cap) { (void)d; deferred[ndeferred] = p, deferred_cap[ndeferred++] = cap; }

// ---------------------------------------------------------------- the walk

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

static size_t pick_size(void) {
  switch (next() % 8) {
  case 0: return 1 + next() % 16;          /* a scalar result */
  case 1: return 1 + next() % 600;          /* under the smallest class */
  case 2: return 1 + next() % 4096;
  case 3: return 1 + next() % 65536;        /* up to the carved limit */
  case 4: return 65536 - next() % 64;       /* around it */
  case 5: return 65536 + 1 + next() % 4096; /* just past it: a cudaMalloc of its own */
  case 6: return 1 + next() % (1 << 20);
  default: return 512 * (1 + next() % 128);
  }
}

static void check_block(const live_block *b) {
  for (size_t i = 0; i < b->n; ++i)
    if (b->p[i] != (unsigned char)b->id) {
      fail("block %d (%zu bytes at %p) was overwritten at byte %zu: another block overlaps it", b->id, b->n,
           (void *)b->p, i);
      return;
    }
}

static int by_address(const void *a, const void *b) {
  const unsigned char *x = ((const live_block *)a)->p, *y = ((const live_block *)b)->p;
  return x < y ? -1 : x > y;
}

static void free_live(ck_dctx *d, int k) {
  check_block(&live[k]);
  d->cs = d->strm[live[k].dev_slot] ? d->strm[live[k].dev_slot] : &d->main;
  ck_dctx_free(d, live[k].p);
  live[k] = live[--nlive];
}

/* The OOM hook of scenario B: frees the block its argument points at, as the binding's full GC would. */
static ck_dctx *hook_dctx;
static void free_garbage(void *ud) {
  void **g = ud;
  if (*g) ck_dctx_free(hook_dctx, *g), *g = NULL;
}

int main(void) {
  ck_ctx *ctx = calloc(1, sizeof *ctx);
  ck_dctx *d = calloc(1, sizeof *d);
  ck_strm *s1 = calloc(1, sizeof *s1);
  d->ctx = ctx, d->dev.kind = CK_CUDA, d->dev.index = 0;
  d->main.d = d, d->main.slot = 0, d->strm[0] = &d->main, d->cs = &d->main;
  s1->d = d, s1->slot = 1, d->strm[1] = s1;
  ctx->cur = d;
  ctx->cuda[0] = d, ctx->ncuda = 1;
  hook_dctx = d;
  int id = 0, steps = 0;
  size_t small_bytes = 0;
  const int before = mallocs;
  for (; steps < 40000 && !failures; ++steps) {
    const uint64_t r = next() % 100;
    if (r < 52 && nlive < (int)(sizeof live / sizeof *live)) {
      const size_t n = pick_size();
      d->cs = next() % 4 ? &d->main : s1; /* a quarter on a second stream */
      unsigned char *p = ck_dctx_alloc(d, n);
      if (!p) {
        fail("allocation of %zu bytes failed", n);
        break;
      }
      if ((uintptr_t)p & 255) fail("block of %zu bytes at %p is not 256-byte aligned", n, (void *)p);
      int inside = 0;
      for (int i = 0; i < nheap && !inside; ++i) inside = (char *)p >= heap[i].p && (char *)p + n <= heap[i].p + heap[i].n;
      if (!inside) fail("block of %zu bytes at %p is not inside a live cudaMalloc", n, (void *)p);
      ++id;
      memset(p, (unsigned char)id, n);
      live[nlive++] = (live_block){p, n, id, d->cs->slot};
      if (n <= CK_SMALL_MAX) small_bytes += n;
    } else if (r < 97 && nlive > 0) {
      free_live(d, (int)(next() % (uint64_t)nlive));
    } else if (r < 98) {
      ck_dctx_empty_cache(d);
    } else if (nlive > 0) { /* a graph capture holds a freed block, then gives it back */
      const int k = (int)(next() % (uint64_t)nlive);
      check_block(&live[k]);
      d->cap = (struct ck_graph *)1;
      void *p = live[k].p;
      ck_dctx_free(d, p);
      d->cap = NULL;
      live[k] = live[--nlive];
      ck_dctx_empty_cache(d); /* the deferred block's memory must stay */
      int held = 0;
      for (int i = 0; i < nheap && !held; ++i) held = (char *)p >= heap[i].p && (char *)p < heap[i].p + heap[i].n;
      if (!held) fail("a block a graph holds (%p) was given back to the driver by empty_cache", p);
      ck_cache_block(d, deferred[0], deferred_cap[0], 0);
      ndeferred = 0;
    }
    if (steps % 997 == 0) {
      size_t in_use = 0, seg = 0;
      qsort(live, (size_t)nlive, sizeof *live, by_address);
      for (int k = 0; k + 1 < nlive; ++k)
        if (live[k].p + live[k].n > live[k + 1].p)
          fail("blocks %d (%zu bytes at %p) and %d (at %p) overlap", live[k].id, live[k].n, (void *)live[k].p,
               live[k + 1].id, (void *)live[k + 1].p);
      for (int k = 0; k < nlive; ++k) {
        size_t cap;
        size_class(live[k].n, &cap);
        in_use += cap;
      }
      for (int i = 0; i < d->nsegs; ++i) seg += CK_SEGMENT;
      if (in_use != d->stats.in_use) fail("in_use %zu, the live blocks' caps %zu", d->stats.in_use, in_use);
      size_t cached = 0;
      for (int b = 0; b < CK_NBUCKETS; ++b)
        for (ck_block *k = d->free_[b]; k; k = k->next) cached += k->cap;
      if (cached != d->stats.cached) fail("cached %zu, the free lists hold %zu", d->stats.cached, cached);
      for (int i = 0; i < d->nsegs; ++i) { /* each segment's count of blocks outside the free lists, recounted */
        int out = 0;
        for (int k = 0; k < nlive; ++k) out += (char *)live[k].p >= d->segs[i]->base && (char *)live[k].p < d->segs[i]->base + CK_SEGMENT;
        if (out != d->segs[i]->live) fail("segment %d counts %d blocks in use, %d are", i, d->segs[i]->live, out);
      }
      if (seg != d->stats.segments) fail("segments %zu, %d segments", d->stats.segments, d->nsegs);
    }
  }
  if (!failures) printf("ok - %d steps, %d blocks: aligned, inside a cudaMalloc, none overlapping\n", steps, id);
  if (!failures) printf("ok - %d cudaMalloc calls for %zu bytes of blocks up to 64 KiB and the rest\n", mallocs - before, small_bytes);
  while (nlive > 0) free_live(d, nlive - 1);
  ck_dctx_empty_cache(d);
  if (d->stats.in_use || d->stats.cached || d->stats.segments || d->nsegs || nheap)
    fail("after freeing everything and emptying the cache: in_use %zu cached %zu segments %zu (%d), %d fake blocks left",
         d->stats.in_use, d->stats.cached, d->stats.segments, d->nsegs, nheap);
  else
    printf("ok - every block freed and the cache emptied: nothing cached, no segment, the fake heap empty\n");
  /* the carving's economy: 1000 scalars cost one segment */
  const int m0 = mallocs;
  void *ps[1000];
  for (int i = 0; i < 1000; ++i) ps[i] = ck_dctx_alloc(d, 4);
  if (mallocs - m0 != 1) fail("1000 4-byte blocks took %d cudaMalloc calls (want 1)", mallocs - m0);
  else printf("ok - 1000 4-byte blocks from one cudaMalloc\n");
  for (int i = 0; i < 1000; ++i) ck_dctx_free(d, ps[i]);
  ck_dctx_empty_cache(d);

  /* out of memory, A: a segment kept by one small block in use, full, and room for less than a new segment on the
   * device; a small block of another class must still come (a block of its own), and go back with empty_cache */
  d->cs = &d->main;
  void *keep = ck_dctx_alloc(d, 512), *fill[400];
  int nfill = 0;
  while (nfill < 400 && d->carve && d->carve->used + 40960 <= CK_SEGMENT) /* until a 40000-byte block cannot be carved */
    fill[nfill++] = ck_dctx_alloc(d, d->carve->used + 65536 + 40960 <= CK_SEGMENT ? 65536 : 2048);
  for (int i = 0; i < nfill; ++i) ck_dctx_free(d, fill[i]);
  heap_limit = heap_bytes + ((size_t)1 << 20);
  void *q = ck_dctx_alloc(d, 40000);
  if (!q || seg_of(d, q)) fail("out of memory A: a 40000-byte block %s with 1 MiB free on the fake device", q ? "was carved" : "failed");
  else printf("ok - out of memory A: a small block of its own when a new segment does not fit (%d blocks filled the segment)\n", nfill);
  ck_dctx_free(d, q);
  ck_dctx_empty_cache(d);
  if (q && heap_index(q) >= 0) fail("out of memory A: the block of its own was not given back by empty_cache");
  if (!seg_of(d, keep)) fail("out of memory A: empty_cache gave back the segment of a block in use");

  /* out of memory, B: nothing fits any more, but the OOM hook (the binding's GC) frees a block of the asked class:
   * the retry must find it in the cache */
  heap_limit = heap_bytes;
  static void *garbage;
  garbage = ck_dctx_alloc(d, 1000);
  void *more[4096];
  int nmore = 0;
  while (nmore < 4096 && (more[nmore] = ck_dctx_alloc(d, 1000))) ++nmore; /* the rest of the segment, then OOM */
  ctx->oom_hook = free_garbage, ctx->oom_ud = &garbage;
  void *r = ck_dctx_alloc(d, 1000);
  if (!garbage && r) printf("ok - out of memory B: the retry after the OOM hook finds the block it freed (%d filled)\n", nmore);
  else fail("out of memory B: %s", garbage ? "the hook did not run" : "the block the hook freed was not reused");
  ctx->oom_hook = NULL, ctx->oom_ud = NULL;
  heap_limit = (size_t)-1;

  /* destroy with blocks still in use: every record is freed (ASan's leak check in make alloc-test-asan) */
  ck_alloc_destroy(ctx);
  while (nheap > 0) free(heap[--nheap].p); /* the fake device's memory (a real context takes it with it) */
  free(s1);
  free(d);
  free(ctx);
  printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
