/*
 * pcomm.c — several processes, one device each (ck.dist): the rendezvous, and the collectives of one rank.
 *
 * Rendezvous: rank, world size and the store's url come from the environment (CUKERN_RANK / CUKERN_WORLD_SIZE /
 * CUKERN_STORE, or Open MPI's and PMI's variables: dist_env.c) or from the caller; the store (store.c: a shared
 * directory, or TCP served by rank 0) carries NCCL's unique id from rank 0 to the others. The same url works across
 * hosts (tcp://<rank 0's host>:port; NCCL then runs over the network), which is all it takes to outgrow one host.
 *
 * CUDA: NCCL's communicator, one rank per process. A collective waits for its device by default, polling NCCL's
 * asynchronous errors with the communicator's timeout, so that a rank that never arrives is an error that names
 * the wait, not a hang (ck_nccl_wait aborts the communicator). Host: the values go through the store and every
 * rank combines every rank's values in rank order (coll_host.c), so all ranks get identical results.
 *
 * Checked mode (CUKERN_DIST_CHECK=1 or {checked = true}): before each collective, the ranks agree through the store
 * on its signature (kind, dtype, shape, op, root); ranks that disagree on the order of collectives get an error
 * naming the collective of each, instead of a hang or a silent mix-up.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_dist.h"

struct ck_pcomm {
  ck_ctx *ctx;
  int rank, world, local;
  ck_device dev;
  ck_store *store;
  ncclComm_t comm; /* NULL on the host, or once aborted */
  bool nccl, checked;
  double timeout;
  uint64_t seq; /* collectives so far: every rank counts the same */
  /* this rank's values still in the store (store path): removed two steps later, when every other rank has read
   * them (a rank at step seq has seen every rank reach step seq - 1, which it starts only after reading seq - 2's) */
  uint64_t own_seq[2];
  size_t own_chunks[2];
  int nown;
};

int ck_pcomm_rank(const ck_pcomm *pc) { return pc->rank; }
int ck_pcomm_world(const ck_pcomm *pc) { return pc->world; }
ck_device ck_pcomm_device(const ck_pcomm *pc) { return pc->dev; }
const char *ck_pcomm_backend(const ck_pcomm *pc) { return pc->nccl ? "nccl" : "store"; }

/* A positive number from the environment, else dflt. */
static double env_double(const char *name, double dflt) {
  const char *s = getenv(name);
  char *end = NULL;
  double v = s && *s ? strtod(s, &end) : 0;
  return s && *s && end && !*end && v > 0 ? v : dflt;
}

void ck_pcomm_free(ck_pcomm *pc) {
  if (!pc) return;
  if (pc->comm) {
    const ck_nccl_api *api = ck_nccl();
    if (!ck_synchronize_device(pc->ctx, pc->dev)) api->CommDestroy(pc->comm);
    else api->CommAbort(pc->comm);
  }
  ck_store_close(pc->store);
  free(pc);
}

static ck_status fail_store(ck_ctx *ctx, const char *what, const char *err) {
  return ck_error(ctx, CK_ERR_IO, "%s: %s", what, err);
}

