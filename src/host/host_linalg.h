/*
 * host_linalg.h — the linear-algebra oracle (host_linalg.c): one ck_la_job on host buffers, by LAPACKE loaded at
 * run time. The linalg layer (src/linalg/) validates and lays out every buffer; nothing is checked again here.
 */
#ifndef CK_HOST_LINALG_H
#define CK_HOST_LINALG_H

#include <stdbool.h>

#include "ck.h"
#include "linalg/linalg.h"

/* Whether LAPACKE could be loaded; *why (may be NULL) is the reason when not (a static string). */
bool ck_host_la_available(const char **why);
/* Run j over its batch; j->info[i] gets LAPACK's info per entry. Errors: LAPACKE missing, an argument it refused. */
ck_status ck_host_la(ck_ctx *ctx, ck_la_job *j);

#endif
