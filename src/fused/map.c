/*
 * map.c — fused expression kernels: ck.map (elementwise, several outputs); ck.reduce_map is reduce_map.c, the
 * binder (inputs, outputs, geometry, parameters) map_bind.c, the kernel cache rtc.c.
 *
 * Both ck.map and ck.reduce_map run one parsed expression (expr.h) over the broadcast index space of their array inputs:
 *  - on the host by the block evaluator (the oracle, and the backend without a GPU);
 *  - on the GPU by a CUDA kernel generated per (expression, input kinds and dtypes, output dtypes, layout,
 *    dims after coalescing), compiled once by NVRTC (through the disk cache, rtc.c) and kept in a ck_map_cache.
 *
 * Layouts of ck.map, chosen after the dims are put in the first output's memory order and coalesced:
 *   vec4        every operand contiguous (or a broadcast single element) and 16-byte aligned: each thread
 *               moves 4 elements per operand with one vector load/store; a scalar loop does the tail.
 *   contiguous  the same without the alignment: one element per thread.
 *   strided     anything else (views, broadcasting): the linear index is split over the coalesced dims
 *               (32-bit index arithmetic when the index space fits).
 * Numbers are kernel parameters (changing `a` in "a * x + y" does not recompile); literals are baked in.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map_bind.h"

// ---------------------------------------------------------------- host execution

/* ck.map's geometry. Operand order: outputs first, then the array inputs (opk[k] = operand of input k, -1 for a
 * number); dims in the first output's memory order, coalesced. Returns the number of operands. */
static int map_geom(const ck_expr *e, const mbind *b, const ck_tensor *outs, const ck_tensor **ops, int *opk, mgeom *g) {
  int nops = 0;
  for (int i = 0; i < e->nout; ++i) ops[nops++] = &outs[i];
  for (int k = 0; k < b->nin; ++k) {
    opk[k] = -1;
    if (b->t[k]) opk[k] = nops, ops[nops++] = b->t[k];
  }
  map_geom_build(g, nops, ops, outs[0].ndim, outs[0].shape, true);
  return nops;
}

static ck_status host_map(ck_ctx *ctx, const ck_expr *e, const xtype *ty, mbind *b, ck_tensor *outs, const int *odt) {
  const ck_tensor *ops[MAXOPS];
  int opk[MAXOPS];
  mgeom g;
  const int nops = map_geom(e, b, outs, ops, opk, &g);
  if (g.numel == 0) return CK_OK;
  xeval ev;
  ck_status st = xeval_init(ctx, &ev, e, ty);
  if (st) return st;
  map_fill_numbers(&ev, b);
  double tmp[XBLK]; /* (8 bytes a value: any dtype) */
  const int nd = g.nd;
  const int64_t L = nd ? g.shape[nd - 1] : 1;
  int64_t idx[CK_MAX_DIMS] = {0};
  char *base[MAXOPS];
  for (int o = 0; o < nops; ++o) base[o] = (char *)ck_data(ops[o]);
  for (int64_t row = 0, rows = g.numel / L; row < rows; ++row) {
    int64_t off[MAXOPS];
    for (int o = 0; o < nops; ++o) {
      off[o] = 0;
      for (int d = 0; d < nd - 1; ++d) off[o] += idx[d] * g.st[o][d];
    }
    for (int64_t j0 = 0; j0 < L; j0 += XBLK) {
      int n = (int)(L - j0 < XBLK ? L - j0 : XBLK);
      for (int k = 0; k < b->nin; ++k) {
        if (opk[k] < 0) continue;
        int o = opk[k];
        size_t es = ck_dtype_size(ops[o]->dtype);
        int64_t s = nd ? g.st[o][nd - 1] : 0;
        map_gather(ev.in_buf[k], base[o] + (off[o] + j0 * s) * (int64_t)es, s, n, ops[o]->dtype);
      }
      xeval_run(&ev, n);
      for (int i = 0; i < e->nout; ++i) {
        int r = e->out_root[i];
        const void *v = ev.val[r];
        if (ty[r].dt != odt[i]) {
          xconvert(tmp, odt[i], v, ty[r].dt, n);
          v = tmp;
        }
        size_t es = ck_dtype_size((ck_dtype)odt[i]);
        int64_t s = nd ? g.st[i][nd - 1] : 0;
        map_scatter(base[i] + (off[i] + j0 * s) * (int64_t)es, s, v, n, es);
      }
    }
    for (int d = nd - 2; d >= 0; --d) {
      if (++idx[d] < g.shape[d]) break;
      idx[d] = 0;
    }
  }
  xeval_free(&ev);
  return CK_OK;
}

