/*
 * lcukern.c — the Lua binding (luaopen_cukern_core). The only file that includes lua.h.
 *
 * Pattern for every function: check arguments (luaL_argerror with the argument number), push the result
 * userdata first (so that a Lua memory error can no longer leak anything), call the core, and only then, if
 * the core failed, raise its message with luaL_error. Temporaries are userdata too, so the GC owns them on
 * every path. Arrays are full userdata holding a ck_tensor; views take a reference on the storage.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>

#include "ck.h"
#include "ew_ops.h"
#include "reduce_ops.h"

#define ARRAY_MT "cukern.array"
#define CTX_MT "cukern.ctx"
#define TIMER_MT "cukern.timer"

/* Per-Lua-state module state: the core context plus what only the binding needs. */
typedef struct {
  ck_ctx *ctx;
  lua_State *L;
  uint64_t seed, draws; /* Philox key and counter offset for the next rand/randn */
  ck_ran last;          /* the variant the last op ran */
} modstate;

static modstate *MS(lua_State *L) { return (modstate *)lua_touserdata(L, lua_upvalueindex(1)); }

/* The context, or an error if lua_close already destroyed it (a finaliser running after ours). */
static ck_ctx *ctx_of(lua_State *L) {
  ck_ctx *c = MS(L)->ctx;
  if (!c) luaL_error(L, "cukern: the module was already closed");
  return c;
}
#define CTX(L) ctx_of(L)

/* Raise the core's message at the user's line: skip frames inside cukern's own Lua wrappers. */
static int raise_at_user(lua_State *L, const char *msg) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); ++level) {
    if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
    if (strstr(ar.short_src, "cukern/init.lua") || strstr(ar.short_src, "cukern\\init.lua")) continue;
    lua_pushfstring(L, "%s:%d: %s", ar.short_src, ar.currentline, msg);
    return lua_error(L);
  }
  lua_pushstring(L, msg);
  return lua_error(L);
}

static int fail(lua_State *L) { return raise_at_user(L, ck_errmsg(CTX(L))); }

/* Report device bytes allocated since the last call to Lua's collector, so that dropped arrays are
 * collected before device memory runs out. */
static void gc_debt(lua_State *L) {
  size_t d = ck_take_alloc_debt(CTX(L));
  if (d >= 1024) lua_gc(L, LUA_GCSTEP, (int)(d >> 10 > 1 << 20 ? 1 << 20 : d >> 10));
}

// ---------------------------------------------------------------- arrays on the Lua side

static ck_tensor *push_array(lua_State *L) {
  ck_tensor *t = (ck_tensor *)lua_newuserdatauv(L, sizeof(ck_tensor), 0);
  memset(t, 0, sizeof *t);
  luaL_setmetatable(L, ARRAY_MT);
  return t;
}

static ck_tensor *to_array(lua_State *L, int i) { return (ck_tensor *)luaL_testudata(L, i, ARRAY_MT); }

static ck_tensor *check_array(lua_State *L, int i) {
  ck_tensor *t = to_array(L, i);
  if (!t) luaL_typeerror(L, i, "cukern array");
  if (!t->st) luaL_argerror(L, i, "use of a freed array");
  return t;
}

static ck_tensor *opt_array(lua_State *L, int i) {
  if (lua_isnoneornil(L, i)) return NULL;
  return check_array(L, i);
}

static const char *opt_variant(lua_State *L, int i, char *buf, size_t n) {
  if (lua_isnoneornil(L, i)) return NULL;
  if (lua_type(L, i) == LUA_TNUMBER) {
    snprintf(buf, n, "%lld", (long long)luaL_checkinteger(L, i));
    return buf;
  }
  return luaL_checkstring(L, i);
}

static ck_dtype check_dtype(lua_State *L, int i) {
  ck_dtype dt;
  const char *s = luaL_checkstring(L, i);
  if (!ck_dtype_parse(s, &dt)) luaL_argerror(L, i, lua_pushfstring(L, "unknown dtype '%s' (f32, f64, i32)", s));
  return dt;
}

static bool parse_device(const char *s, ck_devkind *d) {
  if (strcmp(s, "cuda") == 0 || strcmp(s, "gpu") == 0) *d = CK_CUDA;
  else if (strcmp(s, "host") == 0 || strcmp(s, "cpu") == 0) *d = CK_HOST;
  else return false;
  return true;
}

static ck_devkind check_device(lua_State *L, int i) {
  ck_devkind d;
  if (lua_isnoneornil(L, i)) return ck_default_device(CTX(L));
  const char *s = luaL_checkstring(L, i);
  if (!parse_device(s, &d)) luaL_argerror(L, i, lua_pushfstring(L, "unknown device '%s' (cuda, host)", s));
  return d;
}

