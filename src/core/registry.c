/*
 * registry.c — the one place that decides which variant of a ladder runs.
 *
 * Each ladder's table lives beside its kernels (kernels/<op>/variants.c); src/ops/dispatch.c maps op names to
 * tables and calls the picker. This file sits below the ops: it knows tables, dtypes and supports(), and
 * includes nothing from src/ but the error reporting of ck.h.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck.h"
#include "complex/complex.h"
#include "fft/fft.h"

const ck_variant *ck_find_variant(const ck_variant *tab, int n, const char *req) {
  if (!req || !*req) return NULL;
  char *end;
  const long id = strtol(req, &end, 10);
  const bool numeric = *end == 0;
  for (int i = 0; i < n; ++i)
    if (numeric ? tab[i].id == id : strcmp(tab[i].name, req) == 0) return &tab[i];
  return NULL;
}

static const char NO_DTYPE[] = "dtype not supported";

/* NULL if v can run desc in dtype dt, else why not. */
static const char *cannot(const ck_variant *v, ck_dtype dt, const void *desc) {
  if (!(v->dtypes & CK_DT_BIT(dt))) return NO_DTYPE;
  return v->supports ? v->supports(desc) : NULL;
}

// ---------------------------------------------------------------- the preference orders

/* Every ladder's orders, derived from the RANKS column of its rung table (kernels/<op>/rungs.def): order k
 * lists the ids of the rows whose rank[k] is 1, 2, 3 ... (0: not in it), so a new rung joins an order by its
 * rank alone. Built once, when the first context is made (ck_registry_init); read-only after. */
static const struct {
  const ck_variant *tab;
  const int *n;
  int col;
  int *order;
} ORDERS[] = {
    {ck_matmul_variants, &ck_matmul_nvariants, 0, ck_matmul_preferred},
    {ck_matmul_variants, &ck_matmul_nvariants, 1, ck_matmul_preferred_tma},
    {ck_matmul_variants, &ck_matmul_nvariants, 2, ck_matmul_preferred_tiny},
    {ck_reduce_variants, &ck_reduce_nvariants, 0, ck_reduce_preferred},
    {ck_reduce_variants, &ck_reduce_nvariants, 1, ck_reduce_preferred_full},
    {ck_reduce_variants, &ck_reduce_nvariants, 2, ck_reduce_preferred_tiny},
    {ck_reduce_variants, &ck_reduce_nvariants, 3, ck_reduce_preferred_small},
    {ck_transpose_variants, &ck_transpose_nvariants, 0, ck_transpose_preferred},
    {ck_ew_variants, &ck_ew_nvariants, 0, ck_ew_preferred},
    {ck_index_variants, &ck_index_nvariants, 0, ck_index_preferred},
    {ck_scan_variants, &ck_scan_nvariants, 0, ck_scan_preferred},
    {ck_scan_variants, &ck_scan_nvariants, 1, ck_scan_preferred_full},
    {ck_scan_variants, &ck_scan_nvariants, 2, ck_scan_preferred_cols},
    {ck_sort_variants, &ck_sort_nvariants, 0, ck_sort_preferred},
    {ck_sort_variants, &ck_sort_nvariants, 1, ck_sort_preferred_topk},
    {ck_sort_variants, &ck_sort_nvariants, 2, ck_sort_preferred_values},
    {ck_hist_variants, &ck_hist_nvariants, 0, ck_hist_preferred},
    {ck_search_variants, &ck_search_nvariants, 0, ck_search_preferred},
    {ck_fft_variants, &ck_fft_nvariants, 0, ck_fft_preferred},
    {ck_rows_variants, &ck_rows_nvariants, 0, ck_rows_preferred},
    {ck_attn_variants, &ck_attn_nvariants, 0, ck_attn_preferred},
    {ck_complex_variants, &ck_complex_nvariants, 0, ck_complex_preferred},
};

static void build_orders(void) {
  for (size_t o = 0; o < sizeof ORDERS / sizeof ORDERS[0]; ++o) {
    int k = 0;
    for (int r = 1; r <= 255 && k < CK_ORDER_CAP - 1; ++r)
      for (int i = 0; i < *ORDERS[o].n && k < CK_ORDER_CAP - 1; ++i)
        if (ORDERS[o].tab[i].rank[ORDERS[o].col] == r) ORDERS[o].order[k++] = ORDERS[o].tab[i].id;
    ORDERS[o].order[k] = -1;
  }
}

void ck_registry_init(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  (void)pthread_once(&once, build_orders);
}

// ---------------------------------------------------------------- picking a rung

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
    if (!(req = ck_find_variant(tab, n, requested))) {
      char known[512];
      size_t k = 0;
      known[0] = 0;
      for (int i = 0; i < n && k < sizeof known; ++i)
        k += (size_t)snprintf(known + k, sizeof known - k, "%s%d %s", i ? ", " : "", tab[i].id, tab[i].name);
      ck_error(ctx, CK_ERR_ARG, "%s: unknown variant '%s' (known: %s)", op, requested, known);
      return NULL;
    }
    if (!(why_req = cannot(req, dt, desc))) {
      set_ran(ran, req);
      return req;
    }
  }
  /* the reasons of the rungs that take the dtype but declined the case, then the names of those that do not take it */
  char reasons[768], other[512];
  size_t k = 0, ko = 0;
  reasons[0] = other[0] = 0;
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
    if (why == NO_DTYPE) {
      if (ko < sizeof other) ko += (size_t)snprintf(other + ko, sizeof other - ko, "%s%s", ko ? ", " : "", v->name);
    } else if (k < sizeof reasons) {
      k += (size_t)snprintf(reasons + k, sizeof reasons - k, "%s%s: %s", k ? "; " : "", v->name, why);
    }
  }
  ck_error(ctx, CK_ERR_UNSUPPORTED, "%s: no variant can run this case for %s (%s%s%s%s)", op, ck_dtype_name(dt), reasons,
           k && ko ? "; " : "", ko ? "not taking it: " : "", other);
  return NULL;
}