ck_status ck_pcomm_init(ck_ctx *ctx, const ck_pcomm_opts *o, ck_pcomm **out) {
  char err[512], url[512] = "";
  int rank = 0, world = 1, local = 0;
  *out = NULL;
  if (ck_dist_env(&rank, &world, &local, url, sizeof url, err, sizeof err)) {
    /* (with the url given here, only a missing CUKERN_STORE made it fail: CUKERN_RANK / CUKERN_WORLD_SIZE still say) */
    if (!o->store_url && (o->rank < 0 || o->world < 0)) return ck_error(ctx, CK_ERR_ARG, "rendezvous: %s", err);
    rank = local = (int)env_double("CUKERN_RANK", 0), world = (int)env_double("CUKERN_WORLD_SIZE", 1);
  }
  if (o->rank >= 0) rank = local = o->rank;
  if (o->world >= 0) world = o->world;
  if (o->store_url) snprintf(url, sizeof url, "%s", o->store_url);
  if (world < 1 || rank < 0 || rank >= world)
    return ck_error(ctx, CK_ERR_ARG, "rendezvous: rank %d of a world of %d (ranks are 0 .. world - 1)", rank, world);
  ck_pcomm *pc = calloc(1, sizeof *pc);
  if (!pc) return ck_error(ctx, CK_ERR_OOM, "out of host memory");
  pc->ctx = ctx, pc->rank = rank, pc->world = world, pc->local = local;
  pc->timeout = o->timeout_s > 0 ? o->timeout_s : env_double("CUKERN_STORE_TIMEOUT", 300);
  const char *chk = getenv("CUKERN_DIST_CHECK");
  pc->checked = o->checked || (chk && *chk && strcmp(chk, "0") != 0);
  ck_status st = CK_OK;
  if (ck_store_open(url, rank, world, pc->timeout, &pc->store, err, sizeof err)) {
    st = fail_store(ctx, "rendezvous", err);
    goto fail;
  }
  /* the device: host:0 when asked or without a GPU; else the one given, or cuda:(local rank % devices) */
  const int ncuda = ck_device_count(ctx, CK_CUDA);
  if (o->use_host || ncuda == 0) pc->dev = o->dev.kind == CK_HOST && o->dev.index >= 0 ? o->dev : CK_DEV_HOST;
  else pc->dev = o->dev.index >= 0 ? o->dev : ck_device_make(CK_CUDA, local % ncuda);
  if ((st = ck_use_device(ctx, pc->dev))) goto fail;
  if (pc->dev.kind == CK_CUDA) {
    const ck_nccl_api *api = ck_nccl();
    if (!api->loaded) {
      st = ck_error(ctx, CK_ERR_UNSUPPORTED, "ck.dist on %s needs NCCL, which is not available (%s); install libnccl2, set "
                    "CUKERN_NCCL_LIB, or pass {device = \"host\"}", ck_device_name(pc->dev).s, api->why);
      goto fail;
    }
    ncclUniqueId id;
    size_t n = 0;
    if (rank == 0) {
      ncclResult_t r = api->GetUniqueId(&id);
      if (r != ncclSuccess) {
        st = ck_error(ctx, CK_ERR_CUDA, "ncclGetUniqueId failed: %s", ck_nccl_strerror(r));
        goto fail;
      }
      if (ck_store_set(pc->store, "cukern/nccl_id", &id, sizeof id, err, sizeof err)) {
        st = fail_store(ctx, "rendezvous", err);
        goto fail;
      }
    } else if (ck_store_get(pc->store, "cukern/nccl_id", &id, sizeof id, &n, err, sizeof err) || n != sizeof id) {
      st = fail_store(ctx, "rendezvous (NCCL id)", n != sizeof id && !err[0] ? "the stored id has the wrong size" : err);
      goto fail;
    }
    /* every rank is here before NCCL's own bootstrap starts, so that a missing rank times out in the store */
    if (ck_store_barrier(pc->store, "cukern/init", err, sizeof err)) {
      st = fail_store(ctx, "rendezvous", err);
      goto fail;
    }
    ncclResult_t r = api->CommInitRank(&pc->comm, world, id, rank);
    if (r != ncclSuccess) {
      pc->comm = NULL;
      st = ck_error(ctx, CK_ERR_CUDA, "ncclCommInitRank (rank %d of %d on %s) failed: %s", rank, world,
                    ck_device_name(pc->dev).s, ck_nccl_strerror(r));
      goto fail;
    }
    pc->nccl = true;
  } else if (ck_store_barrier(pc->store, "cukern/init", err, sizeof err)) {
    st = fail_store(ctx, "rendezvous", err);
    goto fail;
  }
  *out = pc;
  return CK_OK;
fail:
  ck_pcomm_free(pc);
  return ck_error_prefix(ctx, st, "rank %d of %d", rank, world);
}

