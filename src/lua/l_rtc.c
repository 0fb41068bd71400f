/*
 * l_rtc.c — run-time kernels: CUDA C++ source compiled by NVRTC, launched with arrays and numbers (ck.kernel),
 * their introspection (also the fused kernels'), compiling without loading (ck.kernel_build), the disk cache
 * (ck.cache_dir) and the header every program sees (ck.kernel_header).
 *
 * Signature types: "f32*" (a plain pointer: the array must be contiguous and of that dtype, never
 * reinterpreted), "void*", numbers "f32" "f64" "i32" "i64" "u32", and array descriptors "f32[]" /
 * "const f32[]": the kernel takes CkArray<float> (cukern.h, pre-included) with pointer, numel, ndim, shape
 * and strides, so it can index any strided view. Launches are checked against the kernel's and the device's
 * limits first; k:info() reports registers, shared/local memory and occupancy, k:ptx() the PTX.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_map.h"
#include "lck.h"

// ---------------------------------------------------------------- run-time kernels

enum { KA_PTR, KA_F32, KA_F64, KA_I32, KA_I64, KA_U32, KA_DESC };

/* The layout of CkArray<T> in cukern.h (rtc.c). */
typedef struct {
  void *data;
  int64_t numel;
  int32_t ndim, pad;
  int64_t shape[CK_MAX_DIMS];
  int64_t strides[CK_MAX_DIMS];
} ckl_desc;
typedef struct {
  ck_rtc_kernel *k;
  int nargs;
  int kind[32];
  int dtype[32]; /* for pointers: the dtype they must point at, -1 = any (void*) */
  char name[64];
} lkernel;

static int parse_argtype(const char *s, int *kind, int *dt) {
  while (*s == ' ') ++s;
  if (strncmp(s, "const ", 6) == 0) s += 6;
  size_t n = strlen(s);
  while (n && s[n - 1] == ' ') --n;
  char t[16];
  if (n == 0 || n >= sizeof t) return 0;
  memcpy(t, s, n);
  t[n] = 0;
  *dt = -1;
  if (n > 2 && t[n - 2] == '[' && t[n - 1] == ']') {
    t[n - 2] = 0;
    ck_dtype d;
    if (!ck_dtype_parse(t, &d)) return 0;
    *kind = KA_DESC;
    *dt = d;
    return 1;
  }
  if (t[n - 1] == '*') {
    t[n - 1] = 0;
    *kind = KA_PTR;
    if (strcmp(t, "void") == 0) return 1;
    ck_dtype d;
    if (!ck_dtype_parse(t, &d)) return 0;
    *dt = d;
    return 1;
  }
  static const struct {
    const char *n;
    int k;
  } S[] = {{"f32", KA_F32}, {"float", KA_F32}, {"f64", KA_F64}, {"double", KA_F64}, {"i32", KA_I32},
           {"int", KA_I32}, {"i64", KA_I64}, {"int64", KA_I64}, {"u32", KA_U32}, {"unsigned", KA_U32}};
  for (size_t i = 0; i < sizeof S / sizeof *S; ++i)
    if (strcmp(t, S[i].n) == 0) {
      *kind = S[i].k;
      return 1;
    }
  return 0;
}

// ---------------------------------------------------------------- entry names

/* C++ keywords a kernel cannot be called (the ones a name expression could trip over). */
static bool is_keyword(const char *s, size_t n) {
  static const char *const K[] = {
      "alignas", "alignof", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const", "constexpr",
      "const_cast", "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
      "explicit", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable",
      "namespace", "new", "noexcept", "nullptr", "operator", "private", "protected", "public", "register",
      "reinterpret_cast", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned",
      "using", "virtual", "void", "volatile", "while", NULL};
  for (const char *const *k = K; *k; ++k)
    if (strlen(*k) == n && !memcmp(*k, s, n)) return true;
  return false;
}

