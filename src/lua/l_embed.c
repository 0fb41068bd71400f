/*
 * l_embed.c — the C API for applications that embed Lua and cukern (src/cukern.h): push an application's
 * buffer as an array without copying it (released through the application's callback), read an array back.
 */
#include "cukern.h"

#include <stdio.h>

#include "lck.h"

_Static_assert((int)CUKERN_F32 == (int)CK_F32 && (int)CUKERN_F64 == (int)CK_F64 && (int)CUKERN_I32 == (int)CK_I32,
               "cukern.h's dtypes are cukern's own");
_Static_assert((int)CUKERN_BOOL == (int)CK_BOOL && (int)CUKERN_U8 == (int)CK_U8 && (int)CUKERN_I8 == (int)CK_I8 &&
                   (int)CUKERN_I16 == (int)CK_I16 && (int)CUKERN_U32 == (int)CK_U32 && (int)CUKERN_I64 == (int)CK_I64,
               "cukern.h's dtypes are cukern's own (issue 32)");
_Static_assert((int)CUKERN_C64 == (int)CK_C64 && (int)CUKERN_C128 == (int)CK_C128, "cukern.h's dtypes (issue 35)");
_Static_assert((int)CUKERN_HOST == (int)CK_HOST && (int)CUKERN_CUDA == (int)CK_CUDA, "cukern.h's devices");
_Static_assert(CUKERN_MAX_DIMS == CK_MAX_DIMS, "cukern.h's CUKERN_MAX_DIMS");

int luaopen_cukern_core(lua_State *L);

int cukern_open(lua_State *L) {
  luaL_requiref(L, "cukern.core", luaopen_cukern_core, 0);
  return 1;
}

/* L's module state (loading the module first if the application has not): the upvalue every module
 * function shares. */
static ckl_modstate *modstate(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, "cukern.core.module") != LUA_TTABLE) {
    lua_pop(L, 1);
    cukern_open(L);
  }
  lua_getfield(L, -1, "empty");
  lua_getupvalue(L, -1, 1);
  ckl_modstate *ms = (ckl_modstate *)lua_touserdata(L, -1);
  lua_pop(L, 3);
  return ms;
}

static int fail(lua_State *L, int code, const char *fmt, const char *detail) {
  lua_pushfstring(L, fmt, detail);
  return code;
}

static bool known_dtype(cukern_dtype dt) {
  return dt == CUKERN_F32 || dt == CUKERN_F64 || dt == CUKERN_I32 || (dt >= CUKERN_BOOL && dt <= CUKERN_C128);
}

int cukern_push_buffer(lua_State *L, void *data, cukern_dtype dt, int ndim, const int64_t *shape, cukern_device dev,
                       cukern_release_fn release, void *ud) {
  return cukern_push_buffer_on(L, data, dt, ndim, shape, dev, 0, release, ud);
}

int cukern_push_buffer_on(lua_State *L, void *data, cukern_dtype dt, int ndim, const int64_t *shape, cukern_device dev,
                          int ordinal, cukern_release_fn release, void *ud) {
  ckl_modstate *ms = modstate(L);
  if (!ms || !ms->ctx) return fail(L, CUKERN_ERR_CORE, "cukern_push_buffer: %s", "the cukern module was closed");
  if (!known_dtype(dt)) return fail(L, CUKERN_ERR_ARG, "cukern_push_buffer: %s", "unknown dtype");
  if (dev != CUKERN_HOST && dev != CUKERN_CUDA) return fail(L, CUKERN_ERR_ARG, "cukern_push_buffer: %s", "unknown device");
  if (ndim < 0 || ndim > CK_MAX_DIMS || (ndim > 0 && !shape))
    return fail(L, CUKERN_ERR_ARG, "cukern_push_buffer: %s", "ndim must be 0..8, with a shape for ndim > 0");
  if (dev == CUKERN_CUDA && !ck_has_cuda(ms->ctx))
    return fail(L, CUKERN_ERR_DEVICE, "cukern_push_buffer: %s", "a CUDA buffer, but cukern runs on the host here");
  if (ck_check_device(ms->ctx, ck_device_make((ck_devkind)dev, ordinal)))
    return fail(L, CUKERN_ERR_DEVICE, "cukern_push_buffer: %s", ck_errmsg(ms->ctx));
  if (ck_check_shape(ms->ctx, "cukern_push_buffer", ndim, shape, (ck_dtype)dt))
    return fail(L, CUKERN_ERR_ARG, "%s", ck_errmsg(ms->ctx));
  int64_t n = 1;
  for (int k = 0; k < ndim; ++k) n *= shape[k];
  if (!data && n > 0) return fail(L, CUKERN_ERR_ARG, "cukern_push_buffer: %s", "data is NULL");
  /* the userdata first: if Lua runs out of memory here, nothing has been taken over yet */
  ck_tensor *t = ckl_push_array(L);
  ck_storage *st;
  if (ck_storage_wrap(ms->ctx, ck_device_make((ck_devkind)dev, ordinal), data, (size_t)n * ck_dtype_size((ck_dtype)dt), release, ud, &st)) {
    lua_pop(L, 1);
    return fail(L, CUKERN_ERR_CORE, "cukern_push_buffer: %s", ck_errmsg(ms->ctx));
  }
  t->st = st;
  t->dtype = (ck_dtype)dt;
  ck_set_contiguous(t, ndim, shape);
  t->offset = 0;
  return CUKERN_OK;
}

