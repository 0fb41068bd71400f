/*
 * 07_vec.cu — transpose, step 7: 16-byte global loads and stores around a conflict-free shared tile.
 *
 * Idea: step 6 moves 4 bytes per instruction; here every global access is 16 bytes (V = 4 f32/i32 or
 * 2 f64 per access), a quarter (f64: half) of the load/store instructions. A warp is laid out as 4 groups
 * of 8 lanes; each group covers one 128-byte segment (8 lanes x 16 bytes) of one row and the 4 groups take
 * 4 consecutive rows, so every request is 4 whole lines. The shared tile keeps 65 elements per row and is
 * written and read one element at a time: element (r, c) is in bank (r + c) mod 32 (f32) or 8-byte slot
 * (r + c) mod 16 (f64), and with the 8 lanes of a group V columns apart in 4 consecutive rows, both phases
 * touch every bank once: no conflicts. On the output side a lane gathers V tile rows of one tile column
 * into one 16-byte store.
 * Changed from step 6: 16-byte accesses (LDG.E.128 / STG.E.128 in SASS), lanes grouped 8 x 4 instead of
 * 32 x 1, 4 (f64: 8) vector accesses per thread and phase.
 * Measured on the H200 (16384^2 f32): 79 % of memcpy against step 6's 94 % — fewer, wider instructions do
 * not help a kernel that is bound by bytes in flight, and a warp request that spans 4 rows instead of 1
 * costs more than it saves; 16-byte stores alone were no better (78 %). Occupancy matters more than
 * width: with the compiler's 80+ registers (3 blocks/SM) it ran at 53 %, hence the launch bounds below.
 * The ladder keeps the step as a measured negative result; step 8 builds on step 6.
 * Scalar path: a side (in or out) whose inner stride is not 1, whose row or batch strides are not
 * multiples of V, or whose pointer is not 16-byte aligned is moved with step 6's layout instead (IN_VEC /
 * OUT_VEC template flags); in edge tiles a vector that would cross the last column is moved element by
 * element. So any shape and any strides work; only the fast path needs alignment.
 * Launch: 256 threads, one 64 x 64 tile per block; grid x = tiles (flattened, grouped, looping), z = batch
 * (looping). Shared: 16.6 KB (f32/i32) or 33.3 KB (f64), static.
 * Limits: none — any rows, cols >= 0, any element strides, 2-, 4- or 8-byte elements (2-byte: V = 8, SEG =
 * 64 = the tile edge, 2 vector accesses per thread and phase).
 * Operands: in rows x cols, out cols x rows, per batch matrix (ck_tr_desc).
 */
#include "tr_common.cuh"

#define VC_T 64 /* tile edge */
#define VC_THREADS 256
#define VC_PAD 1
/* Blocks per SM to plan registers for (see the header: 3 blocks ran at half the speed of 4). */
#define VC_MINB(T, IN_VEC, OUT_VEC) (sizeof(T) == 4 && (IN_VEC) && (OUT_VEC) ? 4 : 3)

// ---------------------------------------------------------------- kernel

template <typename T> union vc_pack {
  uint4 v;
  T e[16 / sizeof(T)];
};

