/*
 * coll.c — collectives over arrays on several devices of one process (ck.nccl): the checks, the outputs, the
 * communicator cache, and the three ways to run one: NCCL (rung 0 of the all-reduce ladder), a hand-written rung
 * (kernels/allreduce/), or the host oracle (coll_host.c) for host:N arrays.
 *
 * Why NCCL and not our own engine: it is the library every framework uses, it picks ring or tree per topology,
 * and the same calls run across hosts. The hand-written rungs exist to teach what NCCL does, and are checked
 * against it and against the host in the same specs.
 *
 * Ordering: each device's queued small ops are flushed before its part is enqueued on its stream, and NCCL (or a
 * rung) orders the devices among themselves; nothing synchronises the host (ck_dist_wait does, with a timeout).
 * Every array a collective touches is on its own device and used by that device's stream only, so each caching
 * allocator stays stream-safe; the ladder's scratch is released only after every device has waited for the others.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allreduce/allreduce.h"
#include "ck_dist.h"

// ---------------------------------------------------------------- tables

/* Rows with a supports() (S) are our kernels, launched by ck_allreduce_<name>; the N row is NCCL's (no launcher). */
#define AR_LAUNCH_S(NAME) ck_allreduce_##NAME
#define AR_LAUNCH_N(NAME) NULL
static const ck_ar_rung RUNGS[] = {
#define CK_RUNG(ID, NAME, SUP, DT, FL, RANKS, SUMMARY) {ID, #NAME, SUMMARY, AR_LAUNCH_##SUP(NAME)},
#include "allreduce/rungs.def"
#undef CK_RUNG
};
#define NRUNGS ((int)(sizeof RUNGS / sizeof *RUNGS))
const ck_ar_rung *ck_ar_rungs(int *n) {
  *n = NRUNGS;
  return RUNGS;
}

static const char *const KIND_NAMES[CK_NCOLLS] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"};
const char *ck_coll_kind_name(int kind) { return kind >= 0 && kind < CK_NCOLLS ? KIND_NAMES[kind] : "?"; }

// ---------------------------------------------------------------- communicator cache

#define CK_COMM_CACHE 16
typedef struct {
  int n;
  int dev[CK_MAX_DEVICES];
  ncclComm_t comm[CK_MAX_DEVICES];
} comm_set;

struct ck_dist {
  ck_ctx *ctx;
  comm_set *sets[CK_COMM_CACHE];
  int nsets;
};

ck_dist *ck_dist_new(ck_ctx *ctx) {
  ck_dist *dd = calloc(1, sizeof *dd);
  if (dd) dd->ctx = ctx;
  return dd;
}

static void destroy_set(const ck_nccl_api *api, comm_set *s) {
  for (int i = 0; i < s->n; ++i)
    if (s->comm[i]) {
      cudaSetDevice(s->dev[i]);
      api->CommDestroy(s->comm[i]);
    }
  free(s);
}

void ck_dist_free(ck_dist *dd) {
  if (!dd) return;
  const ck_nccl_api *api = ck_nccl();
  (void)ck_synchronize_all(dd->ctx); /* (no collective may still run on a communicator we destroy) */
  for (int i = 0; i < dd->nsets; ++i) destroy_set(api, dd->sets[i]);
  free(dd);
}

static ck_status nccl_fail(ck_ctx *ctx, const ck_nccl_api *api, ncclResult_t r, const char *what) {
  const char *last = api->GetLastError ? api->GetLastError(NULL) : "";
  return ck_error(ctx, CK_ERR_CUDA, "%s failed: %s%s%s", what, ck_nccl_strerror(r), last && *last ? ": " : "",
                  last ? last : "");
}

