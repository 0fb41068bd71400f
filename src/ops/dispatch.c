/*
 * dispatch.c — the one dispatcher: ck_run(ctx, call, ran), for every op.
 *
 * A call becomes a plan in this order (each step once, for every op):
 *   1. liveness of every array the call names, and one device for all of them;
 *   2. the op's own checks (def->check: shapes, dims, result dtype, which outputs it writes);
 *   3. the dtype against the registry: the union of the ladder's dtype masks on CUDA, the host oracle's
 *      mask on the host; the requested variant's name or id (unknown ones are errors on both backends);
 *   4. outputs: allocated (following an operand's memory order where the op says so) or checked (device,
 *      dtype, shape, no repeated memory); out and idx must not share memory; an output overlapping an input
 *      goes through a temporary (exact in-place is allowed for ops that read each element before writing it);
 *   5. inputs converted to the compute dtype (promotion) as temporaries;
 *   6. trivial cases (nothing to compute: empty results, empty reductions, k == 0) without a launch;
 *   7. host: the oracle (def->host). CUDA: layout copies needed whatever runs (def->layout(p, NULL)), the
 *      descriptor, ck_pick_variant (requested, else the preference order; supports() decides), the layout
 *      copies the chosen variant asks for, the launch through ck_submit (context.c: runs the queued batch
 *      first unless the variant joins it; errors name op, variant, operands);
 *      the launcher notes the kernels it starts in env.note, kept in `ran` and per ladder row (kinfo.c);
 *   8. temporaries copied back into the caller's outputs; everything released on every path, and outputs
 *      allocated here released again on failure.
 * The op files only contribute a ck_opdef (ck_op.h). Nothing is validated twice: the host oracles and the
 * launchers trust the plan.
 */
#include <stdio.h>
#include <string.h>

#include "ck_op.h"
#include "complex/complex.h"
#include "fft/fft.h"
#include "fp8.h"
#include "lu/lu.h"
#include "ew_ops.h"
#include "reduce_ops.h"

// ---------------------------------------------------------------- names -> ladders

static const ck_opdef *def_of(ck_opkind k) {
  switch (k) {
  case CK_OP_EW: return &ck_opdef_ew;
  case CK_OP_REDUCE: return &ck_opdef_reduce;
  case CK_OP_MATMUL: return &ck_opdef_matmul;
  case CK_OP_TRANSPOSE: return &ck_opdef_transpose;
  case CK_OP_INDEX: return &ck_opdef_index;
  case CK_OP_SCAN: return &ck_opdef_scan;
  case CK_OP_SORT: return &ck_opdef_sort;
  case CK_OP_HIST: return &ck_opdef_hist;
  case CK_OP_SEARCH: return &ck_opdef_search;
  case CK_OP_FFT: return &ck_opdef_fft;
  case CK_OP_ROWS: return &ck_opdef_rows;
  case CK_OP_ATTN: return &ck_opdef_attn;
  case CK_OP_COMPLEX: return &ck_opdef_complex;
  default: return NULL;
  }
}

const ck_variant *ck_variants(const char *name, int *count) {
  static const struct {
    const char *alias, *ladder;
  } ALIASES[] = {{"gemm", "matmul"}, {"map", "elementwise"}, {"zip", "elementwise"}, {"contiguous", "transpose"}};
  for (size_t i = 0; i < sizeof ALIASES / sizeof *ALIASES; ++i)
    if (strcmp(name, ALIASES[i].alias) == 0) name = ALIASES[i].ladder;
  if (ck_ew_op_parse(name) >= 0) name = ck_opdef_ew.ladder; /* every elementwise op shares one ladder */
  if (ck_reduce_op_parse(name) >= 0) name = ck_opdef_reduce.ladder;
  if (ck_scan_op_parse(name) >= 0) name = ck_opdef_scan.ladder; /* cumsum, cumprod, cummax, cummin */
  if (strcmp(name, "argsort") == 0 || strcmp(name, "topk") == 0) name = ck_opdef_sort.ladder;
  if (strcmp(name, "histc") == 0 || strcmp(name, "histogram") == 0) name = ck_opdef_hist.ladder;
  static const char *const FFT_NAMES[] = {"ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn"};
  for (size_t i = 0; i < sizeof FFT_NAMES / sizeof *FFT_NAMES; ++i)
    if (strcmp(name, FFT_NAMES[i]) == 0) name = ck_opdef_fft.ladder;
  if (ck_rows_fn_parse(name) >= 0) name = ck_opdef_rows.ladder; /* softmax, log_softmax, layer_norm, rms_norm */
  for (int k = 0; k < CK_NOPKINDS; ++k) {
    const ck_opdef *d = def_of((ck_opkind)k);
    if (strcmp(name, d->ladder) == 0) {
      *count = *d->ntab;
      return d->tab;
    }
  }
  if (strcmp(name, "lu") == 0) { /* the LU ladder (issue 34): run by the linalg layer, not by ck_run */
    *count = ck_lu_nvariants;
    return ck_lu_variants;
  }
  *count = 0;
  return NULL;
}

