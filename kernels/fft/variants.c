/*
 * variants.c — the FFT ladder's registry (issue 35): one row per kernels/fft/NN_*.cu, from rungs.def.
 *
 * Default order (ranks in rungs.def): cuFFT, the reference that takes every length, kind and layout; then the own
 * rungs from the fastest (radix8) down, each declining what it cannot do (rfft/irfft, columns, lengths that are not
 * powers of two, n > 4096); the naive DFT last.
 */
#include <stddef.h>

#include "fft.h"

const ck_variant ck_fft_variants[] = {
#define CK_RUNG(ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY) CK_RUNG_ROW(ck_fft_, ID, NAME, SUP, DTYPES, FLAGS, RANKS, SUMMARY)
#include "rungs.def"
#undef CK_RUNG
};
const int ck_fft_nvariants = (int)(sizeof ck_fft_variants / sizeof ck_fft_variants[0]);

int ck_fft_preferred[CK_ORDER_CAP] = {-1}; /* rank column 1 */
