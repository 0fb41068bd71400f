/*
 * ck_dist.h — several devices (issue 31): collectives over arrays on several devices of one process (ck.nccl), and
 * communicators between processes (ck.dist). The layer above core/ops and beside fused/io; only the binding calls it.
 *
 * On CUDA devices the collectives are NCCL's (loaded at run time: nccl_dl.c), or a rung of the all-reduce ladder
 * (kernels/allreduce/). On host:N devices the same calls run on the host, without libnccl: the oracle for NCCL's
 * results, and what CI runs. Between processes on the host backend, data goes through the rendezvous store.
 */
#ifndef CK_DIST_H
#define CK_DIST_H

#include "ck.h"
#include "nccl_dl.h"
#include "store.h"

/* the dtypes NCCL has a type for (dtypes.def's NCCL column): what collectives take */
#define CK_DT_COLL (CK_DT_ALL5 | CK_DT_BIT(CK_U8) | CK_DT_BIT(CK_I8) | CK_DT_BIT(CK_U32) | CK_DT_BIT(CK_I64))

struct ck_ar_desc; /* kernels/allreduce/allreduce.h: the hand-written rungs' descriptor */

typedef enum { CK_COLL_ALL_REDUCE, CK_COLL_ALL_GATHER, CK_COLL_REDUCE_SCATTER, CK_COLL_BROADCAST, CK_COLL_REDUCE,
               CK_NCOLLS } ck_coll_kind;
const char *ck_coll_kind_name(int kind); /* "all_reduce", ... */

/* The all-reduce ladder (kernels/allreduce/rungs.def): 0 nccl (the reference), 1 gather, 2 oneshot, 3 ring. */
typedef struct ck_ar_rung {
  int id;
  const char *name, *summary;
  int (*fn)(const struct ck_ar_desc *d); /* a hand-written rung's launcher (run by ck_submit_multi); NULL for NCCL */
} ck_ar_rung;
const ck_ar_rung *ck_ar_rungs(int *n);

/* The dist layer's state for one session (ck_ctx): NCCL communicators cached per device list. */
typedef struct ck_dist ck_dist;
ck_dist *ck_dist_new(ck_ctx *ctx);
void ck_dist_free(ck_dist *dd); /* destroys the cached communicators */

/* One collective over n arrays, one per device (distinct devices of one kind), in list order = rank order.
 *   all_reduce     out[i] = op over in[*]            (out[i] may be in[i]: in place)
 *   all_gather     out[i] = in[0..n-1] stacked along dim 0: [n*d0, ...]
 *   reduce_scatter out[i] = block i of op over in[*] along dim 0: [d0/n, ...] (d0 divisible by n)
 *   broadcast      out[i] = in[root]
 *   reduce         out[root] = op over in[*]; the others untouched (out[i] for i != root may be NULL)
 * out[i]->st == NULL: allocated on in[i]'s device. Views are taken as they are (packed through temporaries).
 * `variant` (all_reduce on CUDA only): NULL/"" or "nccl", "gather", "oneshot", "ring", or a rung id.
 * Asynchronous on each device's stream, like every op; ck_dist_wait waits with a timeout. `ran` says what ran. */
typedef struct ck_coll {
  int kind, op, root, n;
  const ck_tensor *const *in;
  ck_tensor *const *out;
  const char *variant;
} ck_coll;
ck_status ck_coll_run(ck_dist *dd, const ck_coll *c, ck_ran *ran);
/* Wait until the devices' work is done, polling NCCL's asynchronous errors; past timeout_s (<= 0: never) the
 * communicators are aborted and an error says so, instead of hanging. devs NULL: every device with a communicator. */
ck_status ck_dist_wait(ck_dist *dd, const ck_device *devs, int n, double timeout_s);

/* The dtypes a collective takes: those the ops compute in (CK_DT_ALL5). The storage dtypes (bool, u8, i8, i16, u32,
 * i64) are refused like every op refuses them until they compute, rather than combined through a narrower type. */
ck_status ck_coll_check_dtype(ck_ctx *ctx, ck_dtype dt);
/* out and src are the same packed memory (an in-place collective reads and writes one buffer). */
bool ck_coll_same_memory(const ck_tensor *out, const ck_tensor *src);

/* One rank's NCCL call of a collective `kind` (count: its input's elements; reduce_scatter writes count / nranks);
 * the one switch over the kinds, for one process (coll.c) and several (pcomm.c). Run inside ck_submit_multi. */
ncclResult_t ck_nccl_call(const ck_nccl_api *api, int kind, const void *s, void *d, size_t count, int nranks,
                          ncclDataType_t dt, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);

/* The host oracle: the same collective on host:N arrays (contiguous, distinct, already checked and allocated). */
ck_status ck_coll_host(ck_ctx *ctx, const ck_coll *c);
/* One element-combine of the host oracle, shared with the store path: acc[i] = acc[i] op x[i] for n elements of
 * dtype dt (floats in double, integers in int64 wrapping like the device's). */
void ck_coll_combine(int op, ck_dtype dt, void *acc, const void *x, int64_t n);
/* AVG's last step: acc /= k (floats only). */
void ck_coll_scale(ck_dtype dt, void *acc, int64_t n, int k);

/* ---------------------------------------------------------------- several processes (pcomm.c)
 * A communicator of `world` processes, this one `rank` (0-based, as NCCL and MPI count), on one device. CUDA: NCCL
 * with the unique id shared through the store. Host: collectives through the store (every rank combines every
 * rank's values in rank order, so all get identical results). */
typedef struct ck_pcomm ck_pcomm;
typedef struct ck_pcomm_opts {
  const char *store_url; /* NULL: CUKERN_STORE (ck_dist_env) */
  int rank, world;       /* -1: from the environment (CUKERN_RANK / CUKERN_WORLD_SIZE, Open MPI, PMI) */
  ck_device dev;         /* the device; kind CK_CUDA with index -1: cuda:(local rank % devices) */
  bool use_host;         /* run on host:0 even with a GPU */
  double timeout_s;      /* rendezvous and collectives (<= 0: CUKERN_STORE_TIMEOUT, else 300) */
  bool checked;          /* every collective first agrees on its signature through the store (CUKERN_DIST_CHECK=1) */
} ck_pcomm_opts;
ck_status ck_pcomm_init(ck_ctx *ctx, const ck_pcomm_opts *o, ck_pcomm **out);
void ck_pcomm_free(ck_pcomm *pc); /* (finalises or aborts NCCL, closes the store) */
int ck_pcomm_rank(const ck_pcomm *pc);
int ck_pcomm_world(const ck_pcomm *pc);
ck_device ck_pcomm_device(const ck_pcomm *pc);
const char *ck_pcomm_backend(const ck_pcomm *pc); /* "nccl" or "store" */
/* One collective of this rank (in: its array; out: allocated when out->st == NULL; root is a rank). Blocking by
 * default (waits for the device with the communicator's timeout, so that a peer that never comes is an error,
 * not a hang); `async`: only enqueued (NCCL; the store path is always blocking). */
ck_status ck_pcomm_run(ck_pcomm *pc, int kind, int op, int root, const ck_tensor *in, ck_tensor *out, bool async);
ck_status ck_pcomm_barrier(ck_pcomm *pc);

#endif
