/*
 * tr_common.cuh — plumbing shared by the transpose ladder (kernels/transpose/NN_*.cu); no kernel lives here.
 *
 * Every transpose kernel walks the same index space: a batch (ck_tr_desc.nb dims, flattened) times a grid
 * of tiles over the rows x cols input. The batch runs over grid z (looping when it exceeds 65535) and the
 * tiles over grid x, flattened and looping when there are more than CK_TR_MAX_GRID_X of them, so no shape
 * hits the y/z limit of 65535 and every offset is int64. Steps 1-5 take tiles row of tiles by row of tiles
 * (tr_tile_coords); steps 6-8 in groups of CK_TR_GROUP tile rows (tr_tile_coords_grouped).
 *
 * Elements move as bits: 2-byte elements (f16, bf16) as uint16_t, 4-byte ones (f32, i32) as uint32_t and
 * 8-byte ones (f64) as uint64_t, so NaN
 * payloads and -0.0 come through unchanged. CK_TR_LAUNCHER writes every kernel step's extern "C" launcher
 * around the step's launch<T>; tr_launch_tiles is that launch<T> for the steps with one kernel per (T, UNIT).
 */
#ifndef CK_TR_COMMON_CUH
#define CK_TR_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "ck_kernels.h"

#define CK_TR_MAX_GRID_X 0x7fffffffLL
#define CK_TR_MAX_GRID_Z 65535LL

// ---------------------------------------------------------------- host side

/* Number of matrices in the batch (1 when nb == 0; 0 when a batch dim is 0). */
static inline int64_t tr_nbatch(const ck_tr_desc *d) {
  int64_t n = 1;
  for (int k = 0; k < d->nb; ++k) n *= d->bshape[k];
  return n;
}

/* Nothing to move: zero rows, zero cols or an empty batch (launchers return 0 without launching). */
static inline bool tr_empty(const ck_tr_desc *d) { return d->rows <= 0 || d->cols <= 0 || tr_nbatch(d) <= 0; }

/* What every kernel needs to walk its index space; computed once on the host. */
struct tr_walk {
  int64_t nbatch; /* matrices */
  int64_t ntiles; /* tiles per matrix */
  int64_t ntc;    /* tile columns per matrix */
  int64_t ntr;    /* tile rows per matrix */
};

static inline tr_walk tr_walk_make(const ck_tr_desc *d, int64_t tr, int64_t tc) {
  tr_walk w;
  w.nbatch = tr_nbatch(d);
  w.ntc = (d->cols + tc - 1) / tc;
  w.ntr = (d->rows + tr - 1) / tr;
  w.ntiles = w.ntr * w.ntc;
  return w;
}

/* Reasons shared by every kernel variant (NULL: fine). */
static inline const char *tr_supports_common(const ck_tr_desc *d) {
  if (d->elem_size != 2 && d->elem_size != 4 && d->elem_size != 8) return "needs 2-, 4- or 8-byte elements";
  if (d->nb < 0 || d->nb > CK_MAX_DIMS) return "needs 0..8 batch dims";
  return NULL;
}

/* Grid for tiles of tr x tc elements: x = tiles (capped), z = batch (capped); kernels loop over the rest. */
static inline dim3 tr_grid(const ck_tr_desc *d, int64_t tr, int64_t tc) {
  int64_t nt = ((d->rows + tr - 1) / tr) * ((d->cols + tc - 1) / tc);
  int64_t nb = tr_nbatch(d);
  if (nt > CK_TR_MAX_GRID_X) nt = CK_TR_MAX_GRID_X;
  if (nb > CK_TR_MAX_GRID_Z) nb = CK_TR_MAX_GRID_Z;
  return dim3((unsigned)nt, 1u, (unsigned)nb);
}

/* The batch and tile strides, pointers and alignment checks a launcher needs, gathered once. */
static inline bool tr_aligned(const void *p, unsigned bytes) { return ((uintptr_t)p % bytes) == 0; }

/* True when every batch stride of one side is a multiple of v (vector loads stay aligned across the batch). */
static inline bool tr_bstrides_multiple(const ck_tr_desc *d, bool out_side, int64_t v) {
  for (int k = 0; k < d->nb; ++k)
    if (d->bshape[k] > 1 && ((out_side ? d->bout_st[k] : d->bin_st[k]) % v) != 0) return false;
  return true;
}

/* launch<T> of steps 1-6: one launch over tiles of tr x tc with `block` threads, of the kernel specialised for
 * unit column strides on both sides (`unit`) or of the general one (`strided`). */
