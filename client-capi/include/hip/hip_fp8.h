/*
 * hip-remote: hip/hip_fp8.h: 8-bit floating point, in ROCm's API: the OCP formats
 * (`__hip_fp8_e4m3`, `__hip_fp8_e5m2`) and AMD's FNUZ formats (`__hip_fp8_e4m3_fnuz`,
 * `__hip_fp8_e5m2_fnuz`), their pairs and quads, and the `__hip_cvt_*` conversions.
 *
 * Written for hip-remote (not AMD's header): one portable implementation
 * (hip_remote/small_float.h) for every place a kernel runs — NVIDIA PTX, the host backend,
 * any host compiler — giving the bits ROCm's software path gives: round to nearest even;
 * beyond the largest finite value, that value under __HIP_SATFINITE, else infinity (E5M2) or
 * NaN (E4M3, FNUZ); infinity stays infinity in E5M2 and is NaN in E4M3 and FNUZ.
 *
 * In C only the storage types and the two enumerations are declared (the rest is C++, as in
 * ROCm).
 */
#ifndef HIP_REMOTE_HIP_FP8_H
#define HIP_REMOTE_HIP_FP8_H

enum __hip_fp8_interpretation_t {
  __HIP_E4M3 = 0,      /* OCP E4M3 */
  __HIP_E5M2 = 1,      /* OCP E5M2 */
  __HIP_E4M3_FNUZ = 2, /* AMD's E4M3 FNUZ */
  __HIP_E5M2_FNUZ = 3, /* AMD's E5M2 FNUZ */
};
enum __hip_saturation_t {
  __HIP_NOSAT = 0,     /* beyond the range: infinity or NaN */
  __HIP_SATFINITE = 1, /* beyond the range: the largest finite value */
};
typedef unsigned char __hip_fp8_storage_t;
typedef unsigned short int __hip_fp8x2_storage_t;
typedef unsigned int __hip_fp8x4_storage_t;

#if defined(__cplusplus)

#include <hip/hip_bf16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_vector_types.h>
#include <hip_remote/small_float.h>

#define HIP_REMOTE_FP8_FN HIP_REMOTE_FLOAT_FN

namespace __hip_remote_fp8 {
HIP_REMOTE_FP8_FN __hip_remote_float::format format_of(__hip_fp8_interpretation_t type) {
  switch (type) {
    case __HIP_E4M3: return __hip_remote_float::e4m3();
    case __HIP_E5M2: return __hip_remote_float::e5m2();
    case __HIP_E4M3_FNUZ: return __hip_remote_float::e4m3_fnuz();
    default: return __hip_remote_float::e5m2_fnuz();
  }
}
HIP_REMOTE_FP8_FN __hip_fp8_storage_t from_double(double x, __hip_saturation_t sat, __hip_fp8_interpretation_t type) {
  return (__hip_fp8_storage_t)__hip_remote_float::encode(x, format_of(type), sat == __HIP_SATFINITE);
}
HIP_REMOTE_FP8_FN double to_double(__hip_fp8_storage_t x, __hip_fp8_interpretation_t type) {
  return __hip_remote_float::decode(x, format_of(type));
}
HIP_REMOTE_FP8_FN float to_float(__hip_fp8_storage_t x, __hip_fp8_interpretation_t type) { return (float)to_double(x, type); }
}  // namespace __hip_remote_fp8