/* Integers from a Lua sequence at index i (at most CK_MAX_DIMS). */
static int read_ints(lua_State *L, int i, int64_t *v) {
  luaL_checktype(L, i, LUA_TTABLE);
  int n = (int)luaL_len(L, i);
  if (n > CK_MAX_DIMS) luaL_argerror(L, i, lua_pushfstring(L, "%d dims requested, at most %d", n, CK_MAX_DIMS));
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
static int check_shape(lua_State *L, int i, int64_t *shape) {
  int n = read_ints(L, i, shape);
  for (int k = 0; k < n; ++k)
    if (shape[k] < 0) luaL_argerror(L, i, lua_pushfstring(L, "dim %d is negative (%I)", k + 1, (lua_Integer)shape[k]));
  return n;
}

/* A 1-based Lua dim at index i for tensor t -> 0-based; negative counts from the end (-1 = last). */
static int check_dim(lua_State *L, int i, const ck_tensor *t) {
  lua_Integer d = luaL_checkinteger(L, i);
  if (d < 0) d += t->ndim + 1;
  if (d < 1 || d > t->ndim) luaL_argerror(L, i, lua_pushfstring(L, "dim out of range (1..%d)", t->ndim));
  return (int)d - 1;
}

static void push_shape(lua_State *L, int n, const int64_t *v) {
  lua_createtable(L, n, 0);
  for (int k = 0; k < n; ++k) {
    lua_pushinteger(L, v[k]);
    lua_rawseti(L, -2, k + 1);
  }
}

static void set_last(lua_State *L, const ck_ran *ran) { MS(L)->last = *ran; }

static void host_ran(ck_ran *ran) {
  memset(ran, 0, sizeof *ran);
  ran->id = -1;
  strcpy(ran->name, "host");
}

// ---------------------------------------------------------------- module functions

static int l_device(lua_State *L) {
  ck_devinfo in;
  ck_device_info(CTX(L), &in);
  lua_createtable(L, 0, 12);
  lua_pushstring(L, in.backend);
  lua_setfield(L, -2, "backend");
  lua_pushstring(L, in.name);
  lua_setfield(L, -2, "name");
  if (ck_has_cuda(CTX(L))) {
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
    lua_pushinteger(L, in.device_count);
    lua_setfield(L, -2, "device_count");
  } else {
    lua_pushstring(L, in.why_host);
    lua_setfield(L, -2, "why_host");
  }
  lua_pushfstring(L, "%d.%d", in.driver_version / 1000, (in.driver_version % 1000) / 10);
  lua_setfield(L, -2, "driver");
  lua_pushfstring(L, "%d.%d", in.runtime_version / 1000, (in.runtime_version % 1000) / 10);
  lua_setfield(L, -2, "runtime");
  lua_pushstring(L, ck_dev_name(ck_default_device(CTX(L))));
  lua_setfield(L, -2, "default");
  return 1;
}

static int l_has_cuda(lua_State *L) {
  lua_pushboolean(L, ck_has_cuda(CTX(L)));
  return 1;
}

static int l_default_device(lua_State *L) {
  if (!lua_isnoneornil(L, 1)) {
    ck_devkind d = check_device(L, 1);
    if (d == CK_CUDA && !ck_has_cuda(CTX(L))) {
      ck_devinfo in;
      ck_device_info(CTX(L), &in);
      return luaL_error(L, "default_device: cannot use cuda: %s", in.why_host);
    }
    ck_set_default_device(CTX(L), d);
  }
  lua_pushstring(L, ck_dev_name(ck_default_device(CTX(L))));
  return 1;
}

static int l_sync(lua_State *L) {
  if (ck_synchronize(CTX(L))) return fail(L);
  return 0;
}

static int l_sync_mode(lua_State *L) {
  if (!lua_isnoneornil(L, 1)) ck_set_sync_mode(CTX(L), lua_toboolean(L, 1));
  lua_pushboolean(L, ck_sync_mode(CTX(L)));
  return 1;
}

static int l_seed(lua_State *L) {
  lua_Integer s = luaL_checkinteger(L, 1);
  /* the seed travels to the kernels as a double (ck_ew_desc.s1): keep it exact */
  if (s > ((lua_Integer)1 << 53) || s < -((lua_Integer)1 << 53)) return luaL_argerror(L, 1, "seed must be within +-2^53");
  MS(L)->seed = (uint64_t)s;
  MS(L)->draws = 0;
  return 0;
}

static int l_memory(lua_State *L) {
  ck_memstats m;
  ck_memory_stats(CTX(L), &m);
  lua_createtable(L, 0, 9);
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
#undef F
  return 1;
}

static int l_empty_cache(lua_State *L) {
  lua_gc(L, LUA_GCCOLLECT, 0);
  ck_empty_cache(CTX(L));
  return 0;
}

static int l_last_ran(lua_State *L) {
  const ck_ran *r = &MS(L)->last;
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, r->id);
  lua_setfield(L, -2, "id");
  lua_pushstring(L, r->name);
  lua_setfield(L, -2, "name");
  lua_pushstring(L, r->note);
  lua_setfield(L, -2, "note");
  return 1;
}

