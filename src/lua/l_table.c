/*
 * l_table.c — nested Lua tables <-> array values: core.from_table (ck.array's core), and the conversions that
 * a:totable(), a:flat() and a:item() use (l_array.c). Values are stored in the array's dtype exactly as a
 * cast would store them (f16/bf16 rounded once, i32 by the float -> i32 rule; Lua integers into the storage
 * integer dtypes as an i64 cast: i64 exact). Integer dtypes read back as Lua integers, bool as booleans.
 */
#include <math.h>
#include <string.h>

#include "ew_ops.h"
#include "fp8.h"
#include "half.h"
#include "lck.h"


static void store_value(void *buf, ck_dtype dt, int64_t i, double v) {
  switch (dt) {
  case CK_F32: ((float *)buf)[i] = (float)v; break;
  case CK_F64: ((double *)buf)[i] = v; break;
  case CK_I32: ((int32_t *)buf)[i] = ck_ew_f2i(v); break;
  case CK_F16: ((uint16_t *)buf)[i] = ck_f64_to_f16(v); break; /* rounded once, to nearest even */
  case CK_BF16: ((uint16_t *)buf)[i] = ck_f64_to_bf16(v); break;
  case CK_BOOL: ((uint8_t *)buf)[i] = v != 0; break; /* NaN -> true, as the cast */
  case CK_U8: ((uint8_t *)buf)[i] = ck_ew_f2u8(v); break;
  case CK_I8: ((int8_t *)buf)[i] = ck_ew_f2i8(v); break;
  case CK_I16: ((int16_t *)buf)[i] = ck_ew_f2i16(v); break;
  case CK_U32: ((uint32_t *)buf)[i] = ck_ew_f2u32(v); break;
  case CK_I64: ((int64_t *)buf)[i] = ck_ew_f2i64(v); break;
  case CK_E4M3: ((uint8_t *)buf)[i] = ck_f64_to_e4m3(v); break; /* saturated (kernels/fp8.h) */
  case CK_E5M2: ((uint8_t *)buf)[i] = ck_f64_to_e5m2(v); break;
  default: break;
  }
}

/* A Lua integer into a storage integer dtype: as the cast from i64 (modulo 2^bits; i64 exact). The older
 * dtypes take it as a double (i32 by the float -> i32 rule, as before). */
static void store_integer(void *buf, ck_dtype dt, int64_t i, int64_t v) {
  switch (dt) {
  case CK_BOOL: ((uint8_t *)buf)[i] = v != 0; break;
  case CK_U8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
  case CK_I8: ((int8_t *)buf)[i] = (int8_t)(uint8_t)v; break;
  case CK_I16: ((int16_t *)buf)[i] = (int16_t)(uint16_t)v; break;
  case CK_U32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
  case CK_I64: ((int64_t *)buf)[i] = v; break;
  default: store_value(buf, dt, i, (double)v); break;
  }
}

/* The Lua value at idx (a number or, for bool arrays, a boolean) stored as element i. */
static void store_lua(lua_State *L, int idx, void *buf, ck_dtype dt, int64_t i) {
  if (lua_isboolean(L, idx)) store_integer(buf, dt, i, lua_toboolean(L, idx));
  else if (lua_isinteger(L, idx)) store_integer(buf, dt, i, (int64_t)lua_tointeger(L, idx));
  else store_value(buf, dt, i, lua_tonumber(L, idx));
}

static double load_value(const void *buf, ck_dtype dt, int64_t i) {
  switch (dt) {
  case CK_F32: return ((const float *)buf)[i];
  case CK_F64: return ((const double *)buf)[i];
  case CK_F16: return ck_f16_to_f32(((const uint16_t *)buf)[i]);
  case CK_BF16: return ck_bf16_to_f32(((const uint16_t *)buf)[i]);
  case CK_E4M3: return ck_e4m3_to_f32(((const uint8_t *)buf)[i]);
  case CK_E5M2: return ck_e5m2_to_f32(((const uint8_t *)buf)[i]);
  default: return NAN;
  }
}

/* Element i as a Lua value: integers of every integer dtype (u32 and i64 exact), booleans for bool. */
void ckl_push_value(lua_State *L, const void *buf, ck_dtype dt, int64_t i) {
  switch (dt) {
  case CK_I32: lua_pushinteger(L, ((const int32_t *)buf)[i]); break;
  case CK_BOOL: lua_pushboolean(L, ((const uint8_t *)buf)[i] != 0); break;
  case CK_U8: lua_pushinteger(L, ((const uint8_t *)buf)[i]); break;
  case CK_I8: lua_pushinteger(L, ((const int8_t *)buf)[i]); break;
  case CK_I16: lua_pushinteger(L, ((const int16_t *)buf)[i]); break;
  case CK_U32: lua_pushinteger(L, (lua_Integer)((const uint32_t *)buf)[i]); break;
  case CK_I64: lua_pushinteger(L, (lua_Integer)((const int64_t *)buf)[i]); break;
  default: lua_pushnumber(L, load_value(buf, dt, i)); break;
  }
}

