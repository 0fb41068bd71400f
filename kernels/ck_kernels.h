/*
 * ck_kernels.h — the contract between the C core (src/) and the device code (kernels/).
 *
 * Included by C (gcc) and CUDA (nvcc) code alike: no C++ and no Lua here. The core builds a descriptor
 * (plain data: sizes, element strides, device pointers), picks a variant from the op's registry table and
 * calls its launcher on the context's stream. Launchers return 0 on success, a cudaError_t, or
 * CK_KERR_CUBLAS(status); they never synchronise, allocate with cudaMalloc, or print.
 * Launchers note each kernel of ours they launch (ck_note, right before the <<<...>>>) for introspection.
 * The one piece of C++ here is ck_note's template overload at the end, for the kernels' convenience.
 */
#ifndef CK_KERNELS_H
#define CK_KERNELS_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CK_MAX_DIMS 8

/* The storage of the complex dtypes (interleaved, NumPy's layout): what dtypes.def's CTYPE column names. */
typedef struct { float re, im; } ck_c64_t;
typedef struct { double re, im; } ck_c128_t;

typedef enum { /* one per row of kernels/dtypes.def, in row order */
#define CK_DTYPE(ID, NAME, CTYPE, SIZE, CLASS, BITS, NCCL, ALIASES) CK_##ID,
#include "dtypes.def"
#undef CK_DTYPE
  CK_NDTYPES
} ck_dtype;
#define CK_DT_BIT(d) (1u << (d))
#define CK_DT_FLOATS (CK_DT_BIT(CK_F32) | CK_DT_BIT(CK_F64))
#define CK_DT_ALL3 (CK_DT_BIT(CK_F32) | CK_DT_BIT(CK_F64) | CK_DT_BIT(CK_I32))
#define CK_DT_HALVES (CK_DT_BIT(CK_F16) | CK_DT_BIT(CK_BF16)) /* 2-byte floats (kernels/half.h) */
#define CK_DT_ALL5 (CK_DT_ALL3 | CK_DT_HALVES) /* the five dtypes of the teaching rungs (issue 32 added the rest) */
#define CK_DT_ALL ((1u << CK_NDTYPES) - 1u) /* every row of dtypes.def */
#define CK_DT_COMPLEX (CK_DT_BIT(CK_C64) | CK_DT_BIT(CK_C128)) /* moved as real pairs; the FFT's rungs take them */
#define CK_DT_FP8 (CK_DT_BIT(CK_E4M3) | CK_DT_BIT(CK_E5M2))     /* moved as bytes; the FP8 matmul rows take them */
#define CK_DT_MOVED (CK_DT_COMPLEX | CK_DT_FP8)                  /* the core moves and casts them (dtypes.def) */
#define CK_DT_COMPUTE (CK_DT_ALL & ~CK_DT_MOVED) /* every dtype the elementwise, reduction, ... ladders compute in */
#define CK_DT_STORAGE (CK_DT_COMPUTE & ~CK_DT_ALL5) /* bool and the integers of issue 32 (the teaching rungs' refusals) */
/* the real dtypes of 2, 4 and 8 bytes: what a kernel that moves bits by element size takes (the transpose ladder;
 * complex arrays are moved as real pairs by the core, ck_pair_view) */
#define CK_DT_WORDS (CK_DT_ALL5 | CK_DT_BIT(CK_I16) | CK_DT_BIT(CK_U32) | CK_DT_BIT(CK_I64))
/* the integer dtypes (bool not among them): what the integer matmul (wrapping modulo 2^bits) takes */
#define CK_DT_INTS (CK_DT_BIT(CK_I32) | CK_DT_BIT(CK_U8) | CK_DT_BIT(CK_I8) | CK_DT_BIT(CK_I16) | CK_DT_BIT(CK_U32) | \
                    CK_DT_BIT(CK_I64))

#define CK_KERR_CUBLAS(s) (100000 + (int)(s))

