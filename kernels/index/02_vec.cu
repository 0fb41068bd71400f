/*
 * 02_vec.cu — index ladder, rung 2: the dense cases, moved in wide units with several loads in flight.
 *   index_select of rows: the output (new, contiguous) is [outer, n, inner]; output row (o, j) is source row
 *     (o, ix[j]) of `inner` contiguous elements: both sides move in units of the widest of 16/8/4/2/1 bytes that
 *     divides the row length, pointers and pitches, 4 units per thread issued before the stores (32-bit
 *     divisions where the sizes allow). The change from `strided`: no per-element walk over the dims, and
 *     16-byte moves instead of element moves.
 *   gather / take with a contiguous index and output: 4 positions per thread, the index loaded and the output
 *     stored as one vector each. The source (its dims merged where they can be): when its innermost dim is
 *     contiguous and a multiple of 4 long, the 4 positions are neighbours in one source row, so their offsets
 *     come from one walk over the dims, and when their 4 indices are equal (a gather of whole rows:
 *     idx[i, j] = p[i]) and the address is aligned, one vector load; else element by element.
 *   where with four contiguous operands of one shape: 4 elements per thread as vectors (the mask as 4 bytes).
 *   cat: the shared cat copy at the widest move (ix_common.cu), one launch per 64 inputs.
 * Out-of-range indices write zeros and flag it (flag[0]), as in `strided`; scatters are not taken (strided runs them).
 */
#include "ck_knob.h"
#include "ix_common.cuh"

using namespace ckix;

