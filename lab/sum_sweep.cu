/*
 * sum_sweep.cu — the whole-array f32 sum: configurations of the single_pass rung (kernels/reduce/
 * 09_single_pass.cu, included as is: the same kernels and launcher the library runs) against
 * cub::DeviceReduce::Sum, in one run. Built and run by lab/sum.sh.
 *
 * Sizes 2^22, 2^24, 2^26, 2^27, 2^28 floats carved from one 1 GiB pool of random values in [0.5, 1.5): timed
 * calls rotate through the pool's 2^28 / n buffers (each call reads the next one), so no call finds its input
 * in the 50 MB L2, not even at 2^22. Each variant is first validated against a host double sum (relative
 * error <= 1e-5) on every size, misaligned / odd-length / tiny / row cases; a variant that fails is reported
 * FAILED and not timed. Timing, per size and variant: after a warm-up, 30 pairs (CUB sample, variant sample),
 * each sample CUDA events around B calls (B = 2^26 / n, >= 1); "% of CUB" = median(CUB) / median(variant)
 * over those pairs (clocks drift over a run at the power limit: the pairs compare like with like). GB/s
 * counts the bytes read (4 n). The rung's path includes its ticket memset (or second launch) and workspace
 * (from a caching pool here, as in the library).
 * Last, the rule that picks SpDefault (see lab/sum.sh): among the rung's configurations valid
 * everywhere and >= 97% of CUB at every size, the best mean % over 2^24..2^28; if none, the best minimum.
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

using SumF = Op<float, CK_RED_SUM>;

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
  std::string name, what, cfg; /* cfg: the sp::Cfg spelling (rung configurations only) */
  const void *kernel;          /* for registers / occupancy; NULL: CUB (from ptxas, see sum.sh) or rung 8 */
  int bs;
  std::function<int(const ck_red_desc &, const ck_env *)> run;
};

static unsigned *g_zeroed = nullptr; /* 64 counters, zeroed once: the kernel leaves them zero */

template <class C, bool ZEROED = false>
static Variant cfg(const char *name, const char *what, const char *spelling) {
  return Variant{name, what, spelling, (const void *)reduce_single_pass_kernel<SumF, C>, C::BS,
                 [](const ck_red_desc &d, const ck_env *e) { return launch_cfg<SumF, C>(d, e, ZEROED ? g_zeroed : nullptr); }};
}
/* name, what, then the Cfg's template arguments: BS, U, MINB, WAVES, MAP, VB, FIN */
#define CFG(name, what, ...) cfg<sp::Cfg<__VA_ARGS__>>(name, what, "sp::Cfg<" #__VA_ARGS__ ">")
#define CFGZ(name, what, ...) cfg<sp::Cfg<__VA_ARGS__>, true>(name, what, "")

static void *g_cub_temp = nullptr;
static size_t g_cub_bytes = 0;

