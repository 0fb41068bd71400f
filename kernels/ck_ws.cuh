/*
 * ck_ws.cuh — scoped device workspace for launchers: memory from the context's caching allocator (ck_env's
 * ws_alloc), given back when the launcher returns. Freeing right after the launches is safe: the allocator
 * reuses memory in stream order. One definition for every ladder that needs scratch (reduce, scan, complex).
 */
#ifndef CK_WS_CUH
#define CK_WS_CUH

#include "ck_kernels.h"

struct Ws {
  const ck_env *env;
  void *p;
  Ws(const ck_env *e, size_t bytes) : env(e), p(bytes ? e->ws_alloc(e->owner, bytes) : nullptr) {}
  ~Ws() { if (p) env->ws_free(env->owner, p); }
  Ws(const Ws &) = delete;
  Ws &operator=(const Ws &) = delete;
};

#endif
