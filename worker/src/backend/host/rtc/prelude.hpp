// hip-remote host backend: the HIP prelude for hiprtc programs compiled for the worker's CPU.
//
// Force-included (-include) ahead of every program the host backend compiles. It maps the
// HIP kernel language onto plain C++17: qualifiers become no-ops, threadIdx/blockIdx/
// blockDim/gridDim read a thread-local block state that the generated run_block wrappers
// set, atomics are GCC __atomic builtins (blocks do run concurrently), and __shared__ is
// `static thread_local` (one OS thread runs one block at a time, so its thread-local copy
// is the block's). A program that uses block barriers or warp operations is compiled with
// HIP_REMOTE_FIBERS=1 (the worker's scanner decides): each thread of a block is then a fiber
// (ucontext) on a pooled stack, and a barrier switches to the next fiber; other programs run
// the threads of a block one after another in a plain loop. Kernel assert and printf report
// to the worker through the ABI version 2 launch services. See docs/HOST_MODULES.md.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define HIP_REMOTE_HOST_MODULE_NO_DECLARATION
#include "hip_remote/host_module.h"

// hiprtc defines __HIPCC_RTC__ for the programs it compiles; __HIP_REMOTE_HOST__ tells a
// program it runs on the hip-remote host backend. __HIP_DEVICE_COMPILE__ stays undefined:
// no AMD GPU builtins exist here.
#define __HIPCC_RTC__ 1
#define __HIP_REMOTE_HOST__ 1
// The platform, as AMD's hiprtc defines it (the host backend stands in for an AMD device).
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
// hiprtc also defines __HIPCC__, and its programs see HIP's version without including
// <hip/hip_version.h> (CuPy's headers test both). The values are hip-remote's HIP version.
#define __HIPCC__ 1
#ifndef HIP_VERSION_H
#define HIP_VERSION_H
#define HIP_VERSION_MAJOR 7
#define HIP_VERSION_MINOR 2
#define HIP_VERSION_PATCH 53211
#define HIP_VERSION (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)
#endif

// ---- qualifiers ------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
// Block-shared memory: one copy per OS thread, which runs one block at a time (see above).
#define __shared__ static thread_local
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
// As HIP defines it: GNU's attribute, which may follow `const` (`const __align__(16) half2 z[4]`).
#define __align__(n) __attribute__((aligned(n)))

// ---- vector types ----------------------------------------------------------------------
#define HIP_REMOTE_VECTOR_TYPES(T, name)                                                     \
    struct name##1 { T x; };                                                                 \
    static inline name##1 make_##name##1(T x) { return name##1{x}; }                         \
    struct alignas(sizeof(T) * 2 > 16 ? 16 : sizeof(T) * 2) name##2 { T x, y; };           \
    struct name##3 { T x, y, z; };                                                           \
    struct alignas(sizeof(T) * 4 > 16 ? 16 : sizeof(T) * 4) name##4 { T x, y, z, w; };       \
    static inline name##2 make_##name##2(T x, T y) { return name##2{x, y}; }                 \
    static inline name##3 make_##name##3(T x, T y, T z) { return name##3{x, y, z}; }         \
    static inline name##4 make_##name##4(T x, T y, T z, T w) { return name##4{x, y, z, w}; }
HIP_REMOTE_VECTOR_TYPES(signed char, char)
HIP_REMOTE_VECTOR_TYPES(unsigned char, uchar)
HIP_REMOTE_VECTOR_TYPES(short, short)
HIP_REMOTE_VECTOR_TYPES(unsigned short, ushort)
HIP_REMOTE_VECTOR_TYPES(int, int)
HIP_REMOTE_VECTOR_TYPES(unsigned int, uint)
HIP_REMOTE_VECTOR_TYPES(long, long)
HIP_REMOTE_VECTOR_TYPES(unsigned long, ulong)
HIP_REMOTE_VECTOR_TYPES(long long, longlong)
HIP_REMOTE_VECTOR_TYPES(unsigned long long, ulonglong)
HIP_REMOTE_VECTOR_TYPES(float, float)
HIP_REMOTE_VECTOR_TYPES(double, double)
#undef HIP_REMOTE_VECTOR_TYPES

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

// HIP's opaque host API handles, as hip_runtime_api.h declares them: a library header in a
// kernel file (hipBLAS's) declares host functions over them, and classes a kernel file shares
// with its host code hold them (ggml's graph and event members); device code never uses them.
typedef struct ihipStream_t* hipStream_t;
typedef struct ihipEvent_t* hipEvent_t;
typedef struct ihipGraph* hipGraph_t;
typedef struct hipGraphExec* hipGraphExec_t;
typedef struct hipGraphNode* hipGraphNode_t;
typedef struct ihipModule_t* hipModule_t;
typedef struct ihipModuleSymbol_t* hipFunction_t;
typedef struct ihipMemPoolHandle_t* hipMemPool_t;
typedef struct ihipCtx_t* hipCtx_t;

// ---- block state -----------------------------------------------------------------------
namespace {
namespace __hip_remote {
struct block_state {
    uint3 thread_idx, block_idx, block_dim, grid_dim;
    void* dynamic_shared;
    const hip_remote_launch_services* services;
};
thread_local block_state state;
}  // namespace __hip_remote
}  // namespace

// `extern __shared__ T name[];` is rewritten by the worker's scanner into a pointer
// initialised from this; HIP_DYNAMIC_SHARED is the same by hand.
#define HIP_DYNAMIC_SHARED(type, var) type* var = static_cast<type*>(::__hip_remote::state.dynamic_shared);
#define HIP_DYNAMIC_SHARED_ATTRIBUTE

#define threadIdx (::__hip_remote::state.thread_idx)
#define blockIdx (::__hip_remote::state.block_idx)
#define blockDim (::__hip_remote::state.block_dim)
#define gridDim (::__hip_remote::state.grid_dim)
#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

static constexpr int warpSize = 32;

