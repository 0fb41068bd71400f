/* lab/calltime_inject.c — a CUDA injection library (CUDA_INJECTION64_PATH) that logs every runtime and driver API
 * call of a process with its host start time (CLOCK_MONOTONIC, as ck.core.clock) and duration, through CUPTI's
 * callback API. Round 3 session 10: the host time to issue one op on a large array grew from 20-26 us (01bb637) to
 * 80-110 us; cudart is linked statically, so an LD_PRELOAD wrapper would see nothing, but CUPTI sees every call.
 *   nvcc -O2 -shared -Xcompiler -fPIC -o calltime.so lab/calltime_inject.c -lcupti
 *   CUDA_INJECTION64_PATH=$PWD/calltime.so CALLTIME_OUT=trace.txt lua5.4 lab/issue_probe.lua
 * Each line of trace.txt: start_ns duration_ns domain(r/d) depth function [kernel]. lab/calltime_report.py joins
 * it with the probe's windows. A lab tool, not part of the library. */
#define _POSIX_C_SOURCE 200809L
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  uint64_t t0, dur;
  const char *fn;
  char dom, depth;
  char sym[46];
} rec;

enum { NREC = 1 << 20 };
static rec *recs;
static size_t nrec;
static _Thread_local int depth;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void CUPTIAPI on_call(void *u, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data) {
  (void)u, (void)id;
  const CUpti_CallbackData *cb = data;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    ++depth;
    *cb->correlationData = now_ns();
    return;
  }
  const uint64_t t1 = now_ns();
  --depth;
  size_t i = __atomic_fetch_add(&nrec, 1, __ATOMIC_RELAXED);
  if (i >= NREC) return;
  rec *r = &recs[i];
  r->t0 = *cb->correlationData;
  r->dur = t1 - r->t0;
  r->fn = cb->functionName;
  r->dom = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? 'r' : 'd';
  r->depth = (char)depth;
  r->sym[0] = 0;
  if (cb->symbolName) snprintf(r->sym, sizeof r->sym, "%s", cb->symbolName);
}

static void dump(void) {
  const char *path = getenv("CALLTIME_OUT");
  FILE *f = fopen(path ? path : "calltime.txt", "w");
  if (!f) return;
  const size_t n = nrec < NREC ? nrec : NREC;
  for (size_t i = 0; i < n; ++i)
    fprintf(f, "%llu %llu %c %d %s %s\n", (unsigned long long)recs[i].t0, (unsigned long long)recs[i].dur,
            recs[i].dom, recs[i].depth, recs[i].fn ? recs[i].fn : "?", recs[i].sym[0] ? recs[i].sym : "-");
  if (nrec > NREC) fprintf(f, "# %zu calls not kept\n", nrec - NREC);
  fclose(f);
}

int InitializeInjection(void) {
  recs = calloc(NREC, sizeof *recs);
  if (!recs) return 0;
  CUpti_SubscriberHandle sub;
  CUptiResult e = cuptiSubscribe(&sub, on_call, NULL);
  if (e == CUPTI_SUCCESS) e = cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
  if (e == CUPTI_SUCCESS) e = cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
  if (e != CUPTI_SUCCESS) {
    const char *s = "?";
    cuptiGetResultString(e, &s);
    fprintf(stderr, "calltime_inject: CUPTI refused: %s\n", s);
    return 0;
  }
  atexit(dump);
  return 1;
}
