/*
 * l_array.c — the array userdata: creation, nested tables <-> arrays, queries, views and copies.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ew_ops.h"
#include "half.h"
#include "lck.h"

// ---------------------------------------------------------------- creation

/* core.empty(shape, dtype, device) */
static int l_empty(lua_State *L) {
  int64_t shape[CK_MAX_DIMS];
  int n = ckl_check_shape(L, 1, shape);
  ck_dtype dt = lua_isnoneornil(L, 2) ? CK_F32 : ckl_check_dtype(L, 2);
  ck_devkind dev = ckl_check_device(L, 3);
  ck_tensor *t = ckl_push_array(L);
  if (ck_empty(CKL_CTX(L), t, dt, n, shape, dev)) return ckl_fail(L);
  ckl_gc_debt(L);
  return 1;
}

/* core.generate(t, what, s1, s2): fill/arange/eye/rand/randn into t (any strides) */
static int l_generate(lua_State *L) {
  static const char *const names[] = {"fill", "arange", "eye", "rand", "randn", NULL};
  static const int ops[] = {CK_EW_FILL, CK_EW_ARANGE, CK_EW_EYE, CK_EW_RAND, CK_EW_RANDN};
  ck_tensor *t = ckl_check_array(L, 1);
  int which = luaL_checkoption(L, 2, NULL, names);
  double s1 = luaL_optnumber(L, 3, 0), s2 = luaL_optnumber(L, 4, 0);
  if (ops[which] == CK_EW_RAND || ops[which] == CK_EW_RANDN) {
    s1 = (double)(int64_t)CKL_MS(L)->seed;
    s2 = (double)CKL_MS(L)->draws++;
  }
  if (ck_ew_generate(CKL_CTX(L), ops[which], t, s1, s2)) return ckl_fail(L);
  lua_settop(L, 1);
  return 1;
}

// ---------------------------------------------------------------- nested tables <-> arrays

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

static void push_value(lua_State *L, const void *buf, ck_dtype dt, int64_t i) {
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
      double v;
      if (lua_isboolean(L, -1)) v = lua_toboolean(L, -1);
      else {
        v = lua_tonumberx(L, -1, &ok);
        if (!ok)
          luaL_error(L, "array: element %s is a %s, not a number%s", path, luaL_typename(L, -1),
                     lua_istable(L, -1) ? " (ragged nesting)" : "");
      }
      store_value(buf, dt, (*pos)++, v);
    } else {
      if (!lua_istable(L, -1)) luaL_error(L, "array: ragged nested table: %s is a %s, expected a table", path, luaL_typename(L, -1));
      fill_from(L, lua_gettop(L), d + 1, nd, shape, buf, dt, pos, path, l2 < 256 ? l2 : 255);
    }
    lua_pop(L, 1);
  }
}

/* core.from_table(tbl_or_number, dtype, device) */
static int l_from_table(lua_State *L) {
  ck_dtype dt = lua_isnoneornil(L, 2) ? CK_F32 : ckl_check_dtype(L, 2);
  ck_devkind dev = ckl_check_device(L, 3);
  int64_t shape[CK_MAX_DIMS];
  int nd = 0;
  if (!lua_istable(L, 1) && !lua_isnumber(L, 1) && !lua_isboolean(L, 1)) luaL_typeerror(L, 1, "table or number");
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
    double v = lua_isboolean(L, 1) ? lua_toboolean(L, 1) : lua_tonumber(L, 1);
    store_value(buf, dt, 0, v);
  } else {
    fill_from(L, 1, 0, nd, shape, buf, dt, &pos, path, 0);
  }
  ck_tensor *t = ckl_push_array(L);
  if (ck_empty(CKL_CTX(L), t, dt, nd, shape, dev) || ck_write(CKL_CTX(L), t, buf)) return ckl_fail(L);
  ckl_gc_debt(L);
  return 1;
}

static void build_table(lua_State *L, const ck_tensor *t, const void *buf, int d, int64_t *pos) {
  lua_createtable(L, (int)t->shape[d], 0);
  for (int64_t k = 1; k <= t->shape[d]; ++k) {
    if (d == t->ndim - 1) push_value(L, buf, t->dtype, (*pos)++);
    else build_table(L, t, buf, d + 1, pos);
    lua_rawseti(L, -2, k);
  }
}

