/*
 * registry.c — from op names to the variant tables, and the one place that decides which variant runs.
 *
 * Each op's table lives beside its kernels (kernels/<op>/variants.c); this file only maps names and picks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/ck.h"
#include "../src/ew_ops.h"
#include "../src/reduce_ops.h"

static const struct {
  const char *name;
  const ck_variant *tab;
  const int *count;
} TABLES[] = {
    {"matmul", ck_matmul_variants, &ck_matmul_nvariants},
    {"reduce", ck_reduce_variants, &ck_reduce_nvariants},
    {"transpose", ck_transpose_variants, &ck_transpose_nvariants},
    {"elementwise", ck_ew_variants, &ck_ew_nvariants},
};

/* Op names that share a ladder. */
static const struct {
  const char *alias, *ladder;
} ALIASES[] = {
    {"gemm", "matmul"}, {"map", "elementwise"}, {"zip", "elementwise"}, {"contiguous", "transpose"},
};

const ck_variant *ck_variants(const char *name, int *count) {
  for (size_t i = 0; i < sizeof ALIASES / sizeof *ALIASES; ++i)
    if (strcmp(name, ALIASES[i].alias) == 0) name = ALIASES[i].ladder;
  if (ck_ew_op_parse(name) >= 0) name = "elementwise"; /* every elementwise op shares one ladder */
  if (ck_reduce_op_parse(name) >= 0) name = "reduce";
  for (size_t i = 0; i < sizeof TABLES / sizeof *TABLES; ++i)
    if (strcmp(name, TABLES[i].name) == 0) {
      *count = *TABLES[i].count;
      return TABLES[i].tab;
    }
  *count = 0;
  return NULL;
}

static const ck_variant *find(const ck_variant *tab, int n, const char *req) {
  char *end;
  long id = strtol(req, &end, 10);
  bool numeric = *req && *end == 0;
  for (int i = 0; i < n; ++i)
    if (numeric ? tab[i].id == id : strcmp(tab[i].name, req) == 0) return &tab[i];
  return NULL;
}

/* NULL if v can run desc in dtype dt, else why not. */
static const char *cannot(const ck_variant *v, ck_dtype dt, const void *desc) {
  if (v->flags & CK_VF_BENCH_ONLY) return "a bandwidth bound for benchmarks, not an implementation";
  if (!(v->dtypes & CK_DT_BIT(dt))) return "dtype not supported";
  return v->supports ? v->supports(desc) : NULL;
}

static void set_ran(ck_ran *ran, const ck_variant *v) {
  if (!ran) return;
  ran->id = v->id;
  snprintf(ran->name, sizeof ran->name, "%s", v->name);
}

const ck_variant *ck_pick_variant(ck_ctx *ctx, const char *op, const ck_variant *tab, int n,
                                  const char *requested, const int *preferred, ck_dtype dt,
                                  const void *desc, ck_ran *ran) {
  const char *why_req = NULL;
  const ck_variant *req = NULL;
  if (ran) ran->note[0] = 0;
  if (requested && *requested) {
    if (!(req = find(tab, n, requested))) {
      char known[512];
      size_t k = 0;
      known[0] = 0;
      for (int i = 0; i < n && k < sizeof known; ++i)
        if (!(tab[i].flags & CK_VF_BENCH_ONLY))
          k += (size_t)snprintf(known + k, sizeof known - k, "%s%d %s", i ? ", " : "", tab[i].id, tab[i].name);
      ck_error(ctx, CK_ERR_ARG, "%s: unknown variant '%s' (known: %s)", op, requested, known);
      return NULL;
    }
    if (req->flags & CK_VF_BENCH_ONLY) {
      ck_error(ctx, CK_ERR_ARG, "%s: variant '%s' is a bandwidth bound for benchmarks, not an implementation", op,
               req->name);
      return NULL;
    }
    if (!(why_req = cannot(req, dt, desc))) {
      set_ran(ran, req);
      return req;
    }
  }
  char reasons[512];
  size_t k = 0;
  reasons[0] = 0;
  for (const int *p = preferred; *p >= 0; ++p) {
    const ck_variant *v = NULL;
    for (int i = 0; i < n; ++i)
      if (tab[i].id == *p) v = &tab[i];
    if (!v) continue;
    const char *why = cannot(v, dt, desc);
    if (!why) {
      set_ran(ran, v);
      if (req && ran)
        snprintf(ran->note, sizeof ran->note, "asked for '%s': %s; ran '%s'", req->name, why_req, v->name);
      return v;
    }
    if (k < sizeof reasons) k += (size_t)snprintf(reasons + k, sizeof reasons - k, "%s%s: %s", k ? "; " : "", v->name, why);
  }
  ck_error(ctx, CK_ERR_UNSUPPORTED, "%s: no variant can run this case for %s (%s)", op, ck_dtype_name(dt), reasons);
  return NULL;
}
