/*
 * 08_aligned.cu — transpose, step 8: step 6, with every output row written in whole 32-byte sectors.
 *
 * Idea: when the output's row stride is not a multiple of 32 bytes (any odd shape: 16383 x 4097 gives
 * out rows of 16383 floats), a 64-element output segment starts in the middle of a sector, and the sector
 * it shares with the neighbouring tile is written half by one block and half by another. Measured on the
 * H200 that costs a quarter of the bandwidth (step 6: 94 % of memcpy with 32-byte aligned output rows,
 * 71 % with odd ones), although DRAM traffic stays at the minimum: the L2 merges the halves, slowly. Here
 * each output row j of a tile moves its window back to the sector boundary: with a = misalignment (in
 * elements) of output (c0 + j, r0), the block writes output columns r0 - a .. r0 - a + 63 (the last tile
 * row runs on to the end of the row), so every sector is written by exactly one warp instruction. The
 * a <= 7 elements before r0 come from HALO = 8 extra input rows loaded above the tile (L2 hits: the
 * grouped tile order runs vertical neighbours back to back).
 * Changed from step 6: HALO rows, per-row window shift on the output side, a third store pass for the
 * last tile row. With sector-aligned output rows (or a non-unit output inner stride, or output rows
 * shorter than AL_SHIFT_MIN_ROWS) it is step 6, with launch bounds for 4 blocks per SM.
 * Measured on the H200: 90 % of memcpy at 16383 x 4097 f32 (step 6: 71 %), 94 % at 16384^2 and
 * 4096 x 16384 (as step 6), 89.6 % at 16384^2 f64.
 * Launch: block 32 x 8 (256 threads), one 64-col x (64 + HALO)-row input tile per block; grid x = tiles
 * (flattened, grouped, looping), z = batch (looping). Shared: 18.7 KB (f32/i32) or 37.4 KB (f64), static.
 * Limits: none — any rows, cols >= 0 (edge tiles guarded), any element strides, 4- or 8-byte elements.
 * Operands: in rows x cols, out cols x rows, per batch matrix (ck_tr_desc).
 */
#include "tr_common.cuh"

#define AL_T 64  /* tile edge */
#define AL_BX 32 /* block x: a warp spans 32 columns */
#define AL_BY 8  /* block y */
#define AL_PAD 1
#define AL_HALO 8 /* >= elements per 32-byte sector - 1, a multiple of AL_BY */
#define AL_SHIFT_MIN_ROWS 256 /* output rows shorter than this are written unshifted (step 6) */
/* Blocks per SM to plan registers for: 4 (64 registers) kept the H200 at 94 % of memcpy where the
 * compiler's own choice (78 registers, 3 blocks) gave 92 %; general strides need more than 64 registers
 * without spilling, so they plan for 3. */
#define AL_MINB(UNIT) ((UNIT) ? 4 : 3)

// ---------------------------------------------------------------- kernel

