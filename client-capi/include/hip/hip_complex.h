/*
 * hip-remote: hip/hip_complex.h: single and double complex numbers as ROCm has them
 * (`hipFloatComplex`, `hipDoubleComplex`, `hipComplex`: float2 and double2) and their
 * functions, for C and C++, host and device alike.
 *
 * Written for hip-remote (not AMD's header); the formulas are the textbook ones ROCm uses:
 * the quotient divides by |q|^2 and the modulus is sqrt(|z|^2), so both overflow where
 * ROCm's do.
 */
#ifndef HIP_REMOTE_HIP_COMPLEX_H
#define HIP_REMOTE_HIP_COMPLEX_H

#include <hip/hip_vector_types.h>
#if !defined(__HIP_REMOTE_HOST__)
#include <math.h>
#endif

#if defined(__cplusplus) && defined(__clang__) && defined(__HIP__)
#define HIP_REMOTE_COMPLEX_FN static inline __attribute__((host, device))
#else
#define HIP_REMOTE_COMPLEX_FN static inline
#endif

typedef float2 hipFloatComplex;
typedef double2 hipDoubleComplex;
typedef hipFloatComplex hipComplex;

HIP_REMOTE_COMPLEX_FN float hipCrealf(hipFloatComplex z) { return z.x; }
HIP_REMOTE_COMPLEX_FN float hipCimagf(hipFloatComplex z) { return z.y; }
HIP_REMOTE_COMPLEX_FN hipFloatComplex make_hipFloatComplex(float re, float im) {
  hipFloatComplex z;
  z.x = re;
  z.y = im;
  return z;
}
HIP_REMOTE_COMPLEX_FN hipFloatComplex hipConjf(hipFloatComplex z) { return make_hipFloatComplex(z.x, -z.y); }
HIP_REMOTE_COMPLEX_FN float hipCsqabsf(hipFloatComplex z) { return z.x * z.x + z.y * z.y; }
HIP_REMOTE_COMPLEX_FN hipFloatComplex hipCaddf(hipFloatComplex p, hipFloatComplex q) { return make_hipFloatComplex(p.x + q.x, p.y + q.y); }
HIP_REMOTE_COMPLEX_FN hipFloatComplex hipCsubf(hipFloatComplex p, hipFloatComplex q) { return make_hipFloatComplex(p.x - q.x, p.y - q.y); }
HIP_REMOTE_COMPLEX_FN hipFloatComplex hipCmulf(hipFloatComplex p, hipFloatComplex q) {
  return make_hipFloatComplex(p.x * q.x - p.y * q.y, p.y * q.x + p.x * q.y);
}
HIP_REMOTE_COMPLEX_FN hipFloatComplex hipCdivf(hipFloatComplex p, hipFloatComplex q) {
  float d = hipCsqabsf(q);
  return make_hipFloatComplex((p.x * q.x + p.y * q.y) / d, (p.y * q.x - p.x * q.y) / d);
}
HIP_REMOTE_COMPLEX_FN float hipCabsf(hipFloatComplex z) { return sqrtf(hipCsqabsf(z)); }
/* p * q + r */
HIP_REMOTE_COMPLEX_FN hipFloatComplex hipCfmaf(hipFloatComplex p, hipFloatComplex q, hipFloatComplex r) {
  return make_hipFloatComplex(p.x * q.x + r.x - p.y * q.y, p.y * q.x + r.y + p.x * q.y);
}

HIP_REMOTE_COMPLEX_FN double hipCreal(hipDoubleComplex z) { return z.x; }
HIP_REMOTE_COMPLEX_FN double hipCimag(hipDoubleComplex z) { return z.y; }
HIP_REMOTE_COMPLEX_FN hipDoubleComplex make_hipDoubleComplex(double re, double im) {
  hipDoubleComplex z;
  z.x = re;
  z.y = im;
  return z;
}
HIP_REMOTE_COMPLEX_FN hipDoubleComplex hipConj(hipDoubleComplex z) { return make_hipDoubleComplex(z.x, -z.y); }
HIP_REMOTE_COMPLEX_FN double hipCsqabs(hipDoubleComplex z) { return z.x * z.x + z.y * z.y; }
HIP_REMOTE_COMPLEX_FN hipDoubleComplex hipCadd(hipDoubleComplex p, hipDoubleComplex q) { return make_hipDoubleComplex(p.x + q.x, p.y + q.y); }
HIP_REMOTE_COMPLEX_FN hipDoubleComplex hipCsub(hipDoubleComplex p, hipDoubleComplex q) { return make_hipDoubleComplex(p.x - q.x, p.y - q.y); }
HIP_REMOTE_COMPLEX_FN hipDoubleComplex hipCmul(hipDoubleComplex p, hipDoubleComplex q) {
  return make_hipDoubleComplex(p.x * q.x - p.y * q.y, p.y * q.x + p.x * q.y);
}
HIP_REMOTE_COMPLEX_FN hipDoubleComplex hipCdiv(hipDoubleComplex p, hipDoubleComplex q) {
  double d = hipCsqabs(q);
  return make_hipDoubleComplex((p.x * q.x + p.y * q.y) / d, (p.y * q.x - p.x * q.y) / d);
}
HIP_REMOTE_COMPLEX_FN double hipCabs(hipDoubleComplex z) { return sqrt(hipCsqabs(z)); }
HIP_REMOTE_COMPLEX_FN hipDoubleComplex hipCfma(hipDoubleComplex p, hipDoubleComplex q, hipDoubleComplex r) {
  return make_hipDoubleComplex(p.x * q.x + r.x - p.y * q.y, p.y * q.x + r.y + p.x * q.y);
}

HIP_REMOTE_COMPLEX_FN hipComplex make_hipComplex(float re, float im) { return make_hipFloatComplex(re, im); }
HIP_REMOTE_COMPLEX_FN hipFloatComplex hipComplexDoubleToFloat(hipDoubleComplex z) { return make_hipFloatComplex((float)z.x, (float)z.y); }
HIP_REMOTE_COMPLEX_FN hipDoubleComplex hipComplexFloatToDouble(hipFloatComplex z) { return make_hipDoubleComplex(z.x, z.y); }

#undef HIP_REMOTE_COMPLEX_FN
#endif /* HIP_REMOTE_HIP_COMPLEX_H */
