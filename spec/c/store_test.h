/*
 * store_test.h — the harness of the rendezvous store's test (store_test.c: the harness, main and the one-process
 * checks; store_test_ranks.c: the checks that fork one process per rank). Each check prints "ok - <name>" or
 * "not ok - <name>: <why>"; the program exits nonzero when any failed.
 */
#ifndef STORE_TEST_H
#define STORE_TEST_H

#include <stdbool.h>
#include <stddef.h>

#include "store.h"

/* A rank's body: opens the store itself (url, rank, world) and returns 0, or 1 with a reason in why. */
typedef int (*rank_fn)(const char *url, int rank, int world, char *why, size_t whyn);

/* Runs fn in `world` forked processes (rank i gets i), waits for them (killing them after `limit_s`), prints the
 * check's line. kind "file": url is a fresh directory; "tcp": tcp://127.0.0.1:<free port>. */
void run_ranks(const char *kind, const char *name, int world, double limit_s, rank_fn fn);
/* prints the line of a check that ran in this process: why NULL or "" is ok */
void report(const char *kind, const char *name, const char *why);

/* helpers for bodies */
extern double opt_timeout; /* a timeout long enough for work that must not time out */
double now_s(void);
void sleep_s(double s);
int fail(char *why, size_t whyn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool has(const char *hay, const char *needle);
/* opens (why: the error) */
ck_store *open_store(const char *url, int rank, int world, double timeout, char *why, size_t whyn);

/* the multi-process checks of one kind of store (store_test_ranks.c) */
void rank_checks(const char *kind);

#endif
