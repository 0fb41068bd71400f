/*
 * kinfo.c — introspection: what the compiler and the occupancy calculator say of the kernels that ran.
 *
 * The launchers only note (kernel, block, dynamic smem) in a ck_launch_note (kernels/ck_kernels.h); the
 * dispatcher keeps the note in ck_ran and, per ladder row, here (ck_seen_record). The attributes are looked
 * up when someone asks (ck.last_ran(), ck.variants(), a ladder's table), once per (kernel, block, smem): a
 * built-in kernel's host stub lives as long as the process, so its record never goes stale. Run-time kernels
 * can be unloaded, so they are looked up uncached (ck_kernel_info_of; their caller caches per kernel).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_internal.h"

/* libstdc++'s demangler (extern "C" in <cxxabi.h>; the module links -lstdc++ for the kernels already). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status);

typedef struct ck_seen {
  bool ran, library;
  ck_launch_note kernels;
} ck_seen;

typedef struct ck_kcache {
  ck_launch *key;
  ck_kinfo *val;
  int n, cap;
} ck_kcache;

void ck_kinfo_free(ck_ctx *ctx) {
  for (int k = 0; k < CK_NOPKINDS; ++k) {
    free(ctx->seen[k]);
    ctx->seen[k] = NULL;
  }
  for (int i = 0; i < ctx->ncuda; ++i)
    if (ctx->cuda[i]) ck_kcache_free(ctx->cuda[i]);
}

void ck_kcache_free(ck_dctx *d) {
  if (d->kcache) {
    free(d->kcache->key);
    free(d->kcache->val);
    free(d->kcache);
    d->kcache = NULL;
  }
}

// ---------------------------------------------------------------- per ladder row: what it launched last

void ck_seen_record(ck_ctx *ctx, int ladder, int nrows, int row, bool library, const ck_launch_note *kernels) {
  if (ladder < 0 || ladder >= CK_NOPKINDS || row < 0 || row >= nrows) return;
  if (!ctx->seen[ladder] && !(ctx->seen[ladder] = calloc((size_t)nrows, sizeof(ck_seen))))
    return; /* out of host memory: introspection is best effort, the op itself ran */
  ck_seen *s = &ctx->seen[ladder][row];
  s->ran = true;
  s->library = library;
  s->kernels = *kernels;
}

bool ck_seen_get(ck_ctx *ctx, int ladder, int row, ck_launch_note *kernels, bool *library) {
  if (ladder < 0 || ladder >= CK_NOPKINDS || !ctx->seen[ladder] || !ctx->seen[ladder][row].ran) return false;
  *kernels = ctx->seen[ladder][row].kernels;
  *library = ctx->seen[ladder][row].library;
  return true;
}

// ---------------------------------------------------------------- attributes

/* The demangled signature without "(anonymous namespace)::" (most kernel files keep their kernels in one). */
static void clean_symbol(const char *sig, char *out, size_t n) {
  static const char anon[] = "(anonymous namespace)::";
  size_t k = 0;
  for (const char *p = sig; *p && k + 1 < n;) {
    if (strncmp(p, anon, sizeof anon - 1) == 0) p += sizeof anon - 1;
    else out[k++] = *p++;
  }
  out[k] = 0;
}

/* "void ns::kern<T, 4>(Args)" -> "kern": the identifier before the template arguments or parameters. */
static void short_name(const char *sig, char *out, size_t n) {
  size_t end = strcspn(sig, "<(");
  size_t start = end;
  while (start > 0 && sig[start - 1] != ' ' && sig[start - 1] != ':') --start;
  snprintf(out, n, "%.*s", (int)(end - start), sig + start);
}

ck_status ck_kernel_info_of(ck_ctx *ctx, const void *fn, const char *name, int block, size_t smem, ck_kinfo *out) {
  ck_status st = CK_OK;
  memset(out, 0, sizeof *out);
  if (!ctx->has_cuda) return ck_error(ctx, CK_ERR_DEVICE, "kernel info: no CUDA device (%s)", ctx->info.why_host);
  ck_dctx *d = ck_cur(ctx); /* the attributes and occupancy of the current device */
  if (!d) return CK_ERR_DEVICE;
  if (name) {
    snprintf(out->name, sizeof out->name, "%s", name);
    snprintf(out->symbol, sizeof out->symbol, "%s", name);
  } else {
    const char *mangled = NULL;
    CK_CUDA(ctx, cudaFuncGetName(&mangled, fn));
    int dst = -1;
    char *dem = __cxa_demangle(mangled, NULL, NULL, &dst);
    clean_symbol(dst == 0 && dem ? dem : mangled, out->symbol, sizeof out->symbol); /* extern "C": not mangled */
    free(dem);
    short_name(out->symbol, out->name, sizeof out->name);
  }
  struct cudaFuncAttributes a;
  CK_CUDA(ctx, cudaFuncGetAttributes(&a, fn));
  out->registers = a.numRegs;
  out->max_threads = a.maxThreadsPerBlock;
  out->static_smem = a.sharedSizeBytes;
  out->local_bytes = a.localSizeBytes;
  out->const_bytes = a.constSizeBytes;
  out->ptx_version = a.ptxVersion;
  out->binary_version = a.binaryVersion;
  out->block = block;
  out->dynamic_smem = smem;
  /* a block the kernel cannot run has no occupancy (0), rather than an error: k:info(block) may ask */
  if (block >= 1 && block <= a.maxThreadsPerBlock && smem <= (size_t)a.maxDynamicSharedSizeBytes) {
    int nb = 0;
    CK_CUDA(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fn, block, smem));
    const int max_warps = d->info.max_threads_per_sm / 32;
    out->blocks_per_sm = nb;
    out->occupancy = max_warps > 0 ? (double)nb * ((block + 31) / 32) / max_warps : 0.0;
  }
cleanup:
  if (st) ck_error_prefix(ctx, st, "kernel info (%s)", out->name[0] ? out->name : "a built-in kernel");
  return st;
}

ck_status ck_kernel_info(ck_ctx *ctx, const ck_launch *l, ck_kinfo *out) {
  ck_dctx *d = ck_cur(ctx);
  if (!d) return CK_ERR_DEVICE;
  ck_kcache *c = d->kcache;
  if (c)
    for (int i = 0; i < c->n; ++i)
      if (c->key[i].fn == l->fn && c->key[i].block == l->block && c->key[i].smem == l->smem) {
        *out = c->val[i];
        return CK_OK;
      }
  ck_status st = ck_kernel_info_of(ctx, l->fn, NULL, l->block, l->smem, out);
  if (st) return st;
  if (!c && !(c = d->kcache = calloc(1, sizeof *c))) return CK_OK; /* no memory for the cache: uncached */
  if (c->n == c->cap) {
    const int cap = c->cap ? 2 * c->cap : 32;
    ck_launch *k = realloc(c->key, sizeof *k * (size_t)cap);
    if (!k) return CK_OK;
    c->key = k;
    ck_kinfo *v = realloc(c->val, sizeof *v * (size_t)cap);
    if (!v) return CK_OK;
    c->val = v;
    c->cap = cap;
  }
  c->key[c->n] = *l;
  c->val[c->n++] = *out;
  return CK_OK;
}
