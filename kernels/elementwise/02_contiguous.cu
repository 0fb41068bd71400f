/*
 * 02_contiguous.cu — elementwise variant 2 "contiguous": the bandwidth-bound fast path.
 *
 * Idea: when every operand is dense row-major with the output's shape (b may be a scalar), the index
 * space is a flat array and no index math is needed. Each thread moves 16-byte packs (float4, double2,
 * int4; a cast moves 16 bytes of its wider type), U = 4 packs (f16/bf16 ops: 2) per operand per trip issued before any
 * store, so that 4 x 16 B loads per operand are in flight per thread.
 * What changed from 01_strided: no div/mod and no strides; 128-bit loads/stores instead of 32/64-bit;
 * unrolled grid-stride loop with the grid sized from the SM count (a fixed number of resident blocks per
 * SM) rather than from numel.
 * Alignment: packs need every operand at the same misalignment modulo the pack. The first `head`
 * elements (< one pack) bring the output to a 16-byte boundary; if a and b are then aligned too the
 * body runs on packs, else the whole array takes the scalar path. The tail (< one pack) is scalar.
 * Launch (through ck_launch.cuh, where the driver-API path is opt-in: fill and small dense ops are launch-bound): 256 threads, grid = min(ceil(packs / (256*U)), 64 blocks per SM) (several waves: the tail of
 * the grid-stride loop is shorter than with one wave).
 * Operands: out, a, b contiguous, numel elements, a scalar operand from desc->s1. Not for EYE (needs the
 * 2-D index), broadcasts or strided views: supports() says why, and the dispatcher runs 01_strided.
 */
#include <cuda_runtime.h>

#include "ew_math.cuh"
#include "../ck_launch.cuh"

