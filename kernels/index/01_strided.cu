/*
 * 01_strided.cu — index ladder, rung 1: one element per thread over the index space, any strides (views,
 * broadcasting: stride 0), every dtype by its size (ix_common.cuh's Elem<ES>: 5 instantiations per kernel, not
 * one per dtype).
 *   gathers (gather, index_select, take): the index is checked in the same pass; an out-of-range one writes 0
 *     and flags it (flag[0]; the output is new, and the dispatcher frees it on the error).
 *   scatters (scatter, index_copy, put; scatter_add, index_add): a check pass first (ranges, and repeated
 *     destinations when the source is not one value), then the writing kernel, which writes nothing when the
 *     check found anything: a bad call leaves the destination as it was, with no synchronisation in between.
 *   where: out = cond ? x : y, broadcast. cat: the shared cat copy at the element size.
 * Launch: 256 threads, a grid-stride loop over at most 32 blocks per SM.
 */
#include "ix_common.cuh"

using namespace ckix;

template <int ES> __global__ void gather_k(ck_ix_desc d) {
  using T = typename Elem<ES>::T;
  for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < d.numel; p += (int64_t)gridDim.x * blockDim.x) {
    const Offs o = walk(d, p);
    const int64_t i = load_ix(d.ix, d.ix_dt, o.ix);
    T v;
    if (i < 1 || i > d.bound) {
      note_bad(d.flag, 0, p);
      memset(&v, 0, sizeof v);
    } else {
      v = ((const T *)d.src)[o.src + (i - 1) * d.dim_st];
    }
    ((T *)d.out)[o.out] = v;
  }
}

template <int ES> __global__ void scatter_k(ck_ix_desc d) {
  using T = typename Elem<ES>::T;
  if (check_failed(d)) return;
  for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < d.numel; p += (int64_t)gridDim.x * blockDim.x) {
    const Offs o = walk(d, p);
    const int64_t i = load_ix(d.ix, d.ix_dt, o.ix);
    if (i < 1 || i > d.bound) continue; /* never reached after the check; no launch can fault */
    ((T *)d.out)[o.out + (i - 1) * d.dim_st] = ((const T *)d.src)[o.src];
  }
}

template <int ES> __global__ void where_k(ck_ix_desc d) {
  using T = typename Elem<ES>::T;
  for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < d.numel; p += (int64_t)gridDim.x * blockDim.x) {
    const Offs o = walk(d, p);
    const bool c = ((const uint8_t *)d.ix)[o.ix] != 0;
    ((T *)d.out)[o.out] = c ? ((const T *)d.src)[o.src] : ((const T *)d.y)[o.y];
  }
}

static bool is_gather(int fn) { return fn == CK_IX_GATHER || fn == CK_IX_INDEX_SELECT || fn == CK_IX_TAKE; }

extern "C" const char *ck_index_strided_supports(const void *desc) {
  const ck_ix_desc *d = (const ck_ix_desc *)desc;
  if (d->fn == CK_IX_COUNT || d->fn == CK_IX_MASKED_SELECT || d->fn == CK_IX_NONZERO)
    return "compactions (count, masked_select, nonzero) run on cub";
  return nullptr;
}

extern "C" int ck_index_strided(const void *desc, const ck_env *env) {
  const ck_ix_desc &d = *(const ck_ix_desc *)desc;
  cudaStream_t s = (cudaStream_t)env->stream;
  const int block = 256;
  if (d.fn == CK_IX_CAT) return cat_launch(d, env, false);
  const unsigned grid = grid_for(d.numel, block, env);
  if (d.fn == CK_IX_WHERE)
    return by_size(d.es, [&](auto es) {
      ck_note(env, where_k<es.value>, block, 0);
      where_k<es.value><<<grid, block, 0, s>>>(d);
      return (int)cudaGetLastError();
    });
  if (is_gather(d.fn))
    return by_size(d.es, [&](auto es) {
      ck_note(env, gather_k<es.value>, block, 0);
      gather_k<es.value><<<grid, block, 0, s>>>(d);
      return (int)cudaGetLastError();
    });
  void *bits = nullptr;
  int err = scatter_prologue(d, env, &bits);
  if (!err) {
    if (d.fn == CK_IX_SCATTER_ADD || d.fn == CK_IX_INDEX_ADD) err = scatter_add_launch(d, env);
    else
      err = by_size(d.es, [&](auto es) {
        ck_note(env, scatter_k<es.value>, block, 0);
        scatter_k<es.value><<<grid, block, 0, s>>>(d);
        return (int)cudaGetLastError();
      });
  }
  if (bits) env->ws_free(env->owner, bits);
  return err;
}