static int l_variants(lua_State *L) {
  const char *op = luaL_checkstring(L, 1);
  int n;
  const ck_variant *tab = ck_variants(op, &n);
  if (!tab)
    return luaL_argerror(L, 1, lua_pushfstring(L, "unknown op '%s' (matmul, reduce, transpose, elementwise)", op));
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; ++i) {
    lua_createtable(L, 0, 5);
    lua_pushinteger(L, tab[i].id);
    lua_setfield(L, -2, "id");
    lua_pushstring(L, tab[i].name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, tab[i].summary);
    lua_setfield(L, -2, "summary");
    lua_pushboolean(L, (tab[i].flags & CK_VF_BENCH_ONLY) != 0);
    lua_setfield(L, -2, "bench_only");
    lua_newtable(L);
    int k = 0;
    for (int d = 0; d < CK_NDTYPES; ++d)
      if (tab[i].dtypes & CK_DT_BIT(d)) {
        lua_pushstring(L, ck_dtype_name((ck_dtype)d));
        lua_rawseti(L, -2, ++k);
      }
    lua_setfield(L, -2, "dtypes");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* core.empty(shape, dtype, device) */
static int l_empty(lua_State *L) {
  int64_t shape[CK_MAX_DIMS];
  int n = check_shape(L, 1, shape);
  ck_dtype dt = lua_isnoneornil(L, 2) ? CK_F32 : check_dtype(L, 2);
  ck_devkind dev = check_device(L, 3);
  ck_tensor *t = push_array(L);
  if (ck_empty(CTX(L), t, dt, n, shape, dev)) return fail(L);
  gc_debt(L);
  return 1;
}

/* core.generate(t, what, s1, s2): fill/arange/eye/rand/randn into t (any strides) */
static int l_generate(lua_State *L) {
  static const char *const names[] = {"fill", "arange", "eye", "rand", "randn", NULL};
  static const int ops[] = {CK_EW_FILL, CK_EW_ARANGE, CK_EW_EYE, CK_EW_RAND, CK_EW_RANDN};
  ck_tensor *t = check_array(L, 1);
  int which = luaL_checkoption(L, 2, NULL, names);
  double s1 = luaL_optnumber(L, 3, 0), s2 = luaL_optnumber(L, 4, 0);
  if (ops[which] == CK_EW_RAND || ops[which] == CK_EW_RANDN) {
    s1 = (double)(int64_t)MS(L)->seed;
    s2 = (double)MS(L)->draws++;
  }
  if (ck_ew_generate(CTX(L), ops[which], t, s1, s2)) return fail(L);
  lua_settop(L, 1);
  return 1;
}

// ---------------------------------------------------------------- nested tables <-> arrays

static void store_value(void *buf, ck_dtype dt, int64_t i, double v) {
  switch (dt) {
  case CK_F32: ((float *)buf)[i] = (float)v; break;
  case CK_F64: ((double *)buf)[i] = v; break;
  case CK_I32: ((int32_t *)buf)[i] = ck_ew_f2i(v); break;
  default: break;
  }
}

static double load_value(const void *buf, ck_dtype dt, int64_t i) {
  switch (dt) {
  case CK_F32: return ((const float *)buf)[i];
  case CK_F64: return ((const double *)buf)[i];
  case CK_I32: return ((const int32_t *)buf)[i];
  default: return NAN;
  }
}

static void push_value(lua_State *L, const void *buf, ck_dtype dt, int64_t i) {
  if (dt == CK_I32) lua_pushinteger(L, ((const int32_t *)buf)[i]);
  else lua_pushnumber(L, load_value(buf, dt, i));
}

/* Walks the nested table at stack index `idx` at depth d, checking it is rectangular, storing leaves. */
static void fill_from(lua_State *L, int idx, int d, int nd, const int64_t *shape, void *buf, ck_dtype dt,
                      int64_t *pos, char *path, size_t plen) {
  int64_t n = (int64_t)lua_rawlen(L, idx);
  if (n != shape[d])
    luaL_error(L, "array: ragged nested table: %s has %I elements, expected %I (shape from the first elements)",
               plen ? path : "the top level", (lua_Integer)n, (lua_Integer)shape[d]);
  for (int64_t k = 1; k <= n; ++k) {
    lua_rawgeti(L, idx, k);
    size_t l2 = plen + (size_t)snprintf(path + plen, 256 - plen, "[%lld]", (long long)k);
    if (d == nd - 1) {
      int ok;
      double v;
      if (lua_isboolean(L, -1)) v = lua_toboolean(L, -1);
      else {
        v = lua_tonumberx(L, -1, &ok);
        if (!ok)
          luaL_error(L, "array: element %s is a %s, not a number%s", path, luaL_typename(L, -1),
                     lua_istable(L, -1) ? " (ragged nesting)" : "");
      }
      store_value(buf, dt, (*pos)++, v);
    } else {
      if (!lua_istable(L, -1)) luaL_error(L, "array: ragged nested table: %s is a %s, expected a table", path, luaL_typename(L, -1));
      fill_from(L, lua_gettop(L), d + 1, nd, shape, buf, dt, pos, path, l2 < 256 ? l2 : 255);
    }
    lua_pop(L, 1);
  }
}

/* core.from_table(tbl_or_number, dtype, device) */
static int l_from_table(lua_State *L) {
  ck_dtype dt = lua_isnoneornil(L, 2) ? CK_F32 : check_dtype(L, 2);
  ck_devkind dev = check_device(L, 3);
  int64_t shape[CK_MAX_DIMS];
  int nd = 0;
  if (!lua_istable(L, 1) && !lua_isnumber(L, 1) && !lua_isboolean(L, 1)) luaL_typeerror(L, 1, "table or number");
  lua_pushvalue(L, 1);
  while (lua_istable(L, -1)) {
    if (nd == CK_MAX_DIMS) return luaL_error(L, "array: nesting deeper than %d dims", CK_MAX_DIMS);
    shape[nd++] = (int64_t)lua_rawlen(L, -1);
    if (shape[nd - 1] == 0) break;
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
  if (ck_check_shape(CTX(L), "array", nd, shape, dt)) return fail(L);
  int64_t n = 1;
  for (int k = 0; k < nd; ++k) n *= shape[k];
  void *buf = lua_newuserdatauv(L, (size_t)(n ? n : 1) * ck_dtype_size(dt), 0); /* GC-owned scratch */
  int64_t pos = 0;
  char path[256] = "";
  if (nd == 0) {
    double v = lua_isboolean(L, 1) ? lua_toboolean(L, 1) : lua_tonumber(L, 1);
    store_value(buf, dt, 0, v);
  } else {
    fill_from(L, 1, 0, nd, shape, buf, dt, &pos, path, 0);
  }
  ck_tensor *t = push_array(L);
  if (ck_empty(CTX(L), t, dt, nd, shape, dev) || ck_write(CTX(L), t, buf)) return fail(L);
  gc_debt(L);
  return 1;
}

static void build_table(lua_State *L, const ck_tensor *t, const void *buf, int d, int64_t *pos) {
  lua_createtable(L, (int)t->shape[d], 0);
  for (int64_t k = 1; k <= t->shape[d]; ++k) {
    if (d == t->ndim - 1) push_value(L, buf, t->dtype, (*pos)++);
    else build_table(L, t, buf, d + 1, pos);
    lua_rawseti(L, -2, k);
  }
}

static int m_totable(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  int64_t n = ck_numel(t);
  void *buf = lua_newuserdatauv(L, (size_t)(n ? n : 1) * ck_dtype_size(t->dtype), 0);
  if (n && ck_read(CTX(L), t, buf)) return fail(L);
  if (t->ndim == 0) {
    push_value(L, buf, t->dtype, 0);
    return 1;
  }
  int64_t pos = 0;
  luaL_checkstack(L, t->ndim + 4, "totable");
  build_table(L, t, buf, 0, &pos);
  return 1;
}

/* a:flat() -> flat Lua list of the values in logical order (used by tostring and specs) */
static int m_flat(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  int64_t n = ck_numel(t);
  void *buf = lua_newuserdatauv(L, (size_t)(n ? n : 1) * ck_dtype_size(t->dtype), 0);
  if (n && ck_read(CTX(L), t, buf)) return fail(L);
  lua_createtable(L, (int)n, 0);
  for (int64_t k = 0; k < n; ++k) {
    push_value(L, buf, t->dtype, k);
    lua_rawseti(L, -2, k + 1);
  }
  return 1;
}

static int m_item(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  if (ck_numel(t) != 1) {
    char sh[96];
    return luaL_error(L, "item: array has %I elements (shape %s), item() needs exactly 1", (lua_Integer)ck_numel(t),
                      ck_shape_str(t->ndim, t->shape, sh, sizeof sh));
  }
  double v[1];
  if (ck_read(CTX(L), t, v)) return fail(L);
  push_value(L, v, t->dtype, 0);
  return 1;
}

// ---------------------------------------------------------------- queries

static int m_shape(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  push_shape(L, t->ndim, t->shape);
  return 1;
}
static int m_strides(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  push_shape(L, t->ndim, t->stride);
  return 1;
}
static int m_size(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  if (lua_isnoneornil(L, 2)) return m_shape(L);
  lua_pushinteger(L, t->shape[check_dim(L, 2, t)]);
  return 1;
}
static int m_offset(lua_State *L) {
  lua_pushinteger(L, check_array(L, 1)->offset);
  return 1;
}
static int m_dtype(lua_State *L) {
  lua_pushstring(L, ck_dtype_name(check_array(L, 1)->dtype));
  return 1;
}
static int m_numel(lua_State *L) {
  lua_pushinteger(L, ck_numel(check_array(L, 1)));
  return 1;
}
static int m_ndim(lua_State *L) {
  lua_pushinteger(L, check_array(L, 1)->ndim);
  return 1;
}
static int m_device(lua_State *L) {
  lua_pushstring(L, ck_dev_name(ck_dev(check_array(L, 1))));
  return 1;
}
static int m_is_contiguous(lua_State *L) {
  lua_pushboolean(L, ck_is_contiguous(check_array(L, 1)));
  return 1;
}
static int m_is_freed(lua_State *L) {
  ck_tensor *t = to_array(L, 1);
  if (!t) luaL_typeerror(L, 1, "cukern array");
  lua_pushboolean(L, t->st == NULL);
  return 1;
}
/* Identity of the underlying storage (views of one array share it) and the storage's reference count. */
static int m_storage_id(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  lua_pushfstring(L, "%p", (void *)t->st);
  lua_pushinteger(L, t->st->refs);
  return 2;
}
static int m_len(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  lua_pushinteger(L, t->ndim ? t->shape[0] : 1);
  return 1;
}

static int m_release(lua_State *L) { /* __gc, __close and :free() */
  ck_tensor *t = to_array(L, 1);
  if (t) ck_release(t);
  return 0;
}

// ---------------------------------------------------------------- copies and views

static int m_clone(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  ck_tensor *r = push_array(L);
  if (ck_empty_like(CTX(L), r, t) || ck_copy(CTX(L), r, t)) return fail(L);
  gc_debt(L);
  return 1;
}

static int m_contiguous(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  ck_tensor *r = push_array(L);
  if (ck_contiguous(CTX(L), r, t)) return fail(L);
  gc_debt(L);
  return 1;
}

/* a:to(x [, y]) with x, y each a device or a dtype name */
static int m_to(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  ck_devkind dev = ck_dev(t);
  ck_dtype dt = t->dtype;
  for (int i = 2; i <= 3 && !lua_isnoneornil(L, i); ++i) {
    const char *s = luaL_checkstring(L, i);
    if (!parse_device(s, &dev) && !ck_dtype_parse(s, &dt))
      return luaL_argerror(L, i, lua_pushfstring(L, "'%s' is neither a device (cuda, host) nor a dtype (f32, f64, i32)", s));
  }
  ck_tensor *r = push_array(L);
  if (ck_to(CTX(L), r, t, dev, dt)) return fail(L);
  gc_debt(L);
  return 1;
}

static int m_copy_(lua_State *L) {
  ck_tensor *dst = check_array(L, 1), *src = check_array(L, 2);
  ck_tensor *e = push_array(L); /* src broadcast to dst's shape */
  if (ck_view_expand(CTX(L), e, src, dst->ndim, dst->shape)) {
    char s1[96], s2[96];
    return luaL_error(L, "copy_: source %s cannot be broadcast to the destination %s",
                      ck_shape_str(src->ndim, src->shape, s1, sizeof s1), ck_shape_str(dst->ndim, dst->shape, s2, sizeof s2));
  }
  if (ck_copy(CTX(L), dst, e)) return fail(L);
  lua_settop(L, 1);
  return 1;
}

static int m_t(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  if (t->ndim != 2) {
    char sh[96];
    return luaL_error(L, "t: needs a 2-D array, got shape %s (use transpose(d1, d2) or permute)",
                      ck_shape_str(t->ndim, t->shape, sh, sizeof sh));
  }
  ck_tensor *r = push_array(L);
  if (ck_view_transpose(CTX(L), r, t, 0, 1)) return fail(L);
  return 1;
}

static int m_transpose(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  int d1 = lua_isnoneornil(L, 2) ? t->ndim - 2 : check_dim(L, 2, t);
  int d2 = lua_isnoneornil(L, 3) ? t->ndim - 1 : check_dim(L, 3, t);
  if (t->ndim < 2) return luaL_error(L, "transpose: needs at least 2 dims, got %d", t->ndim);
  ck_tensor *r = push_array(L);
  if (ck_view_transpose(CTX(L), r, t, d1, d2)) return fail(L);
  return 1;
}

static int m_permute(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  int perm[CK_MAX_DIMS], n;
  if (lua_istable(L, 2)) { /* a:permute{3, 1, 2} */
    int64_t p[CK_MAX_DIMS];
    n = read_ints(L, 2, p);
    if (n != t->ndim) return luaL_error(L, "permute: %d dims given for a %d-D array", n, t->ndim);
    for (int i = 0; i < n; ++i) {
      if (p[i] < 0) p[i] += t->ndim + 1;
      if (p[i] < 1 || p[i] > t->ndim) return luaL_argerror(L, 2, lua_pushfstring(L, "dim out of range (1..%d)", t->ndim));
      perm[i] = (int)p[i] - 1;
    }
  } else {
    n = lua_gettop(L) - 1;
    if (n != t->ndim) return luaL_error(L, "permute: %d dims given for a %d-D array", n, t->ndim);
    for (int i = 0; i < n; ++i) perm[i] = check_dim(L, 2 + i, t);
  }
  ck_tensor *r = push_array(L);
  if (ck_view_permute(CTX(L), r, t, perm)) return fail(L);
  return 1;
}

/* a:narrow(dim, first, last) — inclusive, 1-based; last may be negative (from the end) */
static int m_narrow(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  int d = check_dim(L, 2, t);
  lua_Integer first = luaL_checkinteger(L, 3), last = luaL_optinteger(L, 4, first);
  if (last < 0) last += t->shape[d] + 1;
  if (first < 0) first += t->shape[d] + 1;
  ck_tensor *r = push_array(L);
  if (first < 1 || last < first - 1)
    return luaL_error(L, "narrow: range %I..%I is invalid for dim %d (size %I)", first, last, d + 1,
                      (lua_Integer)t->shape[d]);
  if (ck_view_narrow(CTX(L), r, t, d, first - 1, last - first + 1)) return fail(L);
  return 1;
}

static int m_select(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  int d = check_dim(L, 2, t);
  lua_Integer i = luaL_checkinteger(L, 3);
  if (i < 0) i += t->shape[d] + 1;
  ck_tensor *r = push_array(L);
  if (ck_view_select(CTX(L), r, t, d, i - 1)) return fail(L);
  return 1;
}

/* Shape from varargs or a table starting at index i; one -1 is inferred from numel. */
static int shape_args(lua_State *L, int i, int64_t *shape, int64_t numel) {
  int n, infer = -1;
  if (lua_istable(L, i)) n = read_ints(L, i, shape);
  else {
    n = lua_gettop(L) - i + 1;
    if (n > CK_MAX_DIMS) return luaL_error(L, "reshape: %d dims requested, at most %d", n, CK_MAX_DIMS);
    for (int k = 0; k < n; ++k) shape[k] = luaL_checkinteger(L, i + k);
  }
  int64_t known = 1;
  for (int k = 0; k < n; ++k) {
    if (shape[k] == -1) {
      if (infer >= 0) return luaL_error(L, "reshape: only one dim can be -1");
      infer = k;
    } else if (shape[k] < 0) {
      return luaL_error(L, "reshape: dim %d is negative (%I)", k + 1, (lua_Integer)shape[k]);
    } else {
      known *= shape[k];
    }
  }
  if (infer >= 0) shape[infer] = known ? numel / known : 0;
  return n;
}

static int m_reshape(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  int64_t shape[CK_MAX_DIMS];
  int n = shape_args(L, 2, shape, ck_numel(t));
  ck_tensor *r = push_array(L);
  if (ck_view_reshape(CTX(L), r, t, n, shape)) return fail(L);
  return 1;
}

/* a:expand(...) — size-1 dims stretch (stride 0); -1 keeps a dim's size; new leading dims may be added */
static int m_expand(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  int64_t shape[CK_MAX_DIMS];
  int n;
  if (lua_istable(L, 2)) n = read_ints(L, 2, shape);
  else {
    n = lua_gettop(L) - 1;
    if (n > CK_MAX_DIMS) return luaL_error(L, "expand: %d dims requested, at most %d", n, CK_MAX_DIMS);
    for (int k = 0; k < n; ++k) shape[k] = luaL_checkinteger(L, 2 + k);
  }
  for (int k = 0; k < n; ++k) {
    int j = k - (n - t->ndim);
    if (shape[k] == -1 && j >= 0) shape[k] = t->shape[j];
  }
  ck_tensor *r = push_array(L);
  if (ck_view_expand(CTX(L), r, t, n, shape)) return fail(L);
  return 1;
}

static int m_fill(lua_State *L) {
  ck_tensor *t = check_array(L, 1);
  double v = luaL_checknumber(L, 2);
  if (ck_ew_generate(CTX(L), CK_EW_FILL, t, v, 0)) return fail(L);
  lua_settop(L, 1);
  return 1;
}

// ---------------------------------------------------------------- ops

/* core.matmul(a, b [, out [, alpha [, beta [, variant]]]]) */
static int l_matmul(lua_State *L) {
  char vb[32];
  ck_tensor *a = check_array(L, 1), *b = check_array(L, 2), *out = opt_array(L, 3);
  double alpha = luaL_optnumber(L, 4, 1.0), beta = luaL_optnumber(L, 5, 0.0);
  const char *variant = opt_variant(L, 6, vb, sizeof vb);
  ck_ran ran;
  host_ran(&ran);
  if (out) lua_pushvalue(L, 3);
  else out = push_array(L);
  if (ck_matmul(CTX(L), out, a, b, alpha, beta, variant, &ran)) return fail(L);
  set_last(L, &ran);
  gc_debt(L);
  return 1;
}

/* core.reduce(fname, x [, dim [, keepdim [, variant [, want_idx [, out [, idx]]]]]]) -> values [, idx] */
static int l_reduce(lua_State *L) {
  char vb[32];
  const char *fname = luaL_checkstring(L, 1);
  int op = ck_reduce_op_parse(fname);
  if (op < 0) return luaL_argerror(L, 1, lua_pushfstring(L, "unknown reduction '%s'", fname));
  ck_tensor *x = check_array(L, 2);
  int dim = lua_isnoneornil(L, 3) ? -1 : check_dim(L, 3, x);
  bool keepdim = lua_toboolean(L, 4);
  const char *variant = opt_variant(L, 5, vb, sizeof vb);
  bool arg = op == CK_RED_ARGMAX || op == CK_RED_ARGMIN;
  bool want_idx = arg || lua_toboolean(L, 6);
  ck_tensor *out = opt_array(L, 7), *idx = opt_array(L, 8);
  lua_settop(L, 8);
  if (!arg) {
    if (out) lua_pushvalue(L, 7);
    else out = push_array(L);
  } else {
    out = NULL;
  }
  if (want_idx) {
    if (idx) lua_pushvalue(L, 8);
    else idx = push_array(L);
  } else {
    idx = NULL;
  }
  ck_ran ran;
  host_ran(&ran);
  if (ck_reduce(CTX(L), op, out, idx, x, dim, keepdim, variant, &ran)) return fail(L);
  set_last(L, &ran);
  gc_debt(L);
  return lua_gettop(L) - 8;
}

/* core.transpose(x [, out [, variant]]) */
static int l_transpose(lua_State *L) {
  char vb[32];
  ck_tensor *x = check_array(L, 1), *out = opt_array(L, 2);
  const char *variant = opt_variant(L, 3, vb, sizeof vb);
  ck_ran ran;
  host_ran(&ran);
  if (out) lua_pushvalue(L, 2);
  else out = push_array(L);
  if (ck_transpose(CTX(L), out, x, variant, &ran)) return fail(L);
  set_last(L, &ran);
  gc_debt(L);
  return 1;
}

static int check_ew_op(lua_State *L, int i, int arity) {
  const char *name = luaL_checkstring(L, i);
  int op = ck_ew_op_parse(name);
  if (op < 0 || ck_ew_op_arity(op) != arity)
    return luaL_argerror(L, i, lua_pushfstring(L, "unknown %s elementwise op '%s'", arity == 1 ? "unary" : "binary", name));
  return op;
}

/* core.unary(name, a [, out [, s1 [, s2 [, variant]]]]) */
static int l_unary(lua_State *L) {
  char vb[32];
  int op = check_ew_op(L, 1, 1);
  ck_tensor *a = check_array(L, 2), *out = opt_array(L, 3);
  double s1 = luaL_optnumber(L, 4, 0), s2 = luaL_optnumber(L, 5, 0);
  const char *variant = opt_variant(L, 6, vb, sizeof vb);
  ck_ran ran;
  host_ran(&ran);
  if (out) lua_pushvalue(L, 3);
  else out = push_array(L);
  if (ck_ew_unary(CTX(L), op, out, a, s1, s2, variant, &ran)) return fail(L);
  set_last(L, &ran);
  gc_debt(L);
  return 1;
}

/* core.binary(name, a, b [, out [, variant]]); a or b may be a number */
static int l_binary(lua_State *L) {
  char vb[32];
  int op = check_ew_op(L, 1, 2);
  ck_tensor *a = to_array(L, 2), *b = to_array(L, 3), *out = opt_array(L, 4);
  const char *variant = opt_variant(L, 5, vb, sizeof vb);
  if (!a && !b) return luaL_error(L, "%s: at least one operand must be a cukern array", lua_tostring(L, 1));
  if (a) check_array(L, 2);
  else luaL_checknumber(L, 2);
  if (b) check_array(L, 3);
  else luaL_checknumber(L, 3);
  ck_ran ran;
  host_ran(&ran);
  if (out) lua_pushvalue(L, 4);
  else out = push_array(L);
  ck_status st = a && b ? ck_ew_binary(CTX(L), op, out, a, b, variant, &ran)
                 : a    ? ck_ew_binary_scalar(CTX(L), op, out, a, lua_tonumber(L, 3), false, variant, &ran)
                        : ck_ew_binary_scalar(CTX(L), op, out, b, lua_tonumber(L, 2), true, variant, &ran);
  if (st) return fail(L);
  set_last(L, &ran);
  gc_debt(L);
  return 1;
}

// ---------------------------------------------------------------- benchmarks: ops timed from C

enum { OC_MATMUL, OC_REDUCE, OC_TRANSPOSE, OC_UNARY, OC_BINARY, OC_COPY, OC_MEMCPY, OC_FILL };

typedef struct {
  int kind, op, dim;
  ck_tensor *a, *b, *out, *idx;
  double alpha, beta, s1, s2, num;
  bool keepdim, num_left;
  const char *variant;
  ck_ran ran;
} opcall;

static ck_status run_opcall(ck_ctx *ctx, void *ud) {
  opcall *c = (opcall *)ud;
  ck_tensor tmp = {0}, tmp2 = {0}, *out = c->out ? c->out : &tmp;
  ck_status st = CK_OK;
  switch (c->kind) {
  case OC_MATMUL: st = ck_matmul(ctx, out, c->a, c->b, c->alpha, c->beta, c->variant, &c->ran); break;
  case OC_REDUCE: {
    bool arg = c->op == CK_RED_ARGMAX || c->op == CK_RED_ARGMIN;
    ck_tensor *idx = c->idx ? c->idx : &tmp2;
    st = ck_reduce(ctx, c->op, arg ? NULL : out, arg ? idx : c->idx, c->a, c->dim, c->keepdim, c->variant, &c->ran);
    break;
  }
  case OC_TRANSPOSE: st = ck_transpose(ctx, out, c->a, c->variant, &c->ran); break;
  case OC_UNARY: st = ck_ew_unary(ctx, c->op, out, c->a, c->s1, c->s2, c->variant, &c->ran); break;
  case OC_BINARY:
    st = c->b ? ck_ew_binary(ctx, c->op, out, c->a, c->b, c->variant, &c->ran)
              : ck_ew_binary_scalar(ctx, c->op, out, c->a, c->num, c->num_left, c->variant, &c->ran);
    break;
  case OC_COPY:
  case OC_MEMCPY:
    st = ck_copy(ctx, c->out, c->a);
    c->ran.id = 0;
    snprintf(c->ran.name, sizeof c->ran.name, "%s", c->kind == OC_COPY ? "copy" : "memcpy");
    break;
  case OC_FILL: st = ck_ew_generate(ctx, CK_EW_FILL, c->out, c->s1, 0); break;
  }
  ck_release(&tmp);
  ck_release(&tmp2);
  return st;
}

static ck_tensor *field_array(lua_State *L, int spec, const char *k, bool required) {
  lua_getfield(L, spec, k);
  ck_tensor *t = to_array(L, -1);
  if (t && !t->st) luaL_error(L, "time_op: field '%s' is a freed array", k);
  if (!t && required) luaL_error(L, "time_op: field '%s' must be a cukern array", k);
  lua_pop(L, 1); /* still referenced by the spec table, which stays on the stack */
  return t;
}

/* core.time_op(spec, warmup, reps, flush_bytes) -> {ms per rep}, ran */
static int l_time_op(lua_State *L) {
  char vb[32];
  luaL_checktype(L, 1, LUA_TTABLE);
  int warmup = (int)luaL_optinteger(L, 2, 3), reps = (int)luaL_optinteger(L, 3, 10);
  lua_Integer flush = luaL_optinteger(L, 4, 0);
  if (reps < 1 || reps > 100000 || warmup < 0) return luaL_argerror(L, 3, "reps must be 1..100000, warmup >= 0");
  opcall c;
  memset(&c, 0, sizeof c);
  host_ran(&c.ran);
  lua_getfield(L, 1, "op");
  const char *op = luaL_checkstring(L, -1);
  lua_getfield(L, 1, "variant");
  c.variant = opt_variant(L, -1, vb, sizeof vb);
  lua_settop(L, 4);
  c.out = field_array(L, 1, "out", false);
  if (strcmp(op, "matmul") == 0) {
    c.kind = OC_MATMUL;
    c.a = field_array(L, 1, "a", true);
    c.b = field_array(L, 1, "b", true);
    lua_getfield(L, 1, "alpha");
    c.alpha = luaL_optnumber(L, -1, 1.0);
    lua_getfield(L, 1, "beta");
    c.beta = luaL_optnumber(L, -1, 0.0);
  } else if (strcmp(op, "reduce") == 0) {
    c.kind = OC_REDUCE;
    c.a = field_array(L, 1, "x", true);
    c.idx = field_array(L, 1, "idx", false);
    lua_getfield(L, 1, "fn");
    c.op = ck_reduce_op_parse(luaL_optstring(L, -1, "sum"));
    if (c.op < 0) return luaL_error(L, "time_op: unknown reduction '%s'", lua_tostring(L, -1));
    lua_getfield(L, 1, "dim");
    if (lua_isnil(L, -1)) c.dim = -1;
    else {
      lua_Integer d = luaL_checkinteger(L, -1);
      if (d < 0) d += c.a->ndim + 1;
      if (d < 1 || d > c.a->ndim) return luaL_error(L, "time_op: dim out of range (1..%d)", c.a->ndim);
      c.dim = (int)d - 1;
    }
    lua_getfield(L, 1, "keepdim");
    c.keepdim = lua_toboolean(L, -1);
  } else if (strcmp(op, "transpose") == 0) {
    c.kind = OC_TRANSPOSE;
    c.a = field_array(L, 1, "x", true);
  } else if (strcmp(op, "copy") == 0 || strcmp(op, "memcpy") == 0) {
    c.kind = op[0] == 'c' ? OC_COPY : OC_MEMCPY;
    c.out = field_array(L, 1, "dst", true);
    c.a = field_array(L, 1, "src", true);
    if (c.kind == OC_MEMCPY && (!ck_is_contiguous(c.a) || !ck_is_contiguous(c.out) || c.a->dtype != c.out->dtype ||
                                ck_dev(c.a) != ck_dev(c.out) || ck_numel(c.a) != ck_numel(c.out)))
      return luaL_error(L, "time_op: memcpy needs contiguous dst and src of one dtype, device and size");
  } else if (strcmp(op, "fill") == 0) {
    c.kind = OC_FILL;
    c.out = field_array(L, 1, "out", true);
    lua_getfield(L, 1, "value");
    c.s1 = luaL_optnumber(L, -1, 1.0);
  } else {
    int eop = ck_ew_op_parse(op);
    if (eop < 0 || ck_ew_op_arity(eop) == 0) return luaL_error(L, "time_op: unknown op '%s'", op);
    c.op = eop;
    c.kind = ck_ew_op_arity(eop) == 1 ? OC_UNARY : OC_BINARY;
    lua_getfield(L, 1, "a");
    lua_getfield(L, 1, "b");
    ck_tensor *a = to_array(L, -2), *b = to_array(L, -1);
    if (c.kind == OC_UNARY) {
      if (!a || !a->st) return luaL_error(L, "time_op: field 'a' must be a cukern array");
      c.a = a;
      lua_getfield(L, 1, "s1");
      c.s1 = luaL_optnumber(L, -1, 0);
      lua_getfield(L, 1, "s2");
      c.s2 = luaL_optnumber(L, -1, 0);
    } else if (a && b) {
      c.a = a;
      c.b = b;
    } else if (a || b) {
      c.a = a ? a : b;
      c.num_left = !a;
      c.num = lua_tonumber(L, a ? -1 : -2);
    } else {
      return luaL_error(L, "time_op: '%s' needs array operands a and b (one may be a number)", op);
    }
  }
  lua_settop(L, 4);
  double *ms = (double *)lua_newuserdatauv(L, sizeof(double) * (size_t)reps, 0);
  ck_devkind dev = ck_dev(c.a ? c.a : c.out);
  if (ck_time_op(CTX(L), dev, run_opcall, &c, warmup, reps, (size_t)(flush > 0 ? flush : 0), ms)) return fail(L);
  set_last(L, &c.ran);
  lua_createtable(L, reps, 0);
  for (int i = 0; i < reps; ++i) {
    lua_pushnumber(L, ms[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, c.ran.id);
  lua_setfield(L, -2, "id");
  lua_pushstring(L, c.ran.name);
  lua_setfield(L, -2, "name");
  lua_pushstring(L, c.ran.note);
  lua_setfield(L, -2, "note");
  return 2;
}

/* core.timer() -> stopwatch with :start() and :stop() -> ms (CUDA events on the GPU, else a host clock) */
typedef struct {
  ck_timer *t;
} ltimer;

static int l_timer(lua_State *L) {
  ltimer *u = (ltimer *)lua_newuserdatauv(L, sizeof(ltimer), 0);
  u->t = NULL;
  luaL_setmetatable(L, TIMER_MT);
  if (ck_timer_new(CTX(L), &u->t)) return fail(L);
  return 1;
}

static int t_start(lua_State *L) {
  ltimer *u = (ltimer *)luaL_checkudata(L, 1, TIMER_MT);
  if (ck_timer_start(CTX(L), u->t)) return fail(L);
  lua_settop(L, 1);
  return 1;
}

static int t_stop(lua_State *L) {
  ltimer *u = (ltimer *)luaL_checkudata(L, 1, TIMER_MT);
  double ms;
  if (ck_timer_stop(CTX(L), u->t, &ms)) return fail(L);
  lua_pushnumber(L, ms);
  return 1;
}

static int t_kind(lua_State *L) {
  ltimer *u = (ltimer *)luaL_checkudata(L, 1, TIMER_MT);
  lua_pushstring(L, ck_timer_is_cuda(u->t) ? "cuda events" : "host clock");
  return 1;
}

static int t_gc(lua_State *L) {
  ltimer *u = (ltimer *)luaL_checkudata(L, 1, TIMER_MT);
  ck_timer_free(u->t);
  u->t = NULL;
  return 0;
}

static int l_clock(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
  return 1;
}


// ---------------------------------------------------------------- run-time kernels

#define KERNEL_MT "cukern.kernel"
enum { KA_PTR, KA_F32, KA_F64, KA_I32, KA_I64, KA_U32 };
typedef struct {
  ck_rtc_kernel *k;
  int nargs;
  int kind[32];
  int dtype[32]; /* for pointers: the dtype they must point at, -1 = any (void*) */
  char name[64];
} lkernel;

static int parse_argtype(const char *s, int *kind, int *dt) {
  while (*s == ' ') ++s;
  if (strncmp(s, "const ", 6) == 0) s += 6;
  size_t n = strlen(s);
  while (n && s[n - 1] == ' ') --n;
  char t[16];
  if (n == 0 || n >= sizeof t) return 0;
  memcpy(t, s, n);
  t[n] = 0;
  *dt = -1;
  if (t[n - 1] == '*') {
    t[n - 1] = 0;
    *kind = KA_PTR;
    if (strcmp(t, "void") == 0) return 1;
    ck_dtype d;
    if (!ck_dtype_parse(t, &d)) return 0;
    *dt = d;
    return 1;
  }
  static const struct {
    const char *n;
    int k;
  } S[] = {{"f32", KA_F32}, {"float", KA_F32}, {"f64", KA_F64}, {"double", KA_F64}, {"i32", KA_I32},
           {"int", KA_I32}, {"i64", KA_I64}, {"int64", KA_I64}, {"u32", KA_U32}, {"unsigned", KA_U32}};
  for (size_t i = 0; i < sizeof S / sizeof *S; ++i)
    if (strcmp(t, S[i].n) == 0) {
      *kind = S[i].k;
      return 1;
    }
  return 0;
}

/* core.kernel(src, entry, {argtypes...} [, options]) */
static int l_kernel(lua_State *L) {
  const char *src = luaL_checkstring(L, 1), *entry = luaL_checkstring(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  const char *opts = luaL_optstring(L, 4, NULL);
  lkernel *k = (lkernel *)lua_newuserdatauv(L, sizeof(lkernel), 0);
  memset(k, 0, sizeof *k);
  luaL_setmetatable(L, KERNEL_MT);
  k->nargs = (int)luaL_len(L, 3);
  if (k->nargs > 32) return luaL_argerror(L, 3, "at most 32 kernel arguments");
  for (int i = 0; i < k->nargs; ++i) {
    lua_geti(L, 3, i + 1);
    const char *ts = lua_tostring(L, -1);
    if (!ts || !parse_argtype(ts, &k->kind[i], &k->dtype[i]))
      return luaL_argerror(L, 3, lua_pushfstring(L, "argument %d: unknown type '%s' (f32*, f64*, i32*, void*, f32, f64, i32, i64, u32)", i + 1, ts ? ts : "?"));
    lua_pop(L, 1);
  }
  snprintf(k->name, sizeof k->name, "%s", entry);
  char *log = NULL;
  ck_status st = ck_rtc_compile(CTX(L), src, entry, opts, &k->k, &log);
  free(log);
  if (st) return fail(L);
  return 1;
}

static int k_gc(lua_State *L) {
  lkernel *k = (lkernel *)luaL_checkudata(L, 1, KERNEL_MT);
  ck_rtc_free(k->k);
  k->k = NULL;
  return 0;
}

static void dims3(lua_State *L, int i, unsigned d[3], const char *what) {
  d[0] = d[1] = d[2] = 1;
  if (lua_isinteger(L, i)) {
    lua_Integer v = lua_tointeger(L, i);
    if (v < 1 || v > 0x7fffffff) luaL_argerror(L, i, lua_pushfstring(L, "%s must be >= 1", what));
    d[0] = (unsigned)v;
    return;
  }
  luaL_checktype(L, i, LUA_TTABLE);
  int n = (int)luaL_len(L, i);
  if (n < 1 || n > 3) luaL_argerror(L, i, lua_pushfstring(L, "%s: 1 to 3 dims", what));
  for (int k = 0; k < n; ++k) {
    lua_geti(L, i, k + 1);
    lua_Integer v = luaL_checkinteger(L, -1);
    if (v < 1 || v > 0x7fffffff) luaL_argerror(L, i, lua_pushfstring(L, "%s must be >= 1", what));
    d[k] = (unsigned)v;
    lua_pop(L, 1);
  }
}

/* k:launch(grid, block, args... [, {smem = bytes}]) */
static int k_launch(lua_State *L) {
  lkernel *k = (lkernel *)luaL_checkudata(L, 1, KERNEL_MT);
  if (!k->k) return luaL_error(L, "kernel '%s' was released", k->name);
  unsigned g[3], b[3];
  dims3(L, 2, g, "grid");
  dims3(L, 3, b, "block");
  int top = lua_gettop(L);
  size_t smem = 0;
  if (top > 3 && lua_istable(L, top) && !to_array(L, top)) {
    lua_getfield(L, top, "smem");
    smem = (size_t)luaL_optinteger(L, -1, 0);
    lua_pop(L, 1);
    --top;
  }
  int given = top - 3;
  if (given != k->nargs)
    return luaL_error(L, "kernel '%s': %d arguments given, its signature has %d", k->name, given, k->nargs);
  union {
    void *p;
    float f;
    double d;
    int32_t i;
    int64_t l;
    uint32_t u;
  } vals[32];
  void *args[32];
  for (int i = 0; i < k->nargs; ++i) {
    int ai = 4 + i;
    switch (k->kind[i]) {
    case KA_PTR: {
      ck_tensor *t = check_array(L, ai);
      if (ck_dev(t) != CK_CUDA) return luaL_argerror(L, ai, "kernel arguments must be cuda arrays");
      if (!ck_is_contiguous(t))
        return luaL_argerror(L, ai, "kernel arguments must be contiguous (a kernel sees a plain pointer; call :contiguous())");
      if (k->dtype[i] >= 0 && (int)t->dtype != k->dtype[i])
        return luaL_argerror(L, ai, lua_pushfstring(L, "expected a %s array, got %s", ck_dtype_name((ck_dtype)k->dtype[i]),
                                                    ck_dtype_name(t->dtype)));
      vals[i].p = ck_data(t);
      break;
    }
    case KA_F32: vals[i].f = (float)luaL_checknumber(L, ai); break;
    case KA_F64: vals[i].d = luaL_checknumber(L, ai); break;
    case KA_I32: vals[i].i = (int32_t)luaL_checkinteger(L, ai); break;
    case KA_I64: vals[i].l = (int64_t)luaL_checkinteger(L, ai); break;
    case KA_U32: vals[i].u = (uint32_t)luaL_checkinteger(L, ai); break;
    }
    args[i] = &vals[i];
  }
  if (ck_rtc_launch(CTX(L), k->k, g, b, smem, args)) return fail(L);
  return 0;
}

// ---------------------------------------------------------------- module

static int ctx_gc(lua_State *L) {
  modstate *ms = (modstate *)luaL_checkudata(L, 1, CTX_MT);
  if (ms->ctx) {
    ck_ctx_destroy(ms->ctx);
    ms->ctx = NULL;
  }
  return 0;
}

static void oom_hook(void *ud) {
  lua_State *L = (lua_State *)ud;
  lua_gc(L, LUA_GCCOLLECT, 0);
}

static const luaL_Reg METHODS[] = {
    {"shape", m_shape}, {"size", m_size}, {"strides", m_strides}, {"offset", m_offset}, {"dtype", m_dtype},
    {"numel", m_numel}, {"ndim", m_ndim}, {"device", m_device}, {"is_contiguous", m_is_contiguous},
    {"is_freed", m_is_freed}, {"storage_id", m_storage_id}, {"totable", m_totable}, {"flat", m_flat},
    {"item", m_item}, {"clone", m_clone}, {"contiguous", m_contiguous}, {"to", m_to}, {"copy_", m_copy_},
    {"free", m_release}, {"fill", m_fill}, {"t", m_t}, {"transpose", m_transpose}, {"permute", m_permute},
    {"narrow", m_narrow}, {"select", m_select}, {"reshape", m_reshape}, {"view", m_reshape},
    {"expand", m_expand}, {NULL, NULL}};

static const luaL_Reg FUNCS[] = {
    {"device", l_device}, {"has_cuda", l_has_cuda}, {"default_device", l_default_device}, {"sync", l_sync},
    {"sync_mode", l_sync_mode}, {"seed", l_seed}, {"memory", l_memory}, {"empty_cache", l_empty_cache},
    {"last_ran", l_last_ran}, {"variants", l_variants}, {"empty", l_empty}, {"generate", l_generate},
    {"from_table", l_from_table}, {"matmul", l_matmul}, {"reduce", l_reduce}, {"transpose", l_transpose},
    {"unary", l_unary}, {"binary", l_binary}, {"time_op", l_time_op}, {"clock", l_clock},
    {"kernel", l_kernel}, {"timer", l_timer}, {NULL, NULL}};

int luaopen_cukern_core(lua_State *L) {
  /* One state per Lua state: a second require (after clearing package.loaded) must reuse it, because live
   * arrays reference its context and metatables. */
  if (lua_getfield(L, LUA_REGISTRYINDEX, "cukern.core.module") == LUA_TTABLE) return 1;
  lua_pop(L, 1);
  modstate *ms = (modstate *)lua_newuserdatauv(L, sizeof(modstate), 0); /* upvalue of every function */
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
  host_ran(&ms->last);

  /* the array metatable; its __index is the methods table, which init.lua extends */
  luaL_newmetatable(L, ARRAY_MT);
  lua_newtable(L);
  lua_pushvalue(L, -3);
  luaL_setfuncs(L, METHODS, 1);
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, m_release, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "__gc");
  lua_setfield(L, -2, "__close");
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, m_len, 1);
  lua_setfield(L, -2, "__len");
  lua_pushliteral(L, "cukern.array");
  lua_setfield(L, -2, "__name");

  luaL_newmetatable(L, KERNEL_MT); /* run-time kernels */
  lua_pushcfunction(L, k_gc);
  lua_setfield(L, -2, "__gc");
  lua_newtable(L);
  lua_pushvalue(L, -4);
  lua_pushcclosure(L, k_launch, 1);
  lua_setfield(L, -2, "launch");
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);

  luaL_newmetatable(L, TIMER_MT); /* stopwatches */
  lua_pushcfunction(L, t_gc);
  lua_setfield(L, -2, "__gc");
  lua_newtable(L);
  static const luaL_Reg TM[] = {{"start", t_start}, {"stop", t_stop}, {"kind", t_kind}, {NULL, NULL}};
  lua_pushvalue(L, -4);
  luaL_setfuncs(L, TM, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);

  lua_newtable(L); /* module */
  lua_pushvalue(L, -3);
  luaL_setfuncs(L, FUNCS, 1);
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
