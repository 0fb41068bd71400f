/*
 * ew_ops.h — elementwise helpers: what the op table (kernels/elementwise/ew_ops.def, read by ew_table.c)
 * says of each op (names, also the Lua names; kind; dtype rules; Lua exposure), dimension coalescing and
 * ordering, and the float -> i32 conversion rule. Plain C; no Lua, no CUDA.
 */
#ifndef CK_EW_OPS_H
#define CK_EW_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "ck.h"

/* "add", "exp", ... (lowercase; the Lua names). NULL for an id out of range. */
const char *ck_ew_op_name(int op);
/* The CK_EW_* id of a name, or -1 if unknown. "pow" is the binary POW; POWS is "pows". */
int ck_ew_op_parse(const char *name);
/* The op's DTYPES column (ew_ops.def): CK_EWD_ALL, CK_EWD_FLOAT (floats only: EXP LOG ... RAND RANDN),
 * CK_EWD_INT (integers and bool: the bit operations) or CK_EWD_TOBOOL (any dtype in, a bool result:
 * comparisons, logical ops, isnan ...); -1 for an unknown id. */
int ck_ew_op_dtypes(int op);
/* ck_ew_op_dtypes(op) == CK_EWD_FLOAT */
bool ck_ew_op_float_only(int op);
/* The bit and logical binary ops (bitand ... rshift, logical_and/or/xor): a Lua boolean stands as a number for
 * them, and a bool array with true/false (0/1) stays bool (mask & true); other ops compute bool with a number
 * in i32. */
bool ck_ew_op_keeps_bool(int op);
/* The op's kind: CK_EWK_COPY, CK_EWK_UNARY, CK_EWK_BINARY or CK_EWK_GEN (-1 for an unknown id). */
int ck_ew_op_kind(int op);
/* Number of array inputs the op reads: 0 (generators), 1 (unary, COPY) or 2 (binary). */
int ck_ew_op_arity(int op);

/* How Lua exposes the op: "unary" or "binary" for the ops that get ck.<name>, a:<name>() and a:<name>_()
 * generated from this table, NULL for ops with hand-written wrappers (copy, pows, clamp, pow, generators). */
const char *ck_ew_op_lua_kind(int op);

/* Rewrite d in place to an equivalent descriptor with fewer dims: drops size-1 dims and merges adjacent
 * dims that are jointly contiguous in every operand the op reads. The row-major linear index of each
 * element is preserved (ARANGE and RAND depend on it). EYE is left alone (it needs the last two indices).
 * 0-size descriptors are left alone too. */
void ck_ew_coalesce(ck_ew_desc *d);

/* ck_ew_coalesce after putting the dims in the output's memory order (largest stride first), so that operands
 * sharing a permuted dense layout become one contiguous run. Generators keep row-major order. */
void ck_ew_order(ck_ew_desc *d);

/* float -> i32: truncate toward zero; NaN and values outside [INT32_MIN, INT32_MAX] give INT32_MIN (the
 * same "integer indefinite" value x86 cvttsd2si produces; the GPU kernels use the identical rule). */
static inline int32_t ck_ew_f2i(double x) {
  return (x > -2147483649.0 && x < 2147483648.0) ? (int32_t)x : INT32_MIN;
}

/* float -> the storage integer dtypes (issue 32), the same family of rule: truncate toward zero; NaN and values
 * outside the dtype's range give its minimum (0 for the unsigned ones). */
#define CK_EW_F2I_(T, LO, HI, MIN) ((x) > (LO) && (x) < (HI) ? (T)(x) : (T)(MIN))
static inline int8_t ck_ew_f2i8(double x) { return CK_EW_F2I_(int8_t, -129.0, 128.0, INT8_MIN); }
static inline int16_t ck_ew_f2i16(double x) { return CK_EW_F2I_(int16_t, -32769.0, 32768.0, INT16_MIN); }
static inline uint8_t ck_ew_f2u8(double x) { return CK_EW_F2I_(uint8_t, -1.0, 256.0, 0); }
static inline uint32_t ck_ew_f2u32(double x) { return CK_EW_F2I_(uint32_t, -1.0, 4294967296.0, 0); }
static inline int64_t ck_ew_f2i64(double x) {
  return CK_EW_F2I_(int64_t, -9223372036854777856.0, 9223372036854775808.0, INT64_MIN);
}
#undef CK_EW_F2I_

/* RAND/RANDN seed and counter offset from the descriptor's doubles (negative values wrap like int64). */
static inline uint64_t ck_ew_seed(double s) {
  if (!(s == s)) return 0;
  if (s >= 18446744073709551616.0) return UINT64_MAX;
  if (s >= 9223372036854775808.0) return (uint64_t)s;
  if (s <= -9223372036854775808.0) return (uint64_t)INT64_MIN;
  return (uint64_t)(int64_t)s;
}

#endif