// ---- math ------------------------------------------------------------------------------
// <math.h> provides sqrtf, expf, fmaxf, sinf, powf, fmaf, ... in the global namespace; these
// are the HIP device spellings on top.
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline float __fdividef(float a, float b) { return a / b; }
static inline float fdividef(float a, float b) { return a / b; }
// glibc declares these names (extern "C", noexcept) for its own use without exporting them,
// so they are defined here with the same linkage, hidden inside the module; weak, so that
// the objects of one link (-fgpu-rdc, hipLink*) each bringing them are one module.
#define HIP_REMOTE_LIBM_ALIAS extern "C" __attribute__((visibility("hidden"), weak))
HIP_REMOTE_LIBM_ALIAS float __expf(float x) noexcept { return expf(x); }
HIP_REMOTE_LIBM_ALIAS float __exp10f(float x) noexcept { return powf(10.0f, x); }
HIP_REMOTE_LIBM_ALIAS float __logf(float x) noexcept { return logf(x); }
HIP_REMOTE_LIBM_ALIAS float __log2f(float x) noexcept { return log2f(x); }
HIP_REMOTE_LIBM_ALIAS float __log10f(float x) noexcept { return log10f(x); }
HIP_REMOTE_LIBM_ALIAS float __sinf(float x) noexcept { return sinf(x); }
HIP_REMOTE_LIBM_ALIAS float __cosf(float x) noexcept { return cosf(x); }
HIP_REMOTE_LIBM_ALIAS float __tanf(float x) noexcept { return tanf(x); }
HIP_REMOTE_LIBM_ALIAS float __powf(float x, float y) noexcept { return powf(x, y); }
HIP_REMOTE_LIBM_ALIAS void __sincosf(float x, float* s, float* c) noexcept { *s = sinf(x); *c = cosf(x); }
#undef HIP_REMOTE_LIBM_ALIAS
static inline float __saturatef(float x) { return fminf(fmaxf(x, 0.0f), 1.0f); }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __dsqrt_rn(double x) { return sqrt(x); }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }

#define HIP_REMOTE_MIN_MAX(T)                                 \
    static inline T min(T a, T b) { return b < a ? b : a; }  \
    static inline T max(T a, T b) { return a < b ? b : a; }
HIP_REMOTE_MIN_MAX(int)
HIP_REMOTE_MIN_MAX(unsigned int)
HIP_REMOTE_MIN_MAX(long)
HIP_REMOTE_MIN_MAX(unsigned long)
HIP_REMOTE_MIN_MAX(long long)
HIP_REMOTE_MIN_MAX(unsigned long long)
#undef HIP_REMOTE_MIN_MAX
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }

// ---- bit manipulation and reinterpretation ---------------------------------------------
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x) {
    unsigned int r = 0;
    for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
static inline int __mul24(int a, int b) { return a * b; }
static inline unsigned int __umul24(unsigned int a, unsigned int b) { return a * b; }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
namespace {
namespace __hip_remote {
template <typename To, typename From>
To bit_cast(From from) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast between types of different sizes");
    To to;
    std::memcpy(&to, &from, sizeof(To));
    return to;
}
}  // namespace __hip_remote
}  // namespace
static inline float __int_as_float(int x) { return ::__hip_remote::bit_cast<float>(x); }
static inline int __float_as_int(float x) { return ::__hip_remote::bit_cast<int>(x); }
static inline float __uint_as_float(unsigned int x) { return ::__hip_remote::bit_cast<float>(x); }
static inline unsigned int __float_as_uint(float x) { return ::__hip_remote::bit_cast<unsigned int>(x); }
static inline double __longlong_as_double(long long x) { return ::__hip_remote::bit_cast<double>(x); }
static inline long long __double_as_longlong(double x) { return ::__hip_remote::bit_cast<long long>(x); }
template <typename T>
static inline T __ldg(const T* p) { return *p; }

// ---- half precision (hip_fp16.h) --------------------------------------------------------
// hiprtc programs see __half without including <hip/hip_fp16.h> (CuPy's float16 builds on it).
// Stored as IEEE binary16 bits; arithmetic goes through float (the implicit conversions), as
// on a GPU without native half instructions. Conversions round to nearest even.
namespace {
namespace __hip_remote {
static inline unsigned short float_to_half_bits(float f) {
    unsigned int x = bit_cast<unsigned int>(f);
    unsigned int sign = (x >> 16) & 0x8000u;
    unsigned int mag = x & 0x7fffffffu;
    if (mag >= 0x7f800000u) return (unsigned short)(sign | (mag > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (mag >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);  // rounds past 65504: infinity
    if (mag < 0x38800000u) {                                             // a subnormal half, or zero
        if (mag < 0x33000000u) return (unsigned short)sign;
        unsigned int exponent = mag >> 23, mantissa = (mag & 0x7fffffu) | 0x800000u, shift = 126 - exponent;
        unsigned int bits = mantissa >> shift, rest = mantissa & ((1u << shift) - 1), halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (bits & 1u))) ++bits;
        return (unsigned short)(sign | bits);
    }
    unsigned int bits = (mag >> 13) - (112u << 10), rest = mag & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (bits & 1u))) ++bits;  // a carry may reach infinity
    return (unsigned short)(sign | bits);
}
static inline float half_bits_to_float(unsigned short h) {
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
    return bit_cast<float>(x);
}
}  // namespace __hip_remote
}  // namespace
struct __half_raw {
    unsigned short x;
};
struct __half {
    unsigned short __x;
    __half() = default;
    __half(float f) : __x(::__hip_remote::float_to_half_bits(f)) {}
    __half(double d) : __half(static_cast<float>(d)) {}
    __half(int v) : __half(static_cast<float>(v)) {}
    __half(unsigned int v) : __half(static_cast<float>(v)) {}
    __half(long v) : __half(static_cast<float>(v)) {}
    __half(unsigned long v) : __half(static_cast<float>(v)) {}
    __half(long long v) : __half(static_cast<float>(v)) {}
    __half(unsigned long long v) : __half(static_cast<float>(v)) {}
    __half(short v) : __half(static_cast<float>(v)) {}
    __half(unsigned short v) : __half(static_cast<float>(v)) {}
    __half(const __half_raw& raw) : __x(raw.x) {}
    __half& operator=(const __half_raw& raw) {
        __x = raw.x;
        return *this;
    }
    operator float() const { return ::__hip_remote::half_bits_to_float(__x); }
    operator __half_raw() const { return __half_raw{__x}; }
};
typedef __half half;
static inline __half __float2half(float f) { return __half(f); }
static inline __half __float2half_rn(float f) { return __half(f); }
static inline __half __double2half(double d) { return __half(d); }
static inline float __half2float(__half h) { return float(h); }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline short __half_as_short(__half h) { return (short)h.__x; }
static inline __half __ushort_as_half(unsigned short x) { return __half(__half_raw{x}); }
static inline __half __short_as_half(short x) { return __half(__half_raw{(unsigned short)x}); }
static inline __half __hadd(__half a, __half b) { return __half(float(a) + float(b)); }
static inline __half __hsub(__half a, __half b) { return __half(float(a) - float(b)); }
static inline __half __hmul(__half a, __half b) { return __half(float(a) * float(b)); }
static inline __half __hdiv(__half a, __half b) { return __half(float(a) / float(b)); }
static inline __half __hneg(__half a) { return __half(__half_raw{(unsigned short)(a.__x ^ 0x8000u)}); }
static inline __half __habs(__half a) { return __half(__half_raw{(unsigned short)(a.__x & 0x7fffu)}); }
static inline bool __heq(__half a, __half b) { return float(a) == float(b); }
static inline bool __hne(__half a, __half b) { return float(a) != float(b); }
static inline bool __hlt(__half a, __half b) { return float(a) < float(b); }
static inline bool __hle(__half a, __half b) { return float(a) <= float(b); }
static inline bool __hgt(__half a, __half b) { return float(a) > float(b); }
static inline bool __hge(__half a, __half b) { return float(a) >= float(b); }
static inline bool __hisnan(__half a) { return (a.__x & 0x7fffu) > 0x7c00u; }
static inline int __hisinf(__half a) { return (a.__x & 0x7fffu) == 0x7c00u ? ((a.__x & 0x8000u) ? -1 : 1) : 0; }

