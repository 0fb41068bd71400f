/*
 * l_ops.c — the ops: matmul, reductions, transpose, elementwise.
 *
 * Each op's Lua arguments are parsed ONCE, by one parser per op (ckl_ops[]), into a ck_call; both the op
 * functions (core.matmul, core.reduce, ...) and core.time_op (src/lua/l_bench.c, which lays a spec table's
 * fields out on the stack in the same positions) use it, then hand the call to ck_run. Arguments stay on
 * the Lua stack while the call runs, so every array it points to is alive.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "complex/complex.h"
#include "ew_ops.h"
#include "fft/fft.h"
#include "lck.h"
#include "reduce_ops.h"

// ---------------------------------------------------------------- parsers

/* ckl_check_array through the module state's metatable (every op function has it as upvalue 1). */
static ck_tensor *check_array(lua_State *L, int i) {
  ck_tensor *t = ckl_op_array(L, i);
  if (!t) luaL_typeerror(L, i, "cukern array");
  if (!t->st) luaL_argerror(L, i, "use of a freed array");
  return t;
}

/* An optional output array argument: its stack index, or 0 (none given: one is allocated). */
static int opt_out(lua_State *L, int i) {
  if (lua_isnoneornil(L, i)) return 0;
  check_array(L, i);
  return i;
}

/* matmul: a, b [, out [, alpha [, beta [, variant [, precision ("exact" | "tf32")]]]]] */
static void parse_matmul(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  c->kind = CK_OP_MATMUL;
  c->a = check_array(L, base);
  c->b = check_array(L, base + 1);
  oc->out_at = opt_out(L, base + 2);
  c->alpha = luaL_optnumber(L, base + 3, 1.0);
  c->beta = luaL_optnumber(L, base + 4, 0.0);
  c->variant = ckl_opt_variant(L, base + 5, oc->vbuf, sizeof oc->vbuf);
  static const char *const PRECISIONS[] = {"exact", "tf32", NULL};
  c->precision = luaL_checkoption(L, base + 6, "exact", PRECISIONS) == 1 ? CK_MM_TF32 : CK_MM_EXACT;
  oc->nout = 1;
}

/* reduce: fname, x [, dim [, keepdim [, variant [, want_idx [, out [, idx]]]]]] -> values [, idx]
 * (argmax/argmin give indices only: an `out` given to them is where the indices go) */
static void parse_reduce(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  const char *fname = luaL_optstring(L, base, "sum");
  c->kind = CK_OP_REDUCE;
  c->fn = ck_reduce_op_parse(fname);
  if (c->fn < 0) {
    char names[128];
    luaL_argerror(L, base, lua_pushfstring(L, "unknown reduction '%s' (%s)", fname, ck_reduce_op_list(names, sizeof names)));
  }
  c->a = check_array(L, base + 1);
  c->dim = lua_isnoneornil(L, base + 2) ? -1 : ckl_check_dim(L, base + 2, c->a);
  c->keepdim = lua_toboolean(L, base + 3);
  c->variant = ckl_opt_variant(L, base + 4, oc->vbuf, sizeof oc->vbuf);
  const bool arg = ck_reduce_op_indexed(c->fn);
  const int out = opt_out(L, base + 6), idx = opt_out(L, base + 7);
  if (arg) {
    if (out && idx) luaL_argerror(L, base + 6, lua_pushfstring(L, "%s gives indices only: pass one output (idx)", fname));
    oc->idx_at = idx ? idx : out;
    oc->want_idx = true;
    oc->nout = 0;
  } else {
    oc->out_at = out;
    oc->idx_at = idx;
    oc->want_idx = idx != 0 || lua_toboolean(L, base + 5);
    oc->nout = 1;
  }
}

/* transpose: x [, out [, variant]] */
static void parse_transpose(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  c->kind = CK_OP_TRANSPOSE;
  c->a = check_array(L, base);
  oc->out_at = opt_out(L, base + 1);
  c->variant = ckl_opt_variant(L, base + 2, oc->vbuf, sizeof oc->vbuf);
  oc->nout = 1;
}

