/*
 * 03_smem.cu — matmul ladder, step 3: 32 x 32 tiles of A and B staged in shared memory.
 *
 * Idea: in step 2 every element of A and B is fetched from global memory (or L1/L2) once per thread that
 * needs it: 2*k loads per result. Here a block of 32 x 32 threads walks k in steps of 32: each thread loads
 * one element of the A tile and one of the B tile (both loads coalesced: a warp reads 32 consecutive
 * elements of a row), the block synchronises, and every thread runs 32 steps of its dot product out of
 * shared memory: global traffic drops 32-fold. In the inner loop a warp reads one A element (a broadcast:
 * As[ty][kk]) and 32 consecutive B elements (Bs[kk][tx], 32 different banks): no bank conflicts.
 * Edge tiles (m, n or k not a multiple of 32) are zero-filled, so the inner loop never branches.
 * Changed from step 2: shared-memory tiling; block 32 x 32 threads, one result per thread.
 * Launch (through ck_launch.cuh, the driver-API path opt-in; this rung is the default for products up to 64^3
 * multiply-adds, src/ops/op_matmul.c: 8x8 via cuBLAS cost 11.62 us of host time on the H100 host, this path is
 * not yet measured): block 32 x 32; grid x = row tiles, y = column tiles (capped at 65535), z = batch (capped at
 * 65535); the kernel loops over what the caps cut off. Shared: 8 KB (f32) or 16 KB (f64).
 * Limits: none. Any m, n, k >= 0 (k == 0 gives C = beta*C), any leading dims, batch strides may be 0.
 * Operands (CK_VF_ROWMAJOR): A [m,k] at a + b*a_bs + i*a_rs + p, B [k,n] at b + b*b_bs + p*b_rs + j,
 * C [m,n] at c + b*c_bs + i*c_rs + j; f32 and f64 (accumulated in the operand type); the integer dtypes i32, i64,
 * u32, i16, i8, u8 (issue 32: the only GPU rung that takes them; the host's wrapping rule, below). Shared: 2 KB
 * (i8/u8) to 16 KB (i64) for the integer kernels.
 */
#include <math.h>

#include <limits>
#include <type_traits>

#include "mm_common.cuh"
#include "../ck_launch.cuh"

using namespace ckmm;

namespace {

// ---------------------------------------------------------------- kernel

constexpr int TS = 32; // tile edge = block edge

template <typename T> __global__ void __launch_bounds__(TS *TS) matmul_smem_kernel(const MmArgs<T> p) {
  __shared__ T As[TS][TS];
  __shared__ T Bs[TS][TS];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t mt = (p.m + TS - 1) / TS, nt = (p.n + TS - 1) / TS;
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const T *A = p.a + z * p.a_bs, *B = p.b + z * p.b_bs;
    T *C = p.c + z * p.c_bs;
    for (int64_t bx = blockIdx.x; bx < mt; bx += gridDim.x)
      for (int64_t by = blockIdx.y; by < nt; by += gridDim.y) {
        const int64_t i = bx * TS + ty, j = by * TS + tx;
        T acc = 0;
        for (int64_t k0 = 0; k0 < p.k; k0 += TS) {
          // out-of-range elements become 0, so they add nothing to the in-range results
          As[ty][tx] = (i < p.m && k0 + tx < p.k) ? A[i * p.a_rs + k0 + tx] : T(0);
          Bs[ty][tx] = (k0 + ty < p.k && j < p.n) ? B[(k0 + ty) * p.b_rs + j] : T(0);
          __syncthreads();
#pragma unroll
          for (int kk = 0; kk < TS; ++kk) acc += As[ty][kk] * Bs[kk][tx];
          __syncthreads(); // the next tile overwrites what slower warps may still read
        }
        if (i < p.m && j < p.n) {
          T *cp = C + i * p.c_rs + j;
          *cp = epi(acc, p.alpha, p.beta, cp); // beta == 0: C is not read
        }
      }
  }
}

/* The integer dtypes (issue 32: i32, i64, u32, i16, i8, u8) with the host's rule (src/host/host_matmul.c): the
 * sum wraps modulo 2^bits of T, accumulated in 64-bit unsigned arithmetic (each operand sign- or zero-extended to
 * 64 bits, every product and sum taken modulo 2^64, of which 2^bits is a divisor: exact for i64, no signed
 * overflow anywhere); alpha and beta that T holds (exact != 0: integers, signed ones of magnitude at most T's
 * maximum) apply in the same wrapping arithmetic, others form alpha*sum + beta*c in double, truncated toward zero
 * and saturated to T's range (NaN: 0). The float kernel's tile loop with another accumulator and epilogue; kept
 * apart from it because the float kernel (the default for tiny products) has run on the GPU and is left as it
 * ran. The i32 instantiation is the kernel the i32 path launched before the template (same operations). */
template <typename T> struct IntTraits {
  typedef typename std::make_unsigned<T>::type U;
  static constexpr T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
};