// ---- memory ordering, atomics, clocks --------------------------------------------------
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

namespace {
namespace __hip_remote {
// Relaxed, as device-scope GPU atomics are; __threadfence orders around them.
template <typename T, typename F>
T atomic_update(T* address, F update) {
    T old;
    __atomic_load(address, &old, __ATOMIC_RELAXED);
    T desired;
    do {
        desired = update(old);
    } while (!__atomic_compare_exchange(address, &old, &desired, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
}
}  // namespace __hip_remote
}  // namespace

// HIP's integer atomics: the arithmetic, bitwise, exchange and CAS forms exist for int and
// the unsigned types only (real HIP has no atomicAdd(long long*): programs such as CuPy define
// their own, which must not collide); min and max exist for the signed 64-bit types too.
#define HIP_REMOTE_INTEGER_MIN_MAX(T)                                                            \
    static inline T atomicMin(T* a, T v) {                                                       \
        return ::__hip_remote::atomic_update(a, [v](T old) { return v < old ? v : old; });       \
    }                                                                                            \
    static inline T atomicMax(T* a, T v) {                                                       \
        return ::__hip_remote::atomic_update(a, [v](T old) { return old < v ? v : old; });       \
    }
#define HIP_REMOTE_INTEGER_ATOMICS(T)                                                           \
    static inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); } \
    static inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED); } \
    static inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_RELAXED); } \
    static inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_RELAXED); }   \
    static inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED); } \
    static inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_RELAXED); } \
    HIP_REMOTE_INTEGER_MIN_MAX(T)                                                                \
    static inline T atomicCAS(T* a, T compare, T v) {                                            \
        __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);  \
        return compare;                                                                          \
    }
HIP_REMOTE_INTEGER_ATOMICS(int)
HIP_REMOTE_INTEGER_ATOMICS(unsigned int)
HIP_REMOTE_INTEGER_ATOMICS(unsigned long)
HIP_REMOTE_INTEGER_ATOMICS(unsigned long long)
HIP_REMOTE_INTEGER_MIN_MAX(long)
HIP_REMOTE_INTEGER_MIN_MAX(long long)
#undef HIP_REMOTE_INTEGER_MIN_MAX
#undef HIP_REMOTE_INTEGER_ATOMICS

#define HIP_REMOTE_FLOAT_ATOMICS(T)                                                                 \
    static inline T atomicAdd(T* a, T v) {                                                          \
        return ::__hip_remote::atomic_update(a, [v](T old) { return old + v; });                    \
    }                                                                                               \
    static inline T atomicSub(T* a, T v) {                                                          \
        return ::__hip_remote::atomic_update(a, [v](T old) { return old - v; });                    \
    }                                                                                               \
    static inline T atomicExch(T* a, T v) {                                                         \
        T old;                                                                                      \
        __atomic_exchange(a, &v, &old, __ATOMIC_RELAXED);                                           \
        return old;                                                                                 \
    }                                                                                               \
    static inline T atomicMin(T* a, T v) {                                                          \
        return ::__hip_remote::atomic_update(a, [v](T old) { return v < old ? v : old; });          \
    }                                                                                               \
    static inline T atomicMax(T* a, T v) {                                                          \
        return ::__hip_remote::atomic_update(a, [v](T old) { return old < v ? v : old; });          \
    }                                                                                               \
    static inline T atomicCAS(T* a, T compare, T v) {                                               \
        __atomic_compare_exchange(a, &compare, &v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);       \
        return compare;                                                                             \
    }                                                                                               \
    static inline T unsafeAtomicAdd(T* a, T v) { return atomicAdd(a, v); }                          \
    static inline T safeAtomicAdd(T* a, T v) { return atomicAdd(a, v); }                            \
    static inline T atomicAddNoRet(T* a, T v) { return atomicAdd(a, v); }
HIP_REMOTE_FLOAT_ATOMICS(float)
HIP_REMOTE_FLOAT_ATOMICS(double)
#undef HIP_REMOTE_FLOAT_ATOMICS

static inline unsigned int atomicInc(unsigned int* a, unsigned int limit) {
    return ::__hip_remote::atomic_update(a, [limit](unsigned int old) { return old >= limit ? 0u : old + 1u; });
}
static inline unsigned int atomicDec(unsigned int* a, unsigned int limit) {
    return ::__hip_remote::atomic_update(
        a, [limit](unsigned int old) { return (old == 0u || old > limit) ? limit : old - 1u; });
}

// The _system and _block scopes: every atomic here is already system-wide.
#define HIP_REMOTE_SCOPED_ATOMIC(op)                                                        \
    template <typename... A>                                                                \
    static inline auto op##_system(A... a) -> decltype(op(a...)) { return op(a...); }       \
    template <typename... A>                                                                \
    static inline auto op##_block(A... a) -> decltype(op(a...)) { return op(a...); }
