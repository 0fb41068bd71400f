// lab/ix_vec_emu.cpp — the index ladder's rungs 2 and 3 (kernels/index/02_vec.cu, 03_flags.cu) on the CPU, through
// the stand-in CUDA of lab/issue37_emu/cuda_runtime.h: where of contiguous operands at every element size and every
// CUKERN_IX_WHERE_U, over lengths with and without partial trips and tails; index_select of rows (16- and 4-byte
// moves, both CUKERN_IX_ROWS_U, a bad index flagged); rung 3's compactions (find's positions, nonzero's subscripts
// in 2 and 3 dims, masked_select at every element size) over dense, sparse, empty and full masks of lengths around
// its 4096-byte tiles. Each is compared element by element with a plain loop here, the output poisoned first. What
// this cannot see: timing, the real instructions. Run: sh lab/ix_vec_emu.sh
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ck_kernels.h"

static std::mt19937 rng(11);

static int where_case(int es, int64_t n, const char *u) {
  setenv("CUKERN_IX_WHERE_U", u, 1);
  std::vector<unsigned char> m(n + 16), x(n * es + 64), y(n * es + 64), out(n * es + 64, 0xab);
  for (auto &v : m) v = rng() % 2;
  for (auto &v : x) v = rng();
  for (auto &v : y) v = rng();
  ck_ix_desc d = {};
  d.fn = CK_IX_WHERE, d.es = es, d.nd = 1, d.ix_es = 1;
  d.shape[0] = n, d.numel = n;
  d.out = out.data(), d.src = x.data(), d.ix = m.data(), d.y = y.data();
  d.out_st[0] = d.src_st[0] = d.ix_st[0] = d.y_st[0] = 1;
  ck_env env = {};
  env.sm_count = 2;
  if (ck_index_vec_supports(&d)) { printf("where es %d n %lld: declined\n", es, (long long)n); return 1; }
  ck_index_vec(&d, &env);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    if (memcmp(&out[i * es], m[i] ? &x[i * es] : &y[i * es], es)) ++bad;
  for (size_t k = n * es; k < out.size(); ++k) bad += out[k] != 0xab;
  if (bad) printf("where es %d n %lld U %s: %lld wrong\n", es, (long long)n, u, (long long)bad);
  return bad != 0;
}

static int rows_case(int64_t outer, int64_t rows, int64_t n, int64_t inner, const char *u, bool poison_ix) {
  setenv("CUKERN_IX_ROWS_U", u, 1);
  std::vector<float> src(outer * rows * inner + 8), out(outer * n * inner + 8);
  for (auto &v : src) v = (float)(rng() % 100000);
  std::vector<int64_t> ix(n);
  for (auto &v : ix) v = 1 + rng() % rows;
  if (poison_ix) ix[n / 2] = rows + 1;
  memset(out.data(), 0xab, out.size() * 4);
  int64_t flag = 0x7f7f7f7f7f7f7f7fLL;
  ck_ix_desc d = {};
  d.fn = CK_IX_INDEX_SELECT, d.es = 4, d.dtype = CK_F32, d.ix_dt = CK_I64, d.nd = 3, d.dim = 1;
  d.shape[0] = outer, d.shape[1] = n, d.shape[2] = inner, d.numel = outer * n * inner;
  d.out = out.data(), d.out_st[0] = n * inner, d.out_st[1] = inner, d.out_st[2] = 1;
  d.src = src.data(), d.src_st[0] = rows * inner, d.src_st[1] = inner, d.src_st[2] = 1;
  d.ix = ix.data(), d.ix_st[1] = 1;
  d.dim_st = inner, d.bound = rows, d.flag = &flag;
  ck_env env = {};
  env.sm_count = 2;
  if (ck_index_vec_supports(&d)) { printf("rows: declined\n"); return 1; }
  ck_index_vec(&d, &env);
  int64_t bad = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t c = 0; c < inner; ++c) {
        const float got = out[(o * n + j) * inner + c];
        const bool okix = ix[j] >= 1 && ix[j] <= rows;
        const float want = okix ? src[(o * rows + ix[j] - 1) * inner + c] : 0.f;
        bad += memcmp(&got, &want, 4) != 0;
      }
  for (size_t k = outer * n * inner; k < out.size(); ++k) bad += memcmp(&out[k], "\xab\xab\xab\xab", 4) != 0;
  if ((flag != 0x7f7f7f7f7f7f7f7fLL) != poison_ix) ++bad;
  if (bad) printf("rows %lldx%lldx%lld U %s: %lld wrong\n", (long long)outer, (long long)n, (long long)inner, u, (long long)bad);
  return bad != 0;
}

