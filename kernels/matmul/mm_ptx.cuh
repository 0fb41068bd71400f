/*
 * mm_ptx.cuh — the PTX wrappers of the tensor-core rungs (sm_80+ unless marked): cp.async with zero fill (also
 * four copies in one statement, and with a constant offset), 16-byte shared stores and 8-byte shared loads,
 * ldmatrix, mma.sync (m16n8k16 f16/bf16, m16n8k8 TF32, f64 m8n8k4 and sm_90's m16n8k16), the TF32 rounding, named barriers, mbarriers (init,
 * arrive, cp.async arrive, parity wait) and setmaxnreg (sm_90a). Everything here is inlined into the kernels.
 * Part of mm_tc.cuh; the Hopper rungs' own wrappers (wgmma, TMA) are mm_hopper.cuh's.
 */
#ifndef CK_MM_PTX_CUH
#define CK_MM_PTX_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

namespace cktc {

// ---------------------------------------------------------------- PTX wrappers (sm_80+)

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* 16 bytes global -> shared; the first `bytes` (0..16) are read, the rest zero-filled. src must be a valid
 * address even when bytes == 0. */
__device__ __forceinline__ void cp16z(uint32_t dst, const void *src, int bytes) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
#endif
}
/* 8 bytes global -> shared, through L1 (.ca); the first `bytes` (0 or 8) are read, the rest zero-filled. */
__device__ __forceinline__ void cp8z(uint32_t dst, const void *src, int bytes) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
#endif
}
__device__ __forceinline__ void cp16(uint32_t dst, const void *src) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
#endif
}
/* Four 16-byte copies in one asm statement: their four source addresses are live together, in four register
 * pairs (ptxas would otherwise compute each into the register the previous copy still has to read). */
__device__ __forceinline__ void cp16x4(const uint32_t (&dst)[4], const char *const (&src)[4]) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%4], 16;\n"
               "cp.async.cg.shared.global [%1], [%5], 16;\n"
               "cp.async.cg.shared.global [%2], [%6], 16;\n"
               "cp.async.cg.shared.global [%3], [%7], 16;\n" ::"r"(dst[0]),
               "r"(dst[1]), "r"(dst[2]), "r"(dst[3]), "l"(src[0]), "l"(src[1]), "l"(src[2]), "l"(src[3]));
#endif
}
/* 16 bytes from src + OFF to shared dst + OFF: one register on each side and the constant in the instruction. */
template <int OFF> __device__ __forceinline__ void cp16o(uint32_t dst, const void *src) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0+%2], [%1+%2], 16;\n" ::"r"(dst), "l"(src), "n"(OFF));
#endif
}
__device__ __forceinline__ void sts128(uint32_t dst, uint4 v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
}
/* 8 bytes of shared memory into two registers (a register pair in SASS: one half of an mma operand). */
__device__ __forceinline__ void lds64(uint32_t &x, uint32_t &y, uint32_t src) {
  asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n" : "=r"(x), "=r"(y) : "r"(src));
}

/* Four 8x8 matrices of 16-bit elements (lanes 8i .. 8i+7 give the row addresses of matrix i). */
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

/* D = A B + D, m16n8k16, f32 accumulators; A row-major (4 regs), B column-major (2 regs). */
template <typename T> __device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
template <> __device__ __forceinline__ void mma16816<__half>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}
template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

/* D = A B + D, m16n8k8 TF32, f32 accumulators. */
__device__ __forceinline__ void mma1688_tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

/* d0, d1 += (8x4 A fragment) x (4x8 B fragment), f64: lane (g = lane/4, t = lane%4) holds A(g, t), B(t, g) and the
 * results (g, 2t..2t+1). */
__device__ __forceinline__ void dmma884(double &d0, double &d1, double a, double b) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
               : "+d"(d0), "+d"(d1)
               : "d"(a), "d"(b));
#endif
}

/* sm_90's f64 m16n8k16, eight of the above in one instruction: lane (g, t) holds a[q] = A(g + 8 (q%2), t + 4 (q/2)),
 * b[q] = B(t + 4q, g), and the results (g, 2t..2t+1) in lo, (g + 8, 2t..2t+1) in hi. */
__device__ __forceinline__ void dmma16816(double (&lo)[2], double (&hi)[2], const double (&a)[8], const double (&b)[4]) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
               "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
               : "+d"(lo[0]), "+d"(lo[1]), "+d"(hi[0]), "+d"(hi[1])
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
                 "d"(b[1]), "d"(b[2]), "d"(b[3]));
#endif
}

/* f32 bits -> TF32 (round to nearest, ties away from zero). */
__device__ __forceinline__ uint32_t to_tf32(uint32_t x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(x)));
  return r;
}

// ---------------------------------------------------------------- mbarriers (sm_80+; the warp-specialized k loop)

/* A barrier of `count` threads (named barrier id; 0 is __syncthreads'): a warp role's own meeting point. */
__device__ __forceinline__ void named_sync(int id, int count) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory"); }

/* A 64-bit shared-memory barrier at bar (shared address) expecting `count` arrivals per phase. */
__device__ __forceinline__ void mbar_init(uint32_t bar, int count) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
#endif
}
/* One arrival (release: this thread's earlier shared-memory reads are done before the phase can complete). */
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
#if __CUDA_ARCH__ >= 800
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
#endif
}
/* One arrival once all of this thread's earlier cp.async have landed (.noinc: counted in the init count). */
__device__ __forceinline__ void cp_arrive(uint32_t bar) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(bar) : "memory");
#endif
}
/* Wait until the phase of parity `par` has completed (acquire: the copies it counted are visible). A fresh
 * barrier counts its phase -1, of parity 1, as complete: waiting for parity 1 on it returns at once. */
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t par) {
#if __CUDA_ARCH__ >= 900
  asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n @!p bra W;\n}\n" ::"r"(bar),
               "r"(par)
               : "memory");
#elif __CUDA_ARCH__ >= 800
  asm volatile("{\n .reg .pred p;\n W: mbarrier.test_wait.parity.shared.b64 p, [%0], %1;\n @!p bra W;\n}\n" ::"r"(bar),
               "r"(par)
               : "memory");
#endif
}

// ---------------------------------------------------------------- register budgets (sm_90a)

/* Register budgets of a warp-specialized block on sm_90a (setmaxnreg; a no-op elsewhere): the producer warps
 * give registers back, the consumers take them. Every warp of a warpgroup must run the same one. */
template <int N> __device__ __forceinline__ void setmaxnreg_dec() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <int N> __device__ __forceinline__ void setmaxnreg_inc() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

} // namespace cktc

#endif