/* The launch record: which kernels of ours a launcher started, with what block and dynamic shared memory.
 * Plain data, written on every launch (a few stores): the attributes (registers, spills, occupancy) are
 * looked up from `fn` only when someone asks (src/core/kinfo.c), so the launch path stays as cheap as it was.
 * Library calls (cuBLAS, CUB's own kernels, geam) note nothing: they are not ours to describe. */
/* The most devices of one kind a process drives (cuda:0 .. cuda:63); kernel attribute caches keep a flag or a
 * value per device, since cudaFuncSetAttribute and occupancy apply to the current device only (issue 31). */
#define CK_MAX_DEVICES 64
/* A launcher's once-per-device cache: a flag ("the attribute is raised") or a value (occupancy) for each device,
 * in a zero-initialised static. Races between two threads are benign: both store the same value (a lost flag
 * costs one more cudaFuncSetAttribute). */
typedef struct ck_devcache {
  int v[CK_MAX_DEVICES];
} ck_devcache;
#define CK_NOTE_MAX 6 /* the most kernels one launch records (two-pass reductions launch 2 or 3, onesweep 5) */
typedef struct ck_launch {
  const void *fn; /* the __global__ function's host stub, as cudaFuncGetAttributes takes it */
  int block;      /* threads per block */
  size_t smem;    /* dynamic shared memory per block, bytes */
} ck_launch;
typedef struct ck_launch_note {
  int n;
  ck_launch k[CK_NOTE_MAX];
} ck_launch_note;

/* ---------------------------------------------------------------- the batch of small ops
 * A dense op on a few elements costs one kernel launch (~4 us of host time on the H100 host) and almost no
 * device time. The `batched` variant of the elementwise, reduce and matmul ladders (kernels/batched/) does not
 * launch: it appends one record to the context's batch, and ck_batch_flush starts ONE kernel (one block)
 * that runs the records in order, a block barrier between consecutive records. The core flushes before any
 * other work touches the stream (every other launch, copies, synchronisation, events, graph capture,
 * cudaFree) and when the batch is full, so the device sees exactly the order the ops were issued in.
 * Records are passed by value as the kernel's parameter (<= 4 KB: every CUDA version takes that). */
#define CK_BATCH_MAX 56          /* records per launch: 56 x 64 B + 8 B of parameters */
#define CK_BATCH_MAX_ELEMS 4096  /* per op: elementwise numel, reduce outer*len*inner, matmul m*n (k <= 256) */
enum { CK_BATCH_EW = 0, CK_BATCH_RED = 1, CK_BATCH_MM = 2 };
typedef struct ck_batch_rec {
  void *out;
  const void *a, *b; /* reduce: b is the i32 index output (or NULL) */
  double s1, s2;     /* elementwise scalars; matmul alpha, beta */
  int32_t n0, n1, n2; /* elementwise: numel; reduce: outer, len, inner; matmul: m, n, k */
  int16_t op;         /* CK_EW_* / CK_RED_* (the effective one) / 0 */
  uint8_t kind, odt, adt, mode; /* CK_BATCH_*, out and input dtypes, elementwise b mode (ew_math.cuh BM_*) */
} ck_batch_rec;
typedef struct ck_batch {
  int32_t n, pad_;
  ck_batch_rec rec[CK_BATCH_MAX];
} ck_batch;
/* Launch the batch's records (if any) on `stream` and empty it: 0 or a cudaError_t. */
int ck_batch_flush(ck_batch *q, void *stream);