static void *emu_ws_alloc(void *, size_t b) { return malloc(b); }
static void emu_ws_free(void *, void *p) { free(p); }

/* rung 3: fn NONZERO (nd = 1: positions; else subscripts) or MASKED_SELECT (element size es), over a mask of shape
 * sh (nd dims) with density dens */
static int flags_case(int fn, int es, int nd, const int64_t *sh, double dens) {
  int64_t n = 1;
  for (int k = 0; k < nd; ++k) n *= sh[k];
  std::vector<unsigned char> mstore(n + 32);
  unsigned char *m = mstore.data() + (16 - (uintptr_t)mstore.data() % 16) % 16; /* 16-byte aligned */
  std::uniform_real_distribution<double> U(0, 1);
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    m[i] = U(rng) < dens ? (unsigned char)(1 + rng() % 255) : 0;
    k += m[i] != 0;
  }
  std::vector<unsigned char> src(n * es + 16), out((k ? k : 1) * (fn == CK_IX_NONZERO ? 8 * (nd > 1 ? nd : 1) : es) + 64, 0xab);
  for (auto &v : src) v = rng();
  ck_ix_desc d = {};
  d.fn = fn, d.es = fn == CK_IX_NONZERO ? 8 : es, d.nd = nd, d.ix_es = 1, d.numel = n, d.nz_mask = 0xff;
  int64_t st = 1;
  for (int j = nd - 1; j >= 0; --j) d.shape[j] = sh[j], d.ix_st[j] = st, d.src_st[j] = st, st *= sh[j];
  d.ix = m, d.src = src.data(), d.out = out.data();
  d.dim_st = fn == CK_IX_NONZERO && nd > 1;
  ck_env env = {};
  env.sm_count = 2, env.ws_alloc = emu_ws_alloc, env.ws_free = emu_ws_free;
  if (const char *why = ck_index_flags_supports(&d)) { printf("flags: declined: %s\n", why); return 1; }
  ck_index_flags(&d, &env);
  int64_t bad = 0, r = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!m[i]) continue;
    if (fn == CK_IX_MASKED_SELECT) {
      bad += memcmp(&out[r * es], &src[i * es], es) != 0;
    } else if (nd <= 1) {
      int64_t got;
      memcpy(&got, &out[r * 8], 8);
      bad += got != i + 1;
    } else {
      int64_t p = i;
      for (int j = nd - 1; j >= 0; --j) {
        int64_t got;
        memcpy(&got, &out[(r * nd + j) * 8], 8);
        bad += got != p % sh[j] + 1;
        p /= sh[j];
      }
    }
    ++r;
  }
  const size_t used = (size_t)k * (fn == CK_IX_NONZERO ? 8 * (nd > 1 ? nd : 1) : es);
  for (size_t q = used; q < out.size(); ++q) bad += out[q] != 0xab;
  if (bad) printf("flags fn %d es %d nd %d n %lld density %.3f: %lld wrong\n", fn, es, nd, (long long)n, dens, (long long)bad);
  return bad != 0;
}

