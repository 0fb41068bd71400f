/*
 * mm_common.cuh — plumbing shared by the matmul ladder (kernels/matmul/NN_*.cu); no kernel lives here.
 *
 * What every rung needs and none of them teaches: the kernel arguments unpacked from ck_mm_desc, grid
 * capping, the f32/f64 launcher of steps 1-5, the 16-byte alignment test and float4 loads of steps 6-8, the
 * alpha/beta epilogue (beta == 0 never reads C, which may hold NaN), and the split launches, configuration
 * override and k limit of the templated steps 8-9. Each rung's kernel body stays in its own file.
 * Everything here is inlined into the kernels: it changes no register count, spill or shared-memory size.
 */
#ifndef CK_MM_COMMON_CUH
#define CK_MM_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>

#include "ck_kernels.h"
#include "ck_knob.h"

namespace ckmm {

/* cp.async group control (sm_80+), shared by the pipelined rungs (09 and the tensor-core rungs 10-11). */
__device__ __forceinline__ void cp_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
template <int N> __device__ __forceinline__ void cp_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}


// ---------------------------------------------------------------- kernel arguments (host)

/* Steps 1-5 (f32 and f64, accumulated in the operand type): sizes, row and batch strides (column strides
 * are 1: CK_VF_ROWMAJOR), typed pointers and scalars. */
template <typename T> struct MmArgs {
  const T *a, *b;
  T *c;
  int64_t batch, m, n, k;
  int64_t a_bs, a_rs, b_bs, b_rs, c_bs, c_rs;
  T alpha, beta;
};

template <typename T> MmArgs<T> mm_args(const ck_mm_desc *d) {
  MmArgs<T> p;
  p.a = (const T *)d->a, p.b = (const T *)d->b, p.c = (T *)d->c;
  p.batch = d->batch, p.m = d->m, p.n = d->n, p.k = d->k;
  p.a_bs = d->a_bs, p.a_rs = d->a_rs, p.b_bs = d->b_bs, p.b_rs = d->b_rs, p.c_bs = d->c_bs, p.c_rs = d->c_rs;
  p.alpha = (T)d->alpha, p.beta = (T)d->beta;
  return p;
}

/* An operand's base, leading dim and batch stride allow 16-byte accesses (pass bs = 0 without a batch). */
inline bool al16(const void *p, int64_t rs, int64_t bs) {
  return ((uintptr_t)p & 15) == 0 && rs % 4 == 0 && bs % 4 == 0;
}

/* A and B both allow 16-byte loads (steps 6-8 pick their VEC = true instantiation on it). */
inline bool ab_al16(const ck_mm_desc *d) {
  return al16(d->a, d->a_rs, d->batch > 1 ? d->a_bs : 0) && al16(d->b, d->b_rs, d->batch > 1 ? d->b_bs : 0);
}

/* Steps 6-9 (f32 only): MmArgs<float> and whether C may be written as float4. The base has no tail padding,
 * so the layout is that of one flat struct (cvec at byte 112). */
struct MmArgsV : MmArgs<float> {
  int cvec; /* C rows are 16-byte aligned: float4 stores allowed */
};
static_assert(sizeof(MmArgs<float>) == 112 && sizeof(MmArgsV) == 120, "flat kernel-argument layout");

inline MmArgsV mm_args_v(const ck_mm_desc *d) {
  MmArgsV p;
  static_cast<MmArgs<float> &>(p) = mm_args<float>(d);
  p.cvec = al16(d->c, d->c_rs, d->batch > 1 ? d->c_bs : 0);
  return p;
}

// ---------------------------------------------------------------- grids and launchers (host)

inline unsigned cap(int64_t v, int64_t lim) { return (unsigned)(v < lim ? v : lim); }

/* Steps 1-7: x = row tiles, y = column tiles (capped at 65535), z = batch (capped at 65535); the kernels
 * loop over whatever the caps cut off, so every shape fits. */
inline dim3 tile_grid(const ck_mm_desc *d, int64_t bm, int64_t bn) {
  return dim3(cap((d->m + bm - 1) / bm, 0x7fffffff), cap((d->n + bn - 1) / bn, 65535), cap(d->batch, 65535));
}

