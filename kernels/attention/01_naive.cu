/*
 * 01_naive.cu — rung 1: attention as three library-sized steps, with the score matrix S in memory.
 *
 * Idea: the definition. S = scale * Q K^T (cuBLAS, batched over heads; f32 scores for f16/bf16/f32 inputs, f64
 * for f64), the causal cut and the mask applied to S in place (-inf, or the mask added), the softmax ladder's
 * rung on the rows of S in place (kernels/rows: vectorized where it takes the row, else block), P rounded to the
 * input dtype for f16/bf16 (what every fused kernel feeds its second product too), then O = P V (cuBLAS).
 * What it costs: S is written once, read and written by the softmax, and read again: 4 passes over
 * heads x Sq x Skv floats, against the fused rungs' none. It is the reference the fused rungs are measured
 * against, and the only rung for f64, masks and head dims other than 64 and 128.
 * Memory: S is made in chunks of query rows of at most 256 MiB (per batch, all heads), so long sequences run.
 * Launch: per batch and chunk: 1 GEMM, (mask kernel), 1 softmax, (cast kernel), 1 GEMM.
 * Limits: none. Operands: q, k, v, o through their batch/head/seq strides, head dim at unit stride.
 */
#include <cuda_runtime.h>
#include <math.h>

#include <type_traits>

#include "ck_kernels.h"
#include "half.h"

#define NAIVE_CHUNK_BYTES ((int64_t)256 << 20)

// ---------------------------------------------------------------- kernels

/* S[h, i, j] (rows x skv per head, query i0 + i): the causal cut and the mask (bool: false -> -inf; else added). */
template <class A, class M>
__global__ void attn_mask_kernel(A *s, ck_attn_desc d, int64_t z, int64_t i0, int64_t rows) {
  const int64_t n = d.heads * rows * d.skv;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t j = e % d.skv, i = i0 + (e / d.skv) % rows, h = e / (d.skv * rows);
    A v = s[e];
    if (d.causal && j > i) v = -INFINITY;
    if (d.mask) {
      const M m = ((const M *)d.mask)[z * d.m_st[0] + h * d.m_st[1] + i * d.m_st[2] + j * d.m_st[3]];
      if constexpr (sizeof(M) == 1) v = m ? v : -INFINITY;
      else if constexpr (std::is_same_v<M, ck_f16_t>) v += ck_f16_to_f32(m.bits);
      else if constexpr (std::is_same_v<M, ck_bf16_t>) v += ck_bf16_to_f32(m.bits);
      else v += (A)m;
    }
    s[e] = v;
  }
}

/* P in the input dtype (f16/bf16), rounded once. */
template <class T> __global__ void attn_cast_kernel(T *out, const float *in, int64_t n) {
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (int64_t)gridDim.x * blockDim.x)
    out[e].bits = std::is_same_v<T, ck_f16_t> ? ck_f32_to_f16(in[e]) : ck_f32_to_bf16(in[e]);
}

// ---------------------------------------------------------------- launcher

static unsigned grid_of(int64_t n) { return (unsigned)(n / 256 + 1 < 65535 * 32 ? n / 256 + 1 : 65535 * 32); }

template <class A> static int mask(const ck_attn_desc &d, const ck_env *env, A *s, int64_t z, int64_t i0, int64_t rows) {
  const unsigned g = grid_of(d.heads * rows * d.skv);
  cudaStream_t st = (cudaStream_t)env->stream;
  switch (d.mask ? d.mask_dtype : CK_BOOL) {
  case CK_BOOL: ck_note(env, attn_mask_kernel<A, uint8_t>, 256, 0), attn_mask_kernel<A, uint8_t><<<g, 256, 0, st>>>(s, d, z, i0, rows); break;
  case CK_F32: ck_note(env, attn_mask_kernel<A, float>, 256, 0), attn_mask_kernel<A, float><<<g, 256, 0, st>>>(s, d, z, i0, rows); break;
  case CK_F64: ck_note(env, attn_mask_kernel<A, double>, 256, 0), attn_mask_kernel<A, double><<<g, 256, 0, st>>>(s, d, z, i0, rows); break;
  case CK_F16: ck_note(env, attn_mask_kernel<A, ck_f16_t>, 256, 0), attn_mask_kernel<A, ck_f16_t><<<g, 256, 0, st>>>(s, d, z, i0, rows); break;
  default: ck_note(env, attn_mask_kernel<A, ck_bf16_t>, 256, 0), attn_mask_kernel<A, ck_bf16_t><<<g, 256, 0, st>>>(s, d, z, i0, rows); break;
  }
  return (int)cudaGetLastError();
}

