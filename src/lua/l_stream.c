/*
 * l_stream.c — streams, events, pinned memory, asynchronous copies and NVTX from Lua (issue 36). The friendly API
 * (ck.stream, ck.with_stream, ck.event, ck.nvtx, a:pin, a:to(d, {async = true})) is lua/cukern/streams.lua; this file
 * checks arguments and calls the core (src/core/stream.c, nvtx.c, src/ops/copy.c).
 *
 * core.stream([dev]) -> stream; core.stream_current([dev]) -> the slot of the current stream; core.stream_use(s, enter)
 * -> the slot it replaced, core.stream_restore(dev, slot); s:sync(), s:wait(e), s:device(), s:slot(), s:free().
 * core.event([dev]) -> event; e:record([s]), e:sync(), e:elapsed(e2), e:device(), e:free().
 * core.empty_pinned(shape, dtype, dev), core.pin(a), core.is_pinned(a). core.nvtx_push(name), core.nvtx_pop().
 * (a:to(d, {async = true}) and a:copy_ are l_array.c's, through ck_to_ex / ck_copy_ex.)
 */
#include "lck.h"

#define STREAM_MT "cukern.stream"
#define EVENT_MT "cukern.event"

typedef struct {
  ck_stream *s; /* NULL once freed */
} lstream;

typedef struct {
  ck_event *e;
} levent;

// ---------------------------------------------------------------- streams

static lstream *check_stream(lua_State *L, int i, const char *what) {
  lstream *u = (lstream *)luaL_checkudata(L, i, STREAM_MT);
  if (!u->s) luaL_error(L, "%s: the stream was freed", what); /* (raised at the caller's line by streams.lua) */
  return u;
}

static levent *check_event(lua_State *L, int i, const char *what) {
  levent *u = (levent *)luaL_checkudata(L, i, EVENT_MT);
  if (!u->e) luaL_error(L, "%s: the event was freed", what);
  return u;
}

static int l_stream(lua_State *L) {
  const ck_device dev = ckl_check_device(L, 1);
  lstream *u = (lstream *)lua_newuserdatauv(L, sizeof *u, 0);
  u->s = NULL;
  luaL_setmetatable(L, STREAM_MT);
  if (ck_stream_new(CKL_CTX(L), dev, &u->s)) return ckl_fail(L);
  return 1;
}

static int l_stream_current(lua_State *L) {
  ck_stream *s = ck_stream_current(CKL_CTX(L), ckl_check_device(L, 1));
  if (!s) return ckl_fail(L);
  lua_pushinteger(L, ck_stream_slot(s));
  return 1;
}

/* core.stream_use(s, enter) makes s current on its device (enter: after the work issued so far on the stream current
 * before, ck.with_stream's entry) and returns the slot it replaced; core.stream_restore(dev, slot) makes that slot's
 * stream current again (the device's own when the slot was given back meanwhile), without an ordering. */
static int l_stream_use(lua_State *L) {
  ck_ctx *ctx = CKL_CTX(L);
  ck_stream *s = check_stream(L, 1, "with_stream")->s, *prev = ck_stream_current(ctx, ck_stream_device(s));
  if (!prev || (lua_toboolean(L, 2) ? ck_stream_enter(ctx, s) : ck_stream_set_current(ctx, s))) return ckl_fail(L);
  lua_pushinteger(L, ck_stream_slot(prev));
  return 1;
}

static int l_stream_restore(lua_State *L) {
  ck_ctx *ctx = CKL_CTX(L);
  ck_stream *s = ck_stream_in_slot(ctx, ckl_check_device(L, 1), (int)luaL_checkinteger(L, 2));
  if (!s || ck_stream_set_current(ctx, s)) return ckl_fail(L);
  return 0;
}

static int s_sync(lua_State *L) {
  if (ck_stream_sync(CKL_CTX(L), check_stream(L, 1, "s:sync")->s)) return ckl_fail(L);
  return 0;
}

static int s_wait(lua_State *L) {
  lstream *s = check_stream(L, 1, "s:wait");
  if (ck_stream_wait(CKL_CTX(L), s->s, check_event(L, 2, "s:wait")->e)) return ckl_fail(L);
  lua_settop(L, 1);
  return 1;
}

static int s_device(lua_State *L) {
  ckl_push_device(L, ck_stream_device(check_stream(L, 1, "s:device")->s));
  return 1;
}

static int s_slot(lua_State *L) {
  lua_pushinteger(L, ck_stream_slot(check_stream(L, 1, "s:slot")->s));
  return 1;
}

static int s_free(lua_State *L) { /* __gc, __close and :free() */
  lstream *u = (lstream *)luaL_checkudata(L, 1, STREAM_MT);
  if (u->s && CKL_MS(L)->ctx) ck_stream_free(CKL_MS(L)->ctx, u->s); /* (after lua_close: the context took it) */
  u->s = NULL;
  return 0;
}

