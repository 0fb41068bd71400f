/*
 * complex.h — the complex ladder's descriptor and launchers (issue 35; rungs: rungs.def). Kept beside the ladder,
 * as kernels/fft/fft.h is, so that the fused complex ops touch no header every kernel includes.
 *
 * One op per call, each ONE pass over memory (the composed form before it ran 2-6 real ops per complex op):
 *   binary  ADD SUB MUL DIV:  out = a (op) b                    complex out
 *           EQ NE:            out = a == b, a != b (both parts)  bool out
 *   unary   NEG CONJ EXP LOG SQRT:                               complex out
 *           ABS ANGLE:        |a|, atan2(im, re)                 real out (f32 for c64, f64 for c128)
 *   reduce  SUM MEAN:         over r of x[(o*len + r)*inner + i] into out[o*inner + i]; x contiguous complex
 * Elementwise: `shape` (ndim dims, numel elements, put in the output's memory order and coalesced by the
 * dispatcher), element strides per operand in units of the operand's own elements (complex pairs for a and b,
 * out's dtype for out), 0 on broadcast dims; b == NULL: b is the number (s_re, s_im), on the left when
 * scalar_left. a and b are complex of the compute precision (fp64: c128, else c64); the dispatcher converts real
 * and other-precision operands first. out may be exactly a or b (each element is read by the thread that writes it).
 * The math (cx_math.h) is one text for the host oracle and the rungs.
 */
#ifndef CK_COMPLEX_H
#define CK_COMPLEX_H

#include "../ck_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CK_CX_ADD, CK_CX_SUB, CK_CX_MUL, CK_CX_DIV, CK_CX_EQ, CK_CX_NE,               /* binary */
       CK_CX_NEG, CK_CX_CONJ, CK_CX_EXP, CK_CX_LOG, CK_CX_SQRT, CK_CX_ABS, CK_CX_ANGLE, /* unary */
       CK_CX_SUM, CK_CX_MEAN,                                                          /* reductions */
       CK_CX_NFNS };
#define CK_CX_FIRST_UNARY CK_CX_NEG
#define CK_CX_FIRST_REDUCE CK_CX_SUM

/* The dtypes the op takes (each operand: the dispatcher's first check): complex, and the real dtypes a complex
 * operand meets (promoted, then converted). It computes in c64 or c128 (op_complex.c). */
#define CK_DT_CX (CK_DT_COMPUTE | CK_DT_COMPLEX)

typedef struct ck_cx_desc {
  int fn, fp64;
  /* elementwise */
  int ndim, b_scalar, scalar_left;
  int64_t shape[CK_MAX_DIMS], numel;
  void *out;
  const void *a, *b;
  int64_t out_st[CK_MAX_DIMS], a_st[CK_MAX_DIMS], b_st[CK_MAX_DIMS];
  double s_re, s_im;
  /* reductions: x (= a) contiguous [outer, len, inner], out contiguous [outer, inner]; len >= 1 */
  int64_t outer, len, inner;
  double scale; /* 1 (SUM) or 1 / len (MEAN) */
} ck_cx_desc;

#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)                                                         \
  int ck_complex_##NAME(const void *desc, const ck_env *env);                                                        \
  const char *ck_complex_##NAME##_supports(const void *desc);
#include "rungs.def"
#undef CK_RUNG

extern const ck_variant ck_complex_variants[];
extern const int ck_complex_nvariants;
extern int ck_complex_preferred[CK_ORDER_CAP];

#ifdef __cplusplus
}
#endif
#endif
