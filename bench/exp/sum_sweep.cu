/*
 * sum_sweep.cu — the whole-array f32 sum: configurations of the single_pass rung (kernels/reduce/
 * 09_single_pass.cu, included as is: the same kernels and launcher the library runs) against
 * cub::DeviceReduce::Sum, in one run. Built and run by bench/exp/sum.sh.
 *
 * Sizes 2^22, 2^24, 2^26, 2^28 floats carved from one 1 GiB pool of random values in [0.5, 1.5): timed
 * calls rotate through the pool's 2^28 / n buffers (each call reads the next one), so no call finds its input
 * in the 50 MB L2, not even at 2^22. Each variant is first validated on buffer 0
 * against a host double sum (relative error <= 1e-5), plus misaligned / odd-length / row cases; a variant
 * that fails is reported FAILED and not timed. Timing: CUDA events around B calls (B = 2^26 / n, >= 1),
 * 3 rounds x 10 samples per variant, the variants interleaved per round, median of the 30 (and min/max).
 * GB/s counts the bytes read (4 n). The rung's path includes its ticket memset and workspace (from a
 * caching pool here, as in the library).
 */
#include <cub/device/device_reduce.cuh>

#include "reduce/09_single_pass.cu"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#define CHECK(x)                                                                                       \
  do {                                                                                                 \
    cudaError_t e_ = (x);                                                                              \
    if (e_ != cudaSuccess) {                                                                           \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));              \
      exit(1);                                                                                         \
    }                                                                                                  \
  } while (0)

extern "C" int ck_reduce_shuffle_vec(const void *desc, const ck_env *env); /* rung 8, its own TU */

// ---------------------------------------------------------------- the previous rung 9 (for reference)

/* Rung 9 as it was before this sweep (fe3e5d2): fold_range_vec, 256 threads, U = 4, 4 waves, 44 registers. */
template <class O, int BS, int U>
__global__ void __launch_bounds__(BS) old_single_pass_kernel(const float *__restrict__ x, int64_t outer, int64_t len,
                                                             int64_t per_row, int64_t chunk, float *part,
                                                             unsigned *tickets, float *out) {
  __shared__ bool am_last;
  for (int64_t b = blockIdx.x; b < outer * per_row; b += gridDim.x) {
    const int64_t row = b / per_row, c = b - row * per_row;
    const int64_t beg = c * chunk, end = beg + chunk < len ? beg + chunk : len;
    float a = fold_range_vec<O, U>(x + row * len, beg, end, threadIdx.x, BS, O::identity());
    a = block_reduce<O, BS>(a);
    if (per_row == 1) {
      if (threadIdx.x == 0) O::store(a, out, nullptr, row, len);
      __syncthreads();
      continue;
    }
    if (threadIdx.x == 0) {
      part[b] = a;
      __threadfence();
      am_last = atomicAdd(&tickets[row], 1u) == (unsigned)(per_row - 1);
    }
    __syncthreads();
    if (am_last) {
      __threadfence();
      float s = fold_partials<O, true>(part + row * per_row, 0, per_row, threadIdx.x, BS);
      s = block_reduce<O, BS>(s);
      if (threadIdx.x == 0) O::store(s, out, nullptr, row, len);
    }
    __syncthreads();
  }
}
using SumF = Op<float, CK_RED_SUM>;

static int launch_old(const ck_red_desc &d, const ck_env *env) {
  constexpr int BS = 256, U = 4, WAVES = 4, N = 4;
  auto kernel = old_single_pass_kernel<SumF, BS, U>;
  static int occ = 0;
  if (!occ) occ = occupancy((const void *)kernel, BS, 0);
  const Plan p = plan_rows(d.outer, d.len, (int64_t)env->sm_count * occ * WAVES, (int64_t)BS * N * U, N);
  cudaStream_t s = (cudaStream_t)env->stream;
  if (p.per_row == 1) {
    kernel<<<grid_for(p.items), BS, 0, s>>>((const float *)d.x, d.outer, d.len, 1, p.chunk, nullptr, nullptr,
                                            (float *)d.out);
    return (int)cudaGetLastError();
  }
  Ws w(env, (size_t)p.items * 4 + 256 + (size_t)d.outer * 4);
  unsigned *tickets = (unsigned *)((char *)w.p + (((size_t)p.items * 4 + 255) & ~(size_t)255));
  cudaMemsetAsync(tickets, 0, (size_t)d.outer * 4, s);
  kernel<<<grid_for(p.items), BS, 0, s>>>((const float *)d.x, d.outer, d.len, p.per_row, p.chunk, (float *)w.p,
                                          tickets, (float *)d.out);
  return (int)cudaGetLastError();
}

