/*
 * hip-remote: device math for the NVIDIA pass of hip-remote's hipcc.
 *
 * There is no CUDA SDK on the client, so by default there is no libdevice either, and the PTX
 * must not call anything it does not define. The functions here are therefore written on
 * clang's NVPTX builtins (exact hardware operations: sqrt.rn, fma.rn, min/max, rounding) and,
 * for the transcendental functions, on double-precision algorithms in this file:
 *   exp, exp2, log, log2, log10, sin, cos, tan and pow of float are computed in double and
 *   rounded once (within 1 ulp of the float result); of double: exp, exp2, log, sin, cos, pow
 *   within ~2 ulp (sin/cos for |x| < 1e9; the argument reduction is Cody-Waite, so larger
 *   arguments lose accuracy), log2/log10/tan within ~3 ulp (tests/hip/device_math_check.cpp).
 *   The __expf-style intrinsics are the hardware approximations (ex2/lg2/sin/cos.approx), as in
 *   CUDA: approximate by design.
 * With libdevice (hipcc defines __HIP_REMOTE_LIBDEVICE__ and links libdevice.10.bc with
 * -mlink-builtin-bitcode) the transcendental functions call libdevice's __nv_* instead.
 *
 * Part 1 (before the C/C++ math headers): device overloads of the C++ names, declared in the
 * global namespace and brought into std, so that libstdc++'s constexpr std::exp(float) & co (which
 * clang would otherwise make host+device, and which lower to calls of expf the PTX cannot resolve)
 * stay host-only. The same trick as clang's __clang_cuda_math_forward_declares.h.
 * Part 2: the definitions (device pass) and the HIP intrinsics (declared in the host pass too).
 */
#ifndef HIP_REMOTE_DEVICE_MATH_H
#define HIP_REMOTE_DEVICE_MATH_H

#define __HIP_REMOTE_MATH_NAMES(X)                                                                            \
  X(sqrt) X(exp) X(exp2) X(log) X(log2) X(log10) X(sin) X(cos) X(tan) X(fabs) X(floor) X(ceil) X(trunc) \
      X(round) X(rint)

#if defined(__NVPTX__)
#define __HIP_REMOTE_MATH static __device__ inline __attribute__((always_inline))
#else
#define __HIP_REMOTE_MATH __device__
#endif
#define __HIP_REMOTE_MATH_DECLARE1(name) \
  __HIP_REMOTE_MATH float name(float);   \
  __HIP_REMOTE_MATH double name(double);
__HIP_REMOTE_MATH_NAMES(__HIP_REMOTE_MATH_DECLARE1)
__HIP_REMOTE_MATH float pow(float, float);
__HIP_REMOTE_MATH double pow(double, double);
__HIP_REMOTE_MATH float pow(float, int);
__HIP_REMOTE_MATH double pow(double, int);
__HIP_REMOTE_MATH float fmin(float, float);
__HIP_REMOTE_MATH double fmin(double, double);
__HIP_REMOTE_MATH float fmax(float, float);
__HIP_REMOTE_MATH double fmax(double, double);
__HIP_REMOTE_MATH float fma(float, float, float);
__HIP_REMOTE_MATH double fma(double, double, double);
__HIP_REMOTE_MATH float copysign(float, float);
__HIP_REMOTE_MATH double copysign(double, double);
__HIP_REMOTE_MATH float tanh(float);
__HIP_REMOTE_MATH float ldexp(float, int);
__HIP_REMOTE_MATH double ldexp(double, int);
#define __HIP_REMOTE_MATH_USING(name) using ::name;
namespace std {
__HIP_REMOTE_MATH_NAMES(__HIP_REMOTE_MATH_USING)
using ::copysign;
using ::ldexp;
using ::fma;
using ::fmax;
using ::fmin;
using ::pow;
}  // namespace std
#undef __HIP_REMOTE_MATH_USING
#undef __HIP_REMOTE_MATH_DECLARE1

