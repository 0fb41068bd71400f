/*
 * 04_fused_panel.cu — LU ladder, step 4: step 2 with each panel factored by ONE kernel.
 * Idea: step 2's time goes to its panels, not to its flops: two launches a column (a one-block pivot search, then a
 * rank-1 pass), 2n launches in all, each a few microseconds of latency however little it does. Here one cooperative
 * grid factors a whole m x nb panel. Each block keeps a slice of the panel's rows in shared memory for the panel's
 * lifetime; per column, every block finds the first largest |a| of its slice and publishes it (value, row, and the
 * row itself) in a global workspace; after ONE grid barrier every block picks the same winner (the first largest,
 * as idamax) and updates its own rows with the pivot row, the swap folded into the update. The column below the
 * diagonal is divided by the pivot at the end: the update uses a(i, c) / piv on the fly and column c never changes
 * after step c, so the factors are step 1's, division for division (for finite data: at an exact zero pivot the
 * update is skipped, where step 1 adds 0 * u, which differs only for a NaN below or an Inf in the pivot row). Block 0 also replays the panel's swaps on row
 * labels, so the other columns take them as one permutation (laswp_perm_kernel: every moved row of a column loaded,
 * then stored) instead of step 2's swap after swap, each a dependent load and store.
 * Changed from step 2: the panel is one launch with one grid barrier a column instead of two launches a column;
 * the row swaps outside it one parallel pass; panels of 128 columns (rank-128 trailing products) by default.
 * Launch: per panel one cooperative grid of G blocks x 256 threads, each with R = ceil(rows / G) rows of the panel in
 * R x nb elements of dynamic shared memory (CUKERN_LU_PANEL_ROWS rows a block, default 64, fewer blocks than are
 * co-resident; CUKERN_LU_PANEL_COLS columns, default 128, at most 256), one laswp_perm over the other columns, then
 * step 2's trsm and matmul.
 * Limits: any m x n; f32 and f64. A panel whose rows do not fit the co-resident blocks' shared memory at its width
 * is narrowed (halved, down to 8 columns); past that (hundreds of thousands of rows), or on a device without
 * cooperative launch, step 1's column kernels and step 2's swaps run that panel.
 */
#include <cooperative_groups.h>

#include "ck_knob.h"
#include "lu_common.cuh"

