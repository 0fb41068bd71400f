/*
 * l_dlpack.c — the embedding C API's second half (src/cukern.h, issue 36): DLPack import and export of
 * DLManagedTensor, an application's CUDA stream shared with a Lua state (cukern_set_stream), and page-locking of an
 * application's buffer (cukern_pin_buffer).
 *
 * Import wraps the tensor's memory without a copy (any NumPy-style strides >= 0, byte_offset included); the
 * DLManagedTensor's deleter runs once, when the last array or view over it goes. Export hands out the array's own
 * memory (shape, strides and offset as they are) with a reference on its storage, which the deleter drops; the
 * writes issued on the array are finished when cukern_to_dlpack returns (it waits for the stream that wrote it).
 * DLPack's header (Debian's libdlpack-dev) is found at build time (mk/dlpack.mk); without it these functions say so.
 */
#include "cukern.h"

#include <stdio.h>
#include <stdlib.h>

#include "lck.h"

static int fail(lua_State *L, int code, const char *what, const char *detail) {
  lua_pushfstring(L, "%s: %s", what, detail);
  return code;
}

/* L's module state, when cukern is loaded and open in it (cukern_open first). */
static ckl_modstate *open_state(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, "cukern.core.module") != LUA_TTABLE) {
    lua_pop(L, 1);
    return NULL;
  }
  lua_getfield(L, -1, "empty");
  lua_getupvalue(L, -1, 1);
  ckl_modstate *ms = (ckl_modstate *)lua_touserdata(L, -1);
  lua_pop(L, 3);
  return ms && ms->ctx ? ms : NULL;
}

// ---------------------------------------------------------------- streams and pinned buffers

int cukern_set_stream(lua_State *L, int ordinal, void *cuda_stream) {
  ckl_modstate *ms = open_state(L);
  if (!ms) return fail(L, CUKERN_ERR_CORE, "cukern_set_stream", "cukern is not open in this state (cukern_open)");
  ck_ctx *ctx = ms->ctx;
  const ck_device dev = ck_device_make(CK_CUDA, ordinal);
  if (!ck_has_cuda(ctx) || ck_check_device(ctx, dev))
    return fail(L, CUKERN_ERR_DEVICE, "cukern_set_stream", ck_has_cuda(ctx) ? ck_errmsg(ctx) : "no CUDA device here");
  ck_stream *cur = ck_stream_current(ctx, dev), *s = NULL;
  if (!cur) return fail(L, CUKERN_ERR_CORE, "cukern_set_stream", ck_errmsg(ctx));
  if (cuda_stream && ck_stream_handle(cur) == cuda_stream) return CUKERN_OK;
  if (cuda_stream && ck_stream_borrow(ctx, dev, cuda_stream, &s))
    return fail(L, CUKERN_ERR_CORE, "cukern_set_stream", ck_errmsg(ctx));
  /* the app's stream is ordered after cukern's own work so far (ck_stream_enter); a borrowed one set before is given
   * back (synchronised first) */
  if ((s ? ck_stream_enter(ctx, s) : ck_stream_set_current(ctx, ck_stream_own(ctx, dev))))
    return fail(L, CUKERN_ERR_CORE, "cukern_set_stream", ck_errmsg(ctx));
  if (ck_stream_borrowed(cur)) ck_stream_free(ctx, cur);
  return CUKERN_OK;
}

int cukern_pin_buffer(lua_State *L, int idx) {
  ckl_modstate *ms = open_state(L);
  ck_tensor *t = ckl_to_array(L, idx);
  if (!ms) return fail(L, CUKERN_ERR_CORE, "cukern_pin_buffer", "cukern is not open in this state (cukern_open)");
  if (!t || !t->st) return fail(L, CUKERN_ERR_ARG, "cukern_pin_buffer", "not a live cukern array");
  if (!t->st->release) return fail(L, CUKERN_ERR_ARG, "cukern_pin_buffer", "the array is not over an application's buffer");
  if (ck_storage_register(ms->ctx, t->st)) return fail(L, CUKERN_ERR_CORE, "cukern_pin_buffer", ck_errmsg(ms->ctx));
  return CUKERN_OK;
}

// ---------------------------------------------------------------- DLPack

