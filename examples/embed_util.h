/*
 * embed_util.h — what the embedding examples (embed_host.c, engine_dlpack.c, frame_loop.c) share: one line per check
 * ("ok  : ..." or "FAIL: ..."; the examples exit nonzero when any failed), and a Lua state with cukern loaded that
 * finds lua/cukern/ under the checkout given on the command line. Each example is one file that includes this once.
 */
#ifndef EMBED_UTIL_H
#define EMBED_UTIL_H

#include <stdio.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "cukern.h"

static int failures = 0;

static inline void check(int ok, const char *what, const char *detail) {
  printf("%s: %s%s%s\n", ok ? "ok  " : "FAIL", what, detail ? " — " : "", detail ? detail : "");
  if (!ok) ++failures;
}

/* A Lua state with the standard libraries and cukern, finding lua/cukern/ under root. */
static inline lua_State *new_state(const char *root) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  cukern_open(L);
  lua_pop(L, 1);
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;", root, root);
  lua_getfield(L, -2, "path");
  lua_concat(L, 2);
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
  return L;
}

#endif
