/* One slice of the sweep's instantiations (compiled NPART times with -DPART=0..NPART-1, in parallel): the
 * configurations of sgemm_cfgs.h whose index % NPART == PART, instantiated from the rung's own kernel file
 * (CK_MM09_KERNEL_ONLY leaves out its pick_cfg and extern "C" launcher, so several slices link together). */
#define CK_MM09_KERNEL_ONLY
#include "matmul/09_double_buffer.cu"
#include "sgemm_sweep.h"

#ifndef PART
#define PART 0
#endif
#ifndef NPART
#define NPART 1
#endif

namespace {
template <class C> SweepEntry mk(int idx) {
  return SweepEntry{idx, C::BM, C::BN, C::BK, C::WM, C::WN, C::TM, C::TN, C::STAGES, C::MINB, C::GROUP, C::LOOP,
                    C::ISSUE, C::NT, C::SMEM, &launch<C>, (const void *)matmul_double_buffer_kernel<C, true>,
                    (const void *)matmul_double_buffer_kernel<C, false>};
}
template <int P> int reg() {
  std::vector<SweepEntry> &v = sweep_registry();
  constexpr int base = __COUNTER__;
#define X(...)                                                                                                   \
  {                                                                                                              \
    constexpr int I = __COUNTER__ - base - 1;                                                                    \
    if constexpr (I % NPART == P) v.push_back(mk<Cfg<__VA_ARGS__>>(I));                                          \
  }
#include "sgemm_cfgs.h"
#undef X
  return 0;
}
const int registered = reg<PART>();
} // namespace
