/*
 * hip-remote: HIP's AMD-specific device functions for devices that are not AMD GPUs.
 *
 * Included by hipcc_device.h (both clang passes) and by the worker host backend's hiprtc
 * prelude, after each has defined the HIP warp, barrier and clock functions this file builds
 * on (__shfl, __lane_id, __activemask, __syncthreads, clock64 ...). Written once, in plain
 * C++, so the NVIDIA PTX and the host backend give the same results:
 *
 *  - HIP's device functions ROCm defines for every target: __bitextract_*, __bitinsert_*,
 *    __ballot64, the integer min/max overloads (CUDA's set, mixed signedness included), the
 *    conversions with a rounding mode (__float2int_rn & co);
 *  - the common `__builtin_amdgcn_*` compiler builtins (byte permute, bit-field extract,
 *    lane reads, mbcnt, dot products, sleeps, barriers, scheduling hints) for code that calls
 *    them under `__HIP_PLATFORM_AMD__` without a processor check. Where AMD's wavefront is
 *    64 lanes, these act on the 32-lane warps NVIDIA GPUs and the host backend have.
 *
 * hipcc's host pass targets an AMD GPU on its device side, so clang knows the builtins there
 * and this file leaves them to clang. DPP and swizzle builtins (`__builtin_amdgcn_update_dpp`,
 * `mov_dpp`, `ds_swizzle`) are not provided: their lane patterns are wave-64 hardware details.
 */
#ifndef HIP_REMOTE_AMD_DEVICE_FUNCTIONS_H
#define HIP_REMOTE_AMD_DEVICE_FUNCTIONS_H

#if defined(__HIP_REMOTE_HOST__)
#define __HIP_REMOTE_AMD_FN static inline
#define __HIP_REMOTE_AMD_HD_FN static inline
#else
#define __HIP_REMOTE_AMD_FN static __device__ inline __attribute__((always_inline))
/* min and max are host functions too, as ROCm's hip_runtime.h makes them. */
#define __HIP_REMOTE_AMD_HD_FN static __host__ __device__ inline
#endif

/* ---- bit fields: ROCm's definitions (offset and width taken modulo the word size) */
__HIP_REMOTE_AMD_FN unsigned int __bitextract_u32(unsigned int src, unsigned int offset, unsigned int width) {
  offset &= 31u;
  width &= 31u;
  if (width == 0) return 0;
  unsigned int shifted = src >> offset;
  return offset + width >= 32u ? shifted : shifted & ((1u << width) - 1u);
}
__HIP_REMOTE_AMD_FN unsigned long long __bitextract_u64(unsigned long long src, unsigned int offset, unsigned int width) {
  offset &= 63u;
  width &= 63u;
  if (width == 0) return 0;
  unsigned long long shifted = src >> offset;
  return offset + width >= 64u ? shifted : shifted & ((1ull << width) - 1ull);
}
__HIP_REMOTE_AMD_FN int __bitextract_s32(int src, unsigned int offset, unsigned int width) {
  offset &= 31u;
  width &= 31u;
  if (width == 0) return 0;
  unsigned int field = __bitextract_u32((unsigned int)src, offset, width);
  unsigned int bits = offset + width >= 32u ? 32u - offset : width;
  unsigned int sign = 1u << (bits - 1u);
  return (int)((field ^ sign) - sign);
}
__HIP_REMOTE_AMD_FN long long __bitextract_s64(long long src, unsigned int offset, unsigned int width) {
  offset &= 63u;
  width &= 63u;
  if (width == 0) return 0;
  unsigned long long field = __bitextract_u64((unsigned long long)src, offset, width);
  unsigned int bits = offset + width >= 64u ? 64u - offset : width;
  unsigned long long sign = 1ull << (bits - 1u);
  return (long long)((field ^ sign) - sign);
}
__HIP_REMOTE_AMD_FN unsigned int __bitinsert_u32(unsigned int dst, unsigned int src, unsigned int offset, unsigned int width) {
  offset &= 31u;
  width &= 31u;
  unsigned int mask = (1u << width) - 1u;
  return (dst & ~(mask << offset)) | ((src & mask) << offset);
}
__HIP_REMOTE_AMD_FN unsigned long long __bitinsert_u64(unsigned long long dst, unsigned long long src, unsigned int offset,
                                                     unsigned int width) {
  offset &= 63u;
  width &= 63u;
  unsigned long long mask = (1ull << width) - 1ull;
  return (dst & ~(mask << offset)) | ((src & mask) << offset);
}
__HIP_REMOTE_AMD_FN int __bitinsert_s32(int dst, int src, unsigned int offset, unsigned int width) {
  return (int)__bitinsert_u32((unsigned int)dst, (unsigned int)src, offset, width);
}
__HIP_REMOTE_AMD_FN long long __bitinsert_s64(long long dst, long long src, unsigned int offset, unsigned int width) {
  return (long long)__bitinsert_u64((unsigned long long)dst, (unsigned long long)src, offset, width);
}

