/*
 * graph.c — CUDA graphs: record the device work a Lua function issues on the context's stream once, then
 * replay it with one launch (ck.graph(fn), g:replay()).
 *
 * Capture runs the stream in cudaStreamCaptureModeRelaxed (the caching allocator may still cudaMalloc a new
 * block). What makes replay safe is memory: every kernel recorded keeps the addresses it was given, so
 *   - arrays created during the capture (results and every temporary the dispatcher made) are retained by
 *     the graph (ck_graph_keep_storage): dropping them in Lua does not free their memory while the graph
 *     lives;
 *   - device blocks freed during the capture are not returned to the cache but held by the graph
 *     (ck_graph_defer_block), since later recorded work may reuse them;
 *   - the operands a call names are retained by the dispatcher (ck_run) for the same reason;
 * and all of it goes back (storages released, blocks to the cache) when the graph is freed, after the
 * stream has finished any replay. A graph records one device's current stream (a user stream under
 * ck.with_stream too; it stays current until the capture ends) and replays on whichever stream is current then:
 * the default device's when it begins;
 * work on another device during the capture is refused (ck_use_device). Work that needs the host during a capture (host arrays, reading values,
 * synchronising) is refused with a clear error, and the capture is then abandoned by the binding.
 */
#include <stdlib.h>
#include <string.h>

#include "ck_internal.h"

struct ck_graph {
  ck_ctx *ctx;
  ck_dctx *d; /* the device whose stream it records and replays on */
  cudaStream_t s; /* the stream it recorded */
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  ck_storage **keep; /* retained storages */
  size_t nkeep, ckeep;
  void **blocks; /* device blocks freed during the capture, held until the graph is freed */
  size_t *caps;
  size_t nblocks, cblocks;
  int nodes;
  bool broken; /* a push failed for lack of host memory: the graph must not be replayed */
};

static bool grow(void **arr, size_t *cap, size_t n, size_t elem) {
  if (n < *cap) return true;
  size_t c = *cap ? 2 * *cap : 16;
  void *p = realloc(*arr, c * elem);
  if (!p) return false;
  *arr = p;
  *cap = c;
  return true;
}

void ck_graph_keep_storage(ck_dctx *d, ck_storage *s) {
  ck_graph *g = d->cap;
  if (!g || !s) return;
  if (!grow((void **)&g->keep, &g->ckeep, g->nkeep, sizeof *g->keep)) {
    g->broken = true;
    return;
  }
  ck_storage_retain(s);
  g->keep[g->nkeep++] = s;
}

void ck_graph_defer_block(ck_dctx *d, void *p, size_t cap) {
  ck_graph *g = d->cap;
  size_t cb = g->cblocks;
  if (!grow((void **)&g->blocks, &g->cblocks, g->nblocks, sizeof *g->blocks) ||
      !grow((void **)&g->caps, &cb, g->nblocks, sizeof *g->caps)) {
    g->broken = true; /* cannot hold it: leak it rather than let later work reuse memory the graph writes */
    return;
  }
  g->blocks[g->nblocks] = p;
  g->caps[g->nblocks++] = cap;
}

bool ck_capturing(const ck_ctx *ctx) { return ctx->capture != NULL; }

void ck_graph_keep_tensor(ck_ctx *ctx, const ck_tensor *t) {
  if (ctx->capture && t && t->st && t->st->dctx == ctx->capture) ck_graph_keep_storage(ctx->capture, t->st);
}

ck_status ck_graph_begin(ck_ctx *ctx) {
  ck_status st = CK_OK;
  if (!ctx->has_cuda) return ck_error(ctx, CK_ERR_DEVICE, "graph: no CUDA device (%s)", ctx->info.why_host);
  if (ctx->capture) return ck_error(ctx, CK_ERR_ARG, "graph: a capture is already in progress (graphs do not nest)");
  const ck_device dev = ctx->default_dev.kind == CK_CUDA ? ctx->default_dev : ck_device_make(CK_CUDA, 0);
  if ((st = ck_use_device(ctx, dev))) return st;
  ck_dctx *d = ctx->cur;
  ck_graph *g = calloc(1, sizeof *g);
  if (!g) return ck_error(ctx, CK_ERR_OOM, "graph: out of host memory");
  g->ctx = ctx;
  g->d = d;
  if ((st = ck_flush(ctx))) goto cleanup; /* ops issued before the capture are not part of the graph */
  g->s = d->cs->s;
  CK_CUDA(ctx, cudaStreamBeginCapture(g->s, cudaStreamCaptureModeRelaxed));
  d->cap = g;
  ctx->capture = d;
  return CK_OK;
cleanup:
  free(g);
  return st;
}

