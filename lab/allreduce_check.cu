/*
 * allreduce_check.cu — correctness and speed of the all-reduce rungs (kernels/allreduce/) on one host with
 * several GPUs, one process. Links cudart only: `bash lab/allreduce.sh` builds and runs it.
 *
 *   allreduce_check [N] [--seed S]     checks, on GPUs 0..N-1 (default: all visible; N >= 2 wanted)
 *   allreduce_check [N] --bench        f32 sum at 1 MiB, 16 MiB, 256 MiB, 1 GiB per device: JSON lines
 *
 * Checks: peer access is enabled between every pair; then for device lists {0..N-1}, {N-1..0} (ordinals
 * reversed, fewer counts) and {0} (n = 1), every rung x dtype {f32, f64, i32, f16, bf16} x op {sum, prod,
 * max, min, avg (floats)} x count {0, 1, 7, 1000, 4099, 65537, 2^20 + 3} plus misaligned buffers (buf and
 * scratch one element past 16-byte alignment on every device, or on odd devices only; counts 1001, 65537):
 *   - each device's buf gets distinct seeded random values (sum/avg/max/min: [-1, 1), i32 full range so sums
 *     wrap; prod: +-[0.5, 1.5), i32 [-1000, 1000] so long products wrap), uploaded asynchronously on its own
 *     stream behind a spin kernel of a different length per device and case, after the buffer was set to a
 *     0xA5 pattern: a rung that does not wait for a peer's earlier work reads the pattern;
 *   - scratch is poisoned with 0xFF bytes (NaN for floats), 256-byte guards before and after buf with 0xA5;
 *   - the rung runs; each result is downloaded on its own stream and only that stream is synchronised (the
 *     contract: later work on stream[i] sees the result);
 *   - every element of every device is compared with a host reference in double, devices combined in
 *     order 0..n-1 (i32: exact, wrapping; max/min: exact; floats: |got - ref| <= n eps S for sum with S the sum
 *     of |x|, eps S + eps |ref| for avg, (n+1) eps P for prod with P the product of |x|; eps of the dtype);
 *     the guards must be intact;
 * and ck_allreduce_supports / the launchers must decline i32 avg, unknown dtypes and ops, n = 0 and n = 65
 * (cudaErrorInvalidValue, nothing queued). Prints "ok" / "not ok" lines (failures with the first bad
 * element), then "N passed, N failed"; exit 1 on any failure, 2 on a CUDA error outside a rung.
 * Bench: per rung and size, 3 warm-up calls, then 10 timed ones (all devices synchronised before each; CUDA
 * events on device 0's stream around the call, device 0's stream waiting for every other stream's end), the
 * median printed as {"variant", "gpus", "bytes", "ms", "algbw", "busbw"} (GB/s; busbw = algbw x 2 (n-1) / n).
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "allreduce/allreduce.h"
#include "half.h"

#define CK(call) ck_cuda((call), #call, __LINE__)
static void ck_cuda(cudaError_t e, const char *what, int line) {
  if (e == cudaSuccess) return;
  fprintf(stderr, "CUDA error %d (%s) at line %d: %s\n", (int)e, cudaGetErrorString(e), line, what);
  exit(2);
}

typedef int (*ar_fn)(const ck_ar_desc *);
struct Rung {
  const char *name;
  ar_fn fn;
};
static const Rung RUNGS[] = {{"gather", ck_allreduce_gather}, {"oneshot", ck_allreduce_oneshot},
                             {"ring", ck_allreduce_ring}};
static const ck_dtype DTYPES[] = {CK_F32, CK_F64, CK_I32, CK_F16, CK_BF16};
static const char *DT_NAME[] = {"f32", "f64", "i32", "f16", "bf16"};
static const char *OP_NAME[] = {"sum", "prod", "max", "min", "avg"};
static const size_t GUARD = 256;
static const int64_t MAX_COUNT = (1 << 20) + 3;

static size_t dt_size(int dt) { return dt == CK_F64 ? 8 : (dt == CK_F16 || dt == CK_BF16) ? 2 : 4; }
static double dt_eps(int dt) {
  return dt == CK_F32 ? 0x1p-23 : dt == CK_F64 ? 0x1p-52 : dt == CK_F16 ? 0x1p-10 : dt == CK_BF16 ? 0x1p-7 : 0;
}
static void encode(int dt, double v, void *p, int64_t i) {
  switch (dt) {
  case CK_F32: ((float *)p)[i] = (float)v; break;
  case CK_F64: ((double *)p)[i] = v; break;
  case CK_I32: ((int32_t *)p)[i] = (int32_t)(int64_t)v; break;
  case CK_F16: ((uint16_t *)p)[i] = ck_f64_to_f16(v); break;
  default: ((uint16_t *)p)[i] = ck_f64_to_bf16(v); break;
  }
}
static double decode(int dt, const void *p, int64_t i) {
  switch (dt) {
  case CK_F32: return ((const float *)p)[i];
  case CK_F64: return ((const double *)p)[i];
  case CK_I32: return ((const int32_t *)p)[i];
  case CK_F16: return ck_f16_to_f32(((const uint16_t *)p)[i]);
  default: return ck_bf16_to_f32(((const uint16_t *)p)[i]);
  }
}

__global__ void spin_kernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

/* One GPU's resources: its stream and event (the descriptor's), its buffers with guards, pinned staging. */
struct Dev {
  int ord;
  cudaStream_t st;
  cudaEvent_t ev, done;
  char *buf_base, *scr_base; /* GUARD + 8 + bytes + GUARD */
  char *h_in, *h_out;        /* pinned, the whole allocation */
  size_t alloc;
};