bool ck_variant_last(ck_ctx *ctx, const ck_variant *tab, int row, ck_launch_note *kernels, bool *library) {
  for (int k = 0; k < CK_NOPKINDS; ++k) {
    const ck_opdef *d = def_of((ck_opkind)k);
    if (d->tab == tab && row >= 0 && row < *d->ntab) return ck_seen_get(ctx, k, row, kernels, library);
  }
  return false;
}

// ---------------------------------------------------------------- helpers

char *ck_plan_operands(const ck_plan *p, char *buf, size_t n) {
  char d[128];
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < CK_MAX_IN && k < n; ++i) {
    const ck_tensor *t = i == 0 ? p->call->a : i == 1 ? p->call->b : p->call->c;
    if (t) k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? ", " : "", ck_describe(t, d, sizeof d));
    else if (i == 1 && p->call->kind == CK_OP_EW && p->nin == 2)
      k += (size_t)snprintf(buf + k, n - k, "%s%.17g", k ? ", " : "", p->call->s1);
  }
  if (k < n && p->call->out && p->call->out->st)
    snprintf(buf + k, n - k, " -> %s", ck_describe(p->call->out, d, sizeof d));
  return buf;
}

/* With batching off (ck.batching(false), CUKERN_SYNC, a graph capture) the defaults launch op by op: a
 * `batched` variant heading the order is skipped (asked for by name, it runs its one record at once). */
const int *ck_active_order(ck_ctx *ctx, const ck_variant *tab, int n, const int *order) {
  if (order[0] < 0 || ck_batch_active(ctx)) return order;
  for (int i = 0; i < n; ++i)
    if (tab[i].id == order[0]) return (tab[i].flags & CK_VF_BATCHED) ? order + 1 : order;
  return order;
}

static unsigned cuda_dtypes(const ck_opdef *def) {
  unsigned m = 0;
  for (int i = 0; i < *def->ntab; ++i) m |= def->tab[i].dtypes;
  return m;
}

static char *dtype_list(unsigned mask, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  for (int d = 0; d < CK_NDTYPES && k < n; ++d)
    if (mask & CK_DT_BIT(d)) k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? ", " : "", ck_dtype_name((ck_dtype)d));
  return buf;
}

static char *variant_list(const ck_opdef *def, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < *def->ntab && k < n; ++i)
    k += (size_t)snprintf(buf + k, n - k, "%s%d %s", k ? ", " : "", def->tab[i].id, def->tab[i].name);
  return buf;
}

static void set_host_ran(ck_ran *ran, const ck_variant *req) {
  if (!ran) return;
  ran->id = -1;
  memcpy(ran->name, "host", 5);
  ran->note[0] = 0;
  if (req) snprintf(ran->note, sizeof ran->note, "asked for '%s': host arrays run the host reference", req->name);
}