/* An elementwise op by name, or by id (lua/cukern/ops.lua passes ids: no string compares on the op path). */
static int check_ew_op(lua_State *L, int i, int arity) {
  if (lua_type(L, i) == LUA_TNUMBER) {
    const lua_Integer op = lua_tointeger(L, i);
    if (op < 0 || op >= CK_EW_NOPS || ck_ew_op_arity((int)op) != arity)
      return luaL_argerror(L, i, lua_pushfstring(L, "unknown %s elementwise op id %d", arity == 1 ? "unary" : "binary", (int)op));
    return (int)op;
  }
  const char *name = luaL_checkstring(L, i);
  const int op = ck_ew_op_parse(name);
  if (op < 0 || ck_ew_op_arity(op) != arity)
    return luaL_argerror(L, i, lua_pushfstring(L, "unknown %s elementwise op '%s'", arity == 1 ? "unary" : "binary", name));
  return op;
}

/* unary: name, a [, out [, s1 [, s2 [, variant]]]] */
static void parse_unary(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  c->kind = CK_OP_EW;
  c->fn = check_ew_op(L, base, 1);
  c->a = check_array(L, base + 1);
  oc->out_at = opt_out(L, base + 2);
  c->s1 = luaL_optnumber(L, base + 3, 0);
  if (lua_isinteger(L, base + 3)) c->s_int = true, c->si = lua_tointeger(L, base + 3);
  c->s2 = luaL_optnumber(L, base + 4, 0);
  c->variant = ckl_opt_variant(L, base + 5, oc->vbuf, sizeof oc->vbuf);
  oc->nout = 1;
}

/* binary: name, a, b [, out [, variant]]; a or b may be a number */
static void parse_binary(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  c->kind = CK_OP_EW;
  c->fn = check_ew_op(L, base, 2);
  ck_tensor *a = ckl_op_array(L, base + 1), *b = ckl_op_array(L, base + 2);
  if (!a && !b) luaL_error(L, "%s: at least one operand must be a cukern array", ck_ew_op_name(c->fn));
  if (a && !a->st) luaL_argerror(L, base + 1, "use of a freed array");
  if (b && !b->st) luaL_argerror(L, base + 2, "use of a freed array");
  if (a && b) {
    c->a = a;
    c->b = b;
  } else {
    const int at = a ? base + 2 : base + 1; /* the number's argument */
    c->a = a ? a : b;
    c->scalar_left = !a;
    if (ck_ew_op_keeps_bool(c->fn) && lua_isboolean(L, at)) c->s1 = lua_toboolean(L, at), c->si = (int64_t)c->s1, c->s_int = true; /* mask & true */
    else c->s1 = luaL_checknumber(L, at);
    if (lua_isinteger(L, at)) c->s_int = true, c->si = lua_tointeger(L, at); /* exact beyond 2^53 */
  }
  oc->out_at = opt_out(L, base + 3);
  c->variant = ckl_opt_variant(L, base + 4, oc->vbuf, sizeof oc->vbuf);
  oc->nout = 1;
}

/* index: fn (a name: "gather", "where", ...), a, ix, b, out, dim (0-based), variant; any may be nil but fn
 * (lua/cukern/select.lua checks the user's arguments; op_index.c says which operand each op reads) */