/* What a launcher gets besides its descriptor. */
typedef struct ck_env {
  int device;    /* the CUDA ordinal everything below belongs to (the current device during the launch) */
  void *stream;  /* cudaStream_t */
  void *cublas;  /* cublasHandle_t, already bound to `stream` */
  int sm_count, cc_major, cc_minor;
  size_t smem_optin;  /* max dynamic shared memory per block after cudaFuncSetAttribute */
  size_t l2_bytes;
  /* Device workspace from the caching allocator; free it before returning (stream order makes that safe). */
  void *(*ws_alloc)(void *owner, size_t bytes);
  void (*ws_free)(void *owner, void *p);
  void *owner;
  ck_launch_note *note; /* where launches are recorded; NULL: nobody is listening */
  ck_batch *batch;      /* where `batched` variants append; NULL: they launch their record at once (batching
                           off, CUKERN_SYNC, graph capture) */
  /* CUKERN_CHECK_ORDER=1 only (NULL otherwise): the number of batched ops still queued, and the context's count
   * of launches that found it non-zero. Every launch goes through the core's one launch function (ck_submit, src/core/context.c),
   * which runs the queue first, so only a path that bypasses it can trip this (launches that join the batch are
   * not checked: they find it non-empty by design); the core reports it at its next launch or flush. */
  const int32_t *order_queued;
  int *order_faults;
  void *cublaslt; /* cublasLtHandle_t of the device (matmul's FP8 row), made with the cuBLAS handle; not stream-bound
                     (cublasLtMatmul takes the stream) */
  void *cusolver; /* cusolverDnHandle_t of the device, bound to `stream`, for a launch that asked for it
                     (ck_launch_req.needs_cusolver: the linalg layer, the LU ladder's rung 0); NULL otherwise. Made on
                     first such launch through cuSOLVER's run-time table (kernels/linalg/cusolver_dl.h) */
} ck_env;

/* The raw wrappers' check of the issue order (CUKERN_CHECK_ORDER): called by ck_note_launch for our kernels and
 * by the library launchers (cuBLAS, CUB, geam) and the core's memcpy / run-time kernel / graph launchers. */
static inline void ck_order_check(const ck_env *env) {
  if (env->order_queued && *env->order_queued) ++*env->order_faults;
}

/* Record one launch of kernel `fn` (before its <<<...>>>). Repeats of one configuration (a grid split into
 * several launches, a multi-pass loop) are recorded once; past CK_NOTE_MAX distinct kernels the rest are
 * dropped (no launcher of ours starts more). */
static inline void ck_note_launch(const ck_env *env, const void *fn, int block, size_t smem) {
  ck_order_check(env);
  ck_launch_note *n = env->note;
  if (!n) return;
  for (int i = 0; i < n->n; ++i)
    if (n->k[i].fn == fn && n->k[i].block == block && n->k[i].smem == smem) return;
  if (n->n < CK_NOTE_MAX) {
    n->k[n->n].fn = fn;
    n->k[n->n].block = block;
    n->k[n->n].smem = smem;
    n->n++;
  }
}

/* One rung of a ladder. */
typedef struct ck_variant {
  int id;              /* 0 = library reference */
  const char *name;    /* short, lowercase: "naive", "smem", "cublas" */
  const char *summary; /* one line */
  unsigned dtypes;     /* CK_DT_BIT mask */
  unsigned flags;      /* CK_VF_* below */
  int (*launch)(const void *desc, const ck_env *env);
  const char *(*supports)(const void *desc); /* NULL: yes; else the reason it cannot (static string) */
  unsigned char rank[4]; /* position in each of the ladder's preference orders (1 first, 0 absent) */
} ck_variant;

/* For the rung tables (kernels/<op>/rungs.def): single-dtype masks, and the macros that turn a row into a
 * registry row (variants.c) or a prototype (launchers.h). */
#define CK_DTM_F32 CK_DT_BIT(CK_F32)
#define CK_DTM_F64 CK_DT_BIT(CK_F64)
#define CK_DTM_I32 CK_DT_BIT(CK_I32)
#define CK_DTM_F16 CK_DT_BIT(CK_F16)
#define CK_DTM_BF16 CK_DT_BIT(CK_BF16)
#define CK_CAT_(a, b) a##b
#define CK_CAT(a, b) CK_CAT_(a, b)
#define CK_UNPAREN(...) __VA_ARGS__
#define CK_RUNG_SUP_S(fn) CK_CAT(fn, _supports)
#define CK_RUNG_SUP_N(fn) NULL
/* One registry row of ladder PREFIX (ck_matmul_, ...): {id, "name", summary, dtypes, flags, launch, supports,
 * ranks}. */
