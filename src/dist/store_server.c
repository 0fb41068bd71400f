/*
 * store_server.c — rank 0's server of the tcp store: one pthread, one poll() over the listening socket, a wake-up
 * pipe and the clients (ranks 1..world-1). Requests are read into per-client buffers as bytes arrive (partial
 * reads are the normal case), answered from the map (store_map.c), and replies are written as the socket takes
 * them. A get of an absent key is parked until the key is set (by a client or by rank 0 itself, whose changes
 * write to the wake-up pipe) or its wait ends (then NOTFOUND). A client first says HELLO with the protocol's
 * magic, its rank and the world size; anything else, a second connection of one rank, or a malformed request
 * drops the connection. cks_server_stop waits until every rank has come and gone (or the deadline), then stops.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "store_int.h"

typedef struct client {
  int fd;
  int rank; /* -1 until HELLO */
  unsigned char hdr[CKS_HDR];
  size_t hgot;
  int op;
  uint32_t klen;
  uint64_t arg;
  unsigned char *body; /* key, then value (SET) */
  size_t blen, bgot;
  bool parked; /* a GET waiting for its key */
  char key[CKS_FULLKEY_MAX + 1];
  double park_end;
  unsigned char *out; /* the reply being written */
  size_t olen, ooff;
  bool close_after, dead;
} client;

struct cks_server {
  cks_map *map;
  int world, lfd, wake[2];
  pthread_t th;
  pthread_mutex_t mu; /* guards the fields below (the thread's own state needs none) */
  pthread_cond_t cv;
  bool stop, exited;
  int joined, live; /* ranks that ever said HELLO, connections open now */
  bool *ever, *now; /* by rank */
  client *cl;
  size_t ncl;
};

static void wake(void *ud) {
  cks_server *sv = ud;
  ssize_t w;
  while ((w = write(sv->wake[1], "w", 1)) < 0 && errno == EINTR) {}
  /* EAGAIN: the pipe is full, a wake-up is pending anyway */
}

static void reply(client *c, int st, uint64_t arg, const void *body, size_t n) {
  unsigned char *o = malloc(CKS_HDR + n);
  if (!o) {
    c->dead = true; /* the client sees the connection close */
    return;
  }
  cks_hdr_put(o, st, (uint32_t)n, arg);
  if (n) memcpy(o + CKS_HDR, body, n);
  free(c->out);
  c->out = o;
  c->olen = CKS_HDR + n;
  c->ooff = 0;
}

static void reply_error(client *c, const char *msg) { reply(c, CKS_ST_ERROR, 0, msg, strlen(msg)); }

static void hello(cks_server *sv, client *c) {
  char msg[256] = "";
  unsigned rank = (unsigned)(c->arg >> 32), world = (unsigned)(c->arg & 0xffffffffu);
  if (c->klen != strlen(CKS_MAGIC) || memcmp(c->body, CKS_MAGIC, c->klen) != 0) {
    c->dead = true; /* not a cukern store client: no reply */
    return;
  }
  pthread_mutex_lock(&sv->mu);
  if (world != (unsigned)sv->world)
    cks_fmt(msg, sizeof msg, "this rank's world size is %u but rank 0's is %d", world, sv->world);
  else if (rank < 1 || rank >= world)
    cks_fmt(msg, sizeof msg, "rank %u is not in 1..%d", rank, sv->world - 1);
  else if (sv->now[rank])
    cks_fmt(msg, sizeof msg, "rank %u is connected already (two processes with the same rank?)", rank);
  if (!msg[0]) {
    c->rank = (int)rank;
    sv->now[rank] = true;
    sv->live++;
    if (!sv->ever[rank]) sv->joined++;
    sv->ever[rank] = true;
    pthread_cond_broadcast(&sv->cv);
  }
  pthread_mutex_unlock(&sv->mu);
  if (msg[0]) {
    reply_error(c, msg);
    c->close_after = true;
  } else {
    reply(c, CKS_ST_OK, 0, NULL, 0);
  }
}

/* a GET's key is there: answer it; CKS_TIMEOUT when it is not */
static int answer_get(cks_server *sv, client *c) {
  unsigned char *val = NULL;
  size_t n = 0;
  char why[256] = "";
  int rc = cks_map_copy(sv->map, c->key, &val, &n, why, sizeof why);
  if (rc == CKS_OK) reply(c, CKS_ST_OK, 0, val, n);
  else if (rc == CKS_ERR) reply_error(c, why);
  free(val);
  return rc;
}

