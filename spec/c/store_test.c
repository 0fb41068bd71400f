/*
 * store_test.c — the test of the rendezvous store (src/dist/store.h), in plain C: the harness that forks one
 * process per rank (run_ranks), main, and the checks that need one process only (urls, keys and values, the
 * generation prefix, a port in use, ck_dist_env). The checks with several ranks are in store_test_ranks.c.
 * Built and run by `make store-test` (mk/dist_store.mk), also under ASan/UBSan and valgrind.
 * Prints one line per check, "ok - <name>" or "not ok - <name>: <why>", and exits 1 if any failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store_test.h"

static int failures;
double opt_timeout = 20;

double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int fail(char *why, size_t whyn, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, whyn, fmt, ap);
  va_end(ap);
  return 1;
}

bool has(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }

ck_store *open_store(const char *url, int rank, int world, double timeout, char *why, size_t whyn) {
  ck_store *s = NULL;
  if (ck_store_open(url, rank, world, timeout, &s, why, whyn) != 0) return NULL;
  return s;
}

void report(const char *kind, const char *name, const char *why) {
  if (why && why[0]) {
    failures++;
    printf("not ok - %s: %s: %s\n", kind, name, why);
  } else {
    printf("ok - %s: %s\n", kind, name);
  }
  fflush(stdout);
}

// ---------------------------------------------------------------- the harness

static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char path[1024];
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

/* a url of a fresh store of this kind (dir: the directory to remove after, for "file") */
static void make_url(const char *kind, char *url, size_t n, char *dir, size_t dirn) {
  dir[0] = '\0';
  url[0] = '\0'; /* "memory": no url (world 1) */
  if (strcmp(kind, "file") == 0) {
    snprintf(dir, dirn, "%s/ckstore_test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) dir[0] = '\0';
    snprintf(url, n, "file://%s", dir);
  } else if (strcmp(kind, "tcp") == 0) {
    snprintf(url, n, "tcp://127.0.0.1:%d", free_port());
  }
}

void run_ranks(const char *kind, const char *name, int world, double limit_s, rank_fn fn) {
  char url[1100], dir[1024], why[2048] = "";
  make_url(kind, url, sizeof url, dir, sizeof dir);
  pid_t pid[16];
  int fds[16];
  fflush(stdout);
  for (int r = 0; r < world; r++) {
    int p[2];
    if (pipe(p) != 0) {
      report(kind, name, "pipe failed");
      return;
    }
    pid[r] = fork();
    if (pid[r] == 0) {
      close(p[0]);
      char msg[1024] = "";
      int rc = fn(url, r, world, msg, sizeof msg);
      if (rc != 0 && !msg[0]) snprintf(msg, sizeof msg, "failed (no reason given)");
      size_t len = strlen(msg);
      if (rc != 0 && write(p[1], msg, len) != (ssize_t)len) rc = 2;
      close(p[1]);
      exit(rc != 0); /* (exit, not _exit: LeakSanitizer checks each rank at exit) */
    }
    close(p[1]);
    fds[r] = p[0];
  }
  double end = now_s() + limit_s;
  int status[16], left = world;
  bool done[16] = {false};
  while (left > 0 && now_s() < end) {
    for (int r = 0; r < world; r++) {
      if (!done[r] && waitpid(pid[r], &status[r], WNOHANG) == pid[r]) {
        done[r] = true;
        left--;
      }
    }
    if (left) sleep_s(0.01);
  }
  for (int r = 0; r < world; r++) {
    char msg[1024] = "";
    if (!done[r]) {
      kill(pid[r], SIGKILL);
      waitpid(pid[r], &status[r], 0);
      snprintf(msg, sizeof msg, "hung past %g s", limit_s);
    } else if (WIFSIGNALED(status[r])) {
      snprintf(msg, sizeof msg, "killed by signal %d", WTERMSIG(status[r]));
    } else if (WEXITSTATUS(status[r]) != 0) {
      ssize_t k = read(fds[r], msg, sizeof msg - 1);
      msg[k > 0 ? k : 0] = '\0';
      if (k <= 0) snprintf(msg, sizeof msg, "exit status %d", WEXITSTATUS(status[r]));
    }
    close(fds[r]);
    size_t o = strlen(why);
    if (msg[0] && o < sizeof why) snprintf(why + o, sizeof why - o, "%srank %d: %s", o ? "; " : "", r, msg);
  }
  if (dir[0]) remove_dir(dir);
  report(kind, name, why);
}

// ---------------------------------------------------------------- one-process checks

static void check_urls(void) {
  static const struct {
    const char *url, *want;
    int rank, world;
    double timeout;
  } CASES[] = {
      {"http://x:1", "neither file:///abs/dir nor tcp://host:port", 0, 2, 5},
      {"file://relative/dir", "absolute", 0, 2, 5},
      {"tcp://127.0.0.1", "no port", 0, 2, 5},
      {"tcp://127.0.0.1:0", "port 0 is not allowed", 0, 2, 5},
      {"tcp://127.0.0.1:99999", "not a number in 1..65535", 0, 2, 5},
      {"tcp://:5000", "no host", 0, 2, 5},
      {"file:///tmp", "rank 2 is not in 0..1", 2, 2, 5},
      {"file:///tmp", "world size 0", 0, 0, 5},
      {"file:///tmp", "positive number of seconds", 0, 2, 0},
      {"", "no store url", 0, 2, 5},
      {"file:///nonexistent-parent/x", "cannot use the directory", 0, 2, 5},
  };
  char why[1024] = "";
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0] && !why[0]; i++) {
    char err[1024] = "";
    ck_store *s = NULL;
    int rc = ck_store_open(CASES[i].url, CASES[i].rank, CASES[i].world, CASES[i].timeout, &s, err, sizeof err);
    if (rc == 0 || s) {
      fail(why, sizeof why, "%s opened", CASES[i].url);
      ck_store_close(s);
    } else if (!has(err, CASES[i].want) || !has(err, "ck_store_open")) {
      fail(why, sizeof why, "%s: wanted \"%s\" in: %s", CASES[i].url, CASES[i].want, err);
    }
  }
  report("open", "bad urls, ranks and timeouts are refused, saying why", why);
}

