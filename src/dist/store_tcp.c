/*
 * store_tcp.c — the tcp store (tcp://host:port). Rank 0 keeps the keys in memory (store_map.c) and serves them
 * from a thread (store_server.c); here: opening either side, the client of ranks > 0, and the wire format
 * (store_int.h). A client sends one request and waits for its reply; a get waits on the server's side (the
 * request carries the wait in ms, the server answers NOTFOUND when it ends), and the client gives the server
 * 5 s more before it calls the server lost. Sockets are non-blocking and every read and write waits in poll()
 * up to a deadline, so no call can hang past it; EINTR is retried, partial reads and writes are continued, and
 * writes pass MSG_NOSIGNAL, so a closed peer is an error, never SIGPIPE. After a failed exchange the connection
 * is closed (its state is unknown) and later calls say it was lost.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "store_int.h"

#define SERVER_SLACK 5.0 /* seconds the client gives the server past a get's wait */

void cks_hdr_put(unsigned char h[CKS_HDR], int code, uint32_t len, uint64_t arg) {
  memset(h, 0, CKS_HDR);
  h[0] = (unsigned char)code;
  for (int i = 0; i < 4; i++) h[4 + i] = (unsigned char)(len >> (24 - 8 * i));
  for (int i = 0; i < 8; i++) h[8 + i] = (unsigned char)(arg >> (56 - 8 * i));
}

void cks_hdr_get(const unsigned char h[CKS_HDR], int *code, uint32_t *len, uint64_t *arg) {
  *code = h[0];
  *len = 0;
  *arg = 0;
  for (int i = 0; i < 4; i++) *len = (*len << 8) | h[4 + i];
  for (int i = 0; i < 8; i++) *arg = (*arg << 8) | h[8 + i];
}

int cks_fd_setup(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) return -1;
  int fdf = fcntl(fd, F_GETFD);
  if (fdf < 0 || fcntl(fd, F_SETFD, fdf | FD_CLOEXEC) != 0) return -1;
  return 0;
}

/* 1: fd is ready for `events` (or has an error the next call reports); 0: the deadline passed; -1: poll failed */
static int wait_fd(int fd, short events, double deadline) {
  for (;;) {
    double left = deadline - cks_now();
    int ms = left <= 0 ? 0 : left > 3600 ? 3600000 : (int)(left * 1000) + 1;
    struct pollfd p = {fd, events, 0};
    int r = poll(&p, 1, ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r > 0) return 1;
    if (cks_now() >= deadline) return 0;
  }
}

static const char LOST[] = "lost the connection to rank 0's store server";

static int send_all(int fd, const void *buf, size_t n, double deadline, char *why, size_t whyn) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w > 0) {
      p += w;
      n -= (size_t)w;
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      int r = wait_fd(fd, POLLOUT, deadline);
      if (r > 0) continue;
      cks_fmt(why, whyn, r == 0 ? "rank 0's store server took no request within the timeout (is it hung?)"
                                : "poll failed: %s", strerror(errno));
      return CKS_ERR;
    }
    cks_fmt(why, whyn, "%s (%s): did rank 0 exit or fail?", LOST, w == 0 ? "no progress" : strerror(errno));
    return CKS_ERR;
  }
  return CKS_OK;
}

/* reads n bytes into buf (NULL: reads and drops them) */
static int recv_all(int fd, void *buf, size_t n, double deadline, char *why, size_t whyn) {
  char sink[4096];
  char *p = buf;
  while (n > 0) {
    size_t want = p ? n : (n < sizeof sink ? n : sizeof sink);
    ssize_t r = recv(fd, p ? p : sink, want, 0);
    if (r > 0) {
      if (p) p += r;
      n -= (size_t)r;
      continue;
    }
    if (r == 0) {
      cks_fmt(why, whyn, "rank 0's store server closed the connection (did rank 0 exit, fail, or close its "
                         "store early?)");
      return CKS_ERR;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      int w = wait_fd(fd, POLLIN, deadline);
      if (w > 0) continue;
      cks_fmt(why, whyn, w == 0 ? "rank 0's store server did not answer within the timeout (is it hung?)"
                                : "poll failed: %s", strerror(errno));
      return CKS_ERR;
    }
    cks_fmt(why, whyn, "%s (%s): did rank 0 exit or fail?", LOST, strerror(errno));
    return CKS_ERR;
  }
  return CKS_OK;
}

