/*
 * cufft_plans.h — cuFFT loaded at run time and its plans cached (cufft_plans.c), for the FFT ladder's rung 0.
 *
 * Why loaded, not linked: libcufft is 280 MB; linking it would make every `require "cukern"` map it whether it
 * transforms anything or not (cuSOLVER and NCCL are loaded the same way: kernels/linalg/cusolver_dl.h). The
 * fields have the exact types of cufft.h's declarations (__typeof__), so a wrong signature is a compile error.
 */
#ifndef CK_CUFFT_PLANS_H
#define CK_CUFFT_PLANS_H

#include <cufft.h>
#include <cufftXt.h>

#include "fft.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CK_CUFFT_SYMS(X) X(Create) X(Destroy) X(SetAutoAllocation) X(MakePlanMany64) X(SetStream) X(SetWorkArea) X(XtExec)

typedef struct ck_cufft_api {
#define CK_CUFFT_FIELD(n) __typeof__(&cufft##n) n;
  CK_CUFFT_SYMS(CK_CUFFT_FIELD)
#undef CK_CUFFT_FIELD
} ck_cufft_api;

/* The loaded API, or NULL with the reason in *why (a static string). Loaded once per process. */
const ck_cufft_api *ck_cufft(const char **why);

/* A plan for d's transform on `device`: batched over inner == 1 rows (one execution), or over the inner columns
 * of one outer slice (executed once per slice). Cached (least recently used out past CK_FFT_PLAN_CAP); *ws is its
 * work area's size, which the caller takes from the allocator for each execution. 0 or a cufftResult. */
#define CK_FFT_PLAN_CAP 32
int ck_cufft_plan(int device, const ck_fft_desc *d, cufftHandle *plan, size_t *ws);

/* A launcher's return code for a cuFFT status (ck_submit names it: src/core/context.c) and the status's name. */
#define CK_KERR_CUFFT(s) (300000 + (int)(s))
const char *ck_cufft_status_name(int st);

#ifdef __cplusplus
}
#endif
#endif
