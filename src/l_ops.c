/*
 * l_ops.c — the ops: matmul, reductions, transpose, elementwise.
 */
#include <stdio.h>
#include <string.h>

#include "ew_ops.h"
#include "lck.h"
#include "reduce_ops.h"

// ---------------------------------------------------------------- ops

/* core.matmul(a, b [, out [, alpha [, beta [, variant]]]]) */
static int l_matmul(lua_State *L) {
  char vb[32];
  ck_tensor *a = ckl_check_array(L, 1), *b = ckl_check_array(L, 2), *out = ckl_opt_array(L, 3);
  double alpha = luaL_optnumber(L, 4, 1.0), beta = luaL_optnumber(L, 5, 0.0);
  const char *variant = ckl_opt_variant(L, 6, vb, sizeof vb);
  ck_ran ran;
  ckl_host_ran(&ran);
  if (out) lua_pushvalue(L, 3);
  else out = ckl_push_array(L);
  if (ck_matmul(CKL_CTX(L), out, a, b, alpha, beta, variant, &ran)) return ckl_fail(L);
  ckl_set_last(L, &ran);
  ckl_gc_debt(L);
  return 1;
}

/* core.reduce(fname, x [, dim [, keepdim [, variant [, want_idx [, out [, idx]]]]]]) -> values [, idx] */
static int l_reduce(lua_State *L) {
  char vb[32];
  const char *fname = luaL_checkstring(L, 1);
  int op = ck_reduce_op_parse(fname);
  if (op < 0) return luaL_argerror(L, 1, lua_pushfstring(L, "unknown reduction '%s'", fname));
  ck_tensor *x = ckl_check_array(L, 2);
  int dim = lua_isnoneornil(L, 3) ? -1 : ckl_check_dim(L, 3, x);
  bool keepdim = lua_toboolean(L, 4);
  const char *variant = ckl_opt_variant(L, 5, vb, sizeof vb);
  bool arg = op == CK_RED_ARGMAX || op == CK_RED_ARGMIN;
  bool want_idx = arg || lua_toboolean(L, 6);
  ck_tensor *out = ckl_opt_array(L, 7), *idx = ckl_opt_array(L, 8);
  lua_settop(L, 8);
  if (!arg) {
    if (out) lua_pushvalue(L, 7);
    else out = ckl_push_array(L);
  } else {
    out = NULL;
  }
  if (want_idx) {
    if (idx) lua_pushvalue(L, 8);
    else idx = ckl_push_array(L);
  } else {
    idx = NULL;
  }
  ck_ran ran;
  ckl_host_ran(&ran);
  if (ck_reduce(CKL_CTX(L), op, out, idx, x, dim, keepdim, variant, &ran)) return ckl_fail(L);
  ckl_set_last(L, &ran);
  ckl_gc_debt(L);
  return lua_gettop(L) - 8;
}

/* core.transpose(x [, out [, variant]]) */
static int l_transpose(lua_State *L) {
  char vb[32];
  ck_tensor *x = ckl_check_array(L, 1), *out = ckl_opt_array(L, 2);
  const char *variant = ckl_opt_variant(L, 3, vb, sizeof vb);
  ck_ran ran;
  ckl_host_ran(&ran);
  if (out) lua_pushvalue(L, 2);
  else out = ckl_push_array(L);
  if (ck_transpose(CKL_CTX(L), out, x, variant, &ran)) return ckl_fail(L);
  ckl_set_last(L, &ran);
  ckl_gc_debt(L);
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
  ck_tensor *a = ckl_check_array(L, 2), *out = ckl_opt_array(L, 3);
  double s1 = luaL_optnumber(L, 4, 0), s2 = luaL_optnumber(L, 5, 0);
  const char *variant = ckl_opt_variant(L, 6, vb, sizeof vb);
  ck_ran ran;
  ckl_host_ran(&ran);
  if (out) lua_pushvalue(L, 3);
  else out = ckl_push_array(L);
  if (ck_ew_unary(CKL_CTX(L), op, out, a, s1, s2, variant, &ran)) return ckl_fail(L);
  ckl_set_last(L, &ran);
  ckl_gc_debt(L);
  return 1;
}

/* core.binary(name, a, b [, out [, variant]]); a or b may be a number */
static int l_binary(lua_State *L) {
  char vb[32];
  int op = check_ew_op(L, 1, 2);
  ck_tensor *a = ckl_to_array(L, 2), *b = ckl_to_array(L, 3), *out = ckl_opt_array(L, 4);
  const char *variant = ckl_opt_variant(L, 5, vb, sizeof vb);
  if (!a && !b) return luaL_error(L, "%s: at least one operand must be a cukern array", lua_tostring(L, 1));
  if (a) ckl_check_array(L, 2);
  else luaL_checknumber(L, 2);
  if (b) ckl_check_array(L, 3);
  else luaL_checknumber(L, 3);
  ck_ran ran;
  ckl_host_ran(&ran);
  if (out) lua_pushvalue(L, 4);
  else out = ckl_push_array(L);
  ck_status st = a && b ? ck_ew_binary(CKL_CTX(L), op, out, a, b, variant, &ran)
                 : a    ? ck_ew_binary_scalar(CKL_CTX(L), op, out, a, lua_tonumber(L, 3), false, variant, &ran)
                        : ck_ew_binary_scalar(CKL_CTX(L), op, out, b, lua_tonumber(L, 2), true, variant, &ran);
  if (st) return ckl_fail(L);
  ckl_set_last(L, &ran);
  ckl_gc_debt(L);
  return 1;
}


/* core.ew_ops() -> the elementwise op table as Lua sees it: {name, arity, float_only, lua = "unary" |
 * "binary" | nil} per op, in id order. init.lua generates ck.<name>, a:<name>() and a:<name>_() for the
 * rows with a `lua` kind; the others (copy, pows, clamp, pow, generators) have hand-written wrappers. */
static int l_ew_ops(lua_State *L) {
  lua_createtable(L, CK_EW_NOPS, 0);
  for (int op = 0; op < CK_EW_NOPS; ++op) {
    lua_createtable(L, 0, 4);
    lua_pushstring(L, ck_ew_op_name(op));
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, ck_ew_op_arity(op));
    lua_setfield(L, -2, "arity");
    lua_pushboolean(L, ck_ew_op_float_only(op));
    lua_setfield(L, -2, "float_only");
    const char *kind = ck_ew_op_lua_kind(op);
    if (kind) {
      lua_pushstring(L, kind);
      lua_setfield(L, -2, "lua");
    }
    lua_rawseti(L, -2, op + 1);
  }
  return 1;
}

const luaL_Reg ckl_ops_funcs[] = {{"matmul", l_matmul}, {"reduce", l_reduce}, {"transpose", l_transpose},
                                  {"unary", l_unary}, {"binary", l_binary}, {"ew_ops", l_ew_ops}, {NULL, NULL}};
