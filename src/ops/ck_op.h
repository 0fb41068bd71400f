/*
 * ck_op.h — how an op plugs into the one dispatcher (src/ops/dispatch.c). Internal to the core.
 *
 * ck_run turns a ck_call into a ck_plan step by step; each op (op_elementwise.c, op_reduce.c, op_matmul.c,
 * op_transpose.c) contributes a ck_opdef: its registry table and the few hooks that are really its own.
 * Everything that is the same for every op (liveness, devices, dtype masks, variant names, output
 * allocation and checks, overlap temporaries, dtype conversion, layout copies, launch, copies back,
 * cleanup, the "ran" record) lives in dispatch.c alone.
 */
#ifndef CK_OP_H
#define CK_OP_H

#include "ck.h"

/* Operands a variant needs in another layout (ck_opdef.layout): inputs become contiguous copies, outputs
 * contiguous temporaries that are copied back. */
#define CK_NEED_A 1u
#define CK_NEED_B 2u
#define CK_NEED_OUT 4u
#define CK_NEED_IDX 8u
#define CK_NEED_C 16u
#define CK_MAX_IN 3 /* array inputs an op reads: a, b, c */

typedef struct ck_plan {
  const ck_call *call;
  const struct ck_opdef *def;
  const char *name;       /* the op's public name ("add", "sum", "matmul", "transpose") */
  ck_device dev;
  int nin;                /* array inputs read (0 .. CK_MAX_IN) */
  const ck_tensor *in[CK_MAX_IN]; /* inputs as the work sees them: the call's, or converted/contiguous temporaries */
  ck_dtype in_dt;         /* the dtype inputs are converted to */
  bool keep_in_dtypes;    /* inputs keep their own dtypes, not converted to in_dt (matmul's mixed FP8 operands) */
  ck_dtype dt;            /* result dtype */
  int nd;                 /* result shape */
  int64_t shape[CK_MAX_DIMS];
  const ck_tensor *like; /* a new out follows this operand's memory order (elementwise), or NULL */
  bool has_out, has_idx; /* which outputs the op writes */
  bool out_reads;        /* the work reads out's old values (matmul with beta != 0) */
  ck_tensor *out, *idx;  /* where results go: the call's, or temporaries */
  double beta;           /* matmul: the call's beta, 0 when out was just allocated */
  int dim;               /* reduce: the normalised dim (-1: all) */
  int64_t len;           /* reduce: elements per output */
  ck_dtype idx_dt;       /* the dtype of idx: i64 (ck_run sets it; every index output is 1-based i64) */
  const ck_variant *req; /* the variant the call names, resolved (NULL: default) */
  /* owned by ck_run */
  bool inplace_ok;       /* this call may write exactly over an input (where, in place); the def's flag says it for all */
  ck_tensor tflag;       /* index ops on CUDA: the device flags their kernels set (out of range, repeats) */
  int64_t *hflag;        /* ... or, for a gather not being captured, the device's check word (ck_check_word) */
  void *hflag_dev;       /* ... at its device address */
  ck_tensor tin[CK_MAX_IN], tout, tidx;
  bool out_alloc, idx_alloc;
} ck_plan;

typedef struct ck_opdef {
  const char *ladder; /* registry name: ck.variants(ladder) */
  const ck_variant *tab;
  const int *ntab;
  unsigned host_dtypes; /* what the host oracle takes (CK_DT_BIT mask); CUDA's is the table's union */
  bool inplace_ok;      /* out may be exactly an input (each element is read before the same thread writes it) */
  size_t desc_size;
  /* Op-specific argument checks; set name, nin/in (the call's inputs), in_dt, dt, nd/shape, like, has_out,
   * has_idx, out_reads, dim/len. Runs after liveness and device checks. */
  ck_status (*check)(ck_ctx *ctx, ck_plan *p);
  /* A given output's shape is acceptable (NULL: exactly nd/shape). */
  bool (*out_shape_ok)(const ck_plan *p, const ck_tensor *t);
  /* Cases with nothing to launch (after outputs are ready): write the result, set *done and say what was
   * done in note (it becomes ck.last_ran().note). NULL: none. */
  ck_status (*trivial)(ck_ctx *ctx, ck_plan *p, bool *done, char *note, size_t n);
  /* The host oracle on the validated plan. */
  ck_status (*host)(ck_ctx *ctx, ck_plan *p);
  /* Layout needs (CK_NEED_*) before a variant is picked (v == NULL) and for the picked one. NULL: none. */
  unsigned (*layout)(const ck_plan *p, const ck_variant *v);
  /* Fill the launch descriptor from the plan's current operands. */
  void (*describe)(const ck_plan *p, void *desc);
  /* Default preference order (ids, -1 terminated), or one chosen per descriptor (NULL: use preferred). */
  const int *preferred;
  const int *(*preferred_for)(const void *desc);
  /* The launch described for an error message (only formatted on failure; NULL: "op (variant) operands"). */
  void (*what)(const ck_plan *p, const ck_variant *v, char *buf, size_t n);
  /* After the launch (CUDA): what the kernels reported (index ops: out-of-range indices, repeats). NULL: none. */
  ck_status (*after)(ck_ctx *ctx, ck_plan *p);
} ck_opdef;

/* The registry fields of an op definition: ladder name and the table, count and preference order of
 * kernels/<op>/variants.c (named <prefix>_variants, <prefix>_nvariants, <prefix>_preferred). */
#define CK_LADDER(name, prefix) .ladder = name, .tab = prefix##_variants, .ntab = &prefix##_nvariants, .preferred = prefix##_preferred

extern const ck_opdef ck_opdef_ew, ck_opdef_reduce, ck_opdef_matmul, ck_opdef_transpose, ck_opdef_index, ck_opdef_scan,
    ck_opdef_sort, ck_opdef_hist, ck_opdef_search, ck_opdef_fft, ck_opdef_rows, ck_opdef_attn, ck_opdef_complex;


/* The host oracles that take a launch descriptor (scan, sort, histc, fft, rows, attention) read and write
 * contiguous memory: runs oracle(ctx, q) on a copy q of the plan whose inputs and outputs are contiguous (copies
 * of a view, temporaries for strided outputs, copied back afterwards). (dispatch.c) */
ck_status ck_host_contiguous(ck_ctx *ctx, ck_plan *p, ck_status (*oracle)(ck_ctx *ctx, const ck_plan *q));

/* Describe the plan's inputs and output ("f32[3x4] cuda, f32[4] cuda -> f32[3x4] cuda") for messages. */
char *ck_plan_operands(const ck_plan *p, char *buf, size_t n);


#endif