/* ---- conversions with a rounding mode: rn to nearest even, rz toward zero, ru up, rd down;
 * out of range saturates and NaN is 0, as the hardware conversions do */
namespace __hip_remote_cvt {
template <typename I>
__HIP_REMOTE_AMD_FN I saturate(double r, double lo, double hi) {
  if (r != r) return 0;
  if (r <= lo) return (I)lo;
  if (r >= hi) return r >= 18446744073709551615.0 && hi >= 18446744073709551615.0 ? (I)~0ull : (I)hi;
  return (I)r;
}
__HIP_REMOTE_AMD_FN double rn(double x) { return rint(x); }
__HIP_REMOTE_AMD_FN double rz(double x) { return trunc(x); }
__HIP_REMOTE_AMD_FN double ru(double x) { return ceil(x); }
__HIP_REMOTE_AMD_FN double rd(double x) { return floor(x); }
}  // namespace __hip_remote_cvt
#define __HIP_REMOTE_CVT(from, name, mode, I, lo, hi)                                                   \
  __HIP_REMOTE_AMD_FN I __##from##2##name##_##mode(from x) {                                            \
    return __hip_remote_cvt::saturate<I>(__hip_remote_cvt::mode((double)x), lo, hi);                     \
  }
#define __HIP_REMOTE_CVT_MODES(from, name, I, lo, hi) \
  __HIP_REMOTE_CVT(from, name, rn, I, lo, hi)         \
  __HIP_REMOTE_CVT(from, name, rz, I, lo, hi)         \
  __HIP_REMOTE_CVT(from, name, ru, I, lo, hi)         \
  __HIP_REMOTE_CVT(from, name, rd, I, lo, hi)
__HIP_REMOTE_CVT_MODES(float, int, int, -2147483648.0, 2147483647.0)
__HIP_REMOTE_CVT_MODES(float, uint, unsigned int, 0.0, 4294967295.0)
__HIP_REMOTE_CVT_MODES(float, ll, long long, -9223372036854775808.0, 9223372036854775807.0)
__HIP_REMOTE_CVT_MODES(float, ull, unsigned long long, 0.0, 18446744073709551615.0)
__HIP_REMOTE_CVT_MODES(double, int, int, -2147483648.0, 2147483647.0)
__HIP_REMOTE_CVT_MODES(double, uint, unsigned int, 0.0, 4294967295.0)
__HIP_REMOTE_CVT_MODES(double, ll, long long, -9223372036854775808.0, 9223372036854775807.0)
__HIP_REMOTE_CVT_MODES(double, ull, unsigned long long, 0.0, 18446744073709551615.0)
#undef __HIP_REMOTE_CVT_MODES
#undef __HIP_REMOTE_CVT
/* To floating point, to nearest even (a C conversion). */
__HIP_REMOTE_AMD_FN float __int2float_rn(int x) { return (float)x; }
__HIP_REMOTE_AMD_FN float __uint2float_rn(unsigned int x) { return (float)x; }
__HIP_REMOTE_AMD_FN float __ll2float_rn(long long x) { return (float)x; }
__HIP_REMOTE_AMD_FN float __ull2float_rn(unsigned long long x) { return (float)x; }
__HIP_REMOTE_AMD_FN double __int2double_rn(int x) { return (double)x; }
__HIP_REMOTE_AMD_FN double __uint2double_rn(unsigned int x) { return (double)x; }
__HIP_REMOTE_AMD_FN double __ll2double_rn(long long x) { return (double)x; }
__HIP_REMOTE_AMD_FN double __ull2double_rn(unsigned long long x) { return (double)x; }
__HIP_REMOTE_AMD_FN float __double2float_rn(double x) { return (float)x; }