static void enable_peers(const std::vector<int> &ords) {
  for (int a : ords)
    for (int b : ords) {
      if (a == b) continue;
      int can = 0;
      CK(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can) {
        fprintf(stderr, "peer access %d -> %d not available: the rungs need it\n", a, b);
        exit(2);
      }
      CK(cudaSetDevice(a));
      const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
      else CK(e);
    }
}

static void dev_init(Dev &d, int ord, size_t bytes, bool staging) {
  d.ord = ord;
  d.alloc = 2 * GUARD + 8 + bytes;
  CK(cudaSetDevice(ord));
  CK(cudaStreamCreateWithFlags(&d.st, cudaStreamNonBlocking));
  CK(cudaEventCreateWithFlags(&d.ev, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&d.done, cudaEventDisableTiming));
  CK(cudaMalloc(&d.buf_base, d.alloc));
  CK(cudaMalloc(&d.scr_base, d.alloc));
  d.h_in = d.h_out = nullptr;
  if (staging) {
    CK(cudaMallocHost(&d.h_in, d.alloc));
    CK(cudaMallocHost(&d.h_out, d.alloc));
  }
}

static void dev_free(Dev &d) {
  CK(cudaSetDevice(d.ord));
  CK(cudaStreamDestroy(d.st));
  CK(cudaEventDestroy(d.ev));
  CK(cudaEventDestroy(d.done));
  CK(cudaFree(d.buf_base));
  CK(cudaFree(d.scr_base));
  if (d.h_in) CK(cudaFreeHost(d.h_in));
  if (d.h_out) CK(cudaFreeHost(d.h_out));
}

static ck_ar_desc make_desc(const std::vector<Dev *> &devs, int64_t count, int dt, int op, const std::vector<int> &off) {
  ck_ar_desc d;
  memset(&d, 0, sizeof d);
  d.n = (int)devs.size();
  for (int i = 0; i < d.n; ++i) {
    d.device[i] = devs[i]->ord;
    d.stream[i] = devs[i]->st;
    d.event[i] = devs[i]->ev;
    d.buf[i] = devs[i]->buf_base + GUARD + off[i] * dt_size(dt);
    d.scratch[i] = devs[i]->scr_base + GUARD + off[i] * dt_size(dt);
  }
  d.count = count;
  d.dtype = (ck_dtype)dt;
  d.op = op;
  return d;
}

static int g_pass = 0, g_fail = 0, g_test = 0;
static void report(bool ok, const char *what, const char *why) {
  ++g_test;
  if (ok) ++g_pass;
  else ++g_fail;
  printf("%s %d - %s%s%s\n", ok ? "ok" : "not ok", g_test, what, ok ? "" : ": ", ok ? "" : why);
}

/* Random input value of device j for element e (deterministic in seed, case, device). */
static double gen(std::mt19937_64 &rng, int dt, int op) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  if (dt == CK_I32) {
    if (op == CK_AR_PROD) return (double)(int64_t)(rng() % 2001) - 1000.0;
    return (double)(int32_t)(uint32_t)rng();
  }
  if (op == CK_AR_PROD) {
    const double m = 0.5 + (u(rng) + 1.0) * 0.5; /* [0.5, 1.5) */
    return (rng() & 1) ? -m : m;
  }
  return u(rng);
}