#define CK_RUNG_ROW(PREFIX, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)                                             \
  {ID, #NAME, SUMMARY, DTYPES, FLAGS, CK_CAT(PREFIX, NAME), CK_RUNG_SUP_##SUP(CK_CAT(PREFIX, NAME)), {CK_UNPAREN RANKS}},

/* Layout needs a dispatcher satisfies (by copying) before it calls the launcher. */
#define CK_VF_ROWMAJOR 1u   /* matmul: a_cs == b_cs == c_cs == 1; transpose: in_cs == 1 and out_cs == 1 */
#define CK_VF_BLAS 2u       /* matmul: each operand has a unit stride in one of its two dims (cuBLAS) */
#define CK_VF_CONTIGUOUS 4u /* elementwise: every operand contiguous, same shape (scalars allowed) */
#define CK_VF_TMA 8u        /* matmul: A and B as a TMA tensor map takes them (kernels/matmul/mm_tma.h), else copies */
#define CK_VF_BATCHED 16u   /* the launcher only appends to env->batch: the dispatcher does not flush before it */

enum { CK_MM_EXACT = 0, CK_MM_TF32 = 1 };

/* ---------------------------------------------------------------- matmul
 * C[b,i,j] = alpha * sum_p A[b,i,p] * B[b,p,j] + beta * C[b,i,j]   (beta == 0: C is not read; it may hold NaN)
 * A[b,i,p] at a + b*a_bs + i*a_rs + p*a_cs (element strides). a_bs/b_bs may be 0 (broadcast batch).
 * Any m, n, k >= 0 (k == 0: C = beta*C). batch >= 1.                                                    */
typedef struct ck_mm_desc {
  int dtype;     /* of A (and of B, except in a mixed FP8 product: b_dtype below) */
  int c_dtype;   /* of C: dtype, or f32 for f16/bf16 inputs accumulated into an f32 output */
  int precision; /* CK_MM_EXACT, or CK_MM_TF32 (f32 inputs through the tensor cores' TF32 mode; opt-in) */
  int64_t batch, m, n, k;
  const void *a;
  int64_t a_bs, a_rs, a_cs;
  const void *b;
  int64_t b_bs, b_rs, b_cs;
  void *c;
  int64_t c_bs, c_rs, c_cs;
  double alpha, beta;
  int b_dtype; /* of B: dtype, or the other FP8 dtype for e4m3 x e5m2 / e5m2 x e4m3 (issue 37); every filler sets it
                * (last, so that the fields before it keep their offsets) */
} ck_mm_desc;

/* ---------------------------------------------------------------- reduce
 * x is contiguous and viewed as [outer, len, inner]: element (o, r, i) at x[(o*len + r)*inner + i].
 * out[o*inner + i] = op over r. len >= 1 (the dispatcher handles len == 0). outer*inner >= 1.
 * SUM/PROD/MEAN propagate NaN; MAX/MIN return NaN if any element is NaN; ARGMAX/ARGMIN treat NaN as the
 * extreme (first NaN wins); ties go to the first index. idx (i32, 1-based) is written when non-NULL
 * (ARG ops, and MAX/MIN when indices are wanted). i32 SUM/PROD wrap modulo 2^32. MEAN = SUM / len.      */
enum { /* the op ids: one per row of kernels/reduce/reduce_ops.def, in row order */
#define CK_RED_OP(ID, NAME, FAMILY, IDENT, COMBINE, MEAN, EMPTY, MAXLIKE, FLOAT, WITH_IDX) CK_RED_##ID,
#include "reduce/reduce_ops.def"
#undef CK_RED_OP
  CK_RED_NOPS
};
/* A reduction's family (the FAMILY column). */
enum { CK_REDF_ARITH, CK_REDF_EXT, CK_REDF_ARG };
typedef struct ck_red_desc {
  int dtype, op;
  const void *x;
  int64_t outer, len, inner;
  void *out;    /* outer*inner values of dtype, or NULL (pure ARG ops) */
  int64_t *idx; /* outer*inner 1-based indices, or NULL */
} ck_red_desc;

/* ---------------------------------------------------------------- transpose
 * out(i, j) = in(j, i) for each batch index: in is rows x cols, out is cols x rows.
 * in(r, c)  at in  + in_boff(b)  + r*in_rs  + c*in_cs
 * out(i, j) at out + out_boff(b) + i*out_rs + j*out_cs      (i < cols, j < rows)
 * The batch index b runs over nb dims (row-major, bshape[0] slowest) with per-dim strides for in and out.
 * Moves bits: elem_size is 2 (f16, bf16), 4 (f32, i32) or 8 (f64). Any rows, cols >= 0.                               */
typedef struct ck_tr_desc {
  int dtype, elem_size;
  int64_t rows, cols;
  const void *in;
  int64_t in_rs, in_cs;
  void *out;
  int64_t out_rs, out_cs;
  int nb;
  int64_t bshape[CK_MAX_DIMS], bin_st[CK_MAX_DIMS], bout_st[CK_MAX_DIMS];
} ck_tr_desc;

/* ---------------------------------------------------------------- elementwise
 * out[idx] = f(a[idx'], b[idx'']) over the ndim-d index space `shape` (the broadcast shape); a_st/b_st are
 * element strides with 0 on broadcast dims. Comparisons give 1/0 in the input dtype. Generators (FILL,
 * ARANGE, EYE, RAND, RANDN) read no input. COPY casts a_dtype -> out_dtype; every other op has
 * a_dtype == b_dtype == out_dtype. b == NULL with b_scalar: b is the number s1 (or a is, if scalar_left). */
enum { /* the op ids: one per row of kernels/elementwise/ew_ops.def, in row order */
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR) CK_EW_##ID,
#include "elementwise/ew_ops.def"
#undef CK_EW_OP
  CK_EW_NOPS
};
/* An op's kind (the KIND column): how many array inputs it reads and how. */
enum { CK_EWK_COPY, CK_EWK_UNARY, CK_EWK_BINARY, CK_EWK_GEN };
/* The dtype classes of ew_ops.def's DTYPES column. */
enum { CK_EWD_ALL, CK_EWD_FLOAT, CK_EWD_INT, CK_EWD_TOBOOL };
typedef struct ck_ew_desc {
  int op, ndim;
  int64_t shape[CK_MAX_DIMS];
  int64_t numel;
  int out_dtype;
  void *out;
  int64_t out_st[CK_MAX_DIMS];
  int a_dtype;
  const void *a;
  int64_t a_st[CK_MAX_DIMS];
  int b_dtype;
  const void *b;
  int64_t b_st[CK_MAX_DIMS];
  int b_scalar, scalar_left;
  double s1, s2;
  int64_t si; /* the scalar operand (or FILL's value) as an exact integer, when the op computes in an integer dtype */
} ck_ew_desc;