HIP_REMOTE_SCOPED_ATOMIC(atomicAdd)
HIP_REMOTE_SCOPED_ATOMIC(atomicSub)
HIP_REMOTE_SCOPED_ATOMIC(atomicAnd)
HIP_REMOTE_SCOPED_ATOMIC(atomicOr)
HIP_REMOTE_SCOPED_ATOMIC(atomicXor)
HIP_REMOTE_SCOPED_ATOMIC(atomicExch)
HIP_REMOTE_SCOPED_ATOMIC(atomicMin)
HIP_REMOTE_SCOPED_ATOMIC(atomicMax)
HIP_REMOTE_SCOPED_ATOMIC(atomicCAS)
HIP_REMOTE_SCOPED_ATOMIC(atomicInc)
HIP_REMOTE_SCOPED_ATOMIC(atomicDec)
#undef HIP_REMOTE_SCOPED_ATOMIC

static inline long long clock64() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
static inline long long wall_clock64() { return clock64(); }

// ---- block execution: plain loop or fibers; faults and printf -------------------------
#ifndef HIP_REMOTE_FIBERS
#define HIP_REMOTE_FIBERS 0
#endif
// Stack of one fiber (one thread of a block), plus a guard page below it.
#ifndef HIP_REMOTE_FIBER_STACK_SIZE
#define HIP_REMOTE_FIBER_STACK_SIZE (256u << 10)
#endif
namespace {
namespace __hip_remote {

// Ends the block after a fault: never returns (defined below).
[[noreturn]] void end_block();

inline void fault(std::uint32_t kind, const char* message) {
    const hip_remote_launch_services* services = state.services;
    if (services && services->fault) services->fault(services, kind, message);
}

// Kernel printf: formatted here, buffered by the worker per launch.
inline int device_vprintf(const char* format, va_list args) {
    char small[512];
    va_list again;
    va_copy(again, args);
    int len = vsnprintf(small, sizeof small, format, args);
    const hip_remote_launch_services* services = state.services;
    if (len < 0 || !services || !services->print) {
        va_end(again);
        return len;
    }
    if ((std::size_t)len < sizeof small) {
        services->print(services, small, (std::uint32_t)len);
    } else if (char* big = static_cast<char*>(std::malloc((std::size_t)len + 1))) {
        vsnprintf(big, (std::size_t)len + 1, format, again);
        services->print(services, big, (std::uint32_t)len);
        std::free(big);
    }
    va_end(again);
    return len;
}

struct block_run;
thread_local block_run* current_run = nullptr;  // the fiber-mode block of this OS thread
thread_local jmp_buf* plain_exit = nullptr;      // where a plain-loop block ends on a fault

inline unsigned linear_thread(uint3 t, uint3 d) { return t.x + d.x * (t.y + d.y * t.z); }

// ---- fibers -----------------------------------------------------------------------------
// Stacks come from pools that blocks take and give back (the worker starts a launch's helper
// threads afresh, so a pool per OS thread would pile up): a pool holds the stacks of one block,
// grown on demand; every pool is registered so that the module's destructor can unmap them.
// A guard page below each stack turns an overflow into a fault of the worker rather than
// silent corruption of a neighbour.
constexpr std::size_t fiber_stack_size = HIP_REMOTE_FIBER_STACK_SIZE;
constexpr unsigned max_fibers = HIP_REMOTE_HOST_MAX_THREADS_PER_BLOCK;

struct stack_pool {
    void* stacks[max_fibers];
    unsigned count;
    std::size_t page;
    stack_pool* next_registered;
    stack_pool* next_free;
};
stack_pool* all_pools = nullptr;
stack_pool* free_pools = nullptr;
int pools_lock = 0;  // a spin lock around the two lists: held for a few instructions

inline void lock_pools() {
    while (__atomic_exchange_n(&pools_lock, 1, __ATOMIC_ACQUIRE)) {
    }
}
inline void unlock_pools() { __atomic_store_n(&pools_lock, 0, __ATOMIC_RELEASE); }

inline stack_pool* acquire_pool() {
    lock_pools();
    stack_pool* pool = free_pools;
    if (pool) free_pools = pool->next_free;
    unlock_pools();
    if (pool) return pool;
    pool = static_cast<stack_pool*>(std::calloc(1, sizeof(stack_pool)));
    if (!pool) return nullptr;
    pool->page = (std::size_t)sysconf(_SC_PAGESIZE);
    lock_pools();
    pool->next_registered = all_pools;
    all_pools = pool;
    unlock_pools();
    return pool;
}

inline void release_pool(stack_pool* pool) {
    lock_pools();
    pool->next_free = free_pools;
    free_pools = pool;
    unlock_pools();
}

// Base (lowest usable address) of the pool's stack `i`, mapping up to it; nullptr when out
// of memory.
inline char* fiber_stack(stack_pool& pool, unsigned i) {
    while (pool.count <= i) {
        std::size_t len = fiber_stack_size + pool.page;
        void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return nullptr;
        mprotect(p, pool.page, PROT_NONE);
        pool.stacks[pool.count++] = p;
    }
    return static_cast<char*>(pool.stacks[i]) + pool.page;
}

__attribute__((destructor)) inline void release_stacks() {
    lock_pools();
    for (stack_pool* pool = all_pools; pool;) {
        for (unsigned i = 0; i < pool->count; ++i) munmap(pool->stacks[i], fiber_stack_size + pool->page);
        stack_pool* next = pool->next_registered;
        std::free(pool);
        pool = next;
    }
    all_pools = nullptr;
    free_pools = nullptr;
    unlock_pools();
}

// A fiber's saved execution context. On x86-64 a hand-written switch saves the callee-saved
// registers on the fiber's own stack (no system call, unlike swapcontext, which also saves
// the signal mask); elsewhere, or with HIP_REMOTE_FIBER_UCONTEXT, ucontext does it.
#if defined(__x86_64__) && !defined(HIP_REMOTE_FIBER_UCONTEXT)
#define HIP_REMOTE_FIBER_ASM 1
}  // namespace __hip_remote
}  // namespace
// switch(from, to): pushes rbp, rbx, r12-r15 and the SSE/x87 control words, stores the stack
// pointer in *from, loads `to` and pops the same from there. A new fiber's stack is laid out
// as if it had switched away just before its entry function.
extern "C" __attribute__((visibility("hidden"))) void __hip_remote_fiber_switch(void** from, void* to);
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".hidden __hip_remote_fiber_switch\n"
    ".weak __hip_remote_fiber_switch\n"
    ".type __hip_remote_fiber_switch,@function\n"
    "__hip_remote_fiber_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size __hip_remote_fiber_switch, .-__hip_remote_fiber_switch\n");
