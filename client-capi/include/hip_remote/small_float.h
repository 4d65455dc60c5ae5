/*
 * hip-remote: what hip/hip_fp16.h, hip/hip_bf16.h, hip/hip_fp8.h and hip/hip_fp4.h / hip_fp6.h
 * share: the host+device qualifier, bit casts, and one exact encoder and decoder for the
 * small binary formats (fp8 E4M3/E5M2 in their OCP and FNUZ flavours, fp6, fp4).
 *
 * Plain C++ (no builtins of one compiler, no library calls) so that clang's NVPTX and host
 * passes of our hipcc, the worker host backend's C++ compiler and any host C++ compiler give
 * the same bits. C++ only.
 */
#ifndef HIP_REMOTE_SMALL_FLOAT_H
#define HIP_REMOTE_SMALL_FLOAT_H

#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#define HIP_REMOTE_FLOAT_FN static inline __host__ __device__

namespace __hip_remote_float {

HIP_REMOTE_FLOAT_FN unsigned int float_bits(float f) {
  union {
    float f;
    unsigned int u;
  } v;
  v.f = f;
  return v.u;
}
HIP_REMOTE_FLOAT_FN float bits_float(unsigned int u) {
  union {
    float f;
    unsigned int u;
  } v;
  v.u = u;
  return v.f;
}
HIP_REMOTE_FLOAT_FN unsigned long long double_bits(double d) {
  union {
    double d;
    unsigned long long u;
  } v;
  v.d = d;
  return v.u;
}
HIP_REMOTE_FLOAT_FN double bits_double(unsigned long long u) {
  union {
    double d;
    unsigned long long u;
  } v;
  v.u = u;
  return v.d;
}
/* 2^e for -1022 <= e <= 1023, exactly. */
HIP_REMOTE_FLOAT_FN double pow2(int e) { return bits_double((unsigned long long)(e + 1023) << 52); }

/* A small binary format: sign bit, `exponent_bits`, `mantissa_bits`, `bias`; what its top
 * codes mean (`specials`), and the code of its largest finite magnitude. */
enum specials {
  no_specials = 0,  /* every code is a number (fp4 E2M1, fp6): NaN and infinity saturate */
  ieee_like = 1,    /* E5M2 (OCP): exponent all ones is infinity (mantissa 0) or NaN */
  nan_only = 2,     /* E4M3 (OCP): only S.1111.111 is NaN, no infinity */
  fnuz = 3,         /* FNUZ: 0x80 is the only NaN, no infinity, no negative zero */
};
struct format {
  int exponent_bits, mantissa_bits, bias;
  specials kind;
  unsigned int max_code; /* largest finite magnitude, without sign */
};

HIP_REMOTE_FLOAT_FN unsigned int sign_bit(const format& f) { return 1u << (f.exponent_bits + f.mantissa_bits); }
HIP_REMOTE_FLOAT_FN double max_value(const format& f);

/* The exact value of `code` (as a double: every small-format value is one). */
HIP_REMOTE_FLOAT_FN double decode(unsigned int code, const format& f) {
  unsigned int sign = code & sign_bit(f), magnitude = code & (sign_bit(f) - 1u);
  unsigned int exponent = magnitude >> f.mantissa_bits, mantissa = magnitude & ((1u << f.mantissa_bits) - 1u);
  unsigned int top = (1u << f.exponent_bits) - 1u;
  double nan = bits_double(0x7ff8000000000000ull);
  if (f.kind == fnuz && code == sign_bit(f)) return nan;
  if (f.kind == ieee_like && exponent == top) return mantissa ? nan : (sign ? -pow2(1023) * 2.0 : pow2(1023) * 2.0);
  if (f.kind == nan_only && magnitude == (sign_bit(f) - 1u)) return nan;
  double value = exponent == 0 ? (double)mantissa * pow2(1 - f.bias - f.mantissa_bits)
                               : (double)((1u << f.mantissa_bits) + mantissa) * pow2((int)exponent - f.bias - f.mantissa_bits);
  return sign ? -value : value;
}
HIP_REMOTE_FLOAT_FN double max_value(const format& f) { return decode(f.max_code, f); }

/* `x` rounded to nearest even into the format, with ROCm's rules for what does not fit:
 * a magnitude above the largest finite value is the largest finite value when `saturate`,
 * else infinity (E5M2), NaN (E4M3, FNUZ) or the largest value (formats without either);
 * infinity stays infinity in E5M2 and is NaN in E4M3 and FNUZ; NaN stays NaN. */
HIP_REMOTE_FLOAT_FN unsigned int encode(double x, const format& f, bool saturate) {
  unsigned long long bits = double_bits(x);
  unsigned int sign = (bits >> 63) ? sign_bit(f) : 0u;
  unsigned long long magnitude_bits = bits & 0x7fffffffffffffffull;
  unsigned int nan_code = f.kind == fnuz ? sign_bit(f) : f.kind == no_specials ? (sign | f.max_code) : (sign | (sign_bit(f) - 1u));
  unsigned int inf_code = sign | (((1u << f.exponent_bits) - 1u) << f.mantissa_bits);
  if (magnitude_bits > 0x7ff0000000000000ull) return nan_code;
  if (magnitude_bits == 0x7ff0000000000000ull) return f.kind == ieee_like ? inf_code : f.kind == no_specials ? (sign | f.max_code) : nan_code;
  double a = bits_double(magnitude_bits);
  if (a > max_value(f)) {
    if (saturate || f.kind == no_specials) return sign | f.max_code;
    return f.kind == ieee_like ? inf_code : nan_code;
  }
  /* The step between neighbours at a's magnitude, then a in steps rounded to even. */
  int min_exponent = 1 - f.bias;
  int exponent = (int)((magnitude_bits >> 52) & 0x7ff) - 1023;
  if (exponent < min_exponent) exponent = min_exponent;
  double quantum = pow2(exponent - f.mantissa_bits);
  double steps = a / quantum;                     /* exact: a power-of-two division */
  double rounded = (steps + 4503599627370496.0) - 4503599627370496.0; /* to nearest even, steps < 2^52 */
  unsigned long long n = (unsigned long long)rounded;
  if (n == 0) return f.kind == fnuz ? 0u : sign;
  /* n * quantum: exponent field from where n's leading bit lands. */
  unsigned int code;
  if (exponent == min_exponent && n < (1ull << f.mantissa_bits)) {
    code = (unsigned int)n; /* subnormal */
  } else {
    int e = exponent;
    if (n >= (2ull << f.mantissa_bits)) { /* rounded up to the next power of two */
      n >>= 1;
      ++e;
    }
    code = ((unsigned int)(e + f.bias) << f.mantissa_bits) | ((unsigned int)n & ((1u << f.mantissa_bits) - 1u));
  }
  return sign | code;
}

/* The formats. */
HIP_REMOTE_FLOAT_FN format e4m3() { return format{4, 3, 7, nan_only, 0x7eu}; }
HIP_REMOTE_FLOAT_FN format e5m2() { return format{5, 2, 15, ieee_like, 0x7bu}; }
HIP_REMOTE_FLOAT_FN format e4m3_fnuz() { return format{4, 3, 8, fnuz, 0x7fu}; }
HIP_REMOTE_FLOAT_FN format e5m2_fnuz() { return format{5, 2, 16, fnuz, 0x7fu}; }
HIP_REMOTE_FLOAT_FN format e2m3() { return format{2, 3, 1, no_specials, 0x1fu}; }
HIP_REMOTE_FLOAT_FN format e3m2() { return format{3, 2, 3, no_specials, 0x1fu}; }
HIP_REMOTE_FLOAT_FN format e2m1() { return format{2, 1, 1, no_specials, 0x7u}; }

}  // namespace __hip_remote_float