static int m_totable(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  int64_t n = ck_numel(t);
  void *buf = lua_newuserdatauv(L, (size_t)(n ? n : 1) * ck_dtype_size(t->dtype), 0);
  if (n && ck_read(CKL_CTX(L), t, buf)) return ckl_fail(L);
  if (t->ndim == 0) {
    push_value(L, buf, t->dtype, 0);
    return 1;
  }
  int64_t pos = 0;
  luaL_checkstack(L, t->ndim + 4, "totable");
  build_table(L, t, buf, 0, &pos);
  return 1;
}

/* a:flat() -> flat Lua list of the values in logical order (used by tostring and specs) */
static int m_flat(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  int64_t n = ck_numel(t);
  void *buf = lua_newuserdatauv(L, (size_t)(n ? n : 1) * ck_dtype_size(t->dtype), 0);
  if (n && ck_read(CKL_CTX(L), t, buf)) return ckl_fail(L);
  lua_createtable(L, (int)n, 0);
  for (int64_t k = 0; k < n; ++k) {
    push_value(L, buf, t->dtype, k);
    lua_rawseti(L, -2, k + 1);
  }
  return 1;
}

static int m_item(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  if (ck_numel(t) != 1) {
    char sh[96];
    return luaL_error(L, "item: array has %I elements (shape %s), item() needs exactly 1", (lua_Integer)ck_numel(t),
                      ck_shape_str(t->ndim, t->shape, sh, sizeof sh));
  }
  double v[1];
  if (ck_read(CKL_CTX(L), t, v)) return ckl_fail(L);
  push_value(L, v, t->dtype, 0);
  return 1;
}

// ---------------------------------------------------------------- queries

static int m_shape(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  ckl_push_shape(L, t->ndim, t->shape);
  return 1;
}
static int m_strides(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  ckl_push_shape(L, t->ndim, t->stride);
  return 1;
}
static int m_size(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  if (lua_isnoneornil(L, 2)) return m_shape(L);
  lua_pushinteger(L, t->shape[ckl_check_dim(L, 2, t)]);
  return 1;
}
static int m_offset(lua_State *L) {
  lua_pushinteger(L, ckl_check_array(L, 1)->offset);
  return 1;
}
static int m_dtype(lua_State *L) {
  lua_pushstring(L, ck_dtype_name(ckl_check_array(L, 1)->dtype));
  return 1;
}
static int m_numel(lua_State *L) {
  lua_pushinteger(L, ck_numel(ckl_check_array(L, 1)));
  return 1;
}
static int m_ndim(lua_State *L) {
  lua_pushinteger(L, ckl_check_array(L, 1)->ndim);
  return 1;
}
static int m_device(lua_State *L) {
  lua_pushstring(L, ck_dev_name(ck_dev(ckl_check_array(L, 1))));
  return 1;
}
static int m_is_contiguous(lua_State *L) {
  lua_pushboolean(L, ck_is_contiguous(ckl_check_array(L, 1)));
  return 1;
}
static int m_is_freed(lua_State *L) {
  ck_tensor *t = ckl_to_array(L, 1);
  if (!t) luaL_typeerror(L, 1, "cukern array");
  lua_pushboolean(L, t->st == NULL);
  return 1;
}
/* Identity of the underlying storage (views of one array share it) and the storage's reference count. */
static int m_storage_id(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  lua_pushfstring(L, "%p", (void *)t->st);
  lua_pushinteger(L, t->st->refs);
  return 2;
}
int ckl_array_len(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  lua_pushinteger(L, t->ndim ? t->shape[0] : 1);
  return 1;
}

int ckl_array_release(lua_State *L) { /* __gc, __close and :free() */
  ck_tensor *t = ckl_to_array(L, 1);
  if (t) ck_release(t);
  return 0;
}

// ---------------------------------------------------------------- copies and views

static int m_clone(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  ck_tensor *r = ckl_push_array(L);
  if (ck_empty_like(CKL_CTX(L), r, t) || ck_copy(CKL_CTX(L), r, t)) return ckl_fail(L);
  ckl_gc_debt(L);
  return 1;
}

static int m_contiguous(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  ck_tensor *r = ckl_push_array(L);
  if (ck_contiguous(CKL_CTX(L), r, t)) return ckl_fail(L);
  ckl_gc_debt(L);
  return 1;
}

