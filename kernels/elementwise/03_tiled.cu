/*
 * 03_tiled.cu — elementwise variant 3 "tiled": operands in different memory orders.
 *
 * Idea: `c = a + b:t()` into a row-major c is a transpose as well as an add. The strided variant walks the
 * output in its memory order, so b is read with a large stride along the fast dim: every warp load touches
 * 32 different 32-byte sectors, and the pass runs at a few percent of memcpy. Here, as in the transpose
 * ladder's shared-memory rungs, the work is cut into 32 x 32 tiles over two dims: X, the output's unit-stride
 * dim, and Y, the dim along which the mismatched operands are contiguous. Each mismatched ("staged") operand
 * is read by warps walking Y (coalesced for it) into a padded shared tile (33 columns: no bank conflicts when
 * read across), and after one barrier the block walks X: the output is written, and the other operands are
 * read, coalesced, the staged ones from shared memory. Every other dim is a batch of tiles.
 * The dispatcher's descriptor already has the dims in the output's memory order, broadcast dims at stride 0
 * and compatible dims coalesced (src/op_elementwise.c), so X is the last dim.
 * Changed from 01_strided: a two-dimensional tile with shared-memory staging instead of one element per
 * thread in output order; only the per-tile index math is div/mod (once per tile, not per element).
 * Measured on an H100 (examples/elementwise_bench.lua, 16384^2 f32, same run): c = a:t() + b:t() into a
 * row-major c 51.4% of memcpy (strided: 7.4%), c = a + b:t() 47.0% (strided: 17.9%). Four elements per
 * thread keep too few bytes in flight; the transpose ladder's `wide` recipe (64 x 64 tiles, 16 elements per
 * thread, loads before use, unguarded full tiles) is the next step (written in commit 2be71dd, not yet run
 * on a GPU, so not the default here).
 * Launch: 32 x 8 threads, each 4 rows of the tile; a grid-stride loop over all tiles (grid from the SM count).
 * supports(): a unary or binary op (not a generator), the output contiguous along the last dim, and at least
 * one array input that is not (its unit stride along another dim Y, the same Y for every such input);
 * otherwise contiguous or strided is the right rung, and the dispatcher runs that.
 */
#include <cuda_runtime.h>

#include "ew_math.cuh"

namespace {

using namespace ckew;

constexpr int TILE = 32, ROWS = 8; // a 32 x 32 tile, 32 x 8 threads, 4 rows each

struct TiledArgs {
  int nb, bmode, stage_a, stage_b; // batch dims; which inputs go through shared memory
  int64_t nx, ny, tx, ty, tiles;   // extents along X and Y, tiles along them, all tiles
  int64_t bshape[CK_MAX_DIMS], obs[CK_MAX_DIMS], abs_[CK_MAX_DIMS], bbs[CK_MAX_DIMS]; // batch dims
  int64_t osx, osy, asx, asy, bsx, bsy;
  void *out;
  const void *a, *b;
  Scal s;
};

template <int OP, typename TO, typename TI>
__global__ void __launch_bounds__(TILE *ROWS) ew_tiled_kernel(const TiledArgs p) {
  constexpr int NIN = arity(OP);
  __shared__ TI sa[TILE][TILE + 1];
  __shared__ TI sb[NIN == 2 ? TILE : 1][TILE + 1];
  TO *out = (TO *)p.out;
  const TI *a = (const TI *)p.a;
  const TI *b = (const TI *)p.b;
  const TI sv = from_double<TI>(p.s.s1);
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    // tile t = ((batch * ty) + tile_y) * tx + tile_x; the batch index over the batch dims, last fastest
    int64_t rem = t / p.tx;
    const int64_t x0 = (t - rem * p.tx) * TILE;
    const int64_t q = rem / p.ty, y0 = (rem - q * p.ty) * TILE;
    int64_t oo = 0, ao = 0, bo = 0;
    rem = q;
    for (int k = p.nb - 1; k >= 0; --k) {
      const int64_t qq = rem / p.bshape[k], c = rem - qq * p.bshape[k];
      rem = qq;
      oo += c * p.obs[k], ao += c * p.abs_[k], bo += c * p.bbs[k];
    }
    // stage: warps walk Y (lane = y), rows of the shared tile are x
    if (p.stage_a || (NIN == 2 && p.stage_b)) {
      const int64_t y = y0 + tx;
#pragma unroll
      for (int i = 0; i < TILE; i += ROWS) {
        const int64_t x = x0 + ty + i;
        if (x < p.nx && y < p.ny) {
          if (p.stage_a) sa[ty + i][tx] = a[ao + y * p.asy + x * p.asx];
          if constexpr (NIN == 2)
            if (p.stage_b) sb[ty + i][tx] = b[bo + y * p.bsy + x * p.bsx];
        }
      }
      __syncthreads();
    }
    // compute: warps walk X (lane = x)
    const int64_t x = x0 + tx;
#pragma unroll
    for (int i = 0; i < TILE; i += ROWS) {
      const int64_t y = y0 + ty + i;
      if (x < p.nx && y < p.ny) {
        TI u = TI(0), v = TI(0);
        if constexpr (NIN >= 1) u = p.stage_a ? sa[tx][ty + i] : a[ao + y * p.asy + x * p.asx];
        if constexpr (NIN == 2) {
          const TI w = p.bmode != BM_ARRAY ? sv : p.stage_b ? sb[tx][ty + i] : b[bo + y * p.bsy + x * p.bsx];
          v = p.bmode == BM_LEFT ? u : w;
          u = p.bmode == BM_LEFT ? w : u;
        }
        out[oo + y * p.osy + x * p.osx] = elem<OP, TO, TI>(u, v, p.s, 0, 0, 0);
      }
    }
    if (p.stage_a || (NIN == 2 && p.stage_b)) __syncthreads(); // the tile's shared data is read: reuse it
  }
}

