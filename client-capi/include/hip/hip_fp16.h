/*
 * hip-remote: hip/hip_fp16.h: IEEE binary16 (`__half`, `half`) and pairs (`__half2`, `half2`)
 * for device and host code alike.
 *
 * Written for hip-remote (not AMD's header): one portable implementation that compiles for
 * every place a hip-remote kernel runs — clang's NVPTX pass and host pass of our hipcc, the
 * host backend's C++ compiler on the worker, and a plain C++ compiler. Values are stored as
 * binary16 bits; arithmetic goes through float and rounds back to nearest even, as a GPU
 * without native half instructions computes it, so every device gives the same bits.
 * Scalar `__half` converts to and from float implicitly (`h + 1.0f` is float arithmetic);
 * `__half2` has its own operators, each lane rounded to half.
 *
 * In C this header declares nothing (HIP's half types are C++).
 */

#ifndef HIP_REMOTE_HIP_FP16_H
#define HIP_REMOTE_HIP_FP16_H

#if defined(__cplusplus)

#include <hip/hip_vector_types.h>
#include <hip_remote/small_float.h>

#define HIP_REMOTE_FP16_FN HIP_REMOTE_FLOAT_FN

/* The worker's host backend defines the scalar __half in its prelude (hiprtc programs see it
 * without an include); everything else here is shared. */