namespace {

using namespace ckew;

constexpr int kThreads = 256;
constexpr int kUnroll = 4;
/* Grid cap per SM. ~60 registers allow 4 resident blocks of 256. Measured for f32 add at 2^28 on an H200:
 * 8/SM (one wave) 96.9% of memcpy, 32/SM 98.5%, 64/SM 99.8% (shorter grid-stride tail per thread). */
constexpr int kBlocksPerSm = 64;

/* N elements of T as one aligned load/store (16 bytes for the wider type of a cast). */
template <typename T, int N> struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

struct ContigArgs {
  void *out;
  const void *a, *b;
  int64_t n;     /* elements */
  int64_t head;  /* scalar elements before the first pack (n when nothing is vectorised) */
  int64_t packs; /* full packs after head */
  int bmode;
  Scal s;
};

template <typename TO, typename TI> __host__ __device__ constexpr int pack_elems() {
  return 16 / (sizeof(TO) > sizeof(TI) ? sizeof(TO) : sizeof(TI));
}
/* Packs per operand per trip: kUnroll; f16/bf16 ops (both types 2 bytes: 8 elements a pack) take 2, so that
 * a trip computes 16 elements like f32's (4 packs of 8 made the rung's device code 5x larger) while 2 x 16
 * bytes per operand and thread in flight still cover the latency at full occupancy; 1-byte dtypes (u8, i8, bool:
 * 16 elements a pack) take 1 — with 4, u8 add needed 156 registers, ran at 1/8 occupancy and reached 63% of
 * memcpy on an H100 (issue 32's first run). */
template <typename TO, typename TI> __host__ __device__ constexpr int unroll_of() {
  constexpr size_t w = sizeof(TO) > sizeof(TI) ? sizeof(TO) : sizeof(TI);
  return w == 1 ? 1 : w == 2 ? 2 : kUnroll;
}

// ---------------------------------------------------------------- kernel

template <int OP, typename TO, typename TI>
__global__ void __launch_bounds__(kThreads) ew_contiguous_kernel(const ContigArgs p) {
  constexpr int NIN = arity(OP);
  constexpr int VE = pack_elems<TO, TI>();
  using PO = Pack<TO, VE>;
  using PI = Pack<TI, VE>;
  const TI sv = scalar_of<TI>(p.s);
  const bool b_arr = p.bmode == BM_ARRAY, left = p.bmode == BM_LEFT;
  TO *out = (TO *)p.out;
  const TI *a = (const TI *)p.a;
  const TI *b = (const TI *)p.b;

  /* x/y order for binary ops: the scalar (or b) goes left when scalar_left */
  auto one = [&](TI t, TI u, int64_t i) -> TO {
    if constexpr (is_half_v<TI>) { /* one copy of the math (and of the conversions): swap the operands first */
      const TI x = left ? u : t, y = left ? t : u;
      return elem<OP, TO, TI>(x, y, p.s, i, 0, 0);
    } else {
      return left ? elem<OP, TO, TI>(u, t, p.s, i, 0, 0) : elem<OP, TO, TI>(t, u, p.s, i, 0, 0);
    }
  };

  // vectorised body: packs [0, packs) starting at element `head`
  PO *po = (PO *)(out + p.head);
  const PI *pa = (const PI *)(a + p.head);
  const PI *pb = (const PI *)(b + p.head);
  constexpr int U = unroll_of<TO, TI>();
  const int64_t trip = (int64_t)gridDim.x * kThreads * U;
  for (int64_t base = (int64_t)blockIdx.x * kThreads * U + threadIdx.x; base < p.packs; base += trip) {
    PI ra[U], rb[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t k = base + (int64_t)u * kThreads;
      if (k < p.packs) {
        if constexpr (NIN >= 1) ra[u] = pa[k];
        if constexpr (NIN == 2) {
          if (b_arr) rb[u] = pb[k];
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t k = base + (int64_t)u * kThreads;
      if (k < p.packs) {
        if constexpr (OP == CK_EW_COPY && std::is_same_v<TO, TI> && is_half_v<TO>) {
          po[k] = ra[u]; /* f16/bf16 same-dtype copy: whole packs (lane by lane, 16-bit lanes spilled) */
        } else {
          PO r;
#pragma unroll
          for (int e = 0; e < VE; ++e) {
            const TI t = NIN >= 1 ? ra[u].v[e] : TI(0);
            const TI w = (NIN == 2 && b_arr) ? rb[u].v[e] : sv;
            r.v[e] = one(t, w, p.head + k * VE + e);
          }
          po[k] = r;
        }
      }
    }
  }

  // scalar head and tail: [0, head) and [head + packs*VE, n)
  const int64_t body_end = p.head + p.packs * VE;
  const int64_t nscalar = p.head + (p.n - body_end);
  for (int64_t s = (int64_t)blockIdx.x * kThreads + threadIdx.x; s < nscalar; s += (int64_t)gridDim.x * kThreads) {
    const int64_t i = s < p.head ? s : body_end + (s - p.head);
    const TI t = NIN >= 1 ? a[i] : TI(0);
    const TI w = (NIN == 2 && b_arr) ? b[i] : sv;
    out[i] = one(t, w, i);
  }
}

// ---------------------------------------------------------------- launcher

/* Dense row-major over `shape` (size-1 dims may have any stride). */
bool dense(int ndim, const int64_t *shape, const int64_t *st) {
  int64_t want = 1;
  for (int k = ndim - 1; k >= 0; --k) {
    if (shape[k] == 1) continue;
    if (st[k] != want) return false;
    want *= shape[k];
  }
  return true;
}

struct ContigLaunch {
  const ck_ew_desc *d;
  const ck_env *env;
  int64_t n;
  template <int OP, typename TO, typename TI> int run() {
    constexpr int VE = pack_elems<TO, TI>();
    constexpr int NIN = arity(OP);
    ContigArgs p = {};
    p.out = d->out;
    p.a = d->a;
    p.b = d->b;
    p.n = n;
    p.bmode = bmode_of(d);
    p.s = scal_of(d);
    /* head: elements until out reaches a pack boundary; the inputs must then be on one too */
    const uintptr_t ob = (uintptr_t)d->out;
    const int64_t head = (int64_t)(((uintptr_t)(VE * sizeof(TO)) - ob % (VE * sizeof(TO))) % (VE * sizeof(TO)) / sizeof(TO));
    bool ok = ob % sizeof(TO) == 0 && head <= n;
    if (NIN >= 1) ok = ok && ((uintptr_t)d->a + head * sizeof(TI)) % (VE * sizeof(TI)) == 0;
    if (NIN == 2 && p.bmode == BM_ARRAY) ok = ok && ((uintptr_t)d->b + head * sizeof(TI)) % (VE * sizeof(TI)) == 0;
    if (ok) {
      p.head = head;
      p.packs = (n - head) / VE;
    } else {
      p.head = n;
      p.packs = 0;
    }
    constexpr int U = unroll_of<TO, TI>();
    const int64_t work = p.packs > 0 ? (p.packs + U - 1) / U : n;
    const unsigned grid = grid_for(work, kThreads, env->sm_count, kBlocksPerSm);
    ck_note(env, ew_contiguous_kernel<OP, TO, TI>, kThreads, 0);
    return ck_launch_drv(ew_contiguous_kernel<OP, TO, TI>, dim3(grid), dim3(kThreads), 0, (cudaStream_t)env->stream, p);
  }
};

}  // namespace

extern "C" const char *ck_ew_contiguous_supports(const void *desc) {
  const ck_ew_desc *d = (const ck_ew_desc *)desc;
  const int nin = arity(d->op);
  if (d->op == CK_EW_EYE) return "eye needs the 2-D index";
  if (d->ndim < 0 || d->ndim > CK_MAX_DIMS) return "ndim out of range";
  if (d->op == CK_EW_COPY && (d->a_dtype < 0 || d->a_dtype >= CK_NDTYPES)) return "copy source dtype unknown";
  if (!dense(d->ndim, d->shape, d->out_st)) return "output not contiguous";
  if (nin >= 1 && !dense(d->ndim, d->shape, d->a_st)) return "operands not contiguous (strided view or broadcast)";
  if (nin == 2 && !d->b_scalar && !dense(d->ndim, d->shape, d->b_st))
    return "operands not contiguous (strided view or broadcast)";
  return nullptr;
}

extern "C" int ck_ew_contiguous(const void *desc, const ck_env *env) {
  const ck_ew_desc *d = (const ck_ew_desc *)desc;
  int64_t n = 1;
  for (int k = 0; k < d->ndim; ++k) n *= d->shape[k];
  if (n == 0) return 0;
  ContigLaunch L{d, env, n};
  return dispatch<true>(d, L);
}