/* a:to(x [, y]) with x, y each a device or a dtype name */
static int m_to(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  ck_devkind dev = ck_dev(t);
  ck_dtype dt = t->dtype;
  for (int i = 2; i <= 3 && !lua_isnoneornil(L, i); ++i) {
    const char *s = luaL_checkstring(L, i);
    if (!ckl_parse_device(s, &dev) && !ck_dtype_parse(s, &dt))
      return luaL_argerror(L, i, lua_pushfstring(L, "'%s' is neither a device (cuda, host) nor a dtype (f32, f64, i32, f16, bf16)", s));
  }
  ck_tensor *r = ckl_push_array(L);
  if (ck_to(CKL_CTX(L), r, t, dev, dt)) return ckl_fail(L);
  ckl_gc_debt(L);
  return 1;
}

static int m_copy_(lua_State *L) {
  ck_tensor *dst = ckl_check_array(L, 1), *src = ckl_check_array(L, 2);
  ck_tensor *e = ckl_push_array(L); /* src broadcast to dst's shape */
  if (ck_view_expand(CKL_CTX(L), e, src, dst->ndim, dst->shape)) {
    char s1[96], s2[96];
    return luaL_error(L, "copy_: source %s cannot be broadcast to the destination %s",
                      ck_shape_str(src->ndim, src->shape, s1, sizeof s1), ck_shape_str(dst->ndim, dst->shape, s2, sizeof s2));
  }
  if (ck_copy(CKL_CTX(L), dst, e)) return ckl_fail(L);
  lua_settop(L, 1);
  return 1;
}

static int m_t(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  if (t->ndim != 2) {
    char sh[96];
    return luaL_error(L, "t: needs a 2-D array, got shape %s (use transpose(d1, d2) or permute)",
                      ck_shape_str(t->ndim, t->shape, sh, sizeof sh));
  }
  ck_tensor *r = ckl_push_array(L);
  if (ck_view_transpose(CKL_CTX(L), r, t, 0, 1)) return ckl_fail(L);
  return 1;
}

static int m_transpose(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  int d1 = lua_isnoneornil(L, 2) ? t->ndim - 2 : ckl_check_dim(L, 2, t);
  int d2 = lua_isnoneornil(L, 3) ? t->ndim - 1 : ckl_check_dim(L, 3, t);
  if (t->ndim < 2) return luaL_error(L, "transpose: needs at least 2 dims, got %d", t->ndim);
  ck_tensor *r = ckl_push_array(L);
  if (ck_view_transpose(CKL_CTX(L), r, t, d1, d2)) return ckl_fail(L);
  return 1;
}

static int m_permute(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  int perm[CK_MAX_DIMS], n;
  if (lua_istable(L, 2)) { /* a:permute{3, 1, 2} */
    int64_t p[CK_MAX_DIMS];
    n = ckl_read_ints(L, 2, p);
    if (n != t->ndim) return luaL_error(L, "permute: %d dims given for a %d-D array", n, t->ndim);
    for (int i = 0; i < n; ++i) {
      if (p[i] < 0) p[i] += t->ndim + 1;
      if (p[i] < 1 || p[i] > t->ndim) return luaL_argerror(L, 2, lua_pushfstring(L, "dim out of range (1..%d)", t->ndim));
      perm[i] = (int)p[i] - 1;
    }
  } else {
    n = lua_gettop(L) - 1;
    if (n != t->ndim) return luaL_error(L, "permute: %d dims given for a %d-D array", n, t->ndim);
    for (int i = 0; i < n; ++i) perm[i] = ckl_check_dim(L, 2 + i, t);
  }
  ck_tensor *r = ckl_push_array(L);
  if (ck_view_permute(CKL_CTX(L), r, t, perm)) return ckl_fail(L);
  return 1;
}

/* a:narrow(dim, first, last) — inclusive, 1-based; last may be negative (from the end) */
static int m_narrow(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  int d = ckl_check_dim(L, 2, t);
  lua_Integer first = luaL_checkinteger(L, 3), last = luaL_optinteger(L, 4, first);
  if (last < 0) last += t->shape[d] + 1;
  if (first < 0) first += t->shape[d] + 1;
  ck_tensor *r = ckl_push_array(L);
  if (first < 1 || last < first - 1)
    return luaL_error(L, "narrow: range %I..%I is invalid for dim %d (size %I)", first, last, d + 1,
                      (lua_Integer)t->shape[d]);
  if (ck_view_narrow(CKL_CTX(L), r, t, d, first - 1, last - first + 1)) return ckl_fail(L);
  return 1;
}

