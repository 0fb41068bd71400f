/*
 * rtc.c — run-time kernels: CUDA C++ source string -> NVRTC -> CUBIN -> cudaLibrary -> launch on the
 * context's stream. No build step: users write kernels in a Lua string, and ck.map generates them.
 *
 * Build (ck_rtc_build) and load (ck_rtc_load) are separate, so that compiling works without a GPU (for a
 * given architecture: specs check generated code here) and so that images go through a disk cache:
 *   key     two 64-bit FNV-1a hashes over (source, entry, options, NVRTC version, architecture, format)
 *   entry   <dir>/<key>.ckbin: a header (magic, format, key, sizes, checksum of the payload) + CUBIN, PTX,
 *           lowered entry name. A short, damaged or foreign file fails the checks and is rebuilt.
 *   writes  to <key>.tmp.<pid>.<n> and rename(2): a reader sees the old file or the whole new one.
 *   dir     CUKERN_CACHE_DIR, else $XDG_CACHE_HOME/cukern, else ~/.cache/cukern; "off" disables it. A directory
 *           that cannot be created or written means no cache, never an error.
 * Every program gets the header "cukern.h" pre-included: CkArray<T>, the array descriptor that raw kernels
 * take for "f32[]" arguments (pointer, numel, ndim, shape, strides) with index helpers.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ck_internal.h"
#include "ck_map.h"

struct ck_rtc_kernel {
  cudaLibrary_t lib;
  cudaKernel_t kern;
  char name[128];
  char *ptx;
  bool have_info; /* info holds the attributes at info.block / info.dynamic_smem (the last asked for) */
  ck_kinfo info;
};

// ---------------------------------------------------------------- the header every program sees

static const char CK_HEADER_NAME[] = "cukern.h";
static const char CK_HEADER[] =
    "// cukern.h: array descriptors for run-time kernels (pre-included by cukern)\n"
    "#pragma once\n"
    "#define CK_MAX_DIMS 8\n"
    "template <typename T> struct CkArray {\n"
    "  T *data;            // first element (the view's offset applied)\n"
    "  long long numel;\n"
    "  int ndim, pad_;\n"
    "  long long shape[CK_MAX_DIMS];\n"
    "  long long strides[CK_MAX_DIMS]; // in elements; 0 on broadcast dims\n"
    "  // element offset of the i-th element in row-major (logical) order\n"
    "  __device__ __forceinline__ long long offset(long long i) const {\n"
    "    long long off = 0;\n"
    "    for (int d = ndim - 1; d > 0; --d) { long long c = i % shape[d]; i /= shape[d]; off += c * strides[d]; }\n"
    "    return ndim > 0 ? off + i * strides[0] : 0;\n"
    "  }\n"
    "  __device__ __forceinline__ T &operator[](long long i) const { return data[offset(i)]; }\n"
    "  __device__ __forceinline__ T &operator()(long long i) const { return data[i * strides[0]]; }\n"
    "  __device__ __forceinline__ T &operator()(long long i, long long j) const {\n"
    "    return data[i * strides[0] + j * strides[1]]; }\n"
    "  __device__ __forceinline__ T &operator()(long long i, long long j, long long k) const {\n"
    "    return data[i * strides[0] + j * strides[1] + k * strides[2]]; }\n"
    "  __device__ __forceinline__ long long size(int d) const { return shape[d]; }\n"
    "  __device__ __forceinline__ bool contiguous() const {\n"
    "    long long s = 1;\n"
    "    for (int d = ndim - 1; d >= 0; --d) { if (shape[d] != 1 && strides[d] != s) return false; s *= shape[d]; }\n"
    "    return true;\n"
    "  }\n"
    "};\n";

const char *ck_rtc_header(void) { return CK_HEADER; }

// ---------------------------------------------------------------- the disk cache

static char g_cache_dir[1024];
static int g_cache_set; /* 0: from the environment; 1: set by ck_rtc_set_cache_dir */

void ck_rtc_set_cache_dir(const char *dir) {
  if (!dir) {
    g_cache_set = 0;
    return;
  }
  snprintf(g_cache_dir, sizeof g_cache_dir, "%s", dir);
  g_cache_set = 1;
}