ck_status ck_pcomm_barrier(ck_pcomm *pc) {
  char err[512], name[64];
  ck_status st = ck_synchronize_device(pc->ctx, pc->dev);
  if (st) return st;
  snprintf(name, sizeof name, "cukern/barrier/%llu", (unsigned long long)pc->seq++);
  if (ck_store_barrier(pc->store, name, err, sizeof err)) return fail_store(pc->ctx, "barrier", err);
  return CK_OK;
}

// ---------------------------------------------------------------- collectives

/* The store path: this rank's packed values go to the store in chunks of at most CK_STORE_VALUE_MAX bytes; every
 * rank reads every rank's, and combines them with the host oracle's rule. */
static ck_status store_exchange(ck_pcomm *pc, int kind, int op, int root, const ck_tensor *src, ck_tensor *dst) {
  ck_ctx *ctx = pc->ctx;
  char err[512], key[96];
  ck_status st = CK_OK;
  const size_t bytes = (size_t)ck_numel(src) * ck_dtype_size(src->dtype);
  const size_t chunk = CK_STORE_VALUE_MAX, nchunks = bytes ? (bytes + chunk - 1) / chunk : 0;
  ck_tensor *all = calloc((size_t)pc->world, sizeof *all);
  const ck_tensor **in = calloc((size_t)pc->world, sizeof *in);
  ck_tensor **outs = calloc((size_t)pc->world, sizeof *outs);
  if (!all || !in || !outs) {
    st = ck_error(ctx, CK_ERR_OOM, "out of host memory");
    goto cleanup;
  }
  for (int k = 0; k < pc->nown;) { /* our values of two steps back: nobody reads them any more */
    if (pc->own_seq[k] + 2 > pc->seq) {
      ++k;
      continue;
    }
    for (size_t c = 0; c < pc->own_chunks[k] && !st; ++c) {
      snprintf(key, sizeof key, "cukern/coll/%llu/%d/%zu", (unsigned long long)pc->own_seq[k], pc->rank, c);
      if (ck_store_del(pc->store, key, err, sizeof err)) st = fail_store(ctx, "collective", err);
    }
    pc->own_seq[k] = pc->own_seq[pc->nown - 1], pc->own_chunks[k] = pc->own_chunks[pc->nown - 1], pc->nown--;
  }
  if (st) goto cleanup;
  ck_tensor mine = {0};
  if ((st = ck_to(ctx, &mine, src, CK_DEV_HOST, src->dtype))) goto cleanup;
  for (size_t k = 0; k < nchunks && !st; ++k) {
    snprintf(key, sizeof key, "cukern/coll/%llu/%d/%zu", (unsigned long long)pc->seq, pc->rank, k);
    const size_t len = k + 1 < nchunks ? chunk : bytes - k * chunk;
    if (ck_store_set(pc->store, key, (const char *)ck_data(&mine) + k * chunk, len, err, sizeof err))
      st = fail_store(ctx, "collective", err);
  }
  ck_release(&mine);
  if (!st && pc->nown < 2) pc->own_seq[pc->nown] = pc->seq, pc->own_chunks[pc->nown++] = nchunks;
  for (int r = 0; r < pc->world && !st; ++r) {
    if ((st = ck_empty(ctx, &all[r], src->dtype, src->ndim, src->shape, CK_DEV_HOST))) break;
    in[r] = &all[r];
    for (size_t k = 0; k < nchunks && !st; ++k) {
      size_t got = 0, len = k + 1 < nchunks ? chunk : bytes - k * chunk;
      snprintf(key, sizeof key, "cukern/coll/%llu/%d/%zu", (unsigned long long)pc->seq, r, k);
      if (ck_store_get(pc->store, key, (char *)ck_data(&all[r]) + k * chunk, len, &got, err, sizeof err))
        st = fail_store(ctx, "collective", err);
      else if (got != len)
        st = ck_error(ctx, CK_ERR_IO, "collective: rank %d sent %zu bytes for chunk %zu, expected %zu (do the ranks pass "
                      "arrays of one shape and dtype? CUKERN_DIST_CHECK=1 checks)", r, got, k, len);
    }
  }
  if (!st && dst) { /* this rank's output, on the host, then onto its device */
    ck_tensor res = {0};
    if (!(st = ck_empty(ctx, &res, dst->dtype, dst->ndim, dst->shape, CK_DEV_HOST))) {
      outs[pc->rank] = &res;
      const ck_coll c = {kind, op, root, pc->world, in, outs, NULL};
      if (!(st = ck_coll_host(ctx, &c))) st = ck_copy(ctx, dst, &res);
    }
    ck_release(&res);
  }
cleanup:
  for (int r = 0; all && r < pc->world; ++r) ck_release(&all[r]);
  free(all);
  free(in);
  free(outs);
  return st;
}