/* a whole request is in c (op, klen, arg, body) */
static void handle(cks_server *sv, client *c) {
  if (c->op == CKS_OP_HELLO) {
    if (c->rank >= 0) c->dead = true;
    else hello(sv, c);
    return;
  }
  if (c->rank < 0 || c->parked || c->olen > c->ooff) { /* no HELLO yet, or a request before the last reply */
    c->dead = true;
    return;
  }
  char why[512] = "";
  memcpy(c->key, c->body, c->klen);
  c->key[c->klen] = '\0';
  switch (c->op) {
  case CKS_OP_SET:
    if (cks_map_set(sv->map, c->key, c->body + c->klen, c->blen - c->klen, why, sizeof why) == CKS_OK)
      reply(c, CKS_ST_OK, 0, NULL, 0);
    else reply_error(c, why);
    break;
  case CKS_OP_GET:
    if (answer_get(sv, c) == CKS_TIMEOUT) {
      if (c->arg == 0) {
        reply(c, CKS_ST_NOTFOUND, 0, NULL, 0);
      } else {
        c->parked = true;
        c->park_end = cks_now() + (double)(c->arg > 86400000u ? 86400000u : c->arg) / 1000;
      }
    }
    break;
  case CKS_OP_ADD: {
    int64_t r = 0;
    if (cks_map_add(sv->map, c->key, (int64_t)c->arg, &r, why, sizeof why) == CKS_OK)
      reply(c, CKS_ST_OK, (uint64_t)r, NULL, 0);
    else reply_error(c, why);
    break;
  }
  case CKS_OP_DEL:
    if (cks_map_del(sv->map, c->key) == CKS_OK) reply(c, CKS_ST_OK, 0, NULL, 0);
    else reply_error(c, "cannot remove the key");
    break;
  default:
    c->dead = true;
  }
}

