/*
 * map_bind.c — the binder of ck.map and ck.reduce_map: the inputs table against the expression (the operand
 * limit, names, dtypes, one device, the broadcast shape), the outputs (allocated in an input's layout, or
 * checked and written through snapshots of the inputs they overlap), the operands' geometry (dims in the first
 * operand's memory order, coalesced), the host's gather/scatter and the kernels' parameter block.
 */
#define _POSIX_C_SOURCE 200809L
#include "map_bind.h"

#include "expr_ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------- inputs and outputs

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
ck_status map_bind_inputs(ck_ctx *ctx, const ck_expr *e, const ck_map_input *in, int nin, int nout, mbind *b) {
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
      if (st || (st = ck_stream_touch(ctx, e->what, t))) return st; /* (streams: the use, the hazard check) */
      if (!ck_xdtype_ok(t->dtype))
        return ck_expr_error_at(ctx, e, CK_ERR_DTYPE, e->in_pos[k],
                                "input '%s' is %s; expressions take the real dtypes (bool u8 i8 i16 i32 u32 i64 f16 bf16 "
                                "f32 f64)%s", e->in_names[k], ck_dtype_name(t->dtype),
                                ck_dtype_is_complex(t->dtype) ? "; take real()/imag() first" : "; convert with :to()");
      if (have_dev && !ck_dev_eq(ck_dev(t), b->dev))
        return ck_error(ctx, CK_ERR_DEVICE, "%s: input '%s' is on %s, others on %s (move it with :to(\"%s\"))", e->what,
                        e->in_names[k], ck_device_name(ck_dev(t)).s, ck_device_name(b->dev).s, ck_device_name(b->dev).s);
      b->dev = ck_dev(t), have_dev = true;
      b->t[k] = t;
      b->ity[k] = (xtype){(signed char)t->dtype, (signed char)t->dtype, 0, 0};
      /* the broadcast shape: the elementwise ops' rule (tensor.c), with a message naming the input */
      if (ck_broadcast_dims(b->nd, b->shape, t->ndim, t->shape, &b->nd, b->shape) >= 0) {
        char s1[96], s2[96];
        return ck_error(ctx, CK_ERR_SHAPE, "%s: input '%s' %s does not broadcast with %s (the other inputs)", e->what,
                        e->in_names[k], ck_shape_str(t->ndim, t->shape, s1, sizeof s1),
                        ck_shape_str(b->nd, b->shape, s2, sizeof s2));
      }
    } else {
      /* a number: a weak i64 when it is an integer (it keeps an integer array's dtype if it is a value of it,
       * the ops' rule: xtype.fits), else a weak f64 */
      const double v = in[f].num;
      b->num[k] = v;
      bool integral = in[f].isint;
      long long iv = in[f].inum;
      if (!integral && v == floor(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0)
        integral = true, iv = (long long)v;
      b->inum[k] = iv;
      b->ity[k] = integral ? (xtype){CK_I64, CK_I64, 1, ck_xfits(iv)} : (xtype){CK_F64, CK_F64, 1, 0};
      /* -0.0: a value of every integer dtype for the ops' rule (i32 + -0.0 stays i32), but a float where it meets
       * a float (f32 + -0.0 keeps a -0 element, as the ops do; as an integer it would be +0) */
      if (v == 0 && signbit(v)) b->ity[k] = (xtype){CK_F64, CK_F64, 1, ck_xfits(0)};
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

void map_unbind(mbind *b) {
  for (int k = 0; k < MAXOPS; ++k) ck_release(&b->snap[k]);
}

/* Outputs: allocate, or check the given ones; inputs that a given output overlaps are snapshotted. */
ck_status map_prepare_outputs(ck_ctx *ctx, const ck_expr *e, mbind *b, int nout, const char *const *names,
                                 const int *odt, int nd, const int64_t *shape, ck_tensor *outs) {
  ck_status st = ck_use_device(ctx, b->dev); /* the inputs' device runs the kernel (its stream and allocator) */
  char s1[96], s2[96];
  if (st) return st;
  for (int i = 0; i < nout; ++i) {
    ck_tensor *o = &outs[i];
    if (!o->st) {
      if ((st = ck_empty_layout(ctx, o, (ck_dtype)odt[i], nd, shape, b->dev, b->like))) return st;
      ck_stream_wrote(ctx, o);
      continue;
    }
    if ((st = ck_check_live(ctx, e->what, o)) || (st = ck_stream_touch(ctx, e->what, o))) return st;
    ck_stream_wrote(ctx, o); /* (the kernel that writes it is issued next, on the same stream) */
    if (o->ndim != nd || memcmp(o->shape, shape, sizeof(int64_t) * (size_t)nd))
      return ck_error(ctx, CK_ERR_SHAPE, "%s: out '%s' is %s, the result is %s", e->what, names[i],
                      ck_shape_str(o->ndim, o->shape, s1, sizeof s1), ck_shape_str(nd, shape, s2, sizeof s2));
    if ((int)o->dtype != odt[i])
      return ck_error(ctx, CK_ERR_DTYPE, "%s: out '%s' is %s but the result is %s (cast in the expression, or pass dtype)",
                      e->what, names[i], ck_dtype_name(o->dtype), ck_dtype_name((ck_dtype)odt[i]));
    if (!ck_dev_eq(ck_dev(o), b->dev))
      return ck_error(ctx, CK_ERR_DEVICE, "%s: out '%s' is on %s, the inputs on %s", e->what, names[i],
                      ck_device_name(ck_dev(o)).s, ck_device_name(b->dev).s);
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

// ---------------------------------------------------------------- geometry

void map_geom_raw(mgeom *g, int nops, int64_t (*st)[CK_MAX_DIMS], int nd, const int64_t *shape, bool order) {
  memset(g, 0, sizeof *g);
  g->nops = nops;
  int64_t *rows[MAXOPS];
  for (int o = 0; o < nops; ++o) rows[o] = g->st[o], memcpy(g->st[o], st[o], sizeof(int64_t) * (size_t)nd);
  memcpy(g->shape, shape, sizeof(int64_t) * (size_t)nd);
  g->numel = 1;
  for (int d = 0; d < nd; ++d) g->numel *= shape[d];
  /* the elementwise ops' order and coalescing (tensor.c), over every operand */
  if (order) ck_sort_dims(nd, g->shape, nops, rows);
  g->nd = ck_coalesce_dims(nd, g->shape, nops, rows, nops);
  for (int d = g->nd; d < nd; ++d) {
    g->shape[d] = 0;
    for (int o = 0; o < nops; ++o) g->st[o][d] = 0;
  }
}

void map_geom_build(mgeom *g, int nops, const ck_tensor *const *ops, int nd, const int64_t *shape, bool order) {
  int64_t st[MAXOPS][CK_MAX_DIMS];
  for (int o = 0; o < nops; ++o) ck_aligned_strides(st[o], nd, ops[o]);
  map_geom_raw(g, nops, st, nd, shape, order);
}

// ---------------------------------------------------------------- host execution

void map_gather(void *dst, const char *base, int64_t st, int n, ck_dtype dt) {
  const size_t es = ck_dtype_size(dt);
  if (es == 1) {
    const uint8_t *s = (const uint8_t *)base;
    uint8_t *d = dst;
    if (dt == CK_BOOL) /* a byte other than 0/1 is true (as the ops read bool) */
      for (int j = 0; j < n; ++j) d[j] = s[j * st] != 0;
    else
      for (int j = 0; j < n; ++j) d[j] = s[j * st];
  } else if (es == 2) {
    const uint16_t *s = (const uint16_t *)base;
    uint16_t *d = dst;
    for (int j = 0; j < n; ++j) d[j] = s[j * st];
  } else if (es == 4) {
    const uint32_t *s = (const uint32_t *)base;
    uint32_t *d = dst;
    for (int j = 0; j < n; ++j) d[j] = s[j * st];
  } else {
    const uint64_t *s = (const uint64_t *)base;
    uint64_t *d = dst;
    for (int j = 0; j < n; ++j) d[j] = s[j * st];
  }
}
void map_scatter(char *base, int64_t st, const void *src, int n, size_t es) {
  if (es == 1) {
    uint8_t *d = (uint8_t *)base;
    const uint8_t *s = src;
    for (int j = 0; j < n; ++j) d[j * st] = s[j];
  } else if (es == 2) {
    uint16_t *d = (uint16_t *)base;
    const uint16_t *s = src;
    for (int j = 0; j < n; ++j) d[j * st] = s[j];
  } else if (es == 4) {
    uint32_t *d = (uint32_t *)base;
    const uint32_t *s = src;
    for (int j = 0; j < n; ++j) d[j * st] = s[j];
  } else {
    uint64_t *d = (uint64_t *)base;
    const uint64_t *s = src;
    for (int j = 0; j < n; ++j) d[j * st] = s[j];
  }
}

void map_fill_numbers(xeval *ev, const mbind *b) {
  for (int k = 0; k < b->nin; ++k) {
    if (b->t[k]) continue;
    if (b->ity[k].dt == CK_I64) {
      long long *o = ev->in_buf[k];
      for (int j = 0; j < XBLK; ++j) o[j] = b->inum[k];
    } else {
      double *o = ev->in_buf[k];
      for (int j = 0; j < XBLK; ++j) o[j] = b->num[k];
    }
  }
}

// ---------------------------------------------------------------- the kernels' parameter block

/* The most slots: ck.map writes n, then per operand a pointer and a stride per dim, then the shape; reduce_map
 * writes 5, the output's kept strides, per input a pointer (or a number) and its strides, then the shapes. */
_Static_assert(1 + CK_MAP_MAX_OPERANDS * (1 + CK_MAX_DIMS) + CK_MAX_DIMS <= CK_MAP_MAX_PARAMS,
               "ck.map's parameter block must fit with the most operands");
_Static_assert(5 + CK_MAX_DIMS + (CK_MAP_MAX_OPERANDS - 1) * (1 + CK_MAX_DIMS) + CK_MAX_DIMS <= CK_MAP_MAX_PARAMS,
               "reduce_map's parameter block must fit with the most operands");
static void map_pw_put(pwriter *w, uint64_t v, char kind, int ref) {
  if (w->n >= CK_MAP_MAX_PARAMS) return; /* cannot happen (above) */
  w->slots[w->n] = v;
  w->rep->pkind[w->n] = kind;
  w->rep->pref[w->n] = ref;
  w->rep->pval[w->n] = v;
  w->rep->nparams = ++w->n;
}
void map_pw_int(pwriter *w, int64_t v) { map_pw_put(w, (uint64_t)v, 'l', 0); }
void map_pw_dbl(pwriter *w, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  map_pw_put(w, u, 'd', 0);
}
void map_pw_ptr(pwriter *w, const void *p, char kind, int ref) { map_pw_put(w, (uint64_t)(uintptr_t)p, kind, ref); }

void map_entry_name(char *buf, size_t n, const char *prefix, const char *key) {
  snprintf(buf, n, "%s_%016llx", prefix, (unsigned long long)ck_rtc_key_hash(key));
}

void map_append_sig(char *key, size_t n, const mbind *b, const bool *bcast) {
  for (int k = 0; k < b->nin; ++k) {
    size_t l = strlen(key);
    /* a number's type depends on which dtypes hold it (xtype.fits): part of the kernel's key */
    snprintf(key + l, n - l, "%c%s%s%x,", b->t[k] ? 'a' : 'n', ck_dtype_name((ck_dtype)b->ity[k].dt),
             bcast && bcast[k] ? "b" : "", b->t[k] ? 0u : (unsigned)b->ity[k].fits);
  }
}