/* One case: returns through report(). */
static void run_case(const Rung &r, const std::vector<Dev *> &devs, int dt, int op, int64_t count,
                     const std::vector<int> &off, uint64_t seed, int late) {
  const int n = (int)devs.size();
  const size_t es = dt_size(dt), bytes = (size_t)count * es;
  char what[200];
  int offs = 0;
  for (int o : off) offs += o;
  snprintf(what, sizeof what, "%s %s %s n=%d (dev %d..%d) count=%lld%s", r.name, DT_NAME[dt], OP_NAME[op], n,
           devs[0]->ord, devs[n - 1]->ord, (long long)count,
           offs == 0 ? "" : offs == n ? " misaligned" : " mixed alignment");
  ck_ar_desc d = make_desc(devs, count, dt, op, off);
  // inputs: buf set to 0xA5, scratch to 0xFF, then the upload (device `late`: a spin kernel before it)
  std::vector<std::vector<double>> x(n, std::vector<double>((size_t)count));
  std::vector<size_t> used(n);
  for (int i = 0; i < n; ++i) {
    Dev &v = *devs[i];
    std::mt19937_64 rng(seed * 1000003u + (uint64_t)i * 7919u + (uint64_t)count);
    used[i] = 2 * GUARD + off[i] * es + bytes;
    char *in = v.h_in + GUARD + off[i] * es;
    memset(v.h_in, 0xA5, used[i]);
    for (int64_t e = 0; e < count; ++e) {
      encode(dt, gen(rng, dt, op), in, e);
      x[i][e] = decode(dt, in, e);
    }
    CK(cudaSetDevice(v.ord));
    CK(cudaMemsetAsync(v.buf_base, 0xA5, v.alloc, v.st));
    CK(cudaMemsetAsync(v.scr_base, 0xFF, v.alloc, v.st));
    if (i == late) {
      spin_kernel<<<1, 1, 0, v.st>>>(400000LL + 100000LL * i); /* ~0.2 ms */
      CK(cudaGetLastError());
    }
    CK(cudaMemcpyAsync(v.buf_base, v.h_in, used[i], cudaMemcpyHostToDevice, v.st));
  }
  // the rung, called with another current device than the one it sets last (it must restore it)
  const int cur_before = devs[(late + 1) % n]->ord;
  CK(cudaSetDevice(cur_before));
  const int rc = r.fn(&d);
  if (rc != 0) {
    char why[100];
    snprintf(why, sizeof why, "returned %d (%s)", rc, cudaGetErrorString((cudaError_t)rc));
    report(false, what, why);
    for (Dev *v : devs) {
      CK(cudaSetDevice(v->ord));
      CK(cudaDeviceSynchronize());
    }
    return;
  }
  int cur_after = -1;
  CK(cudaGetDevice(&cur_after));
  for (int i = 0; i < n; ++i) {
    Dev &v = *devs[i];
    CK(cudaSetDevice(v.ord));
    CK(cudaMemcpyAsync(v.h_out, v.buf_base, used[i], cudaMemcpyDeviceToHost, v.st));
  }
  char why[300] = "";
  bool ok = cur_after == cur_before;
  if (!ok) snprintf(why, sizeof why, "current device %d before the call, %d after it", cur_before, cur_after);
  const double eps = dt_eps(dt);
  for (int i = 0; i < n && ok; ++i) {
    Dev &v = *devs[i];
    CK(cudaStreamSynchronize(v.st));
    const char *out = v.h_out + GUARD + off[i] * es;
    for (size_t b = 0; b < GUARD + off[i] * es && ok; ++b)
      if ((unsigned char)v.h_out[b] != 0xA5) {
        ok = false;
        snprintf(why, sizeof why, "device %d: guard byte %zu before buf changed", v.ord, b);
      }
    for (size_t b = 0; b < GUARD && ok; ++b)
      if ((unsigned char)out[bytes + b] != 0xA5) {
        ok = false;
        snprintf(why, sizeof why, "device %d: guard byte %zu after buf changed", v.ord, b);
      }
    for (int64_t e = 0; e < count && ok; ++e) {
      const double got = decode(dt, out, e);
      double ref, tol = 0;
      if (dt == CK_I32) {
        uint32_t a = (uint32_t)(int32_t)x[0][e];
        for (int j = 1; j < n; ++j) {
          const uint32_t b = (uint32_t)(int32_t)x[j][e];
          if (op == CK_AR_SUM) a += b;
          else if (op == CK_AR_PROD) a *= b;
          else if (op == CK_AR_MAX) a = (int32_t)b > (int32_t)a ? b : a;
          else a = (int32_t)b < (int32_t)a ? b : a;
        }
        ref = (double)(int32_t)a;
      } else {
        double acc = x[0][e], s = fabs(x[0][e]), p = fabs(x[0][e]);
        for (int j = 1; j < n; ++j) {
          const double b = x[j][e];
          s += fabs(b);
          p *= fabs(b);
          if (op == CK_AR_SUM || op == CK_AR_AVG) acc += b;
          else if (op == CK_AR_PROD) acc *= b;
          else if (op == CK_AR_MAX) acc = std::max(acc, b);
          else acc = std::min(acc, b);
        }
        ref = op == CK_AR_AVG ? acc / n : acc;
        if (op == CK_AR_SUM) tol = n * eps * s;
        else if (op == CK_AR_AVG) tol = eps * s + eps * fabs(ref);
        else if (op == CK_AR_PROD) tol = (n + 1) * eps * p;
      }
      if (!(fabs(got - ref) <= tol)) {
        ok = false;
        snprintf(why, sizeof why, "device %d element %lld: got %.17g, want %.17g (tol %.3g)", v.ord, (long long)e,
                 got, ref, tol);
      }
    }
  }
  for (Dev *v : devs) {
    CK(cudaSetDevice(v->ord));
    CK(cudaDeviceSynchronize());
  }
  report(ok, what, why);
}

