/*
 * lck.h — what the binding files (src/l*.c) share. Only binding files include this header (and lua.h).
 *
 * The binding is split by area:
 *   lcukern.c  module state, errors, argument helpers, module functions, luaopen_cukern_core
 *   l_array.c  array userdata: creation, tables <-> arrays, queries, views, copies
 *   l_ops.c    ops: each op's Lua arguments parsed once into a ck_call (also used by time_op)
 *   l_bench.c  time_op (ops timed from C between CUDA events), stopwatches, the clock
 *   l_rtc.c    run-time kernels (NVRTC)
 * Every exported C function of the module gets the module state (a full userdata) as upvalue 1.
 */
#ifndef CK_LCK_H
#define CK_LCK_H

#include <stdbool.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "ck.h"

#define ARRAY_MT "cukern.array"
#define CTX_MT "cukern.ctx"
#define TIMER_MT "cukern.timer"
#define KERNEL_MT "cukern.kernel"

/* Per-Lua-state module state: the core context plus what only the binding needs. */
typedef struct {
  ck_ctx *ctx;
  lua_State *L;
  uint64_t seed, draws; /* Philox key and counter offset for the next rand/randn */
  ck_ran last;          /* the variant the last op ran */
  bool last_user;       /* the last op was a run-time kernel (ck.kernel, ck.map): its record is last_kernel */
  ck_kinfo last_kernel; /* resolved at its launch: a run-time kernel may be unloaded before anyone asks */
  const void *array_mt; /* the array metatable (kept alive by the registry), for ckl_op_array */
  int array_mt_ref;     /* ... and its registry reference, for ckl_op_push_array */
  struct ck_dist *dist; /* several devices (src/dist): NCCL communicators per device list, made on first use */
  struct ck_pcomm *pcomms[16]; /* live ck.dist communicators: freed before the context (l_dist.c) */
} ckl_modstate;

static inline ckl_modstate *CKL_MS(lua_State *L) { return (ckl_modstate *)lua_touserdata(L, lua_upvalueindex(1)); }

/* The context, or an error if lua_close already destroyed it (a finaliser running after ours). */
ck_ctx *ckl_ctx_of(lua_State *L);
#define CKL_CTX(L) ckl_ctx_of(L)

/* The first frame outside cukern's own Lua modules (the user's line): false when there is none. */
bool ckl_user_frame(lua_State *L, lua_Debug *ar);
/* Raise msg at the user's line (frames inside cukern's own Lua wrappers are skipped). */
int ckl_raise_at_user(lua_State *L, const char *msg);
/* Raise the context's last error message at the user's line. */
int ckl_fail(lua_State *L);
/* Report device bytes allocated since the last call to Lua's collector. */
void ckl_gc_debt(lua_State *L);

/* Arrays: full userdata holding a ck_tensor. The metatable is registered under ARRAY_MT (for luaL_checkudata
 * and friends) and also under the light-userdata key &ckl_array_key: the ops look it up on every call, and a
 * light-userdata key is one hash probe where a string name costs a string-cache lookup (with strcmp) first. */
extern const char ckl_array_key;
static inline ck_tensor *ckl_push_array(lua_State *L) {
  ck_tensor *t = (ck_tensor *)lua_newuserdatauv(L, sizeof(ck_tensor), 0);
  memset(t, 0, sizeof *t);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ckl_array_key);
  lua_setmetatable(L, -2);
  return t;
}
/* luaL_testudata(L, i, ARRAY_MT) through the light-userdata key. */
static inline ck_tensor *ckl_to_array(lua_State *L, int i) {
  void *p = lua_touserdata(L, i);
  if (!p || !lua_getmetatable(L, i)) return NULL;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &ckl_array_key);
  if (!lua_rawequal(L, -1, -2)) p = NULL;
  lua_pop(L, 2);
  return (ck_tensor *)p;
}
/* The same two for functions that have the module state as upvalue 1 (every module function and array
 * method): the metatable is compared by address and fetched by an integer key, with no table lookup by name
 * or pointer. The op path (src/lua/l_ops.c) runs these on every call. */
static inline ck_tensor *ckl_op_array(lua_State *L, int i) {
  void *p = lua_touserdata(L, i);
  if (!p || !lua_getmetatable(L, i)) return NULL;
  if (lua_topointer(L, -1) != CKL_MS(L)->array_mt) p = NULL;
  lua_pop(L, 1);
  return (ck_tensor *)p;
}
static inline ck_tensor *ckl_op_push_array(lua_State *L) {
  ck_tensor *t = (ck_tensor *)lua_newuserdatauv(L, sizeof(ck_tensor), 0);
  memset(t, 0, sizeof *t);
  lua_rawgeti(L, LUA_REGISTRYINDEX, CKL_MS(L)->array_mt_ref);
  lua_setmetatable(L, -2);
  return t;
}
ck_tensor *ckl_check_array(lua_State *L, int i); /* a live array, else an argument error */
ck_tensor *ckl_opt_array(lua_State *L, int i);   /* nil/none -> NULL */

/* Argument helpers (each raises a luaL_argerror naming the argument). */
const char *ckl_opt_variant(lua_State *L, int i, char *buf, size_t n); /* name or id; NULL if nil */
ck_dtype ckl_check_dtype(lua_State *L, int i);
ck_device ckl_check_device(lua_State *L, int i); /* nil -> the default device; checked to exist */
void ckl_push_device(lua_State *L, ck_device d);  /* "cuda:1" */
int ckl_read_ints(lua_State *L, int i, int64_t *v); /* a sequence of at most CK_MAX_DIMS integers */
int ckl_check_shape(lua_State *L, int i, int64_t *shape);
int ckl_check_dim(lua_State *L, int i, const ck_tensor *t); /* 1-based (negative from the end) -> 0-based */
/* The string at idx for C, or NULL if it is not one; an error "<label> contains a NUL byte ..." if it holds one. */
const char *ckl_check_text(lua_State *L, int idx, const char *label);
/* An options table (nil/none: nothing to check): every key must be one of `known` (NULL-terminated). */
void ckl_check_opts(lua_State *L, int idx, const char *what, const char *const *known);
void ckl_push_shape(lua_State *L, int n, const int64_t *v);