/* Warp shuffles of a 2- or 4-byte type T (half, half2, bfloat16 ...) through an unsigned
 * int, as ROCm's half headers provide them; only where the kernel language is (our hipcc's
 * passes, the host backend's prelude), which defines the unsigned int shuffles first. */
#if defined(__HIP__) || defined(__HIP_REMOTE_HOST__)
#define HIP_REMOTE_SHUFFLES(T)                                                                                    \
  static __device__ inline unsigned int __hip_remote_to_lane(T v) {                                               \
    unsigned int bits = 0;                                                                                        \
    __builtin_memcpy(&bits, &v, sizeof(T));                                                                       \
    return bits;                                                                                                  \
  }                                                                                                               \
  static __device__ inline T __hip_remote_from_lane(unsigned int bits, const T*) {                                \
    T v;                                                                                                          \
    __builtin_memcpy(&v, &bits, sizeof(T));                                                                       \
    return v;                                                                                                     \
  }                                                                                                               \
  static __device__ inline T __shfl(T var, int src_lane, int width = warpSize) {                                  \
    return __hip_remote_from_lane(__shfl(__hip_remote_to_lane(var), src_lane, width), (const T*)0);              \
  }                                                                                                               \
  static __device__ inline T __shfl_up(T var, unsigned int delta, int width = warpSize) {                         \
    return __hip_remote_from_lane(__shfl_up(__hip_remote_to_lane(var), delta, width), (const T*)0);              \
  }                                                                                                               \
  static __device__ inline T __shfl_down(T var, unsigned int delta, int width = warpSize) {                       \
    return __hip_remote_from_lane(__shfl_down(__hip_remote_to_lane(var), delta, width), (const T*)0);            \
  }                                                                                                               \
  static __device__ inline T __shfl_xor(T var, int lane_mask, int width = warpSize) {                             \
    return __hip_remote_from_lane(__shfl_xor(__hip_remote_to_lane(var), lane_mask, width), (const T*)0);         \
  }                                                                                                               \
  static __device__ inline T __shfl_sync(unsigned long long mask, T var, int src_lane, int width = warpSize) {    \
    return __hip_remote_from_lane(__shfl_sync(mask, __hip_remote_to_lane(var), src_lane, width), (const T*)0);   \
  }                                                                                                               \
  static __device__ inline T __shfl_up_sync(unsigned long long mask, T var, unsigned int delta, int width = warpSize) { \
    return __hip_remote_from_lane(__shfl_up_sync(mask, __hip_remote_to_lane(var), delta, width), (const T*)0);   \
  }                                                                                                               \
  static __device__ inline T __shfl_down_sync(unsigned long long mask, T var, unsigned int delta, int width = warpSize) { \
    return __hip_remote_from_lane(__shfl_down_sync(mask, __hip_remote_to_lane(var), delta, width), (const T*)0); \
  }                                                                                                               \
  static __device__ inline T __shfl_xor_sync(unsigned long long mask, T var, int lane_mask, int width = warpSize) { \
    return __hip_remote_from_lane(__shfl_xor_sync(mask, __hip_remote_to_lane(var), lane_mask, width), (const T*)0); \
  }
#else
#define HIP_REMOTE_SHUFFLES(T)
#endif

#endif /* HIP_REMOTE_SMALL_FLOAT_H */
