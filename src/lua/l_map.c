/*
 * l_map.c — bindings of fused expression kernels (ck.map, ck.reduce_map, ck.map_info, ck.map_source,
 * ck.map_cache_size); run-time kernels, ck.kernel_build and the disk cache are l_rtc.c's.
 *
 * Parsed expressions are kept per Lua state (registry table text -> expression userdata), so a loop calling
 * ck.map with the same string parses it once; compiled kernels live in one ck_map_cache per state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_map.h"
#include "lck.h"

#define EXPR_MT "cukern.expr"
#define MCACHE_MT "cukern.mapcache"
#define EXPRS_KEY "cukern.map.exprs"
#define MCACHE_KEY "cukern.map.cache"

typedef struct {
  ck_expr *e;
} lexpr;

static int expr_gc(lua_State *L) {
  lexpr *x = (lexpr *)luaL_checkudata(L, 1, EXPR_MT);
  ck_expr_release(x->e);
  x->e = NULL;
  return 0;
}

typedef struct {
  ck_map_cache *c;
} lcache;

static int mcache_gc(lua_State *L) {
  lcache *c = (lcache *)luaL_checkudata(L, 1, MCACHE_MT);
  ck_map_cache_free(c->c);
  c->c = NULL;
  return 0;
}

void ckl_map_init(lua_State *L) {
  luaL_newmetatable(L, EXPR_MT);
  lua_pushcfunction(L, expr_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_newmetatable(L, MCACHE_MT);
  lua_pushcfunction(L, mcache_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
}

static ck_map_cache *get_cache(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, MCACHE_KEY);
  lcache *c = (lcache *)luaL_testudata(L, -1, MCACHE_MT);
  lua_pop(L, 1);
  if (c && c->c) return c->c;
  c = (lcache *)lua_newuserdatauv(L, sizeof *c, 0);
  c->c = NULL;
  luaL_setmetatable(L, MCACHE_MT);
  if (ck_map_cache_new(CKL_CTX(L), &c->c)) ckl_fail(L);
  lua_setfield(L, LUA_REGISTRYINDEX, MCACHE_KEY);
  return c->c;
}

/* The parsed expression for (what, text), parsed once per Lua state. */
static ck_expr *get_expr(lua_State *L, const char *what, const char *text, const char *const *fixed, int nfixed,
                         bool single) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, EXPRS_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, EXPRS_KEY);
  }
  lua_pushfstring(L, "%s\n%s", what, text);
  lua_pushvalue(L, -1);
  lua_rawget(L, -3);
  lexpr *x = (lexpr *)luaL_testudata(L, -1, EXPR_MT);
  if (x && x->e) {
    lua_pop(L, 3);
    return x->e;
  }
  lua_pop(L, 1);
  x = (lexpr *)lua_newuserdatauv(L, sizeof *x, 0);
  x->e = NULL;
  luaL_setmetatable(L, EXPR_MT);
  if (ck_expr_compile(CKL_CTX(L), what, text, fixed, nfixed, single, &x->e)) ckl_fail(L);
  lua_rawset(L, -3); /* exprs[key] = userdata */
  lua_pop(L, 1);
  return x->e;
}

// ---------------------------------------------------------------- arguments

/* The inputs table as the core takes it; its size is the table's (the core enforces the operand limit). */
typedef struct {
  ck_map_input *in;
  int n;
} linputs;

/* Leaves a userdata holding the list on the stack (collected with it, also when an error unwinds). */
static void read_inputs(lua_State *L, int idx, linputs *li, const char *what) {
  li->n = 0;
  li->in = NULL;
  if (lua_isnoneornil(L, idx)) {
    lua_pushnil(L); /* the same stack effect either way */
    return;
  }
  if (!lua_istable(L, idx) || ckl_to_array(L, idx))
    luaL_argerror(L, idx, lua_pushfstring(L, "%s: inputs must be a table {name = array or number, ...}", what));
  int count = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (count == INT32_MAX / 2) luaL_argerror(L, idx, lua_pushfstring(L, "%s: too many inputs", what));
    ++count;
  }
  li->in = (ck_map_input *)lua_newuserdatauv(L, sizeof(ck_map_input) * (size_t)(count ? count : 1), 0);
  int ud = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_argerror(L, idx, lua_pushfstring(L, "%s: input names must be strings", what));
    if (li->n == count) luaL_argerror(L, idx, lua_pushfstring(L, "%s: the inputs table changed while read", what));
    ck_map_input *m = &li->in[li->n];
    size_t len;
    m->name = lua_tolstring(L, -2, &len); /* the key stays alive in the table */
    if (strlen(m->name) != len)
      luaL_argerror(L, idx, lua_pushfstring(L, "%s: input name \"%s...\" contains a NUL byte", what, m->name));
    m->t = NULL;
    m->num = 0, m->inum = 0, m->isint = false;
    if (lua_type(L, -1) == LUA_TNUMBER) {
      m->num = lua_tonumber(L, -1);
      if (lua_isinteger(L, -1)) m->isint = true, m->inum = (long long)lua_tointeger(L, -1); /* exact for i64 */
    }
    else if ((m->t = ckl_to_array(L, -1)) == NULL)
      luaL_argerror(L, idx, lua_pushfstring(L, "%s: input '%s' must be an array or a number, got %s", what, m->name,
                                            luaL_typename(L, -1)));
    else if (!m->t->st)
      luaL_argerror(L, idx, lua_pushfstring(L, "%s: input '%s' was freed", what, m->name));
    li->n++;
    lua_pop(L, 1);
  }
  lua_settop(L, ud);
}

