/*
 * 07_rows_warp.cu — layout rung: a warp per row, for many short rows.
 *
 * Idea: a block per row of 100 elements leaves most of 256 threads idle and pays barriers for nothing. A warp
 * reads 128 elements of its row at a time (4 consecutive per lane), scans them serially in registers and
 * across lanes with shuffles (no shared memory, no barrier), and carries the running total to the next 128.
 * It is also the default for whole arrays of up to 1024 elements: one launch of one warp's worth of work,
 * where CUB's sizing call, workspace and kernels cost more host time than the scan.
 * Launch: 256 threads = 8 rows per block, grid-stride over rows.
 * Limits: supports() takes rows of up to 1024 elements (longer rows go to rows_block or the single pass).
 * Operands: x contiguous [outer, len] (inner == 1), out contiguous [outer, len].
 */
#include "scan_common.cuh"

using namespace ckscan;

#define RW_ITEMS 4
#define RW_MAX_LEN 1024

// ---------------------------------------------------------------- kernel

template <class P>
__global__ void __launch_bounds__(256) scan_rows_warp_kernel(const typename P::in_t *__restrict__ x,
                                                             typename P::out_t *out, int64_t outer, int64_t len,
                                                             int exclusive) {
  using acc_t = typename P::acc_t;
  const int lane = threadIdx.x & 31;
  const int64_t warps = (int64_t)gridDim.x * 8;
  for (int64_t row = (int64_t)blockIdx.x * 8 + (threadIdx.x >> 5); row < outer; row += warps) {
    const typename P::in_t *xr = x + row * len;
    typename P::out_t *orow = out + row * len;
    acc_t carry = P::identity();
    for (int64_t c0 = 0; c0 < len; c0 += 32 * RW_ITEMS) {
      const int64_t j0 = c0 + lane * RW_ITEMS;
      acc_t r[RW_ITEMS];
#pragma unroll
      for (int m = 0; m < RW_ITEMS; ++m) r[m] = j0 + m < len ? P::load(xr[j0 + m]) : P::identity();
#pragma unroll
      for (int m = 1; m < RW_ITEMS; ++m) r[m] = P::combine(r[m - 1], r[m]);
      const acc_t inc = warp_incl<P>(r[RW_ITEMS - 1]);
      acc_t ex = shfl_up(inc, 1);
      if (lane == 0) ex = P::identity();
      const acc_t before = P::combine(carry, ex);
#pragma unroll
      for (int m = 0; m < RW_ITEMS; ++m)
        if (j0 + m < len)
          orow[j0 + m] = P::store(exclusive ? (m ? P::combine(before, r[m - 1]) : before) : P::combine(before, r[m]));
      carry = P::combine(carry, shfl_idx(inc, 31));
    }
  }
}

// ---------------------------------------------------------------- launcher

template <class P> static int launch(const ck_scan_desc &d, const ck_env *env) {
  ck_note(env, scan_rows_warp_kernel<P>, 256, 0);
  scan_rows_warp_kernel<P><<<grid_for(cdiv(d.outer, 8)), 256, 0, (cudaStream_t)env->stream>>>(
      (const typename P::in_t *)d.x, (typename P::out_t *)d.out, d.outer, d.len, d.exclusive);
  return (int)cudaGetLastError();
}

CK_SCAN_LAUNCHER(ck_scan_rows_warp, true, launch)

extern "C" const char *ck_scan_rows_warp_supports(const void *desc) {
  const ck_scan_desc *d = (const ck_scan_desc *)desc;
  if (d->inner != 1) return "scans contiguous rows only (inner == 1); 'cols' scans leading dims";
  if (d->len > RW_MAX_LEN) return "short rows only (len <= 1024): longer rows go to rows_block or lookback";
  return nullptr;
}
