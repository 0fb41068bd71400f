/*
 * ew_helpers.h — the helpers the op table's expressions call (kernels/elementwise/ew_ops.def), written once as
 * C text for two compilers: the host backend (host_elementwise.c) compiles them as static inline functions, and
 * ck.map's generator (src/fused/expr_ops.c) pastes the same text, stringified, into every NVRTC program with
 * __device__ in front, so a fused kernel and the host compute a table op with the same code.
 * (kernels/elementwise/ew_math.cuh spells them again for nvcc; folding it onto this list would recompile every
 * elementwise kernel, so it waits for the next change there.)
 *
 * X(return type, name, (params), body...). Plain C that gcc and NVRTC both accept: no headers, int for i32,
 * unsigned for u32, long long for i64 (the same types on every platform cukern builds for); ew_f2i (float ->
 * i32, NaN and out of range give INT32_MIN) and floor/fabs/pow come from the includer.
 */
#ifndef CK_EW_HELPERS_H
#define CK_EW_HELPERS_H

#define CK_EW_HELPERS(X)                                                                                        \
  /* i32: unsigned arithmetic, so that overflow wraps instead of being undefined; INT32_MIN / -1 would trap */ \
  X(int, iw_add, (int x, int y), return (int)((unsigned)x + (unsigned)y);)                                     \
  X(int, iw_sub, (int x, int y), return (int)((unsigned)x - (unsigned)y);)                                     \
  X(int, iw_mul, (int x, int y), return (int)((unsigned)x * (unsigned)y);)                                     \
  X(int, iw_neg, (int x), return (int)(0u - (unsigned)x);)                                                     \
  X(int, iw_abs, (int x), return x < 0 ? iw_neg(x) : x;)                                                       \
  X(int, iw_div, (int x, int y), if (y == 0) return 0; if (y == -1) return iw_neg(x); return x / y;)           \
  /* Lua's // and % on integers (floor division; the remainder takes the divisor's sign); y == 0 gives 0 */   \
  X(int, iw_idiv, (int x, int y), if (y == 0) return 0; if (y == -1) return iw_neg(x); const int q = x / y;    \
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;)                                                  \
  X(int, iw_mod, (int x, int y), if (y == 0 || y == -1) return 0; const int m = x % y;                         \
    return (m != 0 && ((m ^ y) < 0)) ? m + y : m;)                                                             \
  /* i32 POW/POWS: through double, an integral exponent by repeated squaring so that the result is exact     \
   * (pow is only faithfully rounded on some platforms, CUDA's among them: 19^3 must not truncate to 6858) */ \
  X(int, ew_ipow, (double x, double y), if (y == floor(y) && fabs(y) <= 1024.0) {                              \
    long long n = (long long)fabs(y);                                                                          \
    double r = 1.0, b = x;                                                                                     \
    while (n) {                                                                                                \
      if (n & 1) r *= b;                                                                                       \
      b *= b;                                                                                                  \
      n >>= 1;                                                                                                 \
    }                                                                                                          \
    return ew_f2i(y < 0 ? 1.0 / r : r);                                                                        \
  } return ew_f2i(pow(x, y));)                                                                                 \
  X(double, ew_clamp, (double x, double lo, double hi), double t = x < lo ? lo : x; return t > hi ? hi : t;)

/* The libm functions the table's expressions call as m_<name> (float and double: tgmath on the host, two
 * overloads on the device), with their arity. */
#define CK_EW_LIBM(X)                                                                                           \
  X(exp, 1) X(log, 1) X(sqrt, 1) X(sin, 1) X(cos, 1) X(tanh, 1) X(fabs, 1) X(floor, 1) X(ceil, 1) X(pow, 2)    \
  X(atan2, 2) X(hypot, 2) X(fmod, 2)

#endif