namespace {
namespace __hip_remote {
struct fiber_context {
    void* sp;
};
inline void switch_context(fiber_context& from, const fiber_context& to) { __hip_remote_fiber_switch(&from.sp, to.sp); }
// Prepares `context` to start `entry` on the stack [base, base + size).
inline bool make_context(fiber_context& context, char* base, std::size_t size, void (*entry)()) {
    auto top = reinterpret_cast<std::uintptr_t>(base + size) & ~std::uintptr_t(15);
    auto* slots = reinterpret_cast<std::uint64_t*>(top);
    slots[-1] = 0;                                         // entry's (never used) return address
    slots[-2] = reinterpret_cast<std::uint64_t>(entry);    // where the first switch returns to
    for (int i = 3; i <= 8; ++i) slots[-i] = 0;            // rbp, rbx, r12-r15
    slots[-9] = 0x1F80ull | (0x037Full << 32);             // default MXCSR, x87 control word
    context.sp = &slots[-9];
    return true;
}
#else
#define HIP_REMOTE_FIBER_ASM 0
struct fiber_context {
    ucontext_t uc;
};
inline void switch_context(fiber_context& from, const fiber_context& to) { swapcontext(&from.uc, &to.uc); }
inline bool make_context(fiber_context& context, char* base, std::size_t size, void (*entry)()) {
    if (getcontext(&context.uc) != 0) return false;
    context.uc.uc_stack.ss_sp = base;
    context.uc.uc_stack.ss_size = size;
    context.uc.uc_link = nullptr;
    makecontext(&context.uc, entry, 0);
    return true;
}
#endif

enum fiber_status : unsigned char { runnable, at_barrier, at_warp_op, finished };

struct fiber {
    fiber_context context;
    uint3 thread_idx;
    fiber_status status;
};

constexpr unsigned warp_lanes = (unsigned)warpSize;
static_assert(warp_lanes <= 64, "warp masks are 64-bit");

// One warp's exchange: lanes deposit a value and wait until every live lane of the warp
// has; the buffers alternate by generation so a fast lane's next operation cannot overwrite
// what a slow lane has yet to read.
struct warp_exchange {
    unsigned live, arrived, generation;
    std::uint64_t mask[2];
    std::uint64_t values[2][warp_lanes];
};

struct block_run {
    fiber_context scheduler;
    fiber* fibers;
    warp_exchange* warps;
    unsigned count, current, live;
    // The block barrier: arrivals this generation, and per generation the predicate tally.
    unsigned barrier_arrived, barrier_generation;
    unsigned barrier_count[2], barrier_all[2];
    bool aborted;
    void (*body)(void*);
    void* body_arg;
};

inline void release_barrier(block_run& r) {
    for (unsigned i = 0; i < r.count; ++i)
        if (r.fibers[i].status == at_barrier) r.fibers[i].status = runnable;
    r.barrier_arrived = 0;
    unsigned next = (r.barrier_generation + 1) & 1;
    r.barrier_count[next] = 0;
    r.barrier_all[next] = 0;
    ++r.barrier_generation;
}

inline void release_warp(block_run& r, unsigned warp) {
    warp_exchange& w = r.warps[warp];
    unsigned end = std::min(r.count, (warp + 1) * warp_lanes);
    for (unsigned i = warp * warp_lanes; i < end; ++i)
        if (r.fibers[i].status == at_warp_op) r.fibers[i].status = runnable;
    w.arrived = 0;
    w.mask[(w.generation + 1) & 1] = 0;
    ++w.generation;
}

// Back to the scheduler; returns when this fiber is resumed.
inline void yield(block_run& r) {
    fiber& me = r.fibers[r.current];
    switch_context(me.context, r.scheduler);
}

[[noreturn]] inline void fiber_main() {
    block_run& r = *current_run;
    r.body(r.body_arg);
    unsigned me = r.current;
    r.fibers[me].status = finished;
    --r.live;
    warp_exchange& w = r.warps[me / warp_lanes];
    --w.live;
    if (w.arrived > 0 && w.arrived == w.live) release_warp(r, me / warp_lanes);
    if (r.barrier_arrived > 0 && r.barrier_arrived == r.live) release_barrier(r);
    switch_context(r.fibers[me].context, r.scheduler);  // never resumed
    __builtin_unreachable();
}

[[noreturn]] inline void no_fibers(const char* what) {
    char message[256];
    snprintf(message, sizeof message,
             "%s in a program compiled without fibers (the worker found no barrier or warp operation in its "
             "source, e.g. one hidden behind a macro defined outside it)",
             what);
    fault(HIP_REMOTE_FAULT_LAUNCH, message);
    end_block();
}

enum barrier_mode { barrier_count_mode, barrier_and_mode, barrier_or_mode };

// __syncthreads and its reductions over the block's live threads.
inline int barrier(int predicate, barrier_mode mode) {
    block_run* run = current_run;
    if (!run) no_fibers("__syncthreads");
    block_run& r = *run;
    unsigned generation = r.barrier_generation & 1;
    r.barrier_count[generation] += predicate != 0;
    r.barrier_all[generation] += 1;
    r.fibers[r.current].status = at_barrier;
    if (++r.barrier_arrived == r.live) release_barrier(r);
    yield(r);
    // Buffer `generation` stays as it is until every live thread reaches the next barrier.
    unsigned count = r.barrier_count[generation];
    switch (mode) {
        case barrier_and_mode: return count == r.barrier_all[generation];
        case barrier_or_mode: return count != 0;
        default: return (int)count;
    }
}

// Deposits `value` for this lane, waits for the warp; returns the generation's buffer index
// and this lane.
inline unsigned warp_op(std::uint64_t value, unsigned* lane_out) {
    block_run* run = current_run;
    if (!run) no_fibers("a warp operation");
    block_run& r = *run;
    unsigned me = r.current, warp = me / warp_lanes, lane = me % warp_lanes;
    warp_exchange& w = r.warps[warp];
    unsigned generation = w.generation & 1;
    w.values[generation][lane] = value;
    w.mask[generation] |= 1ull << lane;
    r.fibers[me].status = at_warp_op;
    if (++w.arrived == w.live) release_warp(r, warp);
    yield(r);
    *lane_out = lane;
    return generation;
}

inline warp_exchange& my_warp() { return current_run->warps[current_run->current / warp_lanes]; }

template <typename T>
T shuffle(T var, int src_lane_or_delta, int width, int mode) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "hip-remote: __shfl of a type over 8 bytes");
    std::uint64_t bits = 0;
    std::memcpy(&bits, &var, sizeof(T));
    unsigned lane;
    unsigned g = warp_op(bits, &lane);
    if (width <= 0 || width > (int)warp_lanes) width = (int)warp_lanes;
    int self = (int)lane, base = self & ~(width - 1), src = self;
    switch (mode) {
        case 0: src = base + (src_lane_or_delta & (width - 1)); break;                      // __shfl
        case 1: src = (self - src_lane_or_delta < base) ? self : self - src_lane_or_delta; break;  // up
        case 2: src = ((self & (width - 1)) + src_lane_or_delta >= width) ? self : self + src_lane_or_delta; break;
        default: src = self ^ src_lane_or_delta; if (src >= base + width || src < 0) src = self; break;  // xor
    }
    warp_exchange& w = my_warp();
    if (src < 0 || src >= (int)warp_lanes || !(w.mask[g] >> src & 1)) src = self;
    T out;
    std::memcpy(&out, &w.values[g][src], sizeof(T));
    return out;
}