/* One exchange: sends op/key/arg/val, reads the reply until `deadline`. The reply's body goes to out (cap bytes;
 * *outn its size; CKS_TOOSMALL when bigger, the rest read and dropped) or, for ERROR, into why. NOTFOUND is
 * CKS_TIMEOUT. Any failure of the exchange itself closes the connection. */
static int exchange(ck_store *s, int op, const char *key, uint64_t arg, const void *val, size_t n, double deadline,
                    uint64_t *rarg, void *out, size_t cap, size_t *outn, char *why, size_t whyn) {
  if (s->fd < 0) {
    cks_fmt(why, whyn, "%s earlier in this run; no more calls can work", LOST);
    return CKS_ERR;
  }
  size_t klen = strlen(key);
  unsigned char buf[CKS_HDR + CKS_FULLKEY_MAX + 1 + 4096];
  cks_hdr_put(buf, op, (uint32_t)klen, op == CKS_OP_SET ? (uint64_t)n : arg);
  memcpy(buf + CKS_HDR, key, klen);
  size_t head = CKS_HDR + klen;
  int inline_val = op == CKS_OP_SET && n <= 4096;
  if (inline_val && n) memcpy(buf + head, val, n);
  int rc = send_all(s->fd, buf, head + (inline_val ? n : 0), deadline, why, whyn);
  if (rc == CKS_OK && op == CKS_OP_SET && !inline_val) rc = send_all(s->fd, val, n, deadline, why, whyn);
  unsigned char h[CKS_HDR];
  if (rc == CKS_OK) rc = recv_all(s->fd, h, CKS_HDR, deadline, why, whyn);
  int st = 0;
  uint32_t len = 0;
  uint64_t a = 0;
  if (rc == CKS_OK) {
    cks_hdr_get(h, &st, &len, &a);
    if (st > CKS_ST_ERROR || len > CK_STORE_VALUE_MAX) {
      cks_fmt(why, whyn, "rank 0's store server sent a malformed reply (status %d, %u bytes): is something "
                         "else listening on that port?", st, (unsigned)len);
      rc = CKS_ERR;
    }
  }
  if (rc == CKS_OK && st == CKS_ST_ERROR) {
    char msg[512];
    size_t keep = len < sizeof msg - 1 ? len : sizeof msg - 1;
    rc = recv_all(s->fd, msg, keep, deadline, why, whyn);
    if (rc == CKS_OK) rc = recv_all(s->fd, NULL, len - keep, deadline, why, whyn);
    if (rc == CKS_OK) {
      msg[keep] = '\0';
      cks_fmt(why, whyn, "%s", msg);
      return CKS_ERR; /* the server's answer: the connection is fine */
    }
  }
  if (rc == CKS_OK) {
    if (rarg) *rarg = a;
    if (outn) *outn = len;
    if (len > cap) {
      rc = recv_all(s->fd, NULL, len, deadline, why, whyn);
      if (rc == CKS_OK) return CKS_TOOSMALL;
    } else {
      rc = recv_all(s->fd, out, len, deadline, why, whyn);
      if (rc == CKS_OK) return st == CKS_ST_NOTFOUND ? CKS_TIMEOUT : CKS_OK;
    }
  }
  close(s->fd); /* the exchange broke off: what the stream holds now is unknown */
  s->fd = -1;
  return CKS_ERR;
}

static int tcp_set(ck_store *s, const char *key, const void *val, size_t n, char *why, size_t whyn) {
  return exchange(s, CKS_OP_SET, key, 0, val, n, cks_now() + s->timeout_s, NULL, NULL, 0, NULL, why, whyn);
}

static int tcp_get(ck_store *s, const char *key, double deadline, void *val, size_t cap, size_t *n, char *why,
                   size_t whyn) {
  const double now = cks_now(), left = deadline - now;
  uint64_t ms = left <= 0 ? 0 : (uint64_t)(left * 1000) + 1;
  /* a deadline already past (0: "only look", as store_agree.c asks) still gives the server its slack from now to
   * answer: deadline + slack would be past too, and a reply not already there an error under any load */
  return exchange(s, CKS_OP_GET, key, ms, NULL, 0, (left > 0 ? deadline : now) + SERVER_SLACK, NULL, val, cap, n, why,
                  whyn);
}

