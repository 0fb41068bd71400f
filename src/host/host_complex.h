/*
 * host_complex.h — the complex ladder's oracle (host_complex.c) on its descriptor (kernels/complex/complex.h),
 * host pointers: elementwise ops at the descriptor's strides; sums over a contiguous [outer, len, inner].
 */
#ifndef CK_HOST_COMPLEX_H
#define CK_HOST_COMPLEX_H

#include "ck.h"
#include "complex/complex.h"

ck_status ck_host_complex(ck_ctx *ctx, const ck_cx_desc *d);

#endif