/* The name expressions rtc.c hands to nvrtcAddNameExpression that name a kernel: [::]id(::id)* and an
 * optional template argument list <...> at the end (types, numbers, nested <>). Checked up front so that a
 * typo is reported as a bad name, not as NVRTC's "extra tokens found after parsing name expression". */
static bool entry_ok(const char *s) {
  const char *p = s;
  if (p[0] == ':' && p[1] == ':') p += 2;
  for (;;) {
    const char *id = p;
    if (!(isalpha((unsigned char)*p) || *p == '_')) return false;
    while (isalnum((unsigned char)*p) || *p == '_') ++p;
    if (is_keyword(id, (size_t)(p - id))) return false;
    if (p[0] == ':' && p[1] == ':') {
      p += 2;
      continue;
    }
    break;
  }
  if (!*p) return true;
  if (*p != '<') return false;
  int depth = 0;
  for (; *p; ++p) {
    if (*p == '<') ++depth;
    else if (*p == '>') {
      if (--depth == 0) return p[1] == 0; /* the list ends the name */
    } else if (!(isalnum((unsigned char)*p) || strchr("_ ,:*&+-.()", *p))) return false;
  }
  return false; /* unclosed */
}

static const char *check_entry(lua_State *L, int idx) {
  const char *e = ckl_check_text(L, idx, "the entry name");
  if (!e) luaL_argerror(L, idx, "the entry point's name must be a string");
  if (!entry_ok(e))
    luaL_error(L, "entry \"%s\" is not a kernel name (an identifier such as axpy, optionally qualified as "
                  "ns::axpy and with template arguments as scale<float, 3>)", e);
  return e;
}

// ---------------------------------------------------------------- run-time kernels (launch)

