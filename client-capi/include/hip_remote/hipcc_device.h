/*
 * hip-remote: the HIP kernel language for hip-remote's hipcc, pre-included (-include) in both
 * of its clang passes over an unmodified HIP source:
 *   host pass   (clang -x hip --cuda-host-only -nogpuinc): kernels are parsed but not emitted, so
 *               device functions here are only declared; <<<>>> goes through
 *               __hipPushCallConfiguration (exported by libamdhip64.so.7 of client-capi);
 *   NVIDIA pass (clang -x cuda --cuda-device-only -nocudainc, sm_70 PTX): definitions on clang's
 *               NVPTX builtins, no CUDA SDK, no unresolved symbols in the PTX.
 * Kernel printf/assert write the device log (device_log.h) that the worker's cuda backend prints.
 * Feature table: docs/KERNELS.md.
 */
#ifndef HIP_REMOTE_HIPCC_DEVICE_H
#define HIP_REMOTE_HIPCC_DEVICE_H

#if !defined(__cplusplus) || !defined(__clang__) || !(defined(__CUDA__) || defined(__HIP__))
#error "hipcc_device.h is for hip-remote's hipcc (clang -x hip or -x cuda)"
#endif

#ifndef __HIP__
#define __HIP__ 1
#endif
#ifndef __HIPCC__
#define __HIPCC__ 1
#endif
#if defined(__NVPTX__)
#define __HIP_DEVICE_COMPILE__ 1
#endif

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))
/* __noinline__ is a keyword of clang's CUDA/HIP modes since clang 15 (a macro would break
 * libstdc++'s __attribute__((__noinline__))). */

/* Must precede the C/C++ math headers (see device_math.h). */
#include "device_math.h"

#include <hip/hip_runtime.h>

#include "device_builtins.h"
#define __HIP_REMOTE_MATH_DEFINITIONS 1
#include "device_math.h"
#include "device_vector_ops.h"
#include "amd_device_functions.h"

/* ---- C library functions kernels call: memcpy and memset (clang expands them inline) */
__HIP_REMOTE_DEVICE_FN void* memcpy(void* dst, const void* src, size_t n) __HIP_REMOTE_BODY({ return __builtin_memcpy(dst, src, n); })
__HIP_REMOTE_DEVICE_FN void* memset(void* dst, int value, size_t n) __HIP_REMOTE_BODY({ return __builtin_memset(dst, value, n); })

/* ---- launches */
#define HIP_KERNEL_NAME(...) __VA_ARGS__
#define HIP_SYMBOL(symbol) (&(symbol))
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_DYNAMIC_SHARED_ATTRIBUTE
/* ROCm's shape: variadic after the kernel's name, so a kernel without arguments launches as
 * hipLaunchKernelGGL(k, grid, block, 0, 0). */
#define hipLaunchKernelGGLInternal(kernel_name, num_blocks, num_threads, shared_bytes, stream, ...) \
  do {                                                                                              \
    kernel_name<<<(num_blocks), (num_threads), (shared_bytes), (stream)>>>(__VA_ARGS__);             \
  } while (0)
#define hipLaunchKernelGGL(kernel_name, ...) hipLaunchKernelGGLInternal((kernel_name), __VA_ARGS__)
#if !defined(__NVPTX__)
/* <<<grid, block>>> may leave out the shared-memory size and the stream. */
extern "C" hipError_t __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shared_bytes = 0, hipStream_t stream = 0);
#else
/* clang's device pass type-checks host code's <<<>>> against CUDA's configuration call. */
extern "C" int cudaConfigureCall(dim3 grid, dim3 block, size_t shared_bytes = 0, void* stream = 0);
#endif

/* ---- printf and assert in kernels (the host pass only declares them). */
#if !defined(__NVPTX__)
template <typename... Args>
__device__ int printf(const char* format, Args... args);
extern "C" __device__ void __assert_fail(const char* expression, const char* file, unsigned int line,
                                         const char* function);
__device__ void abort();
#else
#include "device_log.h"
template <typename... Args>
static __device__ inline int printf(const char* format, Args... args) {
  return __hip_remote_printf(format, args...);
}
/* abort() in a kernel: a failed assertion's record and the thread's end, not a trap (which
 * would end the CUDA context every session on the GPU shares). */
static __device__ inline void abort() { __hip_remote_assert_fail("abort()", "", 0, "kernel"); }
/* glibc's assert() calls __assert_fail: a device overload writes the device log instead. */
extern "C" {
static __device__ inline void __assert_fail(const char* expression, const char* file, unsigned int line,
                                            const char* function) {
  __hip_remote_assert_fail(expression, file, line, function);
}
}
#endif

#endif /* HIP_REMOTE_HIPCC_DEVICE_H */