/* reads what the socket has; handles each request as it completes */
static void read_client(cks_server *sv, client *c) {
  while (!c->dead) {
    unsigned char *dst;
    size_t want;
    if (c->hgot < CKS_HDR) {
      dst = c->hdr + c->hgot;
      want = CKS_HDR - c->hgot;
    } else {
      dst = c->body + c->bgot;
      want = c->blen - c->bgot;
    }
    ssize_t r = want ? recv(c->fd, dst, want, 0) : 0;
    if (want && r < 0 && errno == EINTR) continue;
    if (want && r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (want && r <= 0) { /* closed (the rank exited or closed its store) or reset */
      c->dead = true;
      return;
    }
    if (c->hgot < CKS_HDR) {
      c->hgot += (size_t)r;
      if (c->hgot < CKS_HDR) continue;
      uint32_t klen;
      cks_hdr_get(c->hdr, &c->op, &klen, &c->arg);
      c->klen = klen;
      uint64_t vlen = c->op == CKS_OP_SET ? c->arg : 0;
      if (klen == 0 || klen > CKS_FULLKEY_MAX || vlen > CK_STORE_VALUE_MAX) {
        c->dead = true; /* malformed */
        return;
      }
      c->blen = klen + (size_t)vlen;
      c->bgot = 0;
      c->body = malloc(c->blen);
      if (!c->body) {
        c->dead = true;
        return;
      }
      continue; /* (blen > 0: klen is) */
    }
    c->bgot += (size_t)r;
    if (c->bgot < c->blen) continue;
    handle(sv, c);
    free(c->body);
    c->body = NULL;
    c->hgot = 0;
  }
}

static void flush_client(client *c) {
  while (!c->dead && c->ooff < c->olen) {
    ssize_t w = send(c->fd, c->out + c->ooff, c->olen - c->ooff, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (w <= 0) {
      c->dead = true;
      return;
    }
    c->ooff += (size_t)w;
  }
  if (c->ooff >= c->olen && c->close_after) c->dead = true;
}

static void drop(cks_server *sv, size_t i) {
  client *c = &sv->cl[i];
  close(c->fd);
  free(c->body);
  free(c->out);
  if (c->rank >= 0) {
    pthread_mutex_lock(&sv->mu);
    sv->now[c->rank] = false;
    sv->live--;
    pthread_cond_broadcast(&sv->cv);
    pthread_mutex_unlock(&sv->mu);
  }
  sv->cl[i] = sv->cl[--sv->ncl];
}

static void accept_clients(cks_server *sv) {
  size_t max = 2 * (size_t)sv->world + 8; /* (stray connections are dropped at HELLO) */
  for (;;) {
    int fd = accept(sv->lfd, NULL, NULL);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return; /* EAGAIN; or EMFILE and the like: the client retries, and times out naming this */
    }
    if (sv->ncl >= max || cks_fd_setup(fd) != 0) {
      close(fd);
      continue;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* latency only */
    client *c = &sv->cl[sv->ncl++];
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->rank = -1;
  }
}

static void *serve(void *arg) {
  cks_server *sv = arg;
  size_t max = 2 * (size_t)sv->world + 8;
  struct pollfd *pf = malloc((max + 2) * sizeof *pf);
  for (;;) {
    pthread_mutex_lock(&sv->mu);
    bool stop = sv->stop;
    pthread_mutex_unlock(&sv->mu);
    if (stop || !pf) break;
    double now = cks_now(), next = -1;
    pf[0] = (struct pollfd){sv->wake[0], POLLIN, 0};
    pf[1] = (struct pollfd){sv->lfd, POLLIN, 0};
    for (size_t i = 0; i < sv->ncl; i++) {
      client *c = &sv->cl[i];
      pf[2 + i] = (struct pollfd){c->fd, (short)(POLLIN | (c->ooff < c->olen ? POLLOUT : 0)), 0};
      if (c->parked && (next < 0 || c->park_end < next)) next = c->park_end;
    }
    int ms = next < 0 ? -1 : next <= now ? 0 : (int)((next - now) * 1000) + 1;
    int r = poll(pf, 2 + sv->ncl, ms);
    if (r < 0 && errno != EINTR) break; /* cannot serve: clients see the connections close */
    if (r > 0 && (pf[0].revents & POLLIN)) {
      char sink[64];
      while (read(sv->wake[0], sink, sizeof sink) > 0) {}
    }
    size_t n = sv->ncl; /* the clients polled (accept adds after them) */
    for (size_t i = 0; r > 0 && i < n; i++) {
      if (pf[2 + i].revents & (POLLIN | POLLHUP | POLLERR)) read_client(sv, &sv->cl[i]);
      if (pf[2 + i].revents & POLLOUT) flush_client(&sv->cl[i]);
    }
    if (r > 0 && (pf[1].revents & POLLIN)) accept_clients(sv);
    now = cks_now();
    for (size_t i = 0; i < sv->ncl; i++) { /* parked gets: the key came, or the wait ended */
      client *c = &sv->cl[i];
      if (c->parked && !c->dead) {
        int rc = answer_get(sv, c); /* (replies when the key is there) */
        if (rc == CKS_TIMEOUT && now >= c->park_end) reply(c, CKS_ST_NOTFOUND, 0, NULL, 0);
        if (rc != CKS_TIMEOUT || now >= c->park_end) c->parked = false;
      }
      if (c->ooff < c->olen) flush_client(c);
    }
    for (size_t i = sv->ncl; i-- > 0;)
      if (sv->cl[i].dead) drop(sv, i);
  }
  free(pf);
  for (size_t i = 0; i < sv->ncl; i++) { /* a get still waiting learns why it ends (one try; then the close) */
    client *c = &sv->cl[i];
    if (c->parked && !c->dead) {
      reply_error(c, "rank 0 closed its store (after waiting for every rank to close theirs, up to its timeout) "
                     "while this rank waited for the key");
      flush_client(c);
    }
  }
  while (sv->ncl > 0) drop(sv, sv->ncl - 1);
  pthread_mutex_lock(&sv->mu);
  sv->exited = true;
  pthread_cond_broadcast(&sv->cv);
  pthread_mutex_unlock(&sv->mu);
  return NULL;
}

static bool is_loopback(const struct sockaddr *a) {
  if (a->sa_family == AF_INET)
    return (ntohl(((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr) >> 24) == 127;
  if (a->sa_family == AF_INET6)
    return memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr, &in6addr_loopback,
                  sizeof in6addr_loopback) == 0;
  return false;
}

/* A loopback host: listen there only. Any other: on every interface (the host's own name may resolve to
 * 127.0.1.1, or to one of several interfaces, and the other ranks may come through another). */
static int listen_on(const char *host, const char *port, int backlog, char *why, size_t whyn) {
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  bool loop = false;
  if (getaddrinfo(host, port, &hints, &res) == 0) {
    loop = true;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) loop = loop && is_loopback(ai->ai_addr);
    if (!loop) freeaddrinfo(res);
  }
  if (!loop) {
    res = NULL;
    hints.ai_flags = AI_PASSIVE;
    int g = getaddrinfo(NULL, port, &hints, &res);
    if (g != 0) {
      cks_fmt(why, whyn, "cannot listen on port %s: %s", port, gai_strerror(g));
      return -1;
    }
  }
  int fd = -1, err = 0;
  for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    int one = 1;
    if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
        bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, backlog) == 0 && cks_fd_setup(fd) == 0)
      break;
    err = errno;
    if (fd >= 0) close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd < 0) {
    if (err == EADDRINUSE)
      cks_fmt(why, whyn, "port %s is in use (another run, or something else: pick another port, or let "
                         "bin/ckrun pick a free one)", port);
    else cks_fmt(why, whyn, "cannot listen on %s port %s: %s", loop ? host : "every interface,", port,
                 strerror(err));
  }
  return fd;
}

