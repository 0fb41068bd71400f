/*
 * l_array.c — the array userdata: creation, nested tables <-> arrays, queries, views and copies.
 *
 * The methods here are called by the user directly (`a:narrow(...)`), so their errors name the method as
 * the user wrote it ("a:narrow: ...") and are raised at the user's line; arguments are named, not numbered
 * (C argument numbers are off by one for methods and mean nothing to the user).
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ew_ops.h"
#include "half.h"
#include "lck.h"

// ---------------------------------------------------------------- errors and arguments of methods

/* Raise "where: <formatted>" at the user's line. */
static int arr_error(lua_State *L, const char *where, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *msg = lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  return ckl_raise_at_user(L, lua_pushfstring(L, "%s: %s", where, msg));
}

/* The core's message with its leading op name ("narrow: ...") replaced by `where`. */
static int arr_fail(lua_State *L, const char *where) {
  const char *m = ck_errmsg(CKL_CTX(L)), *p = m;
  while (isalnum((unsigned char)*p) || *p == '_') ++p;
  if (p > m && p[0] == ':' && p[1] == ' ') m = p + 2;
  return ckl_raise_at_user(L, lua_pushfstring(L, "%s: %s", where, m));
}

/* What a Lua value is, for messages: numbers and strings show their value. */
static const char *describe(lua_State *L, int i) {
  switch (lua_type(L, i)) {
  case LUA_TNUMBER: return lua_pushfstring(L, "%s", luaL_tolstring(L, i, NULL));
  case LUA_TSTRING: return lua_pushfstring(L, "\"%s\"", lua_tostring(L, i));
  default: return ckl_to_array(L, i) ? "a cukern array" : luaL_typename(L, i);
  }
}

/* The array a method is called on (stack index 1), live. */
static ck_tensor *self_array(lua_State *L, const char *where) {
  ck_tensor *t = ckl_op_array(L, 1); /* methods have the module state as upvalue 1 */
  if (!t) arr_error(L, where, "call it on a cukern array with a colon (%s(...)), not on %s", where, describe(L, 1));
  if (!t->st) arr_error(L, where, "the array was freed");
  return t;
}

/* A live array argument. */
static ck_tensor *arg_array(lua_State *L, int i, const char *where, const char *what) {
  ck_tensor *t = ckl_to_array(L, i);
  if (!t) arr_error(L, where, "%s must be a cukern array, got %s", what, describe(L, i));
  if (!t->st) arr_error(L, where, "%s is a freed array", what);
  return t;
}

static lua_Integer arg_int(lua_State *L, int i, const char *where, const char *what) {
  int ok;
  lua_Integer v = lua_tointegerx(L, i, &ok);
  if (!ok || lua_type(L, i) != LUA_TNUMBER) arr_error(L, where, "%s must be an integer, got %s", what, describe(L, i));
  return v;
}

/* A 1-based dim (negative counts from the end) -> 0-based. */
static int arg_dim(lua_State *L, int i, const ck_tensor *t, const char *where, const char *what) {
  lua_Integer d = arg_int(L, i, where, what), d0 = d;
  if (d < 0) d += t->ndim + 1;
  if (d < 1 || d > t->ndim) {
    if (t->ndim == 0) arr_error(L, where, "%s is %I but a 0-d array has no dims", what, d0);
    arr_error(L, where, "%s out of range: %I for a %d-D array (1..%d, or -%d..-1 from the end)", what, d0,
              t->ndim, t->ndim, t->ndim);
  }
  return (int)d - 1;
}

/* Shape tables print as {3, 4} (a metatable with __tostring; they stay plain sequences otherwise). */
static int seq_tostring(lua_State *L) {
  luaL_Buffer b;
  lua_Integer n = luaL_len(L, 1);
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '{');
  for (lua_Integer k = 1; k <= n; ++k) {
    if (k > 1) luaL_addstring(&b, ", ");
    lua_geti(L, 1, k);
    luaL_tolstring(L, -1, NULL);
    luaL_addvalue(&b);
    lua_pop(L, 1);
  }
  luaL_addchar(&b, '}');
  luaL_pushresult(&b);
  return 1;
}

