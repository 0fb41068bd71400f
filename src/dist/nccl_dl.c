/*
 * nccl_dl.c — loads NCCL at run time (dlopen) so that cukern builds and loads without libnccl; maps cukern's
 * dtypes and reduction ops to NCCL's; waits for collectives without hanging (ck_nccl_wait).
 *
 * The symbols are resolved once, under pthread_once, into one static ck_nccl_api that lives for the process
 * (the library is never dlclose'd: communicators and NCCL's own threads may outlive any one user). A required
 * symbol that is missing makes the whole load fail with its name in `why`, rather than leaving a NULL pointer
 * to be found later; the three optional ones (newer than 2.10) may stay NULL. The declarations in nccl.h are
 * used only for their types: the function pointers have the exact signatures of the header, checked by the
 * compiler in nccl_dl.h.
 */
#define _GNU_SOURCE /* dladdr (the path of the loaded file); implies the POSIX setenv/nanosleep/clock_gettime */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ck_kernels.h" /* the ck_dtype ids */
#include "nccl_dl.h"

// ---------------------------------------------------------------- op codes

static const char *const coll_names[CK_NCOLL_OPS] = {"sum", "prod", "max", "min", "avg"};

const char *ck_coll_op_name(int op) { return op >= 0 && op < CK_NCOLL_OPS ? coll_names[op] : "?"; }

int ck_coll_op_parse(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < CK_NCOLL_OPS; i++)
    if (strcmp(name, coll_names[i]) == 0) return i;
  return -1;
}

// ---------------------------------------------------------------- loading

static ck_nccl_api api;
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

/* One symbol: its name, where its pointer lives in ck_nccl_api, and whether the load fails without it. */
typedef struct sym {
  const char *name;
  size_t offset;
  bool required;
} sym;

#define SYM(field, req) {"nccl" #field, offsetof(ck_nccl_api, field), req}
static const sym syms[] = {
    SYM(GetVersion, true),         SYM(GetUniqueId, true),       SYM(CommInitRank, true),
    SYM(CommInitRankConfig, false), SYM(CommInitAll, true),      SYM(CommFinalize, false),
    SYM(CommDestroy, true),        SYM(CommAbort, true),         SYM(CommGetAsyncError, true),
    SYM(CommCount, true),          SYM(CommCuDevice, true),      SYM(CommUserRank, true),
    SYM(AllReduce, true),          SYM(AllGather, true),         SYM(ReduceScatter, true),
    SYM(Broadcast, true),          SYM(Reduce, true),            SYM(Send, true),
    SYM(Recv, true),               SYM(GroupStart, true),        SYM(GroupEnd, true),
    SYM(GetErrorString, true),     SYM(GetLastError, false),
};
#undef SYM

/* Every pointer slot is a function pointer of the same size as void * on the platforms cukern supports (POSIX
 * requires dlsym's result to convert); memcpy stores it without ISO C's object-to-function pointer cast. */
_Static_assert(sizeof(void *) == sizeof(api.GetVersion), "function pointers must be the size of void *");

static void clear_syms(ck_nccl_api *a) {
  void *null = NULL;
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) memcpy((char *)a + syms[i].offset, &null, sizeof null);
}

/* Resolve every symbol of handle h into a; false (and a->why) on the first required one missing. */
static bool resolve(ck_nccl_api *a, void *h, const char *file) {
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    dlerror();
    void *p = dlsym(h, syms[i].name);
    if (!p && syms[i].required) {
      snprintf(a->why, sizeof a->why, "%.180s lacks %s (NCCL too old, or not NCCL)", file, syms[i].name);
      clear_syms(a);
      return false;
    }
    memcpy((char *)a + syms[i].offset, &p, sizeof p);
  }
  return true;
}

/* Append s to buf (size n) if it fits, else "..." once. */
static void append(char *buf, size_t n, const char *s) {
  size_t len = strlen(buf);
  if (len + strlen(s) + 4 < n) {
    memcpy(buf + len, s, strlen(s) + 1);
  } else if (len + 4 <= n && (len < 3 || strcmp(buf + len - 3, "...") != 0)) {
    memcpy(buf + len, "...", 4);
  }
}