/* The declines: each must give a reason, and every launcher cudaErrorInvalidValue. */
static void check_declines(const std::vector<Dev *> &devs) {
  std::vector<int> off(devs.size(), 0);
  struct Bad {
    const char *what;
    int dt, op, n;
  } bad[] = {{"i32 avg", CK_I32, CK_AR_AVG, -1},
             {"unknown dtype", 77, CK_AR_SUM, -1},
             {"unknown op", CK_F32, 7, -1},
             {"n = 0", CK_F32, CK_AR_SUM, 0},
             {"n = 65", CK_F32, CK_AR_SUM, 65}};
  for (const Bad &b : bad) {
    ck_ar_desc d = make_desc(devs, 16, b.dt == 77 ? CK_F32 : b.dt, b.op, off);
    d.dtype = (ck_dtype)b.dt;
    if (b.n >= 0) d.n = b.n;
    bool ok = ck_allreduce_supports(&d) != NULL;
    for (const Rung &r : RUNGS) ok = ok && r.fn(&d) == (int)cudaErrorInvalidValue;
    char what[100];
    snprintf(what, sizeof what, "declines %s", b.what);
    report(ok, what, "accepted");
  }
  ck_ar_desc d = make_desc(devs, 16, CK_BF16, CK_AR_AVG, off);
  const char *why = ck_allreduce_supports(&d);
  report(why == NULL, "supports bf16 avg", why ? why : "");
}

static int check_all(int N, uint64_t seed) {
  std::vector<Dev> pool(N);
  for (int i = 0; i < N; ++i) dev_init(pool[i], i, (size_t)MAX_COUNT * 8, true);
  struct Config {
    std::vector<Dev *> devs;
    bool full;
  };
  std::vector<Config> cfgs;
  Config all, rev, one;
  for (int i = 0; i < N; ++i) all.devs.push_back(&pool[i]), rev.devs.push_back(&pool[N - 1 - i]);
  all.full = true;
  rev.full = false;
  one.devs.push_back(&pool[0]);
  one.full = false;
  cfgs.push_back(all);
  if (N > 1) cfgs.push_back(rev);
  cfgs.push_back(one);
  check_declines(all.devs);
  struct Count {
    int64_t count;
    int align; /* 0 aligned, 1 all devices one element off, 2 odd devices one element off */
  };
  const Count full_counts[] = {{0, 0},    {1, 0},     {7, 0},         {1000, 0}, {4099, 0},
                               {65537, 0}, {MAX_COUNT, 0}, {1001, 1}, {65537, 2}};
  const Count few_counts[] = {{7, 0}, {1000, 0}, {65537, 2}};
  int64_t ncase = 0;
  for (const Config &c : cfgs) {
    const int n = (int)c.devs.size();
    for (const Rung &r : RUNGS)
      for (int dt : DTYPES)
        for (int op = 0; op < 5; ++op) {
          if (op == CK_AR_AVG && dt == CK_I32) continue;
          const Count *cs = c.full ? full_counts : few_counts;
          const int nc = c.full ? 9 : 3;
          for (int k = 0; k < nc; ++k) {
            std::vector<int> off(n, 0);
            for (int i = 0; i < n; ++i)
              off[i] = cs[k].align == 1 ? 1 : (cs[k].align == 2 && (i & 1)) ? 1 : 0;
            run_case(r, c.devs, dt, op, cs[k].count, off, seed + (uint64_t)ncase, (int)(ncase % n));
            ++ncase;
          }
        }
  }
  for (Dev &d : pool) dev_free(d);
  printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}