const char *ck_rtc_cache_dir(ck_ctx *ctx, char *buf, size_t n) {
  (void)ctx;
  const char *env;
  if (g_cache_set) snprintf(buf, n, "%s", g_cache_dir);
  else if ((env = getenv("CUKERN_CACHE_DIR")) && *env) snprintf(buf, n, "%s", env);
  else if ((env = getenv("XDG_CACHE_HOME")) && *env) snprintf(buf, n, "%s/cukern", env);
  else if ((env = getenv("HOME")) && *env) snprintf(buf, n, "%s/.cache/cukern", env);
  else buf[0] = 0;
  if (!strcmp(buf, "off")) buf[0] = 0;
  return buf;
}

static int mkdirs(const char *path) {
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *p = tmp + 1; *p; ++p)
    if (*p == '/') {
      *p = 0;
      if (mkdir(tmp, 0755) && errno != EEXIST) return -1;
      *p = '/';
    }
  if (mkdir(tmp, 0755) && errno != EEXIST) return -1;
  return 0;
}

static uint64_t fnv64(const void *p, size_t n, uint64_t h) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; ++i) h = (h ^ s[i]) * 0x100000001b3ULL;
  return h;
}

#define CKBIN_MAGIC "CKRTC001"
typedef struct ckbin_hdr {
  char magic[8];
  char key[32];
  uint64_t cubin, ptx, lowered, sum;
} ckbin_hdr;

static void cache_path(char *buf, size_t n, const char *dir, const char *key) {
  snprintf(buf, n, "%s/%s.ckbin", dir, key);
}

/* 1: loaded; 0: absent; -1: present but damaged. */
static int cache_read(const char *path, const char *key, ck_rtc_image *img) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  ckbin_hdr h;
  int r = -1;
  char *buf = NULL;
  long size;
  if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, CKBIN_MAGIC, 8) || memcmp(h.key, key, 32)) goto done;
  if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0) goto done;
  uint64_t payload = h.cubin + h.ptx + h.lowered;
  if (h.cubin == 0 || h.lowered == 0 || payload > (1ull << 31) || (uint64_t)size != sizeof h + payload) goto done;
  if (fseek(f, (long)sizeof h, SEEK_SET)) goto done;
  if (!(buf = malloc(payload + 2))) goto done;
  if (fread(buf, 1, payload, f) != payload) goto done;
  if (fnv64(buf, payload, 0xcbf29ce484222325ULL) != h.sum) goto done;
  img->cubin = malloc(h.cubin);
  img->ptx = h.ptx ? malloc(h.ptx + 1) : NULL;
  img->lowered = malloc(h.lowered + 1);
  if (!img->cubin || (h.ptx && !img->ptx) || !img->lowered) goto done;
  memcpy(img->cubin, buf, h.cubin);
  img->cubin_size = h.cubin;
  if (h.ptx) {
    memcpy(img->ptx, buf + h.cubin, h.ptx);
    img->ptx[h.ptx] = 0;
  }
  memcpy(img->lowered, buf + h.cubin + h.ptx, h.lowered);
  img->lowered[h.lowered] = 0;
  r = 1;
done:
  if (r != 1) {
    free(img->cubin), free(img->ptx), free(img->lowered);
    img->cubin = NULL, img->ptx = NULL, img->lowered = NULL;
  }
  free(buf);
  fclose(f);
  return r;
}

/* 0 written; -1 not (read-only directory, full disk...): not an error for the caller. */
static int cache_write(const char *dir, const char *path, const char *key, const ck_rtc_image *img) {
  static unsigned counter;
  char tmp[1200];
  snprintf(tmp, sizeof tmp, "%s/%s.tmp.%ld.%u", dir, key, (long)getpid(), ++counter);
  ckbin_hdr h;
  memcpy(h.magic, CKBIN_MAGIC, 8);
  memcpy(h.key, key, 32);
  h.cubin = img->cubin_size;
  h.ptx = img->ptx ? strlen(img->ptx) : 0;
  h.lowered = strlen(img->lowered);
  uint64_t s = fnv64(img->cubin, h.cubin, 0xcbf29ce484222325ULL);
  if (h.ptx) s = fnv64(img->ptx, h.ptx, s);
  h.sum = fnv64(img->lowered, h.lowered, s);
  FILE *f = fopen(tmp, "wb");
  if (!f) return -1;
  bool ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(img->cubin, 1, h.cubin, f) == h.cubin &&
            (!h.ptx || fwrite(img->ptx, 1, h.ptx, f) == h.ptx) && fwrite(img->lowered, 1, h.lowered, f) == h.lowered;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path)) {
    unlink(tmp);
    return -1;
  }
  return 0;
}