static std::vector<Variant> variants() {
  std::vector<Variant> v;
  v.push_back(Variant{"cub", "cub::DeviceReduce::Sum (reference)", "", nullptr, 256,
                      [](const ck_red_desc &d, const ck_env *e) {
                        size_t b = g_cub_bytes;
                        return (int)cub::DeviceReduce::Sum(g_cub_temp, b, (const float *)d.x, (float *)d.out, d.len,
                                                           (cudaStream_t)e->stream);
                      }});
  v.push_back(Variant{"rung08", "rung 8 shuffle_vec (two launches) via its launcher", "", nullptr, 256,
                      [](const ck_red_desc &d, const ck_env *e) { return ck_reduce_shuffle_vec(&d, e); }});
  v.push_back(Variant{"rung09", "rung 9 as built (SpDefault, the library's launcher)", "",
                      (const void *)reduce_single_pass_kernel<SumF, SpDefault>, SpDefault::BS,
                      [](const ck_red_desc &d, const ck_env *e) { return launch<SumF>(d, e); }});
  /* MAP 0: contiguous chunks of ~len / (WAVES x resident blocks), each ending in a one-vector-per-trip remainder */
  v.push_back(CFG("m0w1", "chunks, 1 wave", 256, 4, 8, 1, 0, 16, 0));
  v.push_back(CFG("m0w2", "chunks, 2 waves", 256, 4, 8, 2, 0, 16, 0));
  v.push_back(CFG("m0w5", "chunks, 5 waves (round 1's default)", 256, 4, 8, 5, 0, 16, 0));
  /* MAP 1: contiguous even shares of whole tiles (no per-block remainder) */
  v.push_back(CFG("m1w1", "whole-tile shares, 1 wave", 256, 4, 8, 1, 1, 16, 0));
  v.push_back(CFG("m1w2", "whole-tile shares, 2 waves", 256, 4, 8, 2, 1, 16, 0));
  v.push_back(CFG("m1w5", "whole-tile shares, 5 waves", 256, 4, 8, 5, 1, 16, 0));
  /* MAP 2: CUB's strip-mined tiles (block b: tiles b, b + G, ...) */
  v.push_back(CFG("m2w1", "strip-mined tiles, 1 wave (a persistent grid)", 256, 4, 8, 1, 2, 16, 0));
  v.push_back(CFG("m2w2", "strip-mined tiles, 2 waves", 256, 4, 8, 2, 2, 16, 0));
  v.push_back(CFG("m2w5", "strip-mined tiles, 5 waves (CUB's map and grid)", 256, 4, 8, 5, 2, 16, 0));
  /* the finish: CUB's second launch instead of tickets; tickets without the memset */
  v.push_back(CFG("m2w5f", "m2w5 + second launch (CUB's whole structure)", 256, 4, 8, 5, 2, 16, 1));
  v.push_back(CFGZ("m2w5z", "m2w5, tickets kept zeroed instead of a memset per call", 256, 4, 8, 5, 2, 16, 0));
  v.push_back(CFG("m1w2f", "m1w2 + second launch", 256, 4, 8, 2, 1, 16, 1));
  v.push_back(CFG("m0w5f", "m0w5 + second launch", 256, 4, 8, 5, 0, 16, 1));
  /* load width: warp-striped 4-byte loads (16 per thread per tile), 8-byte loads (8 per tile) */
  v.push_back(CFG("m2w5s4", "m2w5 with 16 scalar loads per thread (VB 4)", 256, 16, 8, 5, 2, 4, 0));
  v.push_back(CFG("m2w5s8", "m2w5 with 8 float2 loads per thread (VB 8)", 256, 8, 8, 5, 2, 8, 0));
  v.push_back(CFG("m1w2s4", "m1w2 with 16 scalar loads per thread (VB 4)", 256, 16, 8, 2, 1, 4, 0));
  /* tile shape: 512 threads, or 8 vectors per thread */
  v.push_back(CFG("m2w5b512", "m2w5 with 512 threads (launch_bounds(512,4))", 512, 4, 4, 5, 2, 16, 0));
  v.push_back(CFG("m2w5u8", "m2w5 with 8 vectors per thread (32 KB tiles, launch_bounds(256,4))", 256, 8, 4, 5, 2, 16, 0));
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
  const int64_t POOL = (int64_t)1 << 28, OUTN = 8192;
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
  CHECK(cudaMalloc(&out, OUTN * sizeof(float)));
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
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, v.kernel, v.bs, 0));
    printf("INFO %-10s regs %3d  spill %zu B  blocks/SM %d  threads/SM %d  | %s  %s\n", v.name.c_str(), fa.numRegs,
           (size_t)fa.localSizeBytes, occ, occ * v.bs, v.what.c_str(), v.cfg.c_str());
  }

  /* validation: every size from buffer 0, misaligned / odd / tiny lengths, rows */
  const int NS = 5;
  const int64_t sizes[NS] = {(int64_t)1 << 22, (int64_t)1 << 24, (int64_t)1 << 26, (int64_t)1 << 27, (int64_t)1 << 28};
  std::vector<bool> ok(vs.size(), true);
  auto check = [&](size_t vi, const float *x, int64_t outer, int64_t len, const char *what) {
    if (!ok[vi]) return;
    if (vs[vi].name == "cub" && outer != 1) return; /* DeviceReduce: whole arrays only */
    ck_red_desc d{};
    d.dtype = CK_F32;
    d.op = CK_RED_SUM;
    d.x = x;
    d.outer = outer;
    d.len = len;
    d.inner = 1;
    d.out = out;
    d.idx = nullptr;
    CHECK(cudaMemsetAsync(out, 0xff, OUTN * 4, stream)); /* poison: NaN */
    int err = vs[vi].run(d, &env);
    if (!err) err = (int)cudaStreamSynchronize(stream);
    std::vector<float> r(outer);
    CHECK(cudaMemcpy(r.data(), out, outer * 4, cudaMemcpyDeviceToHost));
    for (int64_t o = 0; o < outer; ++o) {
      const double ref = host_sum((x - pool) + o * len, len);
      const double rel = std::fabs(r[o] - ref) / std::fabs(ref);
      if (err || !(rel <= 1e-5)) {
        printf("FAILED %-10s %s row %lld: got %.9g want %.9g (rel %.2e) err %d\n", vs[vi].name.c_str(), what,
               (long long)o, r[o], ref, rel, err);
        ok[vi] = false;
        return;
      }
    }
  };
  for (size_t vi = 0; vi < vs.size(); ++vi) {
    for (int64_t n : sizes) check(vi, pool, 1, n, "full");
    check(vi, pool + 1, 1, ((int64_t)1 << 24) - 3, "misaligned odd 2^24-3");
    check(vi, pool + 3, 1, ((int64_t)1 << 27) + 4096 * 5 + 7, "misaligned 2^27+20487");
    check(vi, pool + 3, 1, 1000003, "misaligned odd 1e6");
    check(vi, pool + 2, 1, 4096 * 3 + 5, "misaligned 3 tiles + 5");
    check(vi, pool, 1, 5, "n=5");
    check(vi, pool + 2, 1, 4099, "n=4099");
    check(vi, pool + 1, 7, ((int64_t)1 << 22) + 3, "rows 7 x (2^22+3)");
    check(vi, pool, 3, 1 << 20, "rows 3 x 2^20");
    check(vi, pool + 1, 64, 50001, "rows 64 x 50001");
    check(vi, pool + 2, 6000, 1001, "rows 6000 x 1001");
    printf("VALID %-10s %s\n", vs[vi].name.c_str(), ok[vi] ? "ok" : "FAILED");
  }

  /* timing: per size and variant, 30 alternating pairs (cub, variant) after a warm-up */
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  const int PAIRS = 30;
  std::vector<std::vector<double>> pct(vs.size(), std::vector<double>(NS, 0)), gbs = pct;
  int64_t rot = 0;
  for (int si = 0; si < NS; ++si) {
    const int64_t n = sizes[si];
    const int64_t nbuf = POOL / n;
    const int B = (int)std::max<int64_t>(1, ((int64_t)1 << 26) / n);
    ck_red_desc d{};
    d.dtype = CK_F32; d.op = CK_RED_SUM; d.outer = 1; d.len = n; d.inner = 1; d.out = out;
    auto sample = [&](size_t vi) { /* ms per call over B calls, each on the next buffer of the pool */
      CHECK(cudaEventRecord(e0, stream));
      for (int b = 0; b < B; ++b) {
        d.x = pool + (rot++ % nbuf) * n;
        vs[vi].run(d, &env);
      }
      CHECK(cudaEventRecord(e1, stream));
      CHECK(cudaEventSynchronize(e1));
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, e0, e1));
      return (double)t / B;
    };
    std::vector<double> cub_all;
    for (size_t vi = 1; vi < vs.size(); ++vi) {
      if (!ok[vi] || !ok[0]) continue;
      sample(0), sample(vi), sample(0), sample(vi); /* warm-up */
      std::vector<double> tc, tv;
      for (int k = 0; k < PAIRS; ++k) {
        tc.push_back(sample(0));
        tv.push_back(sample(vi));
      }
      cub_all.insert(cub_all.end(), tc.begin(), tc.end());
      const double mc = median(tc), mv = median(tv);
      pct[vi][si] = 100.0 * mc / mv;
      gbs[vi][si] = 4.0 * n / (mv * 1e-3) / 1e9;
      printf("PAIR %-10s n=2^%d  cub %.2f us  variant %.2f us (min %.2f max %.2f)  %.1f GB/s  %.1f%% of cub\n",
             vs[vi].name.c_str(), (int)std::log2((double)n), mc * 1e3, mv * 1e3,
             *std::min_element(tv.begin(), tv.end()) * 1e3, *std::max_element(tv.begin(), tv.end()) * 1e3,
             gbs[vi][si], pct[vi][si]);
    }
    CHECK(cudaGetLastError());
    if (!cub_all.empty()) {
      const double mc = median(cub_all);
      gbs[0][si] = 4.0 * n / (mc * 1e-3) / 1e9;
      pct[0][si] = 100.0;
      printf("PAIR %-10s n=2^%d  median of all its %zu samples %.2f us (min %.2f max %.2f)  %.1f GB/s\n", "cub",
             (int)std::log2((double)n), cub_all.size(), mc * 1e3,
             *std::min_element(cub_all.begin(), cub_all.end()) * 1e3,
             *std::max_element(cub_all.begin(), cub_all.end()) * 1e3, gbs[0][si]);
    }
  }

  /* summary rows for sum.sh's table: % of CUB (paired) per size; CUB's own row in GB/s */
  for (size_t vi = 0; vi < vs.size(); ++vi) {
    printf("ROW %s", vs[vi].name.c_str());
    for (int si = 0; si < NS; ++si)
      if (!ok[vi]) printf(" FAILED");
      else if (vi == 0) printf(" %.0f", gbs[0][si]);
      else printf(" %.1f", pct[vi][si]);
    printf("\n");
  }

  /* the rule: rung configurations valid everywhere, >= 97% of CUB at every size (2^22 included): best mean
   * over 2^24..2^28; if none qualifies, the best minimum over all sizes */
  int best = -1, best_min = -1;
  double best_mean = -1, best_lo = -1;
  for (size_t vi = 0; vi < vs.size(); ++vi) {
    if (vs[vi].cfg.empty() || !ok[vi] || !ok[0]) continue;
    double lo = 1e9, mean = 0;
    for (int si = 0; si < NS; ++si) lo = std::min(lo, pct[vi][si]);
    for (int si = 1; si < NS; ++si) mean += pct[vi][si] / (NS - 1);
    printf("SCORE %-10s mean(2^24..2^28) %.1f%%  min %.1f%%\n", vs[vi].name.c_str(), mean, lo);
    if (lo >= 97.0 && mean > best_mean) best = (int)vi, best_mean = mean;
    if (lo > best_lo) best_min = (int)vi, best_lo = lo;
  }
  if (best >= 0)
    printf("RULE %s: mean %.1f%% of CUB over 2^24..2^28, none below 97%%  ->  using SpDefault = %s;\n",
           vs[best].name.c_str(), best_mean, vs[best].cfg.c_str());
  else if (best_min >= 0)
    printf("RULE none >= 97%% everywhere; best minimum: %s (%.1f%%)  ->  using SpDefault = %s;\n",
           vs[best_min].name.c_str(), best_lo, vs[best_min].cfg.c_str());
  return 0;
}
