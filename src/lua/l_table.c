/*
 * l_table.c — nested Lua tables <-> array values: core.from_table (ck.array's core), and the conversions that
 * a:totable(), a:flat() and a:item() use (l_array.c). Values are stored in the array's dtype exactly as a
 * cast would store them (f16/bf16 rounded once, i32 by the float -> i32 rule).
 */
#include <math.h>
#include <string.h>

#include "ew_ops.h"
#include "half.h"
#include "lck.h"


static void store_value(void *buf, ck_dtype dt, int64_t i, double v) {
  switch (dt) {
  case CK_F32: ((float *)buf)[i] = (float)v; break;
  case CK_F64: ((double *)buf)[i] = v; break;
  case CK_I32: ((int32_t *)buf)[i] = ck_ew_f2i(v); break;
  case CK_F16: ((uint16_t *)buf)[i] = ck_f64_to_f16(v); break; /* rounded once, to nearest even */
  case CK_BF16: ((uint16_t *)buf)[i] = ck_f64_to_bf16(v); break;
  default: break;
  }
}

static double load_value(const void *buf, ck_dtype dt, int64_t i) {
  switch (dt) {
  case CK_F32: return ((const float *)buf)[i];
  case CK_F64: return ((const double *)buf)[i];
  case CK_I32: return ((const int32_t *)buf)[i];
  case CK_F16: return ck_f16_to_f32(((const uint16_t *)buf)[i]);
  case CK_BF16: return ck_bf16_to_f32(((const uint16_t *)buf)[i]);
  default: return NAN;
  }
}

void ckl_push_value(lua_State *L, const void *buf, ck_dtype dt, int64_t i) {
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
      const double v = lua_tonumberx(L, -1, &ok);
      if (!ok || lua_type(L, -1) != LUA_TNUMBER)
        luaL_error(L, "array: element %s is a %s, not a number%s", path, luaL_typename(L, -1),
                   lua_istable(L, -1) ? " (ragged nesting)"
                   : lua_isboolean(L, -1) ? " (cukern has no bool dtype yet: use 1 or 0)" : "");
      store_value(buf, dt, (*pos)++, v);
    } else {
      if (!lua_istable(L, -1)) luaL_error(L, "array: ragged nested table: %s is a %s, expected a table", path, luaL_typename(L, -1));
      fill_from(L, lua_gettop(L), d + 1, nd, shape, buf, dt, pos, path, l2 < 256 ? l2 : 255);
    }
    lua_pop(L, 1);
  }
}

/* core.from_table(tbl_or_number, dtype, device) */
int ckl_from_table(lua_State *L) {
  ck_dtype dt = lua_isnoneornil(L, 2) ? CK_F32 : ckl_check_dtype(L, 2);
  ck_device dev = ckl_check_device(L, 3);
  int64_t shape[CK_MAX_DIMS];
  int nd = 0;
  if (!lua_istable(L, 1) && lua_type(L, 1) != LUA_TNUMBER) luaL_typeerror(L, 1, "table or number");
  lua_pushvalue(L, 1);
  while (lua_istable(L, -1)) {
    if (nd == CK_MAX_DIMS) return luaL_error(L, "array: nesting deeper than %d dims", CK_MAX_DIMS);
    shape[nd++] = (int64_t)lua_rawlen(L, -1);
    if (shape[nd - 1] == 0) break;
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
  if (ck_check_shape(CKL_CTX(L), "array", nd, shape, dt)) return ckl_fail(L);
  int64_t n = 1;
  for (int k = 0; k < nd; ++k) n *= shape[k];
  void *buf = lua_newuserdatauv(L, (size_t)(n ? n : 1) * ck_dtype_size(dt), 0); /* GC-owned scratch */
  int64_t pos = 0;
  char path[256] = "";
  if (nd == 0) {
    store_value(buf, dt, 0, lua_tonumber(L, 1));
  } else {
    fill_from(L, 1, 0, nd, shape, buf, dt, &pos, path, 0);
  }
  ck_tensor *t = ckl_push_array(L);
  if (ck_empty(CKL_CTX(L), t, dt, nd, shape, dev) || ck_write(CKL_CTX(L), t, buf)) return ckl_fail(L);
  ckl_gc_debt(L);
  return 1;
}

void ckl_build_table(lua_State *L, const ck_tensor *t, const void *buf, int d, int64_t *pos) {
  lua_createtable(L, (int)t->shape[d], 0);
  for (int64_t k = 1; k <= t->shape[d]; ++k) {
    if (d == t->ndim - 1) ckl_push_value(L, buf, t->dtype, (*pos)++);
    else ckl_build_table(L, t, buf, d + 1, pos);
    lua_rawseti(L, -2, k);
  }
}