/* core.kernel(src, entry, {argtypes...} [, options]) */
static int l_kernel(lua_State *L) {
  luaL_checkstring(L, 1);
  luaL_checkstring(L, 2);
  const char *src = ckl_check_text(L, 1, "the source"), *entry = check_entry(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  luaL_optstring(L, 4, NULL);
  const char *opts = ckl_check_text(L, 4, "the options");
  lkernel *k = (lkernel *)lua_newuserdatauv(L, sizeof(lkernel), 0);
  memset(k, 0, sizeof *k);
  luaL_setmetatable(L, KERNEL_MT);
  k->nargs = (int)luaL_len(L, 3);
  if (k->nargs > 32) return luaL_argerror(L, 3, "at most 32 kernel arguments");
  for (int i = 0; i < k->nargs; ++i) {
    lua_geti(L, 3, i + 1);
    const char *ts = ckl_check_text(L, -1, "a signature's type");
    if (!ts || !parse_argtype(ts, &k->kind[i], &k->dtype[i]))
      return luaL_argerror(L, 3, lua_pushfstring(L, "argument %d: unknown type '%s' (f32*, f64*, i32*, void*, f32[], f64[], i32[], f32, f64, i32, i64, u32)", i + 1, ts ? ts : "?"));
    lua_pop(L, 1);
  }
  snprintf(k->name, sizeof k->name, "%s", entry);
  char *log = NULL;
  ck_status st = ck_rtc_compile(CKL_CTX(L), src, entry, opts, &k->k, &log);
  free(log);
  if (st) return ckl_fail(L);
  return 1;
}

static int k_gc(lua_State *L) {
  lkernel *k = (lkernel *)luaL_checkudata(L, 1, KERNEL_MT);
  ck_rtc_free(k->k);
  k->k = NULL;
  return 0;
}

static void dims3(lua_State *L, int i, unsigned d[3], const char *what) {
  d[0] = d[1] = d[2] = 1;
  if (lua_isinteger(L, i)) {
    lua_Integer v = lua_tointeger(L, i);
    if (v < 1 || v > 0x7fffffff) luaL_argerror(L, i, lua_pushfstring(L, "%s must be >= 1", what));
    d[0] = (unsigned)v;
    return;
  }
  luaL_checktype(L, i, LUA_TTABLE);
  int n = (int)luaL_len(L, i);
  if (n < 1 || n > 3) luaL_argerror(L, i, lua_pushfstring(L, "%s: 1 to 3 dims", what));
  for (int k = 0; k < n; ++k) {
    lua_geti(L, i, k + 1);
    lua_Integer v = luaL_checkinteger(L, -1);
    if (v < 1 || v > 0x7fffffff) luaL_argerror(L, i, lua_pushfstring(L, "%s must be >= 1", what));
    d[k] = (unsigned)v;
    lua_pop(L, 1);
  }
}

/* k:launch(grid, block, args... [, {smem = bytes}]) */
/* Every array argument of one launch is on one device (the kernel runs there); false after raising. */
static bool same_device(lua_State *L, int ai, const ck_tensor *t, ck_device *dev, bool *have) {
  if (*have && !ck_dev_eq(*dev, ck_dev(t))) {
    luaL_argerror(L, ai, lua_pushfstring(L, "is on %s, earlier array arguments on %s (a kernel runs on one device; move "
                                            "it with :to(\"%s\"))", ck_device_name(ck_dev(t)).s, ck_device_name(*dev).s,
                                         ck_device_name(*dev).s));
    return false;
  }
  *dev = ck_dev(t), *have = true;
  return true;
}

static int k_launch(lua_State *L) {
  lkernel *k = (lkernel *)luaL_checkudata(L, 1, KERNEL_MT);
  if (!k->k) return luaL_error(L, "kernel '%s' was released", k->name);
  unsigned g[3], b[3];
  dims3(L, 2, g, "grid");
  dims3(L, 3, b, "block");
  int top = lua_gettop(L);
  size_t smem = 0;
  if (top > 3 && lua_istable(L, top) && !ckl_to_array(L, top)) {
    lua_getfield(L, top, "smem");
    smem = (size_t)luaL_optinteger(L, -1, 0);
    lua_pop(L, 1);
    --top;
  }
  int given = top - 3;
  if (given != k->nargs)
    return luaL_error(L, "kernel '%s': %d arguments given, its signature has %d", k->name, given, k->nargs);
  union {
    void *p;
    float f;
    double d;
    int32_t i;
    int64_t l;
    uint32_t u;
  } vals[32];
  void *args[32];
  ckl_desc descs[32];
  ck_device dev = {CK_CUDA, 0};
  bool have_dev = false;
  for (int i = 0; i < k->nargs; ++i) {
    int ai = 4 + i;
    switch (k->kind[i]) {
    case KA_PTR: {
      ck_tensor *t = ckl_check_array(L, ai);
      if (!ck_on_cuda(t)) return luaL_argerror(L, ai, "kernel arguments must be cuda arrays");
      if (!same_device(L, ai, t, &dev, &have_dev)) return 0;
      if (ck_stream_touch(CKL_CTX(L), "k:launch", t)) return ckl_fail(L); /* (streams: its use, the hazard check) */
      if (!ck_is_contiguous(t))
        return luaL_argerror(L, ai, "kernel arguments must be contiguous (a kernel sees a plain pointer; call :contiguous())");
      if (k->dtype[i] >= 0 && (int)t->dtype != k->dtype[i])
        return luaL_argerror(L, ai, lua_pushfstring(L, "expected a %s array, got %s (a pointer is never reinterpreted; "
                                                    "convert with :to(\"%s\"))", ck_dtype_name((ck_dtype)k->dtype[i]),
                                                    ck_dtype_name(t->dtype), ck_dtype_name((ck_dtype)k->dtype[i])));
      vals[i].p = ck_data(t);
      break;
    }
    case KA_DESC: {
      ck_tensor *t = ckl_check_array(L, ai);
      if (!ck_on_cuda(t)) return luaL_argerror(L, ai, "kernel arguments must be cuda arrays");
      if (!same_device(L, ai, t, &dev, &have_dev)) return 0;
      if (ck_stream_touch(CKL_CTX(L), "k:launch", t)) return ckl_fail(L);
      if ((int)t->dtype != k->dtype[i])
        return luaL_argerror(L, ai, lua_pushfstring(L, "kernel '%s': expected a %s array, got %s", k->name,
                                                    ck_dtype_name((ck_dtype)k->dtype[i]), ck_dtype_name(t->dtype)));
      ckl_desc *d = &descs[i];
      memset(d, 0, sizeof *d);
      d->data = ck_data(t);
      d->numel = ck_numel(t);
      d->ndim = t->ndim;
      for (int j = 0; j < t->ndim; ++j) d->shape[j] = t->shape[j], d->strides[j] = t->stride[j];
      args[i] = d;
      continue;
    }
    case KA_F32: vals[i].f = (float)luaL_checknumber(L, ai); break;
    case KA_F64: vals[i].d = luaL_checknumber(L, ai); break;
    case KA_I32: vals[i].i = (int32_t)luaL_checkinteger(L, ai); break;
    case KA_I64: vals[i].l = (int64_t)luaL_checkinteger(L, ai); break;
    case KA_U32: vals[i].u = (uint32_t)luaL_checkinteger(L, ai); break;
    }
    args[i] = &vals[i];
  }
  /* the kernel runs on its arrays' device (the default device when it takes none) */
  if (ck_use_device(CKL_CTX(L), have_dev ? dev : ck_default_device(CKL_CTX(L)))) return ckl_fail(L);
  if (ck_rtc_check_launch(CKL_CTX(L), k->k, g, b, smem)) return ckl_fail(L);
  if (ck_rtc_launch(CKL_CTX(L), k->k, g, b, smem, args)) return ckl_fail(L);
  ck_ran r; /* ck.last_ran(): this kernel, at the block it launched with (cached in the kernel: cheap) */
  ck_kinfo info;
  memset(&r, 0, sizeof r);
  r.id = -1;
  r.gpu = true;
  snprintf(r.name, sizeof r.name, "kernel");
  snprintf(r.note, sizeof r.note, "run-time kernel '%s'", k->name);
  if (ck_rtc_info_get(CKL_CTX(L), k->k, (int)(b[0] * b[1] * b[2]), smem, &info)) return ckl_fail(L);
  ckl_set_last_user(L, &r, &info);
  return 0;
}

/* k:info([block [, smem]]) -> {registers, static_smem, dynamic_smem, local_bytes, max_threads, occupancy, ...} */
static int k_info(lua_State *L) {
  lkernel *k = (lkernel *)luaL_checkudata(L, 1, KERNEL_MT);
  if (!k->k) return luaL_error(L, "kernel '%s' was released", k->name);
  int block = (int)luaL_optinteger(L, 2, 256);
  size_t smem = (size_t)luaL_optinteger(L, 3, 0);
  ckl_push_kernel_info(L, k->k, block, smem);
  return 1;
}

static int k_ptx(lua_State *L) {
  lkernel *k = (lkernel *)luaL_checkudata(L, 1, KERNEL_MT);
  if (!k->k) return luaL_error(L, "kernel '%s' was released", k->name);
  const char *p = ck_rtc_ptx(k->k);
  if (p) lua_pushstring(L, p);
  else lua_pushnil(L);
  return 1;
}


// ---------------------------------------------------------------- introspection

void ckl_push_kernel_info(lua_State *L, ck_rtc_kernel *k, int block, size_t smem) {
  ck_kinfo in;
  if (ck_rtc_info_get(CKL_CTX(L), k, block, smem, &in)) ckl_fail(L);
  ckl_push_kinfo(L, &in); /* the built-in kernels' record, plus where it runs and its PTX */
  lua_pushstring(L, "cuda");
  lua_setfield(L, -2, "device");
  const char *ptx = ck_rtc_ptx(k);
  if (ptx) {
    lua_pushstring(L, ptx);
    lua_setfield(L, -2, "ptx");
  }
}

// ---------------------------------------------------------------- compile only, and the disk cache

/* ck.kernel_build(src, entry [, {arch = "sm_90", options = "..."}]) -> {key, cache, arch, cubin_bytes, ptx,
 * lowered, log, compile_ms}. Compiles (through the disk cache) without loading: works without a GPU. */
static int l_kernel_build(lua_State *L) {
  luaL_checkstring(L, 1);
  luaL_checkstring(L, 2);
  const char *src = ckl_check_text(L, 1, "the source"), *entry = check_entry(L, 2);
  const char *arch = NULL, *opts = NULL;
  if (!lua_isnoneornil(L, 3)) {
    static const char *const known[] = {"arch", "options", NULL};
    ckl_check_opts(L, 3, "kernel_build", known);
    lua_getfield(L, 3, "arch");
    arch = ckl_check_text(L, -1, "arch");
    lua_getfield(L, 3, "options");
    if (lua_istable(L, -1)) {
      luaL_Buffer b;
      int t = lua_gettop(L);
      luaL_buffinit(L, &b);
      for (lua_Integer i = 1, n = luaL_len(L, t); i <= n; ++i) {
        lua_geti(L, t, i);
        luaL_addvalue(&b);
        if (i < n) luaL_addchar(&b, ' ');
      }
      luaL_pushresult(&b);
    }
    opts = ckl_check_text(L, -1, "options");
  }
  ck_rtc_image img;
  if (ck_rtc_build(CKL_CTX(L), src, entry, opts, arch, &img)) return ckl_fail(L);
  lua_createtable(L, 0, 8);
  lua_pushstring(L, img.key);
  lua_setfield(L, -2, "key");
  lua_pushstring(L, img.cache);
  lua_setfield(L, -2, "cache");
  lua_pushstring(L, img.arch);
  lua_setfield(L, -2, "arch");
  lua_pushinteger(L, (lua_Integer)img.cubin_size);
  lua_setfield(L, -2, "cubin_bytes");
  lua_pushnumber(L, img.compile_ms);
  lua_setfield(L, -2, "compile_ms");
  lua_pushstring(L, img.lowered);
  lua_setfield(L, -2, "lowered");
  if (img.ptx) {
    lua_pushstring(L, img.ptx);
    lua_setfield(L, -2, "ptx");
  }
  if (img.log && img.log[0]) {
    lua_pushstring(L, img.log);
    lua_setfield(L, -2, "log");
  }
  ck_rtc_image_free(&img);
  return 1;
}

/* ck.cache_dir([dir]) -> the directory in use ("" = no disk cache). dir: a path, "off", or false (back to
 * CUKERN_CACHE_DIR / the default). */
static int l_cache_dir(lua_State *L) {
  if (lua_gettop(L) >= 1) {
    if (lua_isstring(L, 1)) ck_rtc_set_cache_dir(lua_tostring(L, 1));
    else if (!lua_toboolean(L, 1)) ck_rtc_set_cache_dir(NULL);
    else return luaL_argerror(L, 1, "a directory, \"off\", or false");
  }
  char buf[1024];
  lua_pushstring(L, ck_rtc_cache_dir(CKL_CTX(L), buf, sizeof buf));
  return 1;
}

/* ck.kernel_header() -> the source of cukern.h (pre-included in every run-time kernel) */
static int l_kernel_header(lua_State *L) {
  lua_pushstring(L, ck_rtc_header());
  return 1;
}

void ckl_rtc_init(lua_State *L) {
  static const luaL_Reg KM[] = {{"launch", k_launch}, {"info", k_info}, {"ptx", k_ptx}, {NULL, NULL}};
  ckl_new_class(L, KERNEL_MT, k_gc, KM);
}

const luaL_Reg ckl_rtc_funcs[] = {{"kernel", l_kernel},
                                  {"kernel_build", l_kernel_build},
                                  {"cache_dir", l_cache_dir},
                                  {"kernel_header", l_kernel_header},
                                  {NULL, NULL}};