/* The communicators of this device list (rank i = devs[i]), made on first use (ncclCommInitAll). */
static ck_status comms_for(ck_dist *dd, const ck_nccl_api *api, const ck_device *devs, int n, comm_set **out) {
  for (int i = 0; i < dd->nsets; ++i) {
    comm_set *s = dd->sets[i];
    bool same = s->n == n;
    for (int k = 0; same && k < n; ++k) same = s->dev[k] == devs[k].index;
    if (same) {
      *out = s;
      return CK_OK;
    }
  }
  comm_set *s = calloc(1, sizeof *s);
  if (!s) return ck_error(dd->ctx, CK_ERR_OOM, "out of host memory (NCCL communicators)");
  s->n = n;
  for (int k = 0; k < n; ++k) s->dev[k] = devs[k].index;
  ncclResult_t r = api->CommInitAll(s->comm, n, s->dev);
  if (r != ncclSuccess) {
    free(s);
    return nccl_fail(dd->ctx, api, r, "ncclCommInitAll");
  }
  if (dd->nsets == CK_COMM_CACHE) { /* the oldest list goes (after its work is done) */
    (void)ck_synchronize_all(dd->ctx);
    destroy_set(api, dd->sets[0]);
    memmove(dd->sets, dd->sets + 1, sizeof *dd->sets * (CK_COMM_CACHE - 1));
    dd->nsets--;
  }
  dd->sets[dd->nsets++] = s;
  *out = s;
  return CK_OK;
}

// ---------------------------------------------------------------- checks and outputs

typedef struct {
  const ck_coll *c;
  ck_device dev[CK_MAX_DEVICES];
  ck_tensor src[CK_MAX_DEVICES]; /* packed inputs (views when already packed) */
  ck_tensor dst[CK_MAX_DEVICES]; /* packed outputs: the caller's out, or a temporary copied back at the end */
  bool tmp_out[CK_MAX_DEVICES];
  int ndim;
  int64_t shape[CK_MAX_DIMS]; /* the output's */
  ck_dtype dt;
} plan;

static bool writes(const ck_coll *c, int i) { return c->kind != CK_COLL_REDUCE || i == c->root; }

static ck_status check(ck_ctx *ctx, plan *p, const char *name) {
  const ck_coll *c = p->c;
  char a[96], b[96];
  if (c->n < 1 || c->n > CK_MAX_DEVICES)
    return ck_error(ctx, CK_ERR_ARG, "give 1 to %d arrays, one per device (got %d)", CK_MAX_DEVICES, c->n);
  if ((c->kind == CK_COLL_BROADCAST || c->kind == CK_COLL_REDUCE) && (c->root < 0 || c->root >= c->n))
    return ck_error(ctx, CK_ERR_ARG, "root %d is not one of the %d arrays (1..%d)", c->root + 1, c->n, c->n);
  if (c->kind != CK_COLL_ALL_GATHER && c->kind != CK_COLL_BROADCAST && (c->op < 0 || c->op >= CK_NCOLL_OPS))
    return ck_error(ctx, CK_ERR_ARG, "unknown op (sum, prod, max, min, avg)");
  const ck_tensor *t0 = c->in[0];
  for (int i = 0; i < c->n; ++i) {
    const ck_tensor *t = c->in[i];
    ck_status st = ck_check_live(ctx, name, t);
    if (st) return st;
    p->dev[i] = ck_dev(t);
    if (t->dtype != t0->dtype || t->ndim != t0->ndim || memcmp(t->shape, t0->shape, sizeof(int64_t) * (size_t)t->ndim))
      return ck_error(ctx, CK_ERR_SHAPE, "every array must have the same dtype and shape: array 1 is %s, array %d is %s",
                      ck_describe(t0, a, sizeof a), i + 1, ck_describe(t, b, sizeof b));
    if (p->dev[i].kind != p->dev[0].kind)
      return ck_error(ctx, CK_ERR_DEVICE, "the arrays must all be on cuda devices or all on host devices (array 1 "
                      "is on %s, array %d on %s)", ck_device_name(p->dev[0]).s, i + 1, ck_device_name(p->dev[i]).s);
    for (int k = 0; k < i; ++k)
      if (ck_dev_eq(p->dev[k], p->dev[i]))
        return ck_error(ctx, CK_ERR_DEVICE, "arrays %d and %d are both on %s; a collective takes one array per device",
                        k + 1, i + 1, ck_device_name(p->dev[i]).s);
  }
  if (c->op == CK_COLL_AVG && c->kind != CK_COLL_ALL_GATHER && c->kind != CK_COLL_BROADCAST && !ck_dtype_is_float(t0->dtype))
    return ck_error(ctx, CK_ERR_DTYPE, "avg needs a float dtype (the arrays are %s); use sum and divide",
                    ck_dtype_name(t0->dtype));
  ck_status st = ck_coll_check_dtype(ctx, t0->dtype);
  if (st) return st;
  p->dt = t0->dtype;
  p->ndim = t0->ndim ? t0->ndim : 1;
  for (int k = 0; k < p->ndim; ++k) p->shape[k] = t0->ndim ? t0->shape[k] : 1;
  if (c->kind == CK_COLL_ALL_GATHER) {
    p->shape[0] *= c->n;
  } else if (c->kind == CK_COLL_REDUCE_SCATTER) {
    if (t0->ndim == 0 || t0->shape[0] % c->n)
      return ck_error(ctx, CK_ERR_SHAPE, "dim 1 (%lld) must be divisible by the number of arrays (%d)",
                      t0->ndim ? (long long)t0->shape[0] : 0LL, c->n);
    p->shape[0] /= c->n;
  } else {
    p->ndim = t0->ndim;
  }
  for (int i = 0; i < c->n; ++i) {
    ck_tensor *o = c->out[i];
    if (!writes(c, i) || !o || !o->st) continue;
    if (!ck_dev_eq(ck_dev(o), p->dev[i]) || o->dtype != p->dt || o->ndim != p->ndim ||
        memcmp(o->shape, p->shape, sizeof(int64_t) * (size_t)p->ndim))
      return ck_error(ctx, CK_ERR_SHAPE, "output %d is %s; it must be %s%s on %s", i + 1,
                      ck_describe(o, a, sizeof a), ck_dtype_name(p->dt), ck_shape_str(p->ndim, p->shape, b, sizeof b),
                      ck_device_name(p->dev[i]).s);
    if ((st = ck_check_writable(ctx, name, o))) return st;
  }
  return CK_OK;
}

