/*
 * reduce_ops.h — the reduction ops (kernels/reduce/reduce_ops.def, read by red_table.c): names and the
 * rules the dispatcher, the host oracle and the binding apply. Internal to the core and the binding.
 */
#ifndef CK_REDUCE_OPS_H
#define CK_REDUCE_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "ck.h"

/* "sum", "prod", "max", ... for CK_RED_*; NULL for anything else. */
const char *ck_reduce_op_name(int op);
/* The CK_RED_* value of a name above, or -1. */
int ck_reduce_op_parse(const char *name);
/* "sum, prod, max, min, mean, argmax, argmin" (the table's names, for messages) into buf. */
char *ck_reduce_op_list(char *buf, size_t n);
/* The FAMILY column (CK_REDF_ARITH, _EXT, _ARG), or -1. */
int ck_reduce_op_family(int op);
bool ck_reduce_op_indexed(int op);      /* ARG: the result is the indices (argmax, argmin) */
bool ck_reduce_op_gives_indices(int op); /* EXT or ARG: indices can be asked for */
int ck_reduce_op_with_idx(int op);      /* the op it becomes with indices (max -> argmax) */
bool ck_reduce_op_float_only(int op);   /* mean */
bool ck_reduce_op_mean(int op);         /* divides by the length */
bool ck_reduce_op_maxlike(int op);      /* max, argmax */
/* What an empty reduction gives (true, *value), or false: it is an error (the op needs an element). */
bool ck_reduce_op_empty(int op, double *value);

#endif
