/*
 * lcukern.c — the Lua binding's module file: module state, errors raised at the user's line, argument
 * helpers, module-level functions, and luaopen_cukern_core, which registers every area's functions
 * (src/lua/lck.h lists the binding files). Binding files are the only ones that include lua.h.
 *
 * Pattern for every function: check arguments (luaL_argerror with the argument number), push the result
 * userdata first (so that a Lua memory error can no longer leak anything), call the core, and only then, if
 * the core failed, raise its message with luaL_error. Temporaries are userdata too, so the GC owns them on
 * every path. Arrays are full userdata holding a ck_tensor; views take a reference on the storage.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fft/fft.h"
#include "lck.h"

const char ckl_array_key = 0; /* its address keys the array metatable in the registry (lck.h) */

ck_ctx *ckl_ctx_of(lua_State *L) {
  ck_ctx *c = CKL_MS(L)->ctx;
  if (!c) luaL_error(L, "cukern: the module was already closed");
  return c;
}

/* Is src (a chunk's short_src) one of cukern's own Lua modules, lua/cukern/<name>.lua? Every module that calls
 * the core or raises through lua/cukern/errors.lua is listed (spec/errors_spec.lua checks it). */
static bool own_lua_file(const char *src) {
  static const char *const OWN[] = {
      "cukern/init.lua",     "cukern/errors.lua",   "cukern/args.lua",      "cukern/options.lua",
      "cukern/creation.lua", "cukern/ops.lua",      "cukern/operators.lua", "cukern/indexing.lua",
      "cukern/display.lua",  "cukern/map.lua",      "cukern/io.lua",        "cukern/bench.lua",
      "cukern/dist.lua",     "cukern/shard.lua",    "cukern/assembly.lua",  "cukern/assembly_matrix.lua",
      "cukern/linalg.lua",   "cukern/select.lua",   "cukern/sorting.lua",   "cukern/complex.lua",
      "cukern/fp8.lua",      "cukern/streams.lua",  "cukern/fft.lua",       "cukern/conv.lua",
      "cukern/rows.lua",     "cukern/complex_fns.lua"};
  const size_t n = strlen(src);
  for (size_t i = 0; i < sizeof OWN / sizeof *OWN; ++i) {
    const size_t k = strlen(OWN[i]);
    if (n >= k && strcmp(src + n - k, OWN[i]) == 0) return true;
  }
  return false;
}

/* Raise the core's message at the user's line: skip frames inside cukern's own Lua modules. The Lua twin is
 * lua/cukern/errors.lua's raise (errors raised in Lua), with the same "<src>:<line>: " shape; it skips every file of
 * lua/cukern/, of which the modules listed above are the ones that can be on the stack when C raises. */
bool ckl_user_frame(lua_State *L, lua_Debug *ar) {
  for (int level = 1; lua_getstack(L, level, ar); ++level)
    if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0 && !own_lua_file(ar->short_src)) return true;
  return false;
}

int ckl_raise_at_user(lua_State *L, const char *msg) {
  lua_Debug ar;
  if (ckl_user_frame(L, &ar)) lua_pushfstring(L, "%s:%d: %s", ar.short_src, ar.currentline, msg);
  else lua_pushstring(L, msg);
  return lua_error(L);
}

int ckl_fail(lua_State *L) { return ckl_raise_at_user(L, ck_errmsg(CKL_CTX(L))); }

/* Report device bytes allocated since the last call to Lua's collector, so that dropped arrays are
 * collected before device memory runs out. */
void ckl_gc_debt(lua_State *L) {
  size_t d = ck_take_alloc_debt(CKL_CTX(L));
  if (d >= 1024) lua_gc(L, LUA_GCSTEP, (int)(d >> 10 > 1 << 20 ? 1 << 20 : d >> 10));
}

// ---------------------------------------------------------------- argument helpers

ck_tensor *ckl_check_array(lua_State *L, int i) {
  ck_tensor *t = ckl_to_array(L, i);
  if (!t) luaL_typeerror(L, i, "cukern array");
  if (!t->st) luaL_argerror(L, i, "use of a freed array");
  return t;
}

