/*
 * hip-remote: the double-precision algorithms behind device_math.h when there is no libdevice.
 * Plain C++ on compiler builtins that NVPTX lowers to single instructions (fma.rn, cvt.rni,
 * abs), so the same code is checked against the host's libm by tests/hip/device_math_check.cpp.
 */
#ifndef HIP_REMOTE_DEVICE_MATH_IMPL_H
#define HIP_REMOTE_DEVICE_MATH_IMPL_H

#ifndef __HIP_REMOTE_MATH_IMPL
#define __HIP_REMOTE_MATH_IMPL static __device__ inline
#endif

__HIP_REMOTE_MATH_IMPL double __hip_remote_pow2i(int k) { /* 2^k for -1022 <= k <= 1023 */
  return __builtin_bit_cast(double, (unsigned long long)(k + 1023) << 52);
}

__HIP_REMOTE_MATH_IMPL double __hip_remote_round(double x) { /* half away from zero */
  double t = __builtin_trunc(x);
  if (__builtin_fabs(x - t) >= 0.5) t += __builtin_copysign(1.0, x);
  return t;
}

/* e^r for |r| <= ln2/2: Taylor polynomial to r^13 (remainder < 1e-17 relative). */
__HIP_REMOTE_MATH_IMPL double __hip_remote_exp_poly(double r) {
  double p = 1.0 / 6227020800.0;
  p = __builtin_fma(p, r, 1.0 / 479001600.0);
  p = __builtin_fma(p, r, 1.0 / 39916800.0);
  p = __builtin_fma(p, r, 1.0 / 3628800.0);
  p = __builtin_fma(p, r, 1.0 / 362880.0);
  p = __builtin_fma(p, r, 1.0 / 40320.0);
  p = __builtin_fma(p, r, 1.0 / 5040.0);
  p = __builtin_fma(p, r, 1.0 / 720.0);
  p = __builtin_fma(p, r, 1.0 / 120.0);
  p = __builtin_fma(p, r, 1.0 / 24.0);
  p = __builtin_fma(p, r, 1.0 / 6.0);
  p = __builtin_fma(p, r, 0.5);
  p = __builtin_fma(p, r, 1.0);
  return __builtin_fma(p, r, 1.0);
}

/* p * 2^n for -1075 <= n <= 1024, in two steps so that neither factor leaves the normal range. */
__HIP_REMOTE_MATH_IMPL double __hip_remote_scale(double p, int n) {
  int half = n / 2;
  return p * __hip_remote_pow2i(half) * __hip_remote_pow2i(n - half);
}

/* e^(x + tail), |tail| tiny against x: the tail joins the reduced argument (pow needs it). */
__HIP_REMOTE_MATH_IMPL double __hip_remote_exp_with_tail(double x, double tail) {
  if (x != x) return x + x;
  if (x > 709.782712893384) return __builtin_inf();
  if (x < -745.1332191019412) return 0.0;
  const double ln2_hi = 6.93147180369123816490e-01; /* ln 2, high 32 bits: n*ln2_hi is exact */
  const double ln2_lo = 1.90821492927058770002e-10;
  double n = __builtin_rint(x * 1.4426950408889634);
  double r = (x - n * ln2_hi) - n * ln2_lo + tail;
  return __hip_remote_scale(__hip_remote_exp_poly(r), (int)n);
}

__HIP_REMOTE_MATH_IMPL double __hip_remote_exp(double x) { return __hip_remote_exp_with_tail(x, 0.0); }

__HIP_REMOTE_MATH_IMPL double __hip_remote_exp2(double x) {
  if (x != x) return x + x;
  if (x >= 1024.0) return __builtin_inf();
  if (x < -1075.0) return 0.0;
  double n = __builtin_rint(x);
  double r = (x - n) * 6.93147180559945309417e-01; /* x - n is exact */
  return __hip_remote_scale(__hip_remote_exp_poly(r), (int)n);
}