// ---------------------------------------------------------------- a caching workspace pool (as the library's)

struct Blk {
  void *p;
  size_t n;
  bool busy;
};
static std::vector<Blk> g_blocks;
static void *ws_alloc(void *, size_t bytes) {
  for (auto &b : g_blocks)
    if (!b.busy && b.n >= bytes) {
      b.busy = true;
      return b.p;
    }
  void *p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) return nullptr;
  g_blocks.push_back({p, bytes, true});
  return p;
}
static void ws_free(void *, void *p) {
  for (auto &b : g_blocks)
    if (b.p == p) b.busy = false;
}

// ---------------------------------------------------------------- variants

struct Variant {
  std::string name, what;
  const void *kernel; /* for registers / occupancy; NULL: CUB (from ptxas, see sum.sh) */
  int bs;
  size_t smem;
  std::function<int(const ck_red_desc &, const ck_env *)> run;
};

template <class C>
static Variant cfg(const char *name, const char *what) {
  return Variant{name, what, (const void *)reduce_single_pass_kernel<SumF, C::BS, C::U, C::MINB, C::PF, C::S>, C::BS,
                 C::smem, [](const ck_red_desc &d, const ck_env *e) { return launch_cfg<SumF, C>(d, e); }};
}
using sp::Cfg;

static void *g_cub_temp = nullptr;
static unsigned *g_zeroed = nullptr; /* 64 counters, zeroed once: the kernel leaves them zero */
static size_t g_cub_bytes = 0;