ck_tensor *ckl_opt_array(lua_State *L, int i) {
  if (lua_isnoneornil(L, i)) return NULL;
  return ckl_check_array(L, i);
}

const char *ckl_opt_variant(lua_State *L, int i, char *buf, size_t n) {
  if (lua_isnoneornil(L, i)) return NULL;
  if (lua_type(L, i) == LUA_TNUMBER) {
    snprintf(buf, n, "%lld", (long long)luaL_checkinteger(L, i));
    return buf;
  }
  return luaL_checkstring(L, i);
}

ck_dtype ckl_check_dtype(lua_State *L, int i) {
  ck_dtype dt;
  const char *s = luaL_checkstring(L, i);
  char names[96];
  if (!ck_dtype_parse(s, &dt))
    luaL_argerror(L, i, lua_pushfstring(L, "unknown dtype '%s' (%s)", s, ck_dtype_list(names, sizeof names)));
  return dt;
}

/* A device argument: "cuda", "cuda:N", "host", "host:N" (also "gpu", "cpu"); nil is the default device. One that
 * does not exist is an error listing those that do. */
ck_device ckl_check_device(lua_State *L, int i) {
  ck_ctx *ctx = CKL_CTX(L);
  ck_device d;
  if (lua_isnoneornil(L, i)) return ck_default_device(ctx);
  const char *s = luaL_checkstring(L, i);
  if (!ck_device_parse(s, ck_default_device(ctx), &d))
    luaL_argerror(L, i, lua_pushfstring(L, "unknown device '%s' (cuda, cuda:N, host, host:N)", s));
  if (ck_check_device(ctx, d)) luaL_argerror(L, i, ck_errmsg(ctx));
  return d;
}

void ckl_push_device(lua_State *L, ck_device d) { lua_pushstring(L, ck_device_name(d).s); }

/* Integers from a Lua sequence at index i (at most CK_MAX_DIMS). */
int ckl_read_ints(lua_State *L, int i, int64_t *v) {
  luaL_checktype(L, i, LUA_TTABLE);
  const lua_Integer len = luaL_len(L, i);
  if (len > CK_MAX_DIMS || len < 0)
    luaL_argerror(L, i, lua_pushfstring(L, "%I dims requested, at most %d", len, CK_MAX_DIMS));
  const int n = (int)len;
  for (int k = 0; k < n; ++k) {
    lua_geti(L, i, k + 1);
    int ok;
    lua_Integer x = lua_tointegerx(L, -1, &ok);
    if (!ok) luaL_argerror(L, i, lua_pushfstring(L, "dim %d is not an integer (%s)", k + 1, luaL_typename(L, -1)));
    v[k] = x;
    lua_pop(L, 1);
  }
  return n;
}

/* Dims from a Lua sequence of non-negative integers at index i. */
int ckl_check_shape(lua_State *L, int i, int64_t *shape) {
  int n = ckl_read_ints(L, i, shape);
  for (int k = 0; k < n; ++k)
    if (shape[k] < 0) luaL_argerror(L, i, lua_pushfstring(L, "dim %d is negative (%I)", k + 1, (lua_Integer)shape[k]));
  return n;
}

/* A 1-based Lua dim at index i for tensor t -> 0-based; negative counts from the end (-1 = last). */
int ckl_check_dim(lua_State *L, int i, const ck_tensor *t) {
  lua_Integer d = luaL_checkinteger(L, i);
  if (d < 0) d += t->ndim + 1;
  if (d < 1 || d > t->ndim) luaL_argerror(L, i, lua_pushfstring(L, "dim out of range (1..%d)", t->ndim));
  return (int)d - 1;
}

void ckl_push_shape(lua_State *L, int n, const int64_t *v) {
  lua_createtable(L, n, 0);
  for (int k = 0; k < n; ++k) {
    lua_pushinteger(L, v[k]);
    lua_rawseti(L, -2, k + 1);
  }
}

