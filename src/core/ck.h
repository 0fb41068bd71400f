/*
 * ck.h — the public API of the cukern core.
 *
 * The core is plain C11 (plus the CUDA runtime API); it never includes lua.h, never exits, prints or longjmps.
 * Every fallible function takes the context first and returns a ck_status; on failure the context holds a
 * message (ck_errmsg) naming the op, shapes, dtypes, variant and any CUDA error string.
 *
 * Ownership: a ck_tensor is a small value (metadata + one reference to a refcounted ck_storage). Functions
 * that produce a tensor into `out` take a new reference; ck_release drops it. A tensor whose `st` is NULL is
 * "empty": ops that take an `out` allocate it when out->st == NULL and write into it otherwise.
 */
#ifndef CK_H
#define CK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ck_kernels.h" /* dtypes, descriptors and the variant registry shared with kernels/ */

#define CK_VERSION "0.1.0"

typedef enum {
  CK_OK = 0,
  CK_ERR_ARG,         /* bad argument value */
  CK_ERR_SHAPE,       /* incompatible or invalid shapes */
  CK_ERR_DTYPE,       /* dtype not supported by the op/variant */
  CK_ERR_DEVICE,      /* mixing host and GPU operands, or no GPU */
  CK_ERR_OOM,         /* out of memory (after the retry) */
  CK_ERR_CUDA,        /* a CUDA runtime call failed */
  CK_ERR_CUBLAS,      /* a cuBLAS call failed */
  CK_ERR_NVRTC,       /* run-time compilation failed */
  CK_ERR_UNSUPPORTED, /* no variant can run this case */
  CK_ERR_FREED,       /* use of a freed array */
  CK_ERR_IO,          /* file I/O */
  CK_ERR_INTERNAL,
  CK_NOT_APPLICABLE = -1 /* internal: a fast path declined; the caller falls back */
} ck_status;

typedef enum { CK_HOST = 0, CK_CUDA = 1 } ck_devkind;

/* A device: a backend and its ordinal, "cuda:1" or "host:0" (issue 31). host:N exist only with
 * CUKERN_HOST_DEVICES=N (distinct devices on the host backend, so that CI runs the multi-device rules). A struct,
 * not an int, so that the compiler finds every place that compares devices (ck_dev_eq). */
typedef struct ck_device {
  ck_devkind kind;
  int index;
} ck_device;
static inline ck_device ck_device_make(ck_devkind kind, int index) {
  ck_device d = {kind, index};
  return d;
}
static inline bool ck_dev_eq(ck_device a, ck_device b) { return a.kind == b.kind && a.index == b.index; }
#define CK_DEV_HOST ck_device_make(CK_HOST, 0)

typedef struct ck_ctx ck_ctx;

/* Refcounted storage. `ptr` is device memory for CK_CUDA, 64-byte aligned host memory for CK_HOST. */
typedef struct ck_storage {
  int refs;
  ck_device dev;
  void *ptr;
  size_t bytes;      /* requested */
  size_t cap;        /* size class actually held (device) */
  ck_ctx *ctx;
  struct ck_dctx *dctx; /* the device's context whose allocator it came from (CK_CUDA), else NULL */
  /* A wrapped application buffer (ck_storage_wrap): when the last reference goes, release(release_ud, ptr)
   * is called instead of freeing ptr (after the stream is synchronised, for device memory). NULL otherwise. */
  void (*release)(void *ud, void *ptr);
  void *release_ud;
  /* streams (issue 36, stream.c): host memory that is page-locked (cudaHostAlloc, or an application buffer
   * registered with cudaHostRegister), so that copies from and to it run asynchronously; the stream that wrote it
   * last (the slot of `wd`, the device whose stream it is: dctx unless a device copied into pinned host memory)
   * and at which point of its device's clock; the streams (a bit per slot) that used it, which the allocator
   * orders before the block's next use */
  bool pinned, registered;
  int wslot;
  uint64_t wseq, uses;
  struct ck_dctx *wd;
} ck_storage;

typedef struct ck_tensor {
  ck_storage *st; /* NULL: not allocated, or freed */
  ck_dtype dtype;
  int ndim; /* 0..CK_MAX_DIMS; 0 = scalar (numel 1) */
  int64_t shape[CK_MAX_DIMS];
  int64_t stride[CK_MAX_DIMS]; /* in elements; may be 0 (expand) */
  int64_t offset;              /* in elements */
  /* An expanded view, or a view of one (a row of ones(1, 4):expand(3, 4) is the memory of all three rows):
   * views inherit it, so every write path refuses such a destination (ck_check_writable), as NumPy keeps
   * broadcast_to's result and its views read-only. A copy (contiguous(), clone()) is a new array without it. */
  bool shared;
} ck_tensor;

/* Which variant an op actually ran (for the user and for benchmarks). */
typedef struct ck_ran {
  int id;
  char name[32];
  char note[160];         /* e.g. "asked for 'vec4': needs K % 4 == 0; ran 'cublas'" */
  bool gpu;               /* a launcher ran on the device (false: the host oracle, or nothing to launch) */
  bool library;           /* that launcher is a library reference (id 0): cuBLAS/CUB/geam kernels are not listed */
  ck_launch_note kernels; /* the kernels of ours it launched; their attributes: ck_kernel_info (kinfo.c) */
} ck_ran;

/* What the compiler and the occupancy calculator say of one kernel at the configuration it launched with
 * (src/core/kinfo.c). ck.last_ran().kernels, ck.variants rows and k:info() all push this one record. */