/* ---------------------------------------------------------------- index (selection, masks, assembly; issue 32)
 * One descriptor for the index ladder (kernels/index/). Kernels move elements by their size `es` (1, 2, 4, 8 or
 * 16 bytes), so every dtype runs through the same code; only the accumulating ops (SCATTER_ADD, INDEX_ADD) add
 * in `dtype`. Indices are 1-based, i32 or i64 (ix_dt); every one is checked against `bound`.
 *   gathers  (GATHER, INDEX_SELECT, TAKE): over the index space `shape` (nd dims, numel elements):
 *            out[pos . out_st] = src[pos . src_st + (ix[pos . ix_st] - 1) * dim_st]
 *   scatters (SCATTER, SCATTER_ADD, INDEX_ADD, INDEX_COPY, PUT): the same with out and src swapped:
 *            out[pos . out_st + (ix[pos . ix_st] - 1) * dim_st] (=, +=) src[pos . src_st]
 *            `dup_st` (the destination's row-major strides, 0 on the indexed dim, dup_dim_st on it) number the
 *            destination's elements for the repeat check (dup_check: the source is not one value)
 *   WHERE:   out[pos . out_st] = ix[pos . ix_st] ? src[pos . src_st] : y[pos . y_st]  (ix: a bool mask)
 *   COUNT, MASKED_SELECT, NONZERO (compaction): over `shape` in row-major order, the elements whose mask element
 *            (ix, any dtype: "nonzero", -0.0 counts as zero) is set: COUNT writes their number (one i64 to out),
 *            (bound: that number; NONZERO with dim_st == 1 writes [count, nd] subscripts, else positions)
 *            MASKED_SELECT their src values (out: count elements), NONZERO their 1-based row-major positions (i64).
 *   CAT:     n inputs (<= CK_CAT_MAX per launch) of `rows` rows each, input k's rows `row_bytes` long at pitch
 *            `src_pitch`, written at out + k's dst_off with pitch out_pitch (all in bytes).
 * `flag` (device, two i64, or NULL): the kernels set flag[0] when an index is out of range and flag[1] when a
 * destination repeats; the writing kernels of a scatter run after the check and write nothing when either is set. */
