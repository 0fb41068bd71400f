/*
 * 09_single_pass.cu — one launch: a last-block finish instead of a second pass.
 *
 * Idea: step 8 needs a second launch for the partials (a few microseconds of launch and tail per call).
 * Here each block folds its (row, chunk) item with 16-byte loads (U = 4 in flight) and a shuffle block
 * reduction, writes its partial, fences, and takes a ticket from the row's atomic counter: the block that
 * draws the last ticket reads the row's partials (through L2) and writes the result. No block ever waits on
 * another, so there is no deadlock whatever the scheduling. Tickets start from zero via cudaMemsetAsync on
 * the stream (workspace memory is not zeroed). With one chunk per row there are no partials and no tickets.
 * The grid is ~4 waves of the device (sm_count x resident blocks x 4), not one persistent wave: on the H200
 * one wave of equal chunks left SMs idle at the end (~4.0 TB/s on 2^28 floats) and four waves let the block
 * scheduler even out slow and fast SMs (~4.15 TB/s), as CUB's "subscription factor" does. Still ~3% short
 * of CUB (4.27 TB/s): CUB's kernel fits in 32 registers (8 blocks/SM), this one needs 44 (5 blocks/SM) and
 * spills when capped; strip-mined tiles and U = 8 measured no better.
 * Launch: 256 threads, grid = items (capped; blocks loop); full reductions cut the array into ~4 waves of
 * chunks (chunks a multiple of the vector width, >= 4096 f32).
 * Operands: x contiguous [outer, len] (inner == 1), out/idx [outer]; any len >= 1, any alignment.
 */
#include "red_ops.cuh"

using namespace ckred;

// ---------------------------------------------------------------- kernel

template <class O, int BS, int U>
__global__ void __launch_bounds__(BS) reduce_single_pass_kernel(const typename O::value_t *__restrict__ x,
                                                                int64_t outer, int64_t len, int64_t per_row,
                                                                int64_t chunk, typename O::acc_t *part,
                                                                unsigned *tickets, typename O::value_t *out,
                                                                int32_t *idx) {
  using acc_t = typename O::acc_t;
  __shared__ bool am_last;
  for (int64_t b = blockIdx.x; b < outer * per_row; b += gridDim.x) {
    const int64_t row = b / per_row, c = b - row * per_row;
    const int64_t beg = c * chunk, end = beg + chunk < len ? beg + chunk : len;
    acc_t a = fold_range_vec<O, U>(x + row * len, beg, end, threadIdx.x, BS, O::identity());
    a = block_reduce<O, BS>(a);
    if (per_row == 1) {
      if (threadIdx.x == 0) O::store(a, out, idx, row, len);
      __syncthreads();
      continue;
    }
    if (threadIdx.x == 0) {
      part[b] = a;
      __threadfence(); /* the partial is visible device-wide before the ticket is */
      am_last = atomicAdd(&tickets[row], 1u) == (unsigned)(per_row - 1);
    }
    __syncthreads();
    if (am_last) {
      __threadfence();
      acc_t s = fold_partials<O, true>(part + row * per_row, 0, per_row, threadIdx.x, BS);
      s = block_reduce<O, BS>(s);
      if (threadIdx.x == 0) O::store(s, out, idx, row, len);
    }
    __syncthreads();
  }
}

// ---------------------------------------------------------------- launcher

template <class O>
static int launch(const ck_red_desc &d, const ck_env *env) {
  using acc_t = typename O::acc_t;
  constexpr int BS = 256, U = 4, WAVES = 4;
  constexpr int N = Vec<typename O::value_t>::N;
  cudaStream_t s = (cudaStream_t)env->stream;
  static int occ = 0;
  if (!occ) occ = occupancy((const void *)reduce_single_pass_kernel<O, BS, U>, BS, 0);
  const Plan p = plan_rows(d.outer, d.len, (int64_t)env->sm_count * occ * WAVES, (int64_t)BS * N * U, N);
  const unsigned grid = grid_for(p.items);
  typename O::value_t *out = (typename O::value_t *)d.out;
  ck_note(env, reduce_single_pass_kernel<O, BS, U>, BS, 0); /* one kernel either way: the last block finishes */
  if (p.per_row == 1) {
    reduce_single_pass_kernel<O, BS, U><<<grid, BS, 0, s>>>((const typename O::value_t *)d.x, d.outer, d.len, 1,
                                                            p.chunk, nullptr, nullptr, out, d.idx);
    return (int)cudaGetLastError();
  }
  const size_t part_bytes = ((size_t)p.items * sizeof(acc_t) + 255) & ~(size_t)255;
  Ws w(env, part_bytes + (size_t)d.outer * sizeof(unsigned));
  if (!w.p) return (int)cudaErrorMemoryAllocation;
  unsigned *tickets = (unsigned *)((char *)w.p + part_bytes);
  int err = (int)cudaMemsetAsync(tickets, 0, (size_t)d.outer * sizeof(unsigned), s);
  if (err) return err;
  reduce_single_pass_kernel<O, BS, U><<<grid, BS, 0, s>>>((const typename O::value_t *)d.x, d.outer, d.len,
                                                          p.per_row, p.chunk, (acc_t *)w.p, tickets, out, d.idx);
  return (int)cudaGetLastError();
}

CK_RED_LAUNCHER_H(ck_reduce_single_pass, launch)

extern "C" const char *ck_reduce_single_pass_supports(const void *desc) {
  return check_rows((const ck_red_desc *)desc);
}
