/*
 * l_dist.c — the binding of several devices (src/dist): collectives over a list of arrays, one per device
 * (core.coll: ck.nccl in lua/cukern/dist.lua), waiting with a timeout, the all-reduce ladder's rows, NCCL's
 * availability, and communicators between processes (core.dist_init: ck.dist).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_dist.h"
#include "lck.h"

#define PCOMM_MT "cukern.dist_comm"

static ck_dist *dist_of(lua_State *L) {
  ckl_modstate *ms = CKL_MS(L);
  ck_ctx *ctx = CKL_CTX(L);
  if (!ms->dist && !(ms->dist = ck_dist_new(ctx))) luaL_error(L, "out of host memory");
  return ms->dist;
}

static int parse_kind(lua_State *L, int i) {
  static const char *const KINDS[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", NULL};
  return luaL_checkoption(L, i, NULL, KINDS);
}

static int parse_op(lua_State *L, int i) {
  if (lua_isnoneornil(L, i)) return CK_COLL_SUM;
  const char *s = luaL_checkstring(L, i);
  const int op = ck_coll_op_parse(s);
  if (op < 0) luaL_argerror(L, i, lua_pushfstring(L, "unknown op '%s' (sum, prod, max, min, avg)", s));
  return op;
}

/* core.coll(kind, arrays, op, root, variant) -> outputs (a list; the inputs themselves for in-place collectives)
 * root: 1-based position in the list. */
