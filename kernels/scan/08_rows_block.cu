/*
 * 08_rows_block.cu — layout rung: a block per row, for many long rows.
 *
 * Idea: with thousands of rows there is no need to split a row across blocks (and pay for the look-back or a
 * second pass): a block walks its row tile by tile (256 x 16 elements, 16-byte vector loads, as step 4) and
 * keeps the running total in registers (every thread has the block's total after each tile). One read and
 * one write of each element, no workspace, no inter-block communication. cumsum along the last dim of
 * 16384 x 16384 is this case.
 * Launch: 256 threads, grid-stride over rows.
 * Limits: supports() takes inner == 1 with at least 256 rows or rows of at most 65536 elements (a few very long
 * rows would leave most SMs idle: the look-back rung splits them).
 * Operands: x contiguous [outer, len] (inner == 1), out contiguous [outer, len].
 */
#include "scan_common.cuh"

using namespace ckscan;

#define RB_BLOCK 256
#define RB_ITEMS 16

// ---------------------------------------------------------------- kernel

template <class P>
__global__ void __launch_bounds__(RB_BLOCK) scan_rows_block_kernel(const typename P::in_t *__restrict__ x,
                                                                   typename P::out_t *out, int64_t outer, int64_t len,
                                                                   int exclusive) {
  using T = Tile<P, RB_BLOCK, RB_ITEMS>;
  using acc_t = typename P::acc_t;
  __shared__ acc_t s[T::SMEM];
  __shared__ acc_t wsum[RB_BLOCK / 32];
  for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
    acc_t carry = P::identity();
    for (int64_t j0 = 0; j0 < len; j0 += T::N) {
      T::load(x + row * len, j0, len, s);
      __syncthreads();
      const acc_t total = T::scan(s, carry, exclusive != 0, wsum);
      T::store(out + row * len, j0, len, s);
      carry = P::combine(carry, total);
      __syncthreads();
    }
  }
}

// ---------------------------------------------------------------- launcher

template <class P> static int launch(const ck_scan_desc &d, const ck_env *env) {
  ck_note(env, scan_rows_block_kernel<P>, RB_BLOCK, 0);
  scan_rows_block_kernel<P><<<grid_for(d.outer), RB_BLOCK, 0, (cudaStream_t)env->stream>>>(
      (const typename P::in_t *)d.x, (typename P::out_t *)d.out, d.outer, d.len, d.exclusive);
  return (int)cudaGetLastError();
}

CK_SCAN_LAUNCHER(ck_scan_rows_block, true, launch)

extern "C" const char *ck_scan_rows_block_supports(const void *desc) {
  const ck_scan_desc *d = (const ck_scan_desc *)desc;
  if (d->inner != 1) return "scans contiguous rows only (inner == 1); 'cols' scans leading dims";
  if (d->outer < 256 && d->len > 65536) return "few long rows (< 256 rows longer than 65536): lookback splits them";
  return nullptr;
}
