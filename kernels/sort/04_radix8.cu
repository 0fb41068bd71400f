/*
 * 04_radix8.cu — sort step 4: 8-bit digits with warp-level multi-split.
 *
 * Idea: half the passes of step 3 (4 for 32-bit keys), but 256 buckets make 256 ballots per round too slow.
 * Warp-level multi-split (Ashkiani et al., "GPU Multisplit", 2016) ranks with one __match_any_sync per round:
 * each lane gets the mask of the lanes holding its digit, its rank is the popcount of the lower ones, and the
 * lowest of them writes the warp's count for the digit; one thread per digit then turns the warps' counts into
 * offsets (radix_common.cuh's MatchRank). Histograms, the global scan and the pass structure are step 3's.
 * Launch: 256 threads, tiles of 4096 pairs. Limits: fewer than 2^32 - 1 elements.
 * Operands: x contiguous [outer, len, inner]; out, idx contiguous [outer, k, inner] (either may be NULL).
 */
#include "radix_common.cuh"

using namespace cksort;

extern "C" int ck_sort_radix8(const void *desc, const ck_env *env) {
  return run_sort(*(const ck_sort_desc *)desc, env, RadixSorter<8, MatchRank<256>>{});
}

extern "C" const char *ck_sort_radix8_supports(const void *desc) { return check_n((const ck_sort_desc *)desc); }