static int m_select(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  int d = ckl_check_dim(L, 2, t);
  lua_Integer i = luaL_checkinteger(L, 3);
  if (i < 0) i += t->shape[d] + 1;
  ck_tensor *r = ckl_push_array(L);
  if (ck_view_select(CKL_CTX(L), r, t, d, i - 1)) return ckl_fail(L);
  return 1;
}

/* Shape from varargs or a table starting at index i; one -1 is inferred from numel. */
static int shape_args(lua_State *L, int i, int64_t *shape, int64_t numel) {
  int n, infer = -1;
  if (lua_istable(L, i)) n = ckl_read_ints(L, i, shape);
  else {
    n = lua_gettop(L) - i + 1;
    if (n > CK_MAX_DIMS) return luaL_error(L, "reshape: %d dims requested, at most %d", n, CK_MAX_DIMS);
    for (int k = 0; k < n; ++k) shape[k] = luaL_checkinteger(L, i + k);
  }
  int64_t known = 1;
  for (int k = 0; k < n; ++k) {
    if (shape[k] == -1) {
      if (infer >= 0) return luaL_error(L, "reshape: only one dim can be -1");
      infer = k;
    } else if (shape[k] < 0) {
      return luaL_error(L, "reshape: dim %d is negative (%I)", k + 1, (lua_Integer)shape[k]);
    } else {
      known *= shape[k];
    }
  }
  if (infer >= 0) shape[infer] = known ? numel / known : 0;
  return n;
}

static int m_reshape(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  int64_t shape[CK_MAX_DIMS];
  int n = shape_args(L, 2, shape, ck_numel(t));
  ck_tensor *r = ckl_push_array(L);
  if (ck_view_reshape(CKL_CTX(L), r, t, n, shape)) return ckl_fail(L);
  return 1;
}

/* a:expand(...) — size-1 dims stretch (stride 0); -1 keeps a dim's size; new leading dims may be added */
static int m_expand(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  int64_t shape[CK_MAX_DIMS];
  int n;
  if (lua_istable(L, 2)) n = ckl_read_ints(L, 2, shape);
  else {
    n = lua_gettop(L) - 1;
    if (n > CK_MAX_DIMS) return luaL_error(L, "expand: %d dims requested, at most %d", n, CK_MAX_DIMS);
    for (int k = 0; k < n; ++k) shape[k] = luaL_checkinteger(L, 2 + k);
  }
  for (int k = 0; k < n; ++k) {
    int j = k - (n - t->ndim);
    if (shape[k] == -1 && j >= 0) shape[k] = t->shape[j];
  }
  ck_tensor *r = ckl_push_array(L);
  if (ck_view_expand(CKL_CTX(L), r, t, n, shape)) return ckl_fail(L);
  return 1;
}

static int m_fill(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  double v = luaL_checknumber(L, 2);
  if (ck_ew_generate(CKL_CTX(L), CK_EW_FILL, t, v, 0)) return ckl_fail(L);
  lua_settop(L, 1);
  return 1;
}


const luaL_Reg ckl_array_funcs[] = {{"empty", l_empty}, {"generate", l_generate}, {"from_table", l_from_table},
                                    {NULL, NULL}};

const luaL_Reg ckl_array_methods[] = {
    {"shape", m_shape}, {"size", m_size}, {"strides", m_strides}, {"offset", m_offset}, {"dtype", m_dtype},
    {"numel", m_numel}, {"ndim", m_ndim}, {"device", m_device}, {"is_contiguous", m_is_contiguous},
    {"is_freed", m_is_freed}, {"storage_id", m_storage_id}, {"totable", m_totable}, {"flat", m_flat},
    {"item", m_item}, {"clone", m_clone}, {"contiguous", m_contiguous}, {"to", m_to}, {"copy_", m_copy_},
    {"free", ckl_array_release}, {"fill", m_fill}, {"t", m_t}, {"transpose", m_transpose}, {"permute", m_permute},
    {"narrow", m_narrow}, {"select", m_select}, {"reshape", m_reshape}, {"view", m_reshape},
    {"expand", m_expand}, {NULL, NULL}};