/* A string argument or field for C: the core reads up to the first NUL, so a NUL inside would cut the text
 * short without a word. `label` names it in the message ("the expression", "map", "the entry name"). */
const char *ckl_check_text(lua_State *L, int idx, const char *label) {
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);
  if (!s) return NULL;
  const char *z = memchr(s, 0, len);
  if (z) luaL_error(L, "%s contains a NUL byte at position %d", label, (int)(z - s) + 1);
  return s;
}

void ckl_check_opts(lua_State *L, int idx, const char *what, const char *const *known) {
  if (lua_isnoneornil(L, idx)) return;
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    bool ok = false;
    if (lua_type(L, -2) == LUA_TSTRING)
      for (const char *const *k = known; *k; ++k) ok |= !strcmp(*k, lua_tostring(L, -2));
    if (!ok) luaL_argerror(L, idx, lua_pushfstring(L, "%s: unknown option '%s'", what, lua_tostring(L, -2)));
    lua_pop(L, 1);
  }
}

void ckl_host_ran(ck_ran *ran) {
  memset(ran, 0, sizeof *ran);
  ran->id = -1;
  strcpy(ran->name, "host");
}


void ckl_new_class(lua_State *L, const char *name, lua_CFunction gc, const luaL_Reg *methods) {
  luaL_newmetatable(L, name);
  lua_pushvalue(L, -2); /* the module state: __gc may need it too (a graph gives its memory back to the context) */
  lua_pushcclosure(L, gc, 1);
  lua_setfield(L, -2, "__gc");
  lua_newtable(L);
  lua_pushvalue(L, -3); /* the module state */
  luaL_setfuncs(L, methods, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

void ckl_push_kinfo(lua_State *L, const ck_kinfo *k) {
  lua_createtable(L, 0, 13);
  lua_pushstring(L, k->name);
  lua_setfield(L, -2, "name");
  lua_pushstring(L, k->symbol);
  lua_setfield(L, -2, "symbol");
#define SETI(f)                                                                                               \
  lua_pushinteger(L, (lua_Integer)k->f);                                                                      \
  lua_setfield(L, -2, #f)
  SETI(registers);
  SETI(static_smem);
  SETI(dynamic_smem);
  SETI(local_bytes);
  SETI(const_bytes);
  SETI(max_threads);
  SETI(block);
  SETI(blocks_per_sm);
  SETI(ptx_version);
  SETI(binary_version);
#undef SETI
  lua_pushnumber(L, k->occupancy);
  lua_setfield(L, -2, "occupancy");
}

void ckl_push_kernels(lua_State *L, const ck_launch_note *note) {
  lua_createtable(L, note->n, 0);
  for (int i = 0; i < note->n; ++i) {
    ck_kinfo k;
    if (ck_kernel_info(CKL_CTX(L), &note->k[i], &k)) ckl_fail(L);
    ckl_push_kinfo(L, &k);
    lua_rawseti(L, -2, i + 1);
  }
}

void ckl_push_ran(lua_State *L, const ck_ran *r, const ck_kinfo *user) {
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, r->id);
  lua_setfield(L, -2, "id");
  lua_pushstring(L, r->name);
  lua_setfield(L, -2, "name");
  lua_pushstring(L, r->note);
  lua_setfield(L, -2, "note");
  if (!r->gpu) return; /* the host oracle, or nothing launched: no kernels to describe */
  lua_pushboolean(L, r->library);
  lua_setfield(L, -2, "library");
  if (user) {
    lua_createtable(L, 1, 0);
    ckl_push_kinfo(L, user);
    lua_rawseti(L, -2, 1);
  } else {
    ckl_push_kernels(L, &r->kernels);
  }
  lua_setfield(L, -2, "kernels");
}

// ---------------------------------------------------------------- module functions

/* The fields of one device's record (ck.device(d), ck.devices()). */
static void push_devinfo(lua_State *L, ck_device d) {
  ck_devinfo in;
  ck_device_info(CKL_CTX(L), d, &in);
  lua_createtable(L, 0, 14);
  ckl_push_device(L, d);
  lua_setfield(L, -2, "id");
  lua_pushinteger(L, d.index);
  lua_setfield(L, -2, "index");
  lua_pushstring(L, in.backend);
  lua_setfield(L, -2, "backend");
  lua_pushstring(L, in.name);
  lua_setfield(L, -2, "name");
  if (d.kind == CK_CUDA) {
    lua_pushfstring(L, "%d.%d", in.cc_major, in.cc_minor);
    lua_setfield(L, -2, "cc");
    lua_pushinteger(L, in.sm_count);
    lua_setfield(L, -2, "sm_count");
    lua_pushinteger(L, (lua_Integer)in.total_mem);
    lua_setfield(L, -2, "total_mem");
    lua_pushinteger(L, (lua_Integer)in.free_mem);
    lua_setfield(L, -2, "free_mem");
    lua_pushinteger(L, (lua_Integer)in.l2_bytes);
    lua_setfield(L, -2, "l2_bytes");
    lua_pushinteger(L, (lua_Integer)in.smem_optin);
    lua_setfield(L, -2, "smem_per_block");
  } else if (!ck_has_cuda(CKL_CTX(L))) {
    lua_pushstring(L, in.why_host);
    lua_setfield(L, -2, "why_host");
  }
  lua_pushinteger(L, ck_device_count(CKL_CTX(L), CK_CUDA));
  lua_setfield(L, -2, "device_count");
  lua_pushfstring(L, "%d.%d", in.driver_version / 1000, (in.driver_version % 1000) / 10);
  lua_setfield(L, -2, "driver");
  lua_pushfstring(L, "%d.%d", in.runtime_version / 1000, (in.runtime_version % 1000) / 10);
  lua_setfield(L, -2, "runtime");
  ckl_push_device(L, ck_default_device(CKL_CTX(L)));
  lua_setfield(L, -2, "default");
}

/* ck.device([d]) -> the record of d (default: the default device) */
static int l_device(lua_State *L) {
  push_devinfo(L, ckl_check_device(L, 1));
  return 1;
}

/* ck.devices() -> every device: cuda:0 .. cuda:N-1, then host:0 .. host:M-1 */
static int l_devices(lua_State *L) {
  ck_ctx *ctx = CKL_CTX(L);
  const int nc = ck_device_count(ctx, CK_CUDA), nh = ck_device_count(ctx, CK_HOST);
  lua_createtable(L, nc + nh, 0);
  for (int i = 0; i < nc + nh; ++i) {
    push_devinfo(L, i < nc ? ck_device_make(CK_CUDA, i) : ck_device_make(CK_HOST, i - nc));
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int l_has_cuda(lua_State *L) {
  lua_pushboolean(L, ck_has_cuda(CKL_CTX(L)));
  return 1;
}

static int l_default_device(lua_State *L) {
  if (!lua_isnoneornil(L, 1)) {
    if (lua_type(L, 1) == LUA_TSTRING && !ck_has_cuda(CKL_CTX(L))) {
      ck_device d;
      if (ck_device_parse(lua_tostring(L, 1), CK_DEV_HOST, &d) && d.kind == CK_CUDA) {
        ck_devinfo in;
        ck_device_info(CKL_CTX(L), d, &in);
        return luaL_error(L, "default_device: cannot use cuda: %s", in.why_host);
      }
    }
    ck_set_default_device(CKL_CTX(L), ckl_check_device(L, 1));
  }
  ckl_push_device(L, ck_default_device(CKL_CTX(L)));
  return 1;
}

/* ck.sync([d | "all"]): wait for the default device (or d, or every device) to finish the work issued so far */
static int l_sync(lua_State *L) {
  ck_ctx *ctx = CKL_CTX(L);
  ck_status st;
  if (lua_type(L, 1) == LUA_TSTRING && strcmp(lua_tostring(L, 1), "all") == 0) st = ck_synchronize_all(ctx);
  else st = ck_synchronize_device(ctx, ckl_check_device(L, 1));
  if (st) return ckl_fail(L);
  return 0;
}

static int l_sync_mode(lua_State *L) {
  if (!lua_isnoneornil(L, 1)) {
    luaL_checktype(L, 1, LUA_TBOOLEAN);
    ck_set_sync_mode(CKL_CTX(L), lua_toboolean(L, 1));
  }
  lua_pushboolean(L, ck_sync_mode(CKL_CTX(L)));
  return 1;
}

/* ck.batching([on]) -> whether small ops are batched (kernels/batched/); turning it off flushes the batch */
static int l_batching(lua_State *L) {
  if (!lua_isnoneornil(L, 1)) {
    luaL_checktype(L, 1, LUA_TBOOLEAN);
    if (ck_set_batching(CKL_CTX(L), lua_toboolean(L, 1))) return ckl_fail(L);
  }
  lua_pushboolean(L, ck_batching(CKL_CTX(L)));
  return 1;
}

static int l_seed(lua_State *L) {
  lua_Integer s = luaL_checkinteger(L, 1);
  /* the seed travels to the kernels as a double (ck_ew_desc.s1): keep it exact */
  if (s > ((lua_Integer)1 << 53) || s < -((lua_Integer)1 << 53)) return luaL_argerror(L, 1, "seed must be within +-2^53");
  CKL_MS(L)->seed = (uint64_t)s;
  CKL_MS(L)->draws = 0;
  return 0;
}

/* ck.memory([d]) -> the allocator's statistics of d (default: the default device); host_in_use: every host array */
static int l_memory(lua_State *L) {
  ck_memstats m;
  ck_memory_stats(CKL_CTX(L), ckl_check_device(L, 1), &m);
  lua_createtable(L, 0, 10);
#define F(k)                                                                                                  \
  lua_pushinteger(L, (lua_Integer)m.k);                                                                       \
  lua_setfield(L, -2, #k)
  F(in_use);
  F(cached);
  F(peak);
  F(allocations);
  F(cuda_mallocs);
  F(frees);
  F(cache_hits);
  F(oom_retries);
  F(host_in_use);
  F(pinned);
  F(segments);
#undef F
  lua_pushinteger(L, ck_fft_plans_count()); /* cuFFT's cached plans, every device (ck.empty_cache drops them) */
  lua_setfield(L, -2, "fft_plans");
  return 1;
}

static int l_empty_cache(lua_State *L) {
  lua_gc(L, LUA_GCCOLLECT, 0);
  ck_empty_cache(CKL_CTX(L));
  return 0;
}

static int l_last_ran(lua_State *L) {
  const ckl_modstate *ms = CKL_MS(L);
  ckl_push_ran(L, &ms->last, ms->last_user ? &ms->last_kernel : NULL);
  return 1;
}

static int l_variants(lua_State *L) {
  const char *op = luaL_checkstring(L, 1);
  int n;
  const ck_variant *tab = ck_variants(op, &n);
  if (!tab)
    return luaL_argerror(L, 1, lua_pushfstring(L, "unknown op '%s' (matmul, reduce, transpose, elementwise, index, lu, scan, sort, histogram, searchsorted, rows, attention)", op));
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; ++i) {
    lua_createtable(L, 0, 6);
    lua_pushinteger(L, tab[i].id);
    lua_setfield(L, -2, "id");
    lua_pushstring(L, tab[i].name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, tab[i].summary);
    lua_setfield(L, -2, "summary");
    lua_newtable(L);
    int k = 0;
    for (int d = 0; d < CK_NDTYPES; ++d)
      if (tab[i].dtypes & CK_DT_BIT(d)) {
        lua_pushstring(L, ck_dtype_name((ck_dtype)d));
        lua_rawseti(L, -2, ++k);
      }
    lua_setfield(L, -2, "dtypes");
    if (tab[i].flags & CK_VF_BATCHED) { /* the batch of small ops: not a rung to time at ladder sizes */
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, "batched");
    }
    ck_launch_note kernels;
    bool library;
    if (ck_variant_last(CKL_CTX(L), tab, i, &kernels, &library)) { /* it ran on the GPU in this process */
      lua_pushboolean(L, library);
      lua_setfield(L, -2, "library");
      ckl_push_kernels(L, &kernels);
      lua_setfield(L, -2, "kernels");
    }
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

// ---------------------------------------------------------------- module

static int ctx_gc(lua_State *L) {
  ckl_modstate *ms = (ckl_modstate *)luaL_checkudata(L, 1, CTX_MT);
  if (ms->ctx) {
    ckl_dist_close(ms);
    ck_ctx_destroy(ms->ctx);
    ms->ctx = NULL;
  }
  return 0;
}

static void oom_hook(void *ud) {
  lua_State *L = (lua_State *)ud;
  lua_gc(L, LUA_GCCOLLECT, 0);
}

static const luaL_Reg FUNCS[] = {
    {"device", l_device}, {"devices", l_devices}, {"has_cuda", l_has_cuda}, {"default_device", l_default_device}, {"sync", l_sync},
    {"sync_mode", l_sync_mode}, {"batching", l_batching}, {"seed", l_seed}, {"memory", l_memory}, {"empty_cache", l_empty_cache},
    {"last_ran", l_last_ran}, {"variants", l_variants}, {NULL, NULL}};

int luaopen_cukern_core(lua_State *L) {
  /* One state per Lua state: a second require (after clearing package.loaded) must reuse it, because live
   * arrays reference its context and metatables. */
  if (lua_getfield(L, LUA_REGISTRYINDEX, "cukern.core.module") == LUA_TTABLE) return 1;
  lua_pop(L, 1);
  ckl_modstate *ms = (ckl_modstate *)lua_newuserdatauv(L, sizeof(ckl_modstate), 0); /* upvalue of every function */
  memset(ms, 0, sizeof *ms);
  luaL_newmetatable(L, CTX_MT);
  lua_pushcfunction(L, ctx_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  if (ck_ctx_create(&ms->ctx) != CK_OK) return luaL_error(L, "cukern: out of memory creating the context");
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  ms->L = lua_tothread(L, -1);
  lua_pop(L, 1);
  ck_set_oom_hook(ms->ctx, oom_hook, ms->L);
  ms->seed = 0x5eedULL;
  ckl_host_ran(&ms->last);

  /* the array metatable; its __index is the methods table, which lua/cukern/ extends */
  luaL_newmetatable(L, ARRAY_MT);
  lua_newtable(L);
  lua_pushvalue(L, -3);
  luaL_setfuncs(L, ckl_array_methods, 1);
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, ckl_array_release, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "__gc");
  lua_setfield(L, -2, "__close");
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, ckl_array_len, 1);
  lua_setfield(L, -2, "__len");
  lua_pushliteral(L, "cukern.array");
  lua_setfield(L, -2, "__name");
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &ckl_array_key); /* the fast lookups (lck.h) */
  ms->array_mt = lua_topointer(L, -1);
  lua_pushvalue(L, -1);
  ms->array_mt_ref = luaL_ref(L, LUA_REGISTRYINDEX);

  lua_pushvalue(L, -2); /* module state: upvalue of the other metatables' methods */
  ckl_rtc_init(L);
  ckl_map_init(L);
  ckl_bench_init(L);
  ckl_graph_init(L);
  ckl_dist_init(L);
  ckl_stream_init(L);
  lua_pop(L, 1);

  lua_newtable(L); /* module */
  static const luaL_Reg *const AREAS[] = {FUNCS,         ckl_array_funcs, ckl_ops_funcs, ckl_bench_funcs,
                                          ckl_rtc_funcs, ckl_map_funcs,   ckl_io_funcs,  ckl_graph_funcs,
                                          ckl_dist_funcs, ckl_linalg_funcs, ckl_stream_funcs};
  for (size_t i = 0; i < sizeof AREAS / sizeof *AREAS; ++i) {
    lua_pushvalue(L, -3);
    luaL_setfuncs(L, AREAS[i], 1);
  }
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "array_mt");
  lua_getfield(L, -2, "__index");
  lua_setfield(L, -2, "methods");
  lua_pushliteral(L, CK_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "cukern.core.module");
  return 1;
}