bool ck_coll_same_memory(const ck_tensor *x, const ck_tensor *y) {
  return x->st == y->st && x->offset == y->offset && ck_is_contiguous(x) && ck_is_contiguous(y);
}

ck_status ck_coll_check_dtype(ck_ctx *ctx, ck_dtype dt) {
  if ((unsigned)dt < CK_NDTYPES && (CK_DT_COLL & CK_DT_BIT(dt))) return CK_OK;
  return ck_error(ctx, CK_ERR_DTYPE, "dtype %s is not supported (collectives take f32, f64, i32, f16, bf16, u8, i8, "
                  "u32 and i64: the dtypes NCCL has); cast first, a:to(\"i32\")", ck_dtype_name(dt));
}

/* Packed inputs and outputs: an output the caller gave that is not packed, or that overlaps its input without
 * being it exactly, is a temporary copied back at the end. */
static ck_status pack(ck_ctx *ctx, plan *p) {
  const ck_coll *c = p->c;
  ck_status st;
  for (int i = 0; i < c->n; ++i) {
    if ((st = ck_contiguous(ctx, &p->src[i], c->in[i]))) return st;
    if (!writes(c, i)) continue;
    ck_tensor *o = c->out[i];
    if (o && !o->st) {
      if ((st = ck_empty(ctx, o, p->dt, p->ndim, p->shape, p->dev[i]))) return st;
      ck_view_of(&p->dst[i], o);
    } else if (o && ck_is_contiguous(o) && (ck_coll_same_memory(o, &p->src[i]) || !ck_overlaps(o, &p->src[i]))) {
      ck_view_of(&p->dst[i], o);
    } else {
      if ((st = ck_empty(ctx, &p->dst[i], p->dt, p->ndim, p->shape, p->dev[i]))) return st;
      p->tmp_out[i] = o != NULL;
    }
  }
  return CK_OK;
}

static void release_plan(plan *p) {
  for (int i = 0; i < p->c->n; ++i) {
    ck_release(&p->src[i]);
    ck_release(&p->dst[i]);
  }
}

// ---------------------------------------------------------------- CUDA: NCCL

ncclResult_t ck_nccl_call(const ck_nccl_api *api, int kind, const void *s, void *d, size_t count, int nranks,
                          ncclDataType_t dt, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  switch (kind) {
  case CK_COLL_ALL_REDUCE: return api->AllReduce(s, d, count, dt, op, comm, stream);
  case CK_COLL_ALL_GATHER: return api->AllGather(s, d, count, dt, comm, stream);
  case CK_COLL_REDUCE_SCATTER: return api->ReduceScatter(s, d, count / (size_t)nranks, dt, op, comm, stream);
  case CK_COLL_BROADCAST: return api->Broadcast(s, d, count, dt, root, comm, stream);
  default: return api->Reduce(s, d, count, dt, op, root, comm, stream);
  }
}

