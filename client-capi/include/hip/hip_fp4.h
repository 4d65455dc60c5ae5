/*
 * hip-remote: hip/hip_fp4.h: 4-bit floating point (OCP MX E2M1): `__hip_fp4_e2m1`, its pairs and
 * quads, and the `__hip_cvt_*` conversions, as ROCm 7 has them.
 *
 * Written for hip-remote (not AMD's header) on the exact encoder of hip_remote/small_float.h:
 * round to nearest even, values beyond the range saturate to the largest finite value
 * (these formats have neither infinity nor NaN; NaN converts to the largest value with its
 * sign). In C only the storage types and enumerations are declared.
 */
#ifndef HIP_REMOTE_HIP_FP4_H
#define HIP_REMOTE_HIP_FP4_H

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

typedef unsigned char __hip_fp4_storage_t;   /* one value in the low 4 bits */
typedef unsigned char __hip_fp4x2_storage_t; /* two values: the first in the low 4 bits */
typedef unsigned short __hip_fp4x4_storage_t;

enum __hip_fp4_interpretation_t {
  __HIP_E2M1 = 0,
};

#if defined(__cplusplus)

#include <hip/hip_bf16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_vector_types.h>
#include <hip_remote/small_float.h>

namespace __hip_remote_fp4 {
HIP_REMOTE_FLOAT_FN unsigned int from_double(double x) { return __hip_remote_float::encode(x, __hip_remote_float::e2m1(), true); }
HIP_REMOTE_FLOAT_FN float to_float(unsigned int x) { return (float)__hip_remote_float::decode(x & 0xfu, __hip_remote_float::e2m1()); }
}  // namespace __hip_remote_fp4

HIP_REMOTE_FLOAT_FN __hip_fp4_storage_t __hip_cvt_float_to_fp4(const float x, const __hip_fp4_interpretation_t, const enum hipRoundMode) {
  return (__hip_fp4_storage_t)__hip_remote_fp4::from_double(x);
}
HIP_REMOTE_FLOAT_FN __hip_fp4_storage_t __hip_cvt_double_to_fp4(const double x, const __hip_fp4_interpretation_t, const enum hipRoundMode) {
  return (__hip_fp4_storage_t)__hip_remote_fp4::from_double(x);
}
HIP_REMOTE_FLOAT_FN __hip_fp4x2_storage_t __hip_cvt_float2_to_fp4x2(const float2 x, const __hip_fp4_interpretation_t, const enum hipRoundMode) {
  return (__hip_fp4x2_storage_t)(__hip_remote_fp4::from_double(x.x) | (__hip_remote_fp4::from_double(x.y) << 4));
}
HIP_REMOTE_FLOAT_FN __hip_fp4x2_storage_t __hip_cvt_double2_to_fp4x2(const double2 x, const __hip_fp4_interpretation_t, const enum hipRoundMode) {
  return (__hip_fp4x2_storage_t)(__hip_remote_fp4::from_double(x.x) | (__hip_remote_fp4::from_double(x.y) << 4));
}
HIP_REMOTE_FLOAT_FN __hip_fp4_storage_t __hip_cvt_halfraw_to_fp4(const __half_raw x, const __hip_fp4_interpretation_t, const enum hipRoundMode) {
  return (__hip_fp4_storage_t)__hip_remote_fp4::from_double(float(__half(x)));
}
HIP_REMOTE_FLOAT_FN __hip_fp4x2_storage_t __hip_cvt_halfraw2_to_fp4x2(const __half2_raw x, const __hip_fp4_interpretation_t, const enum hipRoundMode) {
  return (__hip_fp4x2_storage_t)(__hip_remote_fp4::from_double(float(__half(__half_raw{x.x}))) |
                                 (__hip_remote_fp4::from_double(float(__half(__half_raw{x.y}))) << 4));
}
HIP_REMOTE_FLOAT_FN __hip_fp4_storage_t __hip_cvt_bfloat16raw_to_fp4(const __hip_bfloat16_raw x, const __hip_fp4_interpretation_t, const enum hipRoundMode) {
  return (__hip_fp4_storage_t)__hip_remote_fp4::from_double(float(__hip_bfloat16(x)));
}
HIP_REMOTE_FLOAT_FN __hip_fp4x2_storage_t __hip_cvt_bfloat16raw2_to_fp4x2(const __hip_bfloat162_raw x, const __hip_fp4_interpretation_t,
                                                                        const enum hipRoundMode) {
  return (__hip_fp4x2_storage_t)(__hip_remote_fp4::from_double(float(__hip_bfloat16(__hip_bfloat16_raw{x.x}))) |
                                 (__hip_remote_fp4::from_double(float(__hip_bfloat16(__hip_bfloat16_raw{x.y}))) << 4));
}
HIP_REMOTE_FLOAT_FN __half_raw __hip_cvt_fp4_to_halfraw(const __hip_fp4_storage_t x, const __hip_fp4_interpretation_t) {
  return __half_raw(__half(__hip_remote_fp4::to_float(x)));
}
HIP_REMOTE_FLOAT_FN __half2_raw __hip_cvt_fp4x2_to_halfraw2(const __hip_fp4x2_storage_t x, const __hip_fp4_interpretation_t) {
  return __half2_raw{__half_raw(__half(__hip_remote_fp4::to_float(x))).x, __half_raw(__half(__hip_remote_fp4::to_float(x >> 4))).x};
}