/* This rank's NCCL call, run by ck_submit_multi (after the device's queued small ops). */
typedef struct {
  const ck_nccl_api *api;
  const ck_pcomm *pc;
  int kind, root;
  const ck_tensor *src;
  void *d;
  ncclDataType_t ndt;
  ncclRedOp_t nop;
  cudaStream_t stream;
} pnccl_args;

static int pnccl_enqueue(const void *arg) {
  const pnccl_args *a = (const pnccl_args *)arg;
  return (int)ck_nccl_call(a->api, a->kind, ck_data(a->src), a->d, (size_t)ck_numel(a->src), a->pc->world, a->ndt,
                           a->nop, a->root, a->pc->comm, a->stream);
}

static void describe_pnccl(const void *ud, int code, char *buf, size_t n) {
  snprintf(buf, n, "NCCL %s failed: %s", ck_coll_kind_name(((const pnccl_args *)ud)->kind),
           ck_nccl_strerror((ncclResult_t)code));
}

static ck_status run_nccl(ck_pcomm *pc, int kind, int op, int root, const ck_tensor *src, ck_tensor *dst, bool async) {
  ck_ctx *ctx = pc->ctx;
  const ck_nccl_api *api = ck_nccl();
  ncclDataType_t ndt;
  ncclRedOp_t nop = ncclSum;
  if (!pc->comm) return ck_error(ctx, CK_ERR_CUDA, "the communicator was aborted after an earlier failure; make a new one");
  if (!ck_nccl_dtype(src->dtype, &ndt)) return ck_error(ctx, CK_ERR_DTYPE, "NCCL has no %s", ck_dtype_name(src->dtype));
  if (kind != CK_COLL_ALL_GATHER && kind != CK_COLL_BROADCAST && !ck_nccl_redop(op, &nop))
    return ck_error(ctx, CK_ERR_UNSUPPORTED, "this NCCL has no %s", ck_coll_op_name(op));
  pnccl_args a = {api, pc, kind, root, src, dst ? ck_data(dst) : (void *)ck_data(src), ndt, nop,
                  (cudaStream_t)ck_device_stream(ctx, pc->dev)};
  if (!a.stream) return CK_ERR_DEVICE;
  const ck_multi_req req = {.fn = pnccl_enqueue, .arg = &a, .devs = &pc->dev, .n = 1, .describe = describe_pnccl,
                            .describe_ud = &a};
  ck_status st = ck_submit_multi(ctx, &req);
  if (st) return st;
  cudaStream_t s = a.stream;
  if (async) return CK_OK;
  char err[512];
  int ord = pc->dev.index;
  if (ck_nccl_wait(api, &pc->comm, 1, &s, &ord, 1, pc->timeout, err, sizeof err))
    return ck_error(ctx, CK_ERR_CUDA, "%s", err); /* (pc->comm is NULL now: aborted) */
  return CK_OK;
}

