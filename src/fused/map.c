/*
 * map.c — fused expression kernels: ck.map (elementwise, several outputs) and ck.reduce_map.
 *
 * Both run one parsed expression (expr.c) over the broadcast index space of their array inputs:
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
 *
 * ck.reduce_map: the index space split into kept dims (the output) and reduced dims; layouts
 *   rows  the reduced elements of one output are adjacent in memory (or few outputs): a block per output
 *         (a warp per output when the reduction is short), warp shuffles, then shared memory across warps;
 *   cols  the kept dims are the fast ones: a thread per output loops over the reduced dim (coalesced across
 *         threads, the reduce ladder's `cols`);
 *   all   everything to one value: a grid of blocks writes partials, one block folds them and applies post.
 */
#define _POSIX_C_SOURCE 200809L
#include "ck_map.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

// ---------------------------------------------------------------- expressions (the public face of expr.c)

ck_status ck_expr_compile(ck_ctx *ctx, const char *what, const char *text, const char *const *fixed, int nfixed,
                          bool single, ck_expr **out) {
  return ck_expr_parse(ctx, what, text, fixed, nfixed, single, out);
}
void ck_expr_release(ck_expr *e) { ck_expr_free(e); }
int ck_expr_noutputs(const ck_expr *e) { return e->nout; }
const char *ck_expr_output(const ck_expr *e, int i) { return e->out_names[i]; }
int ck_expr_ninputs(const ck_expr *e) { return e->nin; }
const char *ck_expr_input(const ck_expr *e, int i) { return e->in_names[i]; }

// ---------------------------------------------------------------- the in-memory kernel cache

typedef struct mentry {
  char *key;
  uint64_t h;
  ck_rtc_kernel *k;
  unsigned block;
} mentry;
struct ck_map_cache {
  mentry *e;
  int n, cap;
};

ck_status ck_map_cache_new(ck_ctx *ctx, ck_map_cache **out) {
  if (!(*out = calloc(1, sizeof **out))) return ck_error(ctx, CK_ERR_OOM, "out of host memory");
  return CK_OK;
}
void ck_map_cache_free(ck_map_cache *c) {
  if (!c) return;
  for (int i = 0; i < c->n; ++i) {
    free(c->e[i].key);
    ck_rtc_free(c->e[i].k);
  }
  free(c->e);
  free(c);
}
int ck_map_cache_count(const ck_map_cache *c) { return c ? c->n : 0; }

static uint64_t fnv(const char *s, uint64_t h) {
  for (; *s; ++s) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return h;
}

static mentry *cache_find(ck_map_cache *c, const char *key, uint64_t h) {
  for (int i = 0; i < c->n; ++i)
    if (c->e[i].h == h && !strcmp(c->e[i].key, key)) return &c->e[i];
  return NULL;
}

/* Compile (or find) the kernel for `key`. */
static ck_status get_kernel(ck_ctx *ctx, ck_map_cache *c, const char *key, const char *src, const char *entry,
                            ck_map_report *rep, ck_rtc_kernel **out) {
  uint64_t h = fnv(key, 0xcbf29ce484222325ULL);
  mentry *m = cache_find(c, key, h);
  if (m) {
    *out = m->k;
    snprintf(rep->cache, sizeof rep->cache, "memory");
    return CK_OK;
  }
  ck_rtc_image img;
  /* --fmad=false: a * b + c rounds twice, as on the host, so that the oracle agrees to the last bit for
   * arithmetic (fused kernels are memory-bound: contraction would buy nothing measurable) */
  ck_status st = ck_rtc_build(ctx, src, entry, "--fmad=false", NULL, &img);
  if (st) return st;
  ck_rtc_kernel *k = NULL;
  st = ck_rtc_load(ctx, &img, entry, &k);
  rep->compiled = true;
  rep->compile_ms = img.compile_ms;
  snprintf(rep->cache, sizeof rep->cache, "%s", img.cache);
  ck_rtc_image_free(&img);
  if (st) return st;
  if (c->n == c->cap) {
    int nc = c->cap ? 2 * c->cap : 16;
    mentry *ne = realloc(c->e, (size_t)nc * sizeof *ne);
    if (!ne) {
      ck_rtc_free(k);
      return ck_error(ctx, CK_ERR_OOM, "out of host memory");
    }
    c->e = ne, c->cap = nc;
  }
  char *kc = strdup(key);
  if (!kc) {
    ck_rtc_free(k);
    return ck_error(ctx, CK_ERR_OOM, "out of host memory");
  }
  c->e[c->n++] = (mentry){kc, h, k, 0};
  *out = k;
  return CK_OK;
}

// ---------------------------------------------------------------- inputs, shapes, layouts

/* Every per-operand buffer below holds CK_MAP_MAX_OPERANDS, which bind_inputs enforces first of all. */
#define MAXOPS CK_MAP_MAX_OPERANDS

typedef struct mbind {
  int nin;
  const ck_tensor *t[MAXOPS]; /* per expression input: the array, or NULL for a number */
  double num[MAXOPS];
  xtype ity[MAXOPS];
  ck_devkind dev;
  int nd;
  int64_t shape[CK_MAX_DIMS];
  const ck_tensor *like;  /* an input with the broadcast shape (outputs follow its layout) */
  ck_tensor snap[MAXOPS]; /* snapshots of inputs an output overlaps */
} mbind;

static void list_names(char *buf, size_t n, const ck_map_input *in, int nin) {
  const char *names[MAXOPS];
  int m = nin < MAXOPS ? nin : MAXOPS;
  for (int i = 0; i < m; ++i) { /* sorted: Lua gives table keys in no particular order */
    int j = i;
    for (; j > 0 && strcmp(names[j - 1], in[i].name) > 0; --j) names[j] = names[j - 1];
    names[j] = in[i].name;
  }
  buf[0] = 0;
  if (m == 0) snprintf(buf, n, "none given");
  for (int i = 0; i < m; ++i) {
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, "%s%s", i ? ", " : "", names[i]);
  }
}

/* The one entry of ck_map and ck_reduce_map (and so of every binding): the operand limit, then every name of
 * the inputs table, then each input the expression reads. nout: the outputs the call will write. */
