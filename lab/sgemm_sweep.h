/* lab/sgemm_sweep: one instantiated configuration of kernels/matmul/09_double_buffer.cu (see sgemm_part.cu). */
#pragma once
#include <vector>
#include "ck_kernels.h"

struct SweepEntry {
  int idx; // position in sgemm_cfgs.h
  int bm, bn, bk, wm, wn, tm, tn, st, minb, group, loop, issue, nt, smem;
  int (*launch)(const ck_mm_desc *, const ck_env *); // the rung's launch<C> (picks the VEC kernel by alignment)
  const void *kvec, *kscalar;                          // the two kernels (attributes)
};

std::vector<SweepEntry> &sweep_registry();