enum { CK_IX_GATHER, CK_IX_INDEX_SELECT, CK_IX_TAKE, CK_IX_SCATTER, CK_IX_SCATTER_ADD, CK_IX_INDEX_ADD, CK_IX_INDEX_COPY,
       CK_IX_PUT, CK_IX_WHERE, CK_IX_COUNT, CK_IX_MASKED_SELECT, CK_IX_NONZERO, CK_IX_CAT, CK_IX_NFNS };
#define CK_CAT_MAX 64
typedef struct ck_cat_in {
  const void *src;
  int64_t src_pitch, row_bytes, dst_off;
} ck_cat_in;
typedef struct ck_ix_desc {
  int fn, es, dtype, ix_dt, nd, dup_check;
  int ix_es;      /* the mask's element size (where: 1; compactions: any dtype's) */
  int dim;        /* index_select / index_add / index_copy: the dim of `shape` the index runs along */
  int64_t shape[CK_MAX_DIMS];
  int64_t numel;
  void *out;
  int64_t out_st[CK_MAX_DIMS];
  const void *src;
  int64_t src_st[CK_MAX_DIMS];
  const void *ix;
  int64_t ix_st[CK_MAX_DIMS];
  const void *y;
  int64_t y_st[CK_MAX_DIMS];
  int64_t dim_st, bound;
  int64_t dup_st[CK_MAX_DIMS];
  int64_t dup_dim_st, dup_numel;
  uint64_t nz_mask;   /* compaction: the bits of a mask element that make it nonzero (not the sign of a float) */
  int64_t *flag;
  /* CAT */
  int n;
  int64_t rows, out_pitch;
  ck_cat_in in[CK_CAT_MAX];
} ck_ix_desc;

/* ---------------------------------------------------------------- scan (issue 33)
 * x contiguous, viewed as [outer, len, inner]: element (o, r, i) at x[(o*len + r)*inner + i]; out contiguous in
 * the same layout, of out_dtype. out(o, r, i) = op over x(o, 0..r, i) (inclusive), or over x(o, 0..r-1, i)
 * (exclusive: the identity at r == 0). SUM/PROD of integers and bool accumulate in and write i64 (wrapping mod
 * 2^64, NumPy's rule); of floats in the float (f16/bf16 in f32, rounded once per output); MAX/MIN keep the
 * dtype and propagate NaN (once a NaN is seen, every later output is NaN, as NumPy's maximum.accumulate).
 * len >= 1, outer*inner >= 1 (the dispatcher handles empty arrays).                                        */
enum { CK_SCAN_SUM, CK_SCAN_PROD, CK_SCAN_MAX, CK_SCAN_MIN, CK_SCAN_NOPS };
typedef struct ck_scan_desc {
  int dtype, out_dtype, op, exclusive;
  const void *x;
  void *out;
  int64_t outer, len, inner;
} ck_scan_desc;