static ck_status bind_inputs(ck_ctx *ctx, const ck_expr *e, const ck_map_input *in, int nin, int nout, mbind *b) {
  memset(b, 0, sizeof *b);
  /* Unused entries count too: they are checked and listed, and counting what the caller passed keeps the rule
   * one the caller can see without reading the expression. */
  if (nin < 0 || nout < 0 || nin > MAXOPS - nout)
    return ck_error(ctx, CK_ERR_ARG, "%s: at most %d operands (the entries of the inputs table, used or not, and the "
                    "outputs); this call has %d input%s and %d output%s", e->what, MAXOPS, nin, nin == 1 ? "" : "s",
                    nout, nout == 1 ? "" : "s");
  for (int i = 0; i < nin; ++i) {
    ck_status st = ck_expr_check_input(ctx, e, in[i].name);
    if (st) return st;
  }
  /* every name the expression reads is found in the table below (else an error), so e->nin <= nin here */
  b->nin = e->nin;
  b->dev = ck_default_device(ctx);
  bool have_dev = false;
  for (int k = 0; k < e->nin; ++k) {
    int f = -1;
    for (int i = 0; i < nin; ++i)
      if (!strcmp(in[i].name, e->in_names[k])) f = i;
    if (f < 0) {
      char names[400];
      list_names(names, sizeof names, in, nin);
      return ck_expr_error_at(ctx, e, CK_ERR_ARG, e->in_pos[k], "unknown name '%s' (inputs: %s)", e->in_names[k], names);
    }
    if (in[f].t) {
      const ck_tensor *t = in[f].t;
      ck_status st = ck_check_live(ctx, e->what, t);
      if (st) return st;
      if (t->dtype != CK_F32 && t->dtype != CK_F64 && t->dtype != CK_I32)
        return ck_expr_error_at(ctx, e, CK_ERR_DTYPE, e->in_pos[k], "input '%s' is %s; expressions take f32, f64 and i32",
                                e->in_names[k], ck_dtype_name(t->dtype));
      if (have_dev && ck_dev(t) != b->dev)
        return ck_error(ctx, CK_ERR_DEVICE, "%s: input '%s' is on the %s, others on the %s (move it with :to())", e->what,
                        e->in_names[k], ck_dev_name(ck_dev(t)), ck_dev_name(b->dev));
      b->dev = ck_dev(t), have_dev = true;
      b->t[k] = t;
      b->ity[k] = (xtype){(signed char)t->dtype, (signed char)t->dtype, 0};
      /* broadcast shape */
      int nd = b->nd > t->ndim ? b->nd : t->ndim;
      int64_t sh[CK_MAX_DIMS];
      for (int d = 0; d < nd; ++d) {
        int da = d - (nd - b->nd), dt = d - (nd - t->ndim);
        int64_t x = da >= 0 ? b->shape[da] : 1, y = dt >= 0 ? t->shape[dt] : 1;
        if (x != y && x != 1 && y != 1) {
          char s1[96], s2[96];
          return ck_error(ctx, CK_ERR_SHAPE, "%s: input '%s' %s does not broadcast with %s (the other inputs)", e->what,
                          e->in_names[k], ck_shape_str(t->ndim, t->shape, s1, sizeof s1),
                          ck_shape_str(b->nd, b->shape, s2, sizeof s2));
        }
        sh[d] = x == 1 ? y : x;
      }
      b->nd = nd;
      memcpy(b->shape, sh, sizeof sh);
    } else {
      double v = in[f].num;
      b->num[k] = v;
      bool integral = v == floor(v) && v >= -2147483648.0 && v <= 2147483647.0;
      b->ity[k] = (xtype){(signed char)(integral ? CK_I32 : CK_F64), 0, 1};
      b->ity[k].ct = b->ity[k].dt;
    }
  }
  for (int k = 0; k < e->nin; ++k) {
    const ck_tensor *t = b->t[k];
    if (t && t->ndim == b->nd && !memcmp(t->shape, b->shape, sizeof(int64_t) * (size_t)b->nd)) {
      b->like = t;
      break;
    }
  }
  return CK_OK;
}

static void unbind(mbind *b) {
  for (int k = 0; k < MAXOPS; ++k) ck_release(&b->snap[k]);
}

/* Outputs: allocate, or check the given ones; inputs that a given output overlaps are snapshotted. */
static ck_status prepare_outputs(ck_ctx *ctx, const ck_expr *e, mbind *b, int nout, const char *const *names,
                                 const int *odt, int nd, const int64_t *shape, ck_tensor *outs) {
  ck_status st = CK_OK;
  char s1[96], s2[96];
  for (int i = 0; i < nout; ++i) {
    ck_tensor *o = &outs[i];
    if (!o->st) {
      if ((st = ck_empty_layout(ctx, o, (ck_dtype)odt[i], nd, shape, b->dev, b->like))) return st;
      continue;
    }
    if ((st = ck_check_live(ctx, e->what, o))) return st;
    if (o->ndim != nd || memcmp(o->shape, shape, sizeof(int64_t) * (size_t)nd))
      return ck_error(ctx, CK_ERR_SHAPE, "%s: out '%s' is %s, the result is %s", e->what, names[i],
                      ck_shape_str(o->ndim, o->shape, s1, sizeof s1), ck_shape_str(nd, shape, s2, sizeof s2));
    if ((int)o->dtype != odt[i])
      return ck_error(ctx, CK_ERR_DTYPE, "%s: out '%s' is %s but the result is %s (cast in the expression, or pass dtype)",
                      e->what, names[i], ck_dtype_name(o->dtype), ck_dtype_name((ck_dtype)odt[i]));
    if (ck_dev(o) != b->dev)
      return ck_error(ctx, CK_ERR_DEVICE, "%s: out '%s' is on the %s, the inputs on the %s", e->what, names[i],
                      ck_dev_name(ck_dev(o)), ck_dev_name(b->dev));
    if ((st = ck_check_writable(ctx, e->what, o))) return st;
    for (int j = 0; j < i; ++j)
      if (ck_unsafe_alias(o, &outs[j]) || (o->st == outs[j].st && o->offset == outs[j].offset))
        return ck_error(ctx, CK_ERR_ARG, "%s: outputs '%s' and '%s' overlap", e->what, names[j], names[i]);
    for (int k = 0; k < b->nin; ++k) {
      const ck_tensor *t = b->t[k];
      if (!t || !ck_unsafe_alias(o, t)) continue;
      ck_tensor *s = &b->snap[k];
      if (!s->st) {
        if ((st = ck_empty(ctx, s, t->dtype, t->ndim, t->shape, ck_dev(t)))) return st;
        if ((st = ck_copy(ctx, s, t))) return st;
      }
      b->t[k] = s;
    }
  }
  return CK_OK;
}

/* Operand strides over the broadcast space, dims put in the first operand's memory order, then coalesced. */
typedef struct mgeom {
  int nops, nd;
  int64_t shape[CK_MAX_DIMS];
  int64_t st[MAXOPS][CK_MAX_DIMS];
  int64_t numel;
} mgeom;

/* st[o][d]: operand o's stride along dim d of (nd, shape). order: dims sorted by operand 0's |stride|. */
static void geom_raw(mgeom *g, int nops, int64_t (*st)[CK_MAX_DIMS], int nd, const int64_t *shape, bool order) {
  memset(g, 0, sizeof *g);
  g->nops = nops;
  int perm[CK_MAX_DIMS];
  for (int d = 0; d < nd; ++d) perm[d] = d;
  if (order) /* stable insertion sort by |stride| of operand 0, largest first */
    for (int i = 1; i < nd; ++i)
      for (int j = i; j > 0; --j) {
        int64_t x = llabs(st[0][perm[j - 1]]), y = llabs(st[0][perm[j]]);
        if (x >= y) break;
        int t = perm[j];
        perm[j] = perm[j - 1], perm[j - 1] = t;
      }
  g->numel = 1;
  for (int d = 0; d < nd; ++d) g->numel *= shape[d];
  int n = 0;
  for (int i = 0; i < nd; ++i) {
    int k = perm[i];
    if (shape[k] == 1) continue;
    if (n > 0) {
      bool ok = true;
      for (int o = 0; o < nops && ok; ++o) ok = g->st[o][n - 1] == st[o][k] * shape[k];
      if (ok) {
        g->shape[n - 1] *= shape[k];
        for (int o = 0; o < nops; ++o) g->st[o][n - 1] = st[o][k];
        continue;
      }
    }
    g->shape[n] = shape[k];
    for (int o = 0; o < nops; ++o) g->st[o][n] = st[o][k];
    ++n;
  }
  g->nd = n;
}