/* One chunk of query rows [i0, i0 + rows) of batch z: S, mask, softmax, P V. */
static int chunk(const ck_attn_desc &d, const ck_env *env, void *s, void *p16, int64_t z, int64_t i0, int64_t rows) {
  const bool half = d.dtype == CK_F16 || d.dtype == CK_BF16;
  const int acc = d.dtype == CK_F64 ? CK_F64 : CK_F32;
  const size_t an = (size_t)(rows * d.skv);
  const char *q = (const char *)d.q, *k = (const char *)d.k, *v = (const char *)d.v;
  const size_t ts = d.dtype == CK_F64 ? 8 : d.dtype == CK_F32 ? 4 : 2;
  ck_mm_desc mm = {};
  mm.dtype = mm.b_dtype = d.dtype, mm.c_dtype = acc, mm.batch = d.heads, mm.m = rows, mm.n = d.skv, mm.k = d.d;
  mm.a = q + (z * d.q_st[0] + i0 * d.q_st[2]) * ts, mm.a_bs = d.q_st[1], mm.a_rs = d.q_st[2], mm.a_cs = 1;
  mm.b = k + z * d.k_st[0] * ts, mm.b_bs = d.k_st[1], mm.b_rs = 1, mm.b_cs = d.k_st[2];
  mm.c = s, mm.c_bs = (int64_t)an, mm.c_rs = d.skv, mm.c_cs = 1;
  mm.alpha = d.scale, mm.beta = 0;
  int e = ck_matmul_cublas(&mm, env);
  if (!e && (d.causal || d.mask))
    e = acc == CK_F64 ? mask<double>(d, env, (double *)s, z, i0, rows) : mask<float>(d, env, (float *)s, z, i0, rows);
  if (e) return e;
  ck_rows_desc r = {};
  r.fn = CK_ROWS_SOFTMAX, r.dtype = acc, r.x = s, r.out = s, r.outer = d.heads * rows, r.len = d.skv, r.inner = 1;
  if ((e = ck_rows_vectorized_supports(&r) ? ck_rows_block(&r, env) : ck_rows_vectorized(&r, env))) return e;
  const void *pm = s;
  if (half) {
    const int64_t n = d.heads * (int64_t)an;
    if (d.dtype == CK_F16) ck_note(env, attn_cast_kernel<ck_f16_t>, 256, 0),
        attn_cast_kernel<ck_f16_t><<<grid_of(n), 256, 0, (cudaStream_t)env->stream>>>((ck_f16_t *)p16, (const float *)s, n);
    else ck_note(env, attn_cast_kernel<ck_bf16_t>, 256, 0),
        attn_cast_kernel<ck_bf16_t><<<grid_of(n), 256, 0, (cudaStream_t)env->stream>>>((ck_bf16_t *)p16, (const float *)s, n);
    if ((e = (int)cudaGetLastError())) return e;
    pm = p16;
  }
  ck_mm_desc pv = {};
  pv.dtype = pv.b_dtype = pv.c_dtype = d.dtype, pv.batch = d.heads, pv.m = rows, pv.n = d.dv, pv.k = d.skv;
  pv.a = pm, pv.a_bs = (int64_t)an, pv.a_rs = d.skv, pv.a_cs = 1;
  pv.b = v + z * d.v_st[0] * ts, pv.b_bs = d.v_st[1], pv.b_rs = d.v_st[2], pv.b_cs = 1;
  pv.c = (char *)d.o + (z * d.o_st[0] + i0 * d.o_st[2]) * ts, pv.c_bs = d.o_st[1], pv.c_rs = d.o_st[2], pv.c_cs = 1;
  pv.alpha = 1, pv.beta = 0;
  return ck_matmul_cublas(&pv, env);
}

extern "C" int ck_attn_naive(const void *desc, const ck_env *env) {
  const ck_attn_desc &d = *(const ck_attn_desc *)desc;
  const bool half = d.dtype == CK_F16 || d.dtype == CK_BF16;
  const size_t as = d.dtype == CK_F64 ? 8 : 4, row_bytes = (size_t)(d.heads * d.skv) * (as + (half ? 2 : 0));
  int64_t rows = NAIVE_CHUNK_BYTES / (int64_t)row_bytes;
  rows = rows < 1 ? 1 : rows > d.sq ? d.sq : rows;
  const size_t s_bytes = (size_t)(d.heads * rows * d.skv) * as;
  char *ws = (char *)env->ws_alloc(env->owner, (size_t)rows * row_bytes);
  if (!ws) return (int)cudaErrorMemoryAllocation;
  int e = 0;
  for (int64_t z = 0; z < d.batch && !e; ++z)
    for (int64_t i0 = 0; i0 < d.sq && !e; i0 += rows)
      e = chunk(d, env, ws, ws + s_bytes, z, i0, rows < d.sq - i0 ? rows : d.sq - i0);
  env->ws_free(env->owner, ws);
  return e;
}