// ---------------------------------------------------------------- CUDA generation for ck.map

enum { L_VEC4, L_CONTIG, L_STRIDED };
static const char *const LAYOUT_NAMES[] = {"vec4", "contiguous", "strided"};

/* The body: a device function from the inputs to the outputs (one element). */
static void gen_body(xsb *s, const ck_expr *e, const xtype *ty, const mbind *b, const int *odt, int nout,
                     const int *roots) {
  xsb_printf(s, "static __device__ __forceinline__ void ck_body(");
  for (int k = 0; k < e->nin; ++k) xsb_printf(s, "%sconst %s in%d", k ? ", " : "", xctype(b->ity[k].dt), k);
  for (int i = 0; i < nout; ++i) xsb_printf(s, "%s%s &out%d", (e->nin || i) ? ", " : "", xstype(odt[i]), i);
  xsb_printf(s, ") {\n");
  xgen_nodes(s, e, ty, "  ");
  for (int i = 0; i < nout; ++i) { /* converted to the output's dtype (a node value), then stored */
    char v[24];
    snprintf(v, sizeof v, "v%d", roots[i]);
    xsb_printf(s, "  const %s r%d = ", xctype(odt[i]), i);
    xgen_convert(s, v, ty[roots[i]].dt, odt[i]);
    snprintf(v, sizeof v, "r%d", i);
    xsb_printf(s, ";\n  out%d = ", i);
    xgen_store(s, v, odt[i]);
    xsb_printf(s, ";\n");
  }
  xsb_printf(s, "}\n");
}

/* Load of input k at index expression `ix` (arrays) or its parameter (numbers: a long long for an integer, so
 * that i64 is exact, else a double), as a node value. */
static void gen_load(xsb *s, const mbind *b, int k, const char *ix, bool bcast) {
  const int dt = b->ity[k].dt;
  const char *T = xstype(dt);
  char v[96];
  if (!b->t[k]) {
    xsb_printf(s, "p.s%d", k);
    return;
  }
  if (bcast) snprintf(v, sizeof v, "*(const %s *)p.i%d", T, k);
  else snprintf(v, sizeof v, "__ldg((const %s *)p.i%d + %s)", T, k, ix);
  xgen_load(s, v, dt);
}