static void geom_build(mgeom *g, int nops, const ck_tensor *const *ops, int nd, const int64_t *shape, bool order) {
  int64_t st[MAXOPS][CK_MAX_DIMS];
  for (int o = 0; o < nops; ++o) ck_aligned_strides(st[o], nd, ops[o]);
  geom_raw(g, nops, st, nd, shape, order);
}

// ---------------------------------------------------------------- host execution

static void gather(void *dst, const char *base, int64_t st, int n, size_t es) {
  if (es == 4) {
    const uint32_t *s = (const uint32_t *)base;
    uint32_t *d = dst;
    for (int j = 0; j < n; ++j) d[j] = s[j * st];
  } else {
    const uint64_t *s = (const uint64_t *)base;
    uint64_t *d = dst;
    for (int j = 0; j < n; ++j) d[j] = s[j * st];
  }
}
static void scatter(char *base, int64_t st, const void *src, int n, size_t es) {
  if (es == 4) {
    uint32_t *d = (uint32_t *)base;
    const uint32_t *s = src;
    for (int j = 0; j < n; ++j) d[j * st] = s[j];
  } else {
    uint64_t *d = (uint64_t *)base;
    const uint64_t *s = src;
    for (int j = 0; j < n; ++j) d[j * st] = s[j];
  }
}

static void fill_numbers(xeval *ev, const mbind *b) {
  for (int k = 0; k < b->nin; ++k) {
    if (b->t[k]) continue;
    if (b->ity[k].dt == CK_I32) {
      int *o = ev->in_buf[k];
      for (int j = 0; j < XBLK; ++j) o[j] = (int)b->num[k];
    } else {
      double *o = ev->in_buf[k];
      for (int j = 0; j < XBLK; ++j) o[j] = b->num[k];
    }
  }
}

/* ck.map's geometry. Operand order: outputs first, then the array inputs (opk[k] = operand of input k, -1 for a
 * number); dims in the first output's memory order, coalesced. Returns the number of operands. */
static int map_geom(const ck_expr *e, const mbind *b, const ck_tensor *outs, const ck_tensor **ops, int *opk, mgeom *g) {
  int nops = 0;
  for (int i = 0; i < e->nout; ++i) ops[nops++] = &outs[i];
  for (int k = 0; k < b->nin; ++k) {
    opk[k] = -1;
    if (b->t[k]) opk[k] = nops, ops[nops++] = b->t[k];
  }
  geom_build(g, nops, ops, outs[0].ndim, outs[0].shape, true);
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
  fill_numbers(&ev, b);
  double tmp[XBLK];
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
        gather(ev.in_buf[k], base[o] + (off[o] + j0 * s) * (int64_t)es, s, n, es);
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
        scatter(base[i] + (off[i] + j0 * s) * (int64_t)es, s, v, n, es);
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
  for (int i = 0; i < nout; ++i) xsb_printf(s, "%s%s &out%d", (e->nin || i) ? ", " : "", xctype(odt[i]), i);
  xsb_printf(s, ") {\n");
  xgen_nodes(s, e, ty, "  ");
  for (int i = 0; i < nout; ++i) {
    char v[24];
    snprintf(v, sizeof v, "v%d", roots[i]);
    xsb_printf(s, "  out%d = ", i);
    xgen_convert(s, v, ty[roots[i]].dt, odt[i]);
    xsb_printf(s, ";\n");
  }
  xsb_printf(s, "}\n");
}

/* Load of input k at index expression `ix` (arrays) or its parameter (numbers). */
static void gen_load(xsb *s, const mbind *b, int k, const char *ix, bool bcast) {
  const char *T = xctype(b->ity[k].dt);
  if (!b->t[k]) {
    if (b->ity[k].dt == CK_I32) xsb_printf(s, "(int)p.s%d", k);
    else xsb_printf(s, "p.s%d", k);
  } else if (bcast) xsb_printf(s, "*(const %s *)p.i%d", T, k);
  else xsb_printf(s, "__ldg((const %s *)p.i%d + %s)", T, k, ix);
}