static ck_tensor *opt_array(lua_State *L, int i) {
  if (lua_isnoneornil(L, i)) return NULL;
  return check_array(L, i);
}
static void parse_index(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  c->kind = CK_OP_INDEX;
  const char *fname = luaL_checkstring(L, base);
  c->fn = -1;
  for (int f = 0; f < CK_IX_NFNS; ++f)
    if (strcmp(fname, ck_index_fn_name(f)) == 0) c->fn = f;
  if (c->fn < 0 || c->fn == CK_IX_CAT) luaL_argerror(L, base, lua_pushfstring(L, "unknown index op '%s'", fname));
  c->a = opt_array(L, base + 1);
  c->ix = opt_array(L, base + 2);
  c->b = opt_array(L, base + 3);
  oc->out_at = opt_out(L, base + 4);
  c->dim = (int)luaL_optinteger(L, base + 5, 0);
  c->variant = ckl_opt_variant(L, base + 6, oc->vbuf, sizeof oc->vbuf);
  /* internal, positional only (not a time_op field): ck.unique's scatter through a permutation, whose indices
   * cannot repeat; it skips the repeat check, so a caller passing repeats gets an unordered scatter */
  c->distinct = lua_toboolean(L, base + 7);
  oc->nout = 1;
}

/* cat: {arrays} (1..CK_CAT_MAX, one dtype and device, contiguous), dim (0-based), out, variant */
static void parse_cat(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  c->kind = CK_OP_INDEX;
  c->fn = CK_IX_CAT;
  luaL_checktype(L, base, LUA_TTABLE);
  const lua_Integer n = luaL_len(L, base);
  if (n < 1 || n > CK_CAT_MAX) luaL_argerror(L, base, "1..64 arrays per call");
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, base, i);
    ck_tensor *t = ckl_op_array(L, -1);
    if (!t || !t->st) luaL_argerror(L, base, "a list of live cukern arrays");
    lua_pop(L, 1); /* the table keeps it alive */
    oc->list[i - 1] = t;
  }
  c->list = oc->list;
  c->nlist = (int)n;
  c->a = oc->list[0];
  c->dim = (int)luaL_checkinteger(L, base + 1);
  oc->out_at = opt_out(L, base + 2);
  c->variant = ckl_opt_variant(L, base + 3, oc->vbuf, sizeof oc->vbuf);
  oc->nout = 1;
}

/* scan: fname ("cumsum" ...), x [, dim [, exclusive [, variant [, out]]]] -> values (issue 33) */
static void parse_scan(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  const char *fname = luaL_optstring(L, base, "cumsum");
  c->kind = CK_OP_SCAN;
  c->fn = ck_scan_op_parse(fname);
  if (c->fn < 0)
    luaL_argerror(L, base, lua_pushfstring(L, "unknown scan '%s' (cumsum, cumprod, cummax, cummin)", fname));
  c->a = check_array(L, base + 1);
  c->dim = lua_isnoneornil(L, base + 2) ? (c->a->ndim ? c->a->ndim - 1 : -1) : ckl_check_dim(L, base + 2, c->a);
  c->exclusive = lua_toboolean(L, base + 3);
  c->variant = ckl_opt_variant(L, base + 4, oc->vbuf, sizeof oc->vbuf);
  oc->out_at = opt_out(L, base + 5);
  oc->nout = 1;
}

/* sort: x [, dim [, descending [, k [, variant [, values [, out [, idx [, indices]]]]]]]] -> [values,] [indices]
 * (issue 33): values = false gives the indices only (argsort), indices = false the values only; k > 0 keeps the
 * first k (topk, largest first). */
static void parse_sort(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  c->kind = CK_OP_SORT;
  c->a = check_array(L, base);
  c->dim = lua_isnoneornil(L, base + 1) ? (c->a->ndim ? c->a->ndim - 1 : -1) : ckl_check_dim(L, base + 1, c->a);
  c->descending = lua_toboolean(L, base + 2);
  c->k = (int64_t)luaL_optinteger(L, base + 3, 0);
  if (c->k < 0) luaL_argerror(L, base + 3, "k must be >= 0");
  c->variant = ckl_opt_variant(L, base + 4, oc->vbuf, sizeof oc->vbuf);
  const bool values = lua_isnoneornil(L, base + 5) || lua_toboolean(L, base + 5);
  oc->out_at = opt_out(L, base + 6);
  oc->idx_at = opt_out(L, base + 7);
  const bool indices = lua_isnoneornil(L, base + 8) || lua_toboolean(L, base + 8);
  if (!values && !indices) luaL_argerror(L, base + 8, "a sort gives the values, the indices or both");
  if (!indices && oc->idx_at) luaL_argerror(L, base + 8, "an idx array was given for indices that are not made");
  oc->nout = values ? 1 : 0;
  oc->want_idx = indices;
}