/* ---- warp votes under ROCm's 64-bit name */
__HIP_REMOTE_AMD_FN unsigned long long __ballot64(int predicate) { return __ballot(predicate); }

/* ---- integer min/max (the floating-point ones are fmin/fmax's) */
#if !defined(__HIP_REMOTE_HOST__) /* the host prelude has its own, for the host compiler */
#define __HIP_REMOTE_MIN_MAX_SAME(T)                                  \
  __HIP_REMOTE_AMD_HD_FN T min(T a, T b) { return b < a ? b : a; }       \
  __HIP_REMOTE_AMD_HD_FN T max(T a, T b) { return a < b ? b : a; }
__HIP_REMOTE_MIN_MAX_SAME(int)
__HIP_REMOTE_MIN_MAX_SAME(unsigned int)
__HIP_REMOTE_MIN_MAX_SAME(long)
__HIP_REMOTE_MIN_MAX_SAME(unsigned long)
__HIP_REMOTE_MIN_MAX_SAME(long long)
__HIP_REMOTE_MIN_MAX_SAME(unsigned long long)
#undef __HIP_REMOTE_MIN_MAX_SAME
__HIP_REMOTE_AMD_HD_FN float min(float a, float b) { return fminf(a, b); }
__HIP_REMOTE_AMD_HD_FN float max(float a, float b) { return fmaxf(a, b); }
__HIP_REMOTE_AMD_HD_FN double min(double a, double b) { return fmin(a, b); }
__HIP_REMOTE_AMD_HD_FN double max(double a, double b) { return fmax(a, b); }
#endif
/* Mixed signedness compares as the unsigned type, as CUDA's and ROCm's overloads do. */
#define __HIP_REMOTE_MIN_MAX_MIXED(S, U)                                                     \
  __HIP_REMOTE_AMD_HD_FN U min(S a, U b) { return min((U)a, b); }                               \
  __HIP_REMOTE_AMD_HD_FN U min(U a, S b) { return min(a, (U)b); }                               \
  __HIP_REMOTE_AMD_HD_FN U max(S a, U b) { return max((U)a, b); }                               \
  __HIP_REMOTE_AMD_HD_FN U max(U a, S b) { return max(a, (U)b); }
__HIP_REMOTE_MIN_MAX_MIXED(int, unsigned int)
__HIP_REMOTE_MIN_MAX_MIXED(long long, unsigned long long)
#undef __HIP_REMOTE_MIN_MAX_MIXED

/* ---- __byte_perm (HIP's and CUDA's): byte n of the result is the byte of the 64-bit {y, x}
 * that selector nibble n picks (its low 3 bits). NVIDIA's compiler and ROCm have their own. */