template <typename T>
__global__ void __launch_bounds__(TS *TS) matmul_smem_int_kernel(const MmArgs<T> p, double alpha, double beta,
                                                                 int exact) {
  typedef typename IntTraits<T>::U U;
  constexpr T LO = IntTraits<T>::lo, HI = IntTraits<T>::hi;
  __shared__ T As[TS][TS];
  __shared__ T Bs[TS][TS];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t mt = (p.m + TS - 1) / TS, nt = (p.n + TS - 1) / TS;
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const T *A = p.a + z * p.a_bs, *B = p.b + z * p.b_bs;
    T *C = p.c + z * p.c_bs;
    for (int64_t bx = blockIdx.x; bx < mt; bx += gridDim.x)
      for (int64_t by = blockIdx.y; by < nt; by += gridDim.y) {
        const int64_t i = bx * TS + ty, j = by * TS + tx;
        unsigned long long acc = 0;
        for (int64_t k0 = 0; k0 < p.k; k0 += TS) {
          As[ty][tx] = (i < p.m && k0 + tx < p.k) ? A[i * p.a_rs + k0 + tx] : T(0);
          Bs[ty][tx] = (k0 + ty < p.k && j < p.n) ? B[(k0 + ty) * p.b_rs + j] : T(0);
          __syncthreads();
#pragma unroll
          for (int kk = 0; kk < TS; ++kk)
            acc += (unsigned long long)(long long)As[ty][kk] * (unsigned long long)(long long)Bs[kk][tx];
          __syncthreads();
        }
        if (i < p.m && j < p.n) {
          T *cp = C + i * p.c_rs + j;
          if (exact) {
            unsigned long long r = (unsigned long long)(long long)alpha * acc;
            if (beta != 0.0) r += (unsigned long long)(long long)beta * (unsigned long long)(long long)*cp;
            *cp = (T)(U)r; /* wraps modulo 2^bits */
          } else {
            /* rounded as the host rounds (separate products and a sum): nvcc would fuse them into an fma, which
               differs from the host's result once alpha * sum is inexact (i64 sums; seen on an H100) */
            const double v = __dadd_rn(__dmul_rn(alpha, (double)(T)(U)acc), beta == 0.0 ? 0.0 : __dmul_rn(beta, (double)*cp));
            *cp = v != v ? T(0) : v >= (double)HI ? HI : v <= (double)LO ? LO : (T)v;
          }
        }
      }
  }
}

/* Launch the integer kernel for T. alpha and beta are exact when T holds them as the host decides (int_exact in
 * src/host/host_matmul.c): integers in [-max, max] (unsigned: [0, max]); for i64 the open interval (-2^63, 2^63),
 * since (double)INT64_MAX rounds up to 2^63, which int64 does not hold. */
template <typename T> int launch_int(const ck_mm_desc *d, const ck_env *env, dim3 grid, dim3 block) {
  const double a = d->alpha, b = d->beta, hi = (double)IntTraits<T>::hi, lo = IntTraits<T>::lo == 0 ? 0.0 : -hi;
  const bool wide = sizeof(T) == 8;
  const auto holds = [&](double v) { return v == floor(v) && (wide ? v > lo && v < hi : v >= lo && v <= hi); };
  const int exact = holds(a) && holds(b);
  ck_mm_desc z = *d; /* MmArgs's alpha and beta unused: zeroed (a double past T's range has no conversion) */
  z.alpha = z.beta = 0;
  ck_note(env, matmul_smem_int_kernel<T>, TS * TS, 0);
  return ck_launch_drv(matmul_smem_int_kernel<T>, grid, block, 0, (cudaStream_t)env->stream, mm_args<T>(&z), a, b,
                       exact);
}

} // namespace

// ---------------------------------------------------------------- launcher

/* launch_f32_f64 (mm_common.cuh) with the launch through ck_launch_drv (the driver API on request): this rung is also the
 * default for tiny matmuls (src/ops/op_matmul.c), where the launch is most of the time. */
extern "C" int ck_matmul_smem(const void *desc, const ck_env *env) {
  const ck_mm_desc *d = (const ck_mm_desc *)desc;
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  cudaStream_t s = (cudaStream_t)env->stream;
  const dim3 grid = tile_grid(d, TS, TS), block(TS, TS);
  if (d->dtype == CK_F32) {
    ck_note(env, matmul_smem_kernel<float>, TS * TS, 0);
    return ck_launch_drv(matmul_smem_kernel<float>, grid, block, 0, s, mm_args<float>(d));
  }
  if (d->dtype == CK_F64) {
    ck_note(env, matmul_smem_kernel<double>, TS * TS, 0);
    return ck_launch_drv(matmul_smem_kernel<double>, grid, block, 0, s, mm_args<double>(d));
  }
  switch (d->dtype) { /* the integer dtypes (issue 32) */
  case CK_I32: return launch_int<int32_t>(d, env, grid, block);
  case CK_I64: return launch_int<int64_t>(d, env, grid, block);
  case CK_U32: return launch_int<uint32_t>(d, env, grid, block);
  case CK_I16: return launch_int<int16_t>(d, env, grid, block);
  case CK_I8: return launch_int<int8_t>(d, env, grid, block);
  case CK_U8: return launch_int<uint8_t>(d, env, grid, block);
  default: break;
  }
  return (int)cudaErrorInvalidValue;
}
