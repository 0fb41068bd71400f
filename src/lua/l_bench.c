/*
 * l_bench.c — benchmarks: ops timed from C between CUDA events (time_op), stopwatches, a monotonic clock.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lck.h"

// ---------------------------------------------------------------- benchmarks: ops timed from C

enum { TK_OP, TK_COPY, TK_MEMCPY, TK_FILL };

typedef struct {
  int kind;
  ck_call call;          /* TK_OP: the parsed op */
  bool alloc_out, alloc_idx; /* outputs not given: each repetition allocates (and frees) its own, as the op would */
  ck_tensor *dst;        /* copies and fill */
  const ck_tensor *src;
  double value;
  ck_ran ran;
} timed;

static ck_status run_timed(ck_ctx *ctx, void *ud) {
  timed *t = (timed *)ud;
  switch (t->kind) {
  case TK_OP: {
    ck_tensor out = {0}, idx = {0};
    ck_call c = t->call;
    if (t->alloc_out) c.out = &out;
    if (t->alloc_idx) c.idx = &idx;
    const ck_status st = ck_run(ctx, &c, &t->ran);
    ck_release(&out);
    ck_release(&idx);
    return st;
  }
  case TK_FILL: return ck_ew_generate(ctx, CK_EW_FILL, t->dst, t->value, 0);
  default: return ck_copy(ctx, t->dst, t->src);
  }
}

static ck_tensor *field_array(lua_State *L, int spec, const char *k) {
  lua_getfield(L, spec, k); /* stays on the stack: the array is alive while it is timed */
  ck_tensor *t = ckl_to_array(L, -1);
  if (!t) luaL_error(L, "time_op: field '%s' must be a cukern array", k);
  if (!t->st) luaL_error(L, "time_op: field '%s' is a freed array", k);
  return t;
}

/* core.time_op(spec, warmup, reps, flush_bytes) -> {ms per rep}, ran
 * spec = {op = "matmul" | "reduce" | "transpose" | "unary" | "binary" | <elementwise op> | "copy" | "memcpy" |
 * "fill", ...}: an op's fields are its core function's arguments by name (ckl_ops[].fields: a, b, x, out,
 * idx, dim, keepdim, alpha, beta, fn, s1, s2, variant), parsed by the same parser as the op function. */
static int l_time_op(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const lua_Integer warmup = luaL_optinteger(L, 2, 3);
  const lua_Integer reps = luaL_optinteger(L, 3, 10);
  const lua_Integer flush = luaL_optinteger(L, 4, 0);
  if (reps < 1 || reps > 100000) return luaL_argerror(L, 3, "reps must be 1..100000");
  if (warmup < 0 || warmup > 100000) return luaL_argerror(L, 2, "warmup must be 0..100000");
  if (flush < 0) return luaL_argerror(L, 4, "flush_bytes must be >= 0");
  lua_settop(L, 4);
  timed t;
  ckl_opcall oc;
  memset(&t, 0, sizeof t);
  memset(&oc, 0, sizeof oc);
  ckl_host_ran(&t.ran);
  lua_getfield(L, 1, "op");
  const char *op = lua_tostring(L, -1);
  if (!op) return luaL_error(L, "time_op: spec.op must name an op");
  ck_device dev;
  if (strcmp(op, "copy") == 0 || strcmp(op, "memcpy") == 0) {
    t.kind = op[0] == 'c' ? TK_COPY : TK_MEMCPY;
    t.dst = field_array(L, 1, "dst");
    t.src = field_array(L, 1, "src");
    if (t.kind == TK_MEMCPY && (!ck_is_contiguous(t.src) || !ck_is_contiguous(t.dst) || t.src->dtype != t.dst->dtype ||
                                !ck_dev_eq(ck_dev(t.src), ck_dev(t.dst)) || ck_numel(t.src) != ck_numel(t.dst)))
      return luaL_error(L, "time_op: memcpy needs contiguous dst and src of one dtype, device and size");
    t.ran.id = -2; /* the memcpy bound, like every ladder's: not a registry row */
    snprintf(t.ran.name, sizeof t.ran.name, "%s", op);
    dev = ck_dev(t.dst);
  } else if (strcmp(op, "fill") == 0) {
    t.kind = TK_FILL;
    t.dst = field_array(L, 1, "out");
    lua_getfield(L, 1, "value");
    t.value = luaL_optnumber(L, -1, 1.0);
    dev = ck_dev(t.dst);
  } else {
    const ckl_opdesc *d = ckl_op_for(op);
    if (!d) return luaL_error(L, "time_op: unknown op '%s'", op);
    const int base = lua_gettop(L) + 1;
    luaL_checkstack(L, 10, "time_op");
    for (int i = 0; i < 9 && d->fields[i]; ++i) lua_getfield(L, 1, d->fields[i]);
    d->parse(L, base, &oc); /* oc outlives the timing: a variant id's text lives in it */
    t.kind = TK_OP;
    t.call = oc.call;
    if (oc.nout) {
      t.call.out = oc.out_at ? ckl_to_array(L, oc.out_at) : NULL;
      t.alloc_out = !oc.out_at;
    }
    if (oc.want_idx) {
      t.call.idx = oc.idx_at ? ckl_to_array(L, oc.idx_at) : NULL;
      t.alloc_idx = !oc.idx_at;
    }
    dev = ck_dev(t.call.a ? t.call.a : t.call.out);
  }
  double *ms = (double *)lua_newuserdatauv(L, sizeof(double) * (size_t)reps, 0);
  if (ck_time_op(CKL_CTX(L), dev, run_timed, &t, (int)warmup, (int)reps, (size_t)(flush > 0 ? flush : 0), ms))
    return ckl_raise_at_user(L, lua_pushfstring(L, "time_op: %s", ck_errmsg(CKL_CTX(L))));
  ckl_set_last(L, &t.ran);
  lua_createtable(L, (int)reps, 0);
  for (int i = 0; i < reps; ++i) {
    lua_pushnumber(L, ms[i]);
    lua_rawseti(L, -2, i + 1);
  }
  ckl_push_ran(L, &t.ran, NULL);
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
  if (ck_timer_new(CKL_CTX(L), &u->t)) return ckl_fail(L);
  return 1;
}

static int t_start(lua_State *L) {
  ltimer *u = (ltimer *)luaL_checkudata(L, 1, TIMER_MT);
  if (ck_timer_start(CKL_CTX(L), u->t)) return ckl_fail(L);
  lua_settop(L, 1);
  return 1;
}

static int t_stop(lua_State *L) {
  ltimer *u = (ltimer *)luaL_checkudata(L, 1, TIMER_MT);
  double ms;
  if (ck_timer_stop(CKL_CTX(L), u->t, &ms)) return ckl_fail(L);
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



void ckl_bench_init(lua_State *L) {
  static const luaL_Reg TM[] = {{"start", t_start}, {"stop", t_stop}, {"kind", t_kind}, {NULL, NULL}};
  ckl_new_class(L, TIMER_MT, t_gc, TM);
}

const luaL_Reg ckl_bench_funcs[] = {{"time_op", l_time_op}, {"clock", l_clock}, {"timer", l_timer}, {NULL, NULL}};