// The warp's votes, and in `*live` the lanes that voted.
inline std::uint64_t ballot(int predicate, std::uint64_t* live = nullptr) {
    unsigned lane;
    unsigned g = warp_op(predicate != 0, &lane);
    warp_exchange& w = my_warp();
    std::uint64_t out = 0;
    for (unsigned i = 0; i < warp_lanes; ++i)
        if ((w.mask[g] >> i & 1) && w.values[g][i]) out |= 1ull << i;
    if (live) *live = w.mask[g];
    return out;
}

// Lanes whose `value` equals this lane's, among those that took part.
template <typename T>
std::uint64_t match_any(T value) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "hip-remote: __match_* of a type over 8 bytes");
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    unsigned lane;
    unsigned g = warp_op(bits, &lane);
    warp_exchange& w = my_warp();
    std::uint64_t out = 0;
    for (unsigned i = 0; i < warp_lanes; ++i)
        if ((w.mask[g] >> i & 1) && w.values[g][i] == bits) out |= 1ull << i;
    return out;
}

inline std::uint64_t active_mask() {
    unsigned lane;
    unsigned g = warp_op(0, &lane);
    return my_warp().mask[g];
}

// Runs the block's threads as fibers; `body` is one thread's kernel call.
inline void run_fibers(const hip_remote_block_ctx* ctx, void (*body)(void*), void* arg) {
    unsigned count = ctx->block[0] * ctx->block[1] * ctx->block[2];
    unsigned warps = (count + warp_lanes - 1) / warp_lanes;
    block_run r{};
    r.fibers = static_cast<fiber*>(std::calloc(count, sizeof(fiber)));
    r.warps = static_cast<warp_exchange*>(std::calloc(warps, sizeof(warp_exchange)));
    if (!r.fibers || !r.warps || count > max_fibers) {
        std::free(r.fibers);
        std::free(r.warps);
        fault(HIP_REMOTE_FAULT_LAUNCH, "out of memory for the block's fibers");
        return;
    }
    r.count = count;
    r.live = count;
    r.body = body;
    r.body_arg = arg;
    for (unsigned w = 0; w < warps; ++w) r.warps[w].live = std::min(warp_lanes, count - w * warp_lanes);
    stack_pool* pool = acquire_pool();
    bool ready = pool != nullptr;
    unsigned i = 0;
    for (unsigned z = 0; z < ctx->block[2]; ++z)
        for (unsigned y = 0; y < ctx->block[1]; ++y)
            for (unsigned x = 0; x < ctx->block[0]; ++x, ++i) {
                fiber& f = r.fibers[i];
                f.thread_idx = uint3{x, y, z};
                char* stack = pool ? fiber_stack(*pool, i) : nullptr;
                if (!stack || !make_context(f.context, stack, fiber_stack_size, fiber_main)) ready = false;
            }
    if (!ready) {
        fault(HIP_REMOTE_FAULT_LAUNCH, "cannot allocate the block's fiber stacks");
    } else {
        block_run* outer = current_run;
        current_run = &r;
        while (r.live > 0 && !r.aborted) {
            bool progressed = false;
            for (unsigned f = 0; f < r.count && !r.aborted; ++f) {
                if (r.fibers[f].status != runnable) continue;
                r.current = f;
                state.thread_idx = r.fibers[f].thread_idx;
                switch_context(r.scheduler, r.fibers[f].context);
                progressed = true;
            }
            if (!progressed && r.live > 0 && !r.aborted) {
                // Every live thread waits, but not all at the same kind of rendezvous: lanes
                // at a warp operation whose warp-mates wait at the block barrier took a branch
                // of their own; they go on among themselves (the active mask), as a GPU runs
                // a divergent branch with the lanes that took it.
                bool released = false;
                for (unsigned w = 0; w < (r.count + warp_lanes - 1) / warp_lanes; ++w)
                    if (r.warps[w].arrived > 0) {
                        release_warp(r, w);
                        released = true;
                    }
                if (!released) {
                    fault(HIP_REMOTE_FAULT_LAUNCH, "the threads of a block wait for each other forever (fiber scheduler)");
                    break;
                }
            }
        }
        current_run = outer;
    }
    if (pool) release_pool(pool);
    std::free(r.fibers);
    std::free(r.warps);
}

[[noreturn]] inline void end_block() {
    if (block_run* r = current_run) {
        r->aborted = true;
        switch_context(r->fibers[r->current].context, r->scheduler);  // never resumed
    }
    if (plain_exit) longjmp(*plain_exit, 1);
    std::abort();  // unreachable: every kernel runs inside run_block
}

}  // namespace __hip_remote
}  // namespace

