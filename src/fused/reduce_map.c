/*
 * reduce_map.c — ck.reduce_map: post(reduce over dims of map(inputs))), fused into one kernel (two for a whole
 * array: partials, then a one-block finisher), with the host evaluator as the oracle.
 *
 * The index space is split into kept dims (the output) and reduced dims; layouts
 *   rows  the reduced elements of one output are adjacent in memory (or few outputs): a block per output
 *         (a warp per output when the reduction is short), warp shuffles, then shared memory across warps;
 *   cols  the kept dims are the fast ones: a thread per output loops over the reduced dim (coalesced across
 *         threads, the reduce ladder's `cols`);
 *   all   everything to one value: a grid of blocks writes partials, one block folds them and applies post.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include "map_bind.h"


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
  /* the accumulator: integer and bool results accumulate in i64 (as ck.sum: a sum of u8 or bool does not wrap,
   * issue 32), f16 and bf16 in f32 (and give their dtype back, as ck.sum) */
  const int mdt = ck_xtype_final(p->tmap[p->map->out_root[0]]);
  const bool half = mdt == CK_F16 || mdt == CK_BF16;
  p->acc = half ? CK_F32 : ck_dtype_is_float((ck_dtype)mdt) ? mdt : CK_I64;
  /* reduce's inputs are a and b in the order the parser met them */
  xtype rin[2];
  for (int k = 0; k < p->red->nin; ++k) rin[k] = (xtype){(signed char)p->acc, (signed char)p->acc, 0, 0};
  if ((st = ck_expr_type(ctx, p->red, rin, p->tred))) return st;
  int rdt = ck_xtype_final(p->tred[p->red->out_root[0]]);
  if (rdt != p->acc && !p->tred[p->red->out_root[0]].weak)
      return ck_expr_error_at(ctx, p->red, CK_ERR_DTYPE, 1,
                              "the reduction gives %s but the accumulator (the map's result) is %s; cast it",
                              ck_dtype_name((ck_dtype)rdt), ck_dtype_name((ck_dtype)p->acc));
  p->odt = half ? mdt : p->acc;
  if (p->post) {
    xtype pin[2];
    for (int k = 0; k < p->post->nin; ++k)
      pin[k] = !strcmp(p->post->in_names[k], "r") ? (xtype){(signed char)p->acc, (signed char)p->acc, 0, 0}
                                                  : (xtype){CK_F64, CK_F64, 1, 0}; /* n: a number */
    if ((st = ck_expr_type(ctx, p->post, pin, p->tpost))) return st;
    const int root = p->post->out_root[0];
    p->odt = ck_xtype_final(p->tpost[root]);
    /* a post in f32 of a half map gives the half back (as ck.mean of a half), unless it casts to f32 itself */
    if (half && p->odt == p->acc && p->post->nodes[root].op != XOP_CAST) p->odt = mdt;
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

/* The identity in the accumulator's dtype. Integer accumulators (i64) saturate: +-math.huge and math.maxinteger
 * (2^63 once a double) give i64's maximum and minimum, where the cast rule would give the minimum for every value
 * out of range (an integer min reduction from math.huge returned INT64_MIN). gen_ident writes the same rule. */
static void set_identity(void *v, int dt, double id) {
  if (dt == CK_I64) {
    const long long x = id >= 9223372036854775807.0 ? LLONG_MAX : id <= -9223372036854775808.0 ? LLONG_MIN : (long long)id;
    memcpy(v, &x, sizeof x);
    return;
  }
  xconvert(v, dt, &id, CK_F64, 1);
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
  map_geom_raw(&g->k, nops, stk, nk, kshape, false);
  map_geom_raw(&g->r, nrops, str, nr, rshape, nrops > 0);
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
  map_fill_numbers(&mev, b);
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
          map_gather(mev.in_buf[k], (const char *)ck_data(t) + (koff[g->opk[k]] + roff + j0 * s) * (int64_t)tes, s, n, t->dtype);
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
/* The body of a one-result function: every node, then `return <result as dtype to>;` (store: as its storage,
 * f16 bits for ck_post). */
static void gen_return(xsb *s, const ck_expr *e, const xtype *ty, int to, bool store) {
  xgen_nodes(s, e, ty, "  ");
  int r = e->out_root[0];
  char v[24];
  snprintf(v, sizeof v, "v%d", r);
  xsb_printf(s, "  const %s res = ", xctype(to));
  xgen_convert(s, v, ty[r].dt, to);
  xsb_printf(s, ";\n  return ");
  xgen_store(s, "res", store ? to : CK_F32); /* (CK_F32: as is) */
  xsb_printf(s, ";\n}\n");
}

/* `const ACC ident = <the identity parameter in the accumulator's dtype>;` (the host's set_identity rule) */
static void gen_ident(xsb *s, int acc) {
  if (acc == CK_I64) {
    xsb_printf(s, "  const ACC ident = p.ident >= 9223372036854775807.0 ? 9223372036854775807LL : p.ident <= "
                  "-9223372036854775808.0 ? (-9223372036854775807LL - 1) : (long long)p.ident;\n");
    return;
  }
  xsb_printf(s, "  const ACC ident = ");
  xgen_convert(s, "p.ident", CK_F64, acc);
  xsb_printf(s, ";\n");
}

static void gen_rfuncs(xsb *s, const rprog *p, const mbind *b) {
  const char *A = xctype(p->acc);
  xsb_printf(s, "typedef %s ACC;\n", A);
  if (b) {
    xsb_printf(s, "static __device__ __forceinline__ ACC ck_map(");
    for (int k = 0; k < p->map->nin; ++k) xsb_printf(s, "%sconst %s in%d", k ? ", " : "", xctype(b->ity[k].dt), k);
    xsb_printf(s, ") {\n");
    gen_return(s, p->map, p->tmap, p->acc, false);
  }
  xsb_printf(s, "static __device__ __forceinline__ ACC ck_red0(const ACC in0, const ACC in1) {\n");
  gen_return(s, p->red, p->tred, p->acc, false);
  bool a_first = !strcmp(p->red->in_names[0], "a");
  xsb_printf(s, "static __device__ __forceinline__ ACC ck_red(const ACC a, const ACC b) { return ck_red0(%s); }\n",
             a_first ? "a, b" : "b, a");
  xsb_printf(s, "static __device__ __forceinline__ %s ck_post(const ACC r, const double n) {\n", xstype(p->odt));
  if (p->post) {
    for (int k = 0; k < p->post->nin; ++k)
      xsb_printf(s, "  const %s in%d = %s;\n", strcmp(p->post->in_names[k], "r") ? "double" : "ACC", k,
                 strcmp(p->post->in_names[k], "r") ? "n" : "r");
    gen_return(s, p->post, p->tpost, p->odt, true);
  } else {
    xsb_printf(s, "  (void)n;\n  const %s res = ", xctype(p->odt));
    xgen_convert(s, "r", p->acc, p->odt);
    xsb_printf(s, ";\n  return ");
    xgen_store(s, "res", p->odt);
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
  xsb_printf(s, "// generated by cukern (src/fused/reduce_map.c) for reduce_map{map = \"%s\", reduce = \"%s\", post = \"%s\"}\n"
                "// layout %s, %d kept dim(s), %d reduced dim(s)\n",
             p->map->text, p->red->text, p->post ? p->post->text : "r", RLAYOUT_NAMES[layout], nk, nr);
  xgen_preamble(s);
  xsb_printf(s, "\n");
  gen_rfuncs(s, p, b);
  xsb_printf(s, "struct CkP {\n  long long nout, len;\n  void *out;\n  void *part;\n  double ident;\n");
  for (int d = 0; d < nk; ++d) xsb_printf(s, "  long long kst_o_%d;\n", d);
  for (int k = 0; k < b->nin; ++k) {
    if (!b->t[k]) {
      xsb_printf(s, "  %s s%d;\n", b->ity[k].dt == CK_I64 ? "long long" : "double", k);
      continue;
    }
    xsb_printf(s, "  const void *i%d;\n", k);
    for (int d = 0; d < nk; ++d) xsb_printf(s, "  long long kst%d_%d;\n", k, d);
    for (int d = 0; d < nr; ++d) xsb_printf(s, "  long long rst%d_%d;\n", k, d);
  }
  for (int d = 0; d < nk; ++d) xsb_printf(s, "  long long ksh%d;\n", d);
  for (int d = 0; d < nr; ++d) xsb_printf(s, "  long long rsh%d;\n", d);
  xsb_printf(s, "};\n");
  /* the element step: acc = red(acc, map(inputs at koff + roff)) for reduced index `r` */
  xsb step = {0};
  xsb_printf(&step, "      long long roff_unused = 0; (void)roff_unused;\n");
  for (int k = 0; k < b->nin; ++k)
    if (b->t[k]) xsb_printf(&step, "      long long roff%d = 0;\n", k);
  gen_decomp(&step, "      ", "r", nr, 'r', g, b, false);
  xsb_printf(&step, "      acc = ck_red(acc, ck_map(");
  for (int k = 0; k < b->nin; ++k) {
    char v[112];
    xsb_printf(&step, "%s", k ? ", " : "");
    if (!b->t[k]) xsb_printf(&step, "p.s%d", k);
    else {
      snprintf(v, sizeof v, "__ldg((const %s *)p.i%d + koff%d + roff%d)", xstype(b->ity[k].dt), k, k, k);
      xgen_load(&step, v, b->ity[k].dt);
    }
  }
  xsb_printf(&step, "));\n");
  const char *OT = xstype(p->odt);
  xsb_printf(s, "extern \"C\" __global__ void __launch_bounds__(256) %s(const CkP p) {\n", entry);
  gen_ident(s, p->acc);
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
  xsb_printf(s, "// generated by cukern (src/fused/reduce_map.c): reduce_map finisher for reduce = \"%s\", post = \"%s\"\n",
             p->red->text, p->post ? p->post->text : "r");
  xgen_preamble(s);
  xsb_printf(s, "\n");
  gen_rfuncs(s, p, NULL);
  xsb_printf(s, "struct CkF { const void *part; long long nparts; double len, ident; void *out; };\n"
                "extern \"C\" __global__ void __launch_bounds__(256) %s(const CkF p) {\n", entry);
  gen_ident(s, p->acc);
  xsb_printf(s, "  ACC acc = ident;\n"
                "  for (long long i = threadIdx.x; i < p.nparts; i += 256) acc = ck_red(acc, ((const ACC *)p.part)[i]);\n"
                "  acc = ck_block_fold(acc, ident);\n"
                "  if (threadIdx.x == 0) *(%s *)p.out = ck_post(acc, p.len);\n}\n",
             xstype(p->odt));
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
  map_append_sig(key, sizeof key, b, NULL);
  char entry[48];
  map_entry_name(entry, sizeof entry, "ck_rmap", key);
  snprintf(rep->entry, sizeof rep->entry, "%s", entry);
  snprintf(rep->layout, sizeof rep->layout, "%s", RLAYOUT_NAMES[layout]);
  rep->ndim = g->k.nd + g->r.nd;
  rep->block = 256;
  xsb src = {0};
  if (!ck_map_cache_has(cache, key) || rep->source_only || rep->want_source) {
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
    map_entry_name(fentry, sizeof fentry, "ck_rfin", fkey);
    if (rep->source_only || rep->want_source || !ck_map_cache_has(cache, fkey))
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
  map_pw_int(&w, nout);
  map_pw_int(&w, len);
  map_pw_ptr(&w, ck_data(out), 'o', 0);
  map_pw_ptr(&w, part, 'w', 0);
  map_pw_dbl(&w, identity);
  for (int d = 0; d < g->k.nd; ++d) map_pw_int(&w, g->k.st[0][d]);
  for (int kk = 0; kk < b->nin; ++kk) {
    if (!b->t[kk]) {
      if (b->ity[kk].dt == CK_I64) map_pw_int(&w, b->inum[kk]);
      else map_pw_dbl(&w, b->num[kk]);
      continue;
    }
    map_pw_ptr(&w, ck_data(b->t[kk]), 'i', kk);
    for (int d = 0; d < g->k.nd; ++d) map_pw_int(&w, g->k.st[g->opk[kk]][d]);
    for (int d = 0; d < g->r.nd; ++d) map_pw_int(&w, g->r.st[g->ropk[kk]][d]);
  }
  for (int d = 0; d < g->k.nd; ++d) map_pw_int(&w, g->k.shape[d]);
  for (int d = 0; d < g->r.nd; ++d) map_pw_int(&w, g->r.shape[d]);
  if (rep->source_only) {
    xsb_free(&src), xsb_free(&fs);
    return CK_OK;
  }
  ck_rtc_kernel *k = NULL, *fin = NULL;
  ck_status st = ck_map_cache_get(ctx, cache, key, src.s, entry, MAP_NVRTC_OPTS, rep, &k);
  xsb_free(&src);
  if (!st) rep->kernel = k;
  if (!st && layout == R_ALL) st = ck_map_cache_get(ctx, cache, fkey, fs.s, fentry, MAP_NVRTC_OPTS, rep, &fin);
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
  ck_status st = map_bind_inputs(ctx, map, in, nin, 1, &b);
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
  if ((st = map_prepare_outputs(ctx, map, &b, 1, &oname, &p.odt, ond, oshape, out))) goto cleanup;
  rgeom g;
  if ((st = rgeom_build(ctx, map, &g, &b, dim, keepdim, out, b.t))) goto cleanup;
  if (b.dev.kind == CK_HOST && !rep->source_only) {
    snprintf(rep->layout, sizeof rep->layout, "host");
    st = host_reduce_map(ctx, &p, &b, &g, out, identity);
  } else {
    if (g.k.numel == 0 && !rep->source_only) goto cleanup;
    st = gpu_reduce_map(ctx, cache, &p, &b, &g, out, identity, rep);
  }
cleanup:
  map_unbind(&b);
  rprog_free(&p);
  return st;
}

