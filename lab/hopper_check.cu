/*
 * hopper_check.cu — experiment: the Hopper rungs (12 wgmma_tma, 13 warp_specialized, 14 persistent and
 * each of 14's configurations) checked on awkward shapes and timed against cuBLAS, interleaved over several
 * rounds so that the spread between rounds shows. Reuses examples/tc_check.cu's problems, checks and timer.
 * Build + run: lab/hopper.sh. examples/tc_check.cu is compiled here as it is (main renamed), not copied.
 */
#define main tc_check_main
#include "../examples/tc_check.cu"
#undef main

extern "C" {
int ck_matmul_wgmma_tma(const void *desc, const ck_env *env);
const char *ck_matmul_wgmma_tma_supports(const void *desc);
int ck_matmul_warp_specialized(const void *desc, const ck_env *env);
const char *ck_matmul_warp_specialized_supports(const void *desc);
int ck_matmul_persistent(const void *desc, const ck_env *env);
const char *ck_matmul_persistent_supports(const void *desc);
}

static const Rung kH[] = {
    {"cublas", ck_matmul_cublas, nullptr, 0, 0},
    {"wgmma_tma", ck_matmul_wgmma_tma, ck_matmul_wgmma_tma_supports, 0, 0},
    {"warp_spec", ck_matmul_warp_specialized, ck_matmul_warp_specialized_supports, 0, 0},
    {"persistent", ck_matmul_persistent, ck_matmul_persistent_supports, 4, 0},
};

static void check_part() {
  printf("\n== correctness (Hopper rungs; operands with 16-byte rows, as the dispatcher hands them)\n");
  const Shape shapes[] = {
      {1, 1, 1, 1, false, false, true, false, 1, 0},         {17, 33, 65, 1, false, false, true, false, 1, 0},
      {128, 256, 64, 1, false, false, true, false, 1, 0},    {300, 520, 200, 1, false, false, true, false, 1, 0},
      {127, 129, 31, 1, false, false, true, false, 1, 0},    {96, 80, 72, 1, true, true, true, false, 1, 0},
      {67, 45, 99, 1, true, false, true, false, 1, 0},       {67, 45, 99, 1, false, true, true, false, 1, 0},
      {40, 72, 136, 3, false, false, true, true, 1, 0},      {65, 130, 70, 1, false, false, true, false, 0.5, -1.5},
      {20, 24, 0, 1, false, false, true, false, 1, 0},       {2100, 1100, 136, 1, false, false, true, false, 1, 0},
      {1000, 700, 1030, 2, false, false, true, false, 0.75, 0.25}, {1000, 700, 1030, 2, false, false, true, false, 0.75, 0},
      {4100, 4000, 200, 1, false, true, true, false, 1, 0},
  };
  struct KC {
    Kind kind;
    int cdt;
  } kcs[] = {{K_BF16, CK_BF16}, {K_BF16, CK_F32}, {K_F16, CK_F16}};
  uint32_t seed = 11;
  for (const KC &kc : kcs) {
    printf("-- %s in, %s out\n", kind_name(kc.kind), dt_name(kc.cdt));
    for (const Shape &s : shapes) {
      Problem P = make_problem(kc.kind, kc.cdt, s.m, s.n, s.k, s.batch, s.ta, s.tb, s.pad, s.bcast, s.alpha, s.beta,
                               seed += 7, true);
      char label[96];
      snprintf(label, sizeof label, "%lldx%lldx%lld b%lld%s%s%s a=%g b=%g", (long long)s.m, (long long)s.n,
               (long long)s.k, (long long)s.batch, s.ta ? " At" : "", s.tb ? " Bt" : "", s.bcast ? " Bbcast" : "",
               s.alpha, s.beta);
      for (const Rung &r : kH) {
        if (s.k == 0 && r.supports) continue; // k == 0 never reaches a rung: the dispatcher writes beta*C
        run_check(r, -1, P, 4096, label);
        for (int c = 0; c < r.ncfg_half; ++c) run_check(r, c, P, 4096, label);
      }
      free_problem(P);
    }
  }
}

struct Case {
  int64_t m, n, k;
};