ck_status ck_graph_end(ck_ctx *ctx, ck_graph **out) {
  ck_status st = CK_OK;
  ck_dctx *d = ctx->capture;
  ck_graph *g = d ? d->cap : NULL;
  *out = NULL;
  if (!g) return ck_error(ctx, CK_ERR_ARG, "graph: no capture in progress");
  d->cap = NULL;
  ctx->capture = NULL;
  if ((st = ck_use_device(ctx, d->dev))) goto cleanup;
  cudaError_t e = cudaStreamEndCapture(g->s, &g->graph);
  if (e != cudaSuccess) {
    st = ck_cuda_fail(ctx, (int)e, __FILE__, __LINE__, "cudaStreamEndCapture");
    goto cleanup;
  }
  if (g->broken) {
    st = ck_error(ctx, CK_ERR_OOM, "graph: out of host memory while recording");
    goto cleanup;
  }
  size_t n = 0;
  CK_CUDA(ctx, cudaGraphGetNodes(g->graph, NULL, &n));
  g->nodes = (int)n;
  CK_CUDA(ctx, cudaGraphInstantiate(&g->exec, g->graph, 0));
  *out = g;
  return CK_OK;
cleanup:
  ck_graph_free(g);
  return st;
}

void ck_graph_abort(ck_ctx *ctx) {
  ck_dctx *d = ctx->capture;
  ck_graph *g = d ? d->cap : NULL;
  if (!g) return;
  d->cap = NULL;
  ctx->capture = NULL;
  (void)ck_use_device(ctx, d->dev);
  cudaGraph_t graph = NULL;
  (void)cudaStreamEndCapture(g->s, &graph); /* ends (and invalidates) the capture */
  if (graph) cudaGraphDestroy(graph);
  (void)cudaGetLastError();
  ck_graph_free(g);
}

static int graph_launch(const void *arg, const ck_env *env) {
  ck_order_check(env);
  return (int)cudaGraphLaunch(((const ck_graph *)arg)->exec, (cudaStream_t)env->stream);
}

ck_status ck_graph_replay(ck_ctx *ctx, ck_graph *g) {
  if (ctx->capture) return ck_error(ctx, CK_ERR_ARG, "graph: cannot replay a graph while capturing another");
  ck_status st = ck_use_device(ctx, g->d->dev); /* (it replays where it was recorded) */
  if (st) return st;
  const ck_launch_req r = {.fn = graph_launch, .arg = g, .what = "graph replay"};
  return ck_submit(ctx, &r); /* (batched ops issued before the replay run before it) */
}

int ck_graph_nodes(const ck_graph *g) { return g->nodes; }

void ck_graph_free(ck_graph *g) {
  if (!g) return;
  ck_ctx *ctx = g->ctx;
  ck_dctx *d = g->d;
  ck_dctx *keep = ctx->cur;
  /* no replay (or batched op) may still be running on the memory, on any of the device's streams */
  (void)ck_synchronize_device(ctx, d->dev);
  if (g->exec) cudaGraphExecDestroy(g->exec);
  if (g->graph) cudaGraphDestroy(g->graph);
  for (size_t i = 0; i < g->nkeep; ++i) ck_storage_release(g->keep[i]);
  for (size_t i = 0; i < g->nblocks; ++i) ck_cache_block(d, g->blocks[i], g->caps[i], 0); /* (device idle: any stream) */
  if (keep && keep != d) (void)ck_use_device(ctx, keep->dev);
  free(g->keep);
  free(g->blocks);
  free(g->caps);
  free(g);
}