/* keys, values, names and signatures are checked before any backend sees them */
static void check_keys(const char *kind) {
  char url[1100], dir[1024], why[1024] = "", err[1024] = "";
  make_url(kind, url, sizeof url, dir, sizeof dir);
  ck_store *s = open_store(url, 0, 1, opt_timeout, why, sizeof why);
  static const char *BAD[] = {"", "has space", "tab\there", "caf\xc3\xa9", "#agree/1/0", "a:b", "x\\y"};
  char long_key[CK_STORE_KEY_MAX + 2];
  memset(long_key, 'k', sizeof long_key - 1);
  long_key[sizeof long_key - 1] = '\0';
  for (size_t i = 0; s && i < sizeof BAD / sizeof BAD[0] + 2 && !why[0]; i++) {
    const char *k = i < sizeof BAD / sizeof BAD[0] ? BAD[i] : i == sizeof BAD / sizeof BAD[0] ? long_key : NULL;
    if (ck_store_set(s, k, "v", 1, err, sizeof err) == 0) fail(why, sizeof why, "set accepted a bad key");
    else if (!has(err, "ck_store_set") || !has(err, "the key")) fail(why, sizeof why, "message: %s", err);
    else if (ck_store_get(s, k, NULL, 0, NULL, err, sizeof err) == 0) fail(why, sizeof why, "get: bad key");
    else if (ck_store_add(s, k, 1, NULL, err, sizeof err) == 0) fail(why, sizeof why, "add: bad key");
    else if (ck_store_barrier(s, k, err, sizeof err) == 0) fail(why, sizeof why, "barrier: bad name");
  }
  long_key[CK_STORE_KEY_MAX] = '\0'; /* 200 characters: fine */
  size_t n = 0;
  char buf[8];
  if (s && !why[0]) {
    if (ck_store_set(s, long_key, "v", 1, err, sizeof err) != 0 ||
        ck_store_set(s, "Az_09.x/y-z", "", 0, err, sizeof err) != 0 ||
        ck_store_get(s, "Az_09.x/y-z", buf, sizeof buf, &n, err, sizeof err) != 0 || n != 0)
      fail(why, sizeof why, "good keys: %s", err);
  }
  char *big = calloc(1, CK_STORE_VALUE_MAX + 1);
  if (s && !why[0] && big) {
    if (ck_store_set(s, "big", big, CK_STORE_VALUE_MAX + 1, err, sizeof err) == 0 || !has(err, "1 MiB"))
      fail(why, sizeof why, "a value over 1 MiB: %s", err);
    else if (ck_store_set(s, "big", big, CK_STORE_VALUE_MAX, err, sizeof err) != 0)
      fail(why, sizeof why, "a value of 1 MiB: %s", err);
  }
  char *sig = calloc(1, CK_STORE_SIG_MAX + 2);
  if (s && !why[0] && sig) {
    memset(sig, 's', CK_STORE_SIG_MAX + 1);
    if (ck_store_agree(s, 1, sig, err, sizeof err) == 0 || !has(err, "4096"))
      fail(why, sizeof why, "a long signature: %s", err);
    else if (ck_store_set(NULL, "k", "v", 1, err, sizeof err) == 0 || !has(err, "NULL"))
      fail(why, sizeof why, "a NULL store: %s", err);
  }
  free(big);
  free(sig);
  ck_store_close(s);
  if (dir[0]) remove_dir(dir);
  report(kind, "keys, values, names and signatures are checked", why);
}

