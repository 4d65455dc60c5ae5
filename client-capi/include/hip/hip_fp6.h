/*
 * hip-remote: hip/hip_fp6.h: 6-bit floating point (OCP MX E2M3 and E3M2): `__hip_fp6_e2m3`,
 * `__hip_fp6_e3m2`, their pairs, and the `__hip_cvt_*` conversions, as ROCm 7 has them
 * (one value per byte of storage, in the low 6 bits).
 *
 * Written for hip-remote (not AMD's header) on the exact encoder of hip_remote/small_float.h:
 * round to nearest even, values beyond the range saturate to the largest finite value
 * (these formats have neither infinity nor NaN; NaN converts to the largest value with its
 * sign). In C only the storage types and enumerations are declared.
 */
#ifndef HIP_REMOTE_HIP_FP6_H
#define HIP_REMOTE_HIP_FP6_H

#ifndef HIP_REMOTE_HIP_ROUND_MODE
#define HIP_REMOTE_HIP_ROUND_MODE
/* The rounding asked of a conversion. As in ROCm's software path, the conversions of
 * hip_fp4.h and hip_fp6.h round to nearest even whatever is asked. */
enum hipRoundMode {
  hipRoundNearest = 0,
  hipRoundZero = 1,
  hipRoundPosInf = 2,
  hipRoundMinInf = 3,
};
#endif

typedef unsigned char __hip_fp6_storage_t;
typedef unsigned short __hip_fp6x2_storage_t; /* two values, one per byte, the first low */

enum __hip_fp6_interpretation_t {
  __HIP_E2M3 = 0,
  __HIP_E3M2 = 1,
};

#if defined(__cplusplus)

#include <hip/hip_bf16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_vector_types.h>
#include <hip_remote/small_float.h>

namespace __hip_remote_fp6 {
HIP_REMOTE_FLOAT_FN __hip_remote_float::format format_of(__hip_fp6_interpretation_t type) {
  return type == __HIP_E3M2 ? __hip_remote_float::e3m2() : __hip_remote_float::e2m3();
}
HIP_REMOTE_FLOAT_FN unsigned int from_double(double x, __hip_fp6_interpretation_t type) {
  return __hip_remote_float::encode(x, format_of(type), true);
}
HIP_REMOTE_FLOAT_FN float to_float(unsigned int x, __hip_fp6_interpretation_t type) {
  return (float)__hip_remote_float::decode(x & 0x3fu, format_of(type));
}
}  // namespace __hip_remote_fp6

HIP_REMOTE_FLOAT_FN __hip_fp6_storage_t __hip_cvt_float_to_fp6(const float x, const __hip_fp6_interpretation_t type, const enum hipRoundMode) {
  return (__hip_fp6_storage_t)__hip_remote_fp6::from_double(x, type);
}
HIP_REMOTE_FLOAT_FN __hip_fp6_storage_t __hip_cvt_double_to_fp6(const double x, const __hip_fp6_interpretation_t type, const enum hipRoundMode) {
  return (__hip_fp6_storage_t)__hip_remote_fp6::from_double(x, type);
}
HIP_REMOTE_FLOAT_FN __hip_fp6x2_storage_t __hip_cvt_float2_to_fp6x2(const float2 x, const __hip_fp6_interpretation_t type, const enum hipRoundMode) {
  return (__hip_fp6x2_storage_t)(__hip_remote_fp6::from_double(x.x, type) | (__hip_remote_fp6::from_double(x.y, type) << 8));
}
HIP_REMOTE_FLOAT_FN __hip_fp6_storage_t __hip_cvt_halfraw_to_fp6(const __half_raw x, const __hip_fp6_interpretation_t type, const enum hipRoundMode) {
  return (__hip_fp6_storage_t)__hip_remote_fp6::from_double(float(__half(x)), type);
}
HIP_REMOTE_FLOAT_FN __hip_fp6_storage_t __hip_cvt_bfloat16raw_to_fp6(const __hip_bfloat16_raw x, const __hip_fp6_interpretation_t type,
                                                                   const enum hipRoundMode) {
  return (__hip_fp6_storage_t)__hip_remote_fp6::from_double(float(__hip_bfloat16(x)), type);
}
HIP_REMOTE_FLOAT_FN __half_raw __hip_cvt_fp6_to_halfraw(const __hip_fp6_storage_t x, const __hip_fp6_interpretation_t type) {
  return __half_raw(__half(__hip_remote_fp6::to_float(x, type)));
}
HIP_REMOTE_FLOAT_FN __half2_raw __hip_cvt_fp6x2_to_halfraw2(const __hip_fp6x2_storage_t x, const __hip_fp6_interpretation_t type) {
  return __half2_raw{__half_raw(__half(__hip_remote_fp6::to_float(x, type))).x, __half_raw(__half(__hip_remote_fp6::to_float(x >> 8, type))).x};
}

#define HIP_REMOTE_FP6_TYPES(suffix, interpretation)                                                                 \
  struct __hip_fp6_##suffix {                                                                                        \
    __hip_fp6_storage_t __x;                                                                                         \
    static constexpr __hip_fp6_interpretation_t __default_interpret = interpretation;                                \
    __hip_fp6_##suffix() = default;                                                                                  \
    __host__ __device__ __hip_fp6_##suffix(float f) : __x((__hip_fp6_storage_t)__hip_remote_fp6::from_double(f, interpretation)) {} \
    __host__ __device__ __hip_fp6_##suffix(double d) : __x((__hip_fp6_storage_t)__hip_remote_fp6::from_double(d, interpretation)) {} \
    __host__ __device__ __hip_fp6_##suffix(__half h) : __hip_fp6_##suffix(float(h)) {}                               \
    __host__ __device__ __hip_fp6_##suffix(__hip_bfloat16 b) : __hip_fp6_##suffix(float(b)) {}                       \
    __host__ __device__ __hip_fp6_##suffix(int v) : __hip_fp6_##suffix((double)v) {}                                 \
    __host__ __device__ operator float() const { return __hip_remote_fp6::to_float(__x, interpretation); }           \
    __host__ __device__ explicit operator __half() const { return __half(float(*this)); }                            \
  };                                                                                                                 \
  struct __hip_fp6x2_##suffix {                                                                                      \
    __hip_fp6x2_storage_t __x;                                                                                       \
    __hip_fp6x2_##suffix() = default;                                                                                \
    __host__ __device__ __hip_fp6x2_##suffix(float2 f) : __x(__hip_cvt_float2_to_fp6x2(f, interpretation, hipRoundNearest)) {} \
    __host__ __device__ operator float2() const {                                                                    \
      float2 r;                                                                                                      \
      r.x = __hip_remote_fp6::to_float(__x, interpretation);                                                         \
      r.y = __hip_remote_fp6::to_float(__x >> 8, interpretation);                                                    \
      return r;                                                                                                      \
    }                                                                                                                \
  };
HIP_REMOTE_FP6_TYPES(e2m3, __HIP_E2M3)
HIP_REMOTE_FP6_TYPES(e3m2, __HIP_E3M2)
#undef HIP_REMOTE_FP6_TYPES

#endif /* __cplusplus */
#endif /* HIP_REMOTE_HIP_FP6_H */
