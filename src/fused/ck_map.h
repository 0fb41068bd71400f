/*
 * ck_map.h — fused expression kernels (expr_*.c: the language; map.c, reduce_map.c, map_bind.c: the kernels)
 * and the run-time compiler's build/cache/introspection layer (rtc.c). Core API: ck_ctx * first, ck_status back, no Lua.
 */
#ifndef CK_MAP_H
#define CK_MAP_H

#include "ck.h"

typedef struct ck_expr ck_expr; /* a parsed expression (expr.h) */

// ---------------------------------------------------------------- run-time compilation (rtc.c)

/* A compiled program image: CUBIN (and PTX) for one architecture, from NVRTC or the disk cache. */
typedef struct ck_rtc_image {
  void *cubin;
  size_t cubin_size;
  char *ptx;         /* may be NULL (an image from the cache stores it too) */
  char *lowered;     /* the entry's mangled name */
  char *log;         /* NVRTC's log (warnings), may be NULL */
  char arch[16];     /* "sm_90a" */
  char key[40];      /* hex hash of source, entry, options, NVRTC version, arch */
  char cache[24];    /* "hit", "miss", "off", "unwritable", "rebuilt (corrupt)" */
  double compile_ms; /* NVRTC time (0 on a hit) */
} ck_rtc_image;

/* Compile `src` (entry by name expression) for `arch` ("sm_90", NULL = this device's) through the disk cache
 * (CUKERN_CACHE_DIR, default $XDG_CACHE_HOME/cukern or ~/.cache/cukern; "off" disables it). Works without a
 * GPU when arch is given. On a compile error the message holds the log with the offending source lines. */
ck_status ck_rtc_build(ck_ctx *ctx, const char *src, const char *entry, const char *opts, const char *arch,
                       ck_rtc_image *img);
void ck_rtc_image_free(ck_rtc_image *img);
/* The text of cukern.h, pre-included in every program (CkArray<T>: the array descriptor of "f32[]" arguments). */
const char *ck_rtc_header(void);
/* Load an image on the device; `name` is for messages. The kernel keeps the PTX for introspection. */
ck_status ck_rtc_load(ck_ctx *ctx, ck_rtc_image *img, const char *name, ck_rtc_kernel **out);
const char *ck_rtc_name(const ck_rtc_kernel *k);
const char *ck_rtc_ptx(const ck_rtc_kernel *k);
/* Override the cache directory for this process (NULL: back to the environment; "off": none). */
void ck_rtc_set_cache_dir(const char *dir);
/* The cache directory in use ("" when disabled). */
const char *ck_rtc_cache_dir(ck_ctx *ctx, char *buf, size_t n);

/* The kernel's attributes and occupancy at `block` threads and `dyn_smem` bytes (the built-in kernels'
 * record, ck.h); the last configuration asked for is kept in the kernel, so asking at every launch is cheap. */
ck_status ck_rtc_info_get(ck_ctx *ctx, ck_rtc_kernel *k, int block, size_t dyn_smem, ck_kinfo *info);
/* Block, grid and shared memory against the kernel and device limits; the error names the kernel. */
ck_status ck_rtc_check_launch(ck_ctx *ctx, ck_rtc_kernel *k, const unsigned grid[3], const unsigned block[3],
                              size_t smem);

// ---------------------------------------------------------------- fused kernels (map.c)

ck_status ck_expr_compile(ck_ctx *ctx, const char *what, const char *text, const char *const *fixed, int nfixed,
                          bool single, ck_expr **out);
void ck_expr_release(ck_expr *e);
int ck_expr_noutputs(const ck_expr *e);
const char *ck_expr_output(const ck_expr *e, int i);
int ck_expr_ninputs(const ck_expr *e);
const char *ck_expr_input(const ck_expr *e, int i);

/* The most operands of one fused kernel: the entries of the inputs table (arrays and numbers, used by the
 * expression or not) plus the outputs. ck_map and ck_reduce_map refuse more before anything else, and every
 * per-operand buffer of map.c is this size. Why 48: a kernel's parameters (a pointer and 8 strides per
 * operand, 8-byte slots) must fit CK_MAP_MAX_PARAMS, which is CUDA's classic 4 KB of kernel parameters. */