static void check_prefix(void) {
  char url[1100], dir[1024], why[1024] = "", err[1024] = "", buf[16];
  make_url("file", url, sizeof url, dir, sizeof dir);
  setenv("CUKERN_STORE_PREFIX", "genA", 1);
  ck_store *a = open_store(url, 0, 1, 0.3, why, sizeof why);
  setenv("CUKERN_STORE_PREFIX", "genB", 1);
  ck_store *b = open_store(url, 0, 1, 0.3, why, sizeof why);
  setenv("CUKERN_STORE_PREFIX", "bad prefix", 1);
  ck_store *c = open_store(url, 0, 1, 0.3, err, sizeof err);
  unsetenv("CUKERN_STORE_PREFIX");
  size_t n = 0;
  if (a && b) {
    if (ck_store_set(a, "id", "A", 1, why, sizeof why) != 0) {
    } else if (ck_store_get(b, "id", buf, sizeof buf, &n, err, sizeof err) == 0) {
      fail(why, sizeof why, "generation B read generation A's key");
    } else if (!has(err, "not set within")) {
      fail(why, sizeof why, "message: %s", err);
    } else if (ck_store_get(a, "id", buf, sizeof buf, &n, why, sizeof why) != 0 || n != 1 || buf[0] != 'A') {
      if (!why[0]) fail(why, sizeof why, "generation A lost its key");
    } else if (c) {
      fail(why, sizeof why, "a prefix with a space was accepted");
    }
  }
  ck_store_close(a);
  ck_store_close(b);
  ck_store_close(c);
  remove_dir(dir);
  report("file", "CUKERN_STORE_PREFIX keeps generations apart", why);
}

static void check_port_in_use(void) {
  char why[1024] = "", err[1024] = "", url[64];
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 1) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
    fail(why, sizeof why, "cannot listen: %s", strerror(errno));
  } else {
    snprintf(url, sizeof url, "tcp://127.0.0.1:%d", ntohs(a.sin_port));
    ck_store *s = open_store(url, 0, 2, 1, err, sizeof err);
    if (s) fail(why, sizeof why, "rank 0 served on a port in use");
    else if (!has(err, "in use")) fail(why, sizeof why, "message: %s", err);
    ck_store_close(s);
  }
  if (fd >= 0) close(fd);
  report("tcp", "a port in use is reported", why);
}