static std::vector<Variant> variants() {
  std::vector<Variant> v;
  v.push_back(Variant{"cub", "cub::DeviceReduce::Sum (reference)", nullptr, 256, 0,
                      [](const ck_red_desc &d, const ck_env *e) {
                        size_t b = g_cub_bytes;
                        return (int)cub::DeviceReduce::Sum(g_cub_temp, b, (const float *)d.x, (float *)d.out, d.len,
                                                           (cudaStream_t)e->stream);
                      }});
  v.push_back(Variant{"old09", "rung 9 before: fold_range_vec, 256x4, 4 waves", (const void *)old_single_pass_kernel<SumF, 256, 4>,
                      256, 0, launch_old});
  v.push_back(Variant{"rung08", "rung 8 shuffle_vec (two launches) via its launcher", nullptr, 256, 0,
                      [](const ck_red_desc &d, const ck_env *e) { return ck_reduce_shuffle_vec(&d, e); }});
  v.push_back(cfg<SpDefault>("rung09", "rung 9 as built (SpDefault)"));
  v.push_back(Variant{"rung09_nomem", "rung 9 as built, tickets kept zeroed instead of a memset per call",
                      (const void *)reduce_single_pass_kernel<SumF, SpDefault::BS, SpDefault::U, SpDefault::MINB,
                                                              SpDefault::PF, SpDefault::S>,
                      SpDefault::BS, SpDefault::smem, [](const ck_red_desc &d, const ck_env *e) {
                        return launch_cfg<SumF, SpDefault>(d, e, g_zeroed);
                      }});
  /* register tiles: occupancy (MINB caps registers), block size, loads per trip, waves */
  v.push_back(cfg<Cfg<256, 4, 1, 4, 0, 0>>("t256u4w4", "tiles 256x4, no register cap, 4 waves"));
  v.push_back(cfg<Cfg<256, 4, 8, 1, 0, 0>>("t256u4m8w1", "tiles 256x4, launch_bounds(256,8), 1 wave"));
  v.push_back(cfg<Cfg<256, 4, 8, 2, 0, 0>>("t256u4m8w2", "tiles 256x4, launch_bounds(256,8), 2 waves"));
  v.push_back(cfg<Cfg<256, 4, 8, 5, 0, 0>>("t256u4m8w5", "tiles 256x4, launch_bounds(256,8), 5 waves (CUB's grid)"));
  v.push_back(cfg<Cfg<256, 4, 8, 8, 0, 0>>("t256u4m8w8", "tiles 256x4, launch_bounds(256,8), 8 waves"));
  v.push_back(cfg<Cfg<512, 4, 4, 5, 0, 0>>("t512u4m4w5", "tiles 512x4, launch_bounds(512,4), 5 waves"));
  v.push_back(cfg<Cfg<256, 8, 4, 5, 0, 0>>("t256u8m4w5", "tiles 256x8, launch_bounds(256,4), 5 waves"));
  v.push_back(cfg<Cfg<128, 8, 8, 5, 0, 0>>("t128u8m8w5", "tiles 128x8, launch_bounds(128,8), 5 waves"));
  /* register tiles + L2 bulk prefetch ahead (thread 0, cp.async.bulk.prefetch.L2) */
  v.push_back(cfg<Cfg<256, 4, 8, 5, 1, 0>>("pf1m8w5", "t256u4m8w5 + L2 prefetch 1 tile (16 KB) ahead"));
  v.push_back(cfg<Cfg<256, 4, 8, 5, 2, 0>>("pf2m8w5", "t256u4m8w5 + L2 prefetch 2 tiles ahead"));
  v.push_back(cfg<Cfg<256, 4, 8, 5, 4, 0>>("pf4m8w5", "t256u4m8w5 + L2 prefetch 4 tiles ahead"));
  v.push_back(cfg<Cfg<256, 4, 8, 1, 2, 0>>("pf2m8w1", "t256u4m8w1 + L2 prefetch 2 tiles ahead"));
  /* bulk copies global -> shared (cp.async.bulk + mbarrier), S stages per block */
  v.push_back(cfg<Cfg<256, 4, 1, 1, 0, 4>>("bulk4x16k_w1", "bulk copy, 4 stages x 16 KB, 1 wave"));
  v.push_back(cfg<Cfg<256, 4, 1, 5, 0, 4>>("bulk4x16k_w5", "bulk copy, 4 stages x 16 KB, 5 waves"));
  v.push_back(cfg<Cfg<256, 2, 1, 5, 0, 4>>("bulk4x8k_w5", "bulk copy, 4 stages x 8 KB, 5 waves"));
  v.push_back(cfg<Cfg<256, 2, 1, 5, 0, 8>>("bulk8x8k_w5", "bulk copy, 8 stages x 8 KB, 5 waves"));
  v.push_back(cfg<Cfg<256, 4, 1, 1, 0, 8>>("bulk8x16k_w1", "bulk copy, 8 stages x 16 KB, 1 wave"));
  v.push_back(cfg<Cfg<256, 4, 1, 5, 0, 8>>("bulk8x16k_w5", "bulk copy, 8 stages x 16 KB, 5 waves"));
  v.push_back(cfg<Cfg<512, 4, 1, 2, 0, 4>>("bulk4x32k_w2", "bulk copy, 512 threads, 4 stages x 32 KB, 2 waves"));
  return v;
}

// ---------------------------------------------------------------- data