namespace {

template <int ES> struct __align__(ES * 4 < 16 ? ES * 4 : 16) V4 { typename Elem<ES>::T e[4]; };

/* ---------------------------------------------------------------- rows of index_select */
struct Rows {
  const char *src;
  char *out;
  const void *ix;
  int ix_dt, w;
  int64_t ix_step, n, outer, row_units, o_pitch, r_pitch, bound; /* pitches in bytes */
  int64_t *flag;
};
/* RU units a thread and trip, every load before the first store; each unit's load waits for its index load (an L1
 * hit after the first), so the trip's units are what hides the two latencies */
template <class V, int RU> __global__ void __launch_bounds__(256) rows_k(const Rows a) {
  const int64_t total = a.outer * a.n * a.row_units;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x * RU;
  for (int64_t base = (int64_t)blockIdx.x * blockDim.x * RU + threadIdx.x; base < total; base += stride) {
    V buf[RU];
#pragma unroll
    for (int k = 0; k < RU; ++k) {
      const int64_t u = base + (int64_t)k * blockDim.x;
      if (u >= total) break;
      int64_t r, c, o, j;
      divmod(u, a.row_units, r, c);
      divmod(r, a.n, o, j);
      const int64_t i = load_ix(a.ix, a.ix_dt, j * a.ix_step);
      if (i < 1 || i > a.bound) {
        note_bad(a.flag, 0, j);
        memset(&buf[k], 0, sizeof(V));
      } else {
        buf[k] = *(const V *)(a.src + o * a.o_pitch + (i - 1) * a.r_pitch + c * (int64_t)sizeof(V));
      }
    }
#pragma unroll
    for (int k = 0; k < RU; ++k) {
      const int64_t u = base + (int64_t)k * blockDim.x;
      if (u < total) ((V *)a.out)[u] = buf[k];
    }
  }
}

/* The rows plan of an index_select, or false: out contiguous, the source's dims after `dim` contiguous, its dims
 * before `dim` one stride. */
bool rows_plan(const ck_ix_desc &d, Rows *a) {
  if (d.fn != CK_IX_INDEX_SELECT) return false;
  int64_t want = 1;
  for (int k = d.nd - 1; k >= 0; --k) {
    if (d.shape[k] != 1 && d.out_st[k] != want) return false;
    want *= d.shape[k];
  }
  int64_t inner = 1;
  for (int k = d.nd - 1; k > d.dim; --k) {
    if (d.shape[k] != 1 && d.src_st[k] != inner) return false;
    inner *= d.shape[k];
  }
  int64_t outer = 1, o_st = 0;
  for (int k = d.dim - 1; k >= 0; --k) {
    if (d.shape[k] == 1) continue;
    if (outer > 1 && d.src_st[k] != o_st * outer) return false;
    if (outer == 1) o_st = d.src_st[k];
    outer *= d.shape[k];
  }
  const int64_t es = d.es, row_bytes = inner * es;
  uint64_t bits = (uint64_t)(uintptr_t)d.src | (uint64_t)(uintptr_t)d.out | (uint64_t)row_bytes |
                  (uint64_t)(d.dim_st * es) | (uint64_t)(o_st * es);
  int w = 16;
  while (w > 1 && (bits & (uint64_t)(w - 1))) w /= 2;
  a->src = (const char *)d.src;
  a->out = (char *)d.out;
  a->ix = d.ix;
  a->ix_dt = d.ix_dt;
  a->w = w;
  a->ix_step = d.ix_st[d.dim];
  a->n = d.shape[d.dim];
  a->outer = outer;
  a->row_units = row_bytes / w;
  a->o_pitch = o_st * es;
  a->r_pitch = d.dim_st * es;
  a->bound = d.bound;
  a->flag = d.flag;
  return true;
}

/* ---------------------------------------------------------------- dense gather / take */
struct Dense {
  int nd;
  int quad; /* the innermost dim has stride 1 and a length divisible by 4: a group of 4 is 4 neighbours of a row */
  int64_t shape[CK_MAX_DIMS], st[CK_MAX_DIMS]; /* the source's strides over the index space, dims merged */
};
__device__ __forceinline__ int64_t dense_off(const Dense &g, int64_t p) {
  int64_t o = 0;
  for (int j = g.nd - 1; j >= 0; --j) {
    int64_t qq, r;
    divmod(p, g.shape[j], qq, r);
    o += r * g.st[j];
    p = qq;
  }
  return o;
}
template <int ES, class IX> __global__ void __launch_bounds__(256) dense_gather_k(const ck_ix_desc d, const Dense g) {
  using T = typename Elem<ES>::T;
  using IV = V4<sizeof(IX)>;
  constexpr uintptr_t VA = alignof(V4<ES>);
  const int64_t groups = d.numel / 4;
  for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < groups; q += (int64_t)gridDim.x * blockDim.x) {
    const IV iv = ((const IV *)d.ix)[q];
    V4<ES> ov;
    const int64_t o0 = g.quad ? dense_off(g, q * 4) : 0;
    if (g.quad && iv.e[0] == iv.e[1] && iv.e[0] == iv.e[2] && iv.e[0] == iv.e[3]) { /* one source vector */
      const int64_t i = (int64_t)(IX)iv.e[0];
      const T *src = (const T *)d.src + o0 + (i - 1) * d.dim_st;
      if (i >= 1 && i <= d.bound && ((uintptr_t)src & (VA - 1)) == 0) {
        ((V4<ES> *)d.out)[q] = *(const V4<ES> *)src;
        continue;
      }
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int64_t o = g.quad ? o0 + k : dense_off(g, q * 4 + k);
      const int64_t i = (int64_t)(IX)iv.e[k];
      if (i < 1 || i > d.bound) {
        note_bad(d.flag, 0, q * 4 + k);
        memset(&ov.e[k], 0, sizeof(T));
      } else {
        ov.e[k] = ((const T *)d.src)[o + (i - 1) * d.dim_st];
      }
    }
    ((V4<ES> *)d.out)[q] = ov;
  }
  /* the last numel % 4 positions, one thread each */
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, p0 = groups * 4;
  if (t < d.numel - p0) {
    int64_t p = p0 + t, o = 0;
    for (int j = g.nd - 1; j >= 0; --j) {
      o += (p % g.shape[j]) * g.st[j];
      p /= g.shape[j];
    }
    const int64_t i = (int64_t)((const IX *)d.ix)[p0 + t];
    T v;
    if (i < 1 || i > d.bound) {
      note_bad(d.flag, 0, p0 + t);
      memset(&v, 0, sizeof v);
    } else {
      v = ((const T *)d.src)[o + (i - 1) * d.dim_st];
    }
    ((T *)d.out)[p0 + t] = v;
  }
}

