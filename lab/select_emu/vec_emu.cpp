// vec_emu.cpp (lab/select_emu) — the index ladder's `vec` rung (kernels/index/02_vec.cu) run on the CPU through the
// launcher itself: dense gathers (whole-row vectors when four neighbouring indices agree, element moves otherwise;
// aligned and unaligned sources, innermost lengths that are and are not multiples of 4, i32 and i64 indices, every
// element size), index_select of rows, and out-of-range indices (zeros written, the flag set) — each against a
// plain loop. Descriptors are filled as src/ops/op_index.c's ix_describe fills them for these ops.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ck_kernels.h"

extern "C" int ck_index_vec(const void *desc, const ck_env *env);
extern "C" const char *ck_index_vec_supports(const void *desc);

static void *ws_alloc(void *, size_t n) { return std::malloc(n); }
static void ws_free(void *, void *p) { std::free(p); }
static int fails = 0, checks = 0;
#define CHECK(c, ...) do { ++checks; if (!(c)) { ++fails; std::printf(__VA_ARGS__); std::printf("\n"); } } while (0)

static ck_env env_of() {
  ck_env e;
  std::memset(&e, 0, sizeof e);
  e.sm_count = 1;
  e.ws_alloc = ws_alloc, e.ws_free = ws_free;
  return e;
}

/* gather along dim 0 of a [R x P] source viewed as [R x C] from column `col0`, index [M x C] (es-byte elements) */
template <class IX> static void gather_case(int es, int64_t R, int64_t C, int64_t P, int64_t col0, int64_t M, bool rows,
                                            bool bad) {
  std::vector<unsigned char> src((size_t)(R * P * es + 64));
  unsigned char *base = src.data() + (16 - ((uintptr_t)src.data() & 15)) % 16; /* 16-aligned like the allocator */
  for (int64_t i = 0; i < R * P * es; ++i) base[i] = (unsigned char)(std::rand() & 255);
  std::vector<IX> ix((size_t)(M * C));
  for (int64_t i = 0; i < M; ++i) {
    const IX r = (IX)(1 + std::rand() % R);
    for (int64_t j = 0; j < C; ++j) ix[(size_t)(i * C + j)] = rows ? r : (IX)(1 + std::rand() % R);
  }
  int64_t bad_at = -1;
  if (bad && M * C > 0) bad_at = std::rand() % (M * C), ix[(size_t)bad_at] = (IX)(R + 1);
  std::vector<unsigned char> out((size_t)(M * C * es + 64), 0xAB);
  unsigned char *ob = out.data() + (16 - ((uintptr_t)out.data() & 15)) % 16;
  std::memset(ob, 0xAB, (size_t)(M * C * es));
  int64_t flag[2] = {0x7f7f7f7f7f7f7f7fLL, 0x7f7f7f7f7f7f7f7fLL};
  ck_ix_desc d;
  std::memset(&d, 0, sizeof d);
  d.fn = CK_IX_GATHER, d.es = es, d.dtype = CK_U8, d.ix_dt = sizeof(IX) == 8 ? CK_I64 : CK_I32, d.ix_es = sizeof(IX);
  d.nd = 2, d.shape[0] = M, d.shape[1] = C, d.numel = M * C;
  d.out = ob, d.out_st[0] = C, d.out_st[1] = 1;
  d.src = base + col0 * es, d.src_st[0] = 0, d.src_st[1] = 1;
  d.ix = ix.data(), d.ix_st[0] = C, d.ix_st[1] = 1;
  d.dim = 0, d.dim_st = P, d.bound = R, d.flag = flag;
  const char *why = ck_index_vec_supports(&d);
  CHECK(!why, "gather es %d [%lldx%lld]: vec declined: %s", es, (long long)M, (long long)C, why ? why : "");
  if (why) return;
  ck_env e = env_of();
  CHECK(ck_index_vec(&d, &e) == 0, "launch failed");
  int wrong = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < C; ++j) {
      const int64_t k = i * C + j, r = (int64_t)ix[(size_t)k];
      const unsigned char *want = r >= 1 && r <= R ? base + ((r - 1) * P + col0 + j) * es : nullptr;
      for (int b = 0; b < es; ++b) {
        const unsigned char w = want ? want[b] : 0;
        if (ob[k * es + b] != w) ++wrong;
      }
    }
  CHECK(wrong == 0, "gather es %d R %lld C %lld P %lld col0 %lld M %lld rows %d idx %zu: %d wrong bytes", es, (long long)R,
        (long long)C, (long long)P, (long long)col0, (long long)M, rows, sizeof(IX), wrong);
  CHECK((flag[0] != 0x7f7f7f7f7f7f7f7fLL) == (bad_at >= 0), "gather es %d: flag %lld, a bad index at %lld", es,
        (long long)flag[0], (long long)bad_at);
}

