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

#if defined(__cplusplus)
/* hipCreateChannelDesc<T>(), as ROCm's amd_channel_descriptor.h: the channel layout of an
 * element type; a type without one is hipChannelFormatKindNone with no bits. */
template <typename T>
static inline hipChannelFormatDesc hipCreateChannelDesc() {
  return hipCreateChannelDesc(0, 0, 0, 0, hipChannelFormatKindNone);
}
#define HIP_REMOTE_CHANNEL_DESC(type, scalar, n, kind)                                        \
  template <>                                                                                 \
  inline hipChannelFormatDesc hipCreateChannelDesc<type>() {                                  \
    int e = (int)sizeof(scalar) * 8;                                                          \
    return hipCreateChannelDesc(e, (n) > 1 ? e : 0, (n) > 2 ? e : 0, (n) > 3 ? e : 0, kind);  \
  }
#define HIP_REMOTE_CHANNEL_DESCS(prefix, scalar, kind)    \
  HIP_REMOTE_CHANNEL_DESC(prefix##1, scalar, 1, kind)     \
  HIP_REMOTE_CHANNEL_DESC(prefix##2, scalar, 2, kind)     \
  HIP_REMOTE_CHANNEL_DESC(prefix##3, scalar, 3, kind)     \
  HIP_REMOTE_CHANNEL_DESC(prefix##4, scalar, 4, kind)
HIP_REMOTE_CHANNEL_DESC(char, char, 1, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESC(signed char, signed char, 1, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESC(unsigned char, unsigned char, 1, hipChannelFormatKindUnsigned)
HIP_REMOTE_CHANNEL_DESC(signed short, signed short, 1, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESC(unsigned short, unsigned short, 1, hipChannelFormatKindUnsigned)
HIP_REMOTE_CHANNEL_DESC(signed int, signed int, 1, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESC(unsigned int, unsigned int, 1, hipChannelFormatKindUnsigned)
HIP_REMOTE_CHANNEL_DESC(signed long, signed long, 1, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESC(unsigned long, unsigned long, 1, hipChannelFormatKindUnsigned)
HIP_REMOTE_CHANNEL_DESC(float, float, 1, hipChannelFormatKindFloat)
HIP_REMOTE_CHANNEL_DESCS(char, signed char, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESCS(uchar, unsigned char, hipChannelFormatKindUnsigned)
HIP_REMOTE_CHANNEL_DESCS(short, signed short, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESCS(ushort, unsigned short, hipChannelFormatKindUnsigned)
HIP_REMOTE_CHANNEL_DESCS(int, signed int, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESCS(uint, unsigned int, hipChannelFormatKindUnsigned)
HIP_REMOTE_CHANNEL_DESCS(long, signed long, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESCS(ulong, unsigned long, hipChannelFormatKindUnsigned)
HIP_REMOTE_CHANNEL_DESCS(float, float, hipChannelFormatKindFloat)
#undef HIP_REMOTE_CHANNEL_DESCS
#undef HIP_REMOTE_CHANNEL_DESC
/* Half-precision channels, as ROCm's amd_channel_descriptor.h: 16-bit float components. */
static inline hipChannelFormatDesc hipCreateChannelDescHalf() {
  int e = (int)sizeof(unsigned short) * 8;
  return hipCreateChannelDesc(e, 0, 0, 0, hipChannelFormatKindFloat);
}
static inline hipChannelFormatDesc hipCreateChannelDescHalf1() { return hipCreateChannelDescHalf(); }
static inline hipChannelFormatDesc hipCreateChannelDescHalf2() {
  int e = (int)sizeof(unsigned short) * 8;
  return hipCreateChannelDesc(e, e, 0, 0, hipChannelFormatKindFloat);
}

/* The kernel-typed occupancy forms of ROCm's hip_runtime_api.h (rocm-examples' occupancy
 * calls them with a __global__ function): the kernel's host-side address. */
template <class T>
static inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, T f, int blockSize,
                                                                     size_t dynSharedMemPerBlk) {
  return hipOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, reinterpret_cast<const void*>(f), blockSize,
                                                      dynSharedMemPerBlk);
}
template <class T>
static inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, T f, int blockSize,
                                                                              size_t dynSharedMemPerBlk,
                                                                              unsigned int flags) {
  return hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, reinterpret_cast<const void*>(f), blockSize,
                                                               dynSharedMemPerBlk, flags);
}
template <class T>
static inline hipError_t hipOccupancyMaxPotentialBlockSize(int* gridSize, int* blockSize, T f,
                                                           size_t dynSharedMemPerBlk = 0, int blockSizeLimit = 0) {
  return hipOccupancyMaxPotentialBlockSize(gridSize, blockSize, reinterpret_cast<const void*>(f), dynSharedMemPerBlk,
                                           blockSizeLimit);
}
#endif

#endif /* HIP_INCLUDE_HIP_HIP_RUNTIME_H */