struct __hip_fp4_e2m1 {
  __hip_fp4_storage_t __x;
  static constexpr __hip_fp4_interpretation_t __default_interpret = __HIP_E2M1;
  __hip_fp4_e2m1() = default;
  __host__ __device__ __hip_fp4_e2m1(float f) : __x((__hip_fp4_storage_t)__hip_remote_fp4::from_double(f)) {}
  __host__ __device__ __hip_fp4_e2m1(double d) : __x((__hip_fp4_storage_t)__hip_remote_fp4::from_double(d)) {}
  __host__ __device__ __hip_fp4_e2m1(__half h) : __hip_fp4_e2m1(float(h)) {}
  __host__ __device__ __hip_fp4_e2m1(__hip_bfloat16 b) : __hip_fp4_e2m1(float(b)) {}
  __host__ __device__ __hip_fp4_e2m1(int v) : __hip_fp4_e2m1((double)v) {}
  __host__ __device__ operator float() const { return __hip_remote_fp4::to_float(__x); }
  __host__ __device__ explicit operator __half() const { return __half(float(*this)); }
};
struct __hip_fp4x2_e2m1 {
  __hip_fp4x2_storage_t __x;
  __hip_fp4x2_e2m1() = default;
  __host__ __device__ __hip_fp4x2_e2m1(float2 f) : __x(__hip_cvt_float2_to_fp4x2(f, __HIP_E2M1, hipRoundNearest)) {}
  __host__ __device__ operator float2() const {
    float2 r;
    r.x = __hip_remote_fp4::to_float(__x);
    r.y = __hip_remote_fp4::to_float(__x >> 4);
    return r;
  }
};
struct __hip_fp4x4_e2m1 {
  __hip_fp4x4_storage_t __x;
  __hip_fp4x4_e2m1() = default;
  __host__ __device__ __hip_fp4x4_e2m1(float4 f)
      : __x((__hip_fp4x4_storage_t)(__hip_remote_fp4::from_double(f.x) | (__hip_remote_fp4::from_double(f.y) << 4) |
                                    (__hip_remote_fp4::from_double(f.z) << 8) | (__hip_remote_fp4::from_double(f.w) << 12))) {}
  __host__ __device__ operator float4() const {
    float4 r;
    r.x = __hip_remote_fp4::to_float(__x);
    r.y = __hip_remote_fp4::to_float(__x >> 4);
    r.z = __hip_remote_fp4::to_float(__x >> 8);
    r.w = __hip_remote_fp4::to_float(__x >> 12);
    return r;
  }
};

#endif /* __cplusplus */
#endif /* HIP_REMOTE_HIP_FP4_H */
