/*
 * ar_common.cu — ck_allreduce_supports, the one check every all-reduce rung makes (ar_supports in
 * ar_common.cuh), as a C symbol for callers that pick a rung. No kernel here.
 */
#include "ar_common.cuh"

extern "C" const char *ck_allreduce_supports(const ck_ar_desc *d) { return ar_supports(d); }
