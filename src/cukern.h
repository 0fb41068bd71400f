/*
 * cukern.h — embedding cukern in a C or C++ application that runs Lua 5.4.
 *
 * The application hands its own buffers to Lua scripts as cukern arrays (no copy) and reads results back:
 *
 *   lua_State *L = luaL_newstate();
 *   luaL_openlibs(L);
 *   cukern_open(L);                       // the C module, as require "cukern.core" would load it
 *   // package.path must reach lua/cukern/init.lua for the script's require "cukern"
 *   float data[6] = {1, 2, 3, 4, 5, 6};
 *   int64_t shape[2] = {2, 3};
 *   cukern_push_buffer(L, data, CUKERN_F32, 2, shape, CUKERN_HOST, NULL, NULL);   // an array over data
 *   lua_setglobal(L, "x");
 *   luaL_dostring(L, "local ck = require 'cukern'; y = ck.sum(x * 2, 2)");
 *   lua_getglobal(L, "y");
 *   double out[2];
 *   cukern_read(L, -1, out, sizeof out, CUKERN_F64);                            // {12, 30}
 *
 * Rules:
 * - One lua_State is one cukern context (device, stream, allocator, random seed). Several states may use
 *   cukern at the same time from different threads, one thread per state (as Lua itself requires); arrays
 *   must not be passed between states.
 * - A pushed buffer is not copied: the array and every view of it read and write the application's memory,
 *   which must stay valid until `release` is called. cukern calls release(ud, data) exactly once, when the
 *   last array or view over the buffer is collected or freed (a:free(), lua_close); for device buffers it
 *   first waits for the work queued on its stream. release may be NULL (the application keeps the memory and
 *   then must keep it alive until lua_close, or until it knows every array over it is gone).
 * - Functions that return int return 0 on success; on failure they push an error message (a string) and
 *   return a nonzero CUKERN_ERR_* code, and nothing was taken over (release will not be called). Like every
 *   Lua API call they may raise a Lua memory error; call them under lua_pcall where that matters.
 *
 * Build: compile the application with -I<cukern>/src and the Lua 5.4 headers; link cukern's objects (see
 * mk/embed.mk, which builds examples/embed_host.c this way) and Lua 5.4.
 */
#ifndef CUKERN_H
#define CUKERN_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types (the same numbers as cukern's own dtypes). */
/* bool is one byte, 0 or 1; the integer types are their <stdint.h> types (u8 uint8_t ... i64 int64_t); c64 and
 * c128 are interleaved (re, im) pairs of float / double, the layout of C99's float _Complex / double _Complex,
 * C++'s std::complex and NumPy's complex64 / complex128. */
typedef enum {
  CUKERN_F32 = 0, CUKERN_F64 = 1, CUKERN_I32 = 2,
  CUKERN_BOOL = 5, CUKERN_U8 = 6, CUKERN_I8 = 7, CUKERN_I16 = 8, CUKERN_U32 = 9, CUKERN_I64 = 10,
  CUKERN_C64 = 11, CUKERN_C128 = 12
} cukern_dtype;
/* Where a buffer lives: host memory, or a CUDA device pointer. Which CUDA device: cukern_push_buffer_on's ordinal
 * (cuda:N), cukern_device_ordinal for an array; the functions without an ordinal mean device 0. */
typedef enum { CUKERN_HOST = 0, CUKERN_CUDA = 1 } cukern_device;

enum {
  CUKERN_OK = 0,
  CUKERN_ERR_ARG = 1,    /* a bad argument (shape, dtype, too small a buffer, not an array, ...) */
  CUKERN_ERR_DEVICE = 2, /* a CUDA buffer without a CUDA device */
  CUKERN_ERR_CORE = 3    /* any other failure in cukern (the message says which) */
};

#define CUKERN_MAX_DIMS 8

typedef void (*cukern_release_fn)(void *ud, void *data);

/* Load the C module into L (package.loaded["cukern.core"]) and push it; 1 result, like luaopen_*.
 * A script's require "cukern" then finds it, with the Lua files of lua/cukern/ on package.path. */
int cukern_open(lua_State *L);

/* Push an array over the application's buffer `data`: ndim dims (0..CUKERN_MAX_DIMS) of sizes shape[],
 * row-major and contiguous, dtype dt, in host memory or (CUKERN_CUDA) device memory. See the rules above for
 * release. Returns 0 and pushes the array, or nonzero and pushes a message. */
int cukern_push_buffer(lua_State *L, void *data, cukern_dtype dt, int ndim, const int64_t *shape, cukern_device dev,
                       cukern_release_fn release, void *ud);

/* cukern_push_buffer for a buffer on device `ordinal` (cuda:ordinal; host:ordinal with CUKERN_HOST_DEVICES). A
 * device that does not exist is CUKERN_ERR_DEVICE. */
int cukern_push_buffer_on(lua_State *L, void *data, cukern_dtype dt, int ndim, const int64_t *shape, cukern_device dev,
                          int ordinal, cukern_release_fn release, void *ud);

/* The ordinal of the device the array at idx lives on (cuda:N or host:N -> N). Returns 0, or nonzero and pushes a
 * message. */
int cukern_device_ordinal(lua_State *L, int idx, int *ordinal);

/* Copy the array at stack index idx (any view, any device) into the host buffer buf in row-major order,
 * converted to dt; buf must hold numel * sizeof(element) bytes (bytes says how many it holds). Waits for
 * the GPU. Returns 0, or nonzero and pushes a message. */
int cukern_read(lua_State *L, int idx, void *buf, size_t bytes, cukern_dtype dt);

/* Describe the array at stack index idx: any of the out pointers may be NULL; shape holds CUKERN_MAX_DIMS.
 * Returns 0, or nonzero (and pushes a message) when the value is not a live cukern array. */
int cukern_info(lua_State *L, int idx, int *ndim, int64_t *shape, cukern_dtype *dt, cukern_device *dev);

/* Nonzero when this build and machine have a usable CUDA device for L's cukern context. */
int cukern_has_cuda(lua_State *L);

#ifdef __cplusplus
}
#endif

#endif