/* histc: x, bins, lo, hi [, variant [, out]] -> i64 counts (issue 33) */
static void parse_histc(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  c->kind = CK_OP_HIST;
  c->a = check_array(L, base);
  c->k = (int64_t)luaL_checkinteger(L, base + 1);
  c->s1 = luaL_checknumber(L, base + 2);
  c->s2 = luaL_checknumber(L, base + 3);
  c->variant = ckl_opt_variant(L, base + 4, oc->vbuf, sizeof oc->vbuf);
  oc->out_at = opt_out(L, base + 5);
  oc->nout = 1;
}

/* searchsorted: sorted, values [, right [, variant [, out]]] -> i64 1-based positions (issue 33) */
static void parse_search(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  c->kind = CK_OP_SEARCH;
  c->a = check_array(L, base);
  c->b = check_array(L, base + 1);
  c->fn = lua_toboolean(L, base + 2) ? 1 : 0;
  c->variant = ckl_opt_variant(L, base + 3, oc->vbuf, sizeof oc->vbuf);
  oc->out_at = opt_out(L, base + 4);
  oc->nout = 1;
}

/* fft: kind ("fft", "rfft", "irfft"), x, n, dim [, inverse [, scale [, variant [, out [, n2]]]]] (issue 35): x's
 * length along dim is already the transform's (lua/cukern/fft.lua pads or cuts it); n2: the last dim's length, for
 * a complex transform over dim and the last dim at once (dim then is the next to last) */
static void parse_fft(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  const char *kind = luaL_checkstring(L, base);
  c->kind = CK_OP_FFT;
  c->fn = -1;
  for (int k = 0; k < CK_FFT_NKINDS; ++k)
    if (strcmp(kind, ck_fft_kind_name(k)) == 0) c->fn = k;
  if (c->fn < 0) luaL_argerror(L, base, lua_pushfstring(L, "unknown transform '%s' (fft, rfft, irfft)", kind));
  c->a = check_array(L, base + 1);
  c->fft_n = (int64_t)luaL_checkinteger(L, base + 2);
  c->dim = ckl_check_dim(L, base + 3, c->a);
  c->inverse = lua_toboolean(L, base + 4);
  c->s1 = luaL_optnumber(L, base + 5, 1.0);
  c->variant = ckl_opt_variant(L, base + 6, oc->vbuf, sizeof oc->vbuf);
  oc->out_at = opt_out(L, base + 7);
  c->k = (int64_t)luaL_optinteger(L, base + 8, 0);
  if (c->k < 0) luaL_argerror(L, base + 8, "n2 must be >= 0");
  oc->nout = 1;
}

/* rows: fname ("softmax" ...), x [, dim [, w [, b [, eps [, variant [, out]]]]]] -> values (issue 37) */
static void parse_rows(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  const char *fname = luaL_checkstring(L, base);
  c->kind = CK_OP_ROWS;
  c->fn = ck_rows_fn_parse(fname);
  if (c->fn < 0)
    luaL_argerror(L, base, lua_pushfstring(L, "unknown row op '%s' (softmax, log_softmax, layer_norm, rms_norm)", fname));
  c->a = check_array(L, base + 1);
  c->dim = lua_isnoneornil(L, base + 2) ? (c->a->ndim ? c->a->ndim - 1 : -1) : ckl_check_dim(L, base + 2, c->a);
  c->b = opt_array(L, base + 3);
  c->c = opt_array(L, base + 4);
  c->s1 = luaL_optnumber(L, base + 5, 1e-5);
  c->variant = ckl_opt_variant(L, base + 6, oc->vbuf, sizeof oc->vbuf);
  oc->out_at = opt_out(L, base + 7);
  oc->nout = 1;
}