static void load(void) {
  ck_nccl_api *a = &api;
  memset(a, 0, sizeof *a);
  /* NVLink multicast off on the shared host, unless the user chose otherwise (overwrite = 0). */
  if (!getenv("NCCL_NVLS_ENABLE") && setenv("NCCL_NVLS_ENABLE", "0", 0) != 0) {
    snprintf(a->why, sizeof a->why, "could not set NCCL_NVLS_ENABLE=0 in the environment (setenv failed)");
    return;
  }

  /* The candidates, in order, without duplicates (CUDA_HOME is often /usr/local/cuda). */
  char cand[10][256];
  int nc = 0;
  const char *forced = getenv("CUKERN_NCCL_LIB"), *home = getenv("CUDA_HOME");
  const char *dirs[2] = {home && *home ? home : NULL, "/usr/local/cuda"};
  if (dirs[0] && strcmp(dirs[0], dirs[1]) == 0) dirs[0] = NULL;
  if (forced && *forced) {
    snprintf(cand[nc++], sizeof cand[0], "%s", forced);
  } else {
    snprintf(cand[nc++], sizeof cand[0], "libnccl.so.2");
    snprintf(cand[nc++], sizeof cand[0], "libnccl.so");
    static const char *const subs[2] = {"lib64", "lib"};
    static const char *const names[2] = {"libnccl.so.2", "libnccl.so"};
    for (int d = 0; d < 2; d++) {
      if (!dirs[d]) continue;
      for (int s = 0; s < 2; s++)
        for (int k = 0; k < 2 && nc < 10; k++) {
          int w = snprintf(cand[nc], sizeof cand[0], "%s/%s/%s", dirs[d], subs[s], names[k]);
          if (w > 0 && (size_t)w < sizeof cand[0]) nc++; /* a CUDA_HOME too long to fit is skipped */
        }
    }
  }

  /* The most telling dlerror: one that is not "No such file" (a wrong architecture, a missing dependency ...)
   * beats the first. */
  char first_err[160] = "", best_err[160] = "";
  for (int i = 0; i < nc; i++) {
    dlerror();
    void *h = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = dlerror();
      if (!e) e = "dlopen failed";
      if (!first_err[0]) snprintf(first_err, sizeof first_err, "%s", e);
      if (!best_err[0] && !strstr(e, "No such file")) snprintf(best_err, sizeof best_err, "%s", e);
      continue;
    }
    if (!resolve(a, h, cand[i])) {
      dlclose(h);
      return; /* a library that is not a usable NCCL: say so rather than try another */
    }
    a->handle = h;
    Dl_info info;
    void *gv = NULL;
    memcpy(&gv, &a->GetVersion, sizeof gv);
    if (dladdr(gv, &info) && info.dli_fname && info.dli_fname[0])
      snprintf(a->path, sizeof a->path, "%s", info.dli_fname);
    else
      snprintf(a->path, sizeof a->path, "%.255s", cand[i]);
    int v = 0;
    ncclResult_t r = a->GetVersion(&v);
    if (r != ncclSuccess) {
      snprintf(a->why, sizeof a->why, "%.160s: ncclGetVersion failed: %s", a->path, a->GetErrorString(r));
      clear_syms(a);
      a->handle = NULL;
      dlclose(h);
      return;
    }
    a->version = v;
    a->loaded = true;
    return;
  }

  /* Nothing loaded: list what was tried and the reason. */
  if (forced && *forced) {
    snprintf(a->why, sizeof a->why, "CUKERN_NCCL_LIB=%s could not be loaded: %s", forced,
             best_err[0] ? best_err : first_err);
    return;
  }
  /* Compact, to fit `why`: the loader's own error only when it says more than "No such file". */
  char *w = a->why;
  size_t wn = sizeof a->why;
  if (best_err[0])
    snprintf(w, wn, "NCCL not usable: %.120s; tried", best_err);
  else
    snprintf(w, wn, "NCCL not found: tried");
  append(w, wn, " libnccl.so.2 and libnccl.so on the loader's path (LD_LIBRARY_PATH, ldconfig), then in ");
  for (int d = 0; d < 2; d++) {
    if (!dirs[d]) continue;
    if (d == 1 && dirs[0]) append(w, wn, " and ");
    append(w, wn, dirs[d]);
    append(w, wn, "/{lib64,lib}");
  }
  append(w, wn, "; set CUKERN_NCCL_LIB to its path");
}