// ---------------------------------------------------------------- build

/* The compile log with the source lines it points at ("cukern_kernel.cu(12): error ..." -> line 12 shown). */
static char *annotate_log(const char *src, const char *log) {
  size_t cap = strlen(log) + 2048, n = 0;
  char *out = malloc(cap);
  if (!out) return NULL;
  n += (size_t)snprintf(out, cap, "%s", log);
  int shown[8], nshown = 0;
  for (const char *p = strstr(log, "cukern_kernel.cu("); p && nshown < 8; p = strstr(p + 1, "cukern_kernel.cu(")) {
    int line = atoi(p + 17);
    bool seen = false;
    for (int i = 0; i < nshown; ++i) seen |= shown[i] == line;
    if (seen || line <= 0) continue;
    shown[nshown++] = line;
    const char *l = src;
    for (int k = 1; k < line && l; ++k) {
      l = strchr(l, '\n');
      if (l) ++l;
    }
    if (!l) continue;
    const char *end = strchr(l, '\n');
    int len = end ? (int)(end - l) : (int)strlen(l);
    if (len > 160) len = 160;
    if (nshown == 1 && n + 32 < cap) n += (size_t)snprintf(out + n, cap - n, "\nsource:\n");
    if (n + (size_t)len + 32 < cap) n += (size_t)snprintf(out + n, cap - n, "%5d | %.*s\n", line, len, l);
  }
  return out;
}

