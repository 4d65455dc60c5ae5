// hip-remote: HIP kernel-language compatibility for NVRTC.
// Served to NVRTC as the in-memory headers <hip/hip_runtime.h>, <hip/hip_runtime_api.h>,
// <hip/hip_version.h>, <hip/hip_fp16.h>, and pre-included into every program as hiprtc's own
// headers are, so HIP kernel sources compile unchanged for NVIDIA GPUs: HIP's built-ins are CUDA's under
// other names, and the few differing intrinsics are mapped here.
#pragma once
#ifndef HIP_REMOTE_HIP_COMPAT_H
#define HIP_REMOTE_HIP_COMPAT_H
#define __HIP_PLATFORM_NVIDIA__ 1
#define __HIP_PLATFORM_NVCC__ 1
#define __HIPCC_RTC__ 1
#define __HIPCC__ 1
#define __HIP_DEVICE_COMPILE__ 1

// HIP's version (also served as <hip/hip_version.h>): hip-remote's.
#ifndef HIP_VERSION_H
#define HIP_VERSION_H
#define HIP_VERSION_MAJOR 7
#define HIP_VERSION_MINOR 2
#define HIP_VERSION_PATCH 53211
#define HIP_VERSION (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)
#endif

// <hip/hip_fp16.h> (served as this header too): CUDA's __half and __half_raw (CuPy's
// float16.cuh expects them predefined under hiprtc, as AMD's hiprtc has them), from the
// toolkit's cuda_fp16.h: the worker adds its include directory when it has one
// (HIP_REMOTE_HAVE_CUDA_FP16); NVRTC itself carries no copy.
#if defined(HIP_REMOTE_HAVE_CUDA_FP16)
#include <cuda_fp16.h>
#elif defined(__has_include)
#if __has_include(<cuda_fp16.h>)
#include <cuda_fp16.h>
#endif
#endif

#define hipThreadIdx_x threadIdx.x
#define hipThreadIdx_y threadIdx.y
#define hipThreadIdx_z threadIdx.z
#define hipBlockIdx_x blockIdx.x
#define hipBlockIdx_y blockIdx.y
#define hipBlockIdx_z blockIdx.z
#define hipBlockDim_x blockDim.x
#define hipBlockDim_y blockDim.y
#define hipBlockDim_z blockDim.z
#define hipGridDim_x gridDim.x
#define hipGridDim_y gridDim.y
#define hipGridDim_z gridDim.z

#define HIP_KERNEL_NAME(...) __VA_ARGS__
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_DYNAMIC_SHARED_ATTRIBUTE

// HIP's warp intrinsics have no mask argument: on NVIDIA they act on the lanes active at the
// call (HIP code calls them in divergent branches, where a full-warp mask would hang).
#define __shfl(var, lane, ...) __shfl_sync(__activemask(), var, lane, ##__VA_ARGS__)
#define __shfl_up(var, delta, ...) __shfl_up_sync(__activemask(), var, delta, ##__VA_ARGS__)
#define __shfl_down(var, delta, ...) __shfl_down_sync(__activemask(), var, delta, ##__VA_ARGS__)
#define __shfl_xor(var, mask, ...) __shfl_xor_sync(__activemask(), var, mask, ##__VA_ARGS__)
#define __ballot(pred) __ballot_sync(__activemask(), pred)
#define __any(pred) __any_sync(__activemask(), pred)
#define __all(pred) __all_sync(__activemask(), pred)

// HIP spells the 64-bit clock and a few math helpers differently.
#define clock64() clock64()
#define __threadfence_block() __threadfence_block()

typedef int hipError_t;

// Kernel printf and assert write the worker's device log (the same header as hipcc's clang
// pass): NVRTC's own printf goes to CUDA's printf FIFO and its assert traps, which would poison
// the worker's shared context. NVRTC predeclares printf, so the name is redirected after it.
#include "hip_remote/device_log.h"
#define printf __hip_remote_printf
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : __hip_remote_assert_fail(#e, __FILE__, __LINE__, __PRETTY_FUNCTION__))
#endif
#endif
