/*
 * 08_shuffle_vec.cu — beyond Harris: warp shuffles and 16-byte vector loads.
 *
 * Idea: step 7 is bound by how many bytes each thread has in flight and by the shared-memory tree. Here
 * (1) each thread reads its elements as 16-byte vectors (LDG.E.128: 4 floats, 2 doubles, 4 ints), U = 4 of
 * them issued before any is used; a row whose start is not 16-byte aligned gets a scalar head, and the
 * length remainder a scalar tail (fold_range_vec), so any offset and length work; (2) the block reduction
 * uses __shfl_down_sync inside each warp and shared memory only for one value per warp (block_reduce).
 * Each block owns a contiguous chunk of a row (page-friendly streaming) instead of step 7's interleave.
 * Launch: 256 threads; the grid is ~4 waves of the device (sm_count x resident blocks x 4, so the block
 * scheduler can even out SMs), cut into per_row chunks per row (chunk a multiple of the vector width,
 * >= 4096 f32); partials go through the shared finisher (a second launch).
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]; any len >= 1, any alignment.
 */
#include "red_ops.cuh"

using namespace ckred;

// ---------------------------------------------------------------- kernel

template <class O, int BS, int U>
__global__ void __launch_bounds__(BS) reduce_shuffle_vec_kernel(const typename O::value_t *__restrict__ x,
                                                                int64_t outer, int64_t len, int64_t per_row,
                                                                int64_t chunk, typename O::acc_t *part,
                                                                typename O::out_t *out, int64_t *idx) {
  for (int64_t b = blockIdx.x; b < outer * per_row; b += gridDim.x) {
    const int64_t row = b / per_row, c = b - row * per_row;
    const int64_t beg = c * chunk, end = beg + chunk < len ? beg + chunk : len;
    typename O::acc_t a = fold_range_vec<O, U>(x + row * len, beg, end, threadIdx.x, BS, O::identity());
    a = block_reduce<O, BS>(a);
    if (threadIdx.x == 0) put_result<O>(a, part, b, out, idx, row, len);
    __syncthreads();
  }
}

// ---------------------------------------------------------------- launcher

template <class O>
static int launch(const ck_red_desc &d, const ck_env *env) {
  constexpr int BS = 256, U = 4, WAVES = 4;
  constexpr int N = Vec<typename O::value_t>::N;
  static ck_devcache occs; /* per instantiation and device; a benign race if two threads fill it */
  int &occ = occs.v[env->device];
  if (!occ) occ = occupancy((const void *)reduce_shuffle_vec_kernel<O, BS, U>, BS, 0);
  const Plan p = plan_rows(d.outer, d.len, (int64_t)env->sm_count * occ * WAVES, (int64_t)BS * N * U, N);
  return run_chunked<O>(d, env, p.per_row, [&](typename O::acc_t *part, typename O::out_t *out, int64_t *idx) {
    ck_note(env, reduce_shuffle_vec_kernel<O, BS, U>, BS, 0);
    reduce_shuffle_vec_kernel<O, BS, U><<<grid_for(p.items), BS, 0, (cudaStream_t)env->stream>>>(
        (const typename O::value_t *)d.x, d.outer, d.len, p.per_row, p.chunk, part, out, idx);
  });
}

CK_RED_LAUNCHER_H(ck_reduce_shuffle_vec, launch)

extern "C" const char *ck_reduce_shuffle_vec_supports(const void *desc) {
  return check_rows((const ck_red_desc *)desc);
}
