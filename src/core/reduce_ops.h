/*
 * reduce_ops.h — reduction op names (op_reduce.c), for the dispatcher, the host reference and the binding.
 * Internal to the core and the binding; not part of ck.h.
 */
#ifndef CK_REDUCE_OPS_H
#define CK_REDUCE_OPS_H

#include <stdbool.h>

#include "ck.h"

/* "sum", "prod", "max", "min", "mean", "argmax", "argmin" for CK_RED_*; NULL for anything else. */
const char *ck_reduce_op_name(int op);
/* The CK_RED_* value of a name above, or -1. */
int ck_reduce_op_parse(const char *name);

#endif
