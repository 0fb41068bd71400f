/*
 * l_graph.c — CUDA graphs from Lua: core.graph_begin(), core.graph_end() -> graph, core.graph_abort();
 * graph:replay(), graph:nodes(), graph:free(). ck.graph(fn) (init.lua) wraps the three around a function.
 */
#include "lck.h"

#define GRAPH_MT "cukern.graph"

typedef struct {
  ck_graph *g;
} lgraph;

static int l_graph_begin(lua_State *L) {
  if (ck_graph_begin(CKL_CTX(L))) return ckl_fail(L);
  return 0;
}

static int l_graph_end(lua_State *L) {
  lgraph *u = (lgraph *)lua_newuserdatauv(L, sizeof *u, 0);
  u->g = NULL;
  luaL_setmetatable(L, GRAPH_MT);
  if (ck_graph_end(CKL_CTX(L), &u->g)) return ckl_fail(L);
  return 1;
}

static int l_graph_abort(lua_State *L) {
  ck_graph_abort(CKL_CTX(L));
  return 0;
}

static int l_capturing(lua_State *L) {
  lua_pushboolean(L, ck_capturing(CKL_CTX(L)));
  return 1;
}

static lgraph *check_graph(lua_State *L) {
  lgraph *u = (lgraph *)luaL_checkudata(L, 1, GRAPH_MT);
  if (!u->g) luaL_error(L, "graph: this graph was freed");
  return u;
}

static int g_replay(lua_State *L) {
  lgraph *u = check_graph(L);
  if (ck_graph_replay(CKL_CTX(L), u->g)) return ckl_fail(L);
  lua_settop(L, 1);
  return 1;
}

static int g_nodes(lua_State *L) {
  lua_pushinteger(L, ck_graph_nodes(check_graph(L)->g));
  return 1;
}

static int g_free(lua_State *L) { /* __gc, __close and :free() */
  lgraph *u = (lgraph *)luaL_checkudata(L, 1, GRAPH_MT);
  if (u->g && CKL_MS(L)->ctx) ck_graph_free(u->g); /* after lua_close destroyed the context: nothing to give back */
  u->g = NULL;
  return 0;
}

void ckl_graph_init(lua_State *L) {
  static const luaL_Reg GM[] = {{"replay", g_replay}, {"nodes", g_nodes}, {"free", g_free}, {NULL, NULL}};
  ckl_new_class(L, GRAPH_MT, g_free, GM);
  luaL_getmetatable(L, GRAPH_MT);
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, g_free, 1);
  lua_setfield(L, -2, "__close");
  lua_pop(L, 1);
}

const luaL_Reg ckl_graph_funcs[] = {{"graph_begin", l_graph_begin}, {"graph_end", l_graph_end},
                                    {"graph_abort", l_graph_abort}, {"capturing", l_capturing}, {NULL, NULL}};