static void push_seq(lua_State *L, int n, const int64_t *v) {
  ckl_push_shape(L, n, v);
  if (luaL_newmetatable(L, "cukern.seq")) {
    lua_pushcfunction(L, seq_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_setmetatable(L, -2);
}

// ---------------------------------------------------------------- creation

/* core.empty(shape, dtype, device) */
static int l_empty(lua_State *L) {
  int64_t shape[CK_MAX_DIMS];
  int n = ckl_check_shape(L, 1, shape);
  ck_dtype dt = lua_isnoneornil(L, 2) ? CK_F32 : ckl_check_dtype(L, 2);
  ck_device dev = ckl_check_device(L, 3);
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
  const ck_status st = ops[which] == CK_EW_FILL && lua_isinteger(L, 3) ? ck_ew_fill_int(CKL_CTX(L), t, lua_tointeger(L, 3))
                                                                      : ck_ew_generate(CKL_CTX(L), ops[which], t, s1, s2);
  if (st) return ckl_fail(L);
  lua_settop(L, 1);
  return 1;
}

/* core.check_writable(t): raises the one message of every write path if t is (part of) an expanded view */
static int l_check_writable(lua_State *L) {
  ck_tensor *t = ckl_check_array(L, 1);
  if (ck_check_live(CKL_CTX(L), "write", t) || ck_check_writable(CKL_CTX(L), "write", t)) return ckl_fail(L);
  return 0;
}

// ---------------------------------------------------------------- arrays -> tables (l_table.c converts)

static int m_totable(lua_State *L) {
  ck_tensor *t = self_array(L, "a:totable");
  int64_t n = ck_numel(t);
  void *buf = lua_newuserdatauv(L, (size_t)(n ? n : 1) * ck_dtype_size(t->dtype), 0);
  if (n && ck_read(CKL_CTX(L), t, buf)) return arr_fail(L, "a:totable");
  if (t->ndim == 0) {
    ckl_push_value(L, buf, t->dtype, 0);
    return 1;
  }
  int64_t pos = 0;
  luaL_checkstack(L, t->ndim + 4, "totable");
  ckl_build_table(L, t, buf, 0, &pos);
  return 1;
}

/* a:flat() -> flat Lua list of the values in logical order (used by tostring and specs) */
static int m_flat(lua_State *L) {
  ck_tensor *t = self_array(L, "a:flat");
  int64_t n = ck_numel(t);
  void *buf = lua_newuserdatauv(L, (size_t)(n ? n : 1) * ck_dtype_size(t->dtype), 0);
  if (n && ck_read(CKL_CTX(L), t, buf)) return arr_fail(L, "a:flat");
  lua_createtable(L, (int)n, 0);
  for (int64_t k = 0; k < n; ++k) {
    ckl_push_value(L, buf, t->dtype, k);
    lua_rawseti(L, -2, k + 1);
  }
  return 1;
}

static int m_item(lua_State *L) {
  ck_tensor *t = self_array(L, "a:item");
  if (ck_numel(t) != 1) {
    char sh[96];
    return arr_error(L, "a:item", "the array has %I elements (shape %s); item() needs exactly 1 (index one: a[{i, j}])",
                     (lua_Integer)ck_numel(t), ck_shape_str(t->ndim, t->shape, sh, sizeof sh));
  }
  double v[1];
  if (ck_read(CKL_CTX(L), t, v)) return arr_fail(L, "a:item");
  ckl_push_value(L, v, t->dtype, 0);
  return 1;
}

// ---------------------------------------------------------------- queries

static int m_shape(lua_State *L) {
  ck_tensor *t = self_array(L, "a:shape");
  push_seq(L, t->ndim, t->shape);
  return 1;
}
static int m_strides(lua_State *L) {
  ck_tensor *t = self_array(L, "a:strides");
  push_seq(L, t->ndim, t->stride);
  return 1;
}
static int m_size(lua_State *L) {
  ck_tensor *t = self_array(L, "a:size");
  if (lua_isnoneornil(L, 2)) {
    push_seq(L, t->ndim, t->shape);
    return 1;
  }
  lua_pushinteger(L, t->shape[arg_dim(L, 2, t, "a:size", "dim")]);
  return 1;
}
static int m_offset(lua_State *L) {
  lua_pushinteger(L, self_array(L, "a:offset")->offset);
  return 1;
}
static int m_dtype(lua_State *L) {
  lua_pushstring(L, ck_dtype_name(self_array(L, "a:dtype")->dtype));
  return 1;
}
static int m_numel(lua_State *L) {
  lua_pushinteger(L, ck_numel(self_array(L, "a:numel")));
  return 1;
}
static int m_ndim(lua_State *L) {
  lua_pushinteger(L, self_array(L, "a:ndim")->ndim);
  return 1;
}
static int m_device(lua_State *L) {
  ckl_push_device(L, ck_dev(self_array(L, "a:device")));
  return 1;
}
static int m_is_contiguous(lua_State *L) {
  lua_pushboolean(L, ck_is_contiguous(self_array(L, "a:is_contiguous")));
  return 1;
}
static int m_is_freed(lua_State *L) {
  ck_tensor *t = ckl_to_array(L, 1);
  if (!t) return arr_error(L, "a:is_freed", "call it on a cukern array with a colon, not on %s", describe(L, 1));
  lua_pushboolean(L, t->st == NULL);
  return 1;
}
/* Identity of the underlying storage (views of one array share it) and the storage's reference count. */
static int m_storage_id(lua_State *L) {
  ck_tensor *t = self_array(L, "a:storage_id");
  lua_pushfstring(L, "%p", (void *)t->st);
  lua_pushinteger(L, t->st->refs);
  return 2;
}
int ckl_array_len(lua_State *L) {
  ck_tensor *t = ckl_to_array(L, 1);
  if (t && !t->st) return arr_error(L, "#a", "the array was freed");
  if (!t) return arr_error(L, "#a", "not a cukern array");
  lua_pushinteger(L, t->ndim ? t->shape[0] : 1);
  return 1;
}

int ckl_array_release(lua_State *L) { /* __gc and __close */
  ck_tensor *t = ckl_to_array(L, 1);
  if (t) ck_release(t);
  return 0;
}

/* a:free(): idempotent on an array; anything else is a mistake (a.free(x) instead of a:free()) */
static int m_free(lua_State *L) {
  if (!ckl_to_array(L, 1))
    return luaL_error(L, "a:free: call it on a cukern array with a colon (a:free()), got %s", luaL_typename(L, 1));
  return ckl_array_release(L);
}

// ---------------------------------------------------------------- copies and views

static int m_clone(lua_State *L) {
  ck_tensor *t = self_array(L, "a:clone");
  ck_tensor *r = ckl_push_array(L);
  if (ck_empty_like(CKL_CTX(L), r, t) || ck_copy(CKL_CTX(L), r, t)) return arr_fail(L, "a:clone");
  ckl_gc_debt(L);
  return 1;
}

static int m_contiguous(lua_State *L) {
  ck_tensor *t = self_array(L, "a:contiguous");
  ck_tensor *r = ckl_push_array(L);
  if (ck_contiguous(CKL_CTX(L), r, t)) return arr_fail(L, "a:contiguous");
  ckl_gc_debt(L);
  return 1;
}

/* a:to(x [, y]) with x, y each a device or a dtype name; nil keeps that property (a:to(nil, "f64")) */
static int m_to(lua_State *L) {
  ck_tensor *t = self_array(L, "a:to");
  ck_device dev = ck_dev(t);
  ck_dtype dt = t->dtype;
  int ndev = 0, ndt = 0;
  char dts[96];
  ck_dtype_list(dts, sizeof dts);
  for (int i = 2; i <= 3; ++i) {
    if (lua_isnoneornil(L, i)) continue;
    if (lua_type(L, i) != LUA_TSTRING)
      return arr_error(L, "a:to", "argument %d must be a device (cuda, cuda:N, host) or a dtype (%s), got %s", i - 1,
                       dts, describe(L, i));
    const char *s = lua_tostring(L, i);
    if (ck_device_parse(s, ck_default_device(CKL_CTX(L)), &dev)) {
      ++ndev;
      if (ck_check_device(CKL_CTX(L), dev)) return arr_fail(L, "a:to");
    } else if (ck_dtype_parse(s, &dt)) ++ndt;
    else return arr_error(L, "a:to", "'%s' is neither a device (cuda, cuda:N, host) nor a dtype (%s)", s, dts);
  }
  if (lua_gettop(L) > 3) return arr_error(L, "a:to", "takes a device and/or a dtype, got %d arguments", lua_gettop(L) - 1);
  if (ndev > 1 || ndt > 1)
    return arr_error(L, "a:to", "two %s given; give at most one device and one dtype", ndev > 1 ? "devices" : "dtypes");
  if (ndev + ndt == 0) return arr_error(L, "a:to", "give a device (cuda, cuda:N, host) and/or a dtype (%s)", dts);
  ck_tensor *r = ckl_push_array(L);
  if (ck_to(CKL_CTX(L), r, t, dev, dt)) return arr_fail(L, "a:to");
  ckl_gc_debt(L);
  return 1;
}

static int m_copy_(lua_State *L) {
  ck_tensor *dst = self_array(L, "a:copy_"), *src = arg_array(L, 2, "a:copy_", "the source");
  ck_tensor *e = ckl_push_array(L); /* src broadcast to dst's shape */
  if (ck_view_expand(CKL_CTX(L), e, src, dst->ndim, dst->shape)) {
    char s1[96], s2[96];
    return arr_error(L, "a:copy_", "source %s cannot be broadcast to the destination %s",
                     ck_shape_str(src->ndim, src->shape, s1, sizeof s1), ck_shape_str(dst->ndim, dst->shape, s2, sizeof s2));
  }
  if (ck_copy(CKL_CTX(L), dst, e)) return arr_fail(L, "a:copy_");
  lua_settop(L, 1);
  return 1;
}

static int m_t(lua_State *L) {
  ck_tensor *t = self_array(L, "a:t");
  if (t->ndim != 2) {
    char sh[96];
    return arr_error(L, "a:t", "needs a 2-D array, got shape %s (use a:transpose(d1, d2) or a:permute)",
                     ck_shape_str(t->ndim, t->shape, sh, sizeof sh));
  }
  ck_tensor *r = ckl_push_array(L);
  if (ck_view_transpose(CKL_CTX(L), r, t, 0, 1)) return arr_fail(L, "a:t");
  return 1;
}

static int m_transpose(lua_State *L) {
  ck_tensor *t = self_array(L, "a:transpose");
  if (t->ndim < 2) return arr_error(L, "a:transpose", "needs at least 2 dims, got %d", t->ndim);
  int d1 = lua_isnoneornil(L, 2) ? t->ndim - 2 : arg_dim(L, 2, t, "a:transpose", "dim d1");
  int d2 = lua_isnoneornil(L, 3) ? t->ndim - 1 : arg_dim(L, 3, t, "a:transpose", "dim d2");
  ck_tensor *r = ckl_push_array(L);
  if (ck_view_transpose(CKL_CTX(L), r, t, d1, d2)) return arr_fail(L, "a:transpose");
  return 1;
}

static int m_permute(lua_State *L) {
  ck_tensor *t = self_array(L, "a:permute");
  int perm[CK_MAX_DIMS], n = lua_istable(L, 2) ? (int)luaL_len(L, 2) : lua_gettop(L) - 1;
  if (n != t->ndim) return arr_error(L, "a:permute", "%d dims given for a %d-D array", n, t->ndim);
  bool seen[CK_MAX_DIMS] = {false};
  for (int i = 0; i < n; ++i) {
    int k = 2 + i;
    if (lua_istable(L, 2)) {
      lua_geti(L, 2, i + 1);
      k = lua_gettop(L);
    }
    perm[i] = arg_dim(L, k, t, "a:permute", "dim");
    if (seen[perm[i]]) return arr_error(L, "a:permute", "dim %d is repeated", perm[i] + 1);
    seen[perm[i]] = true;
  }
  ck_tensor *r = ckl_push_array(L);
  if (ck_view_permute(CKL_CTX(L), r, t, perm)) return arr_fail(L, "a:permute");
  return 1;
}

/* a:narrow(dim, first [, last]) — inclusive, 1-based; first and last may be negative (from the end) */
static int m_narrow(lua_State *L) {
  ck_tensor *t = self_array(L, "a:narrow");
  int d = arg_dim(L, 2, t, "a:narrow", "dim");
  lua_Integer first = arg_int(L, 3, "a:narrow", "first");
  if (lua_isnoneornil(L, 4))
    return arr_error(L, "a:narrow", "takes (dim, first, last), inclusive; last is missing (a:select(dim, i) drops "
                                    "the dim, a:narrow(dim, i, i) keeps it)");
  lua_Integer last = arg_int(L, 4, "a:narrow", "last");
  lua_Integer n = t->shape[d], f = first < 0 ? first + n + 1 : first, l = last < 0 ? last + n + 1 : last;
  if (f < 1 || f > n + 1 || l < f - 1 || l > n)
    return arr_error(L, "a:narrow", "range %I..%I is out of bounds for dim %d (size %I)", first, last, d + 1, n);
  ck_tensor *r = ckl_push_array(L);
  if (ck_view_narrow(CKL_CTX(L), r, t, d, f - 1, l - f + 1)) return arr_fail(L, "a:narrow");
  return 1;
}

static int m_select(lua_State *L) {
  ck_tensor *t = self_array(L, "a:select");
  int d = arg_dim(L, 2, t, "a:select", "dim");
  lua_Integer i = arg_int(L, 3, "a:select", "index"), n = t->shape[d], j = i < 0 ? i + n + 1 : i;
  if (j < 1 || j > n) return arr_error(L, "a:select", "index %I is out of bounds for dim %d (size %I)", i, d + 1, n);
  ck_tensor *r = ckl_push_array(L);
  if (ck_view_select(CKL_CTX(L), r, t, d, j - 1)) return arr_fail(L, "a:select");
  return 1;
}

/* Dims from varargs or a table starting at index i (at most CK_MAX_DIMS). */
static int dims_args(lua_State *L, int i, int64_t *shape, const char *where) {
  bool tab = lua_istable(L, i) && !ckl_to_array(L, i);
  int n = tab ? (int)luaL_len(L, i) : lua_gettop(L) - i + 1;
  if (n > CK_MAX_DIMS) return arr_error(L, where, "%d dims requested, at most %d", n, CK_MAX_DIMS);
  for (int k = 0; k < n; ++k) {
    int at = i + k;
    if (tab) {
      lua_geti(L, i, k + 1);
      at = lua_gettop(L);
    }
    int ok;
    lua_Integer v = lua_tointegerx(L, at, &ok);
    if (!ok || lua_type(L, at) != LUA_TNUMBER)
      return arr_error(L, where, "dim %d must be an integer, got %s", k + 1, describe(L, at));
    shape[k] = v;
    if (tab) lua_pop(L, 1);
  }
  return n;
}

/* Shape for reshape/view; one -1 is inferred from numel. */
static int reshape_args(lua_State *L, int i, int64_t *shape, int64_t numel, const char *where) {
  int n = dims_args(L, i, shape, where), infer = -1;
  int64_t known = 1;
  for (int k = 0; k < n; ++k) {
    if (shape[k] == -1) {
      if (infer >= 0) return arr_error(L, where, "only one dim can be -1");
      infer = k;
    } else if (shape[k] < 0) {
      return arr_error(L, where, "dim %d is negative (%I)", k + 1, (lua_Integer)shape[k]);
    } else if (shape[k] > 0 && known > INT64_MAX / shape[k]) {
      return arr_error(L, where, "the shape's element count overflows (dim %d is %I)", k + 1, (lua_Integer)shape[k]);
    } else {
      known *= shape[k];
    }
  }
  if (infer >= 0) shape[infer] = known ? numel / known : 0;
  return n;
}

static int reshape_impl(lua_State *L, const char *where) {
  ck_tensor *t = self_array(L, where);
  int64_t shape[CK_MAX_DIMS];
  int n = reshape_args(L, 2, shape, ck_numel(t), where);
  ck_tensor *r = ckl_push_array(L);
  if (ck_view_reshape(CKL_CTX(L), r, t, n, shape)) return arr_fail(L, where);
  return 1;
}
static int m_reshape(lua_State *L) { return reshape_impl(L, "a:reshape"); }
static int m_view(lua_State *L) { return reshape_impl(L, "a:view"); }

/* a:expand(...) — size-1 dims stretch (stride 0); -1 keeps a dim's size; new leading dims may be added */
static int m_expand(lua_State *L) {
  ck_tensor *t = self_array(L, "a:expand");
  int64_t shape[CK_MAX_DIMS];
  int n = dims_args(L, 2, shape, "a:expand");
  for (int k = 0; k < n; ++k) {
    int j = k - (n - t->ndim);
    if (shape[k] == -1 && j >= 0) shape[k] = t->shape[j];
  }
  ck_tensor *r = ckl_push_array(L);
  if (ck_view_expand(CKL_CTX(L), r, t, n, shape)) return arr_fail(L, "a:expand");
  return 1;
}

static int m_fill(lua_State *L) {
  ck_tensor *t = self_array(L, "a:fill");
  int ok;
  double v = lua_tonumberx(L, 2, &ok);
  if (lua_isboolean(L, 2) && t->dtype == CK_BOOL) ok = 1, v = lua_toboolean(L, 2); /* bool arrays take booleans */
  else if (!ok || lua_type(L, 2) != LUA_TNUMBER)
    return arr_error(L, "a:fill", "value must be a number, got %s%s", describe(L, 2),
                     lua_isboolean(L, 2) ? " (booleans go into bool arrays)" : "");
  const ck_status st = lua_isinteger(L, 2) ? ck_ew_fill_int(CKL_CTX(L), t, lua_tointeger(L, 2))
                                           : ck_ew_generate(CKL_CTX(L), CK_EW_FILL, t, v, 0);
  if (st) return arr_fail(L, "a:fill");
  lua_settop(L, 1);
  return 1;
}


// ---------------------------------------------------------------- indexing

/* The array metatable's __index: a method (upvalue 1, the methods table) when there is one, else for a
 * number, table or array key the indexer written in Lua (upvalue 2: a[i], a[{...}]), else nil. In C because every
 * method call looks its method up here. */
static int array_index(lua_State *L) {
  lua_settop(L, 2);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  int kt = lua_type(L, 2);
  if (kt == LUA_TSTRING)
    return ckl_raise_at_user(L, lua_pushfstring(L, "a.%s: cukern arrays have no method or field '%s' (docs/api.md "
                                                   "lists them; a[i] and a[{...}] index the values)",
                                                lua_tostring(L, 2), lua_tostring(L, 2)));
  if (kt != LUA_TNUMBER && kt != LUA_TTABLE && kt != LUA_TUSERDATA)
    return ckl_raise_at_user(L, lua_pushfstring(L, "a[i]: cannot index a cukern array with a %s (a[i] takes an "
                                                   "integer, a[{...}] a table of indices and ranges)",
                                                luaL_typename(L, 2)));
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_call(L, 2, 1);
  return 1;
}

/* core.make_index(methods, indexer) -> the __index function above */
static int l_make_index(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  lua_pushcclosure(L, array_index, 2);
  return 1;
}

/* core.pair_view(z) / core.complex_view(r): a complex array as [..., 2] real pairs and back (issue 35) */
static int pair_or_complex(lua_State *L, bool to_complex) {
  ck_tensor *t = ckl_check_array(L, 1), *r = ckl_push_array(L);
  const ck_status st = to_complex ? ck_complex_view(CKL_CTX(L), r, t) : ck_pair_view(CKL_CTX(L), r, t);
  return st ? arr_fail(L, to_complex ? "ck.view_as_complex" : "ck.view_as_real") : 1;
}
static int l_pair_view(lua_State *L) { return pair_or_complex(L, false); }
static int l_complex_view(lua_State *L) { return pair_or_complex(L, true); }

/* core.promote(dtype, dtype) -> the result dtype of an elementwise op on two arrays (ck_promote) */
static int l_promote(lua_State *L) {
  ck_dtype a, b;
  if (!ck_dtype_parse(luaL_checkstring(L, 1), &a) || !ck_dtype_parse(luaL_checkstring(L, 2), &b))
    return luaL_error(L, "core.promote: unknown dtype");
  lua_pushstring(L, ck_dtype_name(ck_promote(a, b)));
  return 1;
}

const luaL_Reg ckl_array_funcs[] = {{"empty", l_empty}, {"generate", l_generate}, {"from_table", ckl_from_table},
                                    {"pair_view", l_pair_view}, {"complex_view", l_complex_view}, {"promote", l_promote},
                                    {"make_index", l_make_index}, {"check_writable", l_check_writable},
                                    {NULL, NULL}};

const luaL_Reg ckl_array_methods[] = {
    {"shape", m_shape}, {"size", m_size}, {"strides", m_strides}, {"offset", m_offset}, {"dtype", m_dtype},
    {"numel", m_numel}, {"ndim", m_ndim}, {"device", m_device}, {"is_contiguous", m_is_contiguous},
    {"is_freed", m_is_freed}, {"storage_id", m_storage_id}, {"totable", m_totable}, {"flat", m_flat},
    {"item", m_item}, {"clone", m_clone}, {"contiguous", m_contiguous}, {"to", m_to}, {"copy_", m_copy_},
    {"free", m_free}, {"fill", m_fill}, {"t", m_t}, {"transpose", m_transpose}, {"permute", m_permute},
    {"narrow", m_narrow}, {"select", m_select}, {"reshape", m_reshape}, {"view", m_view},
    {"expand", m_expand}, {NULL, NULL}};