/* ---------------------------------------------------------------- sort (issue 33)
 * x contiguous, viewed as [outer, len, inner]; each (o, i) line along len is sorted (ascending, or descending),
 * stably: equal keys keep their order. NaN is the largest value (last ascending, first descending, as NumPy,
 * MATLAB and torch); -0 and +0 are equal (their order kept). out (values, may be NULL: argsort) and idx
 * (1-based i64 positions along len, may be NULL: a sort without indices) are contiguous [outer, k, inner]: the
 * first k of each sorted line (k = len for sort, k <= len for topk); one of them is given. len >= 1,
 * outer*inner >= 1.                                                                                          */
typedef struct ck_sort_desc {
  int dtype, descending;
  const void *x;
  void *out;
  int64_t *idx;
  int64_t outer, len, inner, k;
} ck_sort_desc;

/* ---------------------------------------------------------------- histogram (issue 33)
 * out[b] (i64, bins of them) = the number of the n elements of x (contiguous, any dtype, NaN never counted) in
 * bin b of `bins` equal bins over [lo, hi] (lo < hi): ck_hist_bin in kernels/hist/hist_bin.h, one rule for the
 * host and the device; values outside [lo, hi] are not counted, hi falls in the last bin. out is zeroed by the
 * launcher.                                                                                                */
typedef struct ck_hist_desc {
  int dtype;
  const void *x;
  int64_t n, bins;
  double lo, hi;
  int64_t *out;
} ck_hist_desc;

/* ---------------------------------------------------------------- searchsorted (issue 33)
 * out[j] (i64) = 1 + the number of elements of sorted (contiguous [n], ascending as ck.sort orders: NaN last,
 * -0 == +0) that come before values[j] (contiguous [m], the same dtype): strictly less (right == 0, NumPy's
 * side='left') or less or equal (right == 1). So out is NumPy's searchsorted + 1: a 1-based insertion position. */
typedef struct ck_search_desc {
  int dtype, right;
  const void *sorted, *values;
  int64_t n, m;
  int64_t *out;
} ck_search_desc;

/* ---------------------------------------------------------------- rows: softmax and normalisation (issue 37)
 * x contiguous, viewed as [outer, len, inner]; each line (o, i) along len is normalised on its own into out (the
 * same layout and dtype): SOFTMAX exp(x - max) / sum, LOG_SOFTMAX (x - max) - log(sum), LAYER_NORM
 * (x - mean) / sqrt(var + eps) * w + b (var biased, Welford), RMS_NORM x / sqrt(mean(x^2) + eps) * w. w and b
 * ([len], dtype; NULL: 1 and 0) are read at w[r]. Statistics in f32 for f32/f16/bf16, f64 for f64.
 * len >= 1, outer*inner >= 1 (the dispatcher handles empty arrays).                                        */
enum { CK_ROWS_SOFTMAX, CK_ROWS_LOG_SOFTMAX, CK_ROWS_LAYER_NORM, CK_ROWS_RMS_NORM, CK_ROWS_NFNS };
typedef struct ck_rows_desc {
  int fn, dtype;
  const void *x;
  void *out;
  const void *w, *b;
  int64_t outer, len, inner;
  double eps;
} ck_rows_desc;

/* ---------------------------------------------------------------- attention (issue 37)
 * o[z,h,i,:] = sum_j P[i,j] v[z,h,j,:], P = softmax_j(scale * q[z,h,i,:] . k[z,h,j,:] (+ mask)) for batch z < batch,
 * head h < heads, query i < sq, key j < skv. q, k: head dim d; v, o: dv. Element (z, h, s, e) of q at
 * q + z*q_st[0] + h*q_st[1] + s*q_st[2] + e (the head dim at unit stride; the same for k, v, o).
 * causal: key j takes part only when j <= i (PyTorch's is_causal: aligned top-left). mask (NULL: none) is read
 * at z*m_st[0] + h*m_st[1] + i*m_st[2] + j*m_st[3] (0 strides broadcast): bool (mask_dtype CK_BOOL, true = takes
 * part) or added to the scores (mask_dtype == dtype). A row with no key taking part is NaN (softmax of nothing).
 * batch*heads*sq >= 1 and skv >= 1 (the dispatcher handles the empty cases).                               */
