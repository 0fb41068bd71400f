/*
 * 03_warp.cu — rung 3: a warp per row, the row held in registers.
 *
 * Idea: rungs 1-2 give a row to one thread, so along the last dim a warp's loads hit 32 rows at once. Here a
 * warp owns a row: lane g reads elements g, g + 32, g + 64, ... (consecutive lanes, consecutive addresses),
 * keeps them in registers, folds them into its statistics, merges the 32 partial statistics with shuffles
 * (no shared memory, no barrier), and writes from the registers. Memory traffic is the minimum: one read, one
 * write. The engine is rows_regs_kernel (rows_common.cuh) with scalar accesses; rung 5 is the same engine with
 * 16-byte vectors.
 * Launch: 256 threads = 8 rows per block, grid-stride; N elements per lane, the smallest power of two with
 * 32*N >= len (N <= 32: up to 32 registers of row per lane).
 * Limits: rows (inner == 1) of up to 1024 elements. Operands: x, out contiguous [outer, len]; w, b [len] or NULL.
 */
#include "rows_common.cuh"

using namespace ckrows;

#define WARP_MAX_LEN 1024

template <class Op> static int launch(const ck_rows_desc &d, const ck_env *env) {
  return launch_warp_rows<Op, 1, 1, WARP_MAX_LEN / 32>(d, env);
}

CK_ROWS_LAUNCHER(ck_rows_warp, launch)

extern "C" const char *ck_rows_warp_supports(const void *desc) {
  const ck_rows_desc *d = (const ck_rows_desc *)desc;
  if (d->inner != 1) return "rows only (the last dim); 'online' takes a leading dim";
  if (d->len > WARP_MAX_LEN) return "short rows only (len <= 1024): longer rows go to 'block' or 'vectorized'";
  return nullptr;
}