/* Allocate (t->st == NULL) or check one output. */
static ck_status prepare_output(ck_ctx *ctx, ck_plan *p, ck_tensor *t, ck_dtype dt, const char *what, bool *alloc) {
  char d[128], s1[96], ops[400];
  ck_status st;
  *alloc = false;
  if (!t->st) {
    if ((st = ck_empty_layout(ctx, t, dt, p->nd, p->shape, p->dev, p->like)))
      return ck_error_prefix(ctx, st, "%s", p->name);
    *alloc = true;
    return CK_OK;
  }
  if (t->dtype != dt)
    return ck_error(ctx, CK_ERR_DTYPE, "%s: %s is %s but the result is %s (%s %s; operands %s)", p->name, what,
                    ck_dtype_name(t->dtype), ck_dtype_name(dt), what, ck_describe(t, d, sizeof d),
                    ck_plan_operands(p, ops, sizeof ops));
  const bool same = t->ndim == p->nd && memcmp(t->shape, p->shape, sizeof(int64_t) * (size_t)p->nd) == 0;
  if (!same && !(p->def->out_shape_ok && p->def->out_shape_ok(p, t))) {
    char s0[96];
    return ck_error(ctx, CK_ERR_SHAPE, "%s: %s has shape %s but the result is %s (%s %s; operands %s)", p->name, what,
                    ck_shape_str(t->ndim, t->shape, s0, sizeof s0), ck_shape_str(p->nd, p->shape, s1, sizeof s1), what,
                    ck_describe(t, d, sizeof d), ck_plan_operands(p, ops, sizeof ops));
  }
  return ck_check_writable(ctx, p->name, t);
}

/* A contiguous temporary standing in for an output (its old values copied in when the work reads them). */
static ck_status temp_output(ck_ctx *ctx, ck_plan *p, ck_tensor **slot, ck_tensor *tmp, bool copy_in) {
  ck_status st;
  if (*slot == tmp) return CK_OK;
  ck_tensor *given = *slot;
  if ((st = ck_empty(ctx, tmp, given->dtype, given->ndim, given->shape, p->dev))) return st;
  if (copy_in && (st = ck_copy(ctx, tmp, given))) return st;
  *slot = tmp;
  return CK_OK;
}

/* Apply layout needs: contiguous copies of inputs, contiguous temporaries for outputs. */
static ck_status apply_layout(ck_ctx *ctx, ck_plan *p, unsigned need) {
  ck_status st;
  static const unsigned NEED_IN[CK_MAX_IN] = {CK_NEED_A, CK_NEED_B, CK_NEED_C};
  for (int i = 0; i < p->nin; ++i)
    if ((need & NEED_IN[i]) && !ck_is_contiguous(p->in[i])) {
      ck_tensor c = {0};
      if ((st = ck_contiguous(ctx, &c, p->in[i]))) return st;
      ck_release(&p->tin[i]);
      p->tin[i] = c;
      p->in[i] = &p->tin[i];
    }
  if ((need & CK_NEED_OUT) && p->out && !ck_is_contiguous(p->out) &&
      (st = temp_output(ctx, p, &p->out, &p->tout, p->out_reads)))
    return st;
  if ((need & CK_NEED_IDX) && p->idx && !ck_is_contiguous(p->idx) && (st = temp_output(ctx, p, &p->idx, &p->tidx, false)))
    return st;
  return CK_OK;
}

// ---------------------------------------------------------------- ck_run

/* The host backend is the oracle and the laptop backend, not a supercomputer: work that would run for many
 * minutes on one core (and that nothing could interrupt) is refused with the limit in the message.
 * CK_HOST_MAX_ELEMS elements touched by one op (inputs and outputs, broadcast included), and
 * CK_HOST_MAX_MACS multiply-adds for matmul: about a minute or two on one core. */
