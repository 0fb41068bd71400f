/*
 * ix_common.cu — the index ladder's shared launches (kernels/index/ix_common.cuh): the scatters' check pass,
 * the accumulating scatter and the cat copy (one launch per CK_CAT_MAX inputs).
 */
#include "ix_common.cuh"

namespace ckix {

/* The check pass of the scatters: every index in range (else flag[0] is set: note_bad), and, with
 * dup_check, no destination element written twice (one bit per destination element; else flag[1]). */
__global__ void scatter_check_k(ck_ix_desc d, unsigned *bits) {
  for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < d.numel; p += (int64_t)gridDim.x * blockDim.x) {
    const Offs o = walk(d, p);
    const int64_t i = load_ix(d.ix, d.ix_dt, o.ix);
    if (i < 1 || i > d.bound) {
      note_bad(d.flag, 0, p);
      continue;
    }
    if (d.dup_check) {
      const int64_t t = o.dup + (i - 1) * d.dup_dim_st;
      const unsigned m = 1u << (t & 31);
      if (atomicOr(&bits[t >> 5], m) & m) note_bad(d.flag, 1, p);
    }
  }
}

int scatter_prologue(const ck_ix_desc &d, const ck_env *env, void **bits_out) {
  cudaStream_t s = (cudaStream_t)env->stream;
  *bits_out = nullptr;
  unsigned *bits = nullptr;
  if (d.dup_check) {
    const size_t bytes = (size_t)((d.dup_numel + 31) / 32) * 4;
    bits = (unsigned *)env->ws_alloc(env->owner, bytes ? bytes : 4);
    if (!bits) return (int)cudaErrorMemoryAllocation;
    if (cudaError_t e = cudaMemsetAsync(bits, 0, bytes, s)) return (int)e;
    *bits_out = bits;
  }
  const int block = 256;
  ck_note(env, scatter_check_k, block, 0);
  scatter_check_k<<<grid_for(d.numel, block, env), block, 0, s>>>(d, bits);
  return (int)cudaGetLastError();
}

int scatter_add_launch(const ck_ix_desc &d, const ck_env *env) {
  cudaStream_t s = (cudaStream_t)env->stream;
  return by_add_dtype(d.dtype, [&](auto a) {
    const int block = 256;
    ck_note(env, scatter_add_k<decltype(a)>, block, 0);
    scatter_add_k<decltype(a)><<<grid_for(d.numel, block, env), block, 0, s>>>(d);
    return (int)cudaGetLastError();
  });
}

/* ---------------------------------------------------------------- cat
 * Input k is `rows` rows of row_bytes at src_pitch, written at out + dst_off with out_pitch; it is moved in units
 * of w bytes (the widest of 16, 8, 4, 2, 1 that divides its pointers, pitches and row length; `strided` keeps the
 * element size), CAT_UNITS units per block, the blocks of all inputs in one grid: a block finds its input by a
 * binary search over the first blocks (kernel parameters), and issues all its loads before its stores. */
constexpr int CAT_BLOCK = 256, CAT_UNROLL = 8;
constexpr int64_t CAT_UNITS = CAT_BLOCK * CAT_UNROLL;
struct CatIn {
  const char *src;
  int64_t src_pitch, row_units, dst_off, blk0;
  int w;
};
struct CatArgs {
  char *out;
  int64_t rows, out_pitch;
  int n;
  int64_t blk_end;
  CatIn in[CK_CAT_MAX];
};
static_assert(sizeof(CatArgs) <= 4000, "cat's kernel parameters must fit 4 KB");

template <class V> __device__ __forceinline__ void cat_units(const CatArgs &a, const CatIn &in, int64_t u0) {
  const int64_t total = a.rows * in.row_units;
  V buf[CAT_UNROLL];
  int64_t dst[CAT_UNROLL];
#pragma unroll
  for (int j = 0; j < CAT_UNROLL; ++j) {
    const int64_t u = u0 + j * CAT_BLOCK + threadIdx.x;
    dst[j] = -1;
    if (u < total) {
      int64_t r, c;
      divmod(u, in.row_units, r, c);
      buf[j] = *(const V *)(in.src + r * in.src_pitch + c * (int64_t)sizeof(V));
      dst[j] = in.dst_off + r * a.out_pitch + c * (int64_t)sizeof(V);
    }
  }
#pragma unroll
  for (int j = 0; j < CAT_UNROLL; ++j)
    if (dst[j] >= 0) *(V *)(a.out + dst[j]) = buf[j];
}

__global__ void __launch_bounds__(CAT_BLOCK) cat_k(const __grid_constant__ CatArgs a) {
  for (int64_t b = blockIdx.x; b < a.blk_end; b += gridDim.x) {
    int lo = 0, hi = a.n - 1; /* the last input whose first block is <= b */
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (a.in[mid].blk0 <= b) lo = mid;
      else hi = mid - 1;
    }
    const CatIn &in = a.in[lo];
    const int64_t u0 = (b - in.blk0) * CAT_UNITS;
    switch (in.w) {
    case 16: cat_units<uint4>(a, in, u0); break;
    case 8: cat_units<unsigned long long>(a, in, u0); break;
    case 4: cat_units<unsigned>(a, in, u0); break;
    case 2: cat_units<unsigned short>(a, in, u0); break;
    default: cat_units<unsigned char>(a, in, u0); break;
    }
  }
}

static int widest(uint64_t bits, int cap) {
  int w = cap;
  while (w > 1 && (bits & (uint64_t)(w - 1))) w /= 2;
  return w;
}

int cat_launch(const ck_ix_desc &d, const ck_env *env, bool wide) {
  CatArgs a;
  a.out = (char *)d.out;
  a.rows = d.rows;
  a.out_pitch = d.out_pitch;
  a.n = 0;
  int64_t blk = 0;
  for (int k = 0; k < d.n; ++k) {
    const ck_cat_in &s = d.in[k];
    if (s.row_bytes == 0 || d.rows == 0) continue;
    const uint64_t bits = (uint64_t)(uintptr_t)s.src | (uint64_t)(uintptr_t)(a.out + s.dst_off) | (uint64_t)s.row_bytes |
                          (uint64_t)(d.rows > 1 ? s.src_pitch | d.out_pitch : 0);
    const int w = widest(bits, wide ? 16 : d.es > 16 ? 16 : d.es);
    CatIn &c = a.in[a.n++];
    c.src = (const char *)s.src;
    c.src_pitch = s.src_pitch;
    c.row_units = s.row_bytes / w;
    c.dst_off = s.dst_off;
    c.w = w;
    c.blk0 = blk;
    blk += (d.rows * c.row_units + CAT_UNITS - 1) / CAT_UNITS;
  }
  a.blk_end = blk;
  if (a.n == 0) return 0;
  const int64_t cap = (int64_t)(env->sm_count > 0 ? env->sm_count : 80) * 16;
  const unsigned grid = (unsigned)(blk < cap ? blk : cap);
  ck_note(env, cat_k, CAT_BLOCK, 0);
  cat_k<<<grid, CAT_BLOCK, 0, (cudaStream_t)env->stream>>>(a);
  return (int)cudaGetLastError();
}

} // namespace ckix