__global__ void fill_kernel(float *x, int64_t n, uint32_t seed) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 0x9E3779B1u ^ seed;
    h ^= h >> 16; h *= 0x85EBCA6Bu; h ^= h >> 13; h *= 0xC2B2AE35u; h ^= h >> 16;
    x[i] = 0.5f + (float)(h >> 8) * (1.0f / 16777216.0f); /* [0.5, 1.5): non-zero, sum well conditioned */
  }
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int main(int argc, char **argv) {
  const int64_t POOL = (int64_t)1 << 28;
  int dev = 0;
  CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ck_env env{};
  env.stream = stream;
  env.sm_count = prop.multiProcessorCount;
  env.cc_major = prop.major;
  env.cc_minor = prop.minor;
  env.l2_bytes = prop.l2CacheSize;
  env.ws_alloc = ws_alloc;
  env.ws_free = ws_free;
  env.note = nullptr;
  printf("device %s, %d SMs, L2 %d MB, cc %d.%d\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
         prop.major, prop.minor);

  float *pool, *out;
  CHECK(cudaMalloc(&pool, (size_t)POOL * 4 + 64));
  CHECK(cudaMalloc(&out, 64 * sizeof(float)));
  fill_kernel<<<4096, 256, 0, stream>>>(pool, POOL + 16, (uint32_t)time(nullptr));
  CHECK(cudaStreamSynchronize(stream));
  std::vector<float> h(POOL + 16);
  CHECK(cudaMemcpy(h.data(), pool, (size_t)(POOL + 16) * 4, cudaMemcpyDeviceToHost));
  std::map<std::pair<int64_t, int64_t>, double> sums; /* host references, computed once per range */
  auto host_sum = [&](int64_t off, int64_t n) {
    auto it = sums.find({off, n});
    if (it != sums.end()) return it->second;
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += h[off + i];
    sums[{off, n}] = s;
    return s;
  };
  CHECK(cub::DeviceReduce::Sum(nullptr, g_cub_bytes, pool, out, POOL, stream));
  CHECK(cudaMalloc(&g_cub_temp, g_cub_bytes));
  CHECK(cudaMalloc(&g_zeroed, 64 * sizeof(unsigned)));
  CHECK(cudaMemset(g_zeroed, 0, 64 * sizeof(unsigned)));

  std::vector<Variant> vs = variants();
  if (argc > 1) { /* optional filter: names to keep (cub always stays) */
    std::vector<Variant> keep;
    for (auto &v : vs) {
      bool k = v.name == "cub";
      for (int a = 1; a < argc; ++a) k |= v.name == argv[a];
      if (k) keep.push_back(v);
    }
    vs = keep;
  }

  /* registers and occupancy */
  for (auto &v : vs) {
    if (!v.kernel) continue;
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, v.kernel));
    int occ = 0;
    if (v.smem > 48 * 1024) cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v.smem);
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, v.kernel, v.bs, v.smem));
    printf("INFO %-14s regs %3d  spill %zu B  blocks/SM %d  threads/SM %d  smem %zu B  | %s\n", v.name.c_str(),
           fa.numRegs, (size_t)fa.localSizeBytes, occ, occ * v.bs, v.smem, v.what.c_str());
  }

  /* validation: buffer 0 of every size, a misaligned odd-length range, rows */
  const int64_t sizes[] = {(int64_t)1 << 22, (int64_t)1 << 24, (int64_t)1 << 26, (int64_t)1 << 28};
  std::vector<bool> ok(vs.size(), true);
  auto check = [&](size_t vi, const float *x, int64_t outer, int64_t len, const char *what) {
    ck_red_desc d{};
    d.dtype = CK_F32;
    d.op = CK_RED_SUM;
    d.x = x;
    d.outer = outer;
    d.len = len;
    d.inner = 1;
    d.out = out;
    d.idx = nullptr;
    if (vs[vi].name == "cub" && outer != 1) return; /* DeviceReduce: whole arrays only */
    CHECK(cudaMemsetAsync(out, 0xff, 64 * 4, stream)); /* poison: NaN */
    int err = vs[vi].run(d, &env);
    if (!err) err = (int)cudaStreamSynchronize(stream);
    std::vector<float> r(outer);
    CHECK(cudaMemcpy(r.data(), out, outer * 4, cudaMemcpyDeviceToHost));
    for (int64_t o = 0; o < outer; ++o) {
      const double ref = host_sum((x - pool) + o * len, len);
      const double rel = std::fabs(r[o] - ref) / std::fabs(ref);
      if (err || !(rel <= 1e-5)) {
        printf("FAILED %-14s %s row %lld: got %.9g want %.9g (rel %.2e) err %d\n", vs[vi].name.c_str(), what,
               (long long)o, r[o], ref, rel, err);
        ok[vi] = false;
        return;
      }
    }
  };
  for (size_t vi = 0; vi < vs.size(); ++vi) {
    for (int64_t n : sizes) check(vi, pool, 1, n, "full");
    check(vi, pool + 1, 1, ((int64_t)1 << 24) - 3, "misaligned odd");
    check(vi, pool + 3, 1, 1000003, "misaligned odd 1e6");
    check(vi, pool, 1, 5, "n=5");
    check(vi, pool + 2, 1, 4099, "n=4099");
    check(vi, pool + 1, 7, ((int64_t)1 << 22) + 3, "rows 7 x (2^22+3)");
    check(vi, pool, 3, 1 << 20, "rows 3 x 2^20");
    printf("VALID %-14s %s\n", vs[vi].name.c_str(), ok[vi] ? "ok" : "FAILED");
  }

  /* timing */
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  const int ROUNDS = 3, SAMPLES = 10;
  std::vector<std::vector<double>> gbs(vs.size(), std::vector<double>(4, 0));
  for (int si = 0; si < 4; ++si) {
    const int64_t n = sizes[si];
    const int64_t nbuf = POOL / n;
    const int B = (int)std::max<int64_t>(1, ((int64_t)1 << 26) / n);
    std::vector<std::vector<double>> ms(vs.size());
    int64_t rot = 0;
    for (int r = 0; r < ROUNDS; ++r)
      for (size_t vi = 0; vi < vs.size(); ++vi) {
        if (!ok[vi]) continue;
        ck_red_desc d{};
        d.dtype = CK_F32; d.op = CK_RED_SUM; d.outer = 1; d.len = n; d.inner = 1; d.out = out;
        for (int w = 0; w < 3; ++w) {
          d.x = pool + (rot++ % nbuf) * n;
          vs[vi].run(d, &env);
        }
        for (int s = 0; s < SAMPLES; ++s) {
          CHECK(cudaEventRecord(e0, stream));
          for (int b = 0; b < B; ++b) {
            d.x = pool + (rot++ % nbuf) * n;
            vs[vi].run(d, &env);
          }
          CHECK(cudaEventRecord(e1, stream));
          CHECK(cudaEventSynchronize(e1));
          float t = 0;
          CHECK(cudaEventElapsedTime(&t, e0, e1));
          ms[vi].push_back(t / B);
        }
      }
    CHECK(cudaGetLastError());
    for (size_t vi = 0; vi < vs.size(); ++vi) {
      if (!ok[vi]) continue;
      const double med = median(ms[vi]);
      const double lo = *std::min_element(ms[vi].begin(), ms[vi].end());
      const double hi = *std::max_element(ms[vi].begin(), ms[vi].end());
      gbs[vi][si] = 4.0 * n / (med * 1e-3) / 1e9;
      printf("TIME %-14s n=2^%d  median %.2f us  min %.2f  max %.2f  %.1f GB/s  %.1f%% of cub\n", vs[vi].name.c_str(),
             (int)std::log2((double)n), med * 1e3, lo * 1e3, hi * 1e3, gbs[vi][si],
             gbs[0][si] > 0 ? 100.0 * gbs[vi][si] / gbs[0][si] : 0.0);
    }
  }
  /* summary rows for sum.sh's table */
  for (size_t vi = 0; vi < vs.size(); ++vi) {
    printf("ROW %s", vs[vi].name.c_str());
    for (int si = 0; si < 4; ++si)
      if (!ok[vi]) printf(" FAILED");
      else printf(" %.0f:%.1f", gbs[vi][si], 100.0 * gbs[vi][si] / gbs[0][si]);
    printf("\n");
  }
  return 0;
}