/* ---- conversions on storage */
HIP_REMOTE_FP8_FN __hip_fp8_storage_t __hip_cvt_float_to_fp8(const float f, const __hip_saturation_t sat,
                                                            const __hip_fp8_interpretation_t type) {
  return __hip_remote_fp8::from_double((double)f, sat, type);
}
HIP_REMOTE_FP8_FN __hip_fp8_storage_t __hip_cvt_double_to_fp8(const double d, const __hip_saturation_t sat,
                                                             const __hip_fp8_interpretation_t type) {
  return __hip_remote_fp8::from_double(d, sat, type);
}
HIP_REMOTE_FP8_FN __hip_fp8x2_storage_t __hip_cvt_float2_to_fp8x2(const float2 f, const __hip_saturation_t sat,
                                                                 const __hip_fp8_interpretation_t type) {
  return (__hip_fp8x2_storage_t)(__hip_cvt_float_to_fp8(f.x, sat, type) | (__hip_cvt_float_to_fp8(f.y, sat, type) << 8));
}
HIP_REMOTE_FP8_FN __hip_fp8x2_storage_t __hip_cvt_double2_to_fp8x2(const double2 d, const __hip_saturation_t sat,
                                                                  const __hip_fp8_interpretation_t type) {
  return (__hip_fp8x2_storage_t)(__hip_cvt_double_to_fp8(d.x, sat, type) | (__hip_cvt_double_to_fp8(d.y, sat, type) << 8));
}
HIP_REMOTE_FP8_FN __hip_fp8_storage_t __hip_cvt_halfraw_to_fp8(const __half_raw x, const __hip_saturation_t sat,
                                                              const __hip_fp8_interpretation_t type) {
  return __hip_cvt_float_to_fp8(float(__half(x)), sat, type);
}
HIP_REMOTE_FP8_FN __hip_fp8x2_storage_t __hip_cvt_halfraw2_to_fp8x2(const __half2_raw x, const __hip_saturation_t sat,
                                                                   const __hip_fp8_interpretation_t type) {
  return (__hip_fp8x2_storage_t)(__hip_cvt_halfraw_to_fp8(__half_raw{x.x}, sat, type) |
                                 (__hip_cvt_halfraw_to_fp8(__half_raw{x.y}, sat, type) << 8));
}
HIP_REMOTE_FP8_FN __hip_fp8_storage_t __hip_cvt_bfloat16raw_to_fp8(const __hip_bfloat16_raw x, const __hip_saturation_t sat,
                                                                  const __hip_fp8_interpretation_t type) {
  return __hip_cvt_float_to_fp8(float(__hip_bfloat16(x)), sat, type);
}
HIP_REMOTE_FP8_FN __hip_fp8x2_storage_t __hip_cvt_bfloat16raw2_to_fp8x2(const __hip_bfloat162_raw x, const __hip_saturation_t sat,
                                                                       const __hip_fp8_interpretation_t type) {
  return (__hip_fp8x2_storage_t)(__hip_cvt_bfloat16raw_to_fp8(__hip_bfloat16_raw{x.x}, sat, type) |
                                 (__hip_cvt_bfloat16raw_to_fp8(__hip_bfloat16_raw{x.y}, sat, type) << 8));
}
/* fp8 to half is exact: every fp8 value is a half. */
HIP_REMOTE_FP8_FN __half_raw __hip_cvt_fp8_to_halfraw(const __hip_fp8_storage_t x, const __hip_fp8_interpretation_t type) {
  return __half_raw(__half(__hip_remote_fp8::to_float(x, type)));
}
HIP_REMOTE_FP8_FN __half2_raw __hip_cvt_fp8x2_to_halfraw2(const __hip_fp8x2_storage_t x, const __hip_fp8_interpretation_t type) {
  __half_raw lo = __hip_cvt_fp8_to_halfraw((__hip_fp8_storage_t)(x & 0xffu), type);
  __half_raw hi = __hip_cvt_fp8_to_halfraw((__hip_fp8_storage_t)(x >> 8), type);
  return __half2_raw{lo.x, hi.x};
}

/* ---- the types: one per format, pairs and quads; float converts implicitly (the rest
 * explicitly), from every arithmetic type with the format's default saturation (finite). */