/* The launcher of steps 1-5: nothing to do for an empty C; else one launch of the f32 or the f64 kernel over
 * tile_grid(d, bm, bn) with `block` threads. */
inline int launch_f32_f64(const void *desc, const ck_env *env, void (*kf)(MmArgs<float>),
                          void (*kd)(MmArgs<double>), int64_t bm, int64_t bn, dim3 block) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  cudaStream_t s = (cudaStream_t)env->stream;
  const unsigned threads = block.x * block.y * block.z;
  if (d->dtype == CK_F32) {
    ck_note(env, kf, threads, 0);
    kf<<<tile_grid(d, bm, bn), block, 0, s>>>(mm_args<float>(d));
  } else if (d->dtype == CK_F64) {
    ck_note(env, kd, threads, 0);
    kd<<<tile_grid(d, bm, bn), block, 0, s>>>(mm_args<double>(d));
  } else {
    return (int)cudaErrorInvalidValue;
  }
  return (int)cudaGetLastError();
}

/* Dynamic shared memory past 48 KB is opted in once per kernel and device (`raised`: the caller's flags for that
 * kernel; the attribute applies to the current device only, so cuda:1 needs its own opt-in). */
template <class K> inline int raise_smem(K kern, int bytes, ck_devcache &raised, int dev) {
  if (bytes <= 48 * 1024 || raised.v[dev]) return 0;
  const cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (e != cudaSuccess) return (int)e;
  raised.v[dev] = 1;
  return 0;
}

/* The launches of the tiled rungs (steps 8-13) over bm x bn tiles of C: grid x = column tiles, y = row tiles,
 * z = batch, issued as several launches when y or z would pass 65535; launch(grid, y0, z0) issues one (the
 * kernel gets the first row tile and batch of its launch). */
template <class F> int split_tiles(const ck_mm_desc *d, int64_t bm, int64_t bn, F &&launch) {
  const int64_t mt = (d->m + bm - 1) / bm, nt = (d->n + bn - 1) / bn;
  if (nt >= (1 << 28)) return (int)cudaErrorInvalidConfiguration; /* > 3e10 columns: cannot be in memory */
  for (int64_t z0 = 0; z0 < d->batch; z0 += 65535)
    for (int64_t y0 = 0; y0 < mt; y0 += 65535) launch(dim3((unsigned)nt, cap(mt - y0, 65535), cap(d->batch - z0, 65535)), y0, z0);
  return (int)cudaGetLastError();
}

/* The launches of steps 8-9 (C: the step's configuration, kern: its kernel for C and vec), C::SMEM bytes of
 * dynamic shared memory. */
template <class C>
int launch_split(const ck_mm_desc *d, const ck_env *env, void (*kern)(MmArgsV, int64_t, int64_t), bool vec) {
  static ck_devcache raised[2]; // per instantiation and vec (the attribute is per function and device)
  if (int e = raise_smem(kern, C::SMEM, raised[vec], env->device)) return e;
  const MmArgsV p = mm_args_v(d);
  ck_note(env, kern, C::NT, C::SMEM);
  return split_tiles(d, C::BM, C::BN, [&](dim3 grid, int64_t y0, int64_t z0) {
    kern<<<grid, C::NT, C::SMEM, (cudaStream_t)env->stream>>>(p, y0, z0);
  });
}

/* supports() helpers: NULL when the current device's compute capability major is in [lo, hi], else why ("no CUDA
 * device" without one); NULL when kern has an image for the current device, else why (the failed query's error is
 * cleared: it is not sticky, but the next launch check would see it). */
inline const char *cc_outside(int lo, int hi, const char *why) {
  int dev = 0, major = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return "no CUDA device";
  }
  return major < lo || major > hi ? why : NULL;
}
inline const char *no_image(const void *kern, const char *why) {
  cudaFuncAttributes fa;
  if (cudaFuncGetAttributes(&fa, kern) == cudaSuccess) return NULL;
  (void)cudaGetLastError();
  return why;
}

/* CUKERN_MM_CFG=<i> forces configuration i (0 .. n-1) of a templated step; -1 when unset or out of range. */
inline int forced_cfg(int n) { return ck_knob("CUKERN_MM_CFG", 0, n - 1, -1); }