namespace {
constexpr int NBMAX = 256, THREADS = 256, WARPS = THREADS / 32; /* widest panel */

/* (v, i) becomes (ov, oi) when that is larger, or as large with a smaller row: the first largest */
template <typename T> __device__ __forceinline__ void better(T &v, int &i, T ov, int oi) {
  if (ov > v || (ov == v && oi < i)) v = ov, i = oi;
}
template <typename T> __device__ __forceinline__ void warp_best(T &v, int &i) {
  for (int o = 16; o; o >>= 1) better(v, i, __shfl_down_sync(~0u, v, o), __shfl_down_sync(~0u, i, o));
}

/* The workspace, two slots (a column's writes never meet the previous column's reads: one barrier apart). */
template <typename T> struct PanelWs {
  T *val;  /* [2][G] each block's candidate |a| */
  int *row; /* [2][G] its row (panel-relative) */
  T *rows; /* [2][G][NBMAX] the candidate row */
  T *diag; /* [2][NBMAX] row c, from its owner */
  int *perm; /* the panel's swaps as one permutation, for laswp_perm: [0] = n, rows [1, 1 + n),
                from [1 + 2 NBMAX, ..) */
};

/* Rows [0, mr) x columns [0, nb) at a (A(j0, j0)); block b holds rows [b R, b R + R) column-major in shared memory. */
template <typename T>
__global__ void __launch_bounds__(THREADS) panel_kernel(T *a, int lda, int mr, int nb, int R, int j0, int32_t *ipiv,
                                                       int32_t *info, PanelWs<T> ws) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T *s = reinterpret_cast<T *>(smem_raw);
  __shared__ T prow[NBMAX], sdiag[NBMAX], pivs[NBMAX], wv[WARPS];
  __shared__ int wi[WARPS], s_row, srow[2 * NBMAX], sfrom[2 * NBMAX], ns;
  const int G = gridDim.x, b = blockIdx.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int r0 = b * R, rn = min(R, mr - r0);
  int RT = 32; /* the update's threads a column: the least power of two >= rn (32..THREADS); CG column groups */
  while (RT < rn && RT < THREADS) RT *= 2;
  const int CG = THREADS / RT, tr = tid % RT, tg = tid / RT;
  for (int c = 0; c < nb; ++c)
    for (int r = tid; r < rn; r += THREADS) s[r + c * R] = a[r0 + r + (int64_t)c * lda];
  if (b == 0) { /* block 0 also replays the swaps on row labels: new row srow[i] = old row sfrom[i] */
    for (int i = tid; i < nb; i += THREADS) srow[i] = i, sfrom[i] = i;
    if (tid == 0) ns = nb;
  }
  /* Per column, three block barriers and the grid's: (1) column c updated; (2) the warps' candidates; warp 0
   * publishes the block's, other warps row c (the grid barrier); warp 0 picks the winner and reads its row while
   * warp 1 reads row c (one L2 round trip after the candidates'); (3) both rows here. The swap is folded into the
   * update: row p's threads start from row c's old values. */
  for (int c = 0; c < nb; ++c) {
    const int slot = c & 1;
    const bool has_c = c >= r0 && c < r0 + rn;
    __syncthreads();
    T v = T(-1);
    int i = c;
    for (int r = max(c - r0, 0) + tid; r < rn; r += THREADS) {
      const T x = s[r + c * R], ax = x < T(0) ? -x : x;
      if (ax > v) v = ax, i = r0 + r;
    }
    warp_best(v, i);
    if (lane == 0) wv[warp] = v, wi[warp] = i;
    if (has_c && warp == 1)
      for (int k = lane; k < nb; k += 32) ws.diag[slot * NBMAX + k] = s[c - r0 + k * R];
    __syncthreads();
    if (warp == 0) {
      v = lane < WARPS ? wv[lane] : T(-1), i = lane < WARPS ? wi[lane] : c;
      warp_best(v, i);
      i = __shfl_sync(~0u, i, 0), v = __shfl_sync(~0u, v, 0);
      if (lane == 0) ws.val[slot * G + b] = v, ws.row[slot * G + b] = i;
      if (i != c) /* a row of this block (row c itself travels through diag) */
        for (int k = lane; k < nb; k += 32) ws.rows[((int64_t)slot * G + b) * NBMAX + k] = s[i - r0 + k * R];
    }
    grid.sync();
    if (warp == 0) { /* every block picks the same winner; L2 reads (__ldcg): another SM wrote them */
      v = T(-1), i = c;
      for (int g = lane; g < G; g += 32) better(v, i, __ldcg(ws.val + slot * G + g), __ldcg(ws.row + slot * G + g));
      warp_best(v, i);
      i = __shfl_sync(~0u, i, 0);
      const T *src = i == c ? ws.diag + slot * NBMAX : ws.rows + ((int64_t)slot * G + i / R) * NBMAX;
      for (int k = lane; k < nb; k += 32) prow[k] = __ldcg(src + k);
      if (lane == 0) s_row = i;
    } else if (warp == 1) {
      for (int k = lane; k < nb; k += 32) sdiag[k] = __ldcg(ws.diag + slot * NBMAX + k);
    }
    __syncthreads();
    const int p = s_row;
    const T piv = prow[c];
    if (tid == 0) pivs[c] = piv;
    if (b == 0 && tid == 0) {
      ipiv[j0 + c] = j0 + p + 1;
      if (piv == T(0) && *info == 0) *info = j0 + c + 1;
    }
    if (b == 0 && warp == WARPS - 1 && p != c) { /* the label replay: the slot of row p (rows past the panel's are
                                                   appended when first met), then swap the labels of c and p */
      int sp = p < nb ? p : -1;
      for (int base = nb; sp < 0 && base < ns; base += 32) {
        const unsigned hit = __ballot_sync(~0u, base + lane < ns && srow[base + lane] == p);
        if (hit) sp = base + __ffs(hit) - 1;
      }
      if (sp < 0) {
        sp = ns;
        if (lane == 0) srow[sp] = p, sfrom[sp] = p, ns = sp + 1;
      }
      __syncwarp();
      if (lane == 0) {
        const int t = sfrom[c];
        sfrom[c] = sfrom[sp], sfrom[sp] = t;
      }
      __syncwarp();
    }
    if (has_c && p != c) /* row c takes the pivot row (the update does not touch row c) */
      for (int k = tid; k < nb; k += THREADS) s[c - r0 + k * R] = prow[k];
    for (int r = max(c + 1 - r0, 0) + tr; r < rn; r += RT) {
      const bool rp = r0 + r == p && p != c; /* row p: row c's old values, swapped in here */
      if (rp)
        for (int k = tg; k <= c; k += CG) s[r + k * R] = sdiag[k];
      if (piv != T(0)) {
        const T l = (rp ? sdiag[c] : s[r + c * R]) / piv;
        for (int k = c + 1 + tg; k < nb; k += CG) s[r + k * R] = (rp ? sdiag[k] : s[r + k * R]) - l * prow[k];
      } else if (rp) {
        for (int k = c + 1 + tg; k < nb; k += CG) s[r + k * R] = sdiag[k];
      }
    }
  }
  __syncthreads();
  for (int c = 0; c < nb; ++c) {
    const T piv = pivs[c];
    for (int r = tid; r < rn; r += THREADS) {
      T x = s[r + c * R];
      if (r0 + r > c && piv != T(0)) x /= piv;
      a[r0 + r + (int64_t)c * lda] = x;
    }
  }
  if (b == 0) {
    const int n = ns;
    if (tid == 0) ws.perm[0] = n;
    for (int i = tid; i < n; i += THREADS) ws.perm[1 + i] = j0 + srow[i], ws.perm[1 + 2 * NBMAX + i] = j0 + sfrom[i];
  }
}