template <typename T, bool UNIT, bool SHIFT>
__global__ void __launch_bounds__(AL_BX *AL_BY, AL_MINB(UNIT)) transpose_aligned_kernel(const ck_tr_desc d, const tr_walk w) {
  constexpr int HALO = SHIFT ? AL_HALO : 0;
  constexpr int NI = (AL_T + HALO) / AL_BY; /* input rows per thread: 8 or 9 */
  constexpr int SECT = 32 / sizeof(T);      /* elements per 32-byte sector */
  __shared__ T tile[AL_T + HALO][AL_T + AL_PAD];
  const T *__restrict__ in = (const T *)d.in;
  T *__restrict__ out = (T *)d.out;
  const int64_t ics = UNIT ? 1 : d.in_cs, ocs = UNIT ? 1 : d.out_cs;
  const int x = threadIdx.x, y = threadIdx.y;
  for (int64_t b = blockIdx.z; b < w.nbatch; b += gridDim.z) {
    int64_t oi, oo;
    tr_batch_offsets(d, b, oi, oo);
    for (int64_t t = blockIdx.x; t < w.ntiles; t += gridDim.x) {
      int64_t tr, tc;
      tr_tile_coords_grouped(t, w.ntr, w.ntc, tr, tc);
      const int64_t r0 = tr * AL_T, c0 = tc * AL_T;
      const int64_t nr = d.rows - r0, nc = d.cols - c0; // valid rows/cols from the tile's corner on
      const bool full = nr >= AL_T && nc >= AL_T && r0 >= HALO;
      // tile row l holds input row r0 - HALO + l
      const T *src = in + oi + (r0 - HALO + y) * d.in_rs + (c0 + x) * ics;
      T v[NI][2];
      if (full) {
#pragma unroll
        for (int i = 0; i < NI; ++i)
#pragma unroll
          for (int h = 0; h < 2; ++h) v[i][h] = src[(int64_t)(i * AL_BY) * d.in_rs + (int64_t)(h * AL_BX) * ics];
      } else {
#pragma unroll
        for (int i = 0; i < NI; ++i)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int64_t r = y + i * AL_BY - HALO; // relative to r0
            v[i][h] = 0;
            if (r < nr && r0 + r >= 0 && x + h * AL_BX < nc)
              v[i][h] = src[(int64_t)(i * AL_BY) * d.in_rs + (int64_t)(h * AL_BX) * ics];
          }
      }
#pragma unroll
      for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) tile[y + i * AL_BY][x + h * AL_BX] = v[i][h];
      __syncthreads();
      if (SHIFT) {
        // output row c0 + j, window r0 - a .. (next tile's r0 - a) - 1, or .. rows - 1 in the last tile row
        const bool last = tr == w.ntr - 1;
        T *dst = out + oo + c0 * d.out_rs + r0;
        if (full && !last) {
#pragma unroll
          for (int i = 0; i < AL_T / AL_BY; ++i) {
            const int j = y + i * AL_BY;
            T *q = dst + (int64_t)j * d.out_rs;
            const int a = (int)(((uintptr_t)q / sizeof(T)) & (SECT - 1));
#pragma unroll
            for (int h = 0; h < 2; ++h) q[x + h * AL_BX - a] = tile[HALO + x + h * AL_BX - a][j];
          }
        } else {
#pragma unroll
          for (int i = 0; i < AL_T / AL_BY; ++i) {
            const int j = y + i * AL_BY;
            T *q = dst + (int64_t)j * d.out_rs;
            const int a = (int)(((uintptr_t)q / sizeof(T)) & (SECT - 1));
            const int64_t end = last ? nr : AL_T - a;
            if (j >= nc) continue;
#pragma unroll
            for (int h = 0; h < 3; ++h) {
              const int rel = x + h * AL_BX - a; // output column r0 + rel = tile row HALO + rel
              if (rel < end && r0 + rel >= 0) q[rel] = tile[HALO + rel][j];
            }
          }
        }
      } else {
        // step 6: output row c0 + y + 8i, columns r0 + x + 32h
        T *dst = out + oo + (c0 + y) * d.out_rs + (r0 + x) * ocs;
        if (full) {
#pragma unroll
          for (int i = 0; i < AL_T / AL_BY; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              dst[(int64_t)(i * AL_BY) * d.out_rs + (int64_t)(h * AL_BX) * ocs] = tile[x + h * AL_BX][y + i * AL_BY];
        } else {
#pragma unroll
          for (int i = 0; i < AL_T / AL_BY; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              if (y + i * AL_BY < nc && x + h * AL_BX < nr)
                dst[(int64_t)(i * AL_BY) * d.out_rs + (int64_t)(h * AL_BX) * ocs] = tile[x + h * AL_BX][y + i * AL_BY];
        }
      }
      __syncthreads(); // the next tile overwrites the shared rows still being read
    }
  }
}

// ---------------------------------------------------------------- launcher

/* Shift when the output is written along unit-stride rows that do not all start on a 32-byte sector. */
static bool want_shift(const ck_tr_desc *d) {
  const int64_t sect = 32 / d->elem_size;
  if (d->out_cs != 1 && d->rows > 1) return false;
  if (d->rows < AL_SHIFT_MIN_ROWS) return false; // short output rows: the halo costs more than it saves
  return !((d->cols <= 1 || d->out_rs % sect == 0) && tr_aligned(d->out, 32) && tr_bstrides_multiple(d, true, sect));
}

template <typename T>
static void launch(const ck_tr_desc *d, const ck_env *env) {
  const tr_walk w = tr_walk_make(d, AL_T, AL_T);
  const dim3 grid = tr_grid(d, AL_T, AL_T), block(AL_BX, AL_BY);
  const bool unit = d->in_cs == 1 && (d->out_cs == 1 || d->rows <= 1);
  tr_kernel kern;
  if (want_shift(d))
    kern = unit ? transpose_aligned_kernel<T, true, true> : transpose_aligned_kernel<T, false, true>;
  else
    kern = unit && d->out_cs == 1 ? transpose_aligned_kernel<T, true, false> : transpose_aligned_kernel<T, false, false>;
  ck_note(env, kern, AL_BX * AL_BY, 0);
  kern<<<grid, block, 0, (cudaStream_t)env->stream>>>(*d, w);
}

extern "C" const char *ck_transpose_aligned_supports(const void *desc) {
  const ck_tr_desc *d = (const ck_tr_desc *)desc;
  /* the window shift can reach back SECT - 1 = 15 elements for 2-byte elements, past the 8-row halo */
  if (d->elem_size == 2) return "needs 4- or 8-byte elements (the 8-row halo covers a 32-byte sector of those; 2-byte elements need 15)";
  return tr_supports_common(d);
}

CK_TR_LAUNCHER(ck_transpose_aligned, launch)