#define CK_HOST_MAX_ELEMS ((int64_t)1 << 33)
#define CK_HOST_MAX_MACS ((int64_t)1 << 38)
static ck_status host_work_ok(ck_ctx *ctx, const ck_plan *p) {
  char ops[400];
  int64_t elems = ck_numel(p->out ? p->out : p->idx);
  for (int i = 0; i < p->nin; ++i)
    if (ck_numel(p->in[i]) > elems) elems = ck_numel(p->in[i]);
  if (elems > CK_HOST_MAX_ELEMS)
    return ck_error(ctx, CK_ERR_UNSUPPORTED, "%s: %lld elements is past the host backend's limit of 2^33 per op (it "
                    "would run for many minutes on one core) [%s]; use a GPU array or split the work", p->name,
                    (long long)elems, ck_plan_operands(p, ops, sizeof ops));
  if (p->call->kind == CK_OP_MATMUL) {
    const ck_tensor *a = p->in[0], *b = p->in[1];
    const double macs = (double)(p->nd == 3 ? p->shape[0] : 1) * (double)a->shape[a->ndim - 2] *
                        (double)a->shape[a->ndim - 1] * (double)b->shape[b->ndim - 1];
    if (macs > (double)CK_HOST_MAX_MACS)
      return ck_error(ctx, CK_ERR_UNSUPPORTED, "matmul: %.3g multiply-adds is past the host backend's limit of 2^38 "
                      "per op (minutes on one core) [%s]; use GPU arrays", macs, ck_plan_operands(p, ops, sizeof ops));
  }
  return CK_OK;
}

/* Names a launch in an error (op, variant, operands): formatted only when ck_submit raises one. */
typedef struct {
  const ck_plan *p;
  const ck_variant *v;
} launch_what;

static void describe_launch(const void *ud, char *buf, size_t n) {
  const launch_what *w = (const launch_what *)ud;
  char ops[400];
  if (w->p->def->what) w->p->def->what(w->p, w->v, buf, n);
  else snprintf(buf, n, "%s (%s) %s", w->p->name, w->v->name, ck_plan_operands(w->p, ops, sizeof ops));
}