// cat along the last dim: inputs of rows x widths[k] bytes (pitches = their widths, the output's = the sum), the units
// wide where every geometry allows; the bytes past the output untouched
static int cat_case(int64_t rows, std::vector<int64_t> widths) {
  int64_t total = 0;
  for (auto w : widths) total += w;
  std::vector<std::vector<unsigned char>> in(widths.size());
  std::vector<unsigned char> out(rows * total + 64, 0xab);
  ck_ix_desc d = {};
  d.fn = CK_IX_CAT, d.es = 1, d.rows = rows, d.out_pitch = total, d.out = out.data(), d.n = (int)widths.size();
  int64_t off = 0;
  for (size_t k = 0; k < widths.size(); ++k) {
    in[k].resize(rows * widths[k] + 16);
    for (auto &v : in[k]) v = rng();
    d.in[k].src = in[k].data(), d.in[k].src_pitch = widths[k], d.in[k].row_bytes = widths[k], d.in[k].dst_off = off;
    off += widths[k];
  }
  ck_env env = {};
  env.sm_count = 2;
  if (ck_index_vec_supports(&d)) { printf("cat: declined\n"); return 1; }
  ck_index_vec(&d, &env);
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t o = 0;
    for (size_t k = 0; k < widths.size(); ++k) {
      bad += memcmp(&out[r * total + o], &in[k][r * widths[k]], widths[k]) != 0;
      o += widths[k];
    }
  }
  for (size_t k = rows * total; k < out.size(); ++k) bad += out[k] != 0xab;
  if (bad) printf("cat rows %lld of %zu inputs: %lld wrong\n", (long long)rows, widths.size(), (long long)bad);
  return bad != 0;
}

int main() {
  int fails = 0, runs = 0;
  const int64_t lens[] = {1, 3, 4, 5, 1001, 4 * 256 * 4 * 3, 4 * 256 * 4 * 3 + 7, 4 * 256 * 9 + 2};
  for (int es : {1, 2, 4, 8, 16})
    for (int64_t n : lens)
      for (const char *u : {"1", "2", "4"}) fails += where_case(es, n, u), ++runs;
  for (const char *u : {"4", "8"}) {
    fails += rows_case(3, 11, 7, 64, u, false), ++runs;  // 256-byte rows: 16-byte moves
    fails += rows_case(3, 11, 7, 37, u, false), ++runs;  // 148-byte rows: 4-byte moves
    fails += rows_case(1, 300, 1000, 512, u, false), ++runs;
    fails += rows_case(2, 5, 9, 64, u, true), ++runs;   // a bad index: zeros written, the flag set
  }
  for (double dens : {0.0, 0.01, 0.5, 1.0}) {
    for (int64_t n : {1, 15, 16, 17, 4095, 4096, 4097, 3 * 4096 + 17, 20000}) {
      const int64_t sh1[1] = {n};
      fails += flags_case(CK_IX_NONZERO, 8, 1, sh1, dens), ++runs;
      for (int es : {1, 2, 4, 8, 16}) fails += flags_case(CK_IX_MASKED_SELECT, es, 1, sh1, dens), ++runs;
    }
    const int64_t sh2[2] = {97, 131}, sh3[3] = {5, 33, 71};
    fails += flags_case(CK_IX_NONZERO, 8, 2, sh2, dens), ++runs;
    fails += flags_case(CK_IX_NONZERO, 8, 3, sh3, dens), ++runs;
    fails += flags_case(CK_IX_MASKED_SELECT, 4, 3, sh3, dens), ++runs;
  }
  fails += cat_case(9, {16, 16, 32}), ++runs;                 // a unit a row
  fails += cat_case(3000, {512, 512}), ++runs;                // 32 units a row
  fails += cat_case(5, {16000, 4096, 48}), ++runs;            // rows longer than a block's units
  fails += cat_case(700, {12, 20, 7, 16}), ++runs;            // 1-byte units (a 7-byte row)
  fails += cat_case(100, std::vector<int64_t>(64, 128)), ++runs; // 64 inputs: the block's binary search
  printf("ix_vec_emu: %d runs, %d bad\n", runs, fails);
  return fails != 0;
}