/* The panel's row swaps on columns [0, j) and [j + jb, n), as the one permutation the panel kernel worked out:
 * a warp a column loads every moved row's value, then stores them all (the rows j..j + jb of a column are
 * contiguous: coalesced). Step 2's laswp_kernel replays the swaps one after another, each a dependent load and
 * store per column: ~60 us a 64-column panel at n = 8192 on an H100, against a few here. */
template <typename T>
__global__ void __launch_bounds__(256) laswp_perm_kernel(T *a, int lda, const int *perm, int j, int jb, int n) {
  __shared__ int rows[2 * NBMAX], from[2 * NBMAX];
  __shared__ int cnt;
  if (threadIdx.x == 0) cnt = 0;
  __syncthreads();
  const int np = perm[0];
  for (int i = threadIdx.x; i < np; i += 256) { /* only the rows that move */
    const int r = perm[1 + i], f = perm[1 + 2 * NBMAX + i];
    if (r != f) {
      const int k = atomicAdd(&cnt, 1);
      rows[k] = r, from[k] = f;
    }
  }
  __syncthreads();
  const int nm = cnt, lane = threadIdx.x & 31;
  for (int q = (blockIdx.x * 256 + threadIdx.x) >> 5; q < n - jb; q += gridDim.x * 8) {
    T *x = a + (int64_t)(q < j ? q : q + jb) * lda;
    T v[2 * NBMAX / 32];
#pragma unroll
    for (int t = 0; t < 2 * NBMAX / 32; ++t)
      if (lane + 32 * t < nm) v[t] = x[from[lane + 32 * t]];
    __syncwarp();
#pragma unroll
    for (int t = 0; t < 2 * NBMAX / 32; ++t)
      if (lane + 32 * t < nm) x[rows[lane + 32 * t]] = v[t];
  }
}

/* the probes' knobs (lab/lu_probe.lua), read once */
int rows_wanted() { static const int w = ck_knob("CUKERN_LU_PANEL_ROWS", 8, 4096, 64); return w; }
int cols_wanted() { static const int w = ck_knob("CUKERN_LU_PANEL_COLS", 8, NBMAX, 128); return w; }

/* The grid for a panel of mr rows and w columns: blocks of rows_wanted() rows, more rows a block where that many
 * blocks would not all be resident; false where the rows do not fit the resident blocks' shared memory. */
template <typename T>
bool plan(const ck_env *env, int mr, int w, size_t dyn_max, int gmax, int *G, int *R, size_t *smem) {
  *R = rows_wanted();
  if ((mr + *R - 1) / *R > gmax) *R = (mr + gmax - 1) / gmax;
  for (int tries = 0; tries < 4; ++tries) {
    *G = (mr + *R - 1) / *R, *smem = (size_t)*R * w * sizeof(T);
    int occ = 0;
    if (*smem > dyn_max || cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, panel_kernel<T>, THREADS, *smem) ||
        occ < 1)
      break;
    if ((int64_t)occ * env->sm_count >= *G && *G <= gmax) return true; /* (gmax: the workspace's blocks) */
    *R = (mr + occ * env->sm_count - 1) / (occ * env->sm_count);
  }
  (void)cudaGetLastError();
  return false;
}