static ck_status plan_and_run(ck_ctx *ctx, ck_plan *p, ck_ran *ran) {
  const ck_call *c = p->call;
  const ck_opdef *def = p->def;
  char buf[512], ops[400];
  ck_status st;

  /* 1. liveness, one device */
  const ck_tensor *named[6] = {c->a, c->b, c->c, c->out && c->out->st ? c->out : NULL, c->idx && c->idx->st ? c->idx : NULL,
                               c->ix};
  const ck_tensor *first = NULL;
  const int nnamed = (int)(sizeof named / sizeof *named);
  for (int i = 0; i < nnamed; ++i) {
    if (!named[i]) continue;
    if ((st = ck_check_live(ctx, p->name, named[i]))) return st;
    if (!first) first = named[i];
    else if (!ck_dev_eq(ck_dev(named[i]), ck_dev(first)))
      return ck_error(ctx, CK_ERR_DEVICE, "%s: operands are on different devices (%s); cukern does not copy "
                      "implicitly: move one with :to(\"%s\")",
                      p->name, ck_plan_operands(p, ops, sizeof ops), ck_device_name(ck_dev(first)).s);
  }
  if (!first) return ck_error(ctx, CK_ERR_ARG, "%s: no operand and no output array given", p->name);
  p->dev = ck_dev(first);
  /* every operand's own dtype is one the op takes (not only the promoted one: an f32 result of an FP8 or complex
   * operand and a number would pass below); complex arrays take the fused complex ops (op_complex.c) */
  const unsigned takes = def->host_dtypes | cuda_dtypes(def); /* (which device takes which: step 3) */
  for (int i = 0; i < nnamed; ++i)
    if (named[i] && !(takes & CK_DT_BIT(named[i]->dtype)))
      return ck_error(ctx, CK_ERR_DTYPE, "%s: dtype %s is not supported (the %s ladder takes %s) [%s]%s", p->name,
                      ck_dtype_name(named[i]->dtype), def->ladder, dtype_list(takes, ops, sizeof ops),
                      ck_describe(named[i], buf, sizeof buf), ck_dtype_is_complex(named[i]->dtype) ? " (complex arrays take the ops of docs/api.md, Complex "
                      "numbers)" : (CK_DT_FP8 & CK_DT_BIT(named[i]->dtype))
                      ? " (FP8 arrays are storage for the FP8 matmul: cast them, a:to(\"f32\"))" : "");
  /* the operands' device is current from here on: its stream, allocator and queue run everything below */
  if ((st = ck_use_device(ctx, p->dev))) return ck_error_prefix(ctx, st, "%s", p->name);
  if (ck_capturing(ctx)) { /* a graph records device work only, and must keep what it reads and writes */
    if (p->dev.kind == CK_HOST)
      return ck_error(ctx, CK_ERR_DEVICE, "%s: host arrays cannot be recorded in a graph (%s); use cuda arrays",
                      p->name, ck_plan_operands(p, ops, sizeof ops));
    for (int i = 0; i < nnamed; ++i) ck_graph_keep_tensor(ctx, named[i]);
  }
  /* the streams that use each array (the allocator's record), the hazard check, and pinned host memory that an
   * asynchronous copy is still writing */
  for (int i = 0; i < nnamed; ++i)
    if (named[i] && ((st = ck_stream_touch(ctx, p->name, named[i])) || (st = ck_stream_host_ready(ctx, named[i]))))
      return st;
  for (int i = 0; i < c->nlist; ++i)
    if ((st = ck_stream_touch(ctx, p->name, c->list[i]))) return st;

  /* 2. the op's own checks */
  if ((st = def->check(ctx, p))) return st;

  /* 3. dtype against the registry (host: the oracle's mask); the requested variant */
  const unsigned mask = p->dev.kind == CK_HOST ? def->host_dtypes : cuda_dtypes(def);
  for (int i = 0; i < 2; ++i) {
    const ck_dtype dt = i == 0 ? p->in_dt : p->dt;
    if (!(mask & CK_DT_BIT(dt))) {
      if (p->dev.kind == CK_CUDA && (def->host_dtypes & CK_DT_BIT(dt)))
        return ck_error(ctx, CK_ERR_DTYPE, "%s: %s runs on the host only (no %s variant takes it; cuda takes %s) [%s]; "
                        "use :host()", p->name, ck_dtype_name(dt), def->ladder, dtype_list(mask, buf, sizeof buf),
                        ck_plan_operands(p, ops, sizeof ops));
      return ck_error(ctx, CK_ERR_DTYPE, "%s: dtype %s is not supported (%s takes %s) [%s]%s", p->name, ck_dtype_name(dt),
                      p->dev.kind == CK_HOST ? "the host backend" : "cuda", dtype_list(mask, buf, sizeof buf),
                      ck_plan_operands(p, ops, sizeof ops),
                      (CK_DT_STORAGE & CK_DT_BIT(dt)) ? "; it is a storage dtype for now: cast first, a:to(\"f32\")" : "");
    }
  }
  if (c->variant && *c->variant) {
    p->req = ck_find_variant(def->tab, *def->ntab, c->variant);
    if (!p->req)
      return ck_error(ctx, CK_ERR_ARG, "%s: unknown variant '%s' (%s has: %s)", p->name, c->variant, def->ladder,
                      variant_list(def, buf, sizeof buf));
  }

  /* 4. outputs: allocate or check; overlaps go through temporaries */
  p->out = p->has_out ? c->out : NULL;
  p->idx = p->has_idx ? c->idx : NULL;
  if (p->has_out && !p->out) return ck_error(ctx, CK_ERR_ARG, "%s: no output array given for the values", p->name);
  if (p->has_idx && !p->idx) return ck_error(ctx, CK_ERR_ARG, "%s: no output array given for the indices", p->name);
  if (p->out && (st = prepare_output(ctx, p, p->out, p->dt, "out", &p->out_alloc))) return st;
  if (p->out_alloc) p->beta = 0.0, p->out_reads = false; /* fresh memory: nothing to scale or read */
  if (p->idx && (st = prepare_output(ctx, p, p->idx, p->idx_dt, "idx", &p->idx_alloc))) return st;
  if (p->out && p->idx && ck_overlaps(p->out, p->idx))
    return ck_error(ctx, CK_ERR_ARG, "%s: out and idx share memory; give them separate arrays", p->name);
  if (p->out && !p->out_alloc && c->ix && ck_overlaps(p->out, c->ix) && (st = temp_output(ctx, p, &p->out, &p->tout, p->out_reads)))
    return st; /* an index array or mask the op writes over */
  for (int i = 0; i < p->nin; ++i) {
    /* exact in place is fine for ops that read each element before the same thread writes it */
    const bool clash = p->out && !p->out_alloc &&
                       (def->inplace_ok || p->inplace_ok ? ck_unsafe_alias(p->out, p->in[i]) : ck_overlaps(p->out, p->in[i]));
    if (clash && (st = temp_output(ctx, p, &p->out, &p->tout, p->out_reads)))
      return st;
    if (p->idx && !p->idx_alloc && ck_overlaps(p->idx, p->in[i]) && (st = temp_output(ctx, p, &p->idx, &p->tidx, false)))
      return st;
  }

  /* 5. inputs in the compute dtype */
  for (int i = 0; i < p->nin; ++i)
    if (p->in[i]->dtype != p->in_dt && !p->keep_in_dtypes) {
      if ((st = ck_to(ctx, &p->tin[i], p->in[i], p->dev, p->in_dt))) return st;
      p->in[i] = &p->tin[i];
    }

  /* 6. nothing to compute: an empty result, or the op's trivial case (which writes the result itself) */
  char note[sizeof ran->note] = "empty result: nothing launched";
  bool done = ck_numel(p->out ? p->out : p->idx) == 0;
  if (!done && def->trivial && (st = def->trivial(ctx, p, &done, note, sizeof note))) return st;

  /* 7. the host oracle, or a variant */
  if (p->dev.kind == CK_HOST) {
    set_host_ran(ran, p->req);
    if (!done && (st = host_work_ok(ctx, p))) return st;
    if (!done && (st = def->host(ctx, p))) return st;
  } else {
    union {
      ck_mm_desc mm;
      ck_red_desc red;
      ck_tr_desc tr;
      ck_ew_desc ew;
      ck_ix_desc ix;
      ck_scan_desc scan;
      ck_sort_desc sort;
      ck_hist_desc hist;
      ck_search_desc search;
      ck_fft_desc fft;
      ck_rows_desc rows;
      ck_attn_desc attn;
      ck_cx_desc cx;
    } desc;
    if (!done && def->layout && (st = apply_layout(ctx, p, def->layout(p, NULL)))) return st;
    def->describe(p, &desc);
    const int *order = def->preferred_for ? def->preferred_for(&desc) : def->preferred;
    order = ck_active_order(ctx, def->tab, *def->ntab, order);
    const ck_variant *v = ck_pick_variant(ctx, p->name, def->tab, *def->ntab, c->variant, order, p->in_dt, &desc, ran);
    if (done) { /* say which variant would have run, and why nothing did (after any fallback note) */
      if (!v && ran) ran->id = -1, memcpy(ran->name, "none", 5), ran->note[0] = 0;
      if (ran) {
        const size_t k = strlen(ran->note);
        snprintf(ran->note + k, sizeof ran->note - k, "%s%s", k ? "; " : "", note);
      }
    } else {
      if (!v) return ck_error_prefix(ctx, CK_ERR_UNSUPPORTED, "%s", ck_plan_operands(p, ops, sizeof ops));
      const unsigned need = def->layout ? def->layout(p, v) : 0;
      if (need) {
        if ((st = apply_layout(ctx, p, need))) return st;
        def->describe(p, &desc);
      }
      ck_launch_note launched = {0};
      const launch_what w = {p, v};
      const ck_launch_req r = {.fn = v->launch, .arg = &desc, .joins_batch = (v->flags & CK_VF_BATCHED) != 0,
                               .note = &launched, .describe = describe_launch, .describe_ud = &w};
      if ((st = ck_submit(ctx, &r))) return st;
      /* what ran, for ck.last_ran() and this row of ck.variants() */
      if (ran) ran->gpu = true, ran->library = v->id == 0, ran->kernels = launched;
      ck_seen_record(ctx, c->kind, *def->ntab, (int)(v - def->tab), v->id == 0, &launched);
      if (def->after && (st = def->after(ctx, p))) return st;
    }
  }

  /* 8. temporaries back into the caller's outputs */
  if (p->out && p->out != c->out && (st = ck_copy(ctx, c->out, p->out))) return st;
  if (p->idx && p->idx != c->idx && (st = ck_copy(ctx, c->idx, p->idx))) return st;
  if (p->out) ck_stream_wrote(ctx, c->out);
  if (p->idx) ck_stream_wrote(ctx, c->idx);
  return CK_OK;
}