/* bcast[k]: input k is one element for the whole launch (contiguous layouts). */
static void gen_map_source(xsb *s, const ck_expr *e, const xtype *ty, const mbind *b, const int *odt, int layout,
                           int nd, bool idx32, const bool *bcast, const char *entry) {
  xsb_printf(s, "// generated by cukern (src/fused/map.c) for: %s\n// layout %s, %d dim%s\n", e->text,
             LAYOUT_NAMES[layout], nd, nd == 1 ? "" : "s");
  xgen_preamble(s);
  xsb_printf(s, "\n");
  xsb_printf(s, "template <class T> struct alignas(4 * sizeof(T)) CkV4 { T v[4]; };\n");
  const int ndl = layout == L_STRIDED ? nd : 0;
  xsb_printf(s, "struct CkP {\n  long long n;\n");
  for (int i = 0; i < e->nout; ++i) {
    xsb_printf(s, "  void *o%d;\n", i);
    for (int d = 0; d < ndl; ++d) xsb_printf(s, "  long long os%d_%d;\n", i, d);
  }
  for (int k = 0; k < e->nin; ++k) {
    if (!b->t[k]) {
      xsb_printf(s, "  %s s%d;\n", b->ity[k].dt == CK_I64 ? "long long" : "double", k);
      continue;
    }
    xsb_printf(s, "  const void *i%d;\n", k);
    for (int d = 0; d < ndl; ++d) xsb_printf(s, "  long long is%d_%d;\n", k, d);
  }
  for (int d = 0; d < ndl; ++d) xsb_printf(s, "  long long sh%d;\n", d);
  xsb_printf(s, "};\n");
  gen_body(s, e, ty, b, odt, e->nout, e->out_root);
  xsb_printf(s, "extern \"C\" __global__ void __launch_bounds__(256) %s(const CkP p) {\n", entry);
  const char *I = idx32 ? "unsigned" : "long long";
  xsb_printf(s, "  const %s tid = blockIdx.x * (%s)blockDim.x + threadIdx.x, step = (%s)gridDim.x * blockDim.x;\n", I, I, I);
  if (layout == L_STRIDED) {
    xsb_printf(s, "  for (%s i = tid; i < (%s)p.n; i += step) {\n    %s r = i, c;\n", I, I, I);
    for (int i = 0; i < e->nout; ++i) xsb_printf(s, "    long long oo%d = 0;\n", i);
    for (int k = 0; k < e->nin; ++k)
      if (b->t[k]) xsb_printf(s, "    long long oi%d = 0;\n", k);
    for (int d = nd - 1; d >= 0; --d) {
      if (d > 0) xsb_printf(s, "    c = r %% (%s)p.sh%d; r /= (%s)p.sh%d;\n", I, d, I, d);
      else xsb_printf(s, "    c = r;\n");
      for (int i = 0; i < e->nout; ++i) xsb_printf(s, "    oo%d += (long long)c * p.os%d_%d;\n", i, i, d);
      for (int k = 0; k < e->nin; ++k)
        if (b->t[k]) xsb_printf(s, "    oi%d += (long long)c * p.is%d_%d;\n", k, k, d);
    }
    for (int k = 0; k < e->nin; ++k) {
      char ix[16];
      snprintf(ix, sizeof ix, "oi%d", k);
      xsb_printf(s, "    const %s in%d = ", xctype(b->ity[k].dt), k);
      gen_load(s, b, k, ix, false);
      xsb_printf(s, ";\n");
    }
    xsb_printf(s, "    ck_body(");
    for (int k = 0; k < e->nin; ++k) xsb_printf(s, "%sin%d", k ? ", " : "", k);
    for (int i = 0; i < e->nout; ++i) xsb_printf(s, "%s((%s *)p.o%d)[oo%d]", (e->nin || i) ? ", " : "", xstype(odt[i]), i, i);
    xsb_printf(s, ");\n");
    xsb_printf(s, "  }\n}\n");
    return;
  }
  /* contiguous layouts: broadcast inputs are loaded once */
  for (int k = 0; k < e->nin; ++k)
    if (!b->t[k] || bcast[k]) {
      xsb_printf(s, "  const %s in%d = ", xctype(b->ity[k].dt), k);
      gen_load(s, b, k, "0", true);
      xsb_printf(s, ";\n");
    }
  const char *start = "tid";
  if (layout == L_VEC4) {
    xsb_printf(s, "  const %s nv = (%s)(p.n >> 2);\n  for (%s v = tid; v < nv; v += step) {\n", I, I, I);
    for (int k = 0; k < e->nin; ++k)
      if (b->t[k] && !bcast[k])
        xsb_printf(s, "    const CkV4<%s> x%d = ((const CkV4<%s> *)p.i%d)[v];\n", xstype(b->ity[k].dt), k,
                   xstype(b->ity[k].dt), k);
    for (int i = 0; i < e->nout; ++i) xsb_printf(s, "    CkV4<%s> y%d;\n", xstype(odt[i]), i);
    xsb_printf(s, "#pragma unroll\n    for (int j = 0; j < 4; ++j) {\n");
    for (int k = 0; k < e->nin; ++k)
      if (b->t[k] && !bcast[k]) {
        char v[24];
        snprintf(v, sizeof v, "x%d.v[j]", k);
        xsb_printf(s, "      const %s e%d = ", xctype(b->ity[k].dt), k);
        xgen_load(s, v, b->ity[k].dt);
        xsb_printf(s, ";\n");
      }
    xsb_printf(s, "      ck_body(");
    for (int k = 0; k < e->nin; ++k) xsb_printf(s, "%s%s%d", k ? ", " : "", (b->t[k] && !bcast[k]) ? "e" : "in", k);
    for (int i = 0; i < e->nout; ++i) xsb_printf(s, "%sy%d.v[j]", (e->nin || i) ? ", " : "", i);
    xsb_printf(s, ");\n    }\n");
    for (int i = 0; i < e->nout; ++i) xsb_printf(s, "    ((CkV4<%s> *)p.o%d)[v] = y%d;\n", xstype(odt[i]), i, i);
    xsb_printf(s, "  }\n");
    start = "(nv << 2) + tid";
  }
  xsb_printf(s, "  for (%s i = %s; i < (%s)p.n; i += step) {\n", I, start, I);
  for (int k = 0; k < e->nin; ++k)
    if (b->t[k] && !bcast[k]) {
      xsb_printf(s, "    const %s e%d = ", xctype(b->ity[k].dt), k);
      gen_load(s, b, k, "i", false);
      xsb_printf(s, ";\n");
    }
  xsb_printf(s, "    ck_body(");
  for (int k = 0; k < e->nin; ++k) xsb_printf(s, "%s%s%d", k ? ", " : "", (b->t[k] && !bcast[k]) ? "e" : "in", k);
  for (int i = 0; i < e->nout; ++i) xsb_printf(s, "%s((%s *)p.o%d)[i]", (e->nin || i) ? ", " : "", xstype(odt[i]), i);
  xsb_printf(s, ");\n  }\n}\n");
}



