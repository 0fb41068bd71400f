/*
 * nccl_dl.h — NCCL loaded at run time (dlopen), and the maps from cukern's dtypes and reduction ops to NCCL's.
 *
 * Why run time: cukern must load and run on a machine without libnccl (one GPU, or none), so the library is
 * never linked with -lnccl. <nccl.h> is included only for its types (ncclComm_t, ncclResult_t, ...); every call
 * goes through the function pointers of ck_nccl(), which loads libnccl once and never fails: when NCCL is
 * missing, loaded is false and `why` says what was tried and what went wrong, for the error the caller raises.
 *
 * NVLink multicast (NVLS) stays off: loading sets NCCL_NVLS_ENABLE=0 unless the environment already sets it,
 * and nothing in cukern calls cuMulticastCreate (the shared GPU host must not have multicast objects made).
 *
 * Nothing here prints, exits or raises; errors are return values and messages in caller-supplied buffers.
 */
#ifndef CK_NCCL_DL_H
#define CK_NCCL_DL_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda_runtime_api.h>
#include <nccl.h> /* types only: never link -lnccl into the library */

/* ncclConfig_t appeared in 2.14 (with NCCL_CONFIG_INITIALIZER); against an older header the pointer is opaque. */
#ifdef NCCL_CONFIG_INITIALIZER
typedef ncclConfig_t ck_nccl_config;
#else
typedef void ck_nccl_config;
#endif

/* The collective reduction ops, by fixed code (the binding and the Lua layer pass these numbers). */
enum { CK_COLL_SUM, CK_COLL_PROD, CK_COLL_MAX, CK_COLL_MIN, CK_COLL_AVG, CK_NCOLL_OPS };
const char *ck_coll_op_name(int op);     /* "sum", "prod", "max", "min", "avg"; "?" for an unknown code */
int ck_coll_op_parse(const char *name);  /* the code of one of those names; -1 for anything else (or NULL) */

typedef struct ck_nccl_api {
  bool loaded;    /* every required symbol was found; otherwise all pointers are NULL */
  char why[256];  /* when !loaded: which library paths were tried and dlerror's text, or the missing symbol */
  char path[256]; /* the file that was loaded (as the dynamic loader resolved it), "" when none */
  int version;    /* ncclGetVersion's code (2.9+: major*10000 + minor*100 + patch), 0 when not loaded */
  void *handle;   /* dlopen's handle (kept open for the life of the process) */

  ncclResult_t (*GetVersion)(int *version);
  ncclResult_t (*GetUniqueId)(ncclUniqueId *uniqueId);
  ncclResult_t (*CommInitRank)(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank);
  /* NULL when the library lacks it (before 2.14). ncclConfig_t's layout is versioned by NCCL itself
   * (its size and magic fields, NCCL_CONFIG_INITIALIZER), so a config built from our header is safe. */
  ncclResult_t (*CommInitRankConfig)(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                     ck_nccl_config *config);
  ncclResult_t (*CommInitAll)(ncclComm_t *comm, int ndev, const int *devlist);
  ncclResult_t (*CommFinalize)(ncclComm_t comm); /* NULL before 2.14 */
  ncclResult_t (*CommDestroy)(ncclComm_t comm);
  ncclResult_t (*CommAbort)(ncclComm_t comm);
  ncclResult_t (*CommGetAsyncError)(ncclComm_t comm, ncclResult_t *asyncError);
  ncclResult_t (*CommCount)(const ncclComm_t comm, int *count);
  ncclResult_t (*CommCuDevice)(const ncclComm_t comm, int *device);
  ncclResult_t (*CommUserRank)(const ncclComm_t comm, int *rank);
  ncclResult_t (*AllReduce)(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                            ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*AllGather)(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                            ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*ReduceScatter)(const void *sendbuff, void *recvbuff, size_t recvcount,
                                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*Broadcast)(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                            int root, ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*Reduce)(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                         ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*Send)(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream);
  ncclResult_t (*Recv)(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream);
  ncclResult_t (*GroupStart)(void);
  ncclResult_t (*GroupEnd)(void);
  const char *(*GetErrorString)(ncclResult_t result);
  const char *(*GetLastError)(ncclComm_t comm); /* NULL before 2.13 */
} ck_nccl_api;

/* The process's NCCL, loaded on the first call (pthread_once: thread-safe; later calls only return the
 * pointer). Never NULL, never fails: check ->loaded and report ->why otherwise.
 * Where it looks, in order: $CUKERN_NCCL_LIB alone when set (an explicit path is never silently replaced by
 * another library; set it to a bad path to test the NCCL-missing path); else "libnccl.so.2" and "libnccl.so"
 * by the loader's own search (LD_LIBRARY_PATH, rpath, ldconfig), then libnccl.so.2 / libnccl.so in
 * $CUDA_HOME/lib64, $CUDA_HOME/lib, /usr/local/cuda/lib64, /usr/local/cuda/lib.
 * Before loading it sets NCCL_NVLS_ENABLE=0 when that variable is unset (setenv: call it before other threads
 * read the environment, e.g. at module load). */
const ck_nccl_api *ck_nccl(void);

/* ncclGetErrorString's text when NCCL is loaded, else a local table's; never NULL. */
const char *ck_nccl_strerror(ncclResult_t r);

/* A cukern dtype id (ck_dtype, kernels/dtypes.def) to NCCL's type; false when NCCL has no such type (or the
 * id is unknown), and for bf16 when the loaded NCCL is older than 2.10. */
bool ck_nccl_dtype(int ck_dtype_id, ncclDataType_t *out);
/* A CK_COLL_* code to NCCL's op; false for an unknown code, and for avg when the loaded NCCL is older than
 * 2.10. (max and min on a dtype NCCL has are exact; sum/prod/avg round as NCCL's ring/tree order does.) */
bool ck_nccl_redop(int op, ncclRedOp_t *out);

/* Wait until every stream is idle, without hanging: polls cudaStreamQuery(streams[i]) (after
 * cudaSetDevice(devices[i]) when devices is not NULL; the caller's current device is restored before return)
 * and ncclCommGetAsyncError on every comm, sleeping between polls (20 us, doubling to 1 ms).
 * timeout_s <= 0: no time limit (async errors are still polled).
 * Returns 0 when all streams finished. Otherwise nonzero, with `err` (errn bytes, may be 0) saying why:
 *   "timed out after 30 s waiting for rank 1 (device 1, stream 2 of 2); communicators aborted"
 *   "NCCL async error on rank 1 (device 1): remote process exited or there was a network error (last error:
 *    ...); communicators aborted"
 *   "CUDA error on device 1 (stream 2 of 2): an illegal memory access was encountered; communicators aborted"
 * The message does not name the collective: the caller prefixes it ("NCCL all_reduce: " ...).
 * On any failure every comm is aborted with ncclCommAbort (so no rank blocks for ever) and its slot in comms[]
 * set to NULL: the caller must not destroy those again. Unloaded api: returns nonzero with api->why. */
int ck_nccl_wait(const ck_nccl_api *api, ncclComm_t *comms, int ncomms, cudaStream_t *streams, const int *devices,
                 int nstreams, double timeout_s, char *err, size_t errn);

#endif