#ifdef CK_HAVE_DLPACK
#include <dlpack/dlpack.h>

/* cukern's dtypes as DLPack's (code, bits); bool is DLPack 0.8's kDLBool (6), 8 bits; complex as interleaved pairs. */
static const struct {
  ck_dtype dt;
  uint8_t code, bits;
} DT[] = {{CK_F32, kDLFloat, 32}, {CK_F64, kDLFloat, 64},  {CK_F16, kDLFloat, 16}, {CK_BF16, kDLBfloat, 16},
          {CK_I32, kDLInt, 32},   {CK_I64, kDLInt, 64},    {CK_I16, kDLInt, 16},   {CK_I8, kDLInt, 8},
          {CK_U8, kDLUInt, 8},    {CK_U32, kDLUInt, 32},   {CK_BOOL, 6, 8},        {CK_C64, kDLComplex, 64},
          {CK_C128, kDLComplex, 128}};

static bool dt_from(DLDataType d, ck_dtype *out) {
  for (size_t i = 0; i < sizeof DT / sizeof *DT; ++i)
    if (DT[i].code == d.code && DT[i].bits == d.bits && d.lanes == 1) return *out = DT[i].dt, true;
  return false;
}

static bool dt_to(ck_dtype dt, DLDataType *out) {
  for (size_t i = 0; i < sizeof DT / sizeof *DT; ++i)
    if (DT[i].dt == dt) return out->code = DT[i].code, out->bits = DT[i].bits, out->lanes = 1, true;
  return false;
}

static void call_deleter(void *ud, void *ptr) {
  (void)ptr;
  DLManagedTensor *m = (DLManagedTensor *)ud;
  if (m->deleter) m->deleter(m);
}

int cukern_push_dlpack(lua_State *L, struct DLManagedTensor *m) {
  static const char *const W = "cukern_push_dlpack";
  ckl_modstate *ms = open_state(L);
  if (!ms) return fail(L, CUKERN_ERR_CORE, W, "cukern is not open in this state (cukern_open)");
  if (!m) return fail(L, CUKERN_ERR_ARG, W, "NULL tensor");
  const DLTensor *d = &m->dl_tensor;
  ck_dtype dt;
  if (!dt_from(d->dtype, &dt)) return fail(L, CUKERN_ERR_ARG, W, "a dtype cukern does not have (code, bits, lanes)");
  if (d->ndim < 0 || d->ndim > CK_MAX_DIMS || (d->ndim > 0 && !d->shape))
    return fail(L, CUKERN_ERR_ARG, W, "ndim must be 0..8, with a shape");
  const bool host = d->device.device_type == kDLCPU || d->device.device_type == kDLCUDAHost;
  if (!host && d->device.device_type != kDLCUDA && d->device.device_type != kDLCUDAManaged)
    return fail(L, CUKERN_ERR_DEVICE, W, "the device is neither the host nor a CUDA device");
  const ck_device dev = host ? CK_DEV_HOST : ck_device_make(CK_CUDA, d->device.device_id);
  if (ck_check_device(ms->ctx, dev)) return fail(L, CUKERN_ERR_DEVICE, W, ck_errmsg(ms->ctx));
  if (ck_check_shape(ms->ctx, W, d->ndim, d->shape, dt)) return fail(L, CUKERN_ERR_ARG, W, ck_errmsg(ms->ctx));
  int64_t extent = 1, stride = 1, st_[CK_MAX_DIMS]; /* elements spanned; NULL strides: compact row-major */
  for (int k = d->ndim - 1; k >= 0; --k) {
    st_[k] = d->strides ? d->strides[k] : stride;
    if (st_[k] < 0) return fail(L, CUKERN_ERR_ARG, W, "negative strides are not supported (copy the view first)");
    stride *= d->shape[k];
    if (d->shape[k] == 0) extent = 0;
  }
  for (int k = 0; extent && k < d->ndim; ++k) extent += (d->shape[k] - 1) * st_[k];
  if (d->byte_offset % ck_dtype_size(dt))
    return fail(L, CUKERN_ERR_ARG, W, "byte_offset is not a multiple of the element size");
  /* every kernel loads an element whole (c128: 16 bytes), so the first element must be aligned to its size */
  if (d->data && ((uintptr_t)d->data + d->byte_offset) % ck_dtype_size(dt))
    return fail(L, CUKERN_ERR_ARG, W, "data + byte_offset is not aligned to the element size");
  if (!d->data && extent) return fail(L, CUKERN_ERR_ARG, W, "data is NULL");
  ck_tensor *t = ckl_push_array(L); /* first: a Lua memory error here takes nothing over */
  ck_storage *s;
  const size_t bytes = (size_t)(d->byte_offset + (uint64_t)extent * ck_dtype_size(dt));
  if (ck_storage_wrap(ms->ctx, dev, d->data, bytes, call_deleter, m, &s)) {
    lua_pop(L, 1);
    return fail(L, CUKERN_ERR_CORE, W, ck_errmsg(ms->ctx));
  }
  s->pinned = d->device.device_type == kDLCUDAHost;
  t->st = s;
  t->dtype = dt;
  t->ndim = d->ndim;
  for (int k = 0; k < d->ndim; ++k) t->shape[k] = d->shape[k], t->stride[k] = st_[k];
  t->offset = (int64_t)(d->byte_offset / ck_dtype_size(dt));
  return CUKERN_OK;
}