/* attention: q, k, v [, mask [, causal [, scale [, variant [, out]]]]] -> out (issue 37); scale nil: 1/sqrt(D) */
static void parse_attention(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  c->kind = CK_OP_ATTN;
  c->a = check_array(L, base);
  c->b = check_array(L, base + 1);
  c->c = check_array(L, base + 2);
  c->ix = opt_array(L, base + 3);
  c->causal = lua_toboolean(L, base + 4);
  c->s1 = lua_isnoneornil(L, base + 5) ? NAN : luaL_checknumber(L, base + 5);
  c->variant = ckl_opt_variant(L, base + 6, oc->vbuf, sizeof oc->vbuf);
  oc->out_at = opt_out(L, base + 7);
  oc->nout = 1;
}

/* complex_op: fn ("add" ... "mean"), a [, b [, out [, dim [, keepdim [, variant [, b_im]]]]]] (issue 35): binary ops
 * take arrays or a number on either side (b_im: the number's imaginary part); sums take dim (nil: every element) */
static void parse_complex(lua_State *L, int base, ckl_opcall *oc) {
  ck_call *c = &oc->call;
  const char *fname = luaL_checkstring(L, base);
  c->kind = CK_OP_COMPLEX;
  c->fn = ck_cx_fn_parse(fname);
  if (c->fn < 0)
    luaL_argerror(L, base, lua_pushfstring(L, "unknown complex op '%s' (add, sub, mul, div, eq, ne, neg, conj, exp, "
                                              "log, sqrt, abs, angle, sum, mean)", fname));
  ck_tensor *a = ckl_op_array(L, base + 1), *b = ckl_op_array(L, base + 2);
  if (a && !a->st) luaL_argerror(L, base + 1, "use of a freed array");
  if (b && !b->st) luaL_argerror(L, base + 2, "use of a freed array");
  if (c->fn < CK_CX_FIRST_UNARY) {
    if (!a && !b) luaL_error(L, "%s: at least one operand must be a cukern array", ck_cx_fn_name(c->fn));
    const int at = a ? base + 2 : base + 1; /* the number's argument, if one is a number */
    c->a = a ? a : b;
    if (a && b) c->b = b;
    else c->s1 = luaL_checknumber(L, at), c->s2 = luaL_optnumber(L, base + 7, 0), c->scalar_left = !a;
  } else {
    c->a = check_array(L, base + 1);
  }
  oc->out_at = opt_out(L, base + 3);
  c->dim = lua_isnoneornil(L, base + 4) ? -1 : ckl_check_dim(L, base + 4, c->a);
  c->keepdim = lua_toboolean(L, base + 5);
  c->variant = ckl_opt_variant(L, base + 6, oc->vbuf, sizeof oc->vbuf);
  oc->nout = 1;
}

/* The op table: the Lua function name, its parser, and (for time_op) the spec fields in argument order. */
const ckl_opdesc ckl_ops[] = {
    {"matmul", parse_matmul, {"a", "b", "out", "alpha", "beta", "variant", "precision"}},
    {"reduce", parse_reduce, {"fn", "x", "dim", "keepdim", "variant", "want_idx", "out", "idx"}},
    {"transpose", parse_transpose, {"x", "out", "variant"}},
    {"unary", parse_unary, {"op", "a", "out", "s1", "s2", "variant"}},
    {"binary", parse_binary, {"op", "a", "b", "out", "variant"}},
    {"index", parse_index, {"fn", "a", "ix", "b", "out", "dim", "variant"}},
    {"cat", parse_cat, {"list", "dim", "out", "variant"}},
    {"scan", parse_scan, {"fn", "x", "dim", "exclusive", "variant", "out"}},
    {"sort", parse_sort, {"x", "dim", "descending", "k", "variant", "values", "out", "idx", "indices"}},
    {"histc", parse_histc, {"x", "bins", "lo", "hi", "variant", "out"}},
    {"searchsorted", parse_search, {"sorted", "values", "right", "variant", "out"}},
    {"fft", parse_fft, {"kind", "x", "n", "dim", "inverse", "scale", "variant", "out", "n2"}},
    {"rows", parse_rows, {"fn", "x", "dim", "w", "b", "eps", "variant", "out"}},
    {"attention", parse_attention, {"q", "k", "v", "mask", "causal", "scale", "variant", "out"}},
    {"complex_op", parse_complex, {"fn", "a", "b", "out", "dim", "keepdim", "variant", "b_im"}},
    {NULL, NULL, {NULL}},
};

