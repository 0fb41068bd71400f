/*
 * store.h — the rendezvous store of several cukern processes (one per GPU; ck.dist.init{}): a small key-value
 * store every rank reaches, used to share the NCCL unique id (128 bytes), count, wait at barriers and, in
 * checked mode, agree on each collective before it runs. Plain C11 + POSIX (threads, sockets): no CUDA, no Lua,
 * nothing else of cukern, so it builds and is tested alone (spec/c/store_test.c, `make store-test`).
 *
 * Every function returns 0 on success and nonzero on failure with a message in err (errn bytes, always
 * NUL-terminated; err may be NULL). Messages name the call, the key, this rank, the world size and the url.
 * Nothing here prints, exits or raises a signal (writes to sockets use MSG_NOSIGNAL); calls retry on EINTR.
 *
 * Kinds of store (the url):
 *   "file:///abs/dir"   a directory every rank sees (local, or a shared file system). A key is a file, written
 *                       to a temporary name and renamed into place, so a reader sees all of a value or none.
 *                       The directory must hold ONE run: bin/ckrun makes a fresh one (mktemp -d) per run and
 *                       removes it after. Where a directory is reused, set CUKERN_STORE_PREFIX (below) to a new
 *                       value per run. The directory is created if missing (its parent must exist).
 *   "tcp://host:port"   rank 0 serves the keys on `port` (1..65535; 0 is refused: every rank must know it) from a
 *                       thread of its own, and reads and writes them in memory; the other ranks connect to
 *                       host:port, retrying until the timeout. A loopback host is served on loopback only,
 *                       any other host on every interface of rank 0's machine.
 *   "" or NULL          only for world == 1: a store in this process's memory.
 *
 * CUKERN_STORE_PREFIX (read by ck_store_open, if set): a "generation" put in front of every key, so that runs
 * sharing a directory or a server do not see each other's keys: [A-Za-z0-9_.-], at most 48 characters.
 *
 * Keys: 1..200 characters of [A-Za-z0-9_./-]. Values: 0..1 MiB of any bytes. A key may be set again (the new
 * value replaces the old one atomically). One ck_store is used by one thread at a time.
 */
#ifndef CK_STORE_H
#define CK_STORE_H

#include <stddef.h>
#include <stdint.h>

#define CK_STORE_KEY_MAX 200            /* characters in a key (and a barrier's name) */
#define CK_STORE_VALUE_MAX (1u << 20)   /* bytes in a value */
#define CK_STORE_SIG_MAX 4096           /* bytes in a ck_store_agree signature */
#define CK_STORE_PREFIX_MAX 48          /* characters in CUKERN_STORE_PREFIX */

typedef struct ck_store ck_store;

/* Opens this rank's end of the store (rank 0 of a tcp store starts serving here). timeout_s (> 0): every
 * blocking call gives up after it, with a message naming the key, the rank and the url. */
int ck_store_open(const char *url, int rank, int world, double timeout_s, ck_store **out, char *err, size_t errn);

int ck_store_set(ck_store *s, const char *key, const void *val, size_t n, char *err, size_t errn);

/* Waits until key exists (or the timeout); *n = the size of its value (also when it fails for cap < size, which
 * it says; n may be NULL). */
int ck_store_get(ck_store *s, const char *key, void *val, size_t cap, size_t *n, char *err, size_t errn);

/* Remove key (an absent key is fine). Only for keys no rank will read again (pcomm.c removes its own values of a
 * collective two steps back: every other rank has read them by then). */
int ck_store_del(ck_store *s, const char *key, char *err, size_t errn);

/* An atomic counter: adds delta to the key's value (0 if it does not exist) and returns the sum in *result (may be
 * NULL). The value is kept as decimal text ("42"), so ck_store_get reads it too; adding to a key that holds
 * anything else fails, saying so. */
int ck_store_add(ck_store *s, const char *key, int64_t delta, int64_t *result, char *err, size_t errn);

/* Returns when all `world` ranks have called it with the same name (names follow the key rules). Every rank calls
 * the store's barriers in the same order; a rank at another barrier, or one that never arrives within the timeout,
 * is named in the error every rank gets. */
int ck_store_barrier(ck_store *s, const char *name, char *err, size_t errn);

/* Checked mode for collectives: every rank calls this with the same seq number and a signature (at most
 * CK_STORE_SIG_MAX bytes; e.g. "all_reduce f32[1048576] sum"). If any rank passed a different signature for that
 * seq, every rank gets an error naming the seq, its own rank and signature, and the first rank (in rank order)
 * whose signature differs from its own, with that signature. Never waits past the timeout: a rank that never
 * arrives is named. Each call must use a new seq (a counter); the keys of a seq are removed by the next call. */
int ck_store_agree(ck_store *s, uint64_t seq, const char *sig, char *err, size_t errn);

/* Closes this rank's end; NULL is fine. Rank 0 of a tcp store first waits (at most the timeout) until every other
 * rank has connected and disconnected, so that no rank loses the server while it still needs it, then stops the
 * server thread. The file store leaves its directory (bin/ckrun removes it). */
void ck_store_close(ck_store *s);

/* Where this process is in the run, from its environment, first match wins:
 *   CUKERN_RANK, CUKERN_WORLD_SIZE (both), CUKERN_LOCAL_RANK (else = rank), CUKERN_STORE    (bin/ckrun sets them)
 *   OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK (else = rank)  (Open MPI's mpirun)
 *   PMI_RANK, PMI_SIZE, MPI_LOCALRANKID (else = rank)                                    (MPICH's Hydra)
 *   none of them: rank 0, world 1, local rank 0.
 * The url is CUKERN_STORE; when world > 1 and it is not set, the error says to set it (e.g. tcp://<rank 0's
 * host>:29500); when world == 1 it may be empty. Errors: values that are not integers, rank >= world, world < 1,
 * a url longer than urln - 1. (bin/ckrun --timeout S exports CUKERN_STORE_TIMEOUT=S for the binding to pass as
 * timeout_s; it is not read here.) */
int ck_dist_env(int *rank, int *world, int *local_rank, char *store_url, size_t urln, char *err, size_t errn);

#endif