bool aligned(const void *p, int64_t a) { return ((uintptr_t)p % (uintptr_t)a) == 0; }

bool dense_gather_ok(const ck_ix_desc &d) {
  if (d.fn != CK_IX_GATHER && d.fn != CK_IX_TAKE) return false;
  const int ixs = d.ix_dt == CK_I64 ? 8 : 4;
  return contiguous_over(d, d.out_st) && contiguous_over(d, d.ix_st) && aligned(d.out, d.es * 4 < 16 ? d.es * 4 : 16) &&
         aligned(d.ix, ixs * 4 < 16 ? ixs * 4 : 16);
}

Dense dense_geo(const ck_ix_desc &d) {
  Dense g;
  g.nd = 0;
  for (int k = 0; k < d.nd; ++k) {
    if (d.shape[k] == 1) continue;
    if (g.nd > 0 && g.st[g.nd - 1] == d.src_st[k] * d.shape[k]) { /* merge into the previous (outer) dim */
      g.shape[g.nd - 1] *= d.shape[k];
      g.st[g.nd - 1] = d.src_st[k];
      continue;
    }
    g.shape[g.nd] = d.shape[k];
    g.st[g.nd] = d.src_st[k];
    g.nd++;
  }
  if (g.nd == 0) g.nd = 1, g.shape[0] = 1, g.st[0] = 0;
  g.quad = g.st[g.nd - 1] == 1 && g.shape[g.nd - 1] % 4 == 0;
  return g;
}

/* ---------------------------------------------------------------- dense where */
/* WU groups of 4 per thread and trip, the block's threads on neighbouring groups, every load of the trip issued
 * before the first store (the contiguous elementwise rung's form: 4 x 16 bytes of each operand in flight for f32);
 * the launcher takes WU = 1 unless told (see there) */
template <int ES, int WU> __global__ void __launch_bounds__(256, 4) dense_where_k(const ck_ix_desc d) {
  using T = typename Elem<ES>::T;
  constexpr int B = 256; /* the block (a constant: the groups' offsets within a trip are immediates) */
  const int64_t groups = d.numel / 4;
  const int64_t step = (int64_t)gridDim.x * B * WU;
  const uchar4 *cm = (const uchar4 *)d.ix;
  const V4<ES> *xs = (const V4<ES> *)d.src, *ys = (const V4<ES> *)d.y;
  V4<ES> *os = (V4<ES> *)d.out;
  for (int64_t base = (int64_t)blockIdx.x * B * WU + threadIdx.x; base < groups; base += step) {
    uchar4 c[WU];
    V4<ES> x[WU], y[WU];
    const bool full = base + (WU - 1) * B < groups;
#pragma unroll
    for (int k = 0; k < WU; ++k)
      if (full || base + k * B < groups) c[k] = cm[base + k * B], x[k] = xs[base + k * B], y[k] = ys[base + k * B];
#pragma unroll
    for (int k = 0; k < WU; ++k) {
      if (!full && base + k * B >= groups) break;
      V4<ES> o;
      o.e[0] = c[k].x ? x[k].e[0] : y[k].e[0];
      o.e[1] = c[k].y ? x[k].e[1] : y[k].e[1];
      o.e[2] = c[k].z ? x[k].e[2] : y[k].e[2];
      o.e[3] = c[k].w ? x[k].e[3] : y[k].e[3];
      os[base + k * B] = o;
    }
  }
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, p = groups * 4 + t;
  if (p < d.numel)
    ((T *)d.out)[p] = ((const uint8_t *)d.ix)[p] ? ((const T *)d.src)[p] : ((const T *)d.y)[p];
}

bool dense_where_ok(const ck_ix_desc &d) {
  if (d.fn != CK_IX_WHERE) return false;
  const int64_t a = d.es * 4 < 16 ? d.es * 4 : 16;
  return contiguous_over(d, d.out_st) && contiguous_over(d, d.src_st) && contiguous_over(d, d.y_st) &&
         contiguous_over(d, d.ix_st) && aligned(d.out, a) && aligned(d.src, a) && aligned(d.y, a) && aligned(d.ix, 4);
}

} // namespace

