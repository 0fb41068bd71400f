/*
 * l_io.c — the binding of file I/O (src/io/ck_io.h; the friendly API is lua/cukern/io.lua, docs/io.md).
 *
 *   core.io_formats()                                  -> {npy = true, npz = bool, mat = bool}
 *   core.io_save_npy(path, a)
 *   core.io_load_npy(path [, device])                  -> array, info
 *   core.io_save_named("npz"|"mat", path, names, arrays, compress)   compress: bool or zlib level 0..9
 *   core.io_load_named("npz"|"mat", path [, device])   -> {name = array}, {name = info}
 *
 * Errors are raised as plain messages (file name first, no position): io.lua re-raises them at the user's
 * line. A loaded list is held by a GC-owned userdata while its arrays move into Lua, so that a memory error
 * on the way cannot leak them.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ck_io.h"
#include "lck.h"

#define IO_LIST_MT "cukern.io_list"

static int io_fail(lua_State *L) {
  lua_pushstring(L, ck_errmsg(CKL_CTX(L)));
  return lua_error(L);
}

static void push_info(lua_State *L, const ck_io_info *in) {
  lua_createtable(L, 0, 5);
  lua_pushstring(L, in->format);
  lua_setfield(L, -2, "format");
  if (in->version[0]) {
    lua_pushstring(L, in->version);
    lua_setfield(L, -2, "version");
  }
  lua_pushstring(L, in->stored);
  lua_setfield(L, -2, "stored");
  if (in->converted[0]) {
    lua_pushstring(L, in->converted);
    lua_setfield(L, -2, "converted");
  }
  lua_pushboolean(L, in->fortran);
  lua_setfield(L, -2, "fortran_order");
}

static int l_io_formats(lua_State *L) {
  lua_createtable(L, 0, 3);
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, "npy");
  lua_pushboolean(L, ck_io_have_npz());
  lua_setfield(L, -2, "npz");
  lua_pushboolean(L, ck_io_have_mat());
  lua_setfield(L, -2, "mat");
  return 1;
}

static int l_io_save_npy(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  const ck_tensor *t = ckl_to_array(L, 2);
  /* plain messages naming the file, as io.lua re-raises them under ck.save (not an argerror naming this
   * internal function) */
  if (!t) return luaL_error(L, "%s: expected a cukern array, got %s", path, luaL_typename(L, 2));
  if (!t->st) return luaL_error(L, "%s: the array was freed (a:free()); there is nothing to save", path);
  if (ck_npy_save(CKL_CTX(L), path, t)) return io_fail(L);
  return 0;
}

static int l_io_load_npy(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  ck_device dev = ckl_check_device(L, 2);
  ck_io_info info;
  ck_tensor *t = ckl_push_array(L);
  if (ck_npy_load(CKL_CTX(L), path, dev, t, &info)) return io_fail(L);
  ckl_gc_debt(L);
  push_info(L, &info);
  return 2;
}

static const char *const FORMATS[] = {"npz", "mat", NULL};

static int l_io_save_named(lua_State *L) {
  int fmt = luaL_checkoption(L, 1, NULL, FORMATS);
  const char *path = luaL_checkstring(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  luaL_checktype(L, 4, LUA_TTABLE);
  /* compress: true (zlib's default level), false/nil, or a level 0..9 (.mat: any level compresses) */
  int level = lua_isinteger(L, 5) ? (int)lua_tointeger(L, 5) : lua_toboolean(L, 5) ? -1 : 0;
  if (level < -1 || level > 9) return luaL_argerror(L, 5, "compress: true, false or a zlib level 0..9");
  /* raw access only: a value an __index metamethod made up would be referenced by nothing once popped */
  lua_Unsigned len = lua_rawlen(L, 3);
  if (len > INT_MAX) return luaL_argerror(L, 3, "too many names");
  if (lua_rawlen(L, 4) != len) return luaL_argerror(L, 4, "as many arrays as names");
  int n = (int)len;
  /* GC-owned scratch for the pointer lists; the strings and arrays stay referenced by tables 3 and 4 */
  const char **names = lua_newuserdatauv(L, sizeof(char *) * (size_t)(n ? n : 1), 0);
  const ck_tensor **ts = lua_newuserdatauv(L, sizeof(ck_tensor *) * (size_t)(n ? n : 1), 0);
  for (int i = 0; i < n; ++i) {
    /* only real strings: lua_tostring would convert a number on the stack into a string that nothing
     * references once popped */
    names[i] = lua_rawgeti(L, 3, i + 1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    lua_pop(L, 1);
    if (!names[i]) return luaL_error(L, "%s: entry %d is not a name", path, i + 1);
    lua_rawgeti(L, 4, i + 1);
    ts[i] = ckl_to_array(L, -1);
    const char *got = luaL_typename(L, -1);
    lua_pop(L, 1);
    if (!ts[i]) return luaL_error(L, "%s: entry '%s' is not a cukern array (got %s)", path, names[i], got);
    if (!ts[i]->st) return luaL_error(L, "%s: entry '%s' is a freed array", path, names[i]);
  }
  ck_status st = fmt == 0 ? ck_npz_save(CKL_CTX(L), path, n, names, ts, level)
                          : ck_mat_save(CKL_CTX(L), path, n, names, ts, level != 0);
  if (st) return io_fail(L);
  return 0;
}

static int io_list_gc(lua_State *L) {
  ck_io_list_free((ck_io_list *)luaL_checkudata(L, 1, IO_LIST_MT));
  return 0;
}

static int l_io_load_named(lua_State *L) {
  int fmt = luaL_checkoption(L, 1, NULL, FORMATS);
  const char *path = luaL_checkstring(L, 2);
  ck_device dev = ckl_check_device(L, 3);
  ck_io_list *l = lua_newuserdatauv(L, sizeof *l, 0);
  memset(l, 0, sizeof *l);
  if (luaL_newmetatable(L, IO_LIST_MT)) {
    lua_pushcfunction(L, io_list_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  ck_status st = fmt == 0 ? ck_npz_load(CKL_CTX(L), path, dev, l) : ck_mat_load(CKL_CTX(L), path, dev, l);
  if (st) return io_fail(L);
  ckl_gc_debt(L);
  lua_createtable(L, 0, l->n);
  lua_createtable(L, 0, l->n);
  for (int i = 0; i < l->n; ++i) {
    ck_tensor *t = ckl_push_array(L);
    *t = l->items[i].t; /* move: the list no longer owns it */
    memset(&l->items[i].t, 0, sizeof l->items[i].t);
    lua_setfield(L, -3, l->items[i].name);
    push_info(L, &l->items[i].info);
    lua_setfield(L, -2, l->items[i].name);
  }
  ck_io_list_free(l);
  return 2;
}

const luaL_Reg ckl_io_funcs[] = {{"io_formats", l_io_formats},
                                 {"io_save_npy", l_io_save_npy},
                                 {"io_load_npy", l_io_load_npy},
                                 {"io_save_named", l_io_save_named},
                                 {"io_load_named", l_io_load_named},
                                 {NULL, NULL}};