/* Walks the nested table at stack index `idx` at depth d, checking it is rectangular, storing leaves. */
/* Leaves: numbers; booleans only into bool arrays (and a bool array made from booleans, its dtype not given,
 * takes booleans only: `only_bool`). */
static const char *leaf_ok(lua_State *L, ck_dtype dt, bool only_bool) {
  if (lua_type(L, -1) == LUA_TNUMBER) return only_bool ? " (the table's first element is a boolean: a bool array "
                                                         "takes booleans; give {dtype = ...} for numbers)" : NULL;
  if (lua_isboolean(L, -1))
    return dt == CK_BOOL ? NULL : " (booleans go into bool arrays: all-boolean tables, or {dtype = \"bool\"})";
  return lua_istable(L, -1) ? " (ragged nesting)" : "";
}

static void fill_from(lua_State *L, int idx, int d, int nd, const int64_t *shape, void *buf, ck_dtype dt,
                      bool only_bool, int64_t *pos, char *path, size_t plen) {
  int64_t n = (int64_t)lua_rawlen(L, idx);
  if (n != shape[d])
    luaL_error(L, "array: ragged nested table: %s has %I elements, expected %I (shape from the first elements)",
               plen ? path : "the top level", (lua_Integer)n, (lua_Integer)shape[d]);
  for (int64_t k = 1; k <= n; ++k) {
    lua_rawgeti(L, idx, k);
    size_t l2 = plen + (size_t)snprintf(path + plen, 256 - plen, "[%lld]", (long long)k);
    if (d == nd - 1) {
      const char *why = leaf_ok(L, dt, only_bool);
      if (why)
        luaL_error(L, "array: element %s is a %s, not a %s%s", path, luaL_typename(L, -1),
                   dt == CK_BOOL ? "boolean" : "number", why);
      store_lua(L, -1, buf, dt, (*pos)++);
    } else {
      if (!lua_istable(L, -1)) luaL_error(L, "array: ragged nested table: %s is a %s, expected a table", path, luaL_typename(L, -1));
      fill_from(L, lua_gettop(L), d + 1, nd, shape, buf, dt, only_bool, pos, path, l2 < 256 ? l2 : 255);
    }
    lua_pop(L, 1);
  }
}

/* core.from_table(tbl_or_number_or_boolean, dtype, device): dtype nil is f32, or bool when the first element is
 * a boolean */
int ckl_from_table(lua_State *L) {
  const bool given = !lua_isnoneornil(L, 2);
  ck_dtype dt = given ? ckl_check_dtype(L, 2) : CK_F32;
  ck_device dev = ckl_check_device(L, 3);
  int64_t shape[CK_MAX_DIMS];
  int nd = 0;
  if (!lua_istable(L, 1) && lua_type(L, 1) != LUA_TNUMBER && !lua_isboolean(L, 1))
    luaL_typeerror(L, 1, "table, number or boolean");
  lua_pushvalue(L, 1);
  while (lua_istable(L, -1)) {
    if (nd == CK_MAX_DIMS) return luaL_error(L, "array: nesting deeper than %d dims", CK_MAX_DIMS);
    shape[nd++] = (int64_t)lua_rawlen(L, -1);
    if (shape[nd - 1] == 0) break;
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
  }
  const bool only_bool = !given && lua_isboolean(L, -1);
  if (only_bool) dt = CK_BOOL;
  lua_pop(L, 1);
  if (ck_check_shape(CKL_CTX(L), "array", nd, shape, dt)) return ckl_fail(L);
  int64_t n = 1;
  for (int k = 0; k < nd; ++k) n *= shape[k];
  void *buf = lua_newuserdatauv(L, (size_t)(n ? n : 1) * ck_dtype_size(dt), 0); /* GC-owned scratch */
  int64_t pos = 0;
  char path[256] = "";
  if (nd == 0) {
    lua_pushvalue(L, 1);
    const char *why = leaf_ok(L, dt, false);
    if (why) return luaL_error(L, "array: the value is a %s, not a %s%s", luaL_typename(L, 1), dt == CK_BOOL ? "boolean" : "number", why);
    store_lua(L, 1, buf, dt, 0);
    lua_pop(L, 1);
  } else {
    fill_from(L, 1, 0, nd, shape, buf, dt, only_bool, &pos, path, 0);
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