/* One NCCL collective over the plan's devices, enqueued in one group (ck_submit_multi runs it). */
typedef struct {
  const ck_nccl_api *api;
  const comm_set *cs;
  const plan *p;
  ncclDataType_t ndt;
  ncclRedOp_t nop;
  cudaStream_t streams[CK_MAX_DEVICES];
} nccl_args;

static int nccl_enqueue(const void *arg) {
  const nccl_args *a = (const nccl_args *)arg;
  const ck_nccl_api *api = a->api;
  const ck_coll *c = a->p->c;
  const size_t count = (size_t)ck_numel(&a->p->src[0]);
  ncclResult_t r = api->GroupStart();
  if (r != ncclSuccess) return (int)r;
  for (int i = 0; i < c->n && r == ncclSuccess; ++i) {
    const void *s = ck_data(&a->p->src[i]);
    r = ck_nccl_call(api, c->kind, s, writes(c, i) ? ck_data(&a->p->dst[i]) : (void *)s, count, c->n, a->ndt, a->nop,
                     c->root, a->cs->comm[i], a->streams[i]);
  }
  const ncclResult_t r2 = api->GroupEnd();
  return (int)(r != ncclSuccess ? r : r2);
}

static void describe_nccl(const void *ud, int code, char *buf, size_t n) {
  const nccl_args *a = (const nccl_args *)ud;
  const char *last = a->api->GetLastError ? a->api->GetLastError(NULL) : "";
  snprintf(buf, n, "NCCL %s failed: %s%s%s", ck_coll_kind_name(a->p->c->kind), ck_nccl_strerror((ncclResult_t)code),
           last && *last ? ": " : "", last ? last : "");
}

static ck_status run_nccl(ck_dist *dd, plan *p) {
  ck_ctx *ctx = dd->ctx;
  const ck_coll *c = p->c;
  const ck_nccl_api *api = ck_nccl();
  if (!api->loaded)
    return ck_error(ctx, CK_ERR_UNSUPPORTED, "NCCL is not available (%s); install libnccl2, set CUKERN_NCCL_LIB, or "
                    "run a hand-written rung (variant = \"ring\")", api->why);
  ncclDataType_t ndt;
  ncclRedOp_t nop = ncclSum;
  if (!ck_nccl_dtype(p->dt, &ndt))
    return ck_error(ctx, CK_ERR_DTYPE, "NCCL has no %s (it takes i8, u8, i32, u32, i64, u64, f16, bf16, f32, f64)",
                    ck_dtype_name(p->dt));
  if (c->kind != CK_COLL_ALL_GATHER && c->kind != CK_COLL_BROADCAST && !ck_nccl_redop(c->op, &nop))
    return ck_error(ctx, CK_ERR_UNSUPPORTED, "this NCCL (%d) has no %s", api->version, ck_coll_op_name(c->op));
  comm_set *cs = NULL;
  ck_status st = comms_for(dd, api, p->dev, c->n, &cs);
  if (st) return st;
  nccl_args a = {api, cs, p, ndt, nop, {0}};
  for (int i = 0; i < c->n; ++i)
    if (!(a.streams[i] = (cudaStream_t)ck_device_stream(ctx, p->dev[i]))) return CK_ERR_DEVICE;
  const ck_multi_req req = {.fn = nccl_enqueue, .arg = &a, .devs = p->dev, .n = c->n, .describe = describe_nccl,
                            .describe_ud = &a};
  if ((st = ck_submit_multi(ctx, &req))) return st;
  for (int i = 0; i < c->n; ++i) { /* a failure NCCL already knows of (cheap: no waiting) */
    ncclResult_t ae = ncclSuccess;
    if (api->CommGetAsyncError(cs->comm[i], &ae) == ncclSuccess && ae != ncclSuccess && ae != ncclInProgress)
      return nccl_fail(ctx, api, ae, "NCCL (asynchronous error)");
  }
  return CK_OK;
}

// ---------------------------------------------------------------- CUDA: the hand-written rungs (all_reduce)

/* Every device's stream waits for every other's work so far (the rungs' scratch may then be released). */
static ck_status barrier_all(ck_ctx *ctx, const ck_device *devs, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      ck_status st = i == j ? CK_OK : ck_stream_after(ctx, devs[i], devs[j]);
      if (st) return st;
    }
  return CK_OK;
}