static int l_coll(lua_State *L) {
  const int kind = parse_kind(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  const int op = parse_op(L, 3);
  const lua_Integer root = luaL_optinteger(L, 4, 1);
  const char *variant = ckl_check_text(L, 5, "variant");
  const lua_Integer n = luaL_len(L, 2);
  if (n < 1 || n > CK_MAX_DEVICES)
    return luaL_argerror(L, 2, lua_pushfstring(L, "give a list of 1 to %d arrays, one per device (got %I)", CK_MAX_DEVICES, n));
  const ck_tensor *in[CK_MAX_DEVICES];
  ck_tensor *out[CK_MAX_DEVICES];
  const bool in_place = kind == CK_COLL_ALL_REDUCE || kind == CK_COLL_BROADCAST || kind == CK_COLL_REDUCE;
  const int outs = lua_gettop(L) + 1;
  lua_createtable(L, (int)n, 0);
  for (int i = 0; i < (int)n; ++i) {
    lua_geti(L, 2, i + 1);
    ck_tensor *t = ckl_to_array(L, -1);
    if (!t) return luaL_argerror(L, 2, lua_pushfstring(L, "entry %d is a %s, not an array", i + 1, luaL_typename(L, -1)));
    in[i] = t;
    if (in_place) {
      out[i] = t;
      lua_rawseti(L, outs, i + 1);
    } else {
      lua_pop(L, 1);
      out[i] = ckl_push_array(L);
      lua_rawseti(L, outs, i + 1);
    }
  }
  const ck_coll c = {kind, op, (int)root - 1, (int)n, in, out, variant};
  ck_ran ran;
  if (ck_coll_run(dist_of(L), &c, &ran)) return ckl_fail(L);
  ckl_set_last(L, &ran);
  ckl_gc_debt(L);
  return 1;
}

/* core.coll_wait(devices | nil, timeout_s) */
static int l_coll_wait(lua_State *L) {
  ck_device devs[CK_MAX_DEVICES];
  int n = 0;
  const bool all = lua_isnoneornil(L, 1);
  if (!all) {
    luaL_checktype(L, 1, LUA_TTABLE);
    const lua_Integer len = luaL_len(L, 1);
    for (lua_Integer i = 1; i <= len && n < CK_MAX_DEVICES; ++i) {
      lua_geti(L, 1, i);
      ck_tensor *t = ckl_to_array(L, -1);
      if (t && t->st) devs[n++] = ck_dev(t);
      else if (lua_type(L, -1) == LUA_TSTRING) devs[n++] = ckl_check_device(L, lua_gettop(L));
      lua_pop(L, 1);
    }
  }
  const double timeout = luaL_optnumber(L, 2, 0);
  if (ck_dist_wait(dist_of(L), all ? NULL : devs, n, timeout)) return ckl_fail(L);
  return 0;
}

/* core.nccl_info() -> {available, why, version, path} */
static int l_nccl_info(lua_State *L) {
  const ck_nccl_api *api = ck_nccl();
  lua_createtable(L, 0, 4);
  lua_pushboolean(L, api->loaded);
  lua_setfield(L, -2, "available");
  if (api->loaded) {
    lua_pushfstring(L, "%d.%d.%d", api->version / 10000, api->version / 100 % 100, api->version % 100);
    lua_setfield(L, -2, "version");
    lua_pushstring(L, api->path);
    lua_setfield(L, -2, "path");
  } else {
    lua_pushstring(L, api->why);
    lua_setfield(L, -2, "why");
  }
  return 1;
}

/* core.allreduce_rungs() -> {{id, name, summary}, ...} */
static int l_allreduce_rungs(lua_State *L) {
  int n = 0;
  const ck_ar_rung *r = ck_ar_rungs(&n);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; ++i) {
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, r[i].id);
    lua_setfield(L, -2, "id");
    lua_pushstring(L, r[i].name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, r[i].summary);
    lua_setfield(L, -2, "summary");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

// ---------------------------------------------------------------- processes

typedef struct {
  ck_pcomm *pc; /* NULL once destroyed */
} ud_comm;

static void forget(ckl_modstate *ms, ck_pcomm *pc) {
  for (size_t i = 0; i < sizeof ms->pcomms / sizeof *ms->pcomms; ++i)
    if (ms->pcomms[i] == pc) ms->pcomms[i] = NULL;
}

static ck_pcomm *check_comm(lua_State *L) {
  ud_comm *u = (ud_comm *)luaL_checkudata(L, 1, PCOMM_MT);
  if (!u->pc) luaL_error(L, "the communicator was destroyed");
  return u->pc;
}

static const char *const INIT_KEYS[] = {"store", "rank", "world", "device", "timeout", "checked", NULL};

/* core.dist_init{store, rank, world, device, timeout, checked} -> communicator */
static int l_dist_init(lua_State *L) {
  ckl_modstate *ms = CKL_MS(L);
  ck_ctx *ctx = CKL_CTX(L);
  ck_pcomm_opts o = {NULL, -1, -1, {CK_CUDA, -1}, false, 0, false};
  if (!lua_isnoneornil(L, 1)) {
    ckl_check_opts(L, 1, "ck.dist.init", INIT_KEYS);
    if (lua_getfield(L, 1, "store") != LUA_TNIL) o.store_url = ckl_check_text(L, -1, "store");
    if (lua_getfield(L, 1, "rank") != LUA_TNIL) o.rank = (int)luaL_checkinteger(L, -1);
    if (lua_getfield(L, 1, "world") != LUA_TNIL) o.world = (int)luaL_checkinteger(L, -1);
    if (lua_getfield(L, 1, "timeout") != LUA_TNIL) o.timeout_s = luaL_checknumber(L, -1);
    if (lua_getfield(L, 1, "checked") != LUA_TNIL) o.checked = lua_toboolean(L, -1);
    if (lua_getfield(L, 1, "device") != LUA_TNIL) {
      const char *s = luaL_checkstring(L, -1);
      if (!strcmp(s, "cuda") || !strcmp(s, "gpu")) o.dev = ck_device_make(CK_CUDA, -1);
      else {
        o.dev = ckl_check_device(L, lua_gettop(L));
        o.use_host = o.dev.kind == CK_HOST;
      }
    }
  }
  size_t slot = 0;
  while (slot < sizeof ms->pcomms / sizeof *ms->pcomms && ms->pcomms[slot]) ++slot;
  if (slot == sizeof ms->pcomms / sizeof *ms->pcomms) return luaL_error(L, "ck.dist.init: at most 16 live communicators");
  ud_comm *u = (ud_comm *)lua_newuserdatauv(L, sizeof *u, 0);
  u->pc = NULL;
  luaL_setmetatable(L, PCOMM_MT);
  if (ck_pcomm_init(ctx, &o, &u->pc)) return ckl_fail(L);
  ms->pcomms[slot] = u->pc;
  return 1;
}

static int c_info(lua_State *L) {
  ck_pcomm *pc = check_comm(L);
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, ck_pcomm_rank(pc));
  lua_setfield(L, -2, "rank");
  lua_pushinteger(L, ck_pcomm_world(pc));
  lua_setfield(L, -2, "size");
  ckl_push_device(L, ck_pcomm_device(pc));
  lua_setfield(L, -2, "device");
  lua_pushstring(L, ck_pcomm_backend(pc));
  lua_setfield(L, -2, "backend");
  return 1;
}

