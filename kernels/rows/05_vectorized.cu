/*
 * 05_vectorized.cu — rung 5: rows in registers through 16-byte loads and stores.
 *
 * Idea: rung 3's engine with each access moving 16 bytes (4 f32, 8 f16/bf16, 2 f64): a quarter of the load
 * instructions for f32, an eighth for the halves, and full 128-byte lines per warp instruction, which is what
 * it takes to come near the copy bandwidth. Short rows (up to 256 vectors: 1024 f32, 2048 f16) take a warp each
 * (8 rows per 256-thread block); longer ones a block each, of W warps holding 8 vectors per thread
 * (W = ceil(vectors / 256) <= 32: rows up to 32768 f32, 65536 f16/bf16, 16384 f64), still one read and one
 * write, the statistics merged across the block through shared memory.
 * Change from rungs 3-4: vector accesses; long rows without the second read of rung 4.
 * Launch: warp rows: 256 threads, N in {1, 2, 4, 8} vectors per lane; block rows: 32*W threads, N = 8.
 * Limits: rows (inner == 1) whose byte length is a multiple of 16, 16-byte aligned x, out, w, b; at most 8192
 * vectors. Operands: x, out contiguous [outer, len]; w, b [len] or NULL.
 */
#include "rows_common.cuh"

using namespace ckrows;

#define VEC_N 8           /* vectors per thread */
#define VEC_MAX_WARPS 32  /* the largest block: 1024 threads */

template <class Op> static int launch(const ck_rows_desc &d, const ck_env *env) {
  constexpr int VEC = 16 / sizeof(typename Op::T);
  const int64_t vecs = d.len / VEC;
  if (vecs <= 32 * VEC_N) return launch_warp_rows<Op, VEC, 1, VEC_N>(d, env);
  return launch_regs<Op, VEC_N, VEC, true>(d, env, (int)cdiv(vecs, 32 * VEC_N) * 32);
}

CK_ROWS_LAUNCHER(ck_rows_vectorized, launch)

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

extern "C" const char *ck_rows_vectorized_supports(const void *desc) {
  const ck_rows_desc *d = (const ck_rows_desc *)desc;
  const int es = d->dtype == CK_F64 ? 8 : d->dtype == CK_F32 ? 4 : 2;
  if (d->inner != 1) return "rows only (the last dim); 'online' takes a leading dim";
  if ((d->len * es) % 16) return "rows whose byte length is a multiple of 16 only (16-byte vectors)";
  if (!aligned16(d->x) || !aligned16(d->out) || (d->w && !aligned16(d->w)) || (d->b && !aligned16(d->b)))
    return "16-byte aligned operands only (a view at an odd offset)";
  if (d->len / (16 / es) > (int64_t)32 * VEC_N * VEC_MAX_WARPS)
    return "rows of at most 8192 16-byte vectors in registers: longer rows go to 'block'";
  return nullptr;
}
