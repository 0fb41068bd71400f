/* l_map.h — fused-kernel bindings (l_map.c), registered through l_rtc.c's table (binding files only). */
#ifndef CK_L_MAP_H
#define CK_L_MAP_H

#include "lck.h"

int ckl_map(lua_State *L);
int ckl_reduce_map(lua_State *L);
int ckl_map_info(lua_State *L);
int ckl_map_source(lua_State *L);
int ckl_kernel_build(lua_State *L);
int ckl_cache_dir(lua_State *L);
int ckl_map_cache_size(lua_State *L);
int ckl_kernel_header(lua_State *L);
/* Push a kernel's introspection table (registers, shared memory, occupancy at `block`, ...). */
void ckl_push_kernel_info(lua_State *L, ck_rtc_kernel *k, int block, size_t smem);
void ckl_map_init(lua_State *L);

#endif