/* comm:run(kind, a, op, root, async) -> the result (a itself for in-place collectives); root is a rank (0-based) */
static int c_run(lua_State *L) {
  ck_pcomm *pc = check_comm(L);
  const int kind = parse_kind(L, 2);
  ck_tensor *a = ckl_check_array(L, 3);
  const int op = parse_op(L, 4);
  const int root = (int)luaL_optinteger(L, 5, 0);
  const bool async = lua_toboolean(L, 6);
  const bool in_place = kind == CK_COLL_ALL_REDUCE || kind == CK_COLL_BROADCAST || kind == CK_COLL_REDUCE;
  ck_tensor *out = in_place ? a : ckl_push_array(L);
  if (ck_pcomm_run(pc, kind, op, root, a, out, async)) return ckl_fail(L);
  if (in_place) lua_pushvalue(L, 3);
  ckl_gc_debt(L);
  return 1;
}

static int c_barrier(lua_State *L) {
  if (ck_pcomm_barrier(check_comm(L))) return ckl_fail(L);
  return 0;
}

static int c_destroy(lua_State *L) {
  ud_comm *u = (ud_comm *)luaL_checkudata(L, 1, PCOMM_MT);
  if (u->pc) {
    forget(CKL_MS(L), u->pc);
    ck_pcomm_free(u->pc);
    u->pc = NULL;
  }
  return 0;
}

void ckl_dist_close(ckl_modstate *ms) {
  for (size_t i = 0; i < sizeof ms->pcomms / sizeof *ms->pcomms; ++i)
    if (ms->pcomms[i]) {
      ck_pcomm_free(ms->pcomms[i]); /* (the userdata, collected later, finds its pointer gone: see c_destroy) */
      ms->pcomms[i] = NULL;
    }
  ck_dist_free(ms->dist);
  ms->dist = NULL;
}

/* The userdata of a communicator freed by ckl_dist_close still holds the pointer: its __gc must not free it again.
 * The module state keeps the live ones, so __gc frees only a pointer it still lists. */
static int c_gc(lua_State *L) {
  ud_comm *u = (ud_comm *)luaL_checkudata(L, 1, PCOMM_MT);
  ckl_modstate *ms = CKL_MS(L);
  bool live = false;
  for (size_t i = 0; u->pc && i < sizeof ms->pcomms / sizeof *ms->pcomms; ++i) live = live || ms->pcomms[i] == u->pc;
  if (live) return c_destroy(L);
  u->pc = NULL;
  return 0;
}

void ckl_dist_init(lua_State *L) {
  static const luaL_Reg M[] = {{"info", c_info}, {"run", c_run}, {"barrier", c_barrier}, {"destroy", c_destroy},
                               {NULL, NULL}};
  ckl_new_class(L, PCOMM_MT, c_gc, M);
  luaL_getmetatable(L, PCOMM_MT);
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, c_gc, 1);
  lua_setfield(L, -2, "__close");
  lua_pop(L, 1);
}

const luaL_Reg ckl_dist_funcs[] = {{"coll", l_coll},           {"coll_wait", l_coll_wait},
                                   {"nccl_info", l_nccl_info}, {"allreduce_rungs", l_allreduce_rungs},
                                   {"dist_init", l_dist_init}, {NULL, NULL}};