typedef struct {
  const ck_ar_rung *rung;
  const ck_ar_desc *d;
} rung_args;

static int rung_enqueue(const void *arg) {
  const rung_args *a = (const rung_args *)arg;
  return a->rung->fn(a->d);
}

static void describe_rung(const void *ud, int code, char *buf, size_t n) {
  snprintf(buf, n, "all_reduce variant '%s' failed: %s (%s)", ((const ck_ar_rung *)ud)->name,
           cudaGetErrorString((cudaError_t)code), cudaGetErrorName((cudaError_t)code));
}

static ck_status run_rung(ck_dist *dd, plan *p, const ck_ar_rung *rung) {
  ck_ctx *ctx = dd->ctx;
  const ck_coll *c = p->c;
  ck_status st = CK_OK;
  ck_tensor scratch[CK_MAX_DEVICES] = {{0}};
  ck_ar_desc d; /* (2.5 KB of pointers) */
  memset(&d, 0, sizeof d);
  d.n = c->n, d.count = ck_numel(&p->src[0]), d.dtype = p->dt, d.op = c->op;
  /* (asked once without the buffers, with count 0, so that supports() judges the case only: with count > 0 and
   * n > 1 it also wants every buffer, scratch and event, which are set below, and then asked again) */
  d.count = 0;
  const char *why = ck_allreduce_supports(&d);
  d.count = ck_numel(&p->src[0]);
  if (why) return ck_error(ctx, CK_ERR_UNSUPPORTED, "variant '%s': %s", rung->name, why);
  for (int i = 0; i < c->n; ++i)
    for (int j = i + 1; j < c->n; ++j)
      if (!ck_peer_access(ctx, p->dev[i], p->dev[j]))
        return ck_error(ctx, CK_ERR_UNSUPPORTED, "variant '%s' reads peers' memory: %s and %s cannot access each other "
                        "(use variant = \"nccl\")", rung->name, ck_device_name(p->dev[i]).s, ck_device_name(p->dev[j]).s);
  for (int i = 0; i < c->n; ++i) { /* in place on the output: it starts as the input */
    if (!ck_coll_same_memory(&p->dst[i], &p->src[i]) && (st = ck_copy(ctx, &p->dst[i], &p->src[i]))) goto cleanup;
    if ((st = ck_empty(ctx, &scratch[i], p->dt, 1, &d.count, p->dev[i]))) goto cleanup;
    d.device[i] = p->dev[i].index;
    d.stream[i] = ck_device_stream(ctx, p->dev[i]);
    d.event[i] = ck_device_event(ctx, p->dev[i]);
    d.buf[i] = ck_data(&p->dst[i]);
    d.scratch[i] = ck_data(&scratch[i]);
  }
  if ((why = ck_allreduce_supports(&d))) {
    st = ck_error(ctx, CK_ERR_UNSUPPORTED, "variant '%s': %s", rung->name, why);
    goto cleanup;
  }
  const rung_args a = {rung, &d};
  const ck_multi_req req = {.fn = rung_enqueue, .arg = &a, .devs = p->dev, .n = c->n, .describe = describe_rung,
                            .describe_ud = rung};
  if (!(st = ck_submit_multi(ctx, &req))) st = barrier_all(ctx, p->dev, c->n);
cleanup:
  for (int i = 0; i < c->n; ++i) ck_release(&scratch[i]);
  return st;
}

static const ck_ar_rung *find_rung(const char *v) {
  if (!v || !*v) return &RUNGS[0];
  for (int i = 0; i < NRUNGS; ++i) {
    char id[8];
    snprintf(id, sizeof id, "%d", RUNGS[i].id);
    if (!strcmp(v, RUNGS[i].name) || !strcmp(v, id)) return &RUNGS[i];
  }
  return NULL;
}

// ---------------------------------------------------------------- the entry point

