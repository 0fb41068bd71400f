/*
 * 03_radix4.cu — sort step 3: LSD radix sort with 4-bit digits.
 *
 * Idea: comparison sorts (steps 1-2) do O(n log n) work; a radix sort does a fixed number of passes, each
 * reading and writing every pair: per-block digit histograms, one global exclusive scan (digit-major, so the
 * offsets of tile b's digit d come after every tile's smaller digits and the earlier tiles' digit d), then a
 * stable scatter (radix_common.cuh). With 16 buckets a block ranks each round of 256 pairs with one warp ballot
 * per bucket (16 ballots, popcounts of the lower lanes). 32-bit keys take 8 passes; several lines add passes
 * over the line number.
 * Launch: 256 threads, tiles of 4096 pairs, 2 kernels + the scan ladder's look-back scan per pass.
 * Limits: fewer than 2^32 - 1 elements.
 * Operands: x contiguous [outer, len, inner]; out, idx contiguous [outer, k, inner] (either may be NULL).
 */
#include "radix_common.cuh"

using namespace cksort;

extern "C" int ck_sort_radix4(const void *desc, const ck_env *env) {
  return run_sort(*(const ck_sort_desc *)desc, env, RadixSorter<4, BallotRank<16>>{});
}

extern "C" const char *ck_sort_radix4_supports(const void *desc) { return check_n((const ck_sort_desc *)desc); }
