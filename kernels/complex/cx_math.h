/*
 * cx_math.h — the complex ladder's arithmetic (issue 35), one text for gcc (the host oracle, src/host/
 * host_complex.c, compiles it as C11) and nvcc (the rungs, as __host__ __device__ functions), so that host and
 * device compute the same formulas by construction, as the elementwise table does for real dtypes. Not to the
 * bit: nvcc contracts a*b + c into an fma (the imaginary part of a product, Smith's division) where gcc's C11 does
 * not, so results may differ by a rounding (z * conj(z) has im exactly 0 on the host, a few ulps on a GPU); the
 * specs compare with tolerances derived for that.
 *
 * CK_CX_MATH(C, T, P, M) defines P<op> on the complex type C (ck_c64_t or ck_c128_t: {re, im}) with real type
 * T; M is the suffix of T's libm names ("f" for float, empty for double). The includer provides <math.h>.
 *   div: Smith's algorithm (1962): scale by the larger part of the divisor, so |b|^2 is never formed and
 *        b = 1e30 + 1e30i divides in c64 without overflow (the textbook (a conj b) / |b|^2 overflows for
 *        |b| > 1.8e19 in c64 and 1.3e154 in c128). A real divisor (im == 0) divides both parts, so z / 0 is
 *        +-inf or NaN per part as for real arrays. Its two cases (|re| or |im| of b the larger) are one path of
 *        selects giving the two branches' values bit for bit (the second case is the first with a's and b's parts
 *        swapped and the imaginary numerator's operands negated, not its result: -(a - b) would turn an exact +0
 *        into -0): on random divisors half a warp took each branch, so every warp paid for both. Not NumPy's
 *        form (one reciprocal 1 / d that both parts multiply by): on an H200 it ran c64 division at 94.2% of memcpy
 *        against 93.4% (round 3 session 15, lab/cx_div_ab.sh), but 1 / d overflows for a subnormal d (0 / (1e-39 +
 *        1e-39i) gave NaN), loses bits for |d| > 8.5e37 in c64, and z / z came out 0.99999994 for 70 of the 400 z
 *        with integer parts 1 to 20 (here: 1 for all of them).
 *   exp: e^re (cos im, sin im); im == 0 gives (e^re, im) exactly (no inf * 0 = NaN for large re).
 *   log: (log |z|, atan2(im, re)), |z| by hypot (no overflow of re^2 + im^2).
 *   sqrt: the principal root (re >= 0, im with the sign of z's im, -0 included: NumPy, MATLAB, C99 csqrt) in
 *        Kahan's form: t = sqrt((|z| + |re|) / 2) has no cancellation, the other part is im / 2t; the textbook
 *        sqrt((|z| - re) / 2) loses every digit near the positive real axis.
 *   abs: hypot(re, im); angle: atan2(im, re).
 */
#ifndef CK_CX_MATH_H
#define CK_CX_MATH_H

#ifdef __CUDACC__
#define CK_CX_FN static __host__ __device__ __forceinline__
#else
#define CK_CX_FN static inline
#endif

#define CK_CX_MATH(C, T, P, M)                                                                                      \
  CK_CX_FN C P##mk(T re, T im) { C r; r.re = re; r.im = im; return r; }                                             \
  CK_CX_FN C P##add(C a, C b) { return P##mk(a.re + b.re, a.im + b.im); }                                           \
  CK_CX_FN C P##sub(C a, C b) { return P##mk(a.re - b.re, a.im - b.im); }                                           \
  CK_CX_FN C P##mul(C a, C b) { return P##mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }              \
  CK_CX_FN C P##div(C a, C b) {                                                                                     \
    if (b.im == 0) return P##mk(a.re / b.re, a.im / b.re);                                                         \
    const int big_re = fabs##M(b.re) >= fabs##M(b.im);                                                            \
    const T p = big_re ? b.re : b.im, q = big_re ? b.im : b.re; /* |p| >= |q| */                                   \
    const T x = big_re ? a.re : a.im, y = big_re ? a.im : a.re, r = q / p, d = p + q * r;                         \
    const T u = big_re ? y : -y, v = big_re ? x : -x; /* the imaginary numerator u - v r, as each case writes it */ \
    return P##mk((x + y * r) / d, (u - v * r) / d);                                                                 \
  }                                                                                                                 \
  CK_CX_FN C P##neg(C a) { return P##mk(-a.re, -a.im); }                                                            \
  CK_CX_FN C P##conj(C a) { return P##mk(a.re, -a.im); }                                                            \
  CK_CX_FN C P##exp(C a) {                                                                                          \
    const T e = exp##M(a.re);                                                                                       \
    if (a.im == 0) return P##mk(e, a.im);                                                                           \
    return P##mk(e * cos##M(a.im), e * sin##M(a.im));                                                               \
  }                                                                                                                 \
  CK_CX_FN T P##abs(C a) { return hypot##M(a.re, a.im); }                                                           \
  CK_CX_FN T P##angle(C a) { return atan2##M(a.im, a.re); }                                                         \
  CK_CX_FN C P##log(C a) { return P##mk(log##M(hypot##M(a.re, a.im)), atan2##M(a.im, a.re)); }                    \
  CK_CX_FN C P##sqrt(C a) {                                                                                         \
    const T t = sqrt##M((hypot##M(a.re, a.im) + fabs##M(a.re)) * (T)0.5);                                           \
    if (t == 0) return P##mk((T)0, a.im);                                                                           \
    if (a.re >= 0) return P##mk(t, a.im / (2 * t));                                                                 \
    return P##mk(fabs##M(a.im) / (2 * t), copysign##M(t, a.im));                                                    \
  }                                                                                                                 \
  CK_CX_FN int P##eq(C a, C b) { return a.re == b.re && a.im == b.im; }

CK_CX_MATH(ck_c64_t, float, ckcf_, f)
CK_CX_MATH(ck_c128_t, double, ckcd_, )

#endif