struct TiledLaunch {
  const TiledArgs &p;
  unsigned grid;
  const ck_env *env;
  template <int OP, typename TO, typename TI> int run() {
    if constexpr (arity(OP) == 0) {
      return (int)cudaErrorInvalidValue; // generators: supports() refuses them
    } else {
      const auto kern = ew_tiled_kernel<OP, TO, TI>;
      ck_note(env, kern, TILE * ROWS, 0);
      kern<<<grid, dim3(TILE, ROWS), 0, (cudaStream_t)env->stream>>>(p);
      return (int)cudaGetLastError();
    }
  }
};

/* The dim along which input `st` is contiguous, if it is mismatched with the output (not along X = the last
 * dim, and not broadcast along it); -1 when it can be read as it is. */
int fast_dim(const ck_ew_desc *d, const int64_t *st) {
  const int x = d->ndim - 1;
  if (st[x] == 1 || st[x] == 0 || d->shape[x] <= 1) return -1;
  for (int k = 0; k < x; ++k)
    if (st[k] == 1 && d->shape[k] > 1) return k;
  return -1;
}

/* Y (the staged inputs' unit-stride dim) or -1, and why not in *why. */
int y_dim(const ck_ew_desc *d, int *stage_a, int *stage_b, const char **why) {
  *stage_a = *stage_b = 0;
  *why = nullptr;
  if (arity(d->op) == 0) return *why = "generators have no input to tile", -1;
  if (d->ndim < 2) return *why = "needs two dims (after merging): operands in one memory order", -1;
  if (d->out_st[d->ndim - 1] != 1) return *why = "the output is not contiguous along its fastest dim", -1;
  const int ya = fast_dim(d, d->a_st);
  const int yb = arity(d->op) == 2 && !d->b_scalar ? fast_dim(d, d->b_st) : -1;
  if (ya < 0 && yb < 0) return *why = "every input follows the output's memory order (contiguous or strided runs it)", -1;
  if (ya >= 0 && yb >= 0 && ya != yb) return *why = "the inputs are contiguous along different dims", -1;
  *stage_a = ya >= 0, *stage_b = yb >= 0;
  return ya >= 0 ? ya : yb;
}

} // namespace

extern "C" const char *ck_ew_tiled_supports(const void *desc) {
  const ck_ew_desc *d = (const ck_ew_desc *)desc;
  if (d->ndim < 0 || d->ndim > CK_MAX_DIMS) return "ndim out of range";
  int sa, sb;
  const char *why;
  y_dim(d, &sa, &sb, &why);
  return why;
}

extern "C" int ck_ew_tiled(const void *desc, const ck_env *env) {
  const ck_ew_desc *d = (const ck_ew_desc *)desc;
  TiledArgs p = {};
  const char *why;
  const int y = y_dim(d, &p.stage_a, &p.stage_b, &why), x = d->ndim - 1;
  if (y < 0) return (int)cudaErrorInvalidValue;
  p.bmode = bmode_of(d);
  p.nx = d->shape[x], p.ny = d->shape[y];
  for (int k = 0; k < d->ndim; ++k) {
    if (d->shape[k] == 0) return 0;
    if (k == x || k == y) continue;
    p.bshape[p.nb] = d->shape[k], p.obs[p.nb] = d->out_st[k], p.abs_[p.nb] = d->a_st[k];
    p.bbs[p.nb] = d->b_scalar ? 0 : d->b_st[k];
    ++p.nb;
  }
  p.osx = d->out_st[x], p.osy = d->out_st[y], p.asx = d->a_st[x], p.asy = d->a_st[y];
  p.bsx = d->b_scalar ? 0 : d->b_st[x], p.bsy = d->b_scalar ? 0 : d->b_st[y];
  p.tx = (p.nx + TILE - 1) / TILE, p.ty = (p.ny + TILE - 1) / TILE;
  int64_t batch = 1;
  for (int k = 0; k < p.nb; ++k) batch *= p.bshape[k];
  p.tiles = p.tx * p.ty * batch;
  p.out = d->out, p.a = d->a, p.b = d->b;
  p.s = scal_of(d);
  TiledLaunch L{p, grid_for(p.tiles, 1, env->sm_count, 8), env};
  return dispatch(d->op, d->out_dtype, d->op == CK_EW_COPY ? d->a_dtype : d->out_dtype, L);
}