#endif /* HIP_REMOTE_DEVICE_MATH_H */

/* ---- Part 2: included again by hipcc_device.h with __HIP_REMOTE_MATH_DEFINITIONS set. */
#if defined(__HIP_REMOTE_MATH_DEFINITIONS) && !defined(HIP_REMOTE_DEVICE_MATH_DEFINED)
#define HIP_REMOTE_DEVICE_MATH_DEFINED

/* HIP's fast intrinsics: hardware approximations, declared in both passes. */
__HIP_REMOTE_DEVICE_FN float __expf(float x) __HIP_REMOTE_BODY({ return __nvvm_ex2_approx_f(x * 1.4426950408889634f); })
__HIP_REMOTE_DEVICE_FN float __exp10f(float x) __HIP_REMOTE_BODY({ return __nvvm_ex2_approx_f(x * 3.3219280948873622f); })
__HIP_REMOTE_DEVICE_FN float __logf(float x) __HIP_REMOTE_BODY({ return __nvvm_lg2_approx_f(x) * 0.6931471805599453f; })
__HIP_REMOTE_DEVICE_FN float __log2f(float x) __HIP_REMOTE_BODY({ return __nvvm_lg2_approx_f(x); })
__HIP_REMOTE_DEVICE_FN float __log10f(float x) __HIP_REMOTE_BODY({ return __nvvm_lg2_approx_f(x) * 0.30102999566398120f; })
__HIP_REMOTE_DEVICE_FN float __sinf(float x) __HIP_REMOTE_BODY({ return __nvvm_sin_approx_f(x); })
__HIP_REMOTE_DEVICE_FN float __cosf(float x) __HIP_REMOTE_BODY({ return __nvvm_cos_approx_f(x); })
__HIP_REMOTE_DEVICE_FN float __tanf(float x) __HIP_REMOTE_BODY({ return __nvvm_div_approx_f(__nvvm_sin_approx_f(x), __nvvm_cos_approx_f(x)); })
__HIP_REMOTE_DEVICE_FN void __sincosf(float x, float* s, float* c)
    __HIP_REMOTE_BODY({ *s = __nvvm_sin_approx_f(x); *c = __nvvm_cos_approx_f(x); })