void ck_rtc_image_free(ck_rtc_image *img) {
  free(img->cubin);
  free(img->ptx);
  free(img->lowered);
  free(img->log);
  memset(img, 0, sizeof *img);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define NVRTC(x)                                                                                          \
  do {                                                                                                    \
    nvrtcResult r_ = (x);                                                                                 \
    if (r_ != NVRTC_SUCCESS) {                                                                            \
      st = ck_error(ctx, CK_ERR_NVRTC, "kernel '%s': %s failed: %s", entry, #x, nvrtcGetErrorString(r_));  \
      goto cleanup;                                                                                       \
    }                                                                                                     \
  } while (0)

ck_status ck_rtc_build(ck_ctx *ctx, const char *src, const char *entry, const char *opts, const char *arch,
                       ck_rtc_image *img) {
  ck_status st = CK_OK;
  nvrtcProgram prog = NULL;
  char *optbuf = NULL;
  const char *argv[64];
  int argc = 0;
  char archopt[48];
  memset(img, 0, sizeof *img);
  if (!arch || !*arch) { /* the current device's architecture */
    if (!ctx->has_cuda)
      return ck_error(ctx, CK_ERR_DEVICE, "kernel '%s': run-time kernels need a CUDA device (%s)", entry,
                      ctx->info.why_host);
    const ck_dctx *d = ck_cur(ctx);
    if (!d) return CK_ERR_DEVICE;
    snprintf(img->arch, sizeof img->arch, "sm_%d%d%s", d->info.cc_major, d->info.cc_minor, d->info.cc_major == 9 ? "a" : "");
  } else {
    snprintf(img->arch, sizeof img->arch, "%s", arch);
  }
  snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", img->arch);
  argv[argc++] = archopt;
  argv[argc++] = "--std=c++17";
  argv[argc++] = "-default-device";
  argv[argc++] = "--pre-include=cukern.h";
  if (opts && *opts) { /* user options, split on spaces */
    optbuf = strdup(opts);
    if (!optbuf) return ck_error(ctx, CK_ERR_OOM, "out of host memory");
    for (char *save = NULL, *tok = strtok_r(optbuf, " \t", &save); tok && argc < 64; tok = strtok_r(NULL, " \t", &save))
      argv[argc++] = tok;
  }
  /* the key */
  int vmaj = 0, vmin = 0;
  nvrtcVersion(&vmaj, &vmin);
  char ver[64];
  snprintf(ver, sizeof ver, "nvrtc %d.%d|ckbin1|%s", vmaj, vmin, img->arch);
  uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
  const char *parts[] = {src, entry, opts ? opts : "", ver, CK_HEADER};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; ++i) {
    size_t n = strlen(parts[i]) + 1; /* with the NUL: ("ab","c") != ("a","bc") */
    h1 = fnv64(parts[i], n, h1);
    h2 = fnv64(parts[i], n, h2 ^ 0x9e3779b97f4a7c15ULL);
  }
  snprintf(img->key, sizeof img->key, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
  char dir[1024], path[1200];
  ck_rtc_cache_dir(ctx, dir, sizeof dir);
  bool use_cache = dir[0] && mkdirs(dir) == 0;
  snprintf(img->cache, sizeof img->cache, "%s", dir[0] ? "unwritable" : "off");
  bool corrupt = false;
  if (use_cache) {
    cache_path(path, sizeof path, dir, img->key);
    int r = cache_read(path, img->key, img);
    if (r == 1) {
      snprintf(img->cache, sizeof img->cache, "hit");
      free(optbuf);
      return CK_OK;
    }
    corrupt = r < 0;
  }
  double t0 = now_ms();
  const char *hsrc[1] = {CK_HEADER}, *hname[1] = {CK_HEADER_NAME};
  NVRTC(nvrtcCreateProgram(&prog, src, "cukern_kernel.cu", 1, hsrc, hname));
  NVRTC(nvrtcAddNameExpression(prog, entry));
  nvrtcResult cr = nvrtcCompileProgram(prog, argc, argv);
  size_t logn = 0;
  if (nvrtcGetProgramLogSize(prog, &logn) == NVRTC_SUCCESS && logn > 1) {
    img->log = malloc(logn);
    if (img->log && nvrtcGetProgramLog(prog, img->log) != NVRTC_SUCCESS) img->log[0] = 0;
  }
  if (cr != NVRTC_SUCCESS) {
    char *ann = img->log ? annotate_log(src, img->log) : NULL;
    st = ck_error(ctx, CK_ERR_NVRTC, "kernel '%s': compilation failed (%s):\n%s", entry, nvrtcGetErrorString(cr),
                  ann ? ann : img->log ? img->log : "(no log)");
    free(ann);
    goto cleanup;
  }
  const char *lowered = NULL;
  NVRTC(nvrtcGetLoweredName(prog, entry, &lowered));
  if (!(img->lowered = strdup(lowered))) {
    st = ck_error(ctx, CK_ERR_OOM, "out of host memory");
    goto cleanup;
  }
  NVRTC(nvrtcGetCUBINSize(prog, &img->cubin_size));
  if (!(img->cubin = malloc(img->cubin_size))) {
    st = ck_error(ctx, CK_ERR_OOM, "out of host memory");
    goto cleanup;
  }
  NVRTC(nvrtcGetCUBIN(prog, img->cubin));
  size_t pn = 0;
  if (nvrtcGetPTXSize(prog, &pn) == NVRTC_SUCCESS && pn > 1 && (img->ptx = malloc(pn)))
    if (nvrtcGetPTX(prog, img->ptx) != NVRTC_SUCCESS) {
      free(img->ptx);
      img->ptx = NULL;
    }
  img->compile_ms = now_ms() - t0;
  if (use_cache) {
    if (cache_write(dir, path, img->key, img) == 0)
      snprintf(img->cache, sizeof img->cache, "%s", corrupt ? "rebuilt (corrupt)" : "miss");
    else snprintf(img->cache, sizeof img->cache, "unwritable");
  }
cleanup:
  if (st) {
    ck_error_prefix(ctx, st, "ck.kernel");
    ck_rtc_image_free(img);
  }
  free(optbuf);
  if (prog) nvrtcDestroyProgram(&prog);
  return st;
}

// ---------------------------------------------------------------- load, launch, introspection

ck_status ck_rtc_load(ck_ctx *ctx, ck_rtc_image *img, const char *name, ck_rtc_kernel **out) {
  ck_status st = CK_OK;
  *out = NULL;
  if (!ctx->has_cuda)
    return ck_error(ctx, CK_ERR_DEVICE, "kernel '%s': run-time kernels need a CUDA device (%s)", name, ctx->info.why_host);
  ck_rtc_kernel *k = calloc(1, sizeof *k);
  if (!k) return ck_error(ctx, CK_ERR_OOM, "out of host memory");
  snprintf(k->name, sizeof k->name, "%s", name);
  CK_CUDA(ctx, cudaLibraryLoadData(&k->lib, img->cubin, NULL, NULL, 0, NULL, NULL, 0));
  CK_CUDA(ctx, cudaLibraryGetKernel(&k->kern, k->lib, img->lowered));
  k->ptx = img->ptx; /* ownership moves to the kernel */
  img->ptx = NULL;
  *out = k;
  k = NULL;
cleanup:
  if (st) ck_error_prefix(ctx, st, "kernel '%s'", name);
  if (k) {
    if (k->lib) cudaLibraryUnload(k->lib);
    free(k);
  }
  return st;
}

ck_status ck_rtc_compile(ck_ctx *ctx, const char *src, const char *entry, const char *opts, ck_rtc_kernel **out,
                         char **log_out) {
  ck_rtc_image img;
  *out = NULL;
  if (log_out) *log_out = NULL;
  ck_status st = ck_rtc_build(ctx, src, entry, opts, NULL, &img);
  if (st) return st;
  st = ck_rtc_load(ctx, &img, entry, out);
  if (log_out) {
    *log_out = img.log;
    img.log = NULL;
  }
  ck_rtc_image_free(&img);
  return st;
}

const char *ck_rtc_name(const ck_rtc_kernel *k) { return k->name; }
const char *ck_rtc_ptx(const ck_rtc_kernel *k) { return k->ptx; }

ck_status ck_rtc_info_get(ck_ctx *ctx, ck_rtc_kernel *k, int block, size_t dyn_smem, ck_kinfo *info) {
  ck_status st = CK_OK;
  if (k->have_info && k->info.block == block && k->info.dynamic_smem == dyn_smem) { /* every launch asks */
    *info = k->info;
    return CK_OK;
  }
  /* the occupancy calculator counts past 48 KB of dynamic shared memory only once the kernel opts in */
  const ck_dctx *d = ck_cur(ctx);
  if (!d) return CK_ERR_DEVICE;
  if (dyn_smem > 48 * 1024 && dyn_smem <= d->info.smem_optin)
    CK_CUDA(ctx, cudaKernelSetAttributeForDevice(k->kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn_smem,
                                                 d->dev.index));
  if ((st = ck_kernel_info_of(ctx, (const void *)k->kern, k->name, block, dyn_smem, info))) goto cleanup;
  k->info = *info;
  k->have_info = true;
cleanup:
  if (st) ck_error_prefix(ctx, st, "kernel '%s': info", k->name);
  return st;
}

ck_status ck_rtc_check_launch(ck_ctx *ctx, ck_rtc_kernel *k, const unsigned grid[3], const unsigned block[3],
                              size_t smem) {
  ck_status st = CK_OK;
  struct cudaFuncAttributes a;
  CK_CUDA(ctx, cudaFuncGetAttributes(&a, (const void *)k->kern));
  unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
  static const unsigned bmax[3] = {1024, 1024, 64}, gmax[3] = {2147483647u, 65535, 65535};
  for (int i = 0; i < 3; ++i) {
    if (block[i] > bmax[i])
      return ck_error(ctx, CK_ERR_ARG, "kernel '%s': block dim %c = %u exceeds the device limit %u", k->name, "xyz"[i],
                      block[i], bmax[i]);
    if (grid[i] > gmax[i])
      return ck_error(ctx, CK_ERR_ARG, "kernel '%s': grid dim %c = %u exceeds the device limit %u", k->name, "xyz"[i],
                      grid[i], gmax[i]);
  }
  if (threads > (unsigned long long)a.maxThreadsPerBlock)
    return ck_error(ctx, CK_ERR_ARG,
                    "kernel '%s': block of %llu threads; this kernel can run at most %d per block (%d registers per "
                    "thread)",
                    k->name, threads, a.maxThreadsPerBlock, a.numRegs);
  const ck_dctx *d = ck_cur(ctx);
  if (!d) return CK_ERR_DEVICE;
  size_t optin = d->info.smem_optin ? d->info.smem_optin : 48 * 1024;
  if (smem + a.sharedSizeBytes > optin)
    return ck_error(ctx, CK_ERR_ARG,
                    "kernel '%s': %zu bytes of dynamic shared memory + %zu static exceed the device's %zu per block",
                    k->name, smem, (size_t)a.sharedSizeBytes, optin);
cleanup:
  return st;
}

typedef struct {
  ck_rtc_kernel *k;
  dim3 grid, block;
  size_t smem;
  void **args;
} rtc_args;

static int rtc_launch(const void *arg, const ck_env *env) {
  const rtc_args *a = (const rtc_args *)arg;
  ck_order_check(env);
  return (int)cudaLaunchKernel((const void *)a->k->kern, a->grid, a->block, a->args, a->smem, (cudaStream_t)env->stream);
}

static void describe_rtc(const void *ud, char *buf, size_t n) {
  const rtc_args *a = (const rtc_args *)ud;
  snprintf(buf, n, "kernel '%s' launch (grid %ux%ux%u, block %ux%ux%u, smem %zu)", a->k->name, a->grid.x, a->grid.y,
           a->grid.z, a->block.x, a->block.y, a->block.z, a->smem);
}

ck_status ck_rtc_launch(ck_ctx *ctx, ck_rtc_kernel *k, const unsigned grid[3], const unsigned block[3], size_t smem,
                        void **args) {
  ck_status st = CK_OK;
  const ck_dctx *d = ck_cur(ctx); /* (the caller made the arrays' device current) */
  if (!d) return CK_ERR_DEVICE;
  if (smem > 48 * 1024)
    CK_CUDA(ctx, cudaKernelSetAttributeForDevice(k->kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem,
                                                 d->dev.index));
  const rtc_args a = {k, {grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, smem, args};
  const ck_launch_req r = {.fn = rtc_launch, .arg = &a, .describe = describe_rtc, .describe_ud = &a};
  return ck_submit(ctx, &r); /* (batched ops issued before this kernel run before it) */
cleanup:
  return st;
}

void ck_rtc_free(ck_rtc_kernel *k) {
  if (!k) return;
  if (k->lib) cudaLibraryUnload(k->lib);
  free(k->ptx);
  free(k);
}

// ---------------------------------------------------------------- the in-memory kernel cache (fused kernels)

typedef struct mentry {
  char *key;
  uint64_t h;
  ck_rtc_kernel *k;
  unsigned block;
} mentry;
struct ck_map_cache {
  mentry *e;
  int n, cap;
};

ck_status ck_map_cache_new(ck_ctx *ctx, ck_map_cache **out) {
  if (!(*out = calloc(1, sizeof **out))) return ck_error(ctx, CK_ERR_OOM, "out of host memory");
  return CK_OK;
}
void ck_map_cache_free(ck_map_cache *c) {
  if (!c) return;
  for (int i = 0; i < c->n; ++i) {
    free(c->e[i].key);
    ck_rtc_free(c->e[i].k);
  }
  free(c->e);
  free(c);
}
int ck_map_cache_count(const ck_map_cache *c) { return c ? c->n : 0; }

uint64_t ck_rtc_key_hash(const char *key) { return fnv64(key, strlen(key), 0xcbf29ce484222325ULL); }

static mentry *cache_find(const ck_map_cache *c, const char *key, uint64_t h) {
  for (int i = 0; c && i < c->n; ++i)
    if (c->e[i].h == h && !strcmp(c->e[i].key, key)) return &c->e[i];
  return NULL;
}

bool ck_map_cache_has(const ck_map_cache *c, const char *key) {
  return cache_find(c, key, ck_rtc_key_hash(key)) != NULL;
}

ck_status ck_map_cache_get(ck_ctx *ctx, ck_map_cache *c, const char *key, const char *src, const char *entry,
                           const char *opts, ck_map_report *rep, ck_rtc_kernel **out) {
  uint64_t h = ck_rtc_key_hash(key);
  mentry *m = cache_find(c, key, h);
  if (m) {
    *out = m->k;
    snprintf(rep->cache, sizeof rep->cache, "memory");
    return CK_OK;
  }
  ck_rtc_image img;
  ck_status st = ck_rtc_build(ctx, src, entry, opts, NULL, &img);
  if (st) return st;
  ck_rtc_kernel *k = NULL;
  st = ck_rtc_load(ctx, &img, entry, &k);
  rep->compiled = true;
  rep->compile_ms = img.compile_ms;
  snprintf(rep->cache, sizeof rep->cache, "%s", img.cache);
  ck_rtc_image_free(&img);
  if (st) return st;
  if (c->n == c->cap) {
    int nc = c->cap ? 2 * c->cap : 16;
    mentry *ne = realloc(c->e, (size_t)nc * sizeof *ne);
    if (!ne) {
      ck_rtc_free(k);
      return ck_error(ctx, CK_ERR_OOM, "out of host memory");
    }
    c->e = ne, c->cap = nc;
  }
  char *kc = strdup(key);
  if (!kc) {
    ck_rtc_free(k);
    return ck_error(ctx, CK_ERR_OOM, "out of host memory");
  }
  c->e[c->n++] = (mentry){kc, h, k, 0};
  *out = k;
  return CK_OK;
}