static void check_env(void) {
  static const char *VARS[] = {"CUKERN_RANK", "CUKERN_WORLD_SIZE", "CUKERN_LOCAL_RANK", "CUKERN_STORE",
                               "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                               "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"};
  static const struct {
    const char *set; /* "NAME=value NAME=value" */
    int rank, world, local;
    const char *url, *err; /* err: a part of the wanted error (NULL: success) */
  } CASES[] = {
      {"", 0, 1, 0, "", NULL},
      {"CUKERN_RANK=2 CUKERN_WORLD_SIZE=4 CUKERN_LOCAL_RANK=1 CUKERN_STORE=file:///tmp/x", 2, 4, 1, "file:///tmp/x",
       NULL},
      {"CUKERN_RANK=3 CUKERN_WORLD_SIZE=4 CUKERN_STORE=tcp://h:1", 3, 4, 3, "tcp://h:1", NULL},
      {"CUKERN_RANK=4 CUKERN_WORLD_SIZE=4 CUKERN_STORE=tcp://h:1", 0, 0, 0, NULL, "is not below"},
      {"CUKERN_RANK=x CUKERN_WORLD_SIZE=4", 0, 0, 0, NULL, "CUKERN_RANK=\"x\" is not a non-negative integer"},
      {"CUKERN_RANK=1 CUKERN_WORLD_SIZE=2.5", 0, 0, 0, NULL, "not a non-negative integer"},
      {"CUKERN_RANK=1", 0, 0, 0, NULL, "CUKERN_WORLD_SIZE is not"},
      {"CUKERN_RANK=1 CUKERN_WORLD_SIZE=2", 0, 0, 0, NULL, "CUKERN_STORE is not set"},
      {"OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=0", 0, 0, 0, NULL,
       "e.g. CUKERN_STORE=tcp://"},
      {"OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=0 CUKERN_STORE=tcp://h:2", 1, 2, 0,
       "tcp://h:2", NULL},
      {"PMI_RANK=5 PMI_SIZE=8 MPI_LOCALRANKID=1 CUKERN_STORE=tcp://h:3", 5, 8, 1, "tcp://h:3", NULL},
      {"PMI_RANK=0 PMI_SIZE=1", 0, 1, 0, "", NULL},
      {"CUKERN_STORE=file:///tmp/y", 0, 1, 0, "file:///tmp/y", NULL},
  };
  char why[1024] = "";
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0] && !why[0]; i++) {
    for (size_t v = 0; v < sizeof VARS / sizeof VARS[0]; v++) unsetenv(VARS[v]);
    char set[256];
    snprintf(set, sizeof set, "%s", CASES[i].set);
    for (char *save = NULL, *tok = strtok_r(set, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
      char *eq = strchr(tok, '=');
      *eq = '\0';
      setenv(tok, eq + 1, 1);
    }
    int rank = -1, world = -1, local = -1;
    char url[64] = "?", err[512] = "";
    int rc = ck_dist_env(&rank, &world, &local, url, sizeof url, err, sizeof err);
    if (CASES[i].err && (rc == 0 || !has(err, CASES[i].err)))
      fail(why, sizeof why, "[%s]: wanted an error with \"%s\", got: %s", CASES[i].set, CASES[i].err,
           rc ? err : "success");
    else if (!CASES[i].err && (rc != 0 || rank != CASES[i].rank || world != CASES[i].world ||
                               local != CASES[i].local || strcmp(url, CASES[i].url) != 0))
      fail(why, sizeof why, "[%s]: got rc %d rank %d world %d local %d url \"%s\" %s", CASES[i].set, rc, rank,
           world, local, url, err);
  }
  for (size_t v = 0; v < sizeof VARS / sizeof VARS[0]; v++) unsetenv(VARS[v]);
  report("env", "ck_dist_env reads ckrun's, Open MPI's and MPICH's variables", why);
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_DFL); /* the store must not need SIGPIPE ignored */
  if (getenv("STORE_TEST_TIMEOUT")) opt_timeout = atof(getenv("STORE_TEST_TIMEOUT"));
  const char *only = argc > 1 ? argv[1] : NULL; /* "file" or "tcp": that kind only */
  unsetenv("CUKERN_STORE_PREFIX");
  check_urls();
  check_env();
  static const char *KINDS[] = {"file", "tcp"};
  for (int k = 0; k < 2; k++) {
    if (only && strcmp(only, KINDS[k]) != 0) continue;
    check_keys(KINDS[k]);
    if (k == 0) check_prefix();
    else check_port_in_use();
    rank_checks(KINDS[k]);
  }
  check_keys("memory");
  printf("%s: %d check%s failed\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