template <typename T, bool IN_VEC, bool OUT_VEC>
__global__ void __launch_bounds__(VC_THREADS, VC_MINB(T, IN_VEC, OUT_VEC)) transpose_vec_kernel(const ck_tr_desc d, const tr_walk w) {
  constexpr int V = 16 / sizeof(T);                   /* elements per 16-byte access */
  constexpr int SEG = 8 * V;                          /* elements per 128-byte segment (8 lanes) */
  constexpr int NIT = VC_T * (VC_T / SEG) / (VC_THREADS / 8); /* 16-byte accesses per thread: 4 or 8 */
  constexpr int NS = VC_T / 8;                        /* scalar layout: rows per thread */
  __shared__ T tile[VC_T][VC_T + VC_PAD];
  const T *__restrict__ in = (const T *)d.in;
  T *__restrict__ out = (T *)d.out;
  const int64_t ics = IN_VEC ? 1 : d.in_cs, ocs = OUT_VEC ? 1 : d.out_cs;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int x = lane & 7, g = lane >> 3;
  // 16-byte segment i of this thread: tile row (or column) s mod 64, elements (s / 64) * SEG + V x ...
#define VC_S(i) (warp * 4 + g + (i) * (VC_THREADS / 8))
  for (int64_t b = blockIdx.z; b < w.nbatch; b += gridDim.z) {
    int64_t oi, oo;
    tr_batch_offsets(d, b, oi, oo);
    for (int64_t t = blockIdx.x; t < w.ntiles; t += gridDim.x) {
      int64_t tr, tc;
      tr_tile_coords_grouped(t, w.ntr, w.ntc, tr, tc);
      const int64_t r0 = tr * VC_T, c0 = tc * VC_T;
      const int64_t nr = d.rows - r0, nc = d.cols - c0; // valid rows/cols from the tile's corner on
      const bool full = nr >= VC_T && nc >= VC_T;
      const T *src = in + oi + r0 * d.in_rs + c0 * ics;
      T *dst = out + oo + c0 * d.out_rs + r0 * ocs;
      // ---- load input rows r0 .. r0 + 63, columns c0 .. c0 + 63 into tile[row][col]
      if (IN_VEC) {
        vc_pack<T> p[NIT];
        if (full) {
#pragma unroll
          for (int i = 0; i < NIT; ++i)
            p[i].v = *(const uint4 *)(src + (VC_S(i) & (VC_T - 1)) * d.in_rs + (VC_S(i) / VC_T) * SEG + V * x);
        } else {
#pragma unroll
          for (int i = 0; i < NIT; ++i) {
            const int r = VC_S(i) & (VC_T - 1), c = (VC_S(i) / VC_T) * SEG + V * x;
            const T *q = src + r * d.in_rs + c;
#pragma unroll
            for (int k = 0; k < V; ++k) p[i].e[k] = 0;
            if (r < nr && c + V <= nc) {
              p[i].v = *(const uint4 *)q;
            } else if (r < nr) {
#pragma unroll
              for (int k = 0; k < V; ++k)
                if (c + k < nc) p[i].e[k] = q[k];
            }
          }
        }
#pragma unroll
        for (int i = 0; i < NIT; ++i)
#pragma unroll
          for (int k = 0; k < V; ++k) tile[VC_S(i) & (VC_T - 1)][(VC_S(i) / VC_T) * SEG + V * x + k] = p[i].e[k];
      } else {
        // scalar side (step 6's layout): lane = column, warp = row
        T v[NS][2];
        const T *q = src + (int64_t)warp * d.in_rs + (int64_t)lane * ics;
        if (full) {
#pragma unroll
          for (int i = 0; i < NS; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h) v[i][h] = q[(int64_t)(8 * i) * d.in_rs + (int64_t)(32 * h) * ics];
        } else {
#pragma unroll
          for (int i = 0; i < NS; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              v[i][h] = 0;
              if (warp + 8 * i < nr && lane + 32 * h < nc) v[i][h] = q[(int64_t)(8 * i) * d.in_rs + (int64_t)(32 * h) * ics];
            }
        }
#pragma unroll
        for (int i = 0; i < NS; ++i)
#pragma unroll
          for (int h = 0; h < 2; ++h) tile[warp + 8 * i][lane + 32 * h] = v[i][h];
      }
      __syncthreads();
      // ---- store output row j (= tile column j), columns r0 .. r0 + 63 (= tile rows)
      if (OUT_VEC) {
        vc_pack<T> o[NIT];
#pragma unroll
        for (int i = 0; i < NIT; ++i)
#pragma unroll
          for (int k = 0; k < V; ++k) o[i].e[k] = tile[(VC_S(i) / VC_T) * SEG + V * x + k][VC_S(i) & (VC_T - 1)];
        if (full) {
#pragma unroll
          for (int i = 0; i < NIT; ++i)
            *(uint4 *)(dst + (VC_S(i) & (VC_T - 1)) * d.out_rs + (VC_S(i) / VC_T) * SEG + V * x) = o[i].v;
        } else {
#pragma unroll
          for (int i = 0; i < NIT; ++i) {
            const int j = VC_S(i) & (VC_T - 1), cr = (VC_S(i) / VC_T) * SEG + V * x;
            T *q = dst + j * d.out_rs + cr;
            if (j < nc && cr + V <= nr) {
              *(uint4 *)q = o[i].v;
            } else if (j < nc) {
#pragma unroll
              for (int k = 0; k < V; ++k)
                if (cr + k < nr) q[k] = o[i].e[k];
            }
          }
        }
      } else {
        T *q = dst + (int64_t)warp * d.out_rs + (int64_t)lane * ocs;
        if (full) {
#pragma unroll
          for (int i = 0; i < NS; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h) q[(int64_t)(8 * i) * d.out_rs + (int64_t)(32 * h) * ocs] = tile[lane + 32 * h][warp + 8 * i];
        } else {
#pragma unroll
          for (int i = 0; i < NS; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              if (warp + 8 * i < nc && lane + 32 * h < nr)
                q[(int64_t)(8 * i) * d.out_rs + (int64_t)(32 * h) * ocs] = tile[lane + 32 * h][warp + 8 * i];
        }
      }
#undef VC_S
      __syncthreads(); // the next tile overwrites the shared rows still being read
    }
  }
}

// ---------------------------------------------------------------- launcher

/* A side can use 16-byte accesses when its inner stride is 1 and every vector start is 16-byte aligned. */
static bool vec_ok(const ck_tr_desc *d, bool out_side) {
  const int64_t v = 16 / d->elem_size;
  const int64_t cs = out_side ? d->out_cs : d->in_cs, rs = out_side ? d->out_rs : d->in_rs;
  const int64_t inner = out_side ? d->rows : d->cols, outer = out_side ? d->cols : d->rows;
  if (cs != 1 && inner > 1) return false;
  if (outer > 1 && rs % v != 0) return false;
  return tr_aligned(out_side ? (const void *)d->out : d->in, 16) && tr_bstrides_multiple(d, out_side, v);
}

template <typename T>
static void launch(const ck_tr_desc *d, const ck_env *env) {
  const tr_walk w = tr_walk_make(d, VC_T, VC_T);
  const dim3 grid = tr_grid(d, VC_T, VC_T), block(VC_THREADS);
  const bool vi = vec_ok(d, false), vo = vec_ok(d, true);
  const tr_kernel kern = vi ? (vo ? transpose_vec_kernel<T, true, true> : transpose_vec_kernel<T, true, false>)
                            : (vo ? transpose_vec_kernel<T, false, true> : transpose_vec_kernel<T, false, false>);
  ck_note(env, kern, VC_THREADS, 0);
  kern<<<grid, block, 0, (cudaStream_t)env->stream>>>(*d, w);
}

extern "C" const char *ck_transpose_vec_supports(const void *desc) {
  return tr_supports_common((const ck_tr_desc *)desc);
}

CK_TR_LAUNCHER(ck_transpose_vec, launch)