int cks_server_start(cks_map *m, const char *host, const char *port, int world, cks_server **out, char *why,
                     size_t whyn) {
  *out = NULL;
  cks_server *sv = calloc(1, sizeof *sv);
  if (!sv) {
    cks_fmt(why, whyn, "out of memory");
    return 1;
  }
  sv->map = m;
  sv->world = world;
  sv->lfd = sv->wake[0] = sv->wake[1] = -1;
  size_t max = 2 * (size_t)world + 8;
  sv->cl = calloc(max, sizeof *sv->cl);
  sv->ever = calloc((size_t)world, sizeof(bool));
  sv->now = calloc((size_t)world, sizeof(bool));
  bool mutex = false, cond = false;
  pthread_condattr_t ca;
  if (!sv->cl || !sv->ever || !sv->now) {
    cks_fmt(why, whyn, "out of memory");
    goto fail;
  }
  if ((sv->lfd = listen_on(host, port, world + 16, why, whyn)) < 0) goto fail;
  if (pipe(sv->wake) != 0 || cks_fd_setup(sv->wake[0]) != 0 || cks_fd_setup(sv->wake[1]) != 0) {
    cks_fmt(why, whyn, "cannot make the server's wake-up pipe: %s", strerror(errno));
    goto fail;
  }
  mutex = pthread_mutex_init(&sv->mu, NULL) == 0;
  if (mutex && pthread_condattr_init(&ca) == 0) {
    cond = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&sv->cv, &ca) == 0;
    pthread_condattr_destroy(&ca);
  }
  if (!cond) {
    cks_fmt(why, whyn, "cannot make a mutex or condition variable");
    goto fail;
  }
  cks_map_on_change(m, wake, sv);
  int e = pthread_create(&sv->th, NULL, serve, sv);
  if (e == 0) {
    *out = sv;
    return 0;
  }
  cks_map_on_change(m, NULL, NULL);
  cks_fmt(why, whyn, "cannot start the server thread: %s", strerror(e));
fail:
  if (cond) pthread_cond_destroy(&sv->cv);
  if (mutex) pthread_mutex_destroy(&sv->mu);
  if (sv->wake[0] >= 0) close(sv->wake[0]);
  if (sv->wake[1] >= 0) close(sv->wake[1]);
  if (sv->lfd >= 0) close(sv->lfd);
  free(sv->cl);
  free(sv->ever);
  free(sv->now);
  free(sv);
  return 1;
}

void cks_server_stop(cks_server *sv, double deadline) {
  if (!sv) return;
  pthread_mutex_lock(&sv->mu);
  while (!sv->exited && (sv->joined < sv->world - 1 || sv->live > 0)) {
    double left = deadline - cks_now();
    if (left <= 0) break;
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) break;
    double end = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + (left < 1 ? left : 1);
    ts.tv_sec = (time_t)end;
    ts.tv_nsec = (long)((end - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
    int e = pthread_cond_timedwait(&sv->cv, &sv->mu, &ts);
    if (e != 0 && e != ETIMEDOUT && e != EINTR) break;
  }
  sv->stop = true;
  pthread_mutex_unlock(&sv->mu);
  wake(sv);
  pthread_join(sv->th, NULL);
  cks_map_on_change(sv->map, NULL, NULL);
  pthread_cond_destroy(&sv->cv);
  pthread_mutex_destroy(&sv->mu);
  close(sv->wake[0]);
  close(sv->wake[1]);
  close(sv->lfd);
  free(sv->cl);
  free(sv->ever);
  free(sv->now);
  free(sv);
}