__HIP_REMOTE_DEVICE_FN float __powf(float x, float y) __HIP_REMOTE_BODY({ return __nvvm_ex2_approx_f(y * __nvvm_lg2_approx_f(x)); })
__HIP_REMOTE_DEVICE_FN float __fdividef(float x, float y) __HIP_REMOTE_BODY({ return __nvvm_div_approx_f(x, y); })
__HIP_REMOTE_DEVICE_FN float __saturatef(float x) __HIP_REMOTE_BODY({ return __nvvm_saturate_f(x); })
__HIP_REMOTE_DEVICE_FN float __fadd_rn(float x, float y) __HIP_REMOTE_BODY({ return __nvvm_add_rn_f(x, y); })
__HIP_REMOTE_DEVICE_FN float __fsub_rn(float x, float y) __HIP_REMOTE_BODY({ return __nvvm_add_rn_f(x, -y); })
__HIP_REMOTE_DEVICE_FN float __fmul_rn(float x, float y) __HIP_REMOTE_BODY({ return __nvvm_mul_rn_f(x, y); })
__HIP_REMOTE_DEVICE_FN float __fdiv_rn(float x, float y) __HIP_REMOTE_BODY({ return __nvvm_div_rn_f(x, y); })
__HIP_REMOTE_DEVICE_FN float __frcp_rn(float x) __HIP_REMOTE_BODY({ return __nvvm_rcp_rn_f(x); })
__HIP_REMOTE_DEVICE_FN float __fsqrt_rn(float x) __HIP_REMOTE_BODY({ return __nvvm_sqrt_rn_f(x); })
__HIP_REMOTE_DEVICE_FN float __frsqrt_rn(float x) __HIP_REMOTE_BODY({ return __nvvm_div_rn_f(1.0f, __nvvm_sqrt_rn_f(x)); })
__HIP_REMOTE_DEVICE_FN float __fmaf_rn(float x, float y, float z) __HIP_REMOTE_BODY({ return __nvvm_fma_rn_f(x, y, z); })
__HIP_REMOTE_DEVICE_FN double __dadd_rn(double x, double y) __HIP_REMOTE_BODY({ return __nvvm_add_rn_d(x, y); })
__HIP_REMOTE_DEVICE_FN double __dsub_rn(double x, double y) __HIP_REMOTE_BODY({ return __nvvm_add_rn_d(x, -y); })
__HIP_REMOTE_DEVICE_FN double __dmul_rn(double x, double y) __HIP_REMOTE_BODY({ return __nvvm_mul_rn_d(x, y); })
__HIP_REMOTE_DEVICE_FN double __ddiv_rn(double x, double y) __HIP_REMOTE_BODY({ return __nvvm_div_rn_d(x, y); })
__HIP_REMOTE_DEVICE_FN double __drcp_rn(double x) __HIP_REMOTE_BODY({ return __nvvm_rcp_rn_d(x); })
__HIP_REMOTE_DEVICE_FN double __dsqrt_rn(double x) __HIP_REMOTE_BODY({ return __nvvm_sqrt_rn_d(x); })
__HIP_REMOTE_DEVICE_FN double __fma_rn(double x, double y, double z) __HIP_REMOTE_BODY({ return __nvvm_fma_rn_d(x, y, z); })
/* rsqrt is not a C function: both passes see it. */
__HIP_REMOTE_DEVICE_FN float rsqrtf(float x) __HIP_REMOTE_BODY({ return __nvvm_div_rn_f(1.0f, __nvvm_sqrt_rn_f(x)); })
__HIP_REMOTE_DEVICE_FN double rsqrt(double x) __HIP_REMOTE_BODY({ return __nvvm_div_rn_d(1.0, __nvvm_sqrt_rn_d(x)); })

#if defined(__NVPTX__)
#include "device_math_impl.h"
#endif

#if defined(__HIP_REMOTE_LIBDEVICE__)
extern "C" {
__device__ float __nv_expf(float);
__device__ double __nv_exp(double);
__device__ float __nv_exp2f(float);
__device__ double __nv_exp2(double);
__device__ float __nv_logf(float);
__device__ double __nv_log(double);
__device__ float __nv_log2f(float);
__device__ double __nv_log2(double);
__device__ float __nv_log10f(float);
__device__ double __nv_log10(double);
__device__ float __nv_sinf(float);
__device__ double __nv_sin(double);
__device__ float __nv_cosf(float);
__device__ double __nv_cos(double);
__device__ float __nv_tanf(float);
__device__ double __nv_tan(double);
__device__ float __nv_powf(float, float);
__device__ double __nv_pow(double, double);
__device__ float __nv_tanhf(float);
__device__ float __nv_log1pf(float);
__device__ float __nv_expm1f(float);
__device__ float __nv_erff(float);
__device__ double __nv_tanh(double);
}
#define __HIP_REMOTE_TRANSCENDENTAL(name, fallback) __nv_##name
#else
#define __HIP_REMOTE_TRANSCENDENTAL(name, fallback) fallback
#endif

