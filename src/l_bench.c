/*
 * l_bench.c — benchmarks: ops timed from C between CUDA events (time_op), stopwatches, a monotonic clock.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ew_ops.h"
#include "lck.h"
#include "reduce_ops.h"

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
  ck_tensor *t = ckl_to_array(L, -1);
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
  ckl_host_ran(&c.ran);
  lua_getfield(L, 1, "op");
  const char *op = luaL_checkstring(L, -1);
  lua_getfield(L, 1, "variant");
  c.variant = ckl_opt_variant(L, -1, vb, sizeof vb);
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
    ck_tensor *a = ckl_to_array(L, -2), *b = ckl_to_array(L, -1);
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
  if (ck_time_op(CKL_CTX(L), dev, run_opcall, &c, warmup, reps, (size_t)(flush > 0 ? flush : 0), ms)) return ckl_fail(L);
  ckl_set_last(L, &c.ran);
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
  luaL_newmetatable(L, TIMER_MT);
  lua_pushcfunction(L, t_gc);
  lua_setfield(L, -2, "__gc");
  lua_newtable(L);
  static const luaL_Reg TM[] = {{"start", t_start}, {"stop", t_stop}, {"kind", t_kind}, {NULL, NULL}};
  lua_pushvalue(L, -3);
  luaL_setfuncs(L, TM, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

const luaL_Reg ckl_bench_funcs[] = {{"time_op", l_time_op}, {"clock", l_clock}, {"timer", l_timer}, {NULL, NULL}};
