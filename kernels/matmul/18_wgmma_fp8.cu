/*
 * 18_wgmma_fp8.cu — matmul ladder, step 18 (Hopper, sm_90a; issue 37): step 14's persistent kernel on FP8
 * inputs: e4m3 or e5m2 in either operand (any pairing, e5m2 x e5m2 included), f32 accumulation, a bf16, f16 or
 * f32 result, the per-tensor scales applied in the epilogue. Its reference is rung 16 (cuBLASLt FP8, what
 * torch._scaled_mm calls).
 *
 * Idea: Hopper's tensor cores multiply 8-bit floats at twice the rate of 16-bit ones (wgmma m64nNk32: k32 per
 * instruction where f16/bf16 take k16), and the operands are half the bytes. Step 14's kernel needs only two
 * changes for it, both in its input policy (mm_persistent.cuh: In):
 *   - a k tile is still one 128-byte swizzle row, now of 128 elements: the shared-memory tiles, their TMA boxes
 *     (the maps move the elements as bytes, mm_hopper.cuh: make_map) and the wgmma descriptors are the same
 *     bytes as for bf16, and a k tile is still 4 wgmma of 32 bytes of k; only the k coordinates double;
 *   - the instruction: wgmma.mma_async m64n256k32 .f32.e4m3/.e5m2 (mm_wgmma.inc). It has no transpose bits: it
 *     reads both operands K-major, as cuBLASLt's FP8 kernels do. For cukern's row-major C = A B that is A with
 *     unit column stride and B with unit ROW stride (B the transpose of an [n, k] array, b8:t()), the rule
 *     torch._scaled_mm and rung 16 have too; other layouts are declined here rather than copied, because the
 *     copy (a transpose of B) would cost as much as a large part of the product.
 * The scales: ck.matmul folds scale_a * scale_b into alpha (the product is linear in each), and the epilogue
 * multiplies every accumulator by alpha before the conversion to the result dtype, as for the other rungs.
 * Changed from step 14: FP8 inputs through the policy, K-major operands only, the result dtype chosen by
 * `out` (bf16 or f16 through the TMA-store epilogue, f32 or any C layout the TMA store cannot take through
 * direct stores); 2-CTA clusters always (step 14's default configuration; CUKERN_MM_CFG is step 14's).
 * Launch: as step 14 (384 threads, one block per SM, 225 KB of shared memory, block tile 128 x 256 x 128).
 * Limits (supports): FP8 inputs, K-major A and B whose rows a tensor map takes (16-byte aligned bases, k and
 * the leading dims multiples of 16), m, n, k < 2^31, fewer than 2^31 tiles, a compute capability 9.x device
 * and an sm_90a build.
 */
#include "mm_persistent.cuh"

using namespace ckp;

namespace {

/* 2-CTA clusters always (step 14's default configuration): each block of a pair loads half of the B tile, so B's
 * box has BN / CL rows */
constexpr int CL = 2;

/* The result through the TMA store (bf16, f16) or direct stores (f32; C that no map takes), for inputs TA x TB. */
template <typename TA, typename TB> int launch_inputs(const ck_mm_desc *d, const ck_env *env, const Maps &mp) {
  CUtensorMap mc;
  memset(&mc, 0, sizeof mc);
  if (make_c_map(&mc, d)) {
    if (d->c_dtype == CK_BF16) return launch_cfg<In<TA, TB, __nv_bfloat16>, KMAJ, KMAJ, CL, true>(d, env, mp, mc);
    return launch_cfg<In<TA, TB, __half>, KMAJ, KMAJ, CL, true>(d, env, mp, mc);
  }
  return launch_cfg<In<TA, TB, __nv_bfloat16>, KMAJ, KMAJ, CL, false>(d, env, mp, mc); // (C unused by direct stores)
}

template <typename TA> int launch_b(const ck_mm_desc *d, const ck_env *env, const Maps &mp) {
  return d->b_dtype == CK_E4M3 ? launch_inputs<TA, __nv_fp8_e4m3>(d, env, mp) : launch_inputs<TA, __nv_fp8_e5m2>(d, env, mp);
}

bool fp8(int dt) { return dt == CK_E4M3 || dt == CK_E5M2; }

} // namespace

extern "C" const char *ck_matmul_wgmma_fp8_supports(const void *desc) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (!fp8(d->dtype) || !fp8(d->b_dtype)) return "takes FP8 operands only (e4m3, e5m2)";
  if (d->c_dtype != CK_BF16 && d->c_dtype != CK_F16 && d->c_dtype != CK_F32) return "the result must be bf16, f16 or f32";
  if (d->m > 0x7fffffffLL || d->n > 0x7fffffffLL || d->k > 0x7fffffffLL) return "needs m, n, k < 2^31 (TMA coordinates)";
  if (((d->m + BM - 1) / BM + 1) / 2 * ((d->n + BN - 1) / BN) * d->batch > 0x7fffffffLL) return "needs fewer than 2^31 tiles";
  // K-major, and rows a tensor map takes (ck_tma_operand: 1 = the k dim contiguous with 16-byte aligned rows)
  if (ck_tma_operand(d->a, d->m, d->k, d->a_rs, d->a_cs, d->a_bs, 1) != 1)
    return "A must be K-major (unit column stride) with 16-byte aligned base and rows (k, lda multiples of 16)";
  if (ck_tma_operand(d->b, d->n, d->k, d->b_cs, d->b_rs, d->b_bs, 1) != 1)
    return "B must be K-major (unit row stride: the transpose of an [n, k] array, b8:t()) with 16-byte aligned base "
           "and columns (k, ldb multiples of 16)";
  if (const char *why = ckmm::cc_outside(9, 9, "needs a Hopper GPU (compute capability 9.x: FP8 wgmma, TMA)")) return why;
  if (const char *why = ckmm::no_image((const void *)matmul_persistent_kernel<In<__nv_fp8_e4m3, __nv_fp8_e4m3, __nv_bfloat16>, KMAJ, KMAJ, CL, false>,
                                       "not built for this GPU (no kernel image; build with CUDA_ARCH=90a)"))
    return why;
  if (!encode_fn()) return "the driver has no cuTensorMapEncodeTiled (needs CUDA 12+ driver)";
  return NULL;
}

extern "C" int ck_matmul_wgmma_fp8(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  if (!fp8(d->dtype) || !fp8(d->b_dtype)) return (int)cudaErrorInvalidValue;
  Maps mp;
  if (!make_maps(mp, d, BM, BN / CL) || mp.la != KMAJ || mp.lb != KMAJ) return (int)cudaErrorInvalidValue;
  return d->dtype == CK_E4M3 ? launch_b<__nv_fp8_e4m3>(d, env, mp) : launch_b<__nv_fp8_e5m2>(d, env, mp);
}