typedef void (*tr_kernel)(ck_tr_desc, tr_walk);
static inline void tr_launch_tiles(const ck_tr_desc *d, const ck_env *env, int64_t tr, int64_t tc, dim3 block,
                                   tr_kernel unit, tr_kernel strided) {
  const tr_walk w = tr_walk_make(d, tr, tc);
  const dim3 grid = tr_grid(d, tr, tc);
  const tr_kernel kern = d->in_cs == 1 && d->out_cs == 1 ? unit : strided;
  ck_note(env, kern, block.x * block.y * block.z, 0);
  kern<<<grid, block, 0, (cudaStream_t)env->stream>>>(*d, w);
}

/* The launcher of every kernel step: nothing to move for empty operands; else launch_tpl<T>(d, env) with T
 * the elements' bits (uint64_t for 8-byte elements, uint32_t for 4-byte ones, uint16_t for 2-byte ones). */
#define CK_TR_LAUNCHER(fn, launch_tpl)                                                                         \
  extern "C" int fn(const void *desc, const ck_env *env) {                                                    \
    const ck_tr_desc *d = (const ck_tr_desc *)desc;                                                           \
    if (tr_empty(d)) return 0;                                                                                \
    if (d->elem_size == 8)                                                                                    \
      launch_tpl<uint64_t>(d, env);                                                                           \
    else if (d->elem_size == 2)                                                                               \
      launch_tpl<uint16_t>(d, env);                                                                           \
    else                                                                                                      \
      launch_tpl<uint32_t>(d, env);                                                                           \
    return (int)cudaGetLastError();                                                                           \
  }

// ---------------------------------------------------------------- device side

template <int ES> struct tr_elem;
template <> struct tr_elem<2> { typedef uint16_t type; };
template <> struct tr_elem<4> { typedef uint32_t type; };
template <> struct tr_elem<8> { typedef uint64_t type; };

/* Offsets (elements) of batch matrix b in in and out: b is row-major over bshape (bshape[0] slowest).
 * Runs once per block per matrix, so the 64-bit divisions do not matter. Host code (geam) uses it too. */
__host__ __device__ __forceinline__ void tr_batch_offsets(const ck_tr_desc &d, int64_t b, int64_t &oin,
                                                         int64_t &oout) {
  oin = 0;
  oout = 0;
  for (int k = d.nb - 1; k >= 0; --k) {
    const int64_t s = d.bshape[k];
    const int64_t q = b / s;
    const int64_t i = b - q * s;
    oin += i * d.bin_st[k];
    oout += i * d.bout_st[k];
    b = q;
  }
}

/* t -> (tile row, tile col) for ntc tile columns; 32-bit division whenever the numbers allow. */
__device__ __forceinline__ void tr_tile_coords(int64_t t, int64_t ntc, int64_t &tr, int64_t &tc) {
  if (t <= 0xffffffffLL && ntc <= 0xffffffffLL) {
    const uint32_t q = (uint32_t)t / (uint32_t)ntc;
    tr = q;
    tc = t - (int64_t)q * ntc;
  } else {
    tr = t / ntc;
    tc = t - tr * ntc;
  }
}

/* Grouped tile order: t runs down a column of CK_TR_GROUP tile rows, then to the next column, then to the
 * next group of tile rows. Tiles that share an output row's partial 32-byte sectors (vertical neighbours)
 * and those that share an input row's (horizontal neighbours) are then at most CK_TR_GROUP launches
 * apart, so the L2 merges the halves of a sector before evicting it instead of reading it back from DRAM
 * to complete it. Rows of tiles done together stay short enough for L2, long enough for DRAM pages. */
#ifndef CK_TR_GROUP
#define CK_TR_GROUP 8
#endif
__device__ __forceinline__ void tr_tile_coords_grouped(int64_t t, int64_t ntr, int64_t ntc, int64_t &tr,
                                                       int64_t &tc) {
  if (CK_TR_GROUP <= 1) {
    tr_tile_coords(t, ntc, tr, tc);
    return;
  }
  int64_t g, in;
  tr_tile_coords(t, (int64_t)CK_TR_GROUP * ntc, g, in); // g = group of tile rows, in = index inside it
  const int64_t r0 = g * CK_TR_GROUP;
  const int64_t gr = ntr - r0 < CK_TR_GROUP ? ntr - r0 : CK_TR_GROUP; // tile rows in this group
  int64_t q, r;
  tr_tile_coords(in, gr, q, r);
  tr = r0 + r;
  tc = q;
}

#endif