__HIP_REMOTE_MATH_IMPL double __hip_remote_log(double x) {
  if (x != x) return x + x;
  if (x < 0.0) return __builtin_nan("");
  if (x == 0.0) return -__builtin_inf();
  if (x == __builtin_inf()) return x;
  int e = 0;
  if (x < 2.2250738585072014e-308) { /* subnormal: make it normal */
    x *= 18014398509481984.0;         /* 2^54 */
    e = -54;
  }
  unsigned long long bits = __builtin_bit_cast(unsigned long long, x);
  e += (int)((bits >> 52) & 0x7ff) - 1023;
  double m = __builtin_bit_cast(double, (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    e += 1;
  }
  /* log(m) = 2 atanh(f), f = (m-1)/(m+1), |f| <= 0.1716: odd series to f^23. */
  double f = (m - 1.0) / (m + 1.0);
  double s = f * f;
  double p = 1.0 / 23.0;
  p = __builtin_fma(p, s, 1.0 / 21.0);
  p = __builtin_fma(p, s, 1.0 / 19.0);
  p = __builtin_fma(p, s, 1.0 / 17.0);
  p = __builtin_fma(p, s, 1.0 / 15.0);
  p = __builtin_fma(p, s, 1.0 / 13.0);
  p = __builtin_fma(p, s, 1.0 / 11.0);
  p = __builtin_fma(p, s, 1.0 / 9.0);
  p = __builtin_fma(p, s, 1.0 / 7.0);
  p = __builtin_fma(p, s, 1.0 / 5.0);
  p = __builtin_fma(p, s, 1.0 / 3.0);
  double log_m = 2.0 * f + 2.0 * f * s * p;
  const double ln2_hi = 6.93147180369123816490e-01;
  const double ln2_lo = 1.90821492927058770002e-10;
  return e * ln2_hi + (e * ln2_lo + log_m);
}

/* log(x) for finite x > 0 as hi + lo, ~2^-66 relative: what pow needs so that y*log(x) keeps
 * its accuracy for large |y*log(x)|. Same reduction as __hip_remote_log, with f = (m-1)/(m+1)
 * and the multiples of ln 2 carried in two parts. */
__HIP_REMOTE_MATH_IMPL void __hip_remote_log_dd(double x, double* hi, double* lo) {
  int e = 0;
  if (x < 2.2250738585072014e-308) {
    x *= 18014398509481984.0;
    e = -54;
  }
  unsigned long long bits = __builtin_bit_cast(unsigned long long, x);
  e += (int)((bits >> 52) & 0x7ff) - 1023;
  double m = __builtin_bit_cast(double, (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    e += 1;
  }
  double u = m - 1.0;                       /* exact */
  double v_hi = m + 1.0;                    /* may round: keep what it lost */
  double v_lo = (m - (v_hi - 1.0));
  double f_hi = u / v_hi;
  double f_lo = (__builtin_fma(-f_hi, v_hi, u) - f_hi * v_lo) / v_hi;
  double s = f_hi * f_hi;
  double p = 1.0 / 23.0;
  p = __builtin_fma(p, s, 1.0 / 21.0);
  p = __builtin_fma(p, s, 1.0 / 19.0);
  p = __builtin_fma(p, s, 1.0 / 17.0);
  p = __builtin_fma(p, s, 1.0 / 15.0);
  p = __builtin_fma(p, s, 1.0 / 13.0);
  p = __builtin_fma(p, s, 1.0 / 11.0);
  p = __builtin_fma(p, s, 1.0 / 9.0);
  p = __builtin_fma(p, s, 1.0 / 7.0);
  p = __builtin_fma(p, s, 1.0 / 5.0);
  p = __builtin_fma(p, s, 1.0 / 3.0);
  double log_m_hi = 2.0 * f_hi;
  double log_m_lo = 2.0 * f_lo + 2.0 * f_hi * s * p;
  const double ln2_hi = 6.93147180559945286227e-01; /* ln 2 = ln2_hi + ln2_lo */
  const double ln2_lo = 2.31904681384629955842e-17;
  double k_hi = e * ln2_hi;
  double k_lo = __builtin_fma((double)e, ln2_hi, -k_hi) + e * ln2_lo;
  double sum = k_hi + log_m_hi; /* two-sum */
  double b = sum - k_hi;
  double err = (k_hi - (sum - b)) + (log_m_hi - b);
  double tail = err + k_lo + log_m_lo;
  *hi = sum + tail;
  *lo = tail - (*hi - sum);
}

__HIP_REMOTE_MATH_IMPL double __hip_remote_log2(double x) { return __hip_remote_log(x) * 1.4426950408889634; }
__HIP_REMOTE_MATH_IMPL double __hip_remote_log10(double x) { return __hip_remote_log(x) * 0.4342944819032518; }

/* sin and cos on |r| <= pi/4 (fdlibm's __kernel_sin/__kernel_cos coefficients). */
__HIP_REMOTE_MATH_IMPL double __hip_remote_kernel_sin(double r) {
  double z = r * r;
  double p = __builtin_fma(z, 1.58969099521155010221e-10, -2.50507602534068634195e-08);
  p = __builtin_fma(z, p, 2.75573137070700676789e-06);
  p = __builtin_fma(z, p, -1.98412698298579493134e-04);
  p = __builtin_fma(z, p, 8.33333333332248946124e-03);
  p = __builtin_fma(z, p, -1.66666666666666324348e-01);
  return __builtin_fma(r * z, p, r);
}
__HIP_REMOTE_MATH_IMPL double __hip_remote_kernel_cos(double r) {
  double z = r * r;
  double p = __builtin_fma(z, -1.13596475577881948265e-11, 2.08757232129817482790e-09);
  p = __builtin_fma(z, p, -2.75573143513906633035e-07);
  p = __builtin_fma(z, p, 2.48015872894767294178e-05);
  p = __builtin_fma(z, p, -1.38888888888741095749e-03);
  p = __builtin_fma(z, p, 4.16666666666666019037e-02);
  double hz = 0.5 * z;
  double w = 1.0 - hz;
  return w + (((1.0 - w) - hz) + z * z * p);
}

/* x = q*pi/2 + r, |r| <= pi/4 (Cody-Waite with a three-part pi/2; fine for |x| < ~1e9). */
__HIP_REMOTE_MATH_IMPL double __hip_remote_reduce(double x, int* quadrant) {
  double q = __builtin_rint(x * 6.36619772367581382433e-01);
  double r = __builtin_fma(-q, 1.5707963267948966, x);
  r = __builtin_fma(-q, 6.123233995736766e-17, r);
  r = __builtin_fma(-q, -1.4973849048591698e-33, r);
  *quadrant = (int)(long long)q & 3;
  return r;
}
__HIP_REMOTE_MATH_IMPL double __hip_remote_sin(double x) {
  if (x != x || __builtin_fabs(x) == __builtin_inf()) return __builtin_nan("");
  if (__builtin_fabs(x) < 7.4505805969238281e-09) return x; /* 2^-27: sin x == x */
  int q;
  double r = __hip_remote_reduce(x, &q);
  switch (q) {
    case 0: return __hip_remote_kernel_sin(r);
    case 1: return __hip_remote_kernel_cos(r);
    case 2: return -__hip_remote_kernel_sin(r);
    default: return -__hip_remote_kernel_cos(r);
  }
}
__HIP_REMOTE_MATH_IMPL double __hip_remote_cos(double x) {
  if (x != x || __builtin_fabs(x) == __builtin_inf()) return __builtin_nan("");
  int q;
  double r = __hip_remote_reduce(x, &q);
  switch (q) {
    case 0: return __hip_remote_kernel_cos(r);
    case 1: return -__hip_remote_kernel_sin(r);
    case 2: return -__hip_remote_kernel_cos(r);
    default: return __hip_remote_kernel_sin(r);
  }
}
__HIP_REMOTE_MATH_IMPL double __hip_remote_tan(double x) {
  if (x != x || __builtin_fabs(x) == __builtin_inf()) return __builtin_nan("");
  if (__builtin_fabs(x) < 7.4505805969238281e-09) return x;
  int q;
  double r = __hip_remote_reduce(x, &q);
  double s = __hip_remote_kernel_sin(r), c = __hip_remote_kernel_cos(r);
  return (q & 1) ? -c / s : s / c;
}

/* pow: C99's special cases, then exp(y log|x|) with log and the product in two parts. */
__HIP_REMOTE_MATH_IMPL double __hip_remote_pow(double x, double y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (x != x || y != y) return x + y;
  double ax = __builtin_fabs(x);
  bool y_integer = __builtin_rint(y) == y;
  bool y_odd = y_integer && __builtin_fabs(y) < 9007199254740992.0 && (((long long)y) & 1) != 0;
  if (__builtin_fabs(y) == __builtin_inf()) {
    if (ax == 1.0) return 1.0;
    return ((ax > 1.0) == (y > 0.0)) ? __builtin_inf() : 0.0;
  }
  if (x < 0.0 && !y_integer) return __builtin_nan("");
  double r;
  if (ax == 0.0) {
    r = y < 0.0 ? __builtin_inf() : 0.0;
  } else if (ax == __builtin_inf()) {
    r = y < 0.0 ? 0.0 : __builtin_inf();
  } else {
    double log_hi, log_lo;
    __hip_remote_log_dd(ax, &log_hi, &log_lo);
    double t_hi = y * log_hi;
    double t_lo = __builtin_fma(y, log_hi, -t_hi) + y * log_lo;
    r = __hip_remote_exp_with_tail(t_hi, t_lo);
  }
  return (__builtin_signbit(x) && y_odd) ? -r : r;
}

/* Float functions computed in double and rounded once by the caller
 * (tests/hip/device_math_check.cpp holds them to 1 ulp of the host's libm). */
/* tanh: (e^2|x| - 1) / (e^2|x| + 1) loses at most 2^-41 relative for |x| >= 2^-12, below
 * which x - x^3/3 is exact to far under a float ulp. */
__HIP_REMOTE_MATH_IMPL double __hip_remote_tanhf(float x) {
  double a = __builtin_fabs((double)x), r;
  if (a != a) return x;
  if (a > 10.0) r = 1.0;
  else if (a < 0x1p-12) r = a - a * a * a / 3.0;
  else {
    double t = __hip_remote_exp(2.0 * a);
    r = (t - 1.0) / (t + 1.0);
  }
  return __builtin_copysign(r, (double)x);
}
/* log1p: log(u) * x / (u - 1) with u = 1 + x keeps the small-x accuracy (Goldberg). */
__HIP_REMOTE_MATH_IMPL double __hip_remote_log1pf(float x) {
  double u = 1.0 + (double)x;
  if (u == 1.0) return x;
  return __hip_remote_log(u) * (double)x / (u - 1.0);
}
/* expm1: (u - 1) * x / log(u) with u = e^x (Kahan). */
__HIP_REMOTE_MATH_IMPL double __hip_remote_expm1f(float x) {
  if (x != x) return x;
  if (x > 89.0f) return __builtin_inf();
  if (x < -30.0f) return -1.0;
  double u = __hip_remote_exp((double)x);
  if (u == 1.0) return x;
  return (u - 1.0) * (double)x / __hip_remote_log(u);
}
/* erf: its Taylor series (|x| < 4: at most 100 terms, the largest about e^16, so over 8 of
 * double's 16 digits survive), +-1 beyond. */
__HIP_REMOTE_MATH_IMPL double __hip_remote_erff(float x) {
  if (x != x) return x;
  double a = __builtin_fabs((double)x);
  if (a >= 4.0) return x > 0 ? 1.0 : -1.0;
  double x2 = a * a, term = a, sum = a;
  for (int n = 1; n < 100; ++n) {
    term *= -x2 / n;
    double next = term / (2 * n + 1);
    sum += next;
    if (__builtin_fabs(next) < 1e-17 * __builtin_fabs(sum)) break;
  }
  double r = sum * 1.1283791670955126; /* 2 / sqrt(pi) */
  return x < 0 ? -r : r;
}

#endif /* HIP_REMOTE_DEVICE_MATH_IMPL_H */
