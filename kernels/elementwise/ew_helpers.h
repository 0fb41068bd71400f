/*
 * ew_helpers.h — the helpers the op table's integer expressions call (kernels/elementwise/ew_ops.def), written
 * once as C text for three compilers: the host backend (src/host/host_elementwise.c) compiles them as static
 * inline functions, nvcc compiles them as __device__ functions for the elementwise rungs (ew_math.cuh), and
 * ck.map's generator (src/fused/expr_ops.c) pastes the same text, stringified, into every NVRTC program. So a
 * rung, a fused kernel and the host compute a table op with the same code.
 *
 * Integers compute in 64 bits (issue 32): every integer dtype (bool u8 i8 i16 i32 u32 i64) is loaded as a
 * long long, the row's integer expression runs on long longs with these wrapping helpers, and the result is
 * stored modulo 2^bits of the result dtype. That is the same as computing in the dtype itself with wrapping
 * (NumPy's integer arithmetic) for add, sub, mul, neg, shifts and bit operations, and exact for the others
 * (a quotient or remainder of two values of a dtype fits in 64 bits), with one text for every width.
 *
 * X(return type, name, (params), body...). Plain C that gcc, nvcc and NVRTC all accept: no headers; floor,
 * fabs and fmod come from the includer.
 */
#ifndef CK_EW_HELPERS_H
#define CK_EW_HELPERS_H

#define CK_EW_HELPERS(X)                                                                                        \
  /* unsigned arithmetic, so that overflow wraps instead of being undefined; LLONG_MIN / -1 would trap */      \
  X(long long, iw_add, (long long x, long long y), return (long long)((unsigned long long)x + (unsigned long long)y);) \
  X(long long, iw_sub, (long long x, long long y), return (long long)((unsigned long long)x - (unsigned long long)y);) \
  X(long long, iw_mul, (long long x, long long y), return (long long)((unsigned long long)x * (unsigned long long)y);) \
  X(long long, iw_neg, (long long x), return (long long)(0ull - (unsigned long long)x);)                       \
  X(long long, iw_abs, (long long x), return x < 0 ? iw_neg(x) : x;)                                            \
  /* truncating division; x / 0 = 0 (an array op cannot raise; MATLAB saturates, NumPy warns and gives 0) */   \
  X(long long, iw_div, (long long x, long long y), if (y == 0) return 0; if (y == -1) return iw_neg(x);         \
    return x / y;)                                                                                             \
  /* Lua's // and % on integers (floor division; the remainder takes the divisor's sign); y == 0 gives 0 */   \
  X(long long, iw_idiv, (long long x, long long y), if (y == 0) return 0; if (y == -1) return iw_neg(x);        \
    const long long q = x / y; return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;)                      \
  X(long long, iw_mod, (long long x, long long y), if (y == 0 || y == -1) return 0; const long long m = x % y;  \
    return (m != 0 && ((m ^ y) < 0)) ? m + y : m;)                                                             \
  /* x^n exactly, modulo 2^64 like repeated multiplication (NumPy's integer power wraps the same way). n < 0:  \
   * 1 // x^-n with // 0 = 0, so 1, +-1 for x = -1, and 0 otherwise (NumPy raises there; an array op cannot) */ \
  X(long long, iw_pow, (long long x, long long n), if (n < 0) return x == 1 ? 1 : x == -1 ? ((n & 1) ? -1 : 1) : 0; \
    unsigned long long r = 1, b = (unsigned long long)x;                                                       \
    while (n) {                                                                                                \
      if (n & 1) r *= b;                                                                                       \
      b *= b;                                                                                                  \
      n >>= 1;                                                                                                 \
    }                                                                                                          \
    return (long long)r;)                                                                                      \
  /* an integral exponent given as a double, for iw_pow: beyond 2^62 it keeps what decides the result modulo  \
   * 2^64 (an odd x has x^(2^62) = 1 there; an even x gives 0 from n = 64 on) */                               \
  X(long long, ew_iexp, (double s), const double a = s < 0 ? -s : s;                                           \
    const long long n = a < 4611686018427387904.0 ? (long long)a                                               \
                                                  : 4611686018427387904ll + (long long)fmod(a, 4611686018427387904.0); \
    return s < 0 ? -n : n;)                                                                                    \
  X(int, ew_isint, (double s), return s == floor(s) && s - s == 0;)                                            \
  /* shifts: a negative count shifts the other way (MATLAB's bitshift); counts past the width give 0 (and -1   \
   * for >> of a negative signed value: arithmetic for signed dtypes, logical for unsigned, as NumPy and C) */  \
  X(long long, iw_shl, (long long x, long long n), if (n < 0) return n <= -64 ? (x < 0 ? -1 : 0) : x >> -n;     \
    return n >= 64 ? 0 : (long long)((unsigned long long)x << n);)                                             \
  X(long long, iw_shr, (long long x, long long n), if (n < 0) return n <= -64 ? 0 : (long long)((unsigned long long)x << -n); \
    return n >= 64 ? (x < 0 ? -1 : 0) : x >> n;)                                                               \
  X(double, ew_clamp, (double x, double lo, double hi), double t = x < lo ? lo : x; return t > hi ? hi : t;)

/* The libm functions the table's expressions call as m_<name> (float and double: tgmath on the host, two
 * overloads on the device), with their arity. */
#define CK_EW_LIBM(X)                                                                                           \
  X(exp, 1) X(log, 1) X(sqrt, 1) X(sin, 1) X(cos, 1) X(tanh, 1) X(fabs, 1) X(floor, 1) X(ceil, 1) X(pow, 2)    \
  X(atan2, 2) X(hypot, 2) X(fmod, 2)

#endif