// A failing assert ends the block and the launch with hipErrorAssert; the worker goes on.
// Defined here, hidden, so that glibc's assert macro calls this and not the process-wide
// abort; weak, as the libm aliases above, for -fgpu-rdc links.
extern "C" __attribute__((visibility("hidden"), weak, noreturn)) void __assert_fail(const char* expr, const char* file,
                                                                                      unsigned int line,
                                                                                      const char* function) noexcept {
    char message[1024];
    const uint3 b = ::__hip_remote::state.block_idx, t = ::__hip_remote::state.thread_idx;
    snprintf(message, sizeof message, "%s:%u: %s: block [%u,%u,%u], thread [%u,%u,%u] Assertion `%s` failed.", file, line,
             function, b.x, b.y, b.z, t.x, t.y, t.z, expr);
    ::__hip_remote::fault(HIP_REMOTE_FAULT_ASSERT, message);
    ::__hip_remote::end_block();
}
// Kernel printf: buffered by the worker per launch (see docs/HOST_MODULES.md).
extern "C" __attribute__((visibility("hidden"), weak)) int printf(const char* format, ...) {
    va_list args;
    va_start(args, format);
    int len = ::__hip_remote::device_vprintf(format, args);
    va_end(args);
    return len;
}
static inline void __trap() {
    ::__hip_remote::fault(HIP_REMOTE_FAULT_LAUNCH, "__trap() in a kernel");
    ::__hip_remote::end_block();
}
static inline void __syncthreads() { (void)::__hip_remote::barrier(0, ::__hip_remote::barrier_count_mode); }
static inline int __syncthreads_count(int p) { return ::__hip_remote::barrier(p, ::__hip_remote::barrier_count_mode); }
static inline int __syncthreads_and(int p) { return ::__hip_remote::barrier(p, ::__hip_remote::barrier_and_mode); }
static inline int __syncthreads_or(int p) { return ::__hip_remote::barrier(p, ::__hip_remote::barrier_or_mode); }
static inline void __syncwarp(unsigned long long = 0) { (void)::__hip_remote::active_mask(); }
static inline unsigned long long __activemask() { return ::__hip_remote::active_mask(); }
static inline unsigned long long __ballot(int p) { return ::__hip_remote::ballot(p); }
static inline int __any(int p) { return ::__hip_remote::ballot(p) != 0; }
static inline int __all(int p) {
    std::uint64_t live = 0;
    return ::__hip_remote::ballot(p, &live) == live;
}
static inline unsigned long long __ballot_sync(unsigned long long, int p) { return __ballot(p); }
static inline int __any_sync(unsigned long long, int p) { return __any(p); }
static inline int __all_sync(unsigned long long, int p) { return __all(p); }
template <typename T>
static inline unsigned long long __match_any(T value) { return ::__hip_remote::match_any(value); }
template <typename M, typename T>
static inline unsigned long long __match_any_sync(M, T value) { return ::__hip_remote::match_any(value); }
// Every lane that took part, if all hold the same value (then *pred = 1), else 0.
template <typename T>
static inline unsigned long long __match_all(T value, int* pred) {
    std::uint64_t live = ::__hip_remote::active_mask();
    std::uint64_t same = ::__hip_remote::match_any(value);
    *pred = same == live;
    return same == live ? live : 0;
}
template <typename M, typename T>
static inline unsigned long long __match_all_sync(M, T value, int* pred) { return __match_all(value, pred); }
static inline unsigned int __lane_id() { return ::__hip_remote::linear_thread(threadIdx, blockDim) % warpSize; }
template <typename T>
static inline T __shfl(T var, int src_lane, int width = warpSize) { return ::__hip_remote::shuffle(var, src_lane, width, 0); }
template <typename T>
static inline T __shfl_up(T var, unsigned int delta, int width = warpSize) { return ::__hip_remote::shuffle(var, (int)delta, width, 1); }
template <typename T>
static inline T __shfl_down(T var, unsigned int delta, int width = warpSize) { return ::__hip_remote::shuffle(var, (int)delta, width, 2); }
template <typename T>
static inline T __shfl_xor(T var, int lane_mask, int width = warpSize) { return ::__hip_remote::shuffle(var, lane_mask, width, 3); }
template <typename M, typename T>
static inline T __shfl_sync(M, T var, int src_lane, int width = warpSize) { return __shfl(var, src_lane, width); }
template <typename M, typename T>
static inline T __shfl_up_sync(M, T var, unsigned int delta, int width = warpSize) { return __shfl_up(var, delta, width); }
template <typename M, typename T>
static inline T __shfl_down_sync(M, T var, unsigned int delta, int width = warpSize) { return __shfl_down(var, delta, width); }
template <typename M, typename T>
static inline T __shfl_xor_sync(M, T var, int lane_mask, int width = warpSize) { return __shfl_xor(var, lane_mask, width); }

// HIP's AMD-specific device functions (__bitextract_*, __builtin_amdgcn_perm & co): the same
// portable file hipcc's NVIDIA pass uses, served beside the prelude.
#include <hip_remote/amd_device_functions.h>
// abort() in a kernel ends the launch with an error, as on a GPU, not the worker: defined
// here, hidden inside the module, as printf above.
extern "C" __attribute__((visibility("hidden"), weak, noreturn)) void abort() noexcept {
    ::__hip_remote::fault(HIP_REMOTE_FAULT_LAUNCH, "abort() in a kernel");
    ::__hip_remote::end_block();
    __builtin_unreachable();
}