typedef struct {
  DLManagedTensor m;
  int64_t shape[CK_MAX_DIMS], strides[CK_MAX_DIMS];
  ck_storage *st;
} export_t;

static void export_delete(DLManagedTensor *m) {
  export_t *x = (export_t *)m->manager_ctx;
  ck_storage_release(x->st);
  free(x);
}

int cukern_to_dlpack(lua_State *L, int idx, struct DLManagedTensor **out) {
  static const char *const W = "cukern_to_dlpack";
  ckl_modstate *ms = open_state(L);
  ck_tensor *t = ckl_to_array(L, idx);
  if (!ms) return fail(L, CUKERN_ERR_CORE, W, "cukern is not open in this state (cukern_open)");
  if (!t || !t->st) return fail(L, CUKERN_ERR_ARG, W, "not a live cukern array");
  export_t *x = calloc(1, sizeof *x);
  DLTensor *d = &x->m.dl_tensor;
  if (!x) return fail(L, CUKERN_ERR_CORE, W, "out of host memory");
  if (!dt_to(t->dtype, &d->dtype)) {
    free(x);
    return fail(L, CUKERN_ERR_ARG, W, "DLPack has no such dtype");
  }
  /* its writes done, on the stream that wrote it (and pinned memory a copy is filling) */
  if (ck_stream_sync(ms->ctx, ck_stream_at(ms->ctx, t)) || ck_stream_host_ready(ms->ctx, t)) {
    free(x);
    return fail(L, CUKERN_ERR_CORE, W, ck_errmsg(ms->ctx));
  }
  const ck_device dev = ck_dev(t);
  d->data = t->st->ptr;
  d->device.device_type = dev.kind == CK_CUDA ? kDLCUDA : kDLCPU;
  d->device.device_id = dev.kind == CK_CUDA ? dev.index : 0;
  d->ndim = t->ndim;
  d->shape = x->shape;
  d->strides = x->strides;
  for (int k = 0; k < t->ndim; ++k) x->shape[k] = t->shape[k], x->strides[k] = t->stride[k];
  d->byte_offset = (uint64_t)t->offset * ck_dtype_size(t->dtype);
  ck_storage_retain(t->st);
  x->st = t->st;
  x->m.manager_ctx = x;
  x->m.deleter = export_delete;
  *out = &x->m;
  return CUKERN_OK;
}

#else

int cukern_push_dlpack(lua_State *L, struct DLManagedTensor *m) {
  (void)m;
  return fail(L, CUKERN_ERR_CORE, "cukern_push_dlpack", "this build has no DLPack (dlpack/dlpack.h was not found: "
              "install libdlpack-dev and rebuild)");
}

int cukern_to_dlpack(lua_State *L, int idx, struct DLManagedTensor **out) {
  (void)idx, (void)out;
  return fail(L, CUKERN_ERR_CORE, "cukern_to_dlpack", "this build has no DLPack (dlpack/dlpack.h was not found: "
              "install libdlpack-dev and rebuild)");
}

#endif