#if defined(__HIP_REMOTE_HOST__)
__HIP_REMOTE_AMD_FN unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  unsigned long long data = ((unsigned long long)y << 32) | x;
  unsigned int out = 0;
  for (int i = 0; i < 4; ++i) out |= (unsigned int)((data >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
  return out;
}
#endif

/* ---- __builtin_amdgcn_*: only where the compiler does not have them */
#if defined(__NVPTX__) || defined(__HIP_REMOTE_HOST__)

/* v_perm_b32: each selector byte picks a byte of the 64-bit {hi, lo} (0-3 from lo, 4-7 from
 * hi), the sign of byte 1, 3, 5 or 7 (8-11), zero (12) or 0xff (13 and above). */
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_perm(unsigned int hi, unsigned int lo, unsigned int selector) {
  unsigned long long data = ((unsigned long long)hi << 32) | lo;
  unsigned int out = 0;
  for (int i = 0; i < 4; ++i) {
    unsigned int sel = (selector >> (8 * i)) & 0xffu, byte;
    if (sel >= 13u)
      byte = 0xffu;
    else if (sel == 12u)
      byte = 0;
    else if (sel >= 8u)
      byte = ((data >> (16u * (sel - 8u) + 15u)) & 1u) ? 0xffu : 0u;
    else
      byte = (unsigned int)(data >> (8u * sel)) & 0xffu;
    out |= byte << (8 * i);
  }
  return out;
}
/* v_alignbit_b32 / v_alignbyte_b32: the low 32 bits of {hi, lo} shifted right. */
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_alignbit(unsigned int hi, unsigned int lo, unsigned int shift) {
  return (unsigned int)((((unsigned long long)hi << 32) | lo) >> (shift & 31u));
}
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_alignbyte(unsigned int hi, unsigned int lo, unsigned int shift) {
  return (unsigned int)((((unsigned long long)hi << 32) | lo) >> (8u * (shift & 3u)));
}
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_ubfe(unsigned int src, unsigned int offset, unsigned int width) {
  return __bitextract_u32(src, offset, width);
}
__HIP_REMOTE_AMD_FN int __builtin_amdgcn_sbfe(int src, unsigned int offset, unsigned int width) {
  return __bitextract_s32(src, offset, width);
}
/* Dot products of packed bytes; `clamp` saturates the sum instead of wrapping. */
__HIP_REMOTE_AMD_FN int __builtin_amdgcn_sdot4(int a, int b, int c, bool clamp) {
  long long sum = c;
  for (int i = 0; i < 4; ++i) sum += (long long)(signed char)(a >> (8 * i)) * (signed char)(b >> (8 * i));
  if (clamp) return sum > 2147483647LL ? 2147483647 : sum < -2147483647LL - 1 ? (int)(-2147483647LL - 1) : (int)sum;
  return (int)(unsigned int)(unsigned long long)sum;
}
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_udot4(unsigned int a, unsigned int b, unsigned int c, bool clamp) {
  unsigned long long sum = c;
  for (int i = 0; i < 4; ++i) sum += (unsigned long long)((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
  if (clamp && sum > 0xffffffffull) return 0xffffffffu;
  return (unsigned int)sum;
}
/* Mixed signedness: each operand's bytes signed when its flag says so. */
__HIP_REMOTE_AMD_FN int __builtin_amdgcn_sudot4(bool a_signed, int a, bool b_signed, int b, int c, bool clamp) {
  long long sum = c;
  for (int i = 0; i < 4; ++i) {
    long long x = a_signed ? (long long)(signed char)(a >> (8 * i)) : (long long)((a >> (8 * i)) & 0xff);
    long long y = b_signed ? (long long)(signed char)(b >> (8 * i)) : (long long)((b >> (8 * i)) & 0xff);
    sum += x * y;
  }
  if (clamp) return sum > 2147483647LL ? 2147483647 : sum < -2147483647LL - 1 ? (int)(-2147483647LL - 1) : (int)sum;
  return (int)(unsigned int)(unsigned long long)sum;
}
__HIP_REMOTE_AMD_FN float __builtin_amdgcn_fmed3f(float a, float b, float c) { return fmaxf(fminf(a, b), fminf(fmaxf(a, b), c)); }
__HIP_REMOTE_AMD_FN float __builtin_amdgcn_rcpf(float x) { return 1.0f / x; }
__HIP_REMOTE_AMD_FN float __builtin_amdgcn_rsqf(float x) { return 1.0f / sqrtf(x); }
__HIP_REMOTE_AMD_FN double __builtin_amdgcn_rcp(double x) { return 1.0 / x; }
__HIP_REMOTE_AMD_FN double __builtin_amdgcn_rsq(double x) { return 1.0 / sqrt(x); }

/* Lanes. */
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_mbcnt_lo(unsigned int mask, unsigned int base) {
  unsigned int lane = __lane_id();
  unsigned int below = lane >= 32u ? 0xffffffffu : (1u << lane) - 1u;
  return base + (unsigned int)__popc(mask & below);
}
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_mbcnt_hi(unsigned int mask, unsigned int base) {
  unsigned int lane = __lane_id();
  unsigned int below = lane <= 32u ? 0u : lane >= 64u ? 0xffffffffu : (1u << (lane - 32u)) - 1u;
  return base + (unsigned int)__popc(mask & below);
}
__HIP_REMOTE_AMD_FN int __builtin_amdgcn_readfirstlane(int value) {
  return __shfl(value, __ffsll((long long)__activemask()) - 1);
}
__HIP_REMOTE_AMD_FN int __builtin_amdgcn_readlane(int value, int lane) { return __shfl(value, lane); }
/* ds_bpermute: the value of the lane whose byte address is `address` (lane * 4). */
__HIP_REMOTE_AMD_FN int __builtin_amdgcn_ds_bpermute(int address, int value) { return __shfl(value, (address >> 2) & (warpSize - 1)); }
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_wavefrontsize() { return warpSize; }
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_workitem_id_x() { return threadIdx.x; }
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_workitem_id_y() { return threadIdx.y; }
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_workitem_id_z() { return threadIdx.z; }
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_workgroup_id_x() { return blockIdx.x; }
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_workgroup_id_y() { return blockIdx.y; }
__HIP_REMOTE_AMD_FN unsigned int __builtin_amdgcn_workgroup_id_z() { return blockIdx.z; }

/* Clocks, sleeps, barriers, fences. */
__HIP_REMOTE_AMD_FN unsigned long long __builtin_amdgcn_s_memtime() { return (unsigned long long)clock64(); }
__HIP_REMOTE_AMD_FN unsigned long long __builtin_amdgcn_s_memrealtime() { return (unsigned long long)wall_clock64(); }
/* s_sleep: about 64 clocks per unit on AMD hardware; here a wait of that many clock ticks. */
__HIP_REMOTE_AMD_FN void __builtin_amdgcn_s_sleep(int units) {
  long long until = clock64() + 64LL * (units & 0x7f);
  while (clock64() < until) {
  }
}
__HIP_REMOTE_AMD_FN void __builtin_amdgcn_s_barrier() { __syncthreads(); }
__HIP_REMOTE_AMD_FN void __builtin_amdgcn_wave_barrier() { __syncwarp(); }
/* The memory order and scope are honoured as the strongest (a full fence). */
__HIP_REMOTE_AMD_FN void __builtin_amdgcn_fence(int order, const char* scope) {
  (void)order;
  (void)scope;
  __threadfence();
}
/* Scheduling and wait-count hints: nothing to do off AMD hardware. */
__HIP_REMOTE_AMD_FN void __builtin_amdgcn_s_waitcnt(int) {}
__HIP_REMOTE_AMD_FN void __builtin_amdgcn_sched_barrier(int) {}
__HIP_REMOTE_AMD_FN void __builtin_amdgcn_sched_group_barrier(int, int, int) {}
__HIP_REMOTE_AMD_FN void __builtin_amdgcn_s_setprio(short) {}
__HIP_REMOTE_AMD_FN void __builtin_amdgcn_s_dcache_inv() {}

#elif defined(__clang__) && __clang_major__ < 16
/* hipcc's host pass: clang knows the AMD builtins of its own version; these two came later
 * (ggml's flash attention calls sched_group_barrier). Declared only: the host pass emits no
 * device code. */
__device__ void __builtin_amdgcn_sched_group_barrier(int, int, int);
__device__ unsigned int __builtin_amdgcn_wavefrontsize();
#endif /* __NVPTX__ || __HIP_REMOTE_HOST__ */

#undef __HIP_REMOTE_AMD_FN
#undef __HIP_REMOTE_AMD_HD_FN
#endif /* HIP_REMOTE_AMD_DEVICE_FUNCTIONS_H */