static int bench(int N) {
  const size_t sizes[] = {1u << 20, 16u << 20, 256u << 20, 1u << 30};
  std::vector<Dev> pool(N);
  std::vector<Dev *> devs;
  for (int i = 0; i < N; ++i) {
    dev_init(pool[i], i, sizes[3], false);
    CK(cudaMemset(pool[i].buf_base, 0, pool[i].alloc));
    devs.push_back(&pool[i]);
  }
  cudaEvent_t t0, t1;
  CK(cudaSetDevice(pool[0].ord));
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  std::vector<int> off(N, 0);
  for (const Rung &r : RUNGS)
    for (size_t bytes : sizes) {
      ck_ar_desc d = make_desc(devs, (int64_t)(bytes / 4), CK_F32, CK_AR_SUM, off);
      std::vector<float> ms;
      for (int it = 0; it < 13; ++it) {
        for (Dev &v : pool) {
          CK(cudaSetDevice(v.ord));
          CK(cudaDeviceSynchronize());
        }
        CK(cudaSetDevice(pool[0].ord));
        CK(cudaEventRecord(t0, pool[0].st));
        const int rc = r.fn(&d);
        if (rc != 0) {
          fprintf(stderr, "%s at %zu bytes returned %d (%s)\n", r.name, bytes, rc,
                  cudaGetErrorString((cudaError_t)rc));
          return 1;
        }
        for (int i = 1; i < N; ++i) {
          CK(cudaSetDevice(pool[i].ord));
          CK(cudaEventRecord(pool[i].done, pool[i].st));
          CK(cudaSetDevice(pool[0].ord));
          CK(cudaStreamWaitEvent(pool[0].st, pool[i].done, 0));
        }
        CK(cudaSetDevice(pool[0].ord));
        CK(cudaEventRecord(t1, pool[0].st));
        CK(cudaEventSynchronize(t1));
        float m = 0;
        CK(cudaEventElapsedTime(&m, t0, t1));
        if (it >= 3) ms.push_back(m);
      }
      std::sort(ms.begin(), ms.end());
      const double med = (ms[4] + ms[5]) / 2, algbw = (double)bytes / (med * 1e-3) / 1e9;
      printf("{\"variant\":\"%s\",\"gpus\":%d,\"bytes\":%zu,\"ms\":%.4f,\"algbw\":%.2f,\"busbw\":%.2f}\n", r.name, N,
             bytes, med, algbw, algbw * 2.0 * (N - 1) / N);
      fflush(stdout);
    }
  CK(cudaEventDestroy(t0));
  CK(cudaEventDestroy(t1));
  for (Dev &d : pool) dev_free(d);
  return 0;
}

int main(int argc, char **argv) {
  int N = 0;
  bool do_bench = false;
  uint64_t seed = 12345;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--bench")) do_bench = true;
    else if (!strcmp(argv[a], "--seed") && a + 1 < argc) seed = strtoull(argv[++a], NULL, 10);
    else N = atoi(argv[a]);
  }
  int avail = 0;
  CK(cudaGetDeviceCount(&avail));
  if (N <= 0) N = avail;
  if (N < 1 || N > avail || N > CK_AR_MAX_DEV) {
    fprintf(stderr, "need 1..%d GPUs, asked for %d (visible: %d)\n", CK_AR_MAX_DEV, N, avail);
    return 2;
  }
  if (N < 2) printf("# only one GPU: the rungs are checked as no-ops (n = 1)\n");
  std::vector<int> ords;
  for (int i = 0; i < N; ++i) ords.push_back(i);
  enable_peers(ords);
  for (int i = 0; i < N; ++i) {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, i));
    printf("# device %d: %s, %d SMs\n", i, p.name, p.multiProcessorCount);
  }
  return do_bench ? bench(N) : check_all(N, seed);
}
