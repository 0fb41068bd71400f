/*
 * mm_tma.h — what a TMA tensor map can take, shared by the dispatcher (src/ops/op_matmul.c, for CK_VF_TMA rows)
 * and the Hopper rungs' supports() (kernels/matmul/mm_hopper.cuh). C and C++.
 *
 * A tensor map describes a strided box of global memory: the innermost dim must have unit stride, every other
 * stride and the base must be multiples of 16 bytes, and strides are positive. A matmul operand (rows x cols,
 * element strides rs and cs, batch stride bs, 0 when not batched) of 2-byte elements fits when one of its two
 * matrix dims has unit stride (that dim is the map's inner one) and the rest is 16-byte aligned; then the
 * rung reads it in place, whichever of its dims is contiguous (K-major or MN-major in wgmma's terms).
 * A dim of extent <= 1 is never stepped, so its stride does not matter.
 */
#ifndef CK_MM_TMA_H
#define CK_MM_TMA_H

#include <stdbool.h>
#include <stdint.h>

/* stride s (elements of es bytes) of a dim of extent n is usable as a tensor-map stride */
static inline bool ck_tma_stride_ok(int64_t n, int64_t s, int64_t es) { return n <= 1 || (s > 0 && (s * es) % 16 == 0); }

/* The operand can be read in place: 0 = no, 1 = unit stride along cols (row-major), 2 = along rows. */
static inline int ck_tma_operand(const void *p, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t bs,
                                 int64_t es) {
  if (((uintptr_t)p & 15) != 0 || (bs != 0 && !ck_tma_stride_ok(2, bs, es))) return 0;
  if ((cs == 1 || cols <= 1) && ck_tma_stride_ok(rows, rs, es)) return 1;
  if ((rs == 1 || rows <= 1) && ck_tma_stride_ok(cols, cs, es)) return 2;
  return 0;
}

/* What the dispatcher hands a CK_VF_TMA rung: the operand itself when the tensor map takes it, else a
 * contiguous copy (row stride cols, 256-byte aligned), which the map takes when a row is a multiple of 16
 * bytes. `contiguous`: the operand already is (then no copy is made). */
static inline bool ck_tma_operand_after_copy(const void *p, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                                             int64_t bs, int64_t es, bool contiguous) {
  if (ck_tma_operand(p, rows, cols, rs, cs, bs, es)) return true;
  return !contiguous && (cols <= 1 || (cols * es) % 16 == 0);
}

#endif
