// lab/cx_div_gpu.cu — the complex ladder's vectorized rung (kernels/complex/02_vectorized.cu) alone, without Lua or the
// library: c64 and c128 a / b, a + b and a * b on 2^26 elements, each result checked element by element against the
// host's formula (cx_math.h compiled here as C++: the library's host oracle uses the same text), z / z = 1 + 0i exactly
// at the specs' three values, then timed with CUDA events (3 warm-ups, median of 21) beside a device-to-device memcpy
// of half the bytes the op moves (2 reads + 1 write): % of memcpy as examples/complex_bench.lua counts it.
// For a GPU call with too little device time left for the library's build (one nvcc of two files):
//   nvcc -std=c++17 -O3 -arch=sm_90a -Ikernels -Ikernels/complex --expt-relaxed-constexpr lab/cx_div_gpu.cu \
//     kernels/complex/02_vectorized.cu -o /tmp/cxdiv && /tmp/cxdiv
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "complex/cx_common.cuh"

#define CK(x)                                                                                                          \
  do {                                                                                                                 \
    cudaError_t e_ = (x);                                                                                              \
    if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(2); }                               \
  } while (0)

template <class C, class T> static int run(bool fp64, const char *name, int64_t n) {
  std::mt19937_64 rng(35);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<C> ha(n), hb(n), hout(n);
  for (int64_t i = 0; i < n; ++i) {
    ha[i].re = (T)u(rng), ha[i].im = (T)u(rng);
    do { hb[i].re = (T)u(rng), hb[i].im = (T)u(rng); } while (std::hypot((double)hb[i].re, (double)hb[i].im) < 0.25);
  }
  const T zz[3][2] = {{1, 2}, {2, 1}, {0, 3}}; // z / z at the specs' values
  for (int k = 0; k < 3; ++k) ha[k].re = hb[k].re = zz[k][0], ha[k].im = hb[k].im = zz[k][1];
  C *a, *b, *o;
  CK(cudaMalloc(&a, n * sizeof(C)));
  CK(cudaMalloc(&b, n * sizeof(C)));
  CK(cudaMalloc(&o, n * sizeof(C)));
  CK(cudaMemcpy(a, ha.data(), n * sizeof(C), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), n * sizeof(C), cudaMemcpyHostToDevice));
  ck_env env = {};
  CK(cudaDeviceGetAttribute(&env.sm_count, cudaDevAttrMultiProcessorCount, 0));
  int bad = 0;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto timed = [&](auto f) {
    for (int r = 0; r < 3; ++r) f();
    std::vector<float> ms(21);
    for (auto &m : ms) {
      CK(cudaEventRecord(e0));
      f();
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      CK(cudaEventElapsedTime(&m, e0, e1));
    }
    std::sort(ms.begin(), ms.end());
    return ms[10];
  };
  void *m0, *m1; /* the memcpy's own buffers: 1.5 x the array each (it moves as many bytes as the op) */
  CK(cudaMalloc(&m0, n * sizeof(C) * 3 / 2));
  CK(cudaMalloc(&m1, n * sizeof(C) * 3 / 2));
  const float mc = timed([&] { CK(cudaMemcpy(m1, m0, n * sizeof(C) * 3 / 2, cudaMemcpyDeviceToDevice)); });
  CK(cudaFree(m0));
  CK(cudaFree(m1));
  for (int fn : {CK_CX_ADD, CK_CX_MUL, CK_CX_DIV}) {
    ck_cx_desc d = {};
    d.fn = fn, d.fp64 = fp64, d.ndim = 1, d.shape[0] = n, d.numel = n, d.out = o, d.a = a, d.b = b;
    d.out_st[0] = d.a_st[0] = d.b_st[0] = 1;
    if (ck_complex_vectorized_supports(&d)) { printf("declined\n"); return 1; }
    CK(cudaMemset(o, 0xff, n * sizeof(C))); // poisoned
    if (ck_complex_vectorized(&d, &env)) { printf("launch failed\n"); return 1; }
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hout.data(), o, n * sizeof(C), cudaMemcpyDeviceToHost));
    const double eps = fp64 ? 0x1p-52 : 0x1p-23;
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      C w;
      if constexpr (sizeof(T) == 8) w = fn == CK_CX_ADD ? ckcd_add(ha[i], hb[i]) : fn == CK_CX_MUL ? ckcd_mul(ha[i], hb[i]) : ckcd_div(ha[i], hb[i]);
      else w = fn == CK_CX_ADD ? ckcf_add(ha[i], hb[i]) : fn == CK_CX_MUL ? ckcf_mul(ha[i], hb[i]) : ckcf_div(ha[i], hb[i]);
      // the device may contract a*b + c into an fma where the host does not: a few roundings of the terms' size
      const double scale = 16 * eps * (1 + std::hypot((double)ha[i].re, (double)ha[i].im) * 4);
      if (!(std::fabs((double)hout[i].re - (double)w.re) <= scale && std::fabs((double)hout[i].im - (double)w.im) <= scale))
        if (++wrong < 4) printf("  %s fn %d [%lld]: (%.9g, %.9g) want (%.9g, %.9g)\n", name, fn, (long long)i,
                                (double)hout[i].re, (double)hout[i].im, (double)w.re, (double)w.im);
    }
    if (fn == CK_CX_DIV)
      for (int k = 0; k < 3; ++k)
        if (!(hout[k].re == 1 && hout[k].im == 0 && !std::signbit((double)hout[k].im)))
          ++wrong, printf("  %s z / z at %d: (%.17g, %.17g)\n", name, k, (double)hout[k].re, (double)hout[k].im);
    bad += wrong != 0;
    const float ms = timed([&] { ck_complex_vectorized(&d, &env); });
    printf("%s %-3s %8.4f ms  %6.1f%% of memcpy (%.4f ms)  %s\n", name, fn == CK_CX_ADD ? "add" : fn == CK_CX_MUL ? "mul" : "div",
           ms, 100 * mc / ms, mc, wrong ? "WRONG" : "checked");
  }
  CK(cudaFree(a));
  CK(cudaFree(b));
  CK(cudaFree(o));
  return bad;
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("device: %s\n", p.name);
  const int64_t n = (int64_t)1 << 26;
  int bad = run<ck_c64_t, float>(false, "c64", n);
  bad += run<ck_c128_t, double>(true, "c128", n);
  printf("cx_div_gpu: %s\n", bad ? "BAD" : "all checked");
  return bad != 0;
}