static int opt_dtype(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return -1;
  int r = -1;
  if (lua_getfield(L, idx, "dtype") != LUA_TNIL) {
    ck_dtype d;
    const char *s = lua_tostring(L, -1);
    if (!s || !ck_dtype_parse(s, &d) || !ck_xdtype_ok(d))
      luaL_argerror(L, idx, lua_pushfstring(L, "dtype must be a real dtype (bool u8 i8 i16 i32 u32 i64 f16 bf16 f32 f64), "
                                               "got %s", s ? s : luaL_typename(L, -1)));
    r = d;
  }
  lua_pop(L, 1);
  return r;
}

/* opts.out: one array (first output) or {name = array}. Given arrays are pushed to `slots` (a table at
 * index slots_idx, by output position) so that the same Lua objects are returned. */
static void read_outs(lua_State *L, int oidx, const ck_expr *e, ck_tensor *outs, int slots_idx) {
  int n = ck_expr_noutputs(e);
  for (int i = 0; i < n; ++i) memset(&outs[i], 0, sizeof outs[i]);
  if (lua_isnoneornil(L, oidx)) return;
  if (lua_getfield(L, oidx, "out") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  int t = lua_gettop(L);
  ck_tensor *a = ckl_to_array(L, t);
  if (a) {
    if (n != 1)
      luaL_argerror(L, oidx, lua_pushfstring(L, "out: the expression has %d outputs; pass {name = array, ...}", n));
    outs[0] = *a;
    lua_pushvalue(L, t);
    lua_rawseti(L, slots_idx, 1);
  } else if (lua_istable(L, t)) {
    lua_pushnil(L);
    while (lua_next(L, t)) {
      const char *name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
      int k = -1;
      for (int i = 0; i < n; ++i)
        if (!strcmp(ck_expr_output(e, i), name)) k = i;
      if (k < 0) luaL_argerror(L, oidx, lua_pushfstring(L, "out: '%s' is not an output of the expression", name));
      ck_tensor *o = ckl_to_array(L, -1);
      if (!o) luaL_argerror(L, oidx, lua_pushfstring(L, "out.%s must be an array", name));
      outs[k] = *o;
      lua_pushvalue(L, -1);
      lua_rawseti(L, slots_idx, k + 1);
      lua_pop(L, 1);
    }
  } else {
    luaL_argerror(L, oidx, "out must be an array or a table of arrays");
  }
  lua_pop(L, 1);
}

static void release_new(ck_tensor *outs, const bool *given, int n) {
  for (int i = 0; i < n; ++i)
    if (!given[i]) ck_release(&outs[i]);
}

static void set_last(lua_State *L, const char *name, const ck_map_report *rep) {
  ck_ran r;
  memset(&r, 0, sizeof r);
  r.id = -1;
  snprintf(r.name, sizeof r.name, "%s", name);
  snprintf(r.note, sizeof r.note, "%s%s%s%s", rep->layout, rep->entry[0] ? " " : "", rep->entry,
           rep->compiled ? " (compiled now)" : "");
  ck_kinfo k;
  if (strcmp(rep->layout, "host") != 0 && rep->kernel) { /* the (main) kernel it launched, at its block size */
    if (ck_rtc_info_get(CKL_CTX(L), rep->kernel, (int)rep->block, 0, &k)) ckl_fail(L);
    r.gpu = true;
    ckl_set_last_user(L, &r, &k);
  } else {
    ckl_set_last(L, &r);
  }
}

/* Run ck.map for (expr at 1, inputs at 2, opts at 3); leaves the outputs on the stack, returns their count. */
static int do_map(lua_State *L, ck_map_report *rep) {
  luaL_checkstring(L, 1);
  const char *text = ckl_check_text(L, 1, "the expression");
  static const char *const known[] = {"out", "dtype", NULL};
  ckl_check_opts(L, 3, "ck.map", known);
  linputs li;
  read_inputs(L, 2, &li, "ck.map");
  ck_expr *e = get_expr(L, "ck.map", text, NULL, 0, false);
  int n = ck_expr_noutputs(e);
  lua_createtable(L, n, 0);
  int slots = lua_gettop(L);
  ck_tensor outs[16];
  if (n > 16) return luaL_error(L, "ck.map: at most 16 outputs");
  read_outs(L, 3, e, outs, slots);
  bool given[16];
  for (int i = 0; i < n; ++i) given[i] = outs[i].st != NULL;
  int dtype = opt_dtype(L, 3);
  ck_status st = ck_map(CKL_CTX(L), get_cache(L), e, li.in, li.n, outs, dtype, rep);
  if (st) {
    release_new(outs, given, n);
    return ckl_fail(L);
  }
  ckl_gc_debt(L);
  for (int i = 0; i < n; ++i) {
    if (given[i]) {
      lua_rawgeti(L, slots, i + 1);
      continue;
    }
    ck_tensor *t = ckl_push_array(L);
    *t = outs[i]; /* the reference moves into the userdata */
  }
  lua_remove(L, slots);
  set_last(L, "map", rep);
  return n;
}

/* ck.map(expr, inputs [, {out =, dtype =}]) -> one array per output */
static int l_map(lua_State *L) {
  ck_map_report rep;
  memset(&rep, 0, sizeof rep);
  return do_map(L, &rep);
}

// ---------------------------------------------------------------- introspection

static void push_report(lua_State *L, const ck_map_report *rep, bool on_gpu) {
  lua_createtable(L, 0, 10);
  lua_pushstring(L, rep->layout);
  lua_setfield(L, -2, "layout");
  if (rep->entry[0]) {
    lua_pushstring(L, rep->entry);
    lua_setfield(L, -2, "entry");
  }
  lua_pushinteger(L, rep->ndim);
  lua_setfield(L, -2, "ndim");
  lua_pushboolean(L, rep->compiled);
  lua_setfield(L, -2, "compiled");
  lua_pushnumber(L, rep->compile_ms);
  lua_setfield(L, -2, "compile_ms");
  if (rep->cache[0]) {
    lua_pushstring(L, rep->cache);
    lua_setfield(L, -2, "cache");
  }
  if (rep->source) {
    lua_pushstring(L, rep->source);
    lua_setfield(L, -2, "source");
  }
  lua_pushstring(L, on_gpu ? "cuda" : "host");
  lua_setfield(L, -2, "device");
  if (on_gpu && rep->kernel) {
    ckl_push_kernel_info(L, rep->kernel, (int)rep->block, 0);
  } else {
    lua_createtable(L, 0, 2);
    lua_pushstring(L, "host");
    lua_setfield(L, -2, "device");
    ck_devinfo di;
    ck_device_info(CKL_CTX(L), ck_default_device(CKL_CTX(L)), &di);
    lua_pushfstring(L, "no device kernel: the host evaluator ran (%s)",
                    strcmp(di.backend, "host") ? "the inputs are host arrays" : di.why_host);
    lua_setfield(L, -2, "note");
  }
  lua_setfield(L, -2, "kernel");
}

/* ck.map_info(expr, inputs [, opts]) runs the expression once and describes what ran:
 * {layout, entry, ndim, compiled, compile_ms, cache, source, device, kernel = {registers, occupancy, ptx, ...}} */
static int l_map_info(lua_State *L) {
  ck_map_report rep;
  memset(&rep, 0, sizeof rep);
  rep.want_source = true;
  lua_settop(L, 3);
  int n = do_map(L, &rep);
  lua_pop(L, n);
  bool gpu = strcmp(rep.layout, "host") != 0;
  push_report(L, &rep, gpu);
  free(rep.source);
  free(rep.source2);
  return 1;
}

// ---------------------------------------------------------------- reduce_map

typedef struct {
  ck_expr *map, *red, *post;
  double identity;
} lspec;

static void read_spec(lua_State *L, int idx, lspec *s) {
  luaL_checktype(L, idx, LUA_TTABLE);
  static const char *const known[] = {"map", "reduce", "identity", "post", NULL};
  ckl_check_opts(L, idx, "reduce_map", known);
  lua_getfield(L, idx, "map");
  const char *m = ckl_check_text(L, -1, "map");
  if (!m) luaL_argerror(L, idx, "reduce_map: map must be an expression string");
  lua_getfield(L, idx, "reduce");
  const char *r = ckl_check_text(L, -1, "reduce");
  if (!r) luaL_argerror(L, idx, "reduce_map: reduce must be an expression in a and b (e.g. \"a + b\")");
  lua_getfield(L, idx, "identity");
  if (lua_type(L, -1) != LUA_TNUMBER)
    luaL_argerror(L, idx, "reduce_map: identity must be a number (0 for a sum, -math.huge for a max)");
  s->identity = lua_tonumber(L, -1);
  /* No reduction has NaN as its identity (red(NaN, x) = x fails for every arithmetic one), and the device
   * kernels start from it, so a NaN here would be a wrong result, not a choice. */
  if (s->identity != s->identity)
    luaL_argerror(L, idx, "reduce_map: identity is NaN; give the reduction's identity (0 for a sum, -math.huge for a max)");
  lua_getfield(L, idx, "post");
  const char *p = ckl_check_text(L, -1, "post");
  static const char *const ab[] = {"a", "b"}, *const rn[] = {"r", "n"};
  s->map = get_expr(L, "reduce_map map", m, NULL, 0, true);
  s->red = get_expr(L, "reduce_map reduce", r, ab, 2, true);
  s->post = p ? get_expr(L, "reduce_map post", p, rn, 2, true) : NULL;
  lua_pop(L, 4);
}

static int read_dim(lua_State *L, int oidx, bool *keepdim) {
  *keepdim = false;
  if (lua_isnoneornil(L, oidx)) return CK_RMAP_ALL;
  lua_getfield(L, oidx, "keepdim");
  *keepdim = lua_toboolean(L, -1);
  lua_pop(L, 1);
  int dim = CK_RMAP_ALL;
  if (lua_getfield(L, oidx, "dim") != LUA_TNIL) {
    if (!lua_isinteger(L, -1)) luaL_argerror(L, oidx, "dim must be an integer (1-based; negative counts from the end)");
    lua_Integer d = lua_tointeger(L, -1);
    if (d == 0) luaL_argerror(L, oidx, "dim is 1-based: 0 is not a dim");
    dim = d > 0 ? (int)d - 1 : (int)d;
  }
  lua_pop(L, 1);
  return dim;
}

/* spec at 1, inputs at 2, opts at 3 */
static int do_reduce_map(lua_State *L) {
  lspec s;
  read_spec(L, 1, &s);
  static const char *const known[] = {"dim", "keepdim", "out", "dtype", NULL};
  ckl_check_opts(L, 3, "reduce_map", known);
  linputs li;
  read_inputs(L, 2, &li, "reduce_map");
  bool keepdim;
  int dim = read_dim(L, 3, &keepdim);
  int dtype = opt_dtype(L, 3);
  ck_tensor out;
  memset(&out, 0, sizeof out);
  bool given = false;
  if (!lua_isnoneornil(L, 3)) {
    lua_getfield(L, 3, "out");
    ck_tensor *o = ckl_to_array(L, -1);
    if (o) out = *o, given = true;
    else if (!lua_isnil(L, -1)) luaL_argerror(L, 3, "out must be an array");
    else lua_pop(L, 1);
  }
  ck_map_report rep;
  memset(&rep, 0, sizeof rep);
  if (ck_reduce_map(CKL_CTX(L), get_cache(L), s.map, s.red, s.post, s.identity, li.in, li.n, dim, keepdim, &out, dtype,
                    &rep)) {
    if (!given) ck_release(&out);
    return ckl_fail(L);
  }
  ckl_gc_debt(L);
  set_last(L, "reduce_map", &rep);
  if (given) return 1; /* the out array is on the stack */
  ck_tensor *t = ckl_push_array(L);
  *t = out;
  return 1;
}

static int reducer_call(lua_State *L) {
  /* r(inputs [, opts]) with the spec as upvalue 2; the call may also come as r:__call */
  lua_settop(L, 2);
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_insert(L, 1);
  return do_reduce_map(L);
}

/* ck.reduce_map(spec, inputs [, {dim =, keepdim =, out =, dtype =}]) -> array; ck.reduce_map(spec) -> a function
 * f(inputs [, opts]) (the expressions are checked now). */
static int l_reduce_map(lua_State *L) {
  if (lua_isnoneornil(L, 2)) {
    lspec s;
    read_spec(L, 1, &s); /* syntax errors show up here, not at the first call */
    lua_settop(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    lua_pushcclosure(L, reducer_call, 2);
    return 1;
  }
  lua_settop(L, 3);
  return do_reduce_map(L);
}

/* ck.map_source(expr or reduce spec, inputs [, opts]) -> the CUDA source the GPU would run (also on the host),
 * and a table {entry, layout, ndim}. Nothing is compiled or launched. */
static int l_map_source(lua_State *L) {
  lua_settop(L, 3);
  ck_map_report rep;
  memset(&rep, 0, sizeof rep);
  rep.source_only = true;
  ck_status st;
  ck_expr *ex = NULL;
  if (lua_istable(L, 1)) {
    lspec s;
    read_spec(L, 1, &s);
    ex = s.map;
    linputs li;
    read_inputs(L, 2, &li, "reduce_map");
    bool keepdim;
    int dim = read_dim(L, 3, &keepdim);
    ck_tensor out;
    memset(&out, 0, sizeof out);
    st = ck_reduce_map(CKL_CTX(L), get_cache(L), s.map, s.red, s.post, s.identity, li.in, li.n, dim, keepdim, &out,
                       opt_dtype(L, 3), &rep);
    ck_release(&out);
  } else {
    luaL_checkstring(L, 1);
    const char *text = ckl_check_text(L, 1, "the expression");
    linputs li;
    read_inputs(L, 2, &li, "ck.map");
    ck_expr *e = get_expr(L, "ck.map", text, NULL, 0, false);
    ex = e;
    ck_tensor outs[16];
    int n = ck_expr_noutputs(e);
    if (n > 16) return luaL_error(L, "ck.map: at most 16 outputs");
    lua_createtable(L, n, 0);
    read_outs(L, 3, e, outs, lua_gettop(L));
    bool given[16];
    for (int i = 0; i < n; ++i) given[i] = outs[i].st != NULL;
    st = ck_map(CKL_CTX(L), get_cache(L), e, li.in, li.n, outs, opt_dtype(L, 3), &rep);
    release_new(outs, given, n);
  }
  if (st) {
    free(rep.source);
    free(rep.source2);
    return ckl_fail(L);
  }
  lua_pushstring(L, rep.source ? rep.source : "");
  free(rep.source);
  rep.source = NULL;
  lua_createtable(L, 0, 6);
  if (rep.source2) {
    lua_pushstring(L, rep.source2);
    lua_setfield(L, -2, "finisher");
    free(rep.source2);
    rep.source2 = NULL;
  }
  lua_pushinteger(L, rep.grid);
  lua_setfield(L, -2, "grid");
  lua_pushinteger(L, rep.block);
  lua_setfield(L, -2, "block");
  /* the parameter block the kernel would get: {kind = "i64" | "f64" | "input" | "output" | "workspace", value | name} */
  lua_createtable(L, rep.nparams, 0);
  for (int i = 0; i < rep.nparams; ++i) {
    lua_createtable(L, 0, 2);
    switch (rep.pkind[i]) {
    case 'l':
      lua_pushliteral(L, "i64");
      lua_pushinteger(L, (lua_Integer)(int64_t)rep.pval[i]);
      break;
    case 'd': {
      double d;
      memcpy(&d, &rep.pval[i], 8);
      lua_pushliteral(L, "f64");
      lua_pushnumber(L, d);
      break;
    }
    case 'i': lua_pushliteral(L, "input"); lua_pushstring(L, ck_expr_input(ex, rep.pref[i])); break;
    case 'o':
      lua_pushliteral(L, "output");
      lua_pushstring(L, lua_istable(L, 1) ? "out" : ck_expr_output(ex, rep.pref[i]));
      break;
    default: lua_pushliteral(L, "workspace"); lua_pushinteger(L, 0); break;
    }
    lua_setfield(L, -3, "value");
    lua_setfield(L, -2, "kind");
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "params");
  lua_pushstring(L, rep.entry);
  lua_setfield(L, -2, "entry");
  lua_pushstring(L, rep.layout);
  lua_setfield(L, -2, "layout");
  lua_pushinteger(L, rep.ndim);
  lua_setfield(L, -2, "ndim");
  return 2;
}

static int l_map_cache_size(lua_State *L) {
  lua_pushinteger(L, ck_map_cache_count(get_cache(L)));
  return 1;
}

const luaL_Reg ckl_map_funcs[] = {{"map", l_map},
                                  {"reduce_map", l_reduce_map},
                                  {"map_info", l_map_info},
                                  {"map_source", l_map_source},
                                  {"map_cache_size", l_map_cache_size},
                                  {NULL, NULL}};
