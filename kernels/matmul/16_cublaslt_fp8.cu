/*
 * 16_cublaslt_fp8.cu — matmul ladder, the FP8 library row: cublasLtMatmul on e4m3 or e5m2 operands (issue 37),
 * e4m3 x e4m3 or mixed (e4m3 x e5m2, e5m2 x e4m3: A's dtype is the descriptor's dtype, B's its b_dtype), f32
 * accumulation, a bf16, f16 or f32 result. The reference an FP8 rung of ours is measured against, and
 * what PyTorch's torch._scaled_mm calls.
 *
 * Idea: Hopper's FP8 tensor-core GEMMs take both operands K-major ("TN": in cuBLASLt's column-major terms
 * the first operand transposed, the second not). For cukern's row-major C = A B that means A with unit column
 * stride (a row of A is contiguous in k) and B with unit ROW stride (a column of B is contiguous in k: B is
 * the transpose of an [n, k] array, b8:t()), which is also torch._scaled_mm's rule. Then, column-major,
 * C^T (n x m, ld = c_rs) = B^T (op T of the stored k x n, ld = b_cs) * A^T (the stored k x m, ld = a_rs).
 * Per-tensor scales arrive folded into alpha (ck.matmul's scale_a * scale_b: the product is linear in each),
 * so D = alpha * A B + beta * C with alpha, beta in f32 (CUBLASLT's scale type for FP8 is f32).
 * Changed from step 0 (cuBLAS): the device's cublasLt handle (env->cublaslt, made with its cuBLAS handle), the
 * layouts as descriptors, and the algorithm from cublasLt's heuristic for this shape, run with a 32 MiB workspace.
 * Limits (supports): e4m3 x e4m3, e4m3 x e5m2 or e5m2 x e4m3 (cuBLASLt has no e5m2 x e5m2 kernel), K-major
 * operands as above, C row-major (c_cs == 1), k, lda, ldb multiples of 16, C's rows 16-byte multiples and 16-byte
 * aligned pointers (the FP8 kernels' rule), result bf16, f16 or f32.
 */
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "ck_kernels.h"

namespace {

const size_t WORKSPACE = 32u << 20;

cudaDataType_t fp8_type(int dt) { return dt == CK_E4M3 ? CUDA_R_8F_E4M3 : CUDA_R_8F_E5M2; }
cudaDataType_t out_type(int dt) { return dt == CK_BF16 ? CUDA_R_16BF : dt == CK_F16 ? CUDA_R_16F : CUDA_R_32F; }

bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* The descriptors of one call, destroyed together. */
struct Lt {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~Lt() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

/* A column-major layout (rows x cols, ld) repeated `batch` times `stride` elements apart. */
cublasStatus_t layout(cublasLtMatrixLayout_t *l, cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld,
                      int64_t batch, int64_t stride) {
  cublasStatus_t st = cublasLtMatrixLayoutCreate(l, t, (uint64_t)rows, (uint64_t)cols, ld);
  if (st != CUBLAS_STATUS_SUCCESS || batch == 1) return st;
  const int32_t count = (int32_t)batch;
  st = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
  return st;
}

#define LT_TRY(x)                                                                                                      \
  do {                                                                                                                 \
    const cublasStatus_t s_ = (x);                                                                                     \
    if (s_ != CUBLAS_STATUS_SUCCESS) return CK_KERR_CUBLAS(s_);                                                        \
  } while (0)

} // namespace

extern "C" const char *ck_matmul_cublaslt_fp8_supports(const void *desc) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  const bool fa = d->dtype == CK_E4M3 || d->dtype == CK_E5M2, fb = d->b_dtype == CK_E4M3 || d->b_dtype == CK_E5M2;
  if (!fa || !fb) return "takes FP8 operands only (e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3)";
  if (d->dtype == CK_E5M2 && d->b_dtype == CK_E5M2)
    return "e5m2 x e5m2: cuBLASLt has no kernel for it (it takes e4m3 x e4m3, e4m3 x e5m2 and e5m2 x e4m3)";
  if (d->c_dtype != CK_BF16 && d->c_dtype != CK_F16 && d->c_dtype != CK_F32) return "the result must be bf16, f16 or f32";
  if (d->a_cs != 1 && d->k > 1) return "A must be K-major (its rows contiguous: unit column stride)";
  if (d->b_rs != 1 && d->k > 1)
    return "B must be K-major (its columns contiguous: pass the transpose of an [n, k] array, b8:t(), as torch._scaled_mm does)";
  if (d->c_cs != 1 && d->n > 1) return "C must be row-major (unit column stride)";
  if (d->k % 16 || d->a_rs % 16 || d->b_cs % 16) return "k and the operands' leading dims must be multiples of 16 (FP8 kernels)";
  if (!aligned16(d->a) || !aligned16(d->b) || !aligned16(d->c)) return "the operands must be 16-byte aligned";
  { /* C's leading dim (the one the call passes: max(c_rs, n)) and batch stride 16-byte multiples too: with ldc = 259
     * bf16 cuBLASLt returned NOT_SUPPORTED at the call (fp8_spec's C view, session 14 run c, H200), and with ldc = 19
     * for a single row (run e) */
    const int64_t ce = d->c_dtype == CK_F32 ? 4 : 2, ldc = d->c_rs > d->n ? d->c_rs : d->n;
    if ((ldc * ce) % 16 || (d->batch > 1 && (d->c_bs * ce) % 16))
      return "C's rows must be 16-byte multiples (ldc * element size; its FP8 kernels' rule)";
  }
  if (d->m > INT32_MAX || d->n > INT32_MAX || d->k > INT32_MAX || d->batch > INT32_MAX) return "sizes must fit in 32 bits";
  return nullptr;
}

