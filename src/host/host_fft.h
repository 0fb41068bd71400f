/*
 * host_fft.h — the FFT oracle (host_fft.c) on the FFT ladder's descriptor (kernels/fft/fft.h), host pointers.
 */
#ifndef CK_HOST_FFT_H
#define CK_HOST_FFT_H

#include "ck.h"
#include "fft/fft.h"

ck_status ck_host_fft(ck_ctx *ctx, const ck_fft_desc *d);

#endif
