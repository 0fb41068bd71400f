/*
 * reduce_ops.h — reduction op names, and the argument handling that the dispatcher (op_reduce.c) and the
 * host reference (host_reduce.c) share. Internal to the core and the binding; not part of ck.h.
 */
#ifndef CK_REDUCE_OPS_H
#define CK_REDUCE_OPS_H

#include <stdbool.h>

#include "ck.h"

/* "sum", "prod", "max", "min", "mean", "argmax", "argmin" for CK_RED_*; NULL for anything else. */
const char *ck_reduce_op_name(int op);
/* The CK_RED_* value of a name above, or -1. */
int ck_reduce_op_parse(const char *name);

/* Checks everything about a reduction that does not depend on the device: op, x alive and of a reduction
 * dtype (f32, f64, i32; mean needs a float), dim in range (0-based, -1 = all; a 0-d x takes 0 or -1), which
 * outputs the op needs (values for all but argmax/argmin, indices for those two), an empty reduced dim for
 * max/min/argmax/argmin, and index range. On success *dim is normalised (-1 for a whole-array reduction) and
 * *len is the number of elements each output reduces. */
ck_status ck_reduce_check(ck_ctx *ctx, int op, const ck_tensor *out, const ck_tensor *idx, const ck_tensor *x,
                          int *dim, int64_t *len);

/* Result shape of reducing x along dim (-1: all), with or without the reduced dims kept as 1. Returns ndim. */
int ck_reduce_shape(const ck_tensor *x, int dim, bool keepdim, int64_t *shape);

/* Allocates t (dtype dt, the result shape) on x's device when t->st == NULL (*allocated = true), or checks a
 * given t: alive, same device, dtype, and shape equal to the result shape with or without keepdim (both
 * enumerate the outputs in the same order), no repeated memory. `what` names it in messages ("out", "idx"). */
ck_status ck_reduce_prepare(ck_ctx *ctx, const char *name, const char *what, ck_tensor *t, ck_dtype dt,
                            const ck_tensor *x, int dim, bool keepdim, bool *allocated);

#endif
