/*
 * l_linalg.c — the binding of linear algebra (src/linalg/ck_linalg.h; the friendly API is lua/cukern/linalg.lua,
 * docs/api.md "Linear algebra").
 *
 *   core.linalg(fn, a, b, opts) -> the function's results (ck_linalg.h lists them per function), and for a refined
 *                                  solve the iteration count after them
 *   core.linalg_available()     -> true, or false and why (LAPACKE for host arrays)
 *
 * fn is "lu", "solve", "inv", "det", "slogdet", "cholesky", "cholesky_solve", "triangular_solve", "qr", "lstsq", "svd",
 * "eigh", "eig"; opts is a table already checked by linalg.lua (booleans upper, left, unit, full, vectors, packed,
 * check; refine "f16"|"bf16"|"tf32"|"f32"; variant). The result userdata are pushed before the core runs, so a memory
 * error cannot leak what it made.
 */
#include <string.h>

#include "ck_linalg.h"
#include "host_linalg.h"
#include "lck.h"

static const struct {
  const char *fn, *name;
  ck_la_fn id;
} FNS[] = {
    {"lu", "ck.lu", CK_LAF_LU},
    {"solve", "ck.solve", CK_LAF_SOLVE},
    {"inv", "ck.inv", CK_LAF_INV},
    {"det", "ck.det", CK_LAF_DET},
    {"slogdet", "ck.slogdet", CK_LAF_SLOGDET},
    {"cholesky", "ck.cholesky", CK_LAF_CHOLESKY},
    {"cholesky_solve", "ck.cholesky_solve", CK_LAF_CHOLESKY_SOLVE},
    {"triangular_solve", "ck.triangular_solve", CK_LAF_TRSOLVE},
    {"qr", "ck.qr", CK_LAF_QR},
    {"lstsq", "ck.lstsq", CK_LAF_LSTSQ},
    {"svd", "ck.svd", CK_LAF_SVD},
    {"eigh", "ck.eigh", CK_LAF_EIGH},
    {"eig", "ck.eig", CK_LAF_EIG},
};

static bool opt_bool(lua_State *L, int t, const char *k, bool dflt) {
  lua_getfield(L, t, k);
  const bool v = lua_isnil(L, -1) ? dflt : lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

static int l_linalg(lua_State *L) {
  const char *fn = luaL_checkstring(L, 1);
  ck_la_call c;
  memset(&c, 0, sizeof c);
  size_t i = 0;
  while (i < sizeof FNS / sizeof *FNS && strcmp(FNS[i].fn, fn) != 0) ++i;
  if (i == sizeof FNS / sizeof *FNS) return luaL_argerror(L, 1, "unknown linear-algebra function");
  c.fn = FNS[i].id;
  c.name = FNS[i].name;
  c.a = ckl_check_array(L, 2);
  c.b = ckl_opt_array(L, 3);
  luaL_checktype(L, 4, LUA_TTABLE);
  c.upper = opt_bool(L, 4, "upper", false);
  c.left = opt_bool(L, 4, "left", true);
  c.unit = opt_bool(L, 4, "unit", false);
  c.full = opt_bool(L, 4, "full", false);
  c.vectors = opt_bool(L, 4, "vectors", true);
  c.packed = opt_bool(L, 4, "packed", false);
  c.check = opt_bool(L, 4, "check", true);
  lua_getfield(L, 4, "refine");
  const char *r = lua_tostring(L, -1);
  c.refine = !r ? CK_LA_IRS_NONE : !strcmp(r, "f16") ? CK_LA_IRS_F16 : !strcmp(r, "bf16") ? CK_LA_IRS_BF16
             : !strcmp(r, "tf32") ? CK_LA_IRS_TF32 : CK_LA_IRS_F32;
  lua_pop(L, 1);
  char vbuf[32];
  c.variant = ckl_opt_variant(L, 5, vbuf, sizeof vbuf);
  const int base = lua_gettop(L);
  ck_tensor *outs[5];
  for (int k = 0; k < 5; ++k) outs[k] = ckl_push_array(L);
  ck_ran ran;
  if (ck_linalg(CKL_CTX(L), &c, &ran)) return ckl_fail(L);
  for (int k = 0; k < c.nout; ++k) *outs[k] = c.out[k]; /* the references move into the userdata */
  lua_settop(L, base + c.nout);
  if (c.refine) lua_pushinteger(L, c.iters);
  ckl_set_last(L, &ran);
  ckl_gc_debt(L);
  return c.nout + (c.refine ? 1 : 0);
}

static int l_linalg_available(lua_State *L) {
  const char *why;
  const bool ok = ck_host_la_available(&why);
  lua_pushboolean(L, ok);
  if (ok) return 1;
  lua_pushstring(L, why);
  return 2;
}

const luaL_Reg ckl_linalg_funcs[] = {{"linalg", l_linalg}, {"linalg_available", l_linalg_available}, {NULL, NULL}};