/* Exact operations: the same with and without libdevice. */
__HIP_REMOTE_DEVICE_FN float sqrtf(float x) __HIP_REMOTE_BODY({ return __nvvm_sqrt_rn_f(x); })
__HIP_REMOTE_DEVICE_FN double sqrt(double x) __HIP_REMOTE_BODY({ return __nvvm_sqrt_rn_d(x); })
__HIP_REMOTE_DEVICE_FN float fabsf(float x) __HIP_REMOTE_BODY({ return __nvvm_fabs_f(x); })
__HIP_REMOTE_DEVICE_FN double fabs(double x) __HIP_REMOTE_BODY({ return __nvvm_fabs_d(x); })
__HIP_REMOTE_DEVICE_FN float fminf(float x, float y) __HIP_REMOTE_BODY({ return __nvvm_fmin_f(x, y); })
__HIP_REMOTE_DEVICE_FN double fmin(double x, double y) __HIP_REMOTE_BODY({ return __nvvm_fmin_d(x, y); })
__HIP_REMOTE_DEVICE_FN float fmaxf(float x, float y) __HIP_REMOTE_BODY({ return __nvvm_fmax_f(x, y); })
__HIP_REMOTE_DEVICE_FN double fmax(double x, double y) __HIP_REMOTE_BODY({ return __nvvm_fmax_d(x, y); })
__HIP_REMOTE_DEVICE_FN float floorf(float x) __HIP_REMOTE_BODY({ return __nvvm_floor_f(x); })
__HIP_REMOTE_DEVICE_FN double floor(double x) __HIP_REMOTE_BODY({ return __nvvm_floor_d(x); })
__HIP_REMOTE_DEVICE_FN float ceilf(float x) __HIP_REMOTE_BODY({ return __nvvm_ceil_f(x); })
__HIP_REMOTE_DEVICE_FN double ceil(double x) __HIP_REMOTE_BODY({ return __nvvm_ceil_d(x); })
__HIP_REMOTE_DEVICE_FN float truncf(float x) __HIP_REMOTE_BODY({ return __nvvm_trunc_f(x); })
__HIP_REMOTE_DEVICE_FN double trunc(double x) __HIP_REMOTE_BODY({ return __nvvm_trunc_d(x); })
__HIP_REMOTE_DEVICE_FN float rintf(float x) __HIP_REMOTE_BODY({ return __nvvm_round_f(x); }) /* cvt.rni: to nearest even */
__HIP_REMOTE_DEVICE_FN double rint(double x) __HIP_REMOTE_BODY({ return __nvvm_round_d(x); })
__HIP_REMOTE_DEVICE_FN float roundf(float x) __HIP_REMOTE_BODY({ return (float)__hip_remote_round((double)x); })
__HIP_REMOTE_DEVICE_FN double round(double x) __HIP_REMOTE_BODY({ return __hip_remote_round(x); })
__HIP_REMOTE_DEVICE_FN float fmaf(float x, float y, float z) __HIP_REMOTE_BODY({ return __nvvm_fma_rn_f(x, y, z); })
__HIP_REMOTE_DEVICE_FN double fma(double x, double y, double z) __HIP_REMOTE_BODY({ return __nvvm_fma_rn_d(x, y, z); })
__HIP_REMOTE_DEVICE_FN float copysignf(float x, float y) __HIP_REMOTE_BODY({ return __builtin_copysignf(x, y); })
__HIP_REMOTE_DEVICE_FN double copysign(double x, double y) __HIP_REMOTE_BODY({ return __builtin_copysign(x, y); })

/* x * 2^e, rounded once: exact in double for every float x and |e| <= 300 (beyond, the
 * float result is 0 or infinity anyway). */
