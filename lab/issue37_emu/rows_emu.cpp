// rows_emu.cpp — every rung of the row ladder (kernels/rows) run on the CPU through cuda_runtime.h here, against the
// host oracle (src/host/host_rows.c) within spec/rows_spec.lua's bound: softmax, log_softmax, layer_norm (weight and
// bias), rms_norm (weight); f32, f64, bf16; short, long, odd and strided ([outer, len, inner]) lines; rungs whose
// supports() declines a case skip it. Prints "N runs, M bad" (and each bad case). Built by run.sh.
#include <cstdio>
#include <cstdlib>
#include <random>
#include "ck_kernels.h"
#include "half.h"
extern "C" int ck_host_rows(void *ctx, const ck_rows_desc *d);
extern "C" int ck_error(void *, int, const char *, ...) { return 1; } /* the oracle's only call into the core */
typedef int (*launch_t)(const void *, const ck_env *);
typedef const char *(*sup_t)(const void *);
struct R { const char *name; launch_t l; sup_t s; } RUNGS[] = {
  {"naive", ck_rows_naive, nullptr}, {"online", ck_rows_online, nullptr}, {"warp", ck_rows_warp, ck_rows_warp_supports},
  {"block", ck_rows_block, ck_rows_block_supports}, {"vectorized", ck_rows_vectorized, ck_rows_vectorized_supports}};
static double get(int dt, const void *p, size_t i) {
  if (dt == CK_F32) return ((float *)p)[i];
  if (dt == CK_F64) return ((double *)p)[i];
  return ck_bf16_to_f32(((uint16_t *)p)[i]);
}
static void put(int dt, void *p, size_t i, double v) {
  if (dt == CK_F32) ((float *)p)[i] = (float)v;
  else if (dt == CK_F64) ((double *)p)[i] = v;
  else ((uint16_t *)p)[i] = ck_f64_to_bf16(v);
}
int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  std::mt19937 g(7);
  std::uniform_real_distribution<double> u(-1, 1);
  int64_t shapes[][3] = {{3, 7, 1}, {2, 1000, 1}, {3, 1024, 1}, {1, 8192, 1}, {1, 9000, 1}, {4, 5, 3}, {1, 1, 1}, {2, 40000, 1}};
  int dts[] = {CK_F32, CK_F64, CK_BF16};
  int bad = 0, runs = 0;
  for (auto &sh : shapes)
    for (int dt : dts)
      for (int fn = 0; fn < 4; ++fn) {
        size_t n = sh[0] * sh[1] * sh[2], es = dt == CK_F64 ? 8 : dt == CK_F32 ? 4 : 2;
        void *x = aligned_alloc(16, n * es + 16), *o = aligned_alloc(16, n * es + 16), *r = aligned_alloc(16, n * es + 16);
        void *w = aligned_alloc(16, sh[1] * es + 16), *b = aligned_alloc(16, sh[1] * es + 16);
        for (size_t i = 0; i < n; ++i) put(dt, x, i, u(g) * 3);
        for (int64_t i = 0; i < sh[1]; ++i) put(dt, w, i, u(g) + 1.5), put(dt, b, i, u(g));
        ck_rows_desc d = {};
        d.fn = fn, d.dtype = dt, d.x = x, d.out = r, d.outer = sh[0], d.len = sh[1], d.inner = sh[2], d.eps = 1e-5;
        if (fn >= 2) d.w = w;
        if (fn == 2) d.b = b;
        ck_host_rows(nullptr, &d);
        for (auto &rg : RUNGS) {
          d.out = o;
          if (rg.s && rg.s(&d)) continue;
          if (sh[1] > 9000 && (rg.l == ck_rows_naive || rg.l == ck_rows_online)) continue;
          for (size_t i = 0; i < n; ++i) put(dt, o, i, NAN);
          ck_env env = {};
          rg.l(&d, &env);
          runs++;
          double t = 2 * ((8 + sh[1]) * (dt == CK_F64 ? 0x1p-53 : 0x1p-24) + (dt == CK_BF16 ? 0x1p-8 : dt == CK_F64 ? 0x1p-53 : 0x1p-24));
          double worst = 0; size_t wi = 0;
          for (size_t i = 0; i < n; ++i) {
            double a = get(dt, o, i), e = get(dt, r, i), err = std::isnan(a) ? 1e9 : std::fabs(a - e) / (t + t * std::fabs(e));
            if (err > worst) worst = err, wi = i;
          }
          if (worst > 1) { bad++; printf("BAD %s fn %d dt %d shape %ldx%ldx%ld: at %zu got %g want %g\n", rg.name, fn, dt, sh[0], sh[1], sh[2], wi, get(dt, o, wi), get(dt, r, wi)); }
        }
        free(x); free(o); free(r); free(w); free(b);
      }
  printf("%d runs, %d bad\n", runs, bad);
}