#define HIP_REMOTE_FP8_TYPES(suffix, interpretation)                                                                   \
  struct __hip_fp8_##suffix {                                                                                          \
    __hip_fp8_storage_t __x;                                                                                           \
    static constexpr __hip_saturation_t __default_saturation = __HIP_SATFINITE;                                       \
    static constexpr __hip_fp8_interpretation_t __default_interpret = interpretation;                                  \
    __hip_fp8_##suffix() = default;                                                                                    \
    __host__ __device__ __hip_fp8_##suffix(float f) : __x(__hip_cvt_float_to_fp8(f, __default_saturation, interpretation)) {} \
    __host__ __device__ __hip_fp8_##suffix(double d) : __x(__hip_cvt_double_to_fp8(d, __default_saturation, interpretation)) {} \
    __host__ __device__ __hip_fp8_##suffix(__half h) : __hip_fp8_##suffix(float(h)) {}                                 \
    __host__ __device__ __hip_fp8_##suffix(__hip_bfloat16 b) : __hip_fp8_##suffix(float(b)) {}                         \
    __host__ __device__ __hip_fp8_##suffix(int v) : __hip_fp8_##suffix((double)v) {}                                   \
    __host__ __device__ __hip_fp8_##suffix(unsigned int v) : __hip_fp8_##suffix((double)v) {}                          \
    __host__ __device__ __hip_fp8_##suffix(long v) : __hip_fp8_##suffix((double)v) {}                                  \
    __host__ __device__ __hip_fp8_##suffix(unsigned long v) : __hip_fp8_##suffix((double)v) {}                         \
    __host__ __device__ __hip_fp8_##suffix(long long v) : __hip_fp8_##suffix((double)v) {}                             \
    __host__ __device__ __hip_fp8_##suffix(unsigned long long v) : __hip_fp8_##suffix((double)v) {}                    \
    __host__ __device__ __hip_fp8_##suffix(short v) : __hip_fp8_##suffix((double)v) {}                                 \
    __host__ __device__ __hip_fp8_##suffix(unsigned short v) : __hip_fp8_##suffix((double)v) {}                        \
    __host__ __device__ operator float() const { return __hip_remote_fp8::to_float(__x, interpretation); }             \
    __host__ __device__ explicit operator double() const { return __hip_remote_fp8::to_double(__x, interpretation); }  \
    __host__ __device__ explicit operator __half() const { return __half(float(*this)); }                              \
    __host__ __device__ explicit operator __hip_bfloat16() const { return __hip_bfloat16(float(*this)); }              \
    __host__ __device__ explicit operator bool() const { return float(*this) != 0.0f; }                                \
  };                                                                                                                   \
  struct __hip_fp8x2_##suffix {                                                                                        \
    __hip_fp8x2_storage_t __x;                                                                                         \
    static constexpr __hip_saturation_t __default_saturation = __HIP_SATFINITE;                                       \
    static constexpr __hip_fp8_interpretation_t __default_interpret = interpretation;                                  \
    __hip_fp8x2_##suffix() = default;                                                                                  \
    __host__ __device__ __hip_fp8x2_##suffix(float2 f) : __x(__hip_cvt_float2_to_fp8x2(f, __default_saturation, interpretation)) {} \
    __host__ __device__ __hip_fp8x2_##suffix(double2 d) : __x(__hip_cvt_double2_to_fp8x2(d, __default_saturation, interpretation)) {} \
    __host__ __device__ __hip_fp8x2_##suffix(__half2 h) : __x(__hip_cvt_halfraw2_to_fp8x2(__half2_raw(h), __default_saturation, interpretation)) {} \
    __host__ __device__ __hip_fp8x2_##suffix(__hip_bfloat162 b)                                                        \
        : __x(__hip_cvt_bfloat16raw2_to_fp8x2(__hip_bfloat162_raw(b), __default_saturation, interpretation)) {}       \
    __host__ __device__ operator float2() const {                                                                      \
      float2 r;                                                                                                        \
      r.x = __hip_remote_fp8::to_float((__hip_fp8_storage_t)(__x & 0xffu), interpretation);                            \
      r.y = __hip_remote_fp8::to_float((__hip_fp8_storage_t)(__x >> 8), interpretation);                               \
      return r;                                                                                                        \
    }                                                                                                                  \
    __host__ __device__ explicit operator __half2() const { return __half2(__hip_cvt_fp8x2_to_halfraw2(__x, interpretation)); } \
  };                                                                                                                   \
  struct __hip_fp8x4_##suffix {                                                                                        \
    __hip_fp8x4_storage_t __x;                                                                                         \
    static constexpr __hip_saturation_t __default_saturation = __HIP_SATFINITE;                                       \
    static constexpr __hip_fp8_interpretation_t __default_interpret = interpretation;                                  \
    __hip_fp8x4_##suffix() = default;                                                                                  \
    __host__ __device__ __hip_fp8x4_##suffix(float4 f)                                                                 \
        : __x((__hip_fp8x4_storage_t)__hip_cvt_float_to_fp8(f.x, __default_saturation, interpretation) |              \
              ((__hip_fp8x4_storage_t)__hip_cvt_float_to_fp8(f.y, __default_saturation, interpretation) << 8) |       \
              ((__hip_fp8x4_storage_t)__hip_cvt_float_to_fp8(f.z, __default_saturation, interpretation) << 16) |      \
              ((__hip_fp8x4_storage_t)__hip_cvt_float_to_fp8(f.w, __default_saturation, interpretation) << 24)) {}    \
    __host__ __device__ __hip_fp8x4_##suffix(__half2 lo, __half2 hi)                                                   \
        : __x((__hip_fp8x4_storage_t)__hip_cvt_halfraw2_to_fp8x2(__half2_raw(lo), __default_saturation, interpretation) | \
              ((__hip_fp8x4_storage_t)__hip_cvt_halfraw2_to_fp8x2(__half2_raw(hi), __default_saturation, interpretation) << 16)) {} \
    __host__ __device__ operator float4() const {                                                                      \
      float4 r;                                                                                                        \
      r.x = __hip_remote_fp8::to_float((__hip_fp8_storage_t)(__x & 0xffu), interpretation);                            \
      r.y = __hip_remote_fp8::to_float((__hip_fp8_storage_t)((__x >> 8) & 0xffu), interpretation);                     \
      r.z = __hip_remote_fp8::to_float((__hip_fp8_storage_t)((__x >> 16) & 0xffu), interpretation);                    \
      r.w = __hip_remote_fp8::to_float((__hip_fp8_storage_t)(__x >> 24), interpretation);                              \
      return r;                                                                                                        \
    }                                                                                                                  \
  };
HIP_REMOTE_FP8_TYPES(e4m3, __HIP_E4M3)
HIP_REMOTE_FP8_TYPES(e5m2, __HIP_E5M2)
HIP_REMOTE_FP8_TYPES(e4m3_fnuz, __HIP_E4M3_FNUZ)
HIP_REMOTE_FP8_TYPES(e5m2_fnuz, __HIP_E5M2_FNUZ)
#undef HIP_REMOTE_FP8_TYPES
#undef HIP_REMOTE_FP8_FN

#endif /* __cplusplus */
#endif /* HIP_REMOTE_HIP_FP8_H */