template <typename T> int factor(const ck_env *env, T *a, int lda, int m, int n, int32_t *ipiv, int32_t *info) {
  const int k = m < n ? m : n;
  if (k == 0) return 0;
  int coop = 0;
  cudaFuncAttributes fa;
  if (cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, env->device) ||
      cudaFuncGetAttributes(&fa, panel_kernel<T>) || env->smem_optin <= fa.sharedSizeBytes)
    coop = 0;
  /* any panel may take the most dynamic shared memory a block can have beside the kernel's static arrays */
  const size_t dyn_max = coop ? env->smem_optin - fa.sharedSizeBytes : 0;
  if (coop && cudaFuncSetAttribute(panel_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn_max))
    coop = 0;
  (void)cudaGetLastError();
  const int gmax = env->sm_count * (2048 / THREADS); /* resident blocks, at most, by threads */
  const size_t bytes = 2 * (size_t)gmax * (sizeof(T) + sizeof(int) + NBMAX * sizeof(T)) + 2 * NBMAX * sizeof(T) +
                       (1 + 4 * NBMAX) * sizeof(int);
  char *w = coop ? (char *)env->ws_alloc(env->owner, bytes) : NULL;
  if (coop && !w) return (int)cudaErrorMemoryAllocation;
  PanelWs<T> ws = {};
  if (w) {
    ws.rows = (T *)w, ws.diag = ws.rows + 2 * (size_t)gmax * NBMAX, ws.val = ws.diag + 2 * NBMAX;
    ws.row = (int *)(ws.val + 2 * gmax), ws.perm = ws.row + 2 * gmax;
  }
  int rc = 0;
  for (int j = 0, jb; j < k && !rc; j += jb) {
    /* the panel: cols_wanted() columns, fewer where its rows would not fit (halved down to 8); else, or where the
     * cooperative launch is refused (another process holding SMs under MPS), step 2's panel of as many columns */
    const int want = k - j < cols_wanted() ? k - j : cols_wanted();
    const int mr = m - j;
    int G = 0, R = 0;
    size_t smem = 0;
    jb = want;
    bool fits = coop && plan<T>(env, mr, jb, dyn_max, gmax, &G, &R, &smem);
    while (coop && !fits && jb > 8) jb /= 2, fits = plan<T>(env, mr, jb, dyn_max, gmax, &G, &R, &smem);
    if (fits) {
      T *pa = a + j + (int64_t)j * lda;
      int mrv = mr, jv = j, jbv = jb;
      void *args[] = {&pa, &lda, &mrv, &jbv, &R, &jv, &ipiv, &info, &ws};
      ck_note(env, panel_kernel<T>, THREADS, smem);
      rc = (int)cudaLaunchCooperativeKernel((const void *)panel_kernel<T>, dim3((unsigned)G), dim3(THREADS), args, smem,
                                            (cudaStream_t)env->stream);
      if (rc == (int)cudaErrorCooperativeLaunchTooLarge) {
        (void)cudaGetLastError();
        fits = false, rc = 0, jb = want;
      }
    } else {
      jb = want;
    }
    if (fits && !rc && n > jb) {
      const int cols = n - jb, blocks = (cols + 7) / 8 < 4096 ? (cols + 7) / 8 : 4096;
      ck_note(env, laswp_perm_kernel<T>, 256, 0);
      laswp_perm_kernel<T><<<blocks, 256, 0, (cudaStream_t)env->stream>>>(a, lda, ws.perm, j, jb, n);
      rc = (int)cudaGetLastError();
    }
    if (!fits && !rc) rc = lu::panel_by_columns<T>(env, a, lda, m, n, j, jb, ipiv, info);
    if (!rc) rc = lu::trailing_update<T>(env, a, lda, m, n, j, jb);
  }
  if (w) env->ws_free(env->owner, w);
  return rc;
}
} // namespace

CK_LU_LAUNCHER(fused_panel, factor)