extern "C" const char *ck_index_vec_supports(const void *desc) {
  const ck_ix_desc &d = *(const ck_ix_desc *)desc;
  Rows r;
  if (d.fn == CK_IX_CAT || rows_plan(d, &r) || dense_gather_ok(d) || dense_where_ok(d)) return nullptr;
  return "takes cat, index_select of contiguous rows, gather/take with a contiguous index, where of contiguous operands";
}

extern "C" int ck_index_vec(const void *desc, const ck_env *env) {
  const ck_ix_desc &d = *(const ck_ix_desc *)desc;
  cudaStream_t s = (cudaStream_t)env->stream;
  if (d.fn == CK_IX_CAT) return cat_launch(d, env, true);
  const int block = 256;
  Rows r;
  if (rows_plan(d, &r)) {
    /* units a thread and trip: 8, or CUKERN_IX_ROWS_U=4 to compare (the form before: 89.2% of memcpy for rows of
     * 2048 f32 on an H100) */
    const int ru = ck_knob("CUKERN_IX_ROWS_U", 4, 8, 8) >= 8 ? 8 : 4;
    const int64_t total = r.outer * r.n * r.row_units;
    const unsigned grid = grid_for((total + ru - 1) / ru, block, env);
    switch (r.w) {
#define CKIX_ROWS(W, V)                                                                                                      \
  case W:                                                                                                                    \
    if (ru == 8) {                                                                                                           \
      ck_note(env, rows_k<V, 8>, block, 0);                                                                                  \
      rows_k<V, 8><<<grid, block, 0, s>>>(r);                                                                                \
    } else {                                                                                                                 \
      ck_note(env, rows_k<V, 4>, block, 0);                                                                                  \
      rows_k<V, 4><<<grid, block, 0, s>>>(r);                                                                                \
    }                                                                                                                        \
    break;
      CKIX_ROWS(16, uint4)
      CKIX_ROWS(8, unsigned long long)
      CKIX_ROWS(4, unsigned)
      CKIX_ROWS(2, unsigned short)
      CKIX_ROWS(1, unsigned char)
#undef CKIX_ROWS
    }
    return (int)cudaGetLastError();
  }
  const unsigned grid = grid_for((d.numel + 3) / 4, block, env);
  if (dense_where_ok(d)) {
    /* groups per thread and trip: 1 (a group a trip, the first form: 93.9% of memcpy in f32 on an H100), or
     * CUKERN_IX_WHERE_U = 2 or 4 (at most 2 for 1- and 8-byte elements, 1 for 16: what fits 64 registers). 4 measured
     * 94.3% against 1's 95.1% in one run on an H200 (round 3 session 13, x2): 1 stays the default */
    const int wu = ck_knob("CUKERN_IX_WHERE_U", 1, 4, 1);
    return by_size(d.es, [&](auto es) {
      constexpr int ES = es.value, WMAX = ES >= 16 ? 1 : (ES == 8 || ES == 1) ? 2 : 4;
      const int u = wu >= WMAX ? WMAX : wu >= 2 ? 2 : 1;
      const unsigned g = grid_for((d.numel / 4 + u - 1) / u, block, env);
      auto go = [&](auto kern) {
        ck_note(env, kern, block, 0);
        kern<<<g, block, 0, s>>>(d);
        return (int)cudaGetLastError();
      };
      if constexpr (WMAX >= 4) if (u == 4) return go(dense_where_k<ES, 4>);
      if constexpr (WMAX >= 2) if (u == 2) return go(dense_where_k<ES, 2>);
      return go(dense_where_k<ES, 1>);
    });
  }
  const Dense g = dense_geo(d);
  return by_size(d.es, [&](auto es) {
    if (d.ix_dt == CK_I64) {
      ck_note(env, dense_gather_k<es.value, int64_t>, block, 0);
      dense_gather_k<es.value, int64_t><<<grid, block, 0, s>>>(d, g);
    } else {
      ck_note(env, dense_gather_k<es.value, int32_t>, block, 0);
      dense_gather_k<es.value, int32_t><<<grid, block, 0, s>>>(d, g);
    }
    return (int)cudaGetLastError();
  });
}