__HIP_REMOTE_DEVICE_FN double __hip_remote_pow2(int e) __HIP_REMOTE_BODY({
  return __builtin_bit_cast(double, (unsigned long long)(e + 1023) << 52);
})
__HIP_REMOTE_DEVICE_FN float ldexpf(float x, int e) __HIP_REMOTE_BODY({
  e = e > 300 ? 300 : e < -300 ? -300 : e;
  return (float)((double)x * __hip_remote_pow2(e));
})
/* Double: in steps of at most 2^1000, so each product but a subnormal last one is exact. */
__HIP_REMOTE_DEVICE_FN double ldexp(double x, int e) __HIP_REMOTE_BODY({
  e = e > 2200 ? 2200 : e < -2200 ? -2200 : e;
  while (e > 1000) { x *= __hip_remote_pow2(1000); e -= 1000; }
  while (e < -1000) { x *= __hip_remote_pow2(-1000); e += 1000; }
  return x * __hip_remote_pow2(e);
})
__HIP_REMOTE_DEVICE_FN float ldexp(float x, int e) __HIP_REMOTE_BODY({ return ldexpf(x, e); })
__HIP_REMOTE_DEVICE_FN float scalbnf(float x, int e) __HIP_REMOTE_BODY({ return ldexpf(x, e); })
__HIP_REMOTE_DEVICE_FN double scalbn(double x, int e) __HIP_REMOTE_BODY({ return ldexp(x, e); })

/* Transcendental functions: libdevice when linked, else this file's double algorithms. */
__HIP_REMOTE_DEVICE_FN float expf(float x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(expf, (float)__hip_remote_exp)(x); })
__HIP_REMOTE_DEVICE_FN double exp(double x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(exp, __hip_remote_exp)(x); })
__HIP_REMOTE_DEVICE_FN float exp2f(float x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(exp2f, (float)__hip_remote_exp2)(x); })
__HIP_REMOTE_DEVICE_FN double exp2(double x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(exp2, __hip_remote_exp2)(x); })
__HIP_REMOTE_DEVICE_FN float logf(float x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(logf, (float)__hip_remote_log)(x); })
__HIP_REMOTE_DEVICE_FN double log(double x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(log, __hip_remote_log)(x); })
__HIP_REMOTE_DEVICE_FN float log2f(float x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(log2f, (float)__hip_remote_log2)(x); })
__HIP_REMOTE_DEVICE_FN double log2(double x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(log2, __hip_remote_log2)(x); })
__HIP_REMOTE_DEVICE_FN float log10f(float x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(log10f, (float)__hip_remote_log10)(x); })
__HIP_REMOTE_DEVICE_FN double log10(double x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(log10, __hip_remote_log10)(x); })
__HIP_REMOTE_DEVICE_FN float sinf(float x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(sinf, (float)__hip_remote_sin)(x); })
__HIP_REMOTE_DEVICE_FN double sin(double x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(sin, __hip_remote_sin)(x); })
__HIP_REMOTE_DEVICE_FN float cosf(float x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(cosf, (float)__hip_remote_cos)(x); })
__HIP_REMOTE_DEVICE_FN double cos(double x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(cos, __hip_remote_cos)(x); })
__HIP_REMOTE_DEVICE_FN float tanf(float x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(tanf, (float)__hip_remote_tan)(x); })
__HIP_REMOTE_DEVICE_FN double tan(double x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(tan, __hip_remote_tan)(x); })
__HIP_REMOTE_DEVICE_FN float powf(float x, float y) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(powf, (float)__hip_remote_pow)(x, y); })
__HIP_REMOTE_DEVICE_FN double pow(double x, double y) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(pow, __hip_remote_pow)(x, y); })
/* tanh of float in double: (e^2|x| - 1) / (e^2|x| + 1) loses at most 2^-41 relative for
 * |x| >= 2^-12, below which x - x^3/3 is exact to far under an ulp; rounded once. */
__HIP_REMOTE_DEVICE_FN float tanhf(float x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(tanhf, (float)__hip_remote_tanhf)(x); })
__HIP_REMOTE_DEVICE_FN float tanh(float x) __HIP_REMOTE_BODY({ return tanhf(x); })
#if defined(__HIP_REMOTE_LIBDEVICE__)
__HIP_REMOTE_DEVICE_FN double tanh(double x) __HIP_REMOTE_BODY({ return __nv_tanh(x); })
#else
/* tanh of double without libdevice: not to double accuracy by these algorithms, so a
 * compile error naming it (as the other functions this file lacks). */
