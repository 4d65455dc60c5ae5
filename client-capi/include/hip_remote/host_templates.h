/*
 * hip-remote: hip_remote/host_templates.h: the C++ templates of HIP's host API that ROCm's
 * headers define inline (hipCreateChannelDesc<T>(), the kernel-typed occupancy forms).
 * Included by hip/hip_runtime.h; the host backend's hiprtc serves it too, so that a device
 * source of hipcc (a whole HIP program, its host code left out) still finds these names.
 * Needs hip/hip_runtime_api.h.
 */

#ifndef HIP_REMOTE_HOST_TEMPLATES_H
#define HIP_REMOTE_HOST_TEMPLATES_H

#include <hip/hip_runtime_api.h>

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
#if !defined(__LP64__) /* as ROCm: 64-bit longs have no channel layout (the generic answer) */
HIP_REMOTE_CHANNEL_DESC(signed long, signed long, 1, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESC(unsigned long, unsigned long, 1, hipChannelFormatKindUnsigned)
#endif
HIP_REMOTE_CHANNEL_DESC(float, float, 1, hipChannelFormatKindFloat)
HIP_REMOTE_CHANNEL_DESCS(char, signed char, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESCS(uchar, unsigned char, hipChannelFormatKindUnsigned)
HIP_REMOTE_CHANNEL_DESCS(short, signed short, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESCS(ushort, unsigned short, hipChannelFormatKindUnsigned)
HIP_REMOTE_CHANNEL_DESCS(int, signed int, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESCS(uint, unsigned int, hipChannelFormatKindUnsigned)
#if !defined(__LP64__)
HIP_REMOTE_CHANNEL_DESCS(long, signed long, hipChannelFormatKindSigned)
HIP_REMOTE_CHANNEL_DESCS(ulong, unsigned long, hipChannelFormatKindUnsigned)
#endif
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

/* The block size with the most resident threads per multiprocessor when a block of n threads
 * needs dynamic_shared(n) bytes, as ROCm's hip_runtime_api.h searches it: every multiple of
 * the warp size from the limit (default and at most the kernel's maximum) down, the first best
 * kept; *min_grid_size is the blocks per multiprocessor times their count. Errors: NULL
 * outputs or kernel, 1 (hipErrorInvalidValue); otherwise what the queries answer. */
template <typename UnaryFunction, class T>
static inline hipError_t hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
    int* min_grid_size, int* block_size, T func, UnaryFunction dynamic_shared, int block_size_limit = 0,
    unsigned int flags = 0) {
  if (min_grid_size == NULL || block_size == NULL || reinterpret_cast<const void*>(func) == NULL) {
    return hipErrorInvalidValue;
  }
  int device = 0, threads_per_sm = 0, warp = 0, sm_count = 0;
  hipError_t status = hipGetDevice(&device);
  if (status == hipSuccess) status = hipDeviceGetAttribute(&threads_per_sm, hipDeviceAttributeMaxThreadsPerMultiProcessor, device);
  if (status == hipSuccess) status = hipDeviceGetAttribute(&warp, hipDeviceAttributeWarpSize, device);
  if (status == hipSuccess) status = hipDeviceGetAttribute(&sm_count, hipDeviceAttributeMultiprocessorCount, device);
  hipFuncAttributes attributes;
  if (status == hipSuccess) status = hipFuncGetAttributes(&attributes, reinterpret_cast<const void*>(func));
  if (status != hipSuccess) return status;
  if (warp <= 0) return hipErrorInvalidValue;
  int limit = block_size_limit;
  if (limit == 0 || attributes.maxThreadsPerBlock < limit) limit = attributes.maxThreadsPerBlock;
  int best_threads = 0, best_size = 0, best_blocks = 0;
  for (int aligned = (limit + warp - 1) / warp * warp; aligned > 0; aligned -= warp) {
    const int size = aligned < limit ? aligned : limit;
    int blocks = 0;
    status = hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, reinterpret_cast<const void*>(func), size,
                                                                   static_cast<size_t>(dynamic_shared(size)), flags);
    if (status != hipSuccess) return status;
    if (size * blocks > best_threads) {
      best_threads = size * blocks;
      best_size = size;
      best_blocks = blocks;
    }
    if (best_threads == threads_per_sm) break;
  }
  *min_grid_size = best_blocks * sm_count;
  *block_size = best_size;
  return hipSuccess;
}
template <typename UnaryFunction, class T>
static inline hipError_t hipOccupancyMaxPotentialBlockSizeVariableSMem(int* min_grid_size, int* block_size, T func,
                                                                       UnaryFunction dynamic_shared, int block_size_limit = 0) {
  return hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(min_grid_size, block_size, func, dynamic_shared,
                                                                block_size_limit, 0);
}
#endif

#endif /* HIP_REMOTE_HOST_TEMPLATES_H */