const char *ck_op_name(const ck_call *call) {
  const ck_opdef *def = def_of(call->kind);
  const char *fn_name = call->kind == CK_OP_EW ? ck_ew_op_name(call->fn) : call->kind == CK_OP_REDUCE ? ck_reduce_op_name(call->fn)
                        : call->kind == CK_OP_SCAN ? ck_scan_op_name(call->fn)
                        : call->kind == CK_OP_ROWS ? ck_rows_fn_name(call->fn)
                        : call->kind == CK_OP_COMPLEX ? ck_cx_fn_name(call->fn) : NULL;
  return fn_name ? fn_name : def ? def->ladder : NULL;
}

ck_status ck_run(ck_ctx *ctx, const ck_call *call, ck_ran *ran) {
  ck_plan p;
  memset(&p, 0, sizeof p);
  p.call = call;
  p.def = def_of(call->kind);
  if (!p.def) return ck_error(ctx, CK_ERR_ARG, "ck_run: unknown op kind %d", (int)call->kind);
  p.name = ck_op_name(call); /* the op's own name in every message, from the first check on */
  p.dim = call->dim;
  p.idx_dt = CK_I64; /* every index output is 1-based i64 (issue 32) */
  p.beta = call->beta;
  if (ran) ran->gpu = ran->library = false, ran->kernels.n = 0; /* set again when a launcher runs */
  const ck_status st = plan_and_run(ctx, &p, ran);
  for (int i = 0; i < CK_MAX_IN; ++i) ck_release(&p.tin[i]);
  ck_release(&p.tout);
  ck_release(&p.tidx);
  ck_release(&p.tflag);
  if (st) {
    if (p.out_alloc) ck_release(call->out);
    if (p.idx_alloc) ck_release(call->idx);
  }
  return st;
}