static void rows_case(int es, int64_t R, int64_t C, int64_t n, bool bad) { /* index_select dim 0 of [R x C] */
  std::vector<unsigned char> src((size_t)(R * C * es + 16));
  unsigned char *base = src.data() + (16 - ((uintptr_t)src.data() & 15)) % 16;
  for (int64_t i = 0; i < R * C * es; ++i) base[i] = (unsigned char)(std::rand() & 255);
  std::vector<int64_t> ix((size_t)n);
  for (auto &v : ix) v = 1 + std::rand() % R;
  if (bad && n) ix[(size_t)(std::rand() % n)] = 0;
  std::vector<unsigned char> out((size_t)(n * C * es + 16));
  unsigned char *ob = out.data() + (16 - ((uintptr_t)out.data() & 15)) % 16;
  int64_t flag[2] = {0x7f7f7f7f7f7f7f7fLL, 0x7f7f7f7f7f7f7f7fLL};
  ck_ix_desc d;
  std::memset(&d, 0, sizeof d);
  d.fn = CK_IX_INDEX_SELECT, d.es = es, d.dtype = CK_U8, d.ix_dt = CK_I64, d.ix_es = 8;
  d.nd = 2, d.shape[0] = n, d.shape[1] = C, d.numel = n * C;
  d.out = ob, d.out_st[0] = C, d.out_st[1] = 1;
  d.src = base, d.src_st[0] = 0, d.src_st[1] = 1;
  d.ix = ix.data(), d.ix_st[0] = 1;
  d.dim = 0, d.dim_st = C, d.bound = R, d.flag = flag;
  ck_env e = env_of();
  CHECK(!ck_index_vec_supports(&d) && ck_index_vec(&d, &e) == 0, "index_select launch");
  int wrong = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t b = 0; b < C * es; ++b) {
      const unsigned char w = ix[(size_t)i] >= 1 && ix[(size_t)i] <= R ? base[(ix[(size_t)i] - 1) * C * es + b] : 0;
      if (ob[i * C * es + b] != w) ++wrong;
    }
  CHECK(wrong == 0, "index_select es %d [%lldx%lld] n %lld: %d wrong bytes", es, (long long)R, (long long)C, (long long)n, wrong);
  CHECK((flag[0] != 0x7f7f7f7f7f7f7f7fLL) == bad, "index_select flag");
}

int main() {
  std::srand(7);
  const int sizes[] = {1, 2, 4, 8, 16};
  for (int es : sizes)
    for (int64_t C : {8, 12, 6, 3, 4})
      for (int64_t col0 : {0, 1})
        for (bool rows : {true, false})
          for (bool bad : {false, true}) {
            gather_case<int64_t>(es, 9, C, C + 2, col0, 7, rows, bad);
            gather_case<int32_t>(es, 9, C, C + 2, col0, 5, rows, bad);
          }
  for (int es : sizes) {
    rows_case(es, 11, 7, 13, false);
    rows_case(es, 11, 16, 9, true);
  }
  std::printf("vec rung on the CPU: %d checks, %d failed\n", checks, fails);
  return fails != 0;
}
