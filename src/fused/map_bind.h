/*
 * map_bind.h — private to the fused kernels (map_bind.c, map.c, reduce_map.c): the binder's record of the
 * inputs (names resolved, types, broadcast shape, device), the outputs, the operands' geometry (dims ordered
 * and coalesced), the host's gather/scatter, and the kernels' parameter block.
 */
#ifndef CK_MAP_BIND_H
#define CK_MAP_BIND_H

#include "ck_map.h"
#include "expr.h"

/* --fmad=false: a * b + c rounds twice, as on the host, so that the oracle agrees to the last bit for
 * arithmetic (fused kernels are memory-bound: contraction would buy nothing measurable) */
#define MAP_NVRTC_OPTS "--fmad=false"

/* Every per-operand buffer below holds CK_MAP_MAX_OPERANDS, which bind_inputs enforces first of all. */
#define MAXOPS CK_MAP_MAX_OPERANDS

typedef struct mbind {
  int nin;
  const ck_tensor *t[MAXOPS]; /* per expression input: the array, or NULL for a number */
  double num[MAXOPS];
  long long inum[MAXOPS]; /* a number that is an integer (ity: weak i64), exactly */
  xtype ity[MAXOPS];
  ck_device dev;
  int nd;
  int64_t shape[CK_MAX_DIMS];
  const ck_tensor *like;  /* an input with the broadcast shape (outputs follow its layout) */
  ck_tensor snap[MAXOPS]; /* snapshots of inputs an output overlaps */
} mbind;

/* Operand strides over the broadcast space, dims put in the first operand's memory order, then coalesced. */
typedef struct mgeom {
  int nops, nd;
  int64_t shape[CK_MAX_DIMS];
  int64_t st[MAXOPS][CK_MAX_DIMS];
  int64_t numel;
} mgeom;

/* The kernel's parameter block: 8-byte slots, described in the report as they are written. */
typedef struct pwriter {
  uint64_t slots[CK_MAP_MAX_PARAMS];
  int n;
  ck_map_report *rep;
} pwriter;

/* The one entry of ck_map and ck_reduce_map (and so of every binding): the operand limit, then every name of
 * the inputs table, then each input the expression reads. nout: the outputs the call will write. */
ck_status map_bind_inputs(ck_ctx *ctx, const ck_expr *e, const ck_map_input *in, int nin, int nout, mbind *b);
void map_unbind(mbind *b);
/* Outputs: allocate, or check the given ones; inputs that a given output overlaps are snapshotted. */
ck_status map_prepare_outputs(ck_ctx *ctx, const ck_expr *e, mbind *b, int nout, const char *const *names,
                              const int *odt, int nd, const int64_t *shape, ck_tensor *outs);
/* st[o][d]: operand o's stride along dim d of (nd, shape). order: dims sorted by operand 0's |stride|. */
void map_geom_raw(mgeom *g, int nops, int64_t (*st)[CK_MAX_DIMS], int nd, const int64_t *shape, bool order);
void map_geom_build(mgeom *g, int nops, const ck_tensor *const *ops, int nd, const int64_t *shape, bool order);

/* Host: n elements of dtype dt from a strided run (bool read as 0/1), n elements of es bytes to one; the numbers
 * of the inputs into the evaluator. */
void map_gather(void *dst, const char *base, int64_t st, int n, ck_dtype dt);
void map_scatter(char *base, int64_t st, const void *src, int n, size_t es);
void map_fill_numbers(xeval *ev, const mbind *b);

/* GPU: the parameter block's slots; the entry's name from the key; the inputs' kinds and dtypes in the key. */
void map_pw_int(pwriter *w, int64_t v);
void map_pw_dbl(pwriter *w, double v);
void map_pw_ptr(pwriter *w, const void *p, char kind, int ref);
void map_entry_name(char *buf, size_t n, const char *prefix, const char *key);
void map_append_sig(char *key, size_t n, const mbind *b, const bool *bcast);

#endif