// ---------------------------------------------------------------- host oracles on descriptors

/* *t, or a contiguous temporary of its dtype and shape in tmp when *t is a view (NULL stays NULL). */
static ck_status contiguous_temp(ck_ctx *ctx, ck_tensor **t, ck_tensor *tmp) {
  if (!*t || ck_is_contiguous(*t)) return CK_OK;
  const ck_status st = ck_empty(ctx, tmp, (*t)->dtype, (*t)->ndim, (*t)->shape, ck_dev(*t));
  if (!st) *t = tmp;
  return st;
}

ck_status ck_host_contiguous(ck_ctx *ctx, ck_plan *p, ck_status (*oracle)(ck_ctx *ctx, const ck_plan *q)) {
  ck_tensor cx[CK_MAX_IN], co = {0}, ci = {0};
  memset(cx, 0, sizeof cx);
  ck_plan q = *p;
  ck_status st = CK_OK;
  for (int i = 0; i < p->nin; ++i)
    if (!ck_is_contiguous(q.in[i])) {
      if ((st = ck_contiguous(ctx, &cx[i], q.in[i]))) goto done;
      q.in[i] = &cx[i];
    }
  if ((st = contiguous_temp(ctx, &q.out, &co)) || (st = contiguous_temp(ctx, &q.idx, &ci))) goto done;
  if ((st = oracle(ctx, &q))) goto done;
  if (q.out != p->out && (st = ck_copy(ctx, p->out, q.out))) goto done;
  if (q.idx != p->idx) st = ck_copy(ctx, p->idx, q.idx);
done:
  for (int i = 0; i < CK_MAX_IN; ++i) ck_release(&cx[i]);
  ck_release(&co);
  ck_release(&ci);
  return st;
}

// ---------------------------------------------------------------- shorthands

ck_status ck_matmul(ck_ctx *ctx, ck_tensor *c, const ck_tensor *a, const ck_tensor *b, double alpha, double beta,
                    const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_MATMUL, .a = a, .b = b, .out = c, .alpha = alpha, .beta = beta, .variant = variant};
  return ck_run(ctx, &call, ran);
}