const ckl_opdesc *ckl_op_for(const char *name) {
  for (const ckl_opdesc *d = ckl_ops; d->name; ++d)
    if (strcmp(d->name, name) == 0) return d;
  const int ew = ck_ew_op_parse(name); /* time_op names elementwise ops directly: {op = "add", a = ..., b = ...} */
  if (ew >= 0 && ck_ew_op_arity(ew) == 1) return ckl_op_for("unary");
  if (ew >= 0 && ck_ew_op_arity(ew) == 2) return ckl_op_for("binary");
  return NULL;
}

// ---------------------------------------------------------------- the op functions

/* Parse with d, push the outputs (the given arrays, or new ones), run, return them. */
static int run_op(lua_State *L, const ckl_opdesc *d) {
  ckl_opcall oc;
  memset(&oc, 0, sizeof oc);
  d->parse(L, 1, &oc);
  const int top = lua_gettop(L);
  ck_call *c = &oc.call;
  if (oc.nout) {
    if (oc.out_at) lua_pushvalue(L, oc.out_at);
    c->out = oc.out_at ? ckl_op_array(L, -1) : ckl_op_push_array(L);
  }
  if (oc.want_idx) {
    if (oc.idx_at) lua_pushvalue(L, oc.idx_at);
    c->idx = oc.idx_at ? ckl_op_array(L, -1) : ckl_op_push_array(L);
  }
  ck_ran ran;
  ckl_host_ran(&ran);
  const bool nvtx = ck_nvtx_ops();
  if (nvtx) ckl_nvtx_op_push(L, ck_op_name(c) ? ck_op_name(c) : d->name);
  const ck_status st = ck_run(CKL_CTX(L), c, &ran);
  if (nvtx) (void)ck_nvtx_pop();
  if (st) return ckl_fail(L);
  ckl_set_last(L, &ran);
  ckl_gc_debt(L);
  return lua_gettop(L) - top;
}

static int l_matmul(lua_State *L) { return run_op(L, &ckl_ops[0]); }
static int l_reduce(lua_State *L) { return run_op(L, &ckl_ops[1]); }
static int l_transpose(lua_State *L) { return run_op(L, &ckl_ops[2]); }
static int l_unary(lua_State *L) { return run_op(L, &ckl_ops[3]); }
static int l_binary(lua_State *L) { return run_op(L, &ckl_ops[4]); }
static int l_index(lua_State *L) { return run_op(L, &ckl_ops[5]); }
static int l_cat(lua_State *L) { return run_op(L, &ckl_ops[6]); }
static int l_scan(lua_State *L) { return run_op(L, &ckl_ops[7]); }
static int l_sort(lua_State *L) { return run_op(L, &ckl_ops[8]); }
static int l_histc(lua_State *L) { return run_op(L, &ckl_ops[9]); }
static int l_search(lua_State *L) { return run_op(L, &ckl_ops[10]); }
static int l_fft(lua_State *L) { return run_op(L, &ckl_ops[11]); }
static int l_rows(lua_State *L) { return run_op(L, &ckl_ops[12]); }
static int l_attention(lua_State *L) { return run_op(L, &ckl_ops[13]); }
static int l_complex_op(lua_State *L) { return run_op(L, &ckl_ops[14]); }