/* One launch between events (ms). */
static double time_one(const Rung &r, const ck_mm_desc &d, int cfg, cudaEvent_t e0, cudaEvent_t e1) {
  set_cfg(cfg);
  CK(cudaEventRecord(e0, g_stream));
  const int rc = r.launch(&d, &g_env);
  CK(cudaEventRecord(e1, g_stream));
  CK(cudaEventSynchronize(e1));
  set_cfg(-1);
  float t;
  CK(cudaEventElapsedTime(&t, e0, e1));
  return rc == 0 ? t : -1;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/* Each variant against cuBLAS in pairs (cuBLAS, variant, cuBLAS, variant, ...): both see the same clocks and
 * temperature, which drift over a run on a power-limited GPU. % of cuBLAS = median cuBLAS time / median time. */
static void speed_part(int pairs) {
  printf("\n== speed: bf16 C = A B (contiguous); each variant timed in %d alternating pairs with cuBLAS (3 warm-ups)\n",
         pairs);
  const Case cases[] = {{8192, 8192, 8192}, {4096, 4096, 4096}, {8192, 4096, 16384}};
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (const Case &cs : cases) {
    Problem P = make_problem(K_BF16, CK_BF16, cs.m, cs.n, cs.k, 1, false, false, false, false, 1, 0, 99, false);
    P.c_rs = cs.n, P.c_bs = cs.m * cs.n;
    const ck_mm_desc d = desc_of(P);
    const double flop = 2.0 * cs.m * cs.n * cs.k;
    printf("-- bf16 %lld x %lld x %lld\n", (long long)cs.m, (long long)cs.n, (long long)cs.k);
    for (const Rung &r : kH) {
      if (!r.supports) continue;
      for (int c = -1; c < r.ncfg_half; ++c) {
        std::vector<double> tb, tv;
        for (int i = 0; i < 3; ++i) time_one(kH[0], d, -1, e0, e1), time_one(r, d, c, e0, e1);
        for (int i = 0; i < pairs; ++i) tb.push_back(time_one(kH[0], d, -1, e0, e1)), tv.push_back(time_one(r, d, c, e0, e1));
        const double mb = median(tb), mv = median(tv);
        char name[64];
        snprintf(name, sizeof name, c < 0 ? "%s" : "%s/c%d", r.name, c);
        printf("  %-16s %7.1f TFLOP/s  cuBLAS %7.1f  %6.1f%% of cuBLAS  (spread: own %.1f-%.1f, cuBLAS %.1f-%.1f TFLOP/s)\n",
               name, flop / mv / 1e9, flop / mb / 1e9, 100 * mb / mv, flop / *std::max_element(tv.begin(), tv.end()) / 1e9,
               flop / *std::min_element(tv.begin(), tv.end()) / 1e9, flop / *std::max_element(tb.begin(), tb.end()) / 1e9,
               flop / *std::min_element(tb.begin(), tb.end()) / 1e9);
        fflush(stdout);
      }
    }
    free_problem(P);
  }
}

/* --one <rung> <cfg> m n k: that variant alone, 5 launches (for ncu). */
static int one(int argc, char **argv) {
  if (argc < 7) return 2;
  const Rung *r = nullptr;
  for (const Rung &x : kH)
    if (!strcmp(x.name, argv[2])) r = &x;
  if (!r) return 2;
  Problem P = make_problem(K_BF16, CK_BF16, atoll(argv[4]), atoll(argv[5]), atoll(argv[6]), 1, false, false, false, false, 1,
                           0, 5, false);
  P.c_rs = P.n, P.c_bs = P.m * P.n;
  const ck_mm_desc d = desc_of(P);
  set_cfg(atoi(argv[3]));
  for (int i = 0; i < 5; ++i)
    if (r->launch(&d, &g_env)) return 3;
  CK(cudaStreamSynchronize(g_stream));
  return 0;
}

int main(int argc, char **argv) {
  env_init();
  if (argc > 1 && !strcmp(argv[1], "--one")) return one(argc, argv);
  const bool speed_only = argc > 1 && !strcmp(argv[1], "--speed"), check_only = argc > 1 && !strcmp(argv[1], "--check");
  if (!speed_only) check_part();
  if (!check_only) speed_part(argc > 2 ? atoi(argv[2]) : 15);
  printf("\n%d checks passed, %d failed, %d refused\n", g_pass, g_fail, g_refused);
  return g_fail ? 1 : 0;
}
