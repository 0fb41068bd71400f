/*
 * fft.h — the FFT ladder's descriptor and launchers (issue 35; rungs: rungs.def). Kept beside the ladder, as
 * kernels/lu/lu.h is, so that the FFT touches no header every kernel includes.
 *
 * x and out are contiguous, viewed as [outer, len, inner]; each (o, i) line of the transform runs along len with
 * stride inner. Complex values are interleaved (re, im) pairs of float (fp64 == 0: c64) or double (c128).
 *   C2C: x complex [outer, n, inner] -> out complex [outer, n, inner]
 *   R2C: x real    [outer, n, inner] -> out complex [outer, n/2+1, inner] (the non-negative frequencies)
 *   C2R: x complex [outer, n/2+1, inner] -> out real [outer, n, inner] (x taken as Hermitian: the imaginary parts
 *        of x[0] and, for even n, of x[n/2] are ignored, as NumPy's irfft and cuFFT do)
 * out(k) = scale * sum_j x(j) exp(sign * 2 pi i j k / n), sign = -1 forward, +1 inverse. n >= 1, outer*inner >= 1
 * (the dispatcher handles empty arrays). x and out never overlap.
 * Two dims at once (n2 >= 1, C2C only, inner == 1): x and out are [outer, n, n2] and the transform runs along both
 * last dims (scale once), as one rank-2 cuFFT plan does it; n2 == 0 is the one-dim transform above. Only cuFFT
 * and the host oracle take n2 (the own rungs are one-dim ladders and decline it).
 */
#ifndef CK_FFT_H
#define CK_FFT_H

#include "../ck_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CK_FFT_C2C, CK_FFT_R2C, CK_FFT_C2R, CK_FFT_NKINDS };

/* The dtypes the op takes (each operand: the dispatcher's first check): every real dtype the ladders compute in, and
 * complex. It computes in c64/c128 (f32/f64 for the real input of rfft, or the real output of irfft): op_fft.c. */
#define CK_DT_FFT (CK_DT_COMPUTE | CK_DT_COMPLEX)

typedef struct ck_fft_desc {
  int kind, fp64, inverse;
  int64_t outer, n, inner;
  int64_t n2; /* 0, or the length along the next dim of a two-dim transform (x [outer, n, n2], inner == 1) */
  double scale;
  const void *x;
  void *out;
} ck_fft_desc;

/* Elements along len of x and of out for a descriptor's kind. */
static inline int64_t ck_fft_xlen(const ck_fft_desc *d) { return d->kind == CK_FFT_C2R ? d->n / 2 + 1 : d->n; }
static inline int64_t ck_fft_outlen(const ck_fft_desc *d) { return d->kind == CK_FFT_R2C ? d->n / 2 + 1 : d->n; }
/* Elements of out: outer lines (planes, for two dims) of outlen (x n2) x inner. */
static inline int64_t ck_fft_outcount(const ck_fft_desc *d) {
  return d->outer * ck_fft_outlen(d) * (d->n2 > 0 ? d->n2 : 1) * d->inner;
}

#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)                                                         \
  int ck_fft_##NAME(const void *desc, const ck_env *env);                                                            \
  const char *ck_fft_##NAME##_supports(const void *desc);
#include "rungs.def"
#undef CK_RUNG

extern const ck_variant ck_fft_variants[];
extern const int ck_fft_nvariants;
extern int ck_fft_preferred[CK_ORDER_CAP];

/* cuFFT's plans (kernels/fft/cufft_plans.c): dropped for every device (ck.empty_cache), and how many are held. */
void ck_fft_plans_clear(void);
int ck_fft_plans_count(void);

#ifdef __cplusplus
}
#endif
#endif