__device__ double tanh(double x) __attribute__((unavailable("tanh(double) in a kernel needs libdevice: set HIP_REMOTE_LIBDEVICE or CUDA_PATH for hipcc")));
#endif
/* log1p of float: in double, log(u) * x / (u - 1) with u = 1 + x keeps the small-x accuracy
 * (Goldberg's formula); rounded once. */
__HIP_REMOTE_DEVICE_FN float log1pf(float x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(log1pf, (float)__hip_remote_log1pf)(x); })
/* expm1 of float: Kahan's (u - 1) * x / log(u) with u = e^x in double keeps the small-x
 * accuracy; rounded once. */
__HIP_REMOTE_DEVICE_FN float expm1f(float x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(expm1f, (float)__hip_remote_expm1f)(x); })
__HIP_REMOTE_DEVICE_FN float erff(float x) __HIP_REMOTE_BODY({ return __HIP_REMOTE_TRANSCENDENTAL(erff, (float)__hip_remote_erff)(x); })
/* glibc's classification names, which code calls on the device too. */
__HIP_REMOTE_DEVICE_FN int __isnanf(float x) __HIP_REMOTE_BODY({ return __builtin_isnan(x); })
__HIP_REMOTE_DEVICE_FN int __isinff(float x) __HIP_REMOTE_BODY({ return __builtin_isinf_sign(x); })
__HIP_REMOTE_DEVICE_FN int __finitef(float x) __HIP_REMOTE_BODY({ return __builtin_isfinite(x); })
__HIP_REMOTE_DEVICE_FN int __isnan(double x) __HIP_REMOTE_BODY({ return __builtin_isnan(x); })
__HIP_REMOTE_DEVICE_FN int __isinf(double x) __HIP_REMOTE_BODY({ return __builtin_isinf_sign(x); })
__HIP_REMOTE_DEVICE_FN int __finite(double x) __HIP_REMOTE_BODY({ return __builtin_isfinite(x); })
__HIP_REMOTE_DEVICE_FN void sincosf(float x, float* s, float* c) __HIP_REMOTE_BODY({ *s = sinf(x); *c = cosf(x); })
__HIP_REMOTE_DEVICE_FN void sincos(double x, double* s, double* c) __HIP_REMOTE_BODY({ *s = sin(x); *c = cos(x); })

/* The C++ float overloads (std::exp(float) & co: declared in part 1). */
#define __HIP_REMOTE_MATH_FLOAT1(name) \
  __HIP_REMOTE_DEVICE_FN float name(float x) __HIP_REMOTE_BODY({ return name##f(x); })
__HIP_REMOTE_MATH_NAMES(__HIP_REMOTE_MATH_FLOAT1)
#undef __HIP_REMOTE_MATH_FLOAT1
__HIP_REMOTE_DEVICE_FN float pow(float x, float y) __HIP_REMOTE_BODY({ return powf(x, y); })
__HIP_REMOTE_DEVICE_FN float pow(float x, int y) __HIP_REMOTE_BODY({ return powf(x, (float)y); })
__HIP_REMOTE_DEVICE_FN double pow(double x, int y) __HIP_REMOTE_BODY({ return pow(x, (double)y); })
__HIP_REMOTE_DEVICE_FN float fmin(float x, float y) __HIP_REMOTE_BODY({ return fminf(x, y); })
__HIP_REMOTE_DEVICE_FN float fmax(float x, float y) __HIP_REMOTE_BODY({ return fmaxf(x, y); })
__HIP_REMOTE_DEVICE_FN float fma(float x, float y, float z) __HIP_REMOTE_BODY({ return fmaf(x, y, z); })
__HIP_REMOTE_DEVICE_FN float copysign(float x, float y) __HIP_REMOTE_BODY({ return copysignf(x, y); })
#undef __HIP_REMOTE_TRANSCENDENTAL

#endif /* __HIP_REMOTE_MATH_DEFINITIONS */