typedef struct ck_kinfo {
  char name[64];    /* the kernel's name (a template's without its arguments) */
  char symbol[256]; /* the full demangled signature (template arguments included; may be truncated) */
  int registers, max_threads, block, blocks_per_sm, ptx_version, binary_version;
  size_t static_smem, dynamic_smem, local_bytes, const_bytes; /* local_bytes: per-thread local memory (spills) */
  double occupancy; /* active warps / max warps per SM, at `block` threads and `dynamic_smem` bytes */
} ck_kinfo;
/* The attributes of a built-in kernel launch (l->fn: a host stub of kernels/, which lives as long as the
 * process): looked up once per (kernel, block, dynamic smem) and cached in the context. */
ck_status ck_kernel_info(ck_ctx *ctx, const ck_launch *l, ck_kinfo *out);
/* The same lookup, uncached, for a kernel that may be unloaded later (run-time kernels); `name` is its name. */
ck_status ck_kernel_info_of(ck_ctx *ctx, const void *fn, const char *name, int block, size_t smem, ck_kinfo *out);
/* kinfo.c: what row `row` of ladder `ladder` (a ck_opkind) launched the last time it ran (for ck.variants). */
void ck_seen_record(ck_ctx *ctx, int ladder, int nrows, int row, bool library, const ck_launch_note *kernels);
bool ck_seen_get(ck_ctx *ctx, int ladder, int row, ck_launch_note *kernels, bool *library);