#if !defined(__HIP_REMOTE_HOST__)
namespace __hip_remote_fp16 {
using __hip_remote_float::bits_float;
using __hip_remote_float::float_bits;
/* float to binary16, round to nearest even; NaN stays NaN, overflow is infinity. */
HIP_REMOTE_FP16_FN unsigned short float_to_half_bits(float f) {
    unsigned int x = float_bits(f);
    unsigned int sign = (x >> 16) & 0x8000u;
    unsigned int mag = x & 0x7fffffffu;
    if (mag >= 0x7f800000u) return (unsigned short)(sign | (mag > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (mag >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);
    if (mag < 0x38800000u) {
        if (mag < 0x33000000u) return (unsigned short)sign;
        unsigned int exponent = mag >> 23, mantissa = (mag & 0x7fffffu) | 0x800000u, shift = 126 - exponent;
        unsigned int bits = mantissa >> shift, rest = mantissa & ((1u << shift) - 1), halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (bits & 1u))) ++bits;
        return (unsigned short)(sign | bits);
    }
    unsigned int bits = (mag >> 13) - (112u << 10), rest = mag & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (bits & 1u))) ++bits;
    return (unsigned short)(sign | bits);
}
HIP_REMOTE_FP16_FN float half_bits_to_float(unsigned short h) {
    unsigned int sign = (unsigned int)(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
    unsigned int x;
    if (exponent == 0x1fu) {
        x = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent != 0) {
        x = sign | ((exponent + 112u) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        x = sign;
    } else {
        exponent = 113;
        while (!(mantissa & 0x400u)) {
            mantissa <<= 1;
            --exponent;
        }
        x = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
    }
    return bits_float(x);
}
}  // namespace __hip_remote_fp16

struct __half_raw {
    unsigned short x;
};
struct __half {
    unsigned short __x;
    __half() = default;
    __host__ __device__ __half(float f) : __x(__hip_remote_fp16::float_to_half_bits(f)) {}
    __host__ __device__ __half(double d) : __half(static_cast<float>(d)) {}
    __host__ __device__ __half(int v) : __half(static_cast<float>(v)) {}
    __host__ __device__ __half(unsigned int v) : __half(static_cast<float>(v)) {}
    __host__ __device__ __half(long v) : __half(static_cast<float>(v)) {}
    __host__ __device__ __half(unsigned long v) : __half(static_cast<float>(v)) {}
    __host__ __device__ __half(long long v) : __half(static_cast<float>(v)) {}
    __host__ __device__ __half(unsigned long long v) : __half(static_cast<float>(v)) {}
    __host__ __device__ __half(short v) : __half(static_cast<float>(v)) {}
    __host__ __device__ __half(unsigned short v) : __half(static_cast<float>(v)) {}
    __host__ __device__ __half(const __half_raw& raw) : __x(raw.x) {}
    __host__ __device__ __half& operator=(const __half_raw& raw) {
        __x = raw.x;
        return *this;
    }
    __host__ __device__ operator float() const { return __hip_remote_fp16::half_bits_to_float(__x); }
    __host__ __device__ operator __half_raw() const { return __half_raw{__x}; }
};
typedef __half half;
HIP_REMOTE_FP16_FN __half __float2half(float f) { return __half(f); }
HIP_REMOTE_FP16_FN __half __float2half_rn(float f) { return __half(f); }
HIP_REMOTE_FP16_FN __half __double2half(double d) { return __half(d); }
HIP_REMOTE_FP16_FN float __half2float(__half h) { return float(h); }
HIP_REMOTE_FP16_FN unsigned short __half_as_ushort(__half h) { return h.__x; }
HIP_REMOTE_FP16_FN short __half_as_short(__half h) { return (short)h.__x; }
HIP_REMOTE_FP16_FN __half __ushort_as_half(unsigned short x) { return __half(__half_raw{x}); }
HIP_REMOTE_FP16_FN __half __short_as_half(short x) { return __half(__half_raw{(unsigned short)x}); }
HIP_REMOTE_FP16_FN __half __hadd(__half a, __half b) { return __half(float(a) + float(b)); }
HIP_REMOTE_FP16_FN __half __hsub(__half a, __half b) { return __half(float(a) - float(b)); }
HIP_REMOTE_FP16_FN __half __hmul(__half a, __half b) { return __half(float(a) * float(b)); }
HIP_REMOTE_FP16_FN __half __hdiv(__half a, __half b) { return __half(float(a) / float(b)); }
HIP_REMOTE_FP16_FN __half __hneg(__half a) { return __half(__half_raw{(unsigned short)(a.__x ^ 0x8000u)}); }
HIP_REMOTE_FP16_FN __half __habs(__half a) { return __half(__half_raw{(unsigned short)(a.__x & 0x7fffu)}); }
HIP_REMOTE_FP16_FN bool __heq(__half a, __half b) { return float(a) == float(b); }
HIP_REMOTE_FP16_FN bool __hne(__half a, __half b) { return float(a) != float(b); }
HIP_REMOTE_FP16_FN bool __hlt(__half a, __half b) { return float(a) < float(b); }
HIP_REMOTE_FP16_FN bool __hle(__half a, __half b) { return float(a) <= float(b); }
HIP_REMOTE_FP16_FN bool __hgt(__half a, __half b) { return float(a) > float(b); }
HIP_REMOTE_FP16_FN bool __hge(__half a, __half b) { return float(a) >= float(b); }
HIP_REMOTE_FP16_FN bool __hisnan(__half a) { return (a.__x & 0x7fffu) > 0x7c00u; }
HIP_REMOTE_FP16_FN int __hisinf(__half a) { return (a.__x & 0x7fffu) == 0x7c00u ? ((a.__x & 0x8000u) ? -1 : 1) : 0; }
#endif /* !__HIP_REMOTE_HOST__ */

/* ---- shared by every compiler: scalar extras and pairs ------------------------------------ */
HIP_REMOTE_FP16_FN __half __hfma(__half a, __half b, __half c) { return __half(float(a) * float(b) + float(c)); }
HIP_REMOTE_FP16_FN __half __hmax(__half a, __half b) { return float(a) < float(b) ? b : a; }
HIP_REMOTE_FP16_FN __half __hmin(__half a, __half b) { return float(b) < float(a) ? b : a; }
HIP_REMOTE_FP16_FN __half __float2half_rz(float f) {
    /* Toward zero: the nearest half, stepped back one ulp when it rounded away from zero. */
    __half h(f);
    float back = float(h);
    if ((f >= 0.0f && back > f) || (f < 0.0f && back < f)) {
        unsigned short bits = __half_as_ushort(h);
        if ((bits & 0x7fffu) != 0) bits = (unsigned short)(bits - 1u);
        h = __ushort_as_half(bits);
    }
    return h;
}

struct __half2_raw {
    unsigned short x;
    unsigned short y;
};
struct __half2 {
    __half x;
    __half y;
    __half2() = default;
    __host__ __device__ __half2(__half a, __half b) : x(a), y(b) {}
    __host__ __device__ __half2(const __half2_raw& raw) : x(__ushort_as_half(raw.x)), y(__ushort_as_half(raw.y)) {}
    __host__ __device__ operator __half2_raw() const { return __half2_raw{__half_as_ushort(x), __half_as_ushort(y)}; }
};
typedef __half2 half2;

HIP_REMOTE_FP16_FN __half2 make_half2(__half x, __half y) { return __half2(x, y); }
HIP_REMOTE_FP16_FN __half2 __halves2half2(__half x, __half y) { return __half2(x, y); }
HIP_REMOTE_FP16_FN __half2 __half2half2(__half a) { return __half2(a, a); }
HIP_REMOTE_FP16_FN __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
HIP_REMOTE_FP16_FN __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
HIP_REMOTE_FP16_FN __half2 __float22half2_rn(float2 f) { return __half2(__half(f.x), __half(f.y)); }
HIP_REMOTE_FP16_FN float2 __half22float2(__half2 h) {
    float2 r;
    r.x = float(h.x);
    r.y = float(h.y);
    return r;
}
HIP_REMOTE_FP16_FN float __low2float(__half2 h) { return float(h.x); }
HIP_REMOTE_FP16_FN float __high2float(__half2 h) { return float(h.y); }
HIP_REMOTE_FP16_FN __half __low2half(__half2 h) { return h.x; }
HIP_REMOTE_FP16_FN __half __high2half(__half2 h) { return h.y; }
HIP_REMOTE_FP16_FN __half2 __low2half2(__half2 h) { return __half2(h.x, h.x); }
HIP_REMOTE_FP16_FN __half2 __high2half2(__half2 h) { return __half2(h.y, h.y); }
HIP_REMOTE_FP16_FN __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
HIP_REMOTE_FP16_FN __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
HIP_REMOTE_FP16_FN __half2 __lowhigh2highlow(__half2 h) { return __half2(h.y, h.x); }

#define HIP_REMOTE_HALF2_LANEWISE(name, scalar)                                 \
    HIP_REMOTE_FP16_FN __half2 name(__half2 a, __half2 b) { return __half2(scalar(a.x, b.x), scalar(a.y, b.y)); }
HIP_REMOTE_HALF2_LANEWISE(__hadd2, __hadd)
HIP_REMOTE_HALF2_LANEWISE(__hsub2, __hsub)
HIP_REMOTE_HALF2_LANEWISE(__hmul2, __hmul)
HIP_REMOTE_HALF2_LANEWISE(__h2div, __hdiv)
HIP_REMOTE_HALF2_LANEWISE(__hdiv2, __hdiv)
HIP_REMOTE_HALF2_LANEWISE(__hmax2, __hmax)
HIP_REMOTE_HALF2_LANEWISE(__hmin2, __hmin)
#undef HIP_REMOTE_HALF2_LANEWISE
HIP_REMOTE_FP16_FN __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
HIP_REMOTE_FP16_FN __half2 __hneg2(__half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
HIP_REMOTE_FP16_FN __half2 __habs2(__half2 a) { return __half2(__habs(a.x), __habs(a.y)); }
HIP_REMOTE_FP16_FN bool __hbeq2(__half2 a, __half2 b) { return __heq(a.x, b.x) && __heq(a.y, b.y); }
HIP_REMOTE_FP16_FN bool __hbne2(__half2 a, __half2 b) { return __hne(a.x, b.x) && __hne(a.y, b.y); }

HIP_REMOTE_FP16_FN __half2 operator+(__half2 a, __half2 b) { return __hadd2(a, b); }
HIP_REMOTE_FP16_FN __half2 operator-(__half2 a, __half2 b) { return __hsub2(a, b); }
HIP_REMOTE_FP16_FN __half2 operator*(__half2 a, __half2 b) { return __hmul2(a, b); }
HIP_REMOTE_FP16_FN __half2 operator/(__half2 a, __half2 b) { return __h2div(a, b); }
HIP_REMOTE_FP16_FN __half2 operator-(__half2 a) { return __hneg2(a); }
HIP_REMOTE_FP16_FN __half2& operator+=(__half2& a, __half2 b) { return a = a + b; }
HIP_REMOTE_FP16_FN __half2& operator-=(__half2& a, __half2 b) { return a = a - b; }
HIP_REMOTE_FP16_FN __half2& operator*=(__half2& a, __half2 b) { return a = a * b; }
HIP_REMOTE_FP16_FN __half2& operator/=(__half2& a, __half2 b) { return a = a / b; }
HIP_REMOTE_FP16_FN bool operator==(__half2 a, __half2 b) { return __hbeq2(a, b); }
HIP_REMOTE_FP16_FN bool operator!=(__half2 a, __half2 b) { return !__hbeq2(a, b); }

HIP_REMOTE_SHUFFLES(__half)
HIP_REMOTE_SHUFFLES(__half2)
#undef HIP_REMOTE_FP16_FN
#endif /* __cplusplus */
#endif /* HIP_REMOTE_HIP_FP16_H */