typedef struct ck_attn_desc {
  int dtype, causal, mask_dtype;
  int64_t batch, heads, sq, skv, d, dv;
  const void *q, *k, *v;
  void *o;
  int64_t q_st[3], k_st[3], v_st[3], o_st[3];
  const void *mask;
  int64_t m_st[4];
  double scale;
} ck_attn_desc;

/* Variant tables, one per op (kernels/<op>/variants.c, rows from kernels/<op>/rungs.def). The preference orders
 * (ids, -1 terminated) are derived from the rows' ranks by ck_registry_init (src/core/registry.c) when the first
 * context is made; until then they are empty. */
#define CK_ORDER_CAP 33 /* the longest order + its -1 */
extern const ck_variant ck_matmul_variants[];
extern const int ck_matmul_nvariants;
extern int ck_matmul_preferred[CK_ORDER_CAP];      /* rank 1: default order */
extern int ck_matmul_preferred_tma[CK_ORDER_CAP];  /* rank 2: large f16/bf16 products a Hopper rung takes in place */
extern int ck_matmul_preferred_tiny[CK_ORDER_CAP]; /* rank 3: tiny f32/f64 products (op_matmul.c) */
extern const ck_variant ck_reduce_variants[];
extern const int ck_reduce_nvariants;
extern int ck_reduce_preferred[CK_ORDER_CAP];       /* rank 1: rows and columns */
extern int ck_reduce_preferred_full[CK_ORDER_CAP];  /* rank 2: outer == inner == 1 */
extern int ck_reduce_preferred_tiny[CK_ORDER_CAP];  /* rank 3: whole arrays up to 2 KiB */
extern int ck_reduce_preferred_small[CK_ORDER_CAP]; /* rank 4: whole arrays up to 16 KiB */
extern const ck_variant ck_transpose_variants[];
extern const int ck_transpose_nvariants;
extern int ck_transpose_preferred[CK_ORDER_CAP];
extern const ck_variant ck_scan_variants[];
extern const int ck_scan_nvariants;
extern int ck_scan_preferred[CK_ORDER_CAP];      /* rank 1: rows and columns */
extern int ck_scan_preferred_full[CK_ORDER_CAP]; /* rank 2: one scan over the whole array (outer == inner == 1) */
extern int ck_scan_preferred_cols[CK_ORDER_CAP]; /* rank 3: large arrays along a leading dim (op_scan.c) */
extern const ck_variant ck_sort_variants[];
extern const int ck_sort_nvariants;
extern int ck_sort_preferred[CK_ORDER_CAP];
extern int ck_sort_preferred_topk[CK_ORDER_CAP];   /* rank 2: topk keeping at most half of each line */
extern int ck_sort_preferred_values[CK_ORDER_CAP]; /* rank 3: integer sorts without indices on contiguous lines */
extern const ck_variant ck_hist_variants[];
extern const int ck_hist_nvariants;
extern int ck_hist_preferred[CK_ORDER_CAP];
extern const ck_variant ck_search_variants[];
extern const int ck_search_nvariants;
extern int ck_search_preferred[CK_ORDER_CAP];
extern const ck_variant ck_rows_variants[];
extern const int ck_rows_nvariants;
extern int ck_rows_preferred[CK_ORDER_CAP];
extern const ck_variant ck_attn_variants[];
extern const int ck_attn_nvariants;
extern int ck_attn_preferred[CK_ORDER_CAP];
extern const ck_variant ck_ew_variants[];
extern const int ck_ew_nvariants;
extern int ck_ew_preferred[CK_ORDER_CAP];
extern const ck_variant ck_index_variants[];
extern const int ck_index_nvariants;
extern int ck_index_preferred[CK_ORDER_CAP];

#ifdef __cplusplus
}
#endif

#include "launchers.h" /* every launcher's prototype, declared once */

#ifdef __cplusplus
/* ck_note(env, kernel<T, N>, threads, smem) in the kernels: any __global__ function, no cast at the call. */
template <class K> inline void ck_note(const ck_env *env, K *kern, unsigned threads, size_t smem) {
  ck_note_launch(env, (const void *)kern, (int)threads, smem);
}
#endif
#endif