const ck_nccl_api *ck_nccl(void) {
  if (pthread_once(&api_once, load) != 0 && !api.loaded && !api.why[0])
    snprintf(api.why, sizeof api.why, "pthread_once failed while loading NCCL");
  return &api;
}

// ---------------------------------------------------------------- errors, dtypes, ops

const char *ck_nccl_strerror(ncclResult_t r) {
  const ck_nccl_api *a = ck_nccl();
  if (a->loaded) {
    const char *s = a->GetErrorString(r);
    if (s) return s;
  }
  switch ((int)r) { /* by number: older headers lack the later names */
  case 0: return "no error";
  case 1: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case 2: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case 3: return "internal error - please report this issue to the NCCL developers";
  case 4: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case 5: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case 6: return "remote process exited or there was a network error";
  case 7: return "NCCL operation in progress";
  default: return "unknown NCCL result code";
  }
}

/* NCCL 2.9 and older encode versions as major*1000 + minor*100 + patch, which is below 21000 as it should be. */
static bool older_than_2_10(void) {
  const ck_nccl_api *a = ck_nccl();
  return a->loaded && a->version < 21000;
}

/* The NCCL column of kernels/dtypes.def (NONE: -1, no such NCCL type). */
#define NONE (-1)
static const int NCCL_TYPES[CK_NDTYPES] = {
#define CK_DTYPE(ID, NAME, CTYPE, SIZE, CLASS, BITS, NCCL, ALIASES) [CK_##ID] = (int)(NCCL),
#include "dtypes.def"
#undef CK_DTYPE
};
#undef NONE

bool ck_nccl_dtype(int ck_dtype_id, ncclDataType_t *out) {
  if (ck_dtype_id < 0 || ck_dtype_id >= CK_NDTYPES || NCCL_TYPES[ck_dtype_id] < 0) return false;
  if (NCCL_TYPES[ck_dtype_id] == (int)ncclBfloat16 && older_than_2_10()) return false;
  *out = (ncclDataType_t)NCCL_TYPES[ck_dtype_id];
  return true;
}

bool ck_nccl_redop(int op, ncclRedOp_t *out) {
  switch (op) {
  case CK_COLL_SUM: *out = ncclSum; return true;
  case CK_COLL_PROD: *out = ncclProd; return true;
  case CK_COLL_MAX: *out = ncclMax; return true;
  case CK_COLL_MIN: *out = ncclMin; return true;
  case CK_COLL_AVG:
    if (older_than_2_10()) return false;
    *out = (ncclRedOp_t)4; /* ncclAvg (2.10+; by number for older headers) */
    return true;
  default: return false;
  }
}

// ---------------------------------------------------------------- waiting without hanging

static double now_s(void) {
  struct timespec t;
  if (clock_gettime(CLOCK_MONOTONIC, &t) != 0) return 0; /* cannot fail with CLOCK_MONOTONIC on Linux */
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void sleep_us(long us) {
  struct timespec t = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&t, &t) != 0) { /* EINTR: sleep the rest */
  }
}

/* The rank of the comm on device dev (the first such), or -1. */
static int rank_of_device(const ck_nccl_api *a, ncclComm_t *comms, int ncomms, int dev) {
  for (int i = 0; i < ncomms; i++) {
    int d = -1, rank = -1;
    if (comms[i] && a->CommCuDevice(comms[i], &d) == ncclSuccess && d == dev &&
        a->CommUserRank(comms[i], &rank) == ncclSuccess)
      return rank;
  }
  return -1;
}

static void abort_all(const ck_nccl_api *a, ncclComm_t *comms, int ncomms) {
  for (int i = 0; i < ncomms; i++)
    if (comms[i]) {
      (void)a->CommAbort(comms[i]); /* nothing better to do with its result: we are already failing */
      comms[i] = NULL;
    }
}