ck_status ck_reduce(ck_ctx *ctx, int op, ck_tensor *out, ck_tensor *idx, const ck_tensor *x, int dim, bool keepdim,
                    const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_REDUCE, .fn = op, .a = x, .out = out, .idx = idx, .dim = dim,
                        .keepdim = keepdim, .variant = variant};
  return ck_run(ctx, &call, ran);
}

ck_status ck_transpose(ck_ctx *ctx, ck_tensor *out, const ck_tensor *x, const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_TRANSPOSE, .a = x, .out = out, .variant = variant};
  return ck_run(ctx, &call, ran);
}

ck_status ck_ew_unary(ck_ctx *ctx, int op, ck_tensor *out, const ck_tensor *a, double s1, double s2,
                      const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_EW, .fn = op, .a = a, .out = out, .s1 = s1, .s2 = s2, .variant = variant};
  return ck_run(ctx, &call, ran);
}

ck_status ck_ew_binary(ck_ctx *ctx, int op, ck_tensor *out, const ck_tensor *a, const ck_tensor *b,
                       const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_EW, .fn = op, .a = a, .b = b, .out = out, .variant = variant};
  return ck_run(ctx, &call, ran);
}

ck_status ck_ew_binary_scalar(ck_ctx *ctx, int op, ck_tensor *out, const ck_tensor *a, double s, bool scalar_left,
                              const char *variant, ck_ran *ran) {
  const ck_call call = {.kind = CK_OP_EW, .fn = op, .a = a, .out = out, .s1 = s, .scalar_left = scalar_left,
                        .variant = variant};
  return ck_run(ctx, &call, ran);
}

/* A fill of a complex array with a real number: its real parts get v, its imaginary parts 0 (as its pairs). */
static ck_status complex_fill(ck_ctx *ctx, ck_tensor *out, double v) {
  ck_status st;
  ck_tensor pairs = {0}, part = {0};
  if (!(st = ck_pair_view(ctx, &pairs, out)) && !(st = ck_view_select(ctx, &part, &pairs, pairs.ndim - 1, 0)) &&
      !(st = ck_ew_generate(ctx, CK_EW_FILL, &part, v, 0))) {
    ck_release(&part);
    if (!(st = ck_view_select(ctx, &part, &pairs, pairs.ndim - 1, 1))) st = ck_ew_generate(ctx, CK_EW_FILL, &part, 0, 0);
  }
  ck_release(&pairs);
  ck_release(&part);
  return st;
}

/* A fill of an FP8 array: its bytes get the value's encoding (kernels/fp8.h, saturated). */
static ck_status fp8_fill(ck_ctx *ctx, ck_tensor *out, double v) {
  ck_tensor bytes = {0};
  ck_status st = ck_byte_view(ctx, &bytes, out);
  if (!st) st = ck_ew_fill_int(ctx, &bytes, out->dtype == CK_E4M3 ? ck_f64_to_e4m3(v) : ck_f64_to_e5m2(v));
  ck_release(&bytes);
  return st;
}

ck_status ck_ew_generate(ck_ctx *ctx, int op, ck_tensor *out, double s1, double s2) {
  if (op == CK_EW_FILL && out && ck_dtype_is_complex(out->dtype)) return complex_fill(ctx, out, s1);
  if (op == CK_EW_FILL && out && (CK_DT_FP8 & CK_DT_BIT(out->dtype))) return fp8_fill(ctx, out, s1);
  const ck_call call = {.kind = CK_OP_EW, .fn = op, .out = out, .s1 = s1, .s2 = s2};
  return ck_run(ctx, &call, NULL);
}

ck_status ck_ew_fill_int(ck_ctx *ctx, ck_tensor *out, int64_t v) {
  if (out && ck_dtype_is_complex(out->dtype)) return complex_fill(ctx, out, (double)v);
  if (out && (CK_DT_FP8 & CK_DT_BIT(out->dtype))) return fp8_fill(ctx, out, (double)v);
  const ck_call call = {.kind = CK_OP_EW, .fn = CK_EW_FILL, .out = out, .s1 = (double)v, .si = v, .s_int = true};
  return ck_run(ctx, &call, NULL);
}
