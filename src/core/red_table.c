/*
 * red_table.c — the reduction ops as the core sees them, from kernels/reduce/reduce_ops.def: names, and the
 * rules the dispatcher and the host oracle apply (family, empty result, float-only, the op with indices).
 */
#include <math.h>
#include <string.h>

#include "reduce_ops.h"

#define CK_RED_NO_EMPTY INFINITY /* (a value no empty reduction gives: the row's "needs an element") */

static const struct {
  const char *name;
  int family, with_idx;
  bool mean, maxlike, float_only;
  double empty;
} ROWS[CK_RED_NOPS] = {
#define CK_RED_OP(ID, NAME, FAMILY, IDENT, COMBINE, MEAN, EMPTY, MAXLIKE, FLOAT, WITH_IDX)                            \
  [CK_RED_##ID] = {NAME, CK_REDF_##FAMILY, CK_RED_##WITH_IDX, MEAN, MAXLIKE, FLOAT, EMPTY},
#include "reduce/reduce_ops.def"
#undef CK_RED_OP
};

static bool valid(int op) { return op >= 0 && op < CK_RED_NOPS; }

const char *ck_reduce_op_name(int op) { return valid(op) ? ROWS[op].name : NULL; }

int ck_reduce_op_parse(const char *name) {
  for (int i = 0; i < CK_RED_NOPS; ++i)
    if (strcmp(name, ROWS[i].name) == 0) return i;
  return -1;
}

char *ck_reduce_op_list(char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < CK_RED_NOPS && k < n; ++i) {
    const size_t len = strlen(ROWS[i].name) + (i ? 2 : 0);
    if (k + len + 1 > n) break;
    memcpy(buf + k, i ? ", " : "", i ? 2 : 0);
    memcpy(buf + k + (i ? 2 : 0), ROWS[i].name, strlen(ROWS[i].name) + 1);
    k += len;
  }
  return buf;
}

int ck_reduce_op_family(int op) { return valid(op) ? ROWS[op].family : -1; }
bool ck_reduce_op_indexed(int op) { return valid(op) && ROWS[op].family == CK_REDF_ARG; }
bool ck_reduce_op_gives_indices(int op) { return valid(op) && ROWS[op].family != CK_REDF_ARITH; }
int ck_reduce_op_with_idx(int op) { return valid(op) ? ROWS[op].with_idx : op; }
bool ck_reduce_op_float_only(int op) { return valid(op) && ROWS[op].float_only; }
bool ck_reduce_op_mean(int op) { return valid(op) && ROWS[op].mean; }
bool ck_reduce_op_maxlike(int op) { return valid(op) && ROWS[op].maxlike; }

bool ck_reduce_op_empty(int op, double *value) {
  if (!valid(op) || isinf(ROWS[op].empty)) return false;
  *value = ROWS[op].empty;
  return true;
}