/* core.join(list, dim, stacking [, dtype]) -> ck.cat / ck.stack's new array (ck_join, src/ops/join.c); dim is the
 * user's (1-based, negative from the end; stack: 1..ndim+1). Three findings return nil and what
 * lua/cukern/assembly.lua words with its `show` of the value: -1 (the list has a key other than 1..#list), 0 (dim is
 * not an integer), k (list[k] is not an array). Every other message is raised here or by ck_join, as "cat: ..." /
 * "stack: ..." (errors.call relabels it). The list is read once: no Lua value is made per input. */
static int l_join(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const bool stack = lua_toboolean(L, 3);
  const char *name = stack ? "stack" : "cat";
  const lua_Integer n = luaL_len(L, 1);
  lua_pushnil(L);
  while (lua_next(L, 1)) { /* a sequence: keys 1..n only */
    lua_pop(L, 1);
    const lua_Integer k = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
    if (k < 1 || k > n) {
      lua_pushnil(L);
      lua_pushinteger(L, -1);
      return 2;
    }
  }
  if (n < 1) return ckl_raise_at_user(L, lua_pushfstring(L, "%s: the list is empty; give at least one array", name));
  const ck_tensor *small[CK_CAT_MAX], **list = small;
  if (n > CK_CAT_MAX) list = (const ck_tensor **)lua_newuserdatauv(L, (size_t)n * sizeof *list, 0); /* (GC'd) */
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, 1, i);
    const ck_tensor *t = ckl_op_array(L, -1);
    lua_pop(L, 1); /* the list keeps it alive */
    if (!t) {
      lua_pushnil(L);
      lua_pushinteger(L, i);
      return 2;
    }
    if (!t->st) return ckl_raise_at_user(L, lua_pushfstring(L, "%s: list[%I] is a freed array", name, (LUAI_UACINT)i));
    list[i - 1] = t;
  }
  int isint = 0;
  const lua_Integer v = lua_type(L, 2) == LUA_TNUMBER ? lua_tointegerx(L, 2, &isint) : 0;
  if (!isint) {
    lua_pushnil(L);
    lua_pushinteger(L, 0);
    return 2;
  }
  const int nd = list[0]->ndim, top = stack ? nd + 1 : nd;
  if (nd == 0 && !stack)
    return ckl_raise_at_user(L, lua_pushfstring(L, "cat: list[1] is 0-d; cat joins arrays along a dim (ck.stack takes "
                                                   "0-d arrays)"));
  if (v == 0 || v > top || v < -top)
    return ckl_raise_at_user(L, lua_pushfstring(L, "%s: dim out of range: %I for %s%d-D %s (1..%d, or -%d..-1 from the end)",
                                                name, (LUAI_UACINT)v, stack ? "stacking " : "a ", nd,
                                                stack ? "arrays" : "array", top, top));
  const int dim = (int)(v < 0 ? v + top : v - 1);
  int dtype = -1;
  if (!lua_isnoneornil(L, 4)) {
    ck_dtype dt;
    char names[160];
    const char *s = luaL_checkstring(L, 4);
    if (!ck_dtype_parse(s, &dt))
      return ckl_raise_at_user(L, lua_pushfstring(L, "%s: unknown dtype '%s' (%s)", name, s, ck_dtype_list(names, sizeof names)));
    dtype = (int)dt;
  }
  ck_tensor *out = ckl_op_push_array(L);
  ck_ran ran;
  ckl_host_ran(&ran);
  ran.name[0] = 0;
  if (ck_join(CKL_CTX(L), out, list, (int64_t)n, dim, stack, dtype, &ran)) return ckl_fail(L);
  if (ran.name[0]) ckl_set_last(L, &ran); /* (nothing ran for an empty result) */
  ckl_gc_debt(L);                         /* after the launches: a collection here overlaps the device's work */
  return 1;
}

/* core.compact("nonzero" | "find" | "masked_select", a, mask) -> the new array (ck_compact, src/ops/op_index.c): the
 * count, the allocation and the selection in one call. lua/cukern/select.lua checked the arguments. */
