/*
 * cufft_plans.c — cuFFT loaded at run time (why: cufft_plans.h) and a cache of its plans, for the FFT ladder's
 * reference rung (00_cufft.cu).
 *
 * A plan is made once per (device, kind, precision, length, batch, layout) and kept: making one costs far more than
 * executing it (it picks kernels and computes twiddles on the device). Plans are made without their own work area
 * (cufftSetAutoAllocation 0): each execution takes the size the plan reported from the caching allocator, so the
 * workspace is counted in ck.memory() and goes back to the cache afterwards. ck.empty_cache() destroys every plan
 * (ck_fft_plans_clear, called after every device's stream is idle) and cuFFT frees what the plans hold.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cufft_plans.h"

static ck_cufft_api api;
static char why_not[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  static const char *const names[] = {"libcufft.so.12", "libcufft.so.11", "libcufft.so"};
  void *h = NULL;
  for (size_t i = 0; i < sizeof names / sizeof *names && !h; ++i) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(why_not, sizeof why_not, "cuFFT not found (libcufft.so.12: %s)", dlerror());
    return;
  }
  static const struct {
    const char *name;
    size_t off;
  } syms[] = {
#define CK_CUFFT_ROW(n) {"cufft" #n, offsetof(ck_cufft_api, n)},
      CK_CUFFT_SYMS(CK_CUFFT_ROW)
#undef CK_CUFFT_ROW
  };
  for (size_t i = 0; i < sizeof syms / sizeof *syms; ++i) {
    void *f = dlsym(h, syms[i].name);
    if (!f) {
      snprintf(why_not, sizeof why_not, "cuFFT was found but has no %s", syms[i].name);
      return;
    }
    memcpy((char *)&api + syms[i].off, &f, sizeof f);
  }
}

const ck_cufft_api *ck_cufft(const char **why) {
  pthread_once(&once, load);
  if (why) *why = why_not;
  return why_not[0] ? NULL : &api;
}

// ---------------------------------------------------------------- the cache

typedef struct { /* all int64_t: no padding, so memcmp compares keys */
  int64_t device, kind, fp64, n, n2, batch, stride, idist, odist;
} plan_key;

typedef struct {
  plan_key key;
  cufftHandle plan;
  size_t ws;
  unsigned long long used; /* 0: empty slot */
} plan_slot;

static plan_slot slots[CK_FFT_PLAN_CAP];
static unsigned long long clock_;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static cufftType type_of(const ck_fft_desc *d) {
  static const cufftType t[2][CK_FFT_NKINDS] = {{CUFFT_C2C, CUFFT_R2C, CUFFT_C2R}, {CUFFT_Z2Z, CUFFT_D2Z, CUFFT_Z2D}};
  return t[d->fp64 != 0][d->kind];
}

/* Rows (inner == 1): all lines in one batch. Columns: the inner lines of one outer slice, stride inner. Two dims
 * (n2, C2C, inner == 1): the outer n x n2 planes in one batch. */
static plan_key key_of(int device, const ck_fft_desc *d) {
  const bool rows = d->inner == 1;
  const int64_t plane = d->n2 > 0 ? d->n2 : 1;
  return (plan_key){.device = device, .kind = d->kind, .fp64 = d->fp64 != 0, .n = d->n, .n2 = d->n2,
                    .batch = rows ? d->outer : d->inner, .stride = rows ? 1 : d->inner,
                    .idist = rows ? ck_fft_xlen(d) * plane : 1, .odist = rows ? ck_fft_outlen(d) * plane : 1};
}

/* Rows (stride 1, lines back to back) are cuFFT's basic layout, given as such (NULL embeds: the default strides and
 * distances are exactly key_of's), as PyTorch and CuPy plan contiguous data; columns need the advanced layout. */
static int make(const plan_key *k, const ck_fft_desc *d, cufftHandle *plan, size_t *ws) {
  const int rank = k->n2 > 0 ? 2 : 1;
  long long n[2] = {k->n, k->n2}, inembed[2] = {ck_fft_xlen(d), k->n2}, onembed[2] = {ck_fft_outlen(d), k->n2};
  const bool basic = k->stride == 1;
  int st = api.Create(plan);
  if (st) return st;
  if (!(st = api.SetAutoAllocation(*plan, 0)))
    st = api.MakePlanMany64(*plan, rank, n, basic ? NULL : inembed, k->stride, k->idist, basic ? NULL : onembed,
                            k->stride, k->odist, type_of(d), k->batch, ws);
  if (st) api.Destroy(*plan);
  return st;
}

int ck_cufft_plan(int device, const ck_fft_desc *d, cufftHandle *plan, size_t *ws) {
  const char *why;
  if (!ck_cufft(&why)) return CUFFT_SETUP_FAILED;
  const plan_key k = key_of(device, d);
  pthread_mutex_lock(&mu);
  plan_slot *hit = NULL, *victim = &slots[0];
  for (int i = 0; i < CK_FFT_PLAN_CAP && !hit; ++i) {
    if (slots[i].used && memcmp(&slots[i].key, &k, sizeof k) == 0) hit = &slots[i];
    else if (slots[i].used < victim->used) victim = &slots[i];
  }
  int st = 0;
  if (!hit) {
    if (victim->used) api.Destroy(victim->plan); /* (the stream orders it after the work that used it) */
    victim->used = 0;
    if (!(st = make(&k, d, &victim->plan, &victim->ws))) victim->key = k, hit = victim;
  }
  if (hit) hit->used = ++clock_, *plan = hit->plan, *ws = hit->ws;
  pthread_mutex_unlock(&mu);
  return st;
}

void ck_fft_plans_clear(void) { /* (a slot is used only once the API is loaded: this never loads cuFFT) */
  pthread_mutex_lock(&mu);
  for (int i = 0; i < CK_FFT_PLAN_CAP; ++i)
    if (slots[i].used) api.Destroy(slots[i].plan), slots[i].used = 0;
  pthread_mutex_unlock(&mu);
}

int ck_fft_plans_count(void) {
  int c = 0;
  pthread_mutex_lock(&mu);
  for (int i = 0; i < CK_FFT_PLAN_CAP; ++i) c += slots[i].used != 0;
  pthread_mutex_unlock(&mu);
  return c;
}

const char *ck_cufft_status_name(int st) {
  switch (st) {
  case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
  case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
  case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
  case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
  case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
  case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
  case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
  case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED (cuFFT could not be loaded or initialised)";
  case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
  case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
  case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
  case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
  case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
  case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
  default: return "a cuFFT error";
  }
}