ck_status ck_pcomm_run(ck_pcomm *pc, int kind, int op, int root, const ck_tensor *in, ck_tensor *out, bool async) {
  ck_ctx *ctx = pc->ctx;
  char a[96], b[96], sig[256];
  const char *name = ck_coll_kind_name(kind);
  ck_status st = ck_check_live(ctx, name, in);
  if (st || (st = ck_coll_check_dtype(ctx, in->dtype))) return st;
  if (!ck_dev_eq(ck_dev(in), pc->dev))
    return ck_error(ctx, CK_ERR_DEVICE, "%s: the array is on %s, this rank's communicator on %s; move it with :to(\"%s\")",
                    name, ck_device_name(ck_dev(in)).s, ck_device_name(pc->dev).s, ck_device_name(pc->dev).s);
  if ((kind == CK_COLL_BROADCAST || kind == CK_COLL_REDUCE) && (root < 0 || root >= pc->world))
    return ck_error(ctx, CK_ERR_ARG, "%s: root %d is not a rank (0 .. %d)", name, root, pc->world - 1);
  if (kind != CK_COLL_ALL_GATHER && kind != CK_COLL_BROADCAST) {
    if (op < 0 || op >= CK_NCOLL_OPS) return ck_error(ctx, CK_ERR_ARG, "%s: unknown op (sum, prod, max, min, avg)", name);
    if (op == CK_COLL_AVG && !ck_dtype_is_float(in->dtype))
      return ck_error(ctx, CK_ERR_DTYPE, "%s: avg needs a float dtype (the array is %s)", name, ck_dtype_name(in->dtype));
  }
  int nd = in->ndim ? in->ndim : 1;
  int64_t shape[CK_MAX_DIMS];
  for (int k = 0; k < nd; ++k) shape[k] = in->ndim ? in->shape[k] : 1;
  if (kind == CK_COLL_ALL_GATHER) shape[0] *= pc->world;
  else if (kind == CK_COLL_REDUCE_SCATTER) {
    if (!in->ndim || in->shape[0] % pc->world)
      return ck_error(ctx, CK_ERR_SHAPE, "%s: dim 1 of %s must be divisible by the world size %d", name,
                      ck_describe(in, a, sizeof a), pc->world);
    shape[0] /= pc->world;
  } else nd = in->ndim;
  if (pc->checked) {
    snprintf(sig, sizeof sig, "%s %s op=%s root=%d", name, ck_describe(in, a, sizeof a),
             kind == CK_COLL_ALL_GATHER || kind == CK_COLL_BROADCAST ? "-" : ck_coll_op_name(op), root);
    char err[1024];
    if (ck_store_agree(pc->store, pc->seq, sig, err, sizeof err))
      return ck_error(ctx, CK_ERR_ARG, "%s (checked mode): %s", name, err);
  }
  /* outputs: allocated, or the caller's (checked); packed copies where needed */
  const bool writes = kind != CK_COLL_REDUCE || root == pc->rank;
  if (out && !out->st && (st = ck_empty(ctx, out, in->dtype, nd, shape, pc->dev))) return st;
  if (out && out != in && (out->dtype != in->dtype || out->ndim != nd || memcmp(out->shape, shape, sizeof(int64_t) * (size_t)nd)))
    return ck_error(ctx, CK_ERR_SHAPE, "%s: the output is %s; it must be %s%s", name, ck_describe(out, a, sizeof a),
                    ck_dtype_name(in->dtype), ck_shape_str(nd, shape, b, sizeof b));
  if (out && (st = ck_check_writable(ctx, name, out))) return st;
  ck_tensor src = {0}, dst = {0};
  if ((st = ck_contiguous(ctx, &src, in))) return st;
  bool copy_back = false;
  if (out && writes) {
    if (ck_is_contiguous(out) && (!ck_overlaps(out, &src) || ck_coll_same_memory(out, &src)))
      ck_view_of(&dst, out);
    else if (!(st = ck_empty(ctx, &dst, in->dtype, nd, shape, pc->dev)))
      copy_back = true;
  }
  if (!st) st = pc->nccl ? run_nccl(pc, kind, op, root, &src, dst.st ? &dst : NULL, async)
                         : store_exchange(pc, kind, op, root, &src, dst.st ? &dst : NULL);
  if (!st && copy_back) st = ck_copy(ctx, out, &dst);
  pc->seq++;
  ck_release(&src);
  ck_release(&dst);
  if (st) ck_error_prefix(ctx, st, "%s (rank %d of %d)", name, pc->rank, pc->world);
  return st;
}