static ck_status gpu_map(ck_ctx *ctx, ck_map_cache *cache, const ck_expr *e, const xtype *ty, mbind *b,
                         ck_tensor *outs, const int *odt, ck_map_report *rep) {
  const ck_tensor *ops[MAXOPS];
  int opk[MAXOPS];
  mgeom g;
  const int nops = map_geom(e, b, outs, ops, opk, &g);
  rep->ndim = g.nd;
  if (g.numel == 0 && !rep->source_only) return CK_OK;
  /* layout */
  bool bcast[MAXOPS] = {false};
  int layout = L_CONTIG;
  for (int o = 0; o < nops && g.nd == 1; ++o) {
    int64_t s = g.st[o][0];
    if (s == 1) continue;
    if (s == 0 && o >= e->nout) continue;
    layout = L_STRIDED;
  }
  if (g.nd > 1) layout = L_STRIDED;
  if (layout == L_CONTIG) {
    for (int k = 0; k < b->nin; ++k)
      if (b->t[k]) bcast[k] = g.nd == 1 && g.st[opk[k]][0] == 0;
    bool aligned = true;
    for (int o = 0; o < nops; ++o) {
      size_t es = ck_dtype_size(ops[o]->dtype);
      bool bc = false;
      for (int k = 0; k < b->nin; ++k)
        if (opk[k] == o) bc = bcast[k];
      if (!bc && ((uintptr_t)ck_data(ops[o]) % (4 * es))) aligned = false;
    }
    if (aligned) layout = L_VEC4;
  }
  const int nd = layout == L_STRIDED ? g.nd : 0;
  const bool idx32 = g.numel < (1LL << 31) - (1LL << 24);
  char key[16384];
  int kl = snprintf(key, sizeof key, "map|%s|%s|%d|%d|", e->text, LAYOUT_NAMES[layout], nd, idx32);
  if (kl >= (int)sizeof key - 1024) return ck_error(ctx, CK_ERR_ARG, "%s: expression too long for a GPU kernel (%d characters)", e->what, kl);
  map_append_sig(key, sizeof key, b, layout == L_STRIDED ? NULL : bcast);
  for (int i = 0; i < e->nout; ++i) {
    size_t l = strlen(key);
    snprintf(key + l, sizeof key - l, "o%s,", ck_dtype_name((ck_dtype)odt[i]));
  }
  char entry[48];
  map_entry_name(entry, sizeof entry, "ck_map", key);
  snprintf(rep->entry, sizeof rep->entry, "%s", entry);
  snprintf(rep->layout, sizeof rep->layout, "%s", LAYOUT_NAMES[layout]);
  rep->block = 256;
  xsb src = {0};
  if (!ck_map_cache_has(cache, key) || rep->source_only || rep->want_source) {
    gen_map_source(&src, e, ty, b, odt, layout, nd, idx32, bcast, entry);
    if (src.oom) {
      xsb_free(&src);
      return ck_error(ctx, CK_ERR_OOM, "out of host memory");
    }
  }
  if (rep->source_only || rep->want_source) rep->source = strdup(src.s);
  /* parameters: 8-byte slots in the order of struct CkP */
  pwriter w = {.rep = rep};
  map_pw_int(&w, g.numel);
  for (int i = 0; i < e->nout; ++i) {
    map_pw_ptr(&w, ck_data(&outs[i]), 'o', i);
    for (int d = 0; d < nd; ++d) map_pw_int(&w, g.st[i][d]);
  }
  for (int kk = 0; kk < b->nin; ++kk) {
    if (!b->t[kk]) {
      if (b->ity[kk].dt == CK_I64) map_pw_int(&w, b->inum[kk]);
      else map_pw_dbl(&w, b->num[kk]);
      continue;
    }
    map_pw_ptr(&w, ck_data(b->t[kk]), 'i', kk);
    for (int d = 0; d < nd; ++d) map_pw_int(&w, g.st[opk[kk]][d]);
  }
  for (int d = 0; d < nd; ++d) map_pw_int(&w, g.shape[d]);
  int64_t work = layout == L_VEC4 ? (g.numel + 3) / 4 : g.numel;
  int64_t blocks = (work + 255) / 256;
  if (blocks > (1LL << 30)) blocks = 1LL << 30;
  if (blocks < 1) blocks = 1;
  rep->grid = (unsigned)blocks;
  if (rep->source_only) {
    xsb_free(&src);
    return CK_OK;
  }
  ck_rtc_kernel *k = NULL;
  ck_status st = ck_map_cache_get(ctx, cache, key, src.s, entry, MAP_NVRTC_OPTS, rep, &k);
  xsb_free(&src);
  if (st) return st;
  rep->kernel = k;
  unsigned grid[3] = {(unsigned)blocks, 1, 1}, block[3] = {256, 1, 1};
  void *args[1] = {w.slots};
  st = ck_rtc_launch(ctx, k, grid, block, 0, args);
  if (st) return ck_error_prefix(ctx, st, "%s \"%s\" (%s)", e->what, e->text, entry);
  return CK_OK;
}