int ck_nccl_wait(const ck_nccl_api *a, ncclComm_t *comms, int ncomms, cudaStream_t *streams, const int *devices,
                 int nstreams, double timeout_s, char *err, size_t errn) {
  char scratch[1];
  if (!err || errn == 0) {
    err = scratch;
    errn = sizeof scratch;
  }
  err[0] = '\0';
  if (!a || !a->loaded) {
    snprintf(err, errn, "%s", a ? a->why : "NCCL not loaded");
    return 1;
  }
  if (ncomms < 0 || nstreams < 0 || (ncomms > 0 && !comms) || (nstreams > 0 && !streams)) {
    snprintf(err, errn, "ck_nccl_wait: bad arguments (%d comms, %d streams)", ncomms, nstreams);
    return 1;
  }

  int saved = -1;
  if (nstreams > 0) {
    cudaError_t ce = cudaGetDevice(&saved);
    if (ce != cudaSuccess) {
      snprintf(err, errn, "CUDA error reading the current device: %s", cudaGetErrorString(ce));
      return 1;
    }
  }
  int current = saved, next = 0, rc = 0; /* streams before `next` are idle (nothing else enqueues meanwhile) */
  double t0 = now_s();
  long backoff = 20;
  for (;;) {
    /* 1. the streams, in order, as far as they are done */
    while (next < nstreams) {
      if (devices && devices[next] != current) {
        cudaError_t ce = cudaSetDevice(devices[next]);
        if (ce != cudaSuccess) {
          snprintf(err, errn, "CUDA error selecting device %d (stream %d of %d): %s; communicators aborted",
                   devices[next], next + 1, nstreams, cudaGetErrorString(ce));
          rc = 1;
          break;
        }
        current = devices[next];
      }
      cudaError_t ce = cudaStreamQuery(streams[next]);
      if (ce == cudaErrorNotReady) break;
      if (ce != cudaSuccess) {
        snprintf(err, errn, "CUDA error on device %d (stream %d of %d): %s; communicators aborted",
                 devices ? devices[next] : current, next + 1, nstreams, cudaGetErrorString(ce));
        rc = 1;
        break;
      }
      next++;
    }
    if (rc || next == nstreams) break;

    /* 2. the communicators' asynchronous errors (a peer that died, a network failure ...) */
    for (int i = 0; i < ncomms && !rc; i++) {
      if (!comms[i]) continue;
      ncclResult_t ae = ncclSuccess, r = a->CommGetAsyncError(comms[i], &ae);
      if (r == ncclSuccess && (ae == ncclSuccess || (int)ae == 7 /* ncclInProgress: non-blocking init */))
        continue;
      ncclResult_t bad = r != ncclSuccess ? r : ae;
      int rank = -1, dev = -1;
      (void)a->CommUserRank(comms[i], &rank);
      (void)a->CommCuDevice(comms[i], &dev);
      const char *last = a->GetLastError ? a->GetLastError(comms[i]) : NULL;
      snprintf(err, errn, "NCCL async error on rank %d (device %d): %s%s%s%s; communicators aborted", rank, dev,
               ck_nccl_strerror(bad), last && *last ? " (last error: " : "", last && *last ? last : "",
               last && *last ? ")" : "");
      rc = 1;
    }
    if (rc) break;

    /* 3. the clock */
    if (timeout_s > 0 && now_s() - t0 > timeout_s) {
      int dev = devices ? devices[next] : current;
      snprintf(err, errn,
               "timed out after %g s waiting for rank %d (device %d, stream %d of %d); communicators aborted",
               timeout_s, rank_of_device(a, comms, ncomms, dev), dev, next + 1, nstreams);
      rc = 1;
      break;
    }
    sleep_us(backoff);
    if (backoff < 1000) backoff = backoff * 2 > 1000 ? 1000 : backoff * 2;
  }

  if (rc) abort_all(a, comms, ncomms);
  if (saved >= 0 && current != saved) {
    cudaError_t ce = cudaSetDevice(saved);
    if (ce != cudaSuccess && !rc) {
      snprintf(err, errn, "CUDA error restoring device %d after the wait: %s", saved, cudaGetErrorString(ce));
      rc = 1;
    }
  }
  return rc;
}
