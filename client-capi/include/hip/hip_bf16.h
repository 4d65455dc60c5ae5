/*
 * hip-remote: hip/hip_bf16.h: bfloat16 (`__hip_bfloat16`) and pairs (`__hip_bfloat162`) for
 * device and host code alike.
 *
 * Written for hip-remote (not AMD's header): one portable implementation for clang's NVPTX
 * and host passes of our hipcc, the worker host backend's C++ compiler and a plain C++
 * compiler. A bfloat16 is the high 16 bits of a float; conversions from float round to
 * nearest even (NaN stays NaN), arithmetic goes through float and rounds back, so every device
 * gives the same bits. `__hip_bfloat16` converts to and from float implicitly.
 *
 * In C this header declares nothing (HIP's bfloat16 types are C++).
 */

#ifndef HIP_REMOTE_HIP_BF16_H
#define HIP_REMOTE_HIP_BF16_H

#if defined(__cplusplus)

#include <hip/hip_vector_types.h>
#include <hip_remote/small_float.h>

#define HIP_REMOTE_BF16_FN HIP_REMOTE_FLOAT_FN

namespace __hip_remote_bf16 {
using __hip_remote_float::bits_float;
using __hip_remote_float::float_bits;
HIP_REMOTE_BF16_FN unsigned short float_to_bf16_bits(float f) {
    unsigned int x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x0040u); /* quiet NaN */
    unsigned int rounding = 0x7fffu + ((x >> 16) & 1u);
    return (unsigned short)((x + rounding) >> 16);
}
}  // namespace __hip_remote_bf16

struct __hip_bfloat16_raw {
    unsigned short x;
};
struct __hip_bfloat16 {
    unsigned short data;
    __hip_bfloat16() = default;
    __host__ __device__ __hip_bfloat16(float f) : data(__hip_remote_bf16::float_to_bf16_bits(f)) {}
    __host__ __device__ __hip_bfloat16(double d) : __hip_bfloat16(static_cast<float>(d)) {}
    __host__ __device__ __hip_bfloat16(int v) : __hip_bfloat16(static_cast<float>(v)) {}
    __host__ __device__ __hip_bfloat16(unsigned int v) : __hip_bfloat16(static_cast<float>(v)) {}
    __host__ __device__ __hip_bfloat16(const __hip_bfloat16_raw& raw) : data(raw.x) {}
    __host__ __device__ operator float() const { return __hip_remote_bf16::bits_float((unsigned int)data << 16); }
    __host__ __device__ operator __hip_bfloat16_raw() const { return __hip_bfloat16_raw{data}; }
};
typedef __hip_bfloat16 hip_bfloat16_t;

struct __hip_bfloat162_raw {
    unsigned short x;
    unsigned short y;
};
struct __hip_bfloat162 {
    __hip_bfloat16 x;
    __hip_bfloat16 y;
    __hip_bfloat162() = default;
    __host__ __device__ __hip_bfloat162(__hip_bfloat16 a, __hip_bfloat16 b) : x(a), y(b) {}
    __host__ __device__ __hip_bfloat162(const __hip_bfloat162_raw& raw)
        : x(__hip_bfloat16_raw{raw.x}), y(__hip_bfloat16_raw{raw.y}) {}
    __host__ __device__ operator __hip_bfloat162_raw() const { return __hip_bfloat162_raw{x.data, y.data}; }
};

HIP_REMOTE_BF16_FN __hip_bfloat16 __float2bfloat16(float f) { return __hip_bfloat16(f); }
HIP_REMOTE_BF16_FN __hip_bfloat16 __float2bfloat16_rn(float f) { return __hip_bfloat16(f); }
HIP_REMOTE_BF16_FN __hip_bfloat16 __double2bfloat16(double d) { return __hip_bfloat16(d); }
HIP_REMOTE_BF16_FN float __bfloat162float(__hip_bfloat16 b) { return float(b); }
HIP_REMOTE_BF16_FN unsigned short __bfloat16_as_ushort(__hip_bfloat16 b) { return b.data; }
HIP_REMOTE_BF16_FN short __bfloat16_as_short(__hip_bfloat16 b) { return (short)b.data; }
HIP_REMOTE_BF16_FN __hip_bfloat16 __ushort_as_bfloat16(unsigned short x) { return __hip_bfloat16(__hip_bfloat16_raw{x}); }
HIP_REMOTE_BF16_FN __hip_bfloat16 __short_as_bfloat16(short x) { return __hip_bfloat16(__hip_bfloat16_raw{(unsigned short)x}); }
HIP_REMOTE_BF16_FN __hip_bfloat162 __float2bfloat162_rn(float f) { return __hip_bfloat162(__hip_bfloat16(f), __hip_bfloat16(f)); }
HIP_REMOTE_BF16_FN __hip_bfloat162 __floats2bfloat162_rn(float a, float b) { return __hip_bfloat162(__hip_bfloat16(a), __hip_bfloat16(b)); }
HIP_REMOTE_BF16_FN __hip_bfloat162 __float22bfloat162_rn(float2 f) { return __hip_bfloat162(__hip_bfloat16(f.x), __hip_bfloat16(f.y)); }
HIP_REMOTE_BF16_FN __hip_bfloat162 __halves2bfloat162(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat162(a, b); }
HIP_REMOTE_BF16_FN __hip_bfloat162 __bfloat162bfloat162(__hip_bfloat16 a) { return __hip_bfloat162(a, a); }
HIP_REMOTE_BF16_FN float2 __bfloat1622float2(__hip_bfloat162 b) {
    float2 r;
    r.x = float(b.x);
    r.y = float(b.y);
    return r;
}
HIP_REMOTE_BF16_FN float __low2float(__hip_bfloat162 b) { return float(b.x); }
HIP_REMOTE_BF16_FN float __high2float(__hip_bfloat162 b) { return float(b.y); }
HIP_REMOTE_BF16_FN __hip_bfloat16 __low2bfloat16(__hip_bfloat162 b) { return b.x; }
HIP_REMOTE_BF16_FN __hip_bfloat16 __high2bfloat16(__hip_bfloat162 b) { return b.y; }