/* ---------------------------------------------------------------- context (context.c) */
ck_status ck_ctx_create(ck_ctx **out); /* never fails for lack of a GPU: falls back to host */
void ck_ctx_destroy(ck_ctx *ctx);
const char *ck_errmsg(const ck_ctx *ctx);
ck_status ck_error(ck_ctx *ctx, ck_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prefix the current message with "what: " (used by dispatchers to add op context to lower-level errors). */
ck_status ck_error_prefix(ck_ctx *ctx, ck_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
ck_status ck_cuda_fail(ck_ctx *ctx, int cuda_err, const char *file, int line, const char *what);
bool ck_has_cuda(const ck_ctx *ctx);

/* ---------------------------------------------------------------- devices (device.c, issue 31)
 * cuda:0 .. cuda:N-1 and host:0 .. host:M-1 (M = CUKERN_HOST_DEVICES, default 1). Each device has its own
 * context (stream, cuBLAS handle, caching allocator, batch queue, graph capture), built on first use. Arrays
 * made without a device go to the default device. An op runs on the device of its operands; operands on two
 * devices are an error (no implicit copies). */
typedef struct ck_devname {
  char s[24];
} ck_devname;
ck_devname ck_device_name(ck_device d); /* "cuda:1", "host:0"; ck_device_name(d).s lives to the statement's end */
/* "cuda" / "gpu" / "host" / "cpu", optionally ":N"; a bare kind is dflt when dflt has that kind, else its device 0.
 * false when s is none of these (a device that does not exist parses: ck_check_device says so). */
bool ck_device_parse(const char *s, ck_device dflt, ck_device *out);
int ck_device_count(const ck_ctx *ctx, ck_devkind kind);
ck_status ck_check_device(ck_ctx *ctx, ck_device dev); /* it exists; the error lists those that do */
ck_device ck_default_device(const ck_ctx *ctx);
void ck_set_default_device(ck_ctx *ctx, ck_device dev); /* (checked by the caller with ck_check_device) */
/* Make dev's context current for the calls that follow (its stream, allocator, batch queue): built on first use;
 * cudaSetDevice only when this thread's device differs. Host devices: only checked. */
ck_status ck_use_device(ck_ctx *ctx, ck_device dev);
ck_device ck_current_device(ck_ctx *ctx); /* the current CUDA device (host:0 without one) */
int ck_sm_count(ck_ctx *ctx);             /* multiprocessors of the current device (0 on the host) */
/* Enable peer access both ways between two CUDA devices (once): false when they cannot reach each other. */
bool ck_peer_access(ck_ctx *ctx, ck_device a, ck_device b);
/* Work issued on `waiter` from now on runs after everything issued so far on `producer` (an event). */
ck_status ck_stream_after(ck_ctx *ctx, ck_device waiter, ck_device producer);
/* bytes from src on sdev to dst on ddev (both CUDA), ordered after sdev's work, with sdev's stream waiting for the
 * copy in turn (both allocators stay stream-safe). */
ck_status ck_memcpy_peer(ck_ctx *ctx, void *dst, ck_device ddev, const void *src, ck_device sdev, size_t bytes);
/* The stream and the ordering event (cudaStream_t / cudaEvent_t) of a CUDA device's context, for the layer that
 * drives several devices at once (src/dist: collectives): NULL, with an error in ctx, when the device cannot be
 * used. Work enqueued there directly must flush the device's batch first (ck_use_device + ck_flush). */
void *ck_device_stream(ck_ctx *ctx, ck_device dev);
void *ck_device_event(ck_ctx *ctx, ck_device dev);
bool ck_sync_mode(const ck_ctx *ctx);   /* CUKERN_SYNC=1 */
void ck_set_sync_mode(ck_ctx *ctx, bool on);
/* Small dense ops are batched (kernels/batched/: one launch runs up to CK_BATCH_MAX of them in order);
 * CUKERN_BATCH=0 starts with batching off. Turning it off flushes. */
bool ck_batching(const ck_ctx *ctx);
ck_status ck_set_batching(ck_ctx *ctx, bool on);
bool ck_batch_active(const ck_ctx *ctx); /* batching on, and no CUKERN_SYNC or graph capture in progress */
/* Launch the batched ops waiting in the context (if any). Everything that touches the stream otherwise (other
 * launches, copies, synchronisation, events, graph capture, cudaFree) calls this first. */
ck_status ck_flush(ck_ctx *ctx);
/* THE launch function, ck_submit: every kernel launch and library call on the context's stream goes through it (dispatch,
 * copies, permuted copies, memcpy, run-time kernels, graphs, benchmarks). In this order it: builds the launcher's
 * environment (stream, cuBLAS handle created on first use, device properties, workspace, where batched ops
 * append); runs the batched small ops still queued, unless this launch joins them (a `batched` variant);
 * calls the launcher, which notes the kernels of ours it starts in `note`; and checks the result: an error
 * names the launch (`describe`, formatted only then, or `what`), and in CUKERN_SYNC mode it synchronises so
 * that a device fault points at the right Lua line. Nothing else gets an environment, so no path can launch
 * around the queue; CUKERN_CHECK_ORDER=1 checks that below it too (ck_order_check in kernels/ck_kernels.h). */
typedef struct ck_launch_req {
  int (*fn)(const void *arg, const ck_env *env); /* a registry row's launch, or the core's own */
  const void *arg;                               /* its descriptor */
  bool joins_batch;                              /* a CK_VF_BATCHED variant: appends to the queue */
  bool needs_cusolver; /* env->cusolver: the device's cuSOLVER handle, bound to the stream (cuSOLVER loaded first) */
  ck_launch_note *note;                          /* where the launcher notes our kernels, or NULL */
  const char *what;                              /* names the launch in an error ... */
  void (*describe)(const void *ud, char *buf, size_t n); /* ... or this does, only when one is raised */
  const void *describe_ud;
} ck_launch_req;
ck_status ck_submit(ck_ctx *ctx, const ck_launch_req *r);
/* The launch function of work that spans several devices' streams (collectives, the all-reduce rungs: src/dist):
 * every device's queued small ops run first, then fn(arg) enqueues its work on the devices' streams itself (it
 * returns 0 or an error code); a failure is described by describe(ud, code, buf, n) (formatted only then), and in
 * CUKERN_SYNC mode every device is synchronised. The device current before stays current. */
typedef struct ck_multi_req {
  int (*fn)(const void *arg);
  const void *arg;
  const ck_device *devs;
  int n;
  void (*describe)(const void *ud, int code, char *buf, size_t n);
  const void *describe_ud;
} ck_multi_req;
ck_status ck_submit_multi(ck_ctx *ctx, const ck_multi_req *r);
/* cudaMemcpyAsync(dst, src, bytes, kind) on the context's stream through ck_submit; `wait`: synchronise after
 * (a pageable host buffer that is released next). */
ck_status ck_memcpy(ck_ctx *ctx, void *dst, const void *src, size_t bytes, int kind, bool wait, const char *what);
/* cudaMemsetAsync(dst, value, bytes) on the context's stream through ck_submit (device memory). */
ck_status ck_memset(ck_ctx *ctx, void *dst, int value, size_t bytes, const char *what);
/* A GPU's check words (64 bytes): pinned host memory mapped into the device, which kernels write directly and the host
 * reads after a synchronisation, with no copy in between (the gathers' bounds flags: op_index.c says why; linalg's
 * small solves flag a system to report there). One per
 * device context, made on first use; `host` and `device` are its two addresses (equal under unified addressing).
 * Whoever uses it sets it before the launch and reads it after synchronising that launch's stream. */
ck_status ck_check_word(ck_ctx *ctx, ck_device dev, int64_t **host, void **device);
ck_status ck_synchronize(ck_ctx *ctx);                        /* the current device */
ck_status ck_synchronize_device(ck_ctx *ctx, ck_device dev);  /* one device (host devices: nothing to wait for) */
ck_status ck_synchronize_all(ck_ctx *ctx);                    /* every device built so far */
ck_status ck_flush_all(ck_ctx *ctx);                          /* every device's batch queue */

typedef struct ck_devinfo {
  char backend[8]; /* "cuda" or "host" */
  char name[256];
  int cc_major, cc_minor, sm_count;
  size_t total_mem, free_mem, l2_bytes, smem_optin;
  int driver_version, runtime_version, device_count;
  int max_threads_per_sm; /* for occupancy: active warps / (this / 32) */
  char why_host[160]; /* when backend is host: why (no driver, no device, ...) */
} ck_devinfo;
void ck_device_info(ck_ctx *ctx, ck_device dev, ck_devinfo *info);

/* Time `fn(ctx, ud)` on the stream with CUDA events (or a monotonic clock on the host): `warmup` untimed
 * calls, then `reps` timed ones; between reps, `flush_bytes` of scratch are written to evict L2 (0: none).
 * ms_out receives reps values. */
typedef ck_status (*ck_bench_fn)(ck_ctx *ctx, void *ud);
ck_status ck_time_op(ck_ctx *ctx, ck_device dev, ck_bench_fn fn, void *ud, int warmup, int reps,
                     size_t flush_bytes, double *ms_out);

/* A stopwatch for Lua functions: CUDA events on the stream when there is a GPU, else a monotonic clock. */
typedef struct ck_timer ck_timer;
ck_status ck_timer_new(ck_ctx *ctx, ck_timer **out);
ck_status ck_timer_start(ck_ctx *ctx, ck_timer *t);
ck_status ck_timer_stop(ck_ctx *ctx, ck_timer *t, double *ms); /* waits for the stop event */
bool ck_timer_is_cuda(const ck_timer *t);
void ck_timer_free(ck_timer *t);

/* ---------------------------------------------------------------- graphs (graph.c)
 * Capture the device work issued on the context's stream between begin and end into a CUDA graph, then
 * replay it with one launch. Arrays made during the capture, blocks freed during it and the operands of
 * every captured op stay alive (held by the graph) until ck_graph_free. Host work, synchronising and
 * reading values fail during a capture; after a failure, ck_graph_abort ends it. */
typedef struct ck_graph ck_graph;
ck_status ck_graph_begin(ck_ctx *ctx);
ck_status ck_graph_end(ck_ctx *ctx, ck_graph **out);
void ck_graph_abort(ck_ctx *ctx);
ck_status ck_graph_replay(ck_ctx *ctx, ck_graph *g);
int ck_graph_nodes(const ck_graph *g);
void ck_graph_free(ck_graph *g);
bool ck_capturing(const ck_ctx *ctx);
void ck_graph_keep_tensor(ck_ctx *ctx, const ck_tensor *t); /* no-op unless capturing */

/* ---------------------------------------------------------------- storage (storage.c) */
ck_status ck_storage_new(ck_ctx *ctx, ck_device dev, size_t bytes, ck_storage **out);
/* ... host memory page-locked when `pinned` and there is a GPU (ordinary memory without one). */
ck_status ck_storage_new_pinned(ck_ctx *ctx, ck_device dev, size_t bytes, bool pinned, ck_storage **out);
void ck_storage_retain(ck_storage *s);
void ck_storage_release(ck_storage *s);
/* Storage over memory the caller owns (host memory, or a device pointer for CK_CUDA): nothing is allocated
 * or copied, the bytes are not counted in ck_memory_stats, and release(ud, ptr) (may be NULL) is called when
 * the last reference goes. */
ck_status ck_storage_wrap(ck_ctx *ctx, ck_device dev, void *ptr, size_t bytes, void (*release)(void *ud, void *ptr),
                          void *ud, ck_storage **out);
/* Page-lock a wrapped host buffer (cudaHostRegister; undone before its release): copies from and to it run
 * asynchronously. Without a GPU nothing happens. */
ck_status ck_storage_register(ck_ctx *ctx, ck_storage *s);
/* Raw device workspace from the current device's caching allocator (stream-ordered reuse is safe: one stream per
 * device; a block only ever goes back to the device it came from). */
void *ck_dev_alloc(ck_ctx *ctx, size_t bytes);
void ck_dev_free(ck_ctx *ctx, void *p);
typedef struct ck_memstats {
  size_t in_use, cached, peak, allocations, cuda_mallocs, frees, cache_hits, oom_retries;
  size_t host_in_use;
  size_t pinned; /* page-locked host bytes (pinned arrays; every host device's) */
  size_t segments; /* device bytes in the 2 MiB segments that blocks up to 64 KiB are carved from */
} ck_memstats;
void ck_memory_stats(ck_ctx *ctx, ck_device dev, ck_memstats *out);
void ck_empty_cache(ck_ctx *ctx); /* every device */
/* Called once on cudaMalloc failure before the retry (the binding runs a full Lua GC here). */
void ck_set_oom_hook(ck_ctx *ctx, void (*hook)(void *ud), void *ud);
/* Extra device bytes newly allocated since the last call (the binding reports them to Lua's GC). */
size_t ck_take_alloc_debt(ck_ctx *ctx);

/* ---------------------------------------------------------------- tensors and views (tensor.c) */
size_t ck_dtype_size(ck_dtype dt);
const char *ck_dtype_name(ck_dtype dt);
/* "f32, f64, i32, f16, bf16": every dtype's name (kernels/dtypes.def), for messages, into buf. */
char *ck_dtype_list(char *buf, size_t n);
bool ck_dtype_parse(const char *s, ck_dtype *out);
bool ck_dtype_is_float(ck_dtype dt);
bool ck_dtype_is_signed(ck_dtype dt); /* a signed integer dtype (i8 i16 i32 i64) */
bool ck_dtype_is_complex(ck_dtype dt); /* c64, c128 */
ck_dtype ck_complex_part(ck_dtype dt); /* c64 -> f32, c128 -> f64; any other dtype itself */
const char *ck_dev_name(ck_devkind d); /* "cuda" / "host" */
int64_t ck_numel(const ck_tensor *t);
bool ck_is_contiguous(const ck_tensor *t);
static inline void *ck_data(const ck_tensor *t) {
  return (char *)t->st->ptr + t->offset * (int64_t)ck_dtype_size(t->dtype);
}
static inline ck_device ck_dev(const ck_tensor *t) { return t->st ? t->st->dev : CK_DEV_HOST; }
static inline bool ck_on_cuda(const ck_tensor *t) { return t->st && t->st->dev.kind == CK_CUDA; }
/* "f32[3x4] cuda" style description, for error messages. buf >= 96 bytes. Returns buf. */
char *ck_describe(const ck_tensor *t, char *buf, size_t n);
char *ck_shape_str(int ndim, const int64_t *shape, char *buf, size_t n); /* "[3x4]" */
/* Check the product of dims fits (elements * dtype size < 2^62); shape entries must be >= 0. */
ck_status ck_check_shape(ck_ctx *ctx, const char *op, int ndim, const int64_t *shape, ck_dtype dt);
/* Set t's shape to (ndim, shape) with row-major contiguous strides (size-0 dims count as 1). */
void ck_set_contiguous(ck_tensor *t, int ndim, const int64_t *shape);
ck_status ck_empty(ck_ctx *ctx, ck_tensor *out, ck_dtype dt, int ndim, const int64_t *shape, ck_device dev);
ck_status ck_empty_like(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t);
/* Like ck_empty, but when `like` (may be NULL) has this shape and a dense layout (a permutation of a
 * contiguous one, e.g. a transposed array), out gets the same memory order: elementwise results of
 * permuted operands then stream through memory instead of gathering (PyTorch keeps layouts the same way). */
ck_status ck_empty_layout(ck_ctx *ctx, ck_tensor *out, ck_dtype dt, int ndim, const int64_t *shape, ck_device dev,
                          const ck_tensor *like);
/* If t is dense (its elements fill [offset, offset+numel) exactly, in some dim order), write that order
 * (outermost first) to perm and return true. */
bool ck_dense_order(const ck_tensor *t, int *perm);
void ck_release(ck_tensor *t);                          /* idempotent */
void ck_view_of(ck_tensor *dst, const ck_tensor *src); /* dst = src, +1 ref */
/* Fails with CK_ERR_FREED naming `op` if t was freed. */
ck_status ck_check_live(ck_ctx *ctx, const char *op, const ck_tensor *t);
/* Both operands must be on the same device: the error names both and the :to that fixes it. */
ck_status ck_check_same_device(ck_ctx *ctx, const char *op, const ck_tensor *a, const ck_tensor *b);

/* Could writing `out` clobber an element of `in` that is still to be read? false when the storages or byte
 * ranges are disjoint, or when in is exactly out (elementwise in place is safe). */
bool ck_unsafe_alias(const ck_tensor *out, const ck_tensor *in);
/* Do x and y share any byte of memory? (same storage and overlapping byte ranges) */
bool ck_overlaps(const ck_tensor *x, const ck_tensor *y);
/* t's strides aligned to the trailing dims of an nd-dim broadcast shape (0 for missing and size-1 dims). */
void ck_aligned_strides(int64_t *dst, int nd, const ck_tensor *t);
/* An output whose elements share memory (stride 0 on a dim of extent > 1) cannot be written. */
ck_status ck_check_writable(ck_ctx *ctx, const char *op, const ck_tensor *out);

/* Views (share storage; `out` gets a new reference). Dims are 0-based here; the binding converts. */
ck_status ck_view_transpose(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, int d1, int d2);
ck_status ck_view_permute(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, const int *perm);
ck_status ck_view_narrow(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, int dim, int64_t start, int64_t len);
ck_status ck_view_select(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, int dim, int64_t index);
ck_status ck_view_reshape(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, int ndim, const int64_t *shape);
ck_status ck_view_expand(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, int ndim, const int64_t *shape);
/* A complex array as [..., 2] of its component dtype (view_as_real), and back (view_as_complex). */
ck_status ck_pair_view(ck_ctx *ctx, ck_tensor *out, const ck_tensor *z);
ck_status ck_complex_view(ck_ctx *ctx, ck_tensor *out, const ck_tensor *r);
/* Any array as u8 bytes (one more dim of the element size, unless it is 1): view_as_bytes. */
ck_status ck_byte_view(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t);
/* The result dtype of two arrays, for elementwise ops, matmul and ck.map's expressions: NumPy's table (rules in
 * dtype.c, the table in docs/api.md), except that i32 with a float type gives the float type; f16 with bf16
 * gives f32. Numbers are the caller's rule. */
ck_dtype ck_promote(ck_dtype a, ck_dtype b);
/* Broadcast shape of a and b (NumPy rules); error names both shapes and `op`. */
ck_status ck_broadcast_shape(ck_ctx *ctx, const char *op, const ck_tensor *a, const ck_tensor *b, int *ndim,
                             int64_t *shape);
/* The same rule on bare shapes, for callers with their own message (ck.map's binder): writes the broadcast of
 * (na, sa) and (nb, sb) to (*nd, shape) (which may be sa) and returns -1, or returns the 0-based dim of the
 * result where the two clash (and writes nothing). */
int ck_broadcast_dims(int na, const int64_t *sa, int nb, const int64_t *sb, int *nd, int64_t *shape);
/* Dim order and coalescing shared by the elementwise descriptor (ck_ew_order, ck_ew_coalesce) and ck.map's
 * geometry. st[o] (o < nops) are the operands' strides along the nd dims of shape.
 * ck_sort_dims: a stable sort of the dims by operand 0's |stride|, largest first (its memory order).
 * ck_coalesce_dims: drops size-1 dims and merges adjacent dims that are jointly contiguous in the first
 * `ncheck` operands (the others' strides move along); returns the new number of dims. Entries past it are
 * left as they were. */
void ck_sort_dims(int nd, int64_t *shape, int nops, int64_t *const *st);
int ck_coalesce_dims(int nd, int64_t *shape, int nops, int64_t *const *st, int ncheck);

/* ---------------------------------------------------------------- copies (copy.c) */
/* dst = src elementwise (same shape), across dtypes (cast) and devices; dst may be any strided view. */
ck_status ck_copy(ck_ctx *ctx, ck_tensor *dst, const ck_tensor *src);
/* ... with `async`: a transfer between pinned host memory and a device does not wait (it is ordered on the current
 * stream, and the pinned storage is kept alive until the stream passes it); pageable ones wait whatever is asked.
 * `ran` (may be NULL) says which it was, for ck.last_ran(). */
ck_status ck_copy_ex(ck_ctx *ctx, ck_tensor *dst, const ck_tensor *src, bool async, ck_ran *ran);
/* A contiguous host array in pinned memory (ordinary memory without a GPU); a pinned contiguous copy of a host array
 * (t itself when it is one already). */
ck_status ck_empty_pinned(ck_ctx *ctx, ck_tensor *out, ck_dtype dt, int ndim, const int64_t *shape, ck_device dev);
ck_status ck_pin(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t);
/* out = contiguous copy of t on `dev` with dtype `dt` (a view of t when nothing changes and t is contiguous). */
ck_status ck_to(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, ck_device dev, ck_dtype dt);
/* ... with ck_copy_ex's `async` and `ran`. */
ck_status ck_to_ex(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, ck_device dev, ck_dtype dt, bool async, ck_ran *ran);
ck_status ck_contiguous(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t);
/* Read/write raw values in logical (row-major) order; synchronises. buf holds numel * dtype size bytes. */
ck_status ck_read(ck_ctx *ctx, const ck_tensor *t, void *buf);
ck_status ck_write(ck_ctx *ctx, ck_tensor *t, const void *buf);
/* Fast path for copies whose source is a permuted dense layout (implemented in op_transpose.c):
 * CK_NOT_APPLICABLE when it does not apply. Both on CUDA, same dtype. */
ck_status ck_copy_permuted(ck_ctx *ctx, ck_tensor *dst, const ck_tensor *src);

/* ---------------------------------------------------------------- ops: one call record, one dispatcher
 * Every op is a ck_call run by ck_run (src/ops/dispatch.c), which does, once and in order: liveness and device
 * checks; the op's own argument checks (shapes, dims, result dtype); the dtype check against the registry's
 * masks (the host oracle's mask on the host); the variant name (unknown names and ids are errors on both
 * backends); output allocation or checking, with a temporary where the output overlaps an input; dtype
 * conversion of inputs; then the host oracle, or the variant picker, the layout copies the chosen variant
 * asks for, the launch, and the copies back. `ran` (may be NULL) says what ran: {id = -1, name = "host"}
 * for host arrays. Async: nothing here synchronises (unless CUKERN_SYNC=1).                              */
typedef enum { CK_OP_EW, CK_OP_REDUCE, CK_OP_MATMUL, CK_OP_TRANSPOSE, CK_OP_INDEX, CK_OP_SCAN, CK_OP_SORT, CK_OP_HIST,
               CK_OP_SEARCH, CK_OP_FFT, CK_OP_ROWS, CK_OP_ATTN, CK_OP_COMPLEX, CK_NOPKINDS } ck_opkind;

typedef struct ck_call {
  ck_opkind kind;
  int fn;                 /* CK_EW_* (elementwise) or CK_RED_* (reduce) */
  const ck_tensor *a, *b; /* inputs; b == NULL for a binary op: the number s1 stands there */
  const ck_tensor *c;     /* a third input (layer_norm's bias, attention's v), converted like a and b */
  ck_tensor *out;         /* out->st == NULL: ck_run allocates it; else the result goes there (any strides) */
  ck_tensor *idx;         /* reduce: 1-based i32 indices (argmax/argmin, or max/min when wanted); else NULL */
  double s1, s2;          /* elementwise: the number operand, POWS exponent, CLAMP bounds, generator args */
  int64_t si;             /* s1 exactly, when s_int: a Lua integer (i64 values beyond 2^53 stay exact) */
  bool s_int;
  bool scalar_left;       /* binary with a number: the number is the left operand */
  int dim;                /* reduce: 0-based dim, -1 = every element (0-d result unless keepdim) */
  bool keepdim;
  double alpha, beta;     /* matmul: C = alpha * A @ B + beta * C (beta ignored when out is allocated) */
  int precision;          /* matmul: CK_MM_EXACT (0), or CK_MM_TF32: f32 through TF32 tensor cores, opt-in */
  const char *variant;    /* NULL or "": the default; else a registry name or decimal id */
  /* index ops (CK_OP_INDEX, fn = CK_IX_*; src/ops/op_index.c says which operand is which): the index array
   * (1-based i32/i64) or mask, never converted; cat's inputs */
  const ck_tensor *ix;
  const ck_tensor *const *list;
  int nlist;
  bool distinct;          /* scatter, index_copy, put: the caller knows no destination repeats (a permutation's
                           * indices): the repeat check is skipped; the range check stays */
  bool exclusive;         /* scan: out(r) covers elements 0..r-1 (the identity at r == 0) */
  bool descending;        /* sort */
  int64_t k;              /* sort: keep the first k along dim (topk); 0: all. histc: the number of bins. fft: 0, or
                           * the last dim's length when the transform runs over dim and the last dim at once */
  int64_t fft_n;          /* fft: the transform's length (fn = CK_FFT_C2C/R2C/C2R, s1 = the scale) */
  bool inverse;           /* fft: exp(+2 pi i jk/n) */
  bool causal;            /* attention: key j takes part in query i's row only when j <= i */
} ck_call;

ck_status ck_run(ck_ctx *ctx, const ck_call *call, ck_ran *ran);
/* The op's own name ("add", "sum", "matmul", ...), as its messages say it; NULL for an unknown kind. */
const char *ck_op_name(const ck_call *call);

/* Shorthands that build one ck_call each (same semantics). */

/* C = alpha * A @ B + beta * C. A: [m,k] or [batch,m,k]; B: [k,n] or [batch,k,n]; a 2-D operand or a batch
 * of 1 broadcasts; f32 x f64 promotes to f64. If c->st == NULL, c is allocated (beta ignored). */
ck_status ck_matmul(ck_ctx *ctx, ck_tensor *c, const ck_tensor *a, const ck_tensor *b, double alpha,
                    double beta, const char *variant, ck_ran *ran);
/* Reductions along `dim` (0-based; -1 = all elements -> 0-d result unless keepdim). out: values (NULL for
 * pure arg ops); idx: i32 1-based indices (ARGMAX/ARGMIN, or MAX/MIN when the caller wants them; else NULL). */
ck_status ck_reduce(ck_ctx *ctx, int op, ck_tensor *out, ck_tensor *idx, const ck_tensor *x, int dim,
                    bool keepdim, const char *variant, ck_ran *ran);
/* out = transpose of the last two dims of x, materialised. */
ck_status ck_transpose(ck_ctx *ctx, ck_tensor *out, const ck_tensor *x, const char *variant, ck_ran *ran);
/* Elementwise: unary (POWS exponent s1, CLAMP lo/hi s1, s2); binary with broadcasting and promotion (out
 * may be an input with the same layout: in place); binary with a number (s OP a when scalar_left);
 * generators writing into an allocated `out` (FILL(s1), ARANGE(s1 + s2*i), EYE, RAND/RANDN with seed s1 and
 * counter offset s2). */
ck_status ck_ew_unary(ck_ctx *ctx, int op, ck_tensor *out, const ck_tensor *a, double s1, double s2,
                      const char *variant, ck_ran *ran);
ck_status ck_ew_binary(ck_ctx *ctx, int op, ck_tensor *out, const ck_tensor *a, const ck_tensor *b,
                       const char *variant, ck_ran *ran);
ck_status ck_ew_binary_scalar(ck_ctx *ctx, int op, ck_tensor *out, const ck_tensor *a, double s,
                              bool scalar_left, const char *variant, ck_ran *ran);
ck_status ck_ew_generate(ck_ctx *ctx, int op, ck_tensor *out, double s1, double s2);
/* FILL with an exact integer (a Lua integer): i64 values beyond 2^53 stay exact; a value the dtype cannot hold
 * is an error. */
ck_status ck_ew_fill_int(ck_ctx *ctx, ck_tensor *out, int64_t v);

/* ck.cat (stack false) / ck.stack (true) of list[0 .. n-1] along dim (0-based, normalised; stack: where the new dim
 * goes, 0..ndim) into a new contiguous out of `dtype` (a ck_dtype, or -1: the inputs' promoted dtype). Every input is
 * checked (live, one device, shapes) before out is allocated; inputs of another dtype or layout are copied; one
 * CK_IX_CAT launch per CK_CAT_MAX inputs (src/ops/join.c). `ran`: the last launch's. */
ck_status ck_join(ck_ctx *ctx, ck_tensor *out, const ck_tensor *const *list, int64_t n, int dim, bool stack, int dtype,
                  ck_ran *ran);

/* The compactions as one call (src/ops/op_index.c): fn CK_IX_NONZERO (out: new i64 [n] positions when `linear`, else
 * [n, ndim of mask] subscripts; a 0-d mask counts as 1-D) or CK_IX_MASKED_SELECT (out: new [n] of a's dtype, a of
 * mask's shape). The count, out allocated at its size, the selection. `ran`: the selection's. */
ck_status ck_compact(ck_ctx *ctx, int fn, ck_tensor *out, const ck_tensor *a, const ck_tensor *mask, bool linear,
                     ck_ran *ran);
/* Scans along `dim` (0-based; CK_SCAN_SUM/PROD/MAX/MIN, src/ops/op_scan.c): out has x's shape; sums and
 * products of integers and bool are i64. */
ck_status ck_scan(ck_ctx *ctx, int op, ck_tensor *out, const ck_tensor *x, int dim, bool exclusive,
                  const char *variant, ck_ran *ran);
int ck_scan_op_parse(const char *name); /* "cumsum", "cumprod", "cummax", "cummin" -> CK_SCAN_*, or -1 */
const char *ck_scan_op_name(int op);
/* Stable sort along `dim` (src/ops/op_sort.c): out (values, may be NULL) and idx (1-based i64 positions, may be
 * NULL: the values only), at least one of them; k > 0 keeps the first k along dim (topk: descending, k largest). */
ck_status ck_sort(ck_ctx *ctx, ck_tensor *out, ck_tensor *idx, const ck_tensor *x, int dim, bool descending,
                  int64_t k, const char *variant, ck_ran *ran);
/* Histogram (src/ops/op_hist.c): out (i64 [bins]) counts the elements of x in `bins` equal bins over [lo, hi]. */
ck_status ck_histc(ck_ctx *ctx, ck_tensor *out, const ck_tensor *x, int64_t bins, double lo, double hi,
                   const char *variant, ck_ran *ran);
/* searchsorted (src/ops/op_search.c): out (i64, values' shape) = 1-based insertion positions of values in the
 * 1-D ascending `sorted` (same dtype); right: after equal elements. */
ck_status ck_searchsorted(ck_ctx *ctx, ck_tensor *out, const ck_tensor *sorted, const ck_tensor *values, bool right,
                          const char *variant, ck_ran *ran);

/* The FFT along `dim` (0-based; src/ops/op_fft.c, issue 35): kind CK_FFT_C2C/R2C/C2R (kernels/fft/fft.h), x's
 * length along dim n (C2R: n/2 + 1), out = scale * the transform. */
ck_status ck_fft(ck_ctx *ctx, int kind, bool inverse, ck_tensor *out, const ck_tensor *x, int64_t n, int dim,
                 double scale, const char *variant, ck_ran *ran);
const char *ck_fft_kind_name(int kind); /* "fft", "rfft", "irfft" for CK_FFT_C2C, R2C, C2R */
/* Row ops along `dim` (0-based; CK_ROWS_*, src/ops/op_rows.c; issue 37): out has x's shape and dtype. w, b: the
 * norms' weight and bias of x's shape along dim, or NULL; eps: the norms' epsilon (s1 of the call). */
ck_status ck_rows(ck_ctx *ctx, int fn, ck_tensor *out, const ck_tensor *x, int dim, const ck_tensor *w,
                  const ck_tensor *b, double eps, const char *variant, ck_ran *ran);
int ck_rows_fn_parse(const char *name); /* "softmax", "log_softmax", "layer_norm", "rms_norm" -> CK_ROWS_*, or -1 */
const char *ck_rows_fn_name(int fn);
/* Fused complex ops (src/ops/op_complex.c, issue 35): fn CK_CX_* (kernels/complex/complex.h), one pass each.
 * Binary (add sub mul div eq ne): a, b arrays (broadcast; real ones promote) or b NULL and the number s_re + i s_im
 * (on the left when scalar_left); unary (neg conj exp log sqrt abs angle): a; sums (sum mean): a along dim
 * (0-based, -1: all) with keepdim. */
ck_status ck_complex_op(ck_ctx *ctx, int fn, ck_tensor *out, const ck_tensor *a, const ck_tensor *b, double s_re,
                        double s_im, bool scalar_left, int dim, bool keepdim, const char *variant, ck_ran *ran);
int ck_cx_fn_parse(const char *name); /* "add" ... "mean" -> CK_CX_*, or -1 */
const char *ck_cx_fn_name(int fn);
/* Scaled dot-product attention (src/ops/op_attn.c): q [B,H,Sq,D], k [B,H,Skv,D], v [B,H,Skv,Dv] -> out
 * [B,H,Sq,Dv]; scale (NaN: 1/sqrt(D)); mask (bool: true takes part; or added, q's dtype) broadcasting to
 * [B,H,Sq,Skv], or NULL; causal: top-left aligned (key j <= query i). */
ck_status ck_attention(ck_ctx *ctx, ck_tensor *out, const ck_tensor *q, const ck_tensor *k, const ck_tensor *v,
                       const ck_tensor *mask, bool causal, double scale, const char *variant, ck_ran *ran);

/* ---------------------------------------------------------------- registry
 * The variant table behind a public op name: a ladder name ("matmul", "reduce", "transpose", "elementwise")
 * or any op that runs on one ("sum", "add", "gemm", ...); NULL if unknown. (src/ops/dispatch.c) */
const ck_variant *ck_variants(const char *name, int *count);
/* What row `row` of ladder `tab` (as ck_variants returned it) launched the last time it ran on the GPU in
 * this context: false if it never did. *library as in ck_ran. (src/ops/dispatch.c) */
bool ck_variant_last(ck_ctx *ctx, const ck_variant *tab, int row, ck_launch_note *kernels, bool *library);
/* Derive every ladder's preference orders from its rung table (once per process; ck_ctx_create calls it). */
void ck_registry_init(void);
/* Resolve a requested variant for `desc` (see ck_run). `preferred` is the default order (ids, -1
 * terminated). Returns NULL with an error in ctx when nothing can run the case. (src/core/registry.c) */
const ck_variant *ck_pick_variant(ck_ctx *ctx, const char *op, const ck_variant *tab, int n,
                                  const char *requested, const int *preferred, ck_dtype dt,
                                  const void *desc, ck_ran *ran);
/* The row a request names (decimal id or name), or NULL. (src/core/registry.c) */
const ck_variant *ck_find_variant(const ck_variant *tab, int n, const char *requested);
/* A default preference order as it applies now: without the `batched` head when batching is not active. */
const int *ck_active_order(ck_ctx *ctx, const ck_variant *tab, int n, const int *order);

/* ---------------------------------------------------------------- run-time kernels (rtc.c) */
typedef struct ck_rtc_kernel ck_rtc_kernel;
ck_status ck_rtc_compile(ck_ctx *ctx, const char *src, const char *entry, const char *opts, ck_rtc_kernel **out,
                         char **log_out);
ck_status ck_rtc_launch(ck_ctx *ctx, ck_rtc_kernel *k, const unsigned grid[3], const unsigned block[3],
                        size_t smem, void **args);
void ck_rtc_free(ck_rtc_kernel *k);

/* ---------------------------------------------------------------- host reference (host_*.c)
 * The oracle: every GPU variant is checked against these. They take host tensors of any strides whose
 * arguments ck_run has already validated (shapes agree, outputs allocated and not overlapping the inputs,
 * dims normalised): they check nothing again. */
ck_status ck_host_matmul(ck_ctx *ctx, ck_tensor *c, const ck_tensor *a, const ck_tensor *b, double alpha,
                         double beta);
ck_status ck_host_reduce(ck_ctx *ctx, int op, ck_tensor *out, ck_tensor *idx, const ck_tensor *x, int dim,
                         int64_t len);
ck_status ck_host_elementwise(ck_ctx *ctx, const ck_ew_desc *d);
/* Scans and sorts (issue 33) on the validated descriptor: host pointers, x contiguous [outer, len, inner]. */
ck_status ck_host_scan(ck_ctx *ctx, const ck_scan_desc *d);
ck_status ck_host_sort(ck_ctx *ctx, const ck_sort_desc *d);
ck_status ck_host_hist(ck_ctx *ctx, const ck_hist_desc *d);
ck_status ck_host_search(ck_ctx *ctx, const ck_search_desc *d); /* host_sort.c: the sort's keys */
/* Row ops and attention (issue 37, host_rows.c) on their descriptors of host pointers; f64 throughout. */
ck_status ck_host_rows(ck_ctx *ctx, const ck_rows_desc *d);
ck_status ck_host_attention(ck_ctx *ctx, const ck_attn_desc *d);
/* One dense run of a unary or binary elementwise op (any real dtype the row takes; b NULL for a unary op): out[i] =
 * op(a[i], b[i]) for i < n, by the host backend's own row function, the table's expression (ew_ops.def)
 * compiled for the host. ck.map's evaluator runs the operators and functions it shares with the table here. */
void ck_host_ew_run(int op, ck_dtype dt, void *out, const void *a, const void *b, int64_t n);
/* COPY's conversion of n contiguous elements from dtype `from` to `to` (any two real dtypes; the rules of
 * host_elementwise.c's ew_cast_table): for ck.map's host evaluator, so its casts are the library's. */
void ck_host_ew_cast(ck_dtype to, void *out, ck_dtype from, const void *a, int64_t n);
ck_status ck_host_copy(ck_ctx *ctx, ck_tensor *dst, const ck_tensor *src); /* strided, with cast */
/* The index ops' oracle (host_index.c) on a ck_ix_desc of host pointers: the scan of the index (the first
 * position out of range, the first that repeats a destination written by `first`; -1: none), and the op. */
void ck_host_index_check(const ck_ix_desc *d, int64_t *bad, int64_t *dup, int64_t *first);
void ck_host_index(const ck_ix_desc *d);
const char *ck_index_fn_name(int fn); /* "gather", ... (op_index.c) */

#include "ck_stream.h" /* streams, events, pinned transfers, NVTX (issue 36) */

#endif