/* The variant record of the last op (ck.last_ran()). */
void ckl_host_ran(ck_ran *ran);
static inline void ckl_set_last(lua_State *L, const ck_ran *ran) {
  CKL_MS(L)->last = *ran;
  CKL_MS(L)->last_user = false;
}
/* A run-time kernel ran: `ran` names it, `k` is its record at the launched configuration. */
static inline void ckl_set_last_user(lua_State *L, const ck_ran *ran, const ck_kinfo *k) {
  CKL_MS(L)->last = *ran;
  CKL_MS(L)->last_user = true;
  CKL_MS(L)->last_kernel = *k;
}
/* {id, name, note} and, when it ran on the GPU, library and kernels (a list of ckl_push_kinfo records: the
 * built-in kernels of ran->kernels, looked up now, or `user`, a run-time kernel's). Raises on a CUDA error. */
void ckl_push_ran(lua_State *L, const ck_ran *ran, const ck_kinfo *user);
/* One kernel's record: {name, symbol, registers, static_smem, dynamic_smem, local_bytes, const_bytes,
 * max_threads, block, blocks_per_sm, occupancy, ptx_version, binary_version}. */
void ckl_push_kinfo(lua_State *L, const ck_kinfo *k);
/* The list of records of the built-in kernels in `note` (ck_kernel_info); raises on a CUDA error. */
void ckl_push_kernels(lua_State *L, const ck_launch_note *note);

/* An op's Lua arguments parsed once (src/lua/l_ops.c) for the op functions and time_op alike. */
typedef struct ckl_opcall {
  ck_call call;
  int out_at, idx_at; /* stack index of a given output array; 0: none given (one is allocated) */
  int nout;           /* 1 if the op returns values (out), 0 for index-only ops */
  bool want_idx;      /* the op writes indices (idx) */
  char vbuf[32];      /* a variant given by id, as text */
  const ck_tensor *list[CK_CAT_MAX]; /* cat's inputs (the call points here) */
} ckl_opcall;
typedef struct ckl_opdesc {
  const char *name;                                        /* core.<name> */
  void (*parse)(lua_State *L, int base, ckl_opcall *oc);   /* reads arguments base, base+1, ... */
  const char *fields[9];                                   /* time_op spec fields, in argument order */
} ckl_opdesc;
extern const ckl_opdesc ckl_ops[];
/* The parser for an op name (core function names, and elementwise op names for time_op); NULL if none. */
const ckl_opdesc *ckl_op_for(const char *name);

/* Each area's functions, registered into the module table (and array methods) by luaopen_cukern_core. */
extern const luaL_Reg ckl_array_funcs[], ckl_array_methods[];
/* l_table.c: core.from_table; one value of a host buffer in dtype dt pushed as a Lua number (integers for
 * i32); the nested table of t's shape over a host buffer of its values in logical order. */
int ckl_from_table(lua_State *L);
void ckl_push_value(lua_State *L, const void *buf, ck_dtype dt, int64_t i);
void ckl_build_table(lua_State *L, const ck_tensor *t, const void *buf, int d, int64_t *pos);
extern const luaL_Reg ckl_ops_funcs[];
extern const luaL_Reg ckl_bench_funcs[];
extern const luaL_Reg ckl_rtc_funcs[]; /* l_rtc.c: run-time kernels, kernel_build, the disk cache */
extern const luaL_Reg ckl_map_funcs[]; /* l_map.c: fused kernels */
extern const luaL_Reg ckl_graph_funcs[];
extern const luaL_Reg ckl_io_funcs[]; /* l_io.c: file formats */
extern const luaL_Reg ckl_linalg_funcs[]; /* l_linalg.c: linear algebra (issue 34) */
extern const luaL_Reg ckl_dist_funcs[]; /* l_dist.c: collectives (ck.nccl) and processes (ck.dist) */
void ckl_dist_init(lua_State *L);  /* the communicator metatable (module state on the stack top) */
void ckl_dist_close(ckl_modstate *ms); /* communicators, before the context goes */
int ckl_array_release(lua_State *L); /* __gc, __close and :free() */
int ckl_array_len(lua_State *L);     /* __len */
/* A userdata class: metatable `name` with __gc and an __index table of methods, each method getting the
 * module state (which must be on top of the stack) as upvalue 1. The stack is left as it was. */
void ckl_new_class(lua_State *L, const char *name, lua_CFunction gc, const luaL_Reg *methods);
/* Metatables of the other userdata (timers, kernels); the module state is on top of the stack. */
void ckl_bench_init(lua_State *L);
void ckl_rtc_init(lua_State *L);
void ckl_map_init(lua_State *L);
/* Push a run-time kernel's introspection table (registers, shared memory, occupancy at `block`, ...; l_rtc.c). */
void ckl_push_kernel_info(lua_State *L, ck_rtc_kernel *k, int block, size_t smem);
void ckl_graph_init(lua_State *L);
/* l_stream.c: streams, events, pinned memory, asynchronous copies and NVTX (issue 36); an op's NVTX range named after
 * the user's line (CUKERN_NVTX=1: pushed before the op runs, popped after). */
extern const luaL_Reg ckl_stream_funcs[];
void ckl_stream_init(lua_State *L);
void ckl_nvtx_op_push(lua_State *L, const char *op);

#endif
