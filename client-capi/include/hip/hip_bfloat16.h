/*
 * hip-remote: hip/hip_bfloat16.h: ROCm's older bfloat16 type `hip_bfloat16` (rocBLAS's), a
 * struct of 16 bits; in C the struct alone, in C++ its conversions (float to bfloat16 rounds
 * to nearest even, NaN stays NaN; `hip_bfloat16(f, hip_bfloat16::truncate)` truncates) and
 * arithmetic through float, for host and device. The newer `__hip_bfloat16` is hip_bf16.h's.
 */
#ifndef HIP_REMOTE_HIP_BFLOAT16_H
#define HIP_REMOTE_HIP_BFLOAT16_H

#if !defined(__cplusplus)
#include <stdint.h>
typedef struct {
  uint16_t data;
} hip_bfloat16;
#else
#include <hip_remote/small_float.h>

struct hip_bfloat16 {
  unsigned short data;
  enum truncate_t { truncate };

  hip_bfloat16() = default;
  __host__ __device__ hip_bfloat16(float f) : data(float_to_bfloat16(f)) {}
  __host__ __device__ hip_bfloat16(float f, truncate_t) : data((unsigned short)(__hip_remote_float::float_bits(f) >> 16)) {}
  __host__ __device__ operator float() const { return __hip_remote_float::bits_float((unsigned int)data << 16); }
  __host__ __device__ explicit operator bool() const { return (data & 0x7fffu) != 0; }

  static __host__ __device__ unsigned short float_to_bfloat16(float f) {
    unsigned int x = __hip_remote_float::float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x0040u); /* quiet NaN */
    return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  }
  static __host__ __device__ hip_bfloat16 round_to_bfloat16(float f) { return hip_bfloat16(f); }
};

#define HIP_REMOTE_BF16_OP(op)                                                                                  \
  static inline __host__ __device__ hip_bfloat16 operator op(hip_bfloat16 a, hip_bfloat16 b) {                 \
    return hip_bfloat16(float(a) op float(b));                                                                  \
  }                                                                                                             \
  static inline __host__ __device__ hip_bfloat16& operator op##=(hip_bfloat16& a, hip_bfloat16 b) { return a = a op b; }
HIP_REMOTE_BF16_OP(+)
HIP_REMOTE_BF16_OP(-)
HIP_REMOTE_BF16_OP(*)
HIP_REMOTE_BF16_OP(/)
#undef HIP_REMOTE_BF16_OP
static inline __host__ __device__ hip_bfloat16 operator-(hip_bfloat16 a) {
  a.data ^= 0x8000u;
  return a;
}
static inline __host__ __device__ hip_bfloat16 operator+(hip_bfloat16 a) { return a; }
static inline __host__ __device__ bool operator==(hip_bfloat16 a, hip_bfloat16 b) { return float(a) == float(b); }
static inline __host__ __device__ bool operator!=(hip_bfloat16 a, hip_bfloat16 b) { return float(a) != float(b); }
static inline __host__ __device__ bool operator<(hip_bfloat16 a, hip_bfloat16 b) { return float(a) < float(b); }
static inline __host__ __device__ bool operator<=(hip_bfloat16 a, hip_bfloat16 b) { return float(a) <= float(b); }
static inline __host__ __device__ bool operator>(hip_bfloat16 a, hip_bfloat16 b) { return float(a) > float(b); }
static inline __host__ __device__ bool operator>=(hip_bfloat16 a, hip_bfloat16 b) { return float(a) >= float(b); }
static inline __host__ __device__ hip_bfloat16& operator++(hip_bfloat16& a) { return a += hip_bfloat16(1.0f); }
static inline __host__ __device__ hip_bfloat16& operator--(hip_bfloat16& a) { return a -= hip_bfloat16(1.0f); }
static inline __host__ __device__ bool isinf(hip_bfloat16 a) { return (a.data & 0x7fffu) == 0x7f80u; }
static inline __host__ __device__ bool isnan(hip_bfloat16 a) { return (a.data & 0x7fffu) > 0x7f80u; }
static inline __host__ __device__ bool iszero(hip_bfloat16 a) { return (a.data & 0x7fffu) == 0; }
static inline __host__ __device__ hip_bfloat16 abs(hip_bfloat16 a) {
  a.data &= 0x7fffu;
  return a;
}
#endif /* __cplusplus */

#endif /* HIP_REMOTE_HIP_BFLOAT16_H */