static int l_compact(lua_State *L) {
  static const char *const FNS[] = {"nonzero", "find", "masked_select", NULL};
  const int which = luaL_checkoption(L, 1, NULL, FNS);
  const ck_tensor *a = which == 2 ? check_array(L, 2) : NULL, *mask = check_array(L, 3);
  ck_tensor *out = ckl_op_push_array(L);
  ck_ran ran;
  ckl_host_ran(&ran);
  if (ck_compact(CKL_CTX(L), which == 2 ? CK_IX_MASKED_SELECT : CK_IX_NONZERO, out, a, mask, which == 1, &ran))
    return ckl_fail(L);
  ckl_set_last(L, &ran);
  ckl_gc_debt(L);
  return 1;
}

/* Fields of the table on top of the stack (a NULL string sets nothing). */
static void set_str(lua_State *L, const char *k, const char *v) {
  if (!v) return;
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}
static void set_int(lua_State *L, const char *k, lua_Integer v) { lua_pushinteger(L, v); lua_setfield(L, -2, k); }
static void set_bool(lua_State *L, const char *k, bool v) { lua_pushboolean(L, v); lua_setfield(L, -2, k); }

/* An op table as Lua sees it: n records, row(L, op) filling record op (0-based) in id order. */
static int push_rows(lua_State *L, int n, void (*row)(lua_State *L, int op)) {
  lua_createtable(L, n, 0);
  for (int op = 0; op < n; ++op) {
    lua_createtable(L, 0, 4);
    row(L, op);
    lua_rawseti(L, -2, op + 1);
  }
  return 1;
}

/* core.ew_ops() -> the elementwise op table as Lua sees it (kernels/elementwise/ew_ops.def): {name, arity,
 * float_only, lua = "unary" | "binary" | nil} per op, in id order. lua/cukern/ops.lua generates ck.<name>,
 * a:<name>() and a:<name>_() for the rows with a `lua` kind; the others (copy, pows, clamp, pow, generators)
 * have hand-written wrappers. */
static void ew_row(lua_State *L, int op) {
  set_str(L, "name", ck_ew_op_name(op));
  set_int(L, "arity", ck_ew_op_arity(op));
  set_bool(L, "float_only", ck_ew_op_float_only(op));
  set_str(L, "lua", ck_ew_op_lua_kind(op)); /* (nil for the rows with hand-written wrappers) */
}
static int l_ew_ops(lua_State *L) { return push_rows(L, CK_EW_NOPS, ew_row); }

/* core.reduce_ops() -> the reduction table as Lua sees it (kernels/reduce/reduce_ops.def): {name, indexed
 * (the result is the indices), gives_indices (max/min can return them), float_only} per op, in id order.
 * lua/cukern/ops.lua makes ck.<name> and a:<name>() for every row. */
static void reduce_row(lua_State *L, int op) {
  set_str(L, "name", ck_reduce_op_name(op));
  set_bool(L, "indexed", ck_reduce_op_indexed(op));
  set_bool(L, "gives_indices", ck_reduce_op_gives_indices(op));
  set_bool(L, "float_only", ck_reduce_op_float_only(op));
}
static int l_reduce_ops(lua_State *L) { return push_rows(L, CK_RED_NOPS, reduce_row); }

const luaL_Reg ckl_ops_funcs[] = {{"matmul", l_matmul},     {"reduce", l_reduce}, {"transpose", l_transpose},
                                  {"unary", l_unary},       {"binary", l_binary}, {"ew_ops", l_ew_ops},
                                  {"reduce_ops", l_reduce_ops}, {"index", l_index},
                                  {"cat", l_cat},           {"join", l_join},   {"compact", l_compact}, {"scan", l_scan},
                                  {"sort", l_sort},             {"histc", l_histc},
                                  {"searchsorted", l_search},   {"fft", l_fft},
                                  {"rows", l_rows},             {"attention", l_attention},
                                  {"complex_op", l_complex_op},
                                  {NULL, NULL}};
