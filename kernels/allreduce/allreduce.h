/*
 * allreduce.h — the all-reduce ladder across the GPUs of ONE process: in place, asynchronous.
 *
 * Every device i holds `count` elements in buf[i]; afterwards every buf[i] holds op over all devices (element
 * by element). The rungs (kernels/allreduce/NN_*.cu, table: rungs.def) differ only in how the bytes travel:
 *   0 nccl     ncclAllReduce (implemented elsewhere): the library reference
 *   1 gather   everything through device 0: peer copies in, combine, peer copies out
 *   2 oneshot  every device reads every peer's buffer over NVLink in one kernel
 *   3 ring     reduce-scatter + all-gather around a ring of peer copies (NCCL's algorithm, by hand)
 * Unlike the other ladders a launcher takes no ck_env: it drives n streams on n devices, given here.
 * Arithmetic: f16/bf16 are combined in f32 and stored rounded; i32 sum and prod wrap (two's complement);
 * AVG is SUM, then divided by n (float dtypes only); max/min of floats are fmax/fmin (a NaN loses to a number).
 * C-includable (no C++ here).
 */
#ifndef CK_ALLREDUCE_H
#define CK_ALLREDUCE_H

#include <stdint.h>

#include "ck_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CK_AR_MAX_DEV 64
enum { CK_AR_SUM = 0, CK_AR_PROD = 1, CK_AR_MAX = 2, CK_AR_MIN = 3, CK_AR_AVG = 4 };
#define CK_AR_NOPS 5

typedef struct ck_ar_desc {
  int n;                        /* devices taking part, 1..CK_AR_MAX_DEV */
  int device[CK_AR_MAX_DEV];    /* their CUDA ordinals */
  void *stream[CK_AR_MAX_DEV];  /* cudaStream_t on device[i]: all work for device i goes there */
  void *event[CK_AR_MAX_DEV];   /* a cudaEvent_t (created with cudaEventDisableTiming on device[i]) the launcher may
                                   record/wait freely */
  void *buf[CK_AR_MAX_DEV];     /* in place: count elements on device[i]; result replaces it on every device */
  void *scratch[CK_AR_MAX_DEV]; /* count elements of scratch on device[i] (the caller allocates it) */
  int64_t count;                /* elements per device, >= 0 */
  ck_dtype dtype;               /* CK_F32, CK_F64, CK_I32, CK_F16, CK_BF16 (others: return cudaErrorInvalidValue) */
  int op;                       /* CK_AR_*; AVG only for float dtypes */
} ck_ar_desc;

/* Each returns 0 or a cudaError_t. Preconditions: peer access enabled between every pair (caller), count*size fits.
 * They restore the caller's current device before returning. Ordering: work already queued on stream[i] before the
 * call happens-before this all-reduce's reads of buf[i]; later work on stream[i] sees the result (use events across
 * streams). A desc that ck_allreduce_supports declines gives cudaErrorInvalidValue and queues nothing. */
int ck_allreduce_gather(const ck_ar_desc *d);  /* rung 1 */
int ck_allreduce_oneshot(const ck_ar_desc *d); /* rung 2 */
int ck_allreduce_ring(const ck_ar_desc *d);    /* rung 3 */
const char *ck_allreduce_supports(const ck_ar_desc *d); /* NULL or why not (dtype/op/n) */

/* The S column of rungs.def: each rung's supports() in the house form (desc is a const ck_ar_desc *); all three
 * decline exactly what ck_allreduce_supports declines. */
const char *ck_allreduce_gather_supports(const void *desc);
const char *ck_allreduce_oneshot_supports(const void *desc);
const char *ck_allreduce_ring_supports(const void *desc);

#ifdef __cplusplus
}
#endif
#endif