int cukern_info(lua_State *L, int idx, int *ndim, int64_t *shape, cukern_dtype *dt, cukern_device *dev) {
  ck_tensor *t = ckl_to_array(L, idx);
  if (!t) return fail(L, CUKERN_ERR_ARG, "cukern_info: the value is a %s, not a cukern array", luaL_typename(L, idx));
  if (!t->st) return fail(L, CUKERN_ERR_ARG, "cukern_info: %s", "the array was freed");
  if (ndim) *ndim = t->ndim;
  if (shape)
    for (int k = 0; k < t->ndim; ++k) shape[k] = t->shape[k];
  if (dt) *dt = (cukern_dtype)t->dtype;
  if (dev) *dev = (cukern_device)ck_dev(t).kind;
  return CUKERN_OK;
}

int cukern_device_ordinal(lua_State *L, int idx, int *ordinal) {
  ck_tensor *t = ckl_to_array(L, idx);
  if (!t) return fail(L, CUKERN_ERR_ARG, "cukern_device_ordinal: the value is a %s, not a cukern array", luaL_typename(L, idx));
  if (!t->st) return fail(L, CUKERN_ERR_ARG, "cukern_device_ordinal: %s", "the array was freed");
  if (ordinal) *ordinal = ck_dev(t).index;
  return CUKERN_OK;
}

int cukern_read(lua_State *L, int idx, void *buf, size_t bytes, cukern_dtype dt) {
  idx = lua_absindex(L, idx);
  ckl_modstate *ms = modstate(L);
  if (!ms || !ms->ctx) return fail(L, CUKERN_ERR_CORE, "cukern_read: %s", "the cukern module was closed");
  ck_tensor *t = ckl_to_array(L, idx);
  if (!t) return fail(L, CUKERN_ERR_ARG, "cukern_read: the value is a %s, not a cukern array", luaL_typename(L, idx));
  if (!t->st) return fail(L, CUKERN_ERR_ARG, "cukern_read: %s", "the array was freed");
  if (!known_dtype(dt)) return fail(L, CUKERN_ERR_ARG, "cukern_read: %s", "unknown dtype");
  size_t need = (size_t)ck_numel(t) * ck_dtype_size((ck_dtype)dt);
  if (bytes < need) {
    char msg[160];
    snprintf(msg, sizeof msg, "the buffer holds %zu bytes, the array needs %zu", bytes, need);
    return fail(L, CUKERN_ERR_ARG, "cukern_read: %s", msg);
  }
  if (need == 0) return CUKERN_OK;
  /* a contiguous host array of dtype dt over buf; ck_copy converts and moves across devices */
  ck_storage *st;
  if (ck_storage_wrap(ms->ctx, CK_DEV_HOST, buf, need, NULL, NULL, &st))
    return fail(L, CUKERN_ERR_CORE, "cukern_read: %s", ck_errmsg(ms->ctx));
  ck_tensor w = {0};
  w.st = st;
  w.dtype = (ck_dtype)dt;
  ck_set_contiguous(&w, t->ndim, t->shape);
  ck_status s = ck_copy(ms->ctx, &w, t);
  if (!s) s = ck_synchronize_device(ms->ctx, ck_dev(t));
  ck_release(&w);
  if (s) return fail(L, CUKERN_ERR_CORE, "cukern_read: %s", ck_errmsg(ms->ctx));
  return CUKERN_OK;
}

int cukern_has_cuda(lua_State *L) {
  ckl_modstate *ms = modstate(L);
  return ms && ms->ctx && ck_has_cuda(ms->ctx);
}
