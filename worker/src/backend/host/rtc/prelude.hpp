// hip-remote host backend: the HIP prelude for hiprtc programs compiled for the worker's CPU.
//
// Force-included (-include) ahead of every program the host backend compiles. It maps the
// HIP kernel language onto plain C++17 for a machine that runs the threads of a block one
// after another: qualifiers become no-ops, threadIdx/blockIdx/blockDim/gridDim read a
// thread-local block state that the generated run_block wrappers set, and atomics are GCC
// __atomic builtins (blocks do run concurrently). __syncthreads, __shared__ and warp
// intrinsics are deliberately absent: the worker refuses programs that use them before this
// file is ever compiled. See docs/HOST_MODULES.md.
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
#include <time.h>

#define HIP_REMOTE_HOST_MODULE_NO_DECLARATION
#include "hip_remote/host_module.h"

// hiprtc defines __HIPCC_RTC__ for the programs it compiles; __HIP_REMOTE_HOST__ tells a
// program it runs on the hip-remote host backend. __HIP_DEVICE_COMPILE__ stays undefined:
// no AMD GPU builtins exist here.
#define __HIPCC_RTC__ 1
#define __HIP_REMOTE_HOST__ 1

// ---- qualifiers ------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

// ---- vector types ----------------------------------------------------------------------
#define HIP_REMOTE_VECTOR_TYPES(T, name)                                                     \
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

// ---- block state -----------------------------------------------------------------------
namespace {
namespace __hip_remote {
struct block_state {
    uint3 thread_idx, block_idx, block_dim, grid_dim;
};
thread_local block_state state;
}  // namespace __hip_remote
}  // namespace

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

#define HIP_REMOTE_INTEGER_ATOMICS(T)                                                           \
    static inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); } \
    static inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED); } \
    static inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_RELAXED); } \
    static inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_RELAXED); }   \
    static inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED); } \
    static inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_RELAXED); } \
    static inline T atomicMin(T* a, T v) {                                                       \
        return ::__hip_remote::atomic_update(a, [v](T old) { return v < old ? v : old; });       \
    }                                                                                            \
    static inline T atomicMax(T* a, T v) {                                                       \
        return ::__hip_remote::atomic_update(a, [v](T old) { return old < v ? v : old; });       \
    }                                                                                            \
    static inline T atomicCAS(T* a, T compare, T v) {                                            \
        __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);  \
        return compare;                                                                          \
    }
HIP_REMOTE_INTEGER_ATOMICS(int)
HIP_REMOTE_INTEGER_ATOMICS(unsigned int)
HIP_REMOTE_INTEGER_ATOMICS(long long)
HIP_REMOTE_INTEGER_ATOMICS(unsigned long long)
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
    }
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

static inline long long clock64() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
static inline long long wall_clock64() { return clock64(); }

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
    for (unsigned int z = 0; z < ctx->block[2]; ++z)
        for (unsigned int y = 0; y < ctx->block[1]; ++y)
            for (unsigned int x = 0; x < ctx->block[0]; ++x) {
                s.thread_idx = uint3{x, y, z};
                std::apply(kernel, values);
            }
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
