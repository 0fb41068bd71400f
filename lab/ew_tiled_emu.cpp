// lab/ew_tiled_emu.cpp — the tiled elementwise rung (kernels/elementwise/03_tiled.cu) on the CPU, through the
// stand-in CUDA of lab/issue37_emu/cuda_runtime.h: its launcher ck_ew_tiled() gets descriptors as the dispatcher
// builds them (dims in the output's memory order, X last) for 2-byte operands in other memory orders, full and edge
// tiles, with and without the element pairs (pairs_ok: even strides, aligned arrays), batches, a scalar, a unary op
// and a widening copy; every output element is compared bit for bit with the same arithmetic done here (widen,
// float op, round: kernels/half.h), after the output was poisoned. What this cannot see: timing, the real
// instructions. Run: sh lab/ew_tiled_emu.sh (from the repository root).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ck_kernels.h"
#include "half.h"

static std::mt19937 rng(7);

static uint16_t narrow(int dt, float f) { return dt == CK_F16 ? ck_f32_to_f16(f) : ck_f32_to_bf16(f); }
static float widen(int dt, uint16_t h) { return dt == CK_F16 ? ck_f16_to_f32(h) : ck_bf16_to_f32(h); }

struct Case {
  const char *name;
  int op, dt, out_dt;
  int64_t B, R, C;   // the output is [B,] R x C, row-major
  bool a_t, b_t;     // operand stored transposed (its last two dims swapped), read through a view
  bool b_scalar, scalar_left;
  int64_t a_off;     // element offset of a's view (1: misaligned pairs)
  bool expect_pair;  // what pairs_ok should say (not checked here: a comment for the reader of the output)
};

static int run(const Case &c) {
  const int64_t B = c.B, R = c.R, C = c.C, n = B * R * C;
  std::uniform_real_distribution<float> U(-4.f, 4.f);
  // storage: a and b hold n (+ a_off) elements each, in their own memory order
  std::vector<uint16_t> a(n + c.a_off + 8), b(n + 8);
  for (auto &v : a) v = narrow(c.dt, U(rng));
  for (auto &v : b) v = narrow(c.dt, U(rng));
  const int osz = c.out_dt == CK_F32 ? 4 : 2;
  std::vector<unsigned char> out((size_t)n * osz + 16, 0xab);
  ck_ew_desc d = {};
  d.op = c.op;
  d.ndim = B > 1 ? 3 : 2;
  const int y = d.ndim - 2, x = d.ndim - 1;
  if (B > 1) d.shape[0] = B;
  d.shape[y] = R, d.shape[x] = C;
  d.numel = n;
  d.out_dtype = c.out_dt;
  d.out = out.data();
  auto strides = [&](int64_t *st, bool t) {
    if (B > 1) st[0] = R * C;
    if (t) st[y] = 1, st[x] = R; else st[y] = C, st[x] = 1;
  };
  strides(d.out_st, false);
  d.a_dtype = c.dt, d.a = a.data() + c.a_off;
  strides(d.a_st, c.a_t);
  d.b_dtype = c.dt, d.b = b.data();
  strides(d.b_st, c.b_t);
  d.b_scalar = c.b_scalar, d.scalar_left = c.scalar_left;
  d.s1 = 2.0;
  if (c.op == CK_EW_NEG || c.op == CK_EW_COPY) d.b = nullptr;
  if (const char *why = ck_ew_tiled_supports(&d)) { printf("%-40s declined: %s\n", c.name, why); return 1; }
  ck_env env = {};
  env.sm_count = 4;
  if (int err = ck_ew_tiled(&d, &env)) { printf("%-40s error %d\n", c.name, err); return 1; }
  int64_t bad = 0;
  for (int64_t m = 0; m < B; ++m)
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j) {
        auto at = [&](const uint16_t *base, bool t) { return base[m * R * C + (t ? j * R + i : i * C + j)]; };
        const float xa = widen(c.dt, at(a.data() + c.a_off, c.a_t));
        const float xb = c.b_scalar ? 2.f : (d.b ? widen(c.dt, at(b.data(), c.b_t)) : 0.f);
        const int64_t o = m * R * C + i * C + j;
        bool ok;
        if (c.op == CK_EW_COPY) {
          float got;
          memcpy(&got, &out[o * 4], 4);
          ok = memcmp(&got, &xa, 4) == 0;
        } else {
          float r = c.op == CK_EW_ADD ? xa + xb : c.op == CK_EW_SUB ? (c.scalar_left ? xb - xa : xa - xb)
                  : c.op == CK_EW_MUL ? xa * xb : -xa;
          uint16_t want = narrow(c.dt, r), got;
          memcpy(&got, &out[o * 2], 2);
          ok = got == want;
        }
        if (!ok && bad++ < 3) printf("  %s: wrong at [%lld, %lld, %lld]\n", c.name, (long long)m, (long long)i, (long long)j);
      }
  for (size_t k = (size_t)n * osz; k < out.size(); ++k)
    if (out[k] != 0xab) { ++bad; printf("  %s: wrote past the end\n", c.name); break; }
  printf("%-40s %s (%lld elements%s)\n", c.name, bad ? "WRONG" : "ok", (long long)n, c.expect_pair ? ", pairs" : "");
  return bad != 0;
}

int main() {
  const Case cases[] = {
      {"f16 a + b:t() 130x200 (pairs)", CK_EW_ADD, CK_F16, CK_F16, 1, 130, 200, false, true, false, false, 0, true},
      {"f16 a + b:t() 128x128 (pairs)", CK_EW_ADD, CK_F16, CK_F16, 1, 128, 128, false, true, false, false, 0, true},
      {"f16 a + b:t() 131x201 (odd: scalar)", CK_EW_ADD, CK_F16, CK_F16, 1, 131, 201, false, true, false, false, 0, false},
      {"f16 a(+1) + b:t() 128x192 (misaligned)", CK_EW_ADD, CK_F16, CK_F16, 1, 128, 192, false, true, false, false, 1, false},
      {"bf16 a:t() - b:t() 192x130 (two staged)", CK_EW_SUB, CK_BF16, CK_BF16, 1, 192, 130, true, true, false, false, 0, true},
      {"bf16 a:t() + b 130x192 (staged left)", CK_EW_ADD, CK_BF16, CK_BF16, 1, 130, 192, true, false, false, false, 0, true},
      {"f16 2 - a:t() 192x128 (scalar left)", CK_EW_SUB, CK_F16, CK_F16, 1, 192, 128, true, false, true, true, 0, true},
      {"f16 a:t() * 2 66x130", CK_EW_MUL, CK_F16, CK_F16, 1, 66, 130, true, false, true, false, 0, true},
      {"f16 -a:t() 3 x 64x130 (batch)", CK_EW_NEG, CK_F16, CK_F16, 3, 64, 130, true, false, false, false, 0, true},
      {"bf16 a + b:t() 2 x 130x128 (batch)", CK_EW_ADD, CK_BF16, CK_BF16, 2, 130, 128, false, true, false, false, 0, true},
      {"f16 -> f32 copy of a:t() 130x192", CK_EW_COPY, CK_F16, CK_F32, 1, 130, 192, true, false, false, false, 0, true},
  };
  int fails = 0;
  for (const auto &c : cases) fails += run(c);
  printf("%d of %zu cases wrong\n", fails, sizeof cases / sizeof cases[0]);
  return fails != 0;
}
