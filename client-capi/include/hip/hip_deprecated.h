/*
 * hip-remote: hip/hip_deprecated.h: pre-ROCm-6 device-property ABI (R0000)
 *
 * Part of hip-remote's own HIP headers (host API only). Types, enum values, struct layouts and
 * prototypes mirror the ROCm 7.2 (HIP 7.2.53211) C ABI exactly so that programs built against
 * these headers run unchanged against a real libamdhip64.so.7 and vice versa. Facts were taken
 * from bindgen output of ROCm 7.2's headers (crate cubecl-hip-sys, bindings_53211.rs), the
 * hip-python 7.x .pxd files, and ROCm 5.2 headers (C++ default arguments).
 * Generated, then reviewed; see client-capi/src/abi/ for the Rust mirror.
 */

#ifndef HIP_INCLUDE_HIP_HIP_DEPRECATED_H
#define HIP_INCLUDE_HIP_HIP_DEPRECATED_H

/* Included on its own, it needs the runtime's types (which include this file at their end). */
#include <hip/hip_runtime_api.h>

/* Layout of hipDeviceProp_t before ROCm 6.0: what hipGetDevicePropertiesR0000 fills in. ROCm's
 * library also still exports the unsuffixed symbols hipGetDeviceProperties and hipChooseDevice
 * (version hip_4.2) with this R0000 layout, for binaries built before ROCm 6; source code never
 * reaches them because hip_runtime_api.h #defines those names to the R0600 functions. */
typedef struct hipDeviceProp_tR0000 {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  int memoryClockRate;
  int memoryBusWidth;
  size_t totalConstMem;
  int major;
  int minor;
  int multiProcessorCount;
  int l2CacheSize;
  int maxThreadsPerMultiProcessor;
  int computeMode;
  int clockInstructionRate;
  hipDeviceArch_t arch;
  int concurrentKernels;
  int pciDomainID;
  int pciBusID;
  int pciDeviceID;
  size_t maxSharedMemoryPerMultiProcessor;
  int isMultiGpuBoard;
  int canMapHostMemory;
  int gcnArch;
  char gcnArchName[256];
  int integrated;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;
  int maxTexture1DLinear;
  int maxTexture1D;
  int maxTexture2D[2];
  int maxTexture3D[3];
  unsigned int* hdpMemFlushCntl;
  unsigned int* hdpRegFlushCntl;
  size_t memPitch;
  size_t textureAlignment;
  size_t texturePitchAlignment;
  int kernelExecTimeoutEnabled;
  int ECCEnabled;
  int tccDriver;
  int cooperativeMultiDeviceUnmatchedFunc;
  int cooperativeMultiDeviceUnmatchedGridDim;
  int cooperativeMultiDeviceUnmatchedBlockDim;
  int cooperativeMultiDeviceUnmatchedSharedMem;
  int isLargeBar;
  int asicRevision;
  int managedMemory;
  int directManagedMemAccessFromHost;
  int concurrentManagedAccess;
  int pageableMemoryAccess;
  int pageableMemoryAccessUsesHostPageTables;
} hipDeviceProp_tR0000;

#ifdef __cplusplus
extern "C" {
#endif

hipError_t hipGetDevicePropertiesR0000(hipDeviceProp_tR0000* prop, int device);
hipError_t hipChooseDeviceR0000(int* device, const hipDeviceProp_tR0000* prop);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIP_INCLUDE_HIP_HIP_DEPRECATED_H */