ck_status ck_coll_run(ck_dist *dd, const ck_coll *c, ck_ran *ran) {
  ck_ctx *ctx = dd->ctx;
  plan *p = calloc(1, sizeof *p);
  char name[64];
  snprintf(name, sizeof name, "%s", ck_coll_kind_name(c->kind));
  if (!p) return ck_error(ctx, CK_ERR_OOM, "%s: out of host memory", name);
  p->c = c;
  ck_status st = check(ctx, p, name);
  const ck_ar_rung *rung = find_rung(c->variant);
  if (!st && !rung) {
    char list[160] = "";
    for (int i = 0; i < NRUNGS; ++i)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d %s", i ? ", " : "", RUNGS[i].id, RUNGS[i].name);
    st = ck_error(ctx, CK_ERR_ARG, "unknown variant '%s' (the all-reduce ladder has: %s)", c->variant, list);
  }
  if (!st && rung->id != 0 && c->kind != CK_COLL_ALL_REDUCE)
    st = ck_error(ctx, CK_ERR_ARG, "variant '%s' is a rung of the all-reduce ladder; %s runs on NCCL", rung->name, name);
  if (!st) st = pack(ctx, p);
  if (!st) {
    if (ran) memset(ran, 0, sizeof *ran);
    if (p->dev[0].kind == CK_HOST) {
      if (ran) ran->id = -1, snprintf(ran->name, sizeof ran->name, "host");
      if (ran && rung->id != 0) /* (the rungs are CUDA kernels: on host devices the oracle stands for them all) */
        snprintf(ran->note, sizeof ran->note, "asked for '%s': host devices run the host oracle", rung->name);
      ck_coll hc = *c;
      const ck_tensor *hin[CK_MAX_DEVICES];
      ck_tensor *hout[CK_MAX_DEVICES];
      for (int i = 0; i < c->n; ++i) hin[i] = &p->src[i], hout[i] = writes(c, i) ? &p->dst[i] : NULL;
      hc.in = hin, hc.out = hout;
      st = ck_coll_host(ctx, &hc);
    } else {
      if (ran) {
        ran->id = rung->id, ran->gpu = true, ran->library = rung->id == 0;
        snprintf(ran->name, sizeof ran->name, "%s", rung->name);
      }
      st = rung->id == 0 ? run_nccl(dd, p) : run_rung(dd, p, rung);
    }
  }
  for (int i = 0; !st && i < c->n; ++i)
    if (p->tmp_out[i]) st = ck_copy(ctx, c->out[i], &p->dst[i]);
  release_plan(p);
  free(p);
  return st;
}

// ---------------------------------------------------------------- waiting

ck_status ck_dist_wait(ck_dist *dd, const ck_device *devs, int n, double timeout_s) {
  ck_ctx *ctx = dd->ctx;
  const ck_nccl_api *api = ck_nccl();
  ncclComm_t comms[CK_COMM_CACHE * 8];
  int nc = 0;
  cudaStream_t streams[CK_MAX_DEVICES];
  int ords[CK_MAX_DEVICES], ns = 0;
  for (int i = 0; i < (devs ? n : ck_device_count(ctx, CK_CUDA)); ++i) {
    const ck_device d = devs ? devs[i] : ck_device_make(CK_CUDA, i);
    if (d.kind != CK_CUDA) continue;
    ck_status st = ck_use_device(ctx, d);
    if (st || (st = ck_flush(ctx))) return st;
    streams[ns] = (cudaStream_t)ck_device_stream(ctx, d);
    ords[ns++] = d.index;
  }
  if (api->loaded)
    for (int s = 0; s < dd->nsets; ++s)
      for (int i = 0; i < dd->sets[s]->n && nc < (int)(sizeof comms / sizeof *comms); ++i)
        if (dd->sets[s]->comm[i]) comms[nc++] = dd->sets[s]->comm[i];
  if (!ns) return CK_OK;
  if (!api->loaded) { /* no communicator can fail: the hand-written rungs end like any other work */
    for (int i = 0; i < ns; ++i) {
      ck_status st = ck_synchronize_device(ctx, ck_device_make(CK_CUDA, ords[i]));
      if (st) return st;
    }
    return CK_OK;
  }
  char err[512];
  if (ck_nccl_wait(api, comms, nc, streams, ords, ns, timeout_s, err, sizeof err) == 0) return CK_OK;
  /* the communicators were aborted: forget them (the next collective makes new ones) */
  for (int s = 0; s < dd->nsets; ++s) free(dd->sets[s]);
  dd->nsets = 0;
  return ck_error(ctx, CK_ERR_CUDA, "waiting for the devices: %s", err);
}