/* supports() of steps 8-9: they count k tiles in an int. */
inline const char *supports_k31(const void *desc) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  return d->k > 0x7fffff00LL ? "needs k < 2^31" : NULL;
}

// ---------------------------------------------------------------- device helpers

/* This block's tile of C (row tile, column tile) in grouped order: consecutive blocks walk GROUP tile rows of one
 * band of tile columns (L2 reuse of B panels; steps 9 and 17); GROUP 1: grid y and x as they are. */
template <int GROUP> __device__ __forceinline__ void block_tile(unsigned &tile_m, unsigned &tile_n) {
  tile_m = blockIdx.y, tile_n = blockIdx.x;
  if (GROUP > 1) {
    const unsigned band = blockIdx.y / GROUP, rows = min((unsigned)GROUP, gridDim.y - band * GROUP);
    const unsigned l = (blockIdx.y % GROUP) * gridDim.x + blockIdx.x; // < 2^32: gridDim.x < 2^28 (split_tiles)
    tile_m = band * GROUP + l % rows, tile_n = l / rows;
  }
}

/* One result: alpha * acc + beta * C at c; beta == 0 never reads C (it may hold NaN). */
template <typename T> __device__ __forceinline__ T epi(T acc, T alpha, T beta, const T *c) {
  return beta == T(0) ? alpha * acc : alpha * acc + beta * *c;
}

/* 4 consecutive floats: one 16-byte load when VEC (aligned), else four 4-byte loads. */
template <bool VEC> __device__ __forceinline__ float4 ld4(const float *__restrict__ p) {
  if (VEC) return __ldg(reinterpret_cast<const float4 *>(p));
  return make_float4(__ldg(p), __ldg(p + 1), __ldg(p + 2), __ldg(p + 3));
}

/* The first `valid` (<= 4, may be <= 0) of 4 consecutive floats, zeros after. */
__device__ __forceinline__ float4 ld4_guard(const float *__restrict__ p, int valid) {
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (valid > 0) v.x = __ldg(p);
  if (valid > 1) v.y = __ldg(p + 1);
  if (valid > 2) v.z = __ldg(p + 2);
  if (valid > 3) v.w = __ldg(p + 3);
  return v;
}

/* Write 4 results (columns lj .. lj+3 of a tile row at cp) with alpha/beta: one float4 when C allows it and
 * all 4 are inside the tile's nrem columns, else element by element; beta == 0 never reads C. */
__device__ __forceinline__ void store4(float *cp, const float *v, int lj, int nrem, const MmArgsV &p) {
  if (p.cvec && lj + 4 <= nrem) {
    float4 o = make_float4(p.alpha * v[0], p.alpha * v[1], p.alpha * v[2], p.alpha * v[3]);
    if (p.beta != 0.f) {
      const float4 c = *reinterpret_cast<const float4 *>(cp);
      o.x += p.beta * c.x, o.y += p.beta * c.y, o.z += p.beta * c.z, o.w += p.beta * c.w;
    }
    *reinterpret_cast<float4 *>(cp) = o;
  } else {
#pragma unroll
    for (int c = 0; c < 4; ++c)
      if (lj + c < nrem) cp[c] = epi(v[c], p.alpha, p.beta, cp + c);
  }
}

/* The epilogue of steps 7-9: a thread's TM x TN results, held as (TM/4) x (TN/4) quads, go to tile rows
 * row0 + (i/4)*RS + i%4 and columns col0 + j*CS .. +3 of the tile at Cb (RS, CS: the quads' strides in the
 * tile); rows past mrem are skipped, store4 guards the columns. */
template <int TM, int TN, int RS, int CS>
__device__ __forceinline__ void store_quads(float *Cb, const float (&acc)[TM][TN], int row0, int col0, int mrem,
                                            int nrem, const MmArgsV &p) {
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int li = row0 + (i / 4) * RS + i % 4;
    if (li >= mrem) continue;
#pragma unroll
    for (int j = 0; j < TN / 4; ++j) {
      const int lj = col0 + j * CS;
      store4(Cb + li * p.c_rs + lj, &acc[i][4 * j], lj, nrem, p);
    }
  }
}

} // namespace ckmm

#endif
