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
/* The string at idx for C, or NULL if it is not one; an error "<label> contains a NUL byte ..." if it holds one. */
const char *ckl_check_text(lua_State *L, int idx, const char *label);
/* The kernel entry name at idx (l_rtc.c): refused unless it is a (qualified) identifier or template-id. */
const char *ckl_check_entry(lua_State *L, int idx);

#endif