static int tcp_add(ck_store *s, const char *key, int64_t delta, double deadline, int64_t *result, char *why,
                   size_t whyn) {
  uint64_t r = 0;
  int rc = exchange(s, CKS_OP_ADD, key, (uint64_t)delta, NULL, 0, deadline, &r, NULL, 0, NULL, why, whyn);
  if (rc == CKS_OK) *result = (int64_t)r; /* (two's complement both ways, as every host ckrun targets) */
  return rc;
}

static int tcp_del(ck_store *s, const char *key, char *why, size_t whyn) {
  return exchange(s, CKS_OP_DEL, key, 0, NULL, 0, cks_now() + s->timeout_s, NULL, NULL, 0, NULL, why, whyn);
}

static void tcp_close(ck_store *s, double deadline) {
  (void)deadline;
  if (s->fd >= 0) close(s->fd);
  s->fd = -1;
}

static const cks_backend tcp_backend = {"tcp", tcp_set, tcp_get, tcp_add, tcp_del, tcp_close};

/* one connection attempt to one address, until the deadline: the fd, or -1 with errno */
static int connect_one(const struct addrinfo *ai, double deadline) {
  int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
  if (fd < 0) return -1;
  if (cks_fd_setup(fd) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
  if (rc != 0 && (errno == EINPROGRESS || errno == EINTR)) {
    int w = wait_fd(fd, POLLOUT, deadline);
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (w == 0) {
      soerr = ETIMEDOUT;
    } else if (w < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0) {
      soerr = errno;
    }
    rc = soerr ? -1 : 0;
    errno = soerr;
  }
  if (rc != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  int one = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* latency only: failure is harmless */
  return fd;
}

static int tcp_connect(ck_store *s, const char *host, const char *port, char *why, size_t whyn) {
  double deadline = cks_now() + s->timeout_s, delay = 0.01;
  char last[256] = "no address";
  for (;;) {
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int g = getaddrinfo(host, port, &hints, &res);
    if (g != 0) {
      if (g != EAI_AGAIN) {
        cks_fmt(why, whyn, "cannot resolve the host \"%s\": %s", host, gai_strerror(g));
        return 1;
      }
      cks_fmt(last, sizeof last, "resolving \"%s\": %s", host, gai_strerror(g));
    }
    for (struct addrinfo *ai = res; ai && s->fd < 0; ai = ai->ai_next) {
      double step = cks_now() + 2.0; /* an unanswered SYN to one address does not use up the whole timeout */
      s->fd = connect_one(ai, step < deadline ? step : deadline);
      if (s->fd < 0) cks_fmt(last, sizeof last, "%s", strerror(errno));
    }
    if (res) freeaddrinfo(res);
    if (s->fd >= 0) {
      uint64_t hello = (uint64_t)s->rank << 32 | (uint64_t)s->world;
      char r[512] = "";
      if (exchange(s, CKS_OP_HELLO, CKS_MAGIC, hello, NULL, 0, deadline + SERVER_SLACK, NULL, NULL, 0, NULL, r,
                   sizeof r) == CKS_OK)
        return 0;
      cks_fmt(why, whyn, "rank 0's store server at %s:%s refused this rank: %s", host, port, r);
      if (s->fd >= 0) close(s->fd);
      s->fd = -1;
      return 1;
    }
    if (cks_now() >= deadline) {
      cks_fmt(why, whyn, "could not connect to rank 0's store server at %s:%s within %g s (last error: %s); is "
                         "rank 0 running, with this url?", host, port, s->timeout_s, last);
      return 1;
    }
    double left = deadline - cks_now();
    cks_sleep(delay < left ? delay : left);
    delay = delay * 2 > 0.5 ? 0.5 : delay * 2;
  }
}

int cks_tcp_open(ck_store *s, const char *host, const char *port, char *why, size_t whyn) {
  if (s->rank > 0) {
    if (tcp_connect(s, host, port, why, whyn) != 0) return 1;
    s->be = &tcp_backend;
    return 0;
  }
  s->map = cks_map_new();
  if (!s->map) {
    cks_fmt(why, whyn, "out of memory (or no mutex)");
    return 1;
  }
  if (cks_server_start(s->map, host, port, s->world, &s->server, why, whyn) != 0) {
    cks_map_free(s->map);
    s->map = NULL;
    return 1;
  }
  s->be = &cks_memory_backend; /* rank 0 reads and writes the map itself; mem_close stops the server */
  return 0;
}