HIP_REMOTE_BF16_FN __hip_bfloat16 __hadd(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16(float(a) + float(b)); }
HIP_REMOTE_BF16_FN __hip_bfloat16 __hsub(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16(float(a) - float(b)); }
HIP_REMOTE_BF16_FN __hip_bfloat16 __hmul(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16(float(a) * float(b)); }
HIP_REMOTE_BF16_FN __hip_bfloat16 __hdiv(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16(float(a) / float(b)); }
HIP_REMOTE_BF16_FN __hip_bfloat16 __hfma(__hip_bfloat16 a, __hip_bfloat16 b, __hip_bfloat16 c) {
    return __hip_bfloat16(float(a) * float(b) + float(c));
}
HIP_REMOTE_BF16_FN __hip_bfloat16 __hneg(__hip_bfloat16 a) { return __ushort_as_bfloat16((unsigned short)(a.data ^ 0x8000u)); }
HIP_REMOTE_BF16_FN __hip_bfloat16 __habs(__hip_bfloat16 a) { return __ushort_as_bfloat16((unsigned short)(a.data & 0x7fffu)); }
HIP_REMOTE_BF16_FN __hip_bfloat16 __hmax(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) < float(b) ? b : a; }
HIP_REMOTE_BF16_FN __hip_bfloat16 __hmin(__hip_bfloat16 a, __hip_bfloat16 b) { return float(b) < float(a) ? b : a; }
HIP_REMOTE_BF16_FN bool __heq(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) == float(b); }
HIP_REMOTE_BF16_FN bool __hlt(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) < float(b); }
HIP_REMOTE_BF16_FN bool __hgt(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) > float(b); }
HIP_REMOTE_BF16_FN bool __hisnan(__hip_bfloat16 a) { return (a.data & 0x7fffu) > 0x7f80u; }
HIP_REMOTE_BF16_FN int __hisinf(__hip_bfloat16 a) { return (a.data & 0x7fffu) == 0x7f80u ? ((a.data & 0x8000u) ? -1 : 1) : 0; }

#define HIP_REMOTE_BF162_LANEWISE(name, scalar)                                                  \
    HIP_REMOTE_BF16_FN __hip_bfloat162 name(__hip_bfloat162 a, __hip_bfloat162 b) {              \
        return __hip_bfloat162(scalar(a.x, b.x), scalar(a.y, b.y));                              \
    }
HIP_REMOTE_BF162_LANEWISE(__hadd2, __hadd)
HIP_REMOTE_BF162_LANEWISE(__hsub2, __hsub)
HIP_REMOTE_BF162_LANEWISE(__hmul2, __hmul)
HIP_REMOTE_BF162_LANEWISE(__h2div, __hdiv)
HIP_REMOTE_BF162_LANEWISE(__hmax2, __hmax)
HIP_REMOTE_BF162_LANEWISE(__hmin2, __hmin)
#undef HIP_REMOTE_BF162_LANEWISE
HIP_REMOTE_BF16_FN __hip_bfloat162 __hfma2(__hip_bfloat162 a, __hip_bfloat162 b, __hip_bfloat162 c) {
    return __hip_bfloat162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
HIP_REMOTE_BF16_FN __hip_bfloat162 operator+(__hip_bfloat162 a, __hip_bfloat162 b) { return __hadd2(a, b); }
HIP_REMOTE_BF16_FN __hip_bfloat162 operator-(__hip_bfloat162 a, __hip_bfloat162 b) { return __hsub2(a, b); }
HIP_REMOTE_BF16_FN __hip_bfloat162 operator*(__hip_bfloat162 a, __hip_bfloat162 b) { return __hmul2(a, b); }
HIP_REMOTE_BF16_FN __hip_bfloat162 operator/(__hip_bfloat162 a, __hip_bfloat162 b) { return __h2div(a, b); }

HIP_REMOTE_SHUFFLES(__hip_bfloat16)
HIP_REMOTE_SHUFFLES(__hip_bfloat162)
#undef HIP_REMOTE_BF16_FN
#endif /* __cplusplus */
#endif /* HIP_REMOTE_HIP_BF16_H */