static int s_tostring(lua_State *L) {
  lstream *u = (lstream *)luaL_checkudata(L, 1, STREAM_MT);
  if (!u->s) lua_pushliteral(L, "cukern.stream (freed)");
  else lua_pushfstring(L, "cukern.stream %d of %s", ck_stream_slot(u->s), ck_device_name(ck_stream_device(u->s)).s);
  return 1;
}

// ---------------------------------------------------------------- events

static int l_event(lua_State *L) {
  const ck_device dev = ckl_check_device(L, 1);
  levent *u = (levent *)lua_newuserdatauv(L, sizeof *u, 0);
  u->e = NULL;
  luaL_setmetatable(L, EVENT_MT);
  if (ck_event_new(CKL_CTX(L), dev, &u->e)) return ckl_fail(L);
  return 1;
}

static int e_record(lua_State *L) {
  ck_ctx *ctx = CKL_CTX(L);
  levent *e = check_event(L, 1, "e:record");
  ck_stream *s = lua_isnoneornil(L, 2) ? ck_stream_current(ctx, ck_event_device(e->e)) : check_stream(L, 2, "e:record")->s;
  if (!s || ck_event_record(ctx, e->e, s)) return ckl_fail(L);
  lua_settop(L, 1);
  return 1;
}

static int e_sync(lua_State *L) {
  if (ck_event_sync(CKL_CTX(L), check_event(L, 1, "e:sync")->e)) return ckl_fail(L);
  return 0;
}

static int e_elapsed(lua_State *L) {
  double ms = 0;
  if (ck_event_elapsed(CKL_CTX(L), check_event(L, 1, "e:elapsed")->e, check_event(L, 2, "e:elapsed")->e, &ms))
    return ckl_fail(L);
  lua_pushnumber(L, ms);
  return 1;
}

static int e_device(lua_State *L) {
  ckl_push_device(L, ck_event_device(check_event(L, 1, "e:device")->e));
  return 1;
}

static int e_free(lua_State *L) {
  levent *u = (levent *)luaL_checkudata(L, 1, EVENT_MT);
  ck_event_free(u->e);
  u->e = NULL;
  return 0;
}

// ---------------------------------------------------------------- pinned memory

static int l_empty_pinned(lua_State *L) {
  int64_t shape[CK_MAX_DIMS];
  const int nd = ckl_check_shape(L, 1, shape);
  const ck_dtype dt = lua_isnoneornil(L, 2) ? CK_F32 : ckl_check_dtype(L, 2);
  const ck_device dev = lua_isnoneornil(L, 3) ? CK_DEV_HOST : ckl_check_device(L, 3);
  ck_tensor *t = ckl_push_array(L);
  if (ck_empty_pinned(CKL_CTX(L), t, dt, nd, shape, dev)) return ckl_fail(L);
  ckl_gc_debt(L);
  return 1;
}

static int l_pin(lua_State *L) {
  ck_tensor *a = ckl_check_array(L, 1);
  ck_tensor *t = ckl_push_array(L);
  if (ck_pin(CKL_CTX(L), t, a)) return ckl_fail(L);
  ckl_gc_debt(L);
  return 1;
}

static int l_is_pinned(lua_State *L) {
  lua_pushboolean(L, ckl_check_array(L, 1)->st->pinned);
  return 1;
}

// ---------------------------------------------------------------- NVTX

static int l_nvtx_push(lua_State *L) {
  const char *name = ckl_check_text(L, 1, "the range's name");
  if (!name) luaL_typeerror(L, 1, "string");
  ck_nvtx_push(name);
  return 0;
}

static int l_nvtx_pop(lua_State *L) {
  lua_pushinteger(L, ck_nvtx_pop());
  return 1;
}

void ckl_nvtx_op_push(lua_State *L, const char *op) {
  lua_Debug ar;
  char name[160];
  if (ckl_user_frame(L, &ar)) snprintf(name, sizeof name, "%s:%d %s", ar.short_src, ar.currentline, op);
  else snprintf(name, sizeof name, "%s", op);
  ck_nvtx_push(name);
}

// ---------------------------------------------------------------- registration

void ckl_stream_init(lua_State *L) {
  static const luaL_Reg SM[] = {{"sync", s_sync}, {"wait", s_wait}, {"device", s_device}, {"slot", s_slot},
                                {"free", s_free}, {NULL, NULL}};
  static const luaL_Reg EM[] = {{"record", e_record}, {"sync", e_sync}, {"elapsed", e_elapsed},
                                {"device", e_device}, {"free", e_free}, {NULL, NULL}};
  ckl_new_class(L, STREAM_MT, s_free, SM);
  ckl_new_class(L, EVENT_MT, e_free, EM);
  luaL_getmetatable(L, STREAM_MT);
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, s_tostring, 1);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
}

const luaL_Reg ckl_stream_funcs[] = {
    {"stream", l_stream},         {"stream_current", l_stream_current}, {"stream_use", l_stream_use},
    {"stream_restore", l_stream_restore},
    {"event", l_event},           {"empty_pinned", l_empty_pinned},     {"pin", l_pin},
    {"is_pinned", l_is_pinned},   {"nvtx_push", l_nvtx_push},
    {"nvtx_pop", l_nvtx_pop},     {NULL, NULL}};