// ---- kernel table machinery (used by the generated tail) --------------------------------
namespace {
namespace __hip_remote {

template <std::size_t N>
struct offsets_array {
    std::uint32_t v[N + 1];
};

// Natural C layout of the parameters in order: each aligned to its own alignment, as the
// packed blob of hipModuleLaunchKernel's `extra` buffer is laid out.
template <typename... P>
constexpr offsets_array<sizeof...(P)> param_offsets() {
    constexpr std::size_t n = sizeof...(P);
    const std::size_t sizes[n + 1] = {sizeof(P)..., 0};
    const std::size_t aligns[n + 1] = {alignof(P)..., 1};
    offsets_array<n> out{};
    std::size_t offset = 0;
    for (std::size_t i = 0; i < n; ++i) {
        offset = (offset + aligns[i] - 1) / aligns[i] * aligns[i];
        out.v[i] = static_cast<std::uint32_t>(offset);
        offset += sizes[i];
    }
    return out;
}

template <typename... P>
struct signature {};

template <typename... P, std::size_t... I>
constexpr std::array<hip_remote_param, sizeof...(P) + 1> make_param_table(signature<P...>, std::index_sequence<I...>) {
    constexpr auto offsets = param_offsets<P...>();
    return {{hip_remote_param{offsets.v[I], static_cast<std::uint32_t>(sizeof(P))}..., hip_remote_param{0, 0}}};
}

template <typename... P>
constexpr std::array<hip_remote_param, sizeof...(P) + 1> param_table =
    make_param_table(signature<P...>{}, std::index_sequence_for<P...>{});

template <typename T>
T load_param(const unsigned char* at) {
    static_assert(!std::is_reference<T>::value, "hip-remote: kernel parameters cannot be references");
    static_assert(std::is_trivially_copyable<T>::value, "hip-remote: kernel parameters must be trivially copyable");
    alignas(T) unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, at, sizeof(T));
    return *std::launder(reinterpret_cast<T*>(bytes));
}

template <typename... P, std::size_t... I>
void run_threads(void (*kernel)(P...), const unsigned char* args, const hip_remote_block_ctx* ctx,
                 std::index_sequence<I...>) {
    constexpr auto offsets = param_offsets<P...>();
    (void)offsets;
    (void)args;
    // Loaded once per block; every thread gets its own copies through the call.
    std::tuple<P...> values(load_param<P>(args + offsets.v[I])...);
    block_state& s = state;
    s.grid_dim = uint3{ctx->grid[0], ctx->grid[1], ctx->grid[2]};
    s.block_dim = uint3{ctx->block[0], ctx->block[1], ctx->block[2]};
    s.block_idx = uint3{ctx->block_idx[0], ctx->block_idx[1], ctx->block_idx[2]};
    s.dynamic_shared = ctx->dynamic_shared;
    s.services = ctx->services;
    if (HIP_REMOTE_FIBERS) {
        auto thread = [&]() { std::apply(kernel, values); };
        using thread_type = decltype(thread);
        run_fibers(ctx, [](void* t) { (*static_cast<thread_type*>(t))(); }, &thread);
        return;
    }
    // A fault (assert) in one thread ends the block here.
    jmp_buf exit;
    plain_exit = &exit;
    if (setjmp(exit) == 0) {
        for (unsigned int z = 0; z < ctx->block[2]; ++z)
            for (unsigned int y = 0; y < ctx->block[1]; ++y)
                for (unsigned int x = 0; x < ctx->block[0]; ++x) {
                    s.thread_idx = uint3{x, y, z};
                    std::apply(kernel, values);
                }
    }
    plain_exit = nullptr;
}

template <typename... P>
void run_kernel_block(void (*kernel)(P...), const void* args, const hip_remote_block_ctx* ctx) {
    run_threads(kernel, static_cast<const unsigned char*>(args), ctx, std::index_sequence_for<P...>{});
}

// The hip_remote_block_fn of kernel K. noexcept: nothing may unwind into the worker.
template <auto K>
void run_block(const void* args, const hip_remote_block_ctx* ctx) noexcept {
    run_kernel_block(K, args, ctx);
}

template <typename T>
struct entry_kind {
    static constexpr int value = 0;
};
template <typename... P>
struct entry_kind<void (*)(P...)> {
    static constexpr int value = 1;
};
template <typename... P>
struct entry_kind<void (*)(P...) noexcept> {
    static constexpr int value = 1;
};
// Writable objects only: a const global lives in read-only memory and cannot be a copy target.
template <typename T>
struct entry_kind<T*> {
    static constexpr int value =
        (std::is_function<T>::value || std::is_const<typename std::remove_all_extents<T>::type>::value) ? 0 : 2;
};

template <typename... P>
hip_remote_kernel kernel_entry(void (*)(P...), hip_remote_block_fn run) {
    return hip_remote_kernel{nullptr, run, static_cast<std::uint32_t>(sizeof...(P)), param_table<P...>.data(), 0, 0};
}

struct candidate {
    const char* fallback_name;
    bool resolve_name;
    int name_expression;
    const void* address;
    hip_remote_kernel kernel;
    hip_remote_global global;
};

template <auto P>
candidate candidate_of(const char* fallback_name, bool resolve_name, int name_expression) {
    candidate c{fallback_name, resolve_name, name_expression, nullptr, {}, {}};
    using T = decltype(P);
    if constexpr (std::is_pointer<T>::value) c.address = (const void*)P;
    if constexpr (entry_kind<T>::value == 1) {
        c.kernel = kernel_entry(P, &run_block<P>);
    } else if constexpr (entry_kind<T>::value == 2) {
        c.global = hip_remote_global{nullptr, (void*)P, sizeof(*P)};
    }
    return c;
}

// The symbol name of `address` when the dynamic symbol table has one exactly there (the
// lowered, mangled name of a C++ kernel or variable), else `fallback`.
inline const char* symbol_name(const void* address, const char* fallback) {
    Dl_info info;
    if (address && dladdr(address, &info) && info.dli_sname && info.dli_saddr == address) return info.dli_sname;
    return fallback;
}

// Fills the tables from the candidates, once, from the module's constructor.
inline void build(const candidate* c, std::size_t n, hip_remote_kernel* kernels, hip_remote_global* globals,
                  hip_remote_host_module* module, const char** lowered_names) {
    std::uint32_t nk = 0, ng = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const char* name = c[i].resolve_name ? symbol_name(c[i].address, c[i].fallback_name) : c[i].fallback_name;
        if (c[i].name_expression >= 0) lowered_names[c[i].name_expression] = name;
        if (c[i].kernel.run_block) {
            bool seen = false;
            for (std::uint32_t j = 0; j < nk; ++j) seen = seen || std::strcmp(kernels[j].name, name) == 0;
            if (!seen) {
                kernels[nk] = c[i].kernel;
                kernels[nk].name = name;
                ++nk;
            }
        } else if (c[i].global.address) {
            bool seen = false;
            for (std::uint32_t j = 0; j < ng; ++j) seen = seen || std::strcmp(globals[j].name, name) == 0;
            if (!seen) {
                globals[ng] = c[i].global;
                globals[ng].name = name;
                ++ng;
            }
        }
    }
    module->num_kernels = nk;
    module->num_globals = ng;
}

}  // namespace __hip_remote
}  // namespace