// ---------------------------------------------------------------- ck.map

ck_status ck_map(ck_ctx *ctx, ck_map_cache *cache, const ck_expr *e, const ck_map_input *in, int nin, ck_tensor *outs,
                 int dtype, ck_map_report *rep) {
  ck_map_report dummy;
  memset(&dummy, 0, sizeof dummy);
  if (!rep) rep = &dummy;
  mbind b;
  xtype *ty = NULL;
  ck_status st = map_bind_inputs(ctx, e, in, nin, e->nout, &b);
  if (st) goto cleanup;
  if (e->nout > 16) {
    st = ck_error(ctx, CK_ERR_ARG, "%s: at most 16 outputs", e->what);
    goto cleanup;
  }
  if (!(ty = malloc(sizeof *ty * (size_t)e->n))) {
    st = ck_error(ctx, CK_ERR_OOM, "out of host memory");
    goto cleanup;
  }
  if ((st = ck_expr_type(ctx, e, b.ity, ty))) goto cleanup;
  int odt[16];
  for (int i = 0; i < e->nout; ++i) odt[i] = dtype >= 0 ? dtype : ck_xtype_final(ty[e->out_root[i]]);
  if ((st = map_prepare_outputs(ctx, e, &b, e->nout, (const char *const *)e->out_names, odt, b.nd, b.shape, outs)))
    goto cleanup;
  if (b.dev.kind == CK_HOST && !rep->source_only) {
    snprintf(rep->layout, sizeof rep->layout, "host");
    st = host_map(ctx, e, ty, &b, outs, odt);
  } else {
    st = gpu_map(ctx, cache, e, ty, &b, outs, odt, rep);
  }
cleanup:
  map_unbind(&b);
  free(ty);
  return st;
}