extern "C" int ck_matmul_cublaslt_fp8(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (ck_matmul_cublaslt_fp8_supports(desc)) return CK_KERR_CUBLAS(CUBLAS_STATUS_NOT_SUPPORTED);
  ck_order_check(env);
  const cublasLtHandle_t h = (cublasLtHandle_t)env->cublaslt;
  if (!h) return (int)cudaErrorInvalidResourceHandle; /* (the core makes it before any launch) */
  Lt lt;
  LT_TRY(cublasLtMatmulDescCreate(&lt.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t T = CUBLAS_OP_T, N = CUBLAS_OP_N;
  LT_TRY(cublasLtMatmulDescSetAttribute(lt.op, CUBLASLT_MATMUL_DESC_TRANSA, &T, sizeof T));
  LT_TRY(cublasLtMatmulDescSetAttribute(lt.op, CUBLASLT_MATMUL_DESC_TRANSB, &N, sizeof N));
  const cudaDataType_t in_a = fp8_type(d->dtype), in_b = fp8_type(d->b_dtype), out = out_type(d->c_dtype);
  // first operand: B as stored, k x n column-major (ld b_cs), transposed; second: A as stored, k x m (ld a_rs);
  // each layout carries its own operand's FP8 type (a mixed product: cuBLASLt's A is our B, of b_dtype)
  LT_TRY(layout(&lt.a, in_b, d->k, d->n, d->b_cs > d->k ? d->b_cs : d->k, d->batch, d->b_bs));
  LT_TRY(layout(&lt.b, in_a, d->k, d->m, d->a_rs > d->k ? d->a_rs : d->k, d->batch, d->a_bs));
  LT_TRY(layout(&lt.c, out, d->n, d->m, d->c_rs > d->n ? d->c_rs : d->n, d->batch, d->c_bs));
  LT_TRY(cublasLtMatmulPreferenceCreate(&lt.pref));
  const size_t ws_bytes = WORKSPACE;
  LT_TRY(cublasLtMatmulPreferenceSetAttribute(lt.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
  cublasLtMatmulHeuristicResult_t heur;
  int found = 0;
  LT_TRY(cublasLtMatmulAlgoGetHeuristic(h, lt.op, lt.a, lt.b, lt.c, lt.c, lt.pref, 1, &heur, &found));
  if (found < 1) return CK_KERR_CUBLAS(CUBLAS_STATUS_NOT_SUPPORTED);
  void *ws = env->ws_alloc(env->owner, ws_bytes);
  if (!ws) return (int)cudaErrorMemoryAllocation;
  const float alpha = (float)d->alpha, beta = (float)d->beta;
  const cublasStatus_t st = cublasLtMatmul(h, lt.op, &alpha, d->b, lt.a, d->a, lt.b, &beta, d->c, lt.c, d->c, lt.c,
                                           &heur.algo, ws, ws_bytes, (cudaStream_t)env->stream);
  env->ws_free(env->owner, ws); // (stream-ordered: the allocator reuses it only after the stream passes here)
  return st == CUBLAS_STATUS_SUCCESS ? 0 : CK_KERR_CUBLAS(st);
}
