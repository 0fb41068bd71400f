/*
 * mm_tc_host.cuh — the host side of the tensor-core rungs (10_wmma.cu, 11_mma_sync.cu; the sm_90a rungs through
 * mm_hopper.cuh): the kernel arguments TcArgs (2- and 4-byte inputs, an output dtype of its own, c_dtype, and
 * full element strides), the 16-byte-copy test (ab_vec), supports_tc, and launch_tiles (one block per tile; the
 * stream-K launch is mm_streamk.cuh's). TcArgs is read by the device code of every other part. Part of mm_tc.cuh.
 */
#ifndef CK_MM_TC_HOST_CUH
#define CK_MM_TC_HOST_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>

#include "ck_kernels.h"
#include "mm_common.cuh"

namespace cktc {

// ---------------------------------------------------------------- kernel arguments (host)

struct TcArgs {
  const void *a, *b;
  void *c;
  int64_t batch, m, n, k;
  int64_t a_bs, a_rs, a_cs, b_bs, b_rs, b_cs, c_bs, c_rs, c_cs;
  float alpha, beta;
  int c_dtype; /* CK_F32, CK_F16 or CK_BF16 */
  int cpair;   /* C allows 2-element stores (c_cs == 1, pairs aligned) */
  /* Stream-K tail (warp-specialized launches, launch_tiles_sk; sk_units == 0: one block per tile, 2-D grid):
   * a 1-D grid whose first sk_dp blocks take tiles 0 .. sk_dp - 1 whole and whose last sk_units blocks share
   * the k tiles of the remaining tiles (sk_iters of them, flattened) in equal runs; partial sums go to sk_part
   * (two BM x BN f32 slots per unit), sk_cnt counts the arrivals per tail tile (zeroed before the launch).
   * 32-bit: the device code divides in 32 bits (a 64-bit division is a call, and ptxas spilled around it). */
  int sk_dp, sk_units, sk_iters; /* < 2^31 each (launch_tiles_sk) */
  int sk_q, sk_r;                /* sk_iters = sk_q * sk_units + sk_r: unit u starts at u q + (u r) / units */
  float sk_uoi;                  /* sk_units / sk_iters: a first guess of the unit holding a k tile */
  float *sk_part;
  int *sk_cnt;
};

inline size_t dt_size(int dt) { return dt == CK_F64 ? 8 : (dt == CK_F16 || dt == CK_BF16) ? 2 : 4; }

/* An operand allows 16-byte copies along its rows: unit column stride, base, row stride and (with a batch)
 * batch stride multiples of 16 bytes. */
inline bool op_vec(const void *p, int64_t rs, int64_t cs, int64_t bs, int64_t batch, size_t es) {
  const int64_t per = 16 / (int64_t)es;
  return cs == 1 && ((uintptr_t)p & 15) == 0 && rs % per == 0 && (batch <= 1 || bs % per == 0);
}

inline bool ab_vec(const ck_mm_desc *d) {
  const size_t es = dt_size(d->dtype);
  return op_vec(d->a, d->a_rs, d->a_cs, d->a_bs, d->batch, es) && op_vec(d->b, d->b_rs, d->b_cs, d->b_bs, d->batch, es);
}

inline TcArgs tc_args(const ck_mm_desc *d) {
  TcArgs p;
  p.a = d->a, p.b = d->b, p.c = d->c;
  p.batch = d->batch, p.m = d->m, p.n = d->n, p.k = d->k;
  p.a_bs = d->a_bs, p.a_rs = d->a_rs, p.a_cs = d->a_cs;
  p.b_bs = d->b_bs, p.b_rs = d->b_rs, p.b_cs = d->b_cs;
  p.c_bs = d->c_bs, p.c_rs = d->c_rs, p.c_cs = d->c_cs;
  p.alpha = (float)d->alpha, p.beta = (float)d->beta;
  p.c_dtype = d->c_dtype;
  const int64_t es = (int64_t)dt_size(d->c_dtype), al = 2 * es; // a pair: 4 bytes (f16/bf16) or 8 (f32)
  p.cpair = d->c_cs == 1 && ((uintptr_t)d->c % al) == 0 && d->c_rs % 2 == 0 && (d->batch <= 1 || d->c_bs % 2 == 0);
  p.sk_dp = p.sk_units = p.sk_iters = p.sk_q = p.sk_r = 0, p.sk_uoi = 0.f, p.sk_part = nullptr, p.sk_cnt = nullptr;
  return p;
}

// ---------------------------------------------------------------- supports (host)

/* The dtype combinations of the tensor-core rungs: f16 -> f16/f32, bf16 -> bf16/f32 (f32 accumulation), and
 * f32 -> f32 only with precision == CK_MM_TF32 when `tf32` (the 11 rung); k < 2^31 (k tiles counted in an
 * int); a device of compute capability >= 8.0 on which `kern` has an image. */
inline const char *supports_tc(const ck_mm_desc *d, bool tf32, const void *kern) {
  if (d->dtype == CK_F16 || d->dtype == CK_BF16) {
    if (d->c_dtype != d->dtype && d->c_dtype != CK_F32) return "output must be the input dtype or f32";
  } else if (d->dtype == CK_F32) {
    if (!tf32) return "f16/bf16 inputs only";
    if (d->precision != CK_MM_TF32) return "f32 inputs only with precision = tf32 (opt-in)";
    if (d->c_dtype != CK_F32) return "tf32: output must be f32";
  } else {
    return tf32 ? "f16/bf16 inputs, or f32 with precision = tf32" : "f16/bf16 inputs only";
  }
  if (d->k > 0x7fffff00LL) return "needs k < 2^31";
  if (const char *why = ckmm::cc_outside(8, 99, "needs compute capability >= 8.0 (mma.sync m16n8k16, cp.async)")) return why;
  return ckmm::no_image(kern, "not built for this GPU (no kernel image; set CUDA_ARCH)");
}

// ---------------------------------------------------------------- launches (host)

/* One block per BM x BN tile (mm_common.cuh: split_tiles: several launches when y or z would pass 65535, the
 * kernel gets the first row tile and batch of its launch); SMEM bytes of dynamic shared memory, opted in
 * once per kernel past 48 KB. `raised` is the caller's per-kernel flag. */
template <int BM, int BN, int NT, int SMEM>
int launch_tiles(const ck_mm_desc *d, const ck_env *env, void (*kern)(TcArgs, int64_t, int64_t), ck_devcache &raised) {
  if (int e = ckmm::raise_smem(kern, SMEM, raised, env->device)) return e;
  const TcArgs p = tc_args(d);
  ck_note(env, kern, NT, SMEM);
  return ckmm::split_tiles(d, BM, BN, [&](dim3 grid, int64_t y0, int64_t z0) {
    kern<<<grid, NT, SMEM, (cudaStream_t)env->stream>>>(p, y0, z0);
  });
}

using ckmm::forced_cfg; // CUKERN_MM_CFG=<i> forces configuration i of a rung

} // namespace cktc

#endif
