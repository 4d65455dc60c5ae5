/*
 * hip-remote: hip/hip_runtime.h: umbrella header
 *
 * Part of hip-remote's own HIP headers (host API only). Types, enum values, struct layouts and
 * prototypes mirror the ROCm 7.2 (HIP 7.2.53211) C ABI exactly so that programs built against
 * these headers run unchanged against a real libamdhip64.so.7 and vice versa. Facts were taken
 * from bindgen output of ROCm 7.2's headers (crate cubecl-hip-sys, bindings_53211.rs), the
 * hip-python 7.x .pxd files, and ROCm 5.2 headers (C++ default arguments).
 * Generated, then reviewed; see client-capi/src/abi/ for the Rust mirror.
 */

#ifndef HIP_INCLUDE_HIP_HIP_RUNTIME_H
#define HIP_INCLUDE_HIP_HIP_RUNTIME_H

/* What ROCm's hip_runtime.h brings in for host code (outside hiprtc). */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__cplusplus)
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#endif
#include <hip/hip_runtime_api.h>
#include <hip/hip_vector_types.h>
#include <hip/library_types.h>

/* Function and variable qualifiers. Under a HIP compiler (clang -x hip) they are the
 * attributes hipcc gives them; for a plain C/C++ host compiler they are empty, as ROCm's
 * host_defines.h makes them, so sources that mark host helpers __host__ __device__ (or
 * declare kernels they launch through modules) compile unchanged. */
#if defined(__clang__) && defined(__HIP__)
#ifndef __host__
#define __host__ __attribute__((host))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __shared__
#define __shared__ __attribute__((shared))
#endif
#ifndef __constant__
#define __constant__ __attribute__((constant))
#endif
#ifndef __managed__
#define __managed__ __attribute__((managed))
#endif
#else
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __global__
#define __global__
#endif
#ifndef __shared__
#define __shared__
#endif
#ifndef __constant__
#define __constant__
#endif
#ifndef __managed__
#define __managed__
#endif
/* As ROCm's host_defines.h for a non-HIP compiler: __noinline__ is empty, since libstdc++
 * spells the attribute `__attribute__((__noinline__))` in headers included after this one,
 * and a macro expanding to another attribute would break them ("'noinline' was not declared"). */
#ifndef __noinline__
#define __noinline__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif
#endif

/* The host API's C++ templates (hipCreateChannelDesc<T>(), the kernel-typed occupancy forms). */
#include <hip_remote/host_templates.h>

#endif /* HIP_INCLUDE_HIP_HIP_RUNTIME_H */