#define CK_MAP_MAX_OPERANDS 48
#define CK_MAP_MAX_PARAMS 512

/* One named input: an array (t != NULL) or a number. name: checked by ck_map (an identifier of the
 * language that is not one of its constants or functions). isint: the number is an integer (a Lua integer,
 * or a float with an integral value in i64's range), exactly inum (so i64 arithmetic with it is exact). */
typedef struct ck_map_input {
  const char *name;
  const ck_tensor *t;
  double num;
  long long inum;
  bool isint;
} ck_map_input;

/* What ran and how (for ck.last_ran, introspection and specs). */
typedef struct ck_map_report {
  bool source_only;  /* in: generate the CUDA source (as if on the GPU) and stop: no compile, no launch */
  char *source;      /* out (malloc'd) when source_only, or always on the GPU path when want_source */
  bool want_source;
  char entry[48];    /* kernel name */
  char layout[16];   /* "vec4", "contiguous", "strided", "rows", "cols", "all" or "host" */
  int ndim;          /* dims after coalescing */
  bool compiled;     /* this call compiled it (else it came from the in-memory cache) */
  double compile_ms;
  ck_rtc_kernel *kernel; /* out: the kernel that ran (owned by the cache) */
  unsigned block, grid;
  char cache[24];
  char *source2; /* out (malloc'd) with source/want_source: reduce_map's finisher, for layout "all" */
  /* The kernel's parameter block (8-byte slots, in the order of the generated struct): kind 'l' an integer,
   * 'd' a double (value in val), 'o'/'i' the data pointer of output/input `ref`, 'w' a workspace. */
  int nparams;
  char pkind[CK_MAP_MAX_PARAMS];
  int pref[CK_MAP_MAX_PARAMS];
  uint64_t pval[CK_MAP_MAX_PARAMS];
} ck_map_report;

/* The in-memory cache of compiled fused kernels (rtc.c), kept for the Lua state: by key (expression, dtypes,
 * ndim, layout), which also names the kernel's entry (ck_rtc_key_hash: FNV-1a). */
typedef struct ck_map_cache ck_map_cache;
ck_status ck_map_cache_new(ck_ctx *ctx, ck_map_cache **out);
void ck_map_cache_free(ck_map_cache *c);
int ck_map_cache_count(const ck_map_cache *c);
uint64_t ck_rtc_key_hash(const char *key);
bool ck_map_cache_has(const ck_map_cache *c, const char *key); /* c may be NULL */
/* The kernel of `key`: from the cache, else built from src with `opts` (through the disk cache), loaded and
 * kept. rep gets cache ("memory", or ck_rtc_build's), compiled and compile_ms. */
ck_status ck_map_cache_get(ck_ctx *ctx, ck_map_cache *c, const char *key, const char *src, const char *entry,
                           const char *opts, ck_map_report *rep, ck_rtc_kernel **out);

/* A dtype ck.map and ck.reduce_map take (every real dtype: not complex, not fp8); expr_ops.c. */
bool ck_xdtype_ok(int dt);

/* outs: e's outputs (ck_expr_noutputs); an entry with st == NULL is allocated. dtype: -1 = by promotion. */
ck_status ck_map(ck_ctx *ctx, ck_map_cache *cache, const ck_expr *e, const ck_map_input *in, int nin, ck_tensor *outs,
                 int dtype, ck_map_report *rep);

#define CK_RMAP_ALL (-1000)
/* dim: 0-based, negative counts from the end (-1 = last), CK_RMAP_ALL = every element.
 * out = post(reduce over dim of map(inputs)), reduce(a, b) associative with `identity`. post may be
 * NULL (r); it sees r and n (the number of elements reduced). */
ck_status ck_reduce_map(ck_ctx *ctx, ck_map_cache *cache, const ck_expr *map, const ck_expr *red, const ck_expr *post,
                        double identity, const ck_map_input *in, int nin, int dim, bool keepdim, ck_tensor *out,
                        int dtype, ck_map_report *rep);

#endif