/* bcast[k]: input k is one element for the whole launch (contiguous layouts). */
static void gen_map_source(xsb *s, const ck_expr *e, const xtype *ty, const mbind *b, const int *odt, int layout,
                           int nd, bool idx32, const bool *bcast, const char *entry) {
  xsb_printf(s, "// generated by cukern (src/fused/map.c) for: %s\n// layout %s, %d dim%s\n%s\n", e->text,
             LAYOUT_NAMES[layout], nd, nd == 1 ? "" : "s", ck_expr_preamble());
  xsb_printf(s, "template <class T> struct alignas(4 * sizeof(T)) CkV4 { T v[4]; };\n");
  const int ndl = layout == L_STRIDED ? nd : 0;
  xsb_printf(s, "struct CkP {\n  long long n;\n");
  for (int i = 0; i < e->nout; ++i) {
    xsb_printf(s, "  void *o%d;\n", i);
    for (int d = 0; d < ndl; ++d) xsb_printf(s, "  long long os%d_%d;\n", i, d);
  }
  for (int k = 0; k < e->nin; ++k) {
    if (!b->t[k]) {
      xsb_printf(s, "  double s%d;\n", k);
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
    for (int i = 0; i < e->nout; ++i) xsb_printf(s, "%s((%s *)p.o%d)[oo%d]", (e->nin || i) ? ", " : "", xctype(odt[i]), i, i);
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
        xsb_printf(s, "    const CkV4<%s> x%d = ((const CkV4<%s> *)p.i%d)[v];\n", xctype(b->ity[k].dt), k,
                   xctype(b->ity[k].dt), k);
    for (int i = 0; i < e->nout; ++i) xsb_printf(s, "    CkV4<%s> y%d;\n", xctype(odt[i]), i);
    xsb_printf(s, "#pragma unroll\n    for (int j = 0; j < 4; ++j) {\n");
    for (int k = 0; k < e->nin; ++k)
      if (b->t[k] && !bcast[k]) xsb_printf(s, "      const %s e%d = x%d.v[j];\n", xctype(b->ity[k].dt), k, k);
    xsb_printf(s, "      ck_body(");
    for (int k = 0; k < e->nin; ++k) xsb_printf(s, "%s%s%d", k ? ", " : "", (b->t[k] && !bcast[k]) ? "e" : "in", k);
    for (int i = 0; i < e->nout; ++i) xsb_printf(s, "%sy%d.v[j]", (e->nin || i) ? ", " : "", i);
    xsb_printf(s, ");\n    }\n");
    for (int i = 0; i < e->nout; ++i) xsb_printf(s, "    ((CkV4<%s> *)p.o%d)[v] = y%d;\n", xctype(odt[i]), i, i);
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
  for (int i = 0; i < e->nout; ++i) xsb_printf(s, "%s((%s *)p.o%d)[i]", (e->nin || i) ? ", " : "", xctype(odt[i]), i);
  xsb_printf(s, ");\n  }\n}\n");
}

/* The kernel's parameter block: 8-byte slots, described in the report as they are written. */
typedef struct pwriter {
  uint64_t slots[CK_MAP_MAX_PARAMS];
  int n;
  ck_map_report *rep;
} pwriter;
/* The most slots: ck.map writes n, then per operand a pointer and a stride per dim, then the shape; reduce_map
 * writes 5, the output's kept strides, per input a pointer (or a number) and its strides, then the shapes. */
_Static_assert(1 + CK_MAP_MAX_OPERANDS * (1 + CK_MAX_DIMS) + CK_MAX_DIMS <= CK_MAP_MAX_PARAMS,
               "ck.map's parameter block must fit with the most operands");
_Static_assert(5 + CK_MAX_DIMS + (CK_MAP_MAX_OPERANDS - 1) * (1 + CK_MAX_DIMS) + CK_MAX_DIMS <= CK_MAP_MAX_PARAMS,
               "reduce_map's parameter block must fit with the most operands");
static void pw_put(pwriter *w, uint64_t v, char kind, int ref) {
  if (w->n >= CK_MAP_MAX_PARAMS) return; /* cannot happen (above) */
  w->slots[w->n] = v;
  w->rep->pkind[w->n] = kind;
  w->rep->pref[w->n] = ref;
  w->rep->pval[w->n] = v;
  w->rep->nparams = ++w->n;
}
static void pw_int(pwriter *w, int64_t v) { pw_put(w, (uint64_t)v, 'l', 0); }
static void pw_dbl(pwriter *w, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  pw_put(w, u, 'd', 0);
}
static void pw_ptr(pwriter *w, const void *p, char kind, int ref) { pw_put(w, (uint64_t)(uintptr_t)p, kind, ref); }

static void entry_name(char *buf, size_t n, const char *prefix, const char *key) {
  snprintf(buf, n, "%s_%016llx", prefix, (unsigned long long)fnv(key, 0xcbf29ce484222325ULL));
}

static void append_sig(char *key, size_t n, const mbind *b, const bool *bcast) {
  for (int k = 0; k < b->nin; ++k) {
    size_t l = strlen(key);
    snprintf(key + l, n - l, "%c%s%s,", b->t[k] ? 'a' : 'n', ck_dtype_name((ck_dtype)b->ity[k].dt),
             bcast && bcast[k] ? "b" : "");
  }
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
  append_sig(key, sizeof key, b, layout == L_STRIDED ? NULL : bcast);
  for (int i = 0; i < e->nout; ++i) {
    size_t l = strlen(key);
    snprintf(key + l, sizeof key - l, "o%s,", ck_dtype_name((ck_dtype)odt[i]));
  }
  char entry[48];
  entry_name(entry, sizeof entry, "ck_map", key);
  snprintf(rep->entry, sizeof rep->entry, "%s", entry);
  snprintf(rep->layout, sizeof rep->layout, "%s", LAYOUT_NAMES[layout]);
  rep->block = 256;
  xsb src = {0};
  uint64_t hk = fnv(key, 0xcbf29ce484222325ULL);
  mentry *m = cache ? cache_find(cache, key, hk) : NULL;
  if (!m || rep->source_only || rep->want_source) {
    gen_map_source(&src, e, ty, b, odt, layout, nd, idx32, bcast, entry);
    if (src.oom) {
      xsb_free(&src);
      return ck_error(ctx, CK_ERR_OOM, "out of host memory");
    }
  }
  if (rep->source_only || rep->want_source) rep->source = strdup(src.s);
  /* parameters: 8-byte slots in the order of struct CkP */
  pwriter w = {.rep = rep};
  pw_int(&w, g.numel);
  for (int i = 0; i < e->nout; ++i) {
    pw_ptr(&w, ck_data(&outs[i]), 'o', i);
    for (int d = 0; d < nd; ++d) pw_int(&w, g.st[i][d]);
  }
  for (int kk = 0; kk < b->nin; ++kk) {
    if (!b->t[kk]) {
      pw_dbl(&w, b->num[kk]);
      continue;
    }
    pw_ptr(&w, ck_data(b->t[kk]), 'i', kk);
    for (int d = 0; d < nd; ++d) pw_int(&w, g.st[opk[kk]][d]);
  }
  for (int d = 0; d < nd; ++d) pw_int(&w, g.shape[d]);
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
  ck_status st = get_kernel(ctx, cache, key, src.s, entry, rep, &k);
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
  ck_status st = bind_inputs(ctx, e, in, nin, e->nout, &b);
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
  if ((st = prepare_outputs(ctx, e, &b, e->nout, (const char *const *)e->out_names, odt, b.nd, b.shape, outs)))
    goto cleanup;
  if (b.dev == CK_HOST && !rep->source_only) {
    snprintf(rep->layout, sizeof rep->layout, "host");
    st = host_map(ctx, e, ty, &b, outs, odt);
  } else {
    st = gpu_map(ctx, cache, e, ty, &b, outs, odt, rep);
  }
cleanup:
  unbind(&b);
  free(ty);
  return st;
}

// ---------------------------------------------------------------- ck.reduce_map

/* The reduce and post expressions run on the accumulator: reduce(a, b) with a, b of dtype acc; post(r, n). */
typedef struct rprog {
  const ck_expr *map, *red, *post;
  xtype *tmap, *tred, *tpost;
  int acc, odt;
} rprog;

static ck_status rprog_type(ck_ctx *ctx, rprog *p, const mbind *b, int dtype) {
  ck_status st;
  p->tmap = malloc(sizeof(xtype) * (size_t)p->map->n);
  p->tred = malloc(sizeof(xtype) * (size_t)p->red->n);
  p->tpost = p->post ? malloc(sizeof(xtype) * (size_t)p->post->n) : NULL;
  if (!p->tmap || !p->tred || (p->post && !p->tpost)) return ck_error(ctx, CK_ERR_OOM, "out of host memory");
  if ((st = ck_expr_type(ctx, p->map, b->ity, p->tmap))) return st;
  p->acc = ck_xtype_final(p->tmap[p->map->out_root[0]]);
  /* reduce's inputs are a and b in the order the parser met them */
  xtype rin[2];
  for (int k = 0; k < p->red->nin; ++k) rin[k] = (xtype){(signed char)p->acc, (signed char)p->acc, 0};
  if ((st = ck_expr_type(ctx, p->red, rin, p->tred))) return st;
  int rdt = ck_xtype_final(p->tred[p->red->out_root[0]]);
  if (rdt != p->acc && !p->tred[p->red->out_root[0]].weak)
      return ck_expr_error_at(ctx, p->red, CK_ERR_DTYPE, 1,
                              "the reduction gives %s but the accumulator (the map's result) is %s; cast it",
                              ck_dtype_name((ck_dtype)rdt), ck_dtype_name((ck_dtype)p->acc));
  p->odt = p->acc;
  if (p->post) {
    xtype pin[2];
    for (int k = 0; k < p->post->nin; ++k)
      pin[k] = !strcmp(p->post->in_names[k], "r") ? (xtype){(signed char)p->acc, (signed char)p->acc, 0}
                                                  : (xtype){CK_F64, CK_F64, 1}; /* n: a number */
    if ((st = ck_expr_type(ctx, p->post, pin, p->tpost))) return st;
    p->odt = ck_xtype_final(p->tpost[p->post->out_root[0]]);
  }
  if (dtype >= 0) p->odt = dtype;
  return CK_OK;
}

static void rprog_free(rprog *p) {
  free(p->tmap);
  free(p->tred);
  free(p->tpost);
}

/* Host: fold `n` values (acc dtype) pairwise with the reduce expression into v[0]: v[i] = red(v[i], v[n-h+i]). */
static void host_fold(xeval *rev, const rprog *p, void *v, int64_t n) {
  size_t es = ck_dtype_size((ck_dtype)p->acc);
  int ka = !strcmp(p->red->in_names[0], "a") ? 0 : 1, kb = 1 - ka;
  const int r = p->red->out_root[0];
  while (n > 1) {
    int64_t h = n / 2;
    for (int64_t c0 = 0; c0 < h; c0 += XBLK) {
      int cnt = (int)(h - c0 < XBLK ? h - c0 : XBLK);
      memcpy(rev->in_buf[ka], (char *)v + (size_t)c0 * es, (size_t)cnt * es);
      memcpy(rev->in_buf[kb], (char *)v + (size_t)(n - h + c0) * es, (size_t)cnt * es);
      xeval_run(rev, cnt);
      xconvert((char *)v + (size_t)c0 * es, p->acc, rev->val[r], p->tred[r].dt, cnt);
    }
    n -= h; /* odd n: the middle element is already at index h */
  }
}

static void set_identity(void *v, int dt, double id) {
  if (dt == CK_F32) *(float *)v = (float)id;
  else if (dt == CK_F64) *(double *)v = id;
  else xconvert(v, CK_I32, &id, CK_F64, 1);
}

/* Reduce geometry: kept dims K (the output; operand 0 = out, then array inputs) and reduced dims R (array
 * inputs only, in the first input's memory order). */
typedef struct rgeom {
  mgeom k, r;
  int opk[MAXOPS];  /* operand of input k in the K geometry (-1: a number) */
  int ropk[MAXOPS]; /* operand of input k in the R geometry */
  int nops;
} rgeom;

static ck_status rgeom_build(ck_ctx *ctx, const ck_expr *e, rgeom *g, const mbind *b, int dim, bool keepdim,
                             const ck_tensor *out, const ck_tensor *const *ins) {
  int nd = b->nd;
  bool red[CK_MAX_DIMS] = {false};
  if (dim == CK_RMAP_ALL) {
    for (int d = 0; d < nd; ++d) red[d] = true;
  } else {
    int d = dim < 0 ? dim + nd : dim;
    if (d < 0 || d >= nd)
      return ck_error(ctx, CK_ERR_ARG, "%s: dim %d out of range for %d-D inputs", e->what, dim < 0 ? dim : dim + 1, nd);
    red[d] = true;
  }
  int64_t stk[MAXOPS][CK_MAX_DIMS], str[MAXOPS][CK_MAX_DIMS], full[CK_MAX_DIMS];
  int64_t kshape[CK_MAX_DIMS], rshape[CK_MAX_DIMS];
  int nk = 0, nr = 0, nops = 1, nrops = 0;
  for (int d = 0; d < nd; ++d) {
    if (red[d]) rshape[nr++] = b->shape[d];
    else kshape[nk++] = b->shape[d];
  }
  /* the output's strides per kept dim */
  for (int d = 0, kk = 0; d < nd; ++d) {
    if (red[d]) continue;
    stk[0][kk] = out->stride[keepdim ? d : kk];
    ++kk;
  }
  for (int k = 0; k < b->nin; ++k) {
    g->opk[k] = g->ropk[k] = -1;
    if (!ins[k]) continue;
    ck_aligned_strides(full, nd, ins[k]);
    int kk = 0, rr = 0;
    for (int d = 0; d < nd; ++d) {
      if (red[d]) str[nrops][rr++] = full[d];
      else stk[nops][kk++] = full[d];
    }
    g->opk[k] = nops++;
    g->ropk[k] = nrops++;
  }
  g->nops = nops;
  geom_raw(&g->k, nops, stk, nk, kshape, false);
  geom_raw(&g->r, nrops, str, nr, rshape, nrops > 0);
  if (nrops == 0) { /* only numbers: the reduced space is still counted */
    g->r.numel = 1;
    for (int d = 0; d < nr; ++d) g->r.numel *= rshape[d];
  }
  return CK_OK;
}

static ck_status host_reduce_map(ck_ctx *ctx, rprog *p, mbind *b, const rgeom *g, ck_tensor *out, double identity) {
  ck_status st;
  xeval mev, rev, pev;
  bool m = false, r = false, q = false;
  size_t es = ck_dtype_size((ck_dtype)p->acc);
  const int64_t len = g->r.numel, nout = g->k.numel;
  const int64_t Lr = g->r.nd ? g->r.shape[g->r.nd - 1] : 1;
  const int64_t nch = (Lr > 0 ? (len / Lr) * ((Lr + XBLK - 1) / XBLK) : 0) + 1;
  char *part = malloc((size_t)nch * es), *blk = malloc(XBLK * 8);
  if (!part || !blk) {
    st = ck_error(ctx, CK_ERR_OOM, "out of host memory");
    goto cleanup;
  }
  if ((st = xeval_init(ctx, &mev, p->map, p->tmap))) goto cleanup;
  m = true;
  if ((st = xeval_init(ctx, &rev, p->red, p->tred))) goto cleanup;
  r = true;
  if (p->post) {
    if ((st = xeval_init(ctx, &pev, p->post, p->tpost))) goto cleanup;
    q = true;
  }
  fill_numbers(&mev, b);
  const int mroot = p->map->out_root[0];
  const int nkd = g->k.nd, nrd = g->r.nd;
  const int64_t L = nrd ? g->r.shape[nrd - 1] : 1;
  char *obase = (char *)ck_data(out);
  int64_t kidx[CK_MAX_DIMS] = {0};
  for (int64_t o = 0; o < nout; ++o) {
    int64_t koff[MAXOPS];
    for (int op = 0; op < g->nops; ++op) {
      koff[op] = 0;
      for (int d = 0; d < nkd; ++d) koff[op] += kidx[d] * g->k.st[op][d];
    }
    int64_t np = 0;
    int64_t ridx[CK_MAX_DIMS] = {0};
    for (int64_t row = 0, rows = len > 0 ? len / L : 0; row < rows; ++row) {
      for (int64_t j0 = 0; j0 < L; j0 += XBLK) {
        int n = (int)(L - j0 < XBLK ? L - j0 : XBLK);
        for (int k = 0; k < b->nin; ++k) {
          if (g->opk[k] < 0) continue;
          const ck_tensor *t = b->t[k];
          int ro = g->ropk[k];
          size_t tes = ck_dtype_size(t->dtype);
          int64_t roff = 0;
          for (int d = 0; d < nrd - 1; ++d) roff += ridx[d] * g->r.st[ro][d];
          int64_t s = nrd ? g->r.st[ro][nrd - 1] : 0;
          gather(mev.in_buf[k], (const char *)ck_data(t) + (koff[g->opk[k]] + roff + j0 * s) * (int64_t)tes, s, n, tes);
        }
        xeval_run(&mev, n);
        xconvert(blk, p->acc, mev.val[mroot], p->tmap[mroot].dt, n);
        host_fold(&rev, p, blk, n);
        memcpy(part + (size_t)np++ * es, blk, es);
      }
      for (int d = nrd - 2; d >= 0; --d) {
        if (++ridx[d] < g->r.shape[d]) break;
        ridx[d] = 0;
      }
    }
    if (np == 0) set_identity(part, p->acc, identity), np = 1;
    host_fold(&rev, p, part, np);
    const void *res = part;
    int rdt = p->acc;
    if (p->post) {
      for (int k = 0; k < p->post->nin; ++k) {
        if (!strcmp(p->post->in_names[k], "r")) memcpy(pev.in_buf[k], part, es);
        else *(double *)pev.in_buf[k] = (double)len;
      }
      xeval_run(&pev, 1);
      res = pev.val[p->post->out_root[0]];
      rdt = p->tpost[p->post->out_root[0]].dt;
    }
    xconvert(obase + koff[0] * (int64_t)ck_dtype_size(out->dtype), p->odt, res, rdt, 1);
    for (int d = nkd - 1; d >= 0; --d) {
      if (++kidx[d] < g->k.shape[d]) break;
      kidx[d] = 0;
    }
  }
cleanup:
  if (m) xeval_free(&mev);
  if (r) xeval_free(&rev);
  if (q) xeval_free(&pev);
  free(part);
  free(blk);
  return st;
}

// ---------------------------------------------------------------- CUDA generation for ck.reduce_map

enum { R_ROWS_WARP, R_ROWS_BLOCK, R_COLS, R_ALL };
static const char *const RLAYOUT_NAMES[] = {"rows_warp", "rows", "cols", "all"};

/* The three device functions: ck_map (inputs -> acc), ck_red (a, b), ck_post (r, n -> out). */
/* The body of a one-result function: every node, then `return <result as dtype to>;`. */
static void gen_return(xsb *s, const ck_expr *e, const xtype *ty, int to) {
  xgen_nodes(s, e, ty, "  ");
  int r = e->out_root[0];
  char v[24];
  snprintf(v, sizeof v, "v%d", r);
  xsb_printf(s, "  return ");
  xgen_convert(s, v, ty[r].dt, to);
  xsb_printf(s, ";\n}\n");
}

static void gen_rfuncs(xsb *s, const rprog *p, const mbind *b) {
  const char *A = xctype(p->acc);
  xsb_printf(s, "typedef %s ACC;\n", A);
  if (b) {
    xsb_printf(s, "static __device__ __forceinline__ ACC ck_map(");
    for (int k = 0; k < p->map->nin; ++k) xsb_printf(s, "%sconst %s in%d", k ? ", " : "", xctype(b->ity[k].dt), k);
    xsb_printf(s, ") {\n");
    gen_return(s, p->map, p->tmap, p->acc);
  }
  xsb_printf(s, "static __device__ __forceinline__ ACC ck_red0(const ACC in0, const ACC in1) {\n");
  gen_return(s, p->red, p->tred, p->acc);
  bool a_first = !strcmp(p->red->in_names[0], "a");
  xsb_printf(s, "static __device__ __forceinline__ ACC ck_red(const ACC a, const ACC b) { return ck_red0(%s); }\n",
             a_first ? "a, b" : "b, a");
  xsb_printf(s, "static __device__ __forceinline__ %s ck_post(const ACC r, const double n) {\n", xctype(p->odt));
  if (p->post) {
    for (int k = 0; k < p->post->nin; ++k)
      xsb_printf(s, "  const %s in%d = %s;\n", strcmp(p->post->in_names[k], "r") ? "double" : "ACC", k,
                 strcmp(p->post->in_names[k], "r") ? "n" : "r");
    gen_return(s, p->post, p->tpost, p->odt);
  } else {
    xsb_printf(s, "  (void)n;\n  return ");
    xgen_convert(s, "r", p->acc, p->odt);
    xsb_printf(s, ";\n}\n");
  }
  /* block-wide fold of `acc` over the block (256 threads, 8 warps); thread 0 gets the result */
  xsb_printf(s, "static __device__ __forceinline__ ACC ck_warp_fold(ACC acc) {\n"
                "#pragma unroll\n  for (int s = 16; s > 0; s >>= 1) acc = ck_red(acc, __shfl_down_sync(0xffffffffu, acc, s));\n"
                "  return acc;\n}\n"
                "static __device__ __forceinline__ ACC ck_block_fold(ACC acc, ACC ident) {\n"
                "  __shared__ ACC sm[8];\n  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
                "  acc = ck_warp_fold(acc);\n  if (lane == 0) sm[warp] = acc;\n  __syncthreads();\n"
                "  if (warp == 0) acc = ck_warp_fold(lane < 8 ? sm[lane] : ident);\n  __syncthreads();\n  return acc;\n}\n");
}

static void gen_decomp(xsb *s, const char *ind, const char *var, int nd, char which, const rgeom *g, const mbind *b,
                       bool with_out) {
  const int *opk = which == 'k' ? g->opk : g->ropk;
  xsb_printf(s, "%s{\n%s  long long q = %s, c;\n", ind, ind, var);
  for (int d = nd - 1; d >= 0; --d) {
    if (d > 0) xsb_printf(s, "%s  c = q %% p.%csh%d; q /= p.%csh%d;\n", ind, which, d, which, d);
    else xsb_printf(s, "%s  c = q;\n", ind);
    if (with_out) xsb_printf(s, "%s  %coff_o += c * p.%cst_o_%d;\n", ind, which, which, d);
    for (int k = 0; k < b->nin; ++k)
      if (opk[k] >= 0) xsb_printf(s, "%s  %coff%d += c * p.%cst%d_%d;\n", ind, which, k, which, k, d);
  }
  xsb_printf(s, "%s}\n", ind);
}

static void gen_rmap_source(xsb *s, const rprog *p, const mbind *b, const rgeom *g, int layout, const char *entry) {
  const int nk = g->k.nd, nr = g->r.nd;
  xsb_printf(s, "// generated by cukern (src/fused/map.c) for reduce_map{map = \"%s\", reduce = \"%s\", post = \"%s\"}\n"
                "// layout %s, %d kept dim(s), %d reduced dim(s)\n%s\n",
             p->map->text, p->red->text, p->post ? p->post->text : "r", RLAYOUT_NAMES[layout], nk, nr, ck_expr_preamble());
  gen_rfuncs(s, p, b);
  xsb_printf(s, "struct CkP {\n  long long nout, len;\n  void *out;\n  void *part;\n  double ident;\n");
  for (int d = 0; d < nk; ++d) xsb_printf(s, "  long long kst_o_%d;\n", d);
  for (int k = 0; k < b->nin; ++k) {
    if (!b->t[k]) {
      xsb_printf(s, "  double s%d;\n", k);
      continue;
    }
    xsb_printf(s, "  const void *i%d;\n", k);
    for (int d = 0; d < nk; ++d) xsb_printf(s, "  long long kst%d_%d;\n", k, d);
    for (int d = 0; d < nr; ++d) xsb_printf(s, "  long long rst%d_%d;\n", k, d);
  }
  for (int d = 0; d < nk; ++d) xsb_printf(s, "  long long ksh%d;\n", d);
  for (int d = 0; d < nr; ++d) xsb_printf(s, "  long long rsh%d;\n", d);
  xsb_printf(s, "};\n");
  const char *IDENT = p->acc == CK_I32 ? "ckx_f2i(p.ident)" : "(ACC)p.ident";
  /* the element step: acc = red(acc, map(inputs at koff + roff)) for reduced index `r` */
  xsb step = {0};
  xsb_printf(&step, "      long long roff_unused = 0; (void)roff_unused;\n");
  for (int k = 0; k < b->nin; ++k)
    if (b->t[k]) xsb_printf(&step, "      long long roff%d = 0;\n", k);
  gen_decomp(&step, "      ", "r", nr, 'r', g, b, false);
  xsb_printf(&step, "      acc = ck_red(acc, ck_map(");
  for (int k = 0; k < b->nin; ++k) {
    const char *T = xctype(b->ity[k].dt);
    if (!b->t[k]) xsb_printf(&step, "%s%sp.s%d", k ? ", " : "", b->ity[k].dt == CK_I32 ? "(int)" : "", k);
    else xsb_printf(&step, "%s__ldg((const %s *)p.i%d + koff%d + roff%d)", k ? ", " : "", T, k, k, k);
  }
  xsb_printf(&step, "));\n");
  const char *OT = xctype(p->odt);
  xsb_printf(s, "extern \"C\" __global__ void __launch_bounds__(256) %s(const CkP p) {\n  const ACC ident = %s;\n", entry, IDENT);
  if (layout == R_COLS) {
    xsb_printf(s, "  for (long long o = blockIdx.x * 256LL + threadIdx.x; o < p.nout; o += (long long)gridDim.x * 256) {\n"
                  "    long long koff_o = 0;\n");
  } else if (layout == R_ALL) {
    xsb_printf(s, "  {\n    const long long o = 0, koff_o = 0;\n");
  } else {
    const int tpr = layout == R_ROWS_WARP ? 32 : 256;
    xsb_printf(s, "  const int sub = threadIdx.x %% %d, rowb = threadIdx.x / %d;\n", tpr, tpr);
    xsb_printf(s, "  for (long long o0 = (long long)blockIdx.x * %d; o0 < p.nout; o0 += (long long)gridDim.x * %d) {\n"
                  "    const long long o = o0 + rowb;\n    long long koff_o = 0;\n", 256 / tpr, 256 / tpr);
  }
  for (int k = 0; k < b->nin; ++k)
    if (b->t[k]) xsb_printf(s, "    long long koff%d = 0;\n", k);
  xsb_printf(s, "    ACC acc = ident;\n");
  if (layout != R_ALL) xsb_printf(s, "    if (o < p.nout) {\n");
  else xsb_printf(s, "    {\n");
  if (layout != R_ALL) gen_decomp(s, "      ", "o", nk, 'k', g, b, true);
  const char *loop = layout == R_COLS ? "for (long long r = 0; r < p.len; ++r)"
                     : layout == R_ALL ? "for (long long r = blockIdx.x * 256LL + threadIdx.x; r < p.len; r += (long long)gridDim.x * 256)"
                     : layout == R_ROWS_WARP ? "for (long long r = sub; r < p.len; r += 32)"
                                             : "for (long long r = sub; r < p.len; r += 256)";
  xsb_printf(s, "      %s {\n%s      }\n    }\n", loop, step.s ? step.s : "");
  xsb_free(&step);
  if (layout == R_COLS) {
    xsb_printf(s, "    if (o < p.nout) ((%s *)p.out)[koff_o] = ck_post(acc, (double)p.len);\n  }\n}\n", OT);
  } else if (layout == R_ROWS_WARP) {
    xsb_printf(s, "    acc = ck_warp_fold(acc);\n    if (sub == 0 && o < p.nout) ((%s *)p.out)[koff_o] = ck_post(acc, (double)p.len);\n  }\n}\n", OT);
  } else if (layout == R_ROWS_BLOCK) {
    xsb_printf(s, "    acc = ck_block_fold(acc, ident);\n    if (threadIdx.x == 0 && o < p.nout) ((%s *)p.out)[koff_o] = ck_post(acc, (double)p.len);\n  }\n}\n", OT);
  } else {
    xsb_printf(s, "    (void)o; (void)koff_o;\n    acc = ck_block_fold(acc, ident);\n"
                  "    if (threadIdx.x == 0) ((ACC *)p.part)[blockIdx.x] = acc;\n  }\n}\n");
  }
}

/* The finisher of layout "all": one block folds the partials and applies post. */
static void gen_rfin_source(xsb *s, const rprog *p, const char *entry) {
  xsb_printf(s, "// generated by cukern (src/fused/map.c): reduce_map finisher for reduce = \"%s\", post = \"%s\"\n%s\n",
             p->red->text, p->post ? p->post->text : "r", ck_expr_preamble());
  gen_rfuncs(s, p, NULL);
  xsb_printf(s, "struct CkF { const void *part; long long nparts; double len, ident; void *out; };\n"
                "extern \"C\" __global__ void __launch_bounds__(256) %s(const CkF p) {\n"
                "  const ACC ident = %s;\n  ACC acc = ident;\n"
                "  for (long long i = threadIdx.x; i < p.nparts; i += 256) acc = ck_red(acc, ((const ACC *)p.part)[i]);\n"
                "  acc = ck_block_fold(acc, ident);\n"
                "  if (threadIdx.x == 0) *(%s *)p.out = ck_post(acc, p.len);\n}\n",
             entry, p->acc == CK_I32 ? "ckx_f2i(p.ident)" : "(ACC)p.ident", xctype(p->odt));
}

static ck_status gpu_reduce_map(ck_ctx *ctx, ck_map_cache *cache, rprog *p, mbind *b, const rgeom *g, ck_tensor *out,
                                double identity, ck_map_report *rep) {
  const int64_t nout = g->k.numel, len = g->r.numel;
  int layout;
  const int sms = ck_sm_count(ctx) > 0 ? ck_sm_count(ctx) : 132; /* map_source without a GPU: an H100's kernel */
  int first = -1;
  for (int k = 0; k < b->nin; ++k)
    if (b->t[k]) {
      first = k;
      break;
    }
  bool inner_contig = first >= 0 && g->r.nd >= 1 && g->r.st[g->ropk[first]][g->r.nd - 1] == 1 &&
                      (g->k.nd == 0 || llabs(g->k.st[g->opk[first]][g->k.nd - 1]) >= len);
  if (nout == 1 && len > 16384) layout = R_ALL;
  else if (inner_contig || nout < (int64_t)sms * 64) layout = len <= 512 ? R_ROWS_WARP : R_ROWS_BLOCK;
  else layout = R_COLS;
  char key[16384];
  int kl = snprintf(key, sizeof key, "rmap|%s|%s|%s|%s|%d|%d|acc%s|out%s|", p->map->text, p->red->text,
                    p->post ? p->post->text : "", RLAYOUT_NAMES[layout], g->k.nd, g->r.nd,
                    ck_dtype_name((ck_dtype)p->acc), ck_dtype_name((ck_dtype)p->odt));
  if (kl >= (int)sizeof key - 1024) return ck_error(ctx, CK_ERR_ARG, "reduce_map: expressions too long (%d characters)", kl);
  append_sig(key, sizeof key, b, NULL);
  char entry[48];
  entry_name(entry, sizeof entry, "ck_rmap", key);
  snprintf(rep->entry, sizeof rep->entry, "%s", entry);
  snprintf(rep->layout, sizeof rep->layout, "%s", RLAYOUT_NAMES[layout]);
  rep->ndim = g->k.nd + g->r.nd;
  rep->block = 256;
  xsb src = {0};
  mentry *m = cache ? cache_find(cache, key, fnv(key, 0xcbf29ce484222325ULL)) : NULL;
  if (!m || rep->source_only || rep->want_source) {
    gen_rmap_source(&src, p, b, g, layout, entry);
    if (src.oom) {
      xsb_free(&src);
      return ck_error(ctx, CK_ERR_OOM, "out of host memory");
    }
    if (rep->source_only || rep->want_source) rep->source = strdup(src.s);
  }
  int64_t blocks;
  if (layout == R_ALL) {
    blocks = (len + 256 * 8 - 1) / (256 * 8);
    if (blocks > (int64_t)sms * 8) blocks = (int64_t)sms * 8;
  } else if (layout == R_COLS) blocks = (nout + 255) / 256;
  else blocks = (nout + (layout == R_ROWS_WARP ? 7 : 0)) / (layout == R_ROWS_WARP ? 8 : 1);
  if (blocks > 65535 * 16) blocks = 65535 * 16;
  if (blocks < 1) blocks = 1;
  rep->grid = (unsigned)blocks;
  char fkey[16384], fentry[48];
  xsb fs = {0};
  if (layout == R_ALL) {
    int fl = snprintf(fkey, sizeof fkey, "rfin|%s|%s|acc%s|out%s", p->red->text, p->post ? p->post->text : "",
                      ck_dtype_name((ck_dtype)p->acc), ck_dtype_name((ck_dtype)p->odt));
    if (fl >= (int)sizeof fkey) {
      xsb_free(&src);
      return ck_error(ctx, CK_ERR_ARG, "reduce_map: expressions too long (%d characters)", fl);
    }
    entry_name(fentry, sizeof fentry, "ck_rfin", fkey);
    if (rep->source_only || rep->want_source || !cache_find(cache, fkey, fnv(fkey, 0xcbf29ce484222325ULL)))
      gen_rfin_source(&fs, p, fentry);
    if (fs.oom) {
      xsb_free(&src), xsb_free(&fs);
      return ck_error(ctx, CK_ERR_OOM, "out of host memory");
    }
    if ((rep->source_only || rep->want_source) && fs.s) rep->source2 = strdup(fs.s);
  }
  void *part = NULL;
  if (layout == R_ALL && !rep->source_only && !(part = ck_dev_alloc(ctx, (size_t)blocks * 8))) {
    xsb_free(&src), xsb_free(&fs);
    return ck_error_prefix(ctx, CK_ERR_OOM, "reduce_map: partials");
  }
  pwriter w = {.rep = rep};
  pw_int(&w, nout);
  pw_int(&w, len);
  pw_ptr(&w, ck_data(out), 'o', 0);
  pw_ptr(&w, part, 'w', 0);
  pw_dbl(&w, identity);
  for (int d = 0; d < g->k.nd; ++d) pw_int(&w, g->k.st[0][d]);
  for (int kk = 0; kk < b->nin; ++kk) {
    if (!b->t[kk]) {
      pw_dbl(&w, b->num[kk]);
      continue;
    }
    pw_ptr(&w, ck_data(b->t[kk]), 'i', kk);
    for (int d = 0; d < g->k.nd; ++d) pw_int(&w, g->k.st[g->opk[kk]][d]);
    for (int d = 0; d < g->r.nd; ++d) pw_int(&w, g->r.st[g->ropk[kk]][d]);
  }
  for (int d = 0; d < g->k.nd; ++d) pw_int(&w, g->k.shape[d]);
  for (int d = 0; d < g->r.nd; ++d) pw_int(&w, g->r.shape[d]);
  if (rep->source_only) {
    xsb_free(&src), xsb_free(&fs);
    return CK_OK;
  }
  ck_rtc_kernel *k = NULL, *fin = NULL;
  ck_status st = get_kernel(ctx, cache, key, src.s, entry, rep, &k);
  xsb_free(&src);
  if (!st) rep->kernel = k;
  if (!st && layout == R_ALL) st = get_kernel(ctx, cache, fkey, fs.s, fentry, rep, &fin);
  xsb_free(&fs);
  if (st) {
    if (part) ck_dev_free(ctx, part);
    return st;
  }
  unsigned grid[3] = {(unsigned)blocks, 1, 1}, block[3] = {256, 1, 1};
  void *args[1] = {w.slots};
  st = ck_rtc_launch(ctx, k, grid, block, 0, args);
  if (!st && layout == R_ALL) {
    struct {
      const void *part;
      long long nparts;
      double len, ident;
      void *out;
    } fp = {part, (long long)blocks, (double)len, identity, ck_data(out)};
    void *fargs[1] = {&fp};
    unsigned one[3] = {1, 1, 1};
    st = ck_rtc_launch(ctx, fin, one, block, 0, fargs);
  }
  if (part) ck_dev_free(ctx, part);
  if (st) return ck_error_prefix(ctx, st, "reduce_map (%s)", entry);
  return CK_OK;
}

ck_status ck_reduce_map(ck_ctx *ctx, ck_map_cache *cache, const ck_expr *map, const ck_expr *red, const ck_expr *post,
                        double identity, const ck_map_input *in, int nin, int dim, bool keepdim, ck_tensor *out,
                        int dtype, ck_map_report *rep) {
  ck_map_report dummy;
  memset(&dummy, 0, sizeof dummy);
  if (!rep) rep = &dummy;
  rprog p = {map, red, post, NULL, NULL, NULL, 0, 0};
  mbind b;
  ck_status st = bind_inputs(ctx, map, in, nin, 1, &b);
  if (st) goto cleanup;
  if (map->nout != 1) {
    st = ck_error(ctx, CK_ERR_ARG, "reduce_map: the map expression must have one result, it has %d", map->nout);
    goto cleanup;
  }
  if (red->nin != 2) {
    st = ck_expr_error_at(ctx, red, CK_ERR_ARG, 1, "the reduction must use both a and b");
    goto cleanup;
  }
  if ((st = rprog_type(ctx, &p, &b, dtype))) goto cleanup;
  if (dim == CK_RMAP_ALL && b.nd == 0) keepdim = false;
  /* the output shape */
  int ond = 0;
  int64_t oshape[CK_MAX_DIMS];
  {
    int d0 = dim == CK_RMAP_ALL ? -1 : (dim < 0 ? dim + b.nd : dim);
    if (dim != CK_RMAP_ALL && (d0 < 0 || d0 >= b.nd)) {
      st = ck_error(ctx, CK_ERR_ARG, "reduce_map: dim %d out of range for %d-D inputs", dim < 0 ? dim : dim + 1, b.nd);
      goto cleanup;
    }
    for (int d = 0; d < b.nd; ++d) {
      bool r = dim == CK_RMAP_ALL || d == d0;
      if (r && keepdim) oshape[ond++] = 1;
      else if (!r) oshape[ond++] = b.shape[d];
    }
  }
  const char *oname = "out";
  if ((st = prepare_outputs(ctx, map, &b, 1, &oname, &p.odt, ond, oshape, out))) goto cleanup;
  rgeom g;
  if ((st = rgeom_build(ctx, map, &g, &b, dim, keepdim, out, b.t))) goto cleanup;
  if (b.dev == CK_HOST && !rep->source_only) {
    snprintf(rep->layout, sizeof rep->layout, "host");
    st = host_reduce_map(ctx, &p, &b, &g, out, identity);
  } else {
    if (g.k.numel == 0 && !rep->source_only) goto cleanup;
    st = gpu_reduce_map(ctx, cache, &p, &b, &g, out, identity, rep);
  }
cleanup:
  unbind(&b);
  rprog_free(&p);
  return st;
}
