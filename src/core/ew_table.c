/*
 * ew_table.c — what the core knows about each elementwise op, read from the one table
 * (kernels/elementwise/ew_ops.def): names (also the Lua names), kind/arity, dtype rules, Lua exposure.
 */
#include <string.h>

#include "ew_ops.h"

#define EWT_LUA_FN true
#define EWT_LUA_NONE false

static const struct {
  const char *name;
  int kind, dtypes;
  bool lua;
} EW[CK_EW_NOPS] = {
#define CK_EW_OP(ID, NAME, KIND, DTYPES, LUA, FEXPR, IEXPR) \
  [CK_EW_##ID] = {NAME, CK_EWK_##KIND, CK_EWD_##DTYPES, EWT_LUA_##LUA},
#include "elementwise/ew_ops.def"
#undef CK_EW_OP
};

const char *ck_ew_op_name(int op) { return (op >= 0 && op < CK_EW_NOPS) ? EW[op].name : NULL; }

int ck_ew_op_parse(const char *name) {
  if (!name) return -1;
  for (int op = 0; op < CK_EW_NOPS; ++op)
    if (strcmp(EW[op].name, name) == 0) return op;
  return -1;
}

int ck_ew_op_kind(int op) { return (op >= 0 && op < CK_EW_NOPS) ? EW[op].kind : -1; }

int ck_ew_op_dtypes(int op) { return (op >= 0 && op < CK_EW_NOPS) ? EW[op].dtypes : -1; }

bool ck_ew_op_float_only(int op) { return ck_ew_op_dtypes(op) == CK_EWD_FLOAT; }

bool ck_ew_op_keeps_bool(int op) {
  return ck_ew_op_dtypes(op) == CK_EWD_INT || op == CK_EW_LAND || op == CK_EW_LOR || op == CK_EW_LXOR;
}

int ck_ew_op_arity(int op) {
  const int k = ck_ew_op_kind(op);
  return k == CK_EWK_GEN ? 0 : k == CK_EWK_BINARY ? 2 : 1;
}

const char *ck_ew_op_lua_kind(int op) {
  if (op < 0 || op >= CK_EW_NOPS || !EW[op].lua) return NULL;
  return EW[op].kind == CK_EWK_BINARY ? "binary" : "unary";
}
