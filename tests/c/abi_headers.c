/*
 * ABI pin for hip-remote's HIP headers (client-capi/include/hip): sizes, alignments and field
 * offsets of the ROCm 7.2 structs, and the numeric values of key enums and flags. The same numbers
 * are asserted on the Rust side in client-capi/src/abi/layout.rs.
 *
 * Build (from the repository root), as C and as C++:
 *   cc -std=c11 -Wall -Werror -I client-capi/include -c tests/c/abi_headers.c -o /tmp/abi_headers.o
 *   c++ -x c++ -std=c++17 -Wall -Werror -I client-capi/include -fsyntax-only tests/c/abi_headers.c
 *
 * hipDeviceProp_tR0600 = 1472 bytes (ROCm 6/7 layout; the size hipcc reports for
 * sizeof(hipDeviceProp_t) on ROCm 7), hipDeviceProp_tR0000 = 792 bytes (pre-ROCm-6 layout).
 */
#include <hip/hip_runtime.h>
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>
#include <hip/hip_ext.h>
#include <stddef.h>

#ifdef __cplusplus
#define ABI_ASSERT(cond) static_assert(cond, #cond)
#define ABI_ALIGNOF(t) alignof(t)
#else
#define ABI_ASSERT(cond) _Static_assert(cond, #cond)
#define ABI_ALIGNOF(t) _Alignof(t)
#endif
#define ABI_LAYOUT(t, size, align) ABI_ASSERT(sizeof(t) == (size) && ABI_ALIGNOF(t) == (align))
#define ABI_OFFSET(t, f, off) ABI_ASSERT(offsetof(t, f) == (off))

/* ---- versioned device-property ABI */
ABI_ASSERT(sizeof(hipDeviceProp_t) == 1472); /* hipDeviceProp_t is #defined to the R0600 layout */
ABI_LAYOUT(hipDeviceProp_tR0600, 1472, 8);
ABI_LAYOUT(hipDeviceProp_tR0000, 792, 8);
ABI_LAYOUT(hipDeviceArch_t, 4, 4);
ABI_ASSERT(HIP_VERSION_MAJOR == 7);
ABI_ASSERT(HIP_VERSION == 70253211);

/* ---- handles and enums are pointer-sized / 32-bit */
ABI_ASSERT(sizeof(hipError_t) == 4);
ABI_ASSERT(sizeof(hipDeviceAttribute_t) == 4);
ABI_ASSERT(sizeof(hipMemcpyKind) == 4);
ABI_ASSERT(sizeof(hiprtcResult) == 4);
ABI_ASSERT(sizeof(hipStream_t) == sizeof(void*));
ABI_ASSERT(sizeof(hipEvent_t) == sizeof(void*));
ABI_ASSERT(sizeof(hipModule_t) == sizeof(void*));
ABI_ASSERT(sizeof(hipFunction_t) == sizeof(void*));
ABI_ASSERT(sizeof(hipDeviceptr_t) == sizeof(void*));
ABI_ASSERT(sizeof(hiprtcProgram) == sizeof(void*));

/* ---- hipError_t */
ABI_ASSERT(hipSuccess == 0);
ABI_ASSERT(hipErrorInvalidValue == 1);
ABI_ASSERT(hipErrorOutOfMemory == 2 && hipErrorMemoryAllocation == 2);
ABI_ASSERT(hipErrorNotInitialized == 3 && hipErrorInitializationError == 3);
ABI_ASSERT(hipErrorDeinitialized == 4);
ABI_ASSERT(hipErrorInvalidConfiguration == 9);
ABI_ASSERT(hipErrorInvalidSymbol == 13);
ABI_ASSERT(hipErrorInvalidDevicePointer == 17);
ABI_ASSERT(hipErrorInvalidMemcpyDirection == 21);
ABI_ASSERT(hipErrorInvalidDeviceFunction == 98);
ABI_ASSERT(hipErrorNoDevice == 100);
ABI_ASSERT(hipErrorInvalidDevice == 101);
ABI_ASSERT(hipErrorInvalidImage == 200);
ABI_ASSERT(hipErrorInvalidContext == 201);
ABI_ASSERT(hipErrorNoBinaryForGpu == 209);
ABI_ASSERT(hipErrorInvalidKernelFile == 218);
ABI_ASSERT(hipErrorFileNotFound == 301);
ABI_ASSERT(hipErrorInvalidHandle == 400 && hipErrorInvalidResourceHandle == 400);
ABI_ASSERT(hipErrorNotFound == 500);
ABI_ASSERT(hipErrorNotReady == 600);
ABI_ASSERT(hipErrorIllegalAddress == 700);
ABI_ASSERT(hipErrorLaunchOutOfResources == 701);
ABI_ASSERT(hipErrorPeerAccessAlreadyEnabled == 704);
ABI_ASSERT(hipErrorLaunchFailure == 719);
ABI_ASSERT(hipErrorCooperativeLaunchTooLarge == 720);
ABI_ASSERT(hipErrorNotSupported == 801);
ABI_ASSERT(hipErrorStreamCaptureUnsupported == 900);
ABI_ASSERT(hipErrorGraphExecUpdateFailure == 910);
ABI_ASSERT(hipErrorInvalidTexture == 912);
ABI_ASSERT(hipErrorUnknown == 999);
ABI_ASSERT(hipErrorRuntimeMemory == 1052);
ABI_ASSERT(hipErrorRuntimeOther == 1053);
ABI_ASSERT(hipErrorTbd == 1054);

/* ---- hipDeviceAttribute_t */
ABI_ASSERT(hipDeviceAttributeCudaCompatibleBegin == 0);
ABI_ASSERT(hipDeviceAttributeComputeCapabilityMajor == 23);
ABI_ASSERT(hipDeviceAttributeComputeCapabilityMinor == 61);
ABI_ASSERT(hipDeviceAttributeMaxThreadsPerBlock == 56);
ABI_ASSERT(hipDeviceAttributeMultiprocessorCount == 63);
ABI_ASSERT(hipDeviceAttributeMaxSharedMemoryPerBlock == 74);
ABI_ASSERT(hipDeviceAttributeWarpSize == 87);
ABI_ASSERT(hipDeviceAttributeAmdSpecificBegin == 10000);
/* the names ROCm 7.2 has that older hip-remote headers lacked */
ABI_ASSERT(hipDeviceAttributeAccessPolicyMaxWindowSize == 1);
ABI_ASSERT(hipDeviceAttributeCanUseHostPointerForRegisteredMem == 4);
ABI_ASSERT(hipDeviceAttributeComputePreemptionSupported == 7);
ABI_ASSERT(hipDeviceAttributeCooperativeMultiDeviceLaunch == 11);
ABI_ASSERT(hipDeviceAttributeDirectManagedMemAccessFromHost == 13);
ABI_ASSERT(hipDeviceAttributeHostNativeAtomicSupported == 15);
ABI_ASSERT(hipDeviceAttributeMaxBlocksPerMultiProcessor == 25);
ABI_ASSERT(hipDeviceAttributeMaxSurfaceCubemapLayered == 38);
ABI_ASSERT(hipDeviceAttributeMaxTextureCubemapLayered == 54);
ABI_ASSERT(hipDeviceAttributeMaxThreadsPerMultiProcessor == 57);
ABI_ASSERT(hipDeviceAttributePageableMemoryAccessUsesHostPageTables == 66);
ABI_ASSERT(hipDeviceAttributePersistingL2CacheMaxSize == 70);
ABI_ASSERT(hipDeviceAttributeMaxRegistersPerMultiprocessor == 72);
ABI_ASSERT(hipDeviceAttributeReservedSharedMemPerBlock == 73);
ABI_ASSERT(hipDeviceAttributeSharedMemPerMultiprocessor == 76);
ABI_ASSERT(hipDeviceAttributeSingleToDoublePrecisionPerfRatio == 77);
ABI_ASSERT(hipDeviceAttributeStreamPrioritiesSupported == 78);
ABI_ASSERT(hipDeviceAttributeVirtualMemoryManagementSupported == 89);
ABI_ASSERT(hipDeviceAttributeMemoryPoolSupportedHandleTypes == 91);
ABI_ASSERT(hipDeviceAttributeMaxSharedMemoryPerMultiprocessor == 10002);
ABI_ASSERT(hipDeviceAttributeCooperativeMultiDeviceUnmatchedFunc == 10007);
ABI_ASSERT(hipDeviceAttributeCooperativeMultiDeviceUnmatchedGridDim == 10008);
ABI_ASSERT(hipDeviceAttributeCooperativeMultiDeviceUnmatchedBlockDim == 10009);
ABI_ASSERT(hipDeviceAttributeCooperativeMultiDeviceUnmatchedSharedMem == 10010);
ABI_ASSERT(hipDeviceAttributeCanUseStreamWaitValue == 10013);
ABI_ASSERT(hipDeviceAttributePhysicalMultiProcessorCount == 10015);
ABI_ASSERT(hipDeviceAttributeClockInstructionRate == 10000);
ABI_ASSERT(hipDeviceAttributePciChipId == 10020);
ABI_ASSERT(hipDeviceAttributeVendorSpecificBegin == 20000);

/* ---- other enums */
ABI_ASSERT(hipMemcpyHostToHost == 0 && hipMemcpyHostToDevice == 1 && hipMemcpyDeviceToHost == 2);
ABI_ASSERT(hipMemcpyDeviceToDevice == 3 && hipMemcpyDefault == 4);
ABI_ASSERT(hipMemoryTypeUnregistered == 0 && hipMemoryTypeHost == 1 && hipMemoryTypeDevice == 2);
ABI_ASSERT(hipMemoryTypeManaged == 3 && hipMemoryTypeArray == 10 && hipMemoryTypeUnified == 11);
ABI_ASSERT(hipFuncAttributeMaxDynamicSharedMemorySize == 8 && hipFuncAttributeMax == 10);
ABI_ASSERT(HIP_FUNC_ATTRIBUTE_NUM_REGS == 4);
ABI_ASSERT(hipJitOptionMaxRegisters == 0 && hipJitOptionNumOptions == 29);
ABI_ASSERT(HIPRTC_SUCCESS == 0 && HIPRTC_ERROR_INTERNAL_ERROR == 11 && HIPRTC_ERROR_LINKING == 100);

/* ---- flags */
ABI_ASSERT(hipStreamDefault == 0 && hipStreamNonBlocking == 1);
ABI_ASSERT(hipEventDefault == 0 && hipEventBlockingSync == 1 && hipEventDisableTiming == 2);
ABI_ASSERT(hipEventInterprocess == 4);
ABI_ASSERT(hipHostMallocDefault == 0 && hipHostMallocPortable == 1 && hipHostMallocMapped == 2);
ABI_ASSERT(hipHostMallocWriteCombined == 4 && hipHostMallocCoherent == 0x40000000);
ABI_ASSERT(hipMemAttachGlobal == 1 && hipMemAttachHost == 2 && hipMemAttachSingle == 4);
ABI_ASSERT(hipDeviceScheduleBlockingSync == 4 && hipDeviceMapHost == 8);
ABI_ASSERT(hipIpcMemLazyEnablePeerAccess == 1 && HIP_IPC_HANDLE_SIZE == 64);

/* ---- struct layouts (measured by the C compiler; mirrored in abi.rs) */
ABI_LAYOUT(HIP_ARRAY3D_DESCRIPTOR, 40, 8);
ABI_LAYOUT(HIP_ARRAY_DESCRIPTOR, 24, 8);
ABI_LAYOUT(HIP_LAUNCH_CONFIG_st, 56, 8);
ABI_LAYOUT(HIP_MEMCPY3D, 184, 8);
ABI_LAYOUT(HIP_RESOURCE_DESC_st, 144, 8);
ABI_LAYOUT(HIP_RESOURCE_VIEW_DESC_st, 112, 8);
ABI_LAYOUT(HIP_TEXTURE_DESC_st, 104, 4);
ABI_LAYOUT(dim3, 12, 4);
ABI_LAYOUT(hipAccessPolicyWindow, 32, 8);
ABI_LAYOUT(hipArrayMapInfo, 152, 8);
ABI_LAYOUT(hipBatchMemOpNodeParams, 32, 8);
ABI_LAYOUT(hipChannelFormatDesc, 20, 4);
ABI_LAYOUT(hipChildGraphNodeParams, 8, 8);
ABI_LAYOUT(hipDeviceArch_t, 4, 4);
ABI_LAYOUT(hipDeviceProp_tR0000, 792, 8);
ABI_LAYOUT(hipDeviceProp_tR0600, 1472, 8);
ABI_LAYOUT(hipEventRecordNodeParams, 8, 8);
ABI_LAYOUT(hipEventWaitNodeParams, 8, 8);
ABI_LAYOUT(hipExtent, 24, 8);
ABI_LAYOUT(hipExternalMemoryBufferDesc_st, 88, 8);
ABI_LAYOUT(hipExternalMemoryHandleDesc_st, 104, 8);
ABI_LAYOUT(hipExternalMemoryMipmappedArrayDesc_st, 64, 8);
ABI_LAYOUT(hipExternalSemaphoreHandleDesc_st, 96, 8);
ABI_LAYOUT(hipExternalSemaphoreSignalNodeParams, 24, 8);
ABI_LAYOUT(hipExternalSemaphoreSignalParams_st, 144, 8);
ABI_LAYOUT(hipExternalSemaphoreWaitNodeParams, 24, 8);
ABI_LAYOUT(hipExternalSemaphoreWaitParams_st, 144, 8);
ABI_LAYOUT(hipFuncAttributes, 56, 8);
ABI_LAYOUT(hipFunctionLaunchParams_t, 56, 8);
ABI_LAYOUT(hipGraphEdgeData, 8, 1);
ABI_LAYOUT(hipGraphInstantiateParams, 32, 8);
ABI_LAYOUT(hipGraphNodeParams, 256, 8);
ABI_LAYOUT(hipHostNodeParams, 16, 8);
ABI_LAYOUT(hipIpcEventHandle_st, 64, 1);
ABI_LAYOUT(hipIpcMemHandle_st, 64, 1);
ABI_LAYOUT(hipKernelNodeParams, 64, 8);
ABI_LAYOUT(hipLaunchAttributeValue, 64, 8);
ABI_LAYOUT(hipLaunchAttribute_st, 72, 8);
ABI_LAYOUT(hipLaunchConfig_st, 56, 8);
ABI_LAYOUT(hipLaunchMemSyncDomainMap, 2, 1);
ABI_LAYOUT(hipLaunchParams_t, 56, 8);
ABI_LAYOUT(hipMemAccessDesc, 12, 4);
ABI_LAYOUT(hipMemAllocNodeParams, 120, 8);
ABI_LAYOUT(hipMemAllocationProp, 32, 8);
ABI_LAYOUT(hipMemFreeNodeParams, 8, 8);
ABI_LAYOUT(hipMemLocation, 8, 4);
ABI_LAYOUT(hipMemPoolProps, 88, 8);
ABI_LAYOUT(hipMemPoolPtrExportData, 64, 1);
ABI_LAYOUT(hipMemcpy3DBatchOp, 112, 8);
ABI_LAYOUT(hipMemcpy3DOperand, 40, 8);
ABI_LAYOUT(hipMemcpy3DParms, 160, 8);
ABI_LAYOUT(hipMemcpy3DPeerParms, 168, 8);
ABI_LAYOUT(hipMemcpyAttributes, 24, 4);
ABI_LAYOUT(hipMemcpyNodeParams, 176, 8);
ABI_LAYOUT(hipMemsetParams, 48, 8);
ABI_LAYOUT(hipMipmappedArray, 64, 8);
ABI_LAYOUT(hipOffset3D, 24, 8);
ABI_LAYOUT(hipPitchedPtr, 32, 8);
ABI_LAYOUT(hipPointerAttribute_t, 32, 8);
ABI_LAYOUT(hipPos, 24, 8);
ABI_LAYOUT(hipResourceDesc, 64, 8);
ABI_LAYOUT(hipResourceViewDesc, 48, 8);
ABI_LAYOUT(hipStreamBatchMemOpParams_union, 48, 8);
ABI_LAYOUT(hipTextureDesc, 64, 4);
ABI_LAYOUT(hipUUID_t, 16, 1);
ABI_LAYOUT(hip_Memcpy2D, 128, 8);
ABI_LAYOUT(surfaceReference, 8, 8);
ABI_LAYOUT(textureReference, 88, 8);

/* hipDeviceProp_tR0600 */
ABI_OFFSET(hipDeviceProp_tR0600, name, 0);
ABI_OFFSET(hipDeviceProp_tR0600, uuid, 256);
ABI_OFFSET(hipDeviceProp_tR0600, luid, 272);
ABI_OFFSET(hipDeviceProp_tR0600, luidDeviceNodeMask, 280);
ABI_OFFSET(hipDeviceProp_tR0600, totalGlobalMem, 288);
ABI_OFFSET(hipDeviceProp_tR0600, sharedMemPerBlock, 296);
ABI_OFFSET(hipDeviceProp_tR0600, regsPerBlock, 304);
ABI_OFFSET(hipDeviceProp_tR0600, warpSize, 308);
ABI_OFFSET(hipDeviceProp_tR0600, memPitch, 312);
ABI_OFFSET(hipDeviceProp_tR0600, maxThreadsPerBlock, 320);
ABI_OFFSET(hipDeviceProp_tR0600, maxThreadsDim, 324);
ABI_OFFSET(hipDeviceProp_tR0600, maxGridSize, 336);
ABI_OFFSET(hipDeviceProp_tR0600, clockRate, 348);
ABI_OFFSET(hipDeviceProp_tR0600, totalConstMem, 352);
ABI_OFFSET(hipDeviceProp_tR0600, major, 360);
ABI_OFFSET(hipDeviceProp_tR0600, minor, 364);
ABI_OFFSET(hipDeviceProp_tR0600, textureAlignment, 368);
ABI_OFFSET(hipDeviceProp_tR0600, texturePitchAlignment, 376);
ABI_OFFSET(hipDeviceProp_tR0600, deviceOverlap, 384);
ABI_OFFSET(hipDeviceProp_tR0600, multiProcessorCount, 388);
ABI_OFFSET(hipDeviceProp_tR0600, kernelExecTimeoutEnabled, 392);
ABI_OFFSET(hipDeviceProp_tR0600, integrated, 396);
ABI_OFFSET(hipDeviceProp_tR0600, canMapHostMemory, 400);
ABI_OFFSET(hipDeviceProp_tR0600, computeMode, 404);
ABI_OFFSET(hipDeviceProp_tR0600, maxTexture1D, 408);
ABI_OFFSET(hipDeviceProp_tR0600, maxTexture1DMipmap, 412);
ABI_OFFSET(hipDeviceProp_tR0600, maxTexture1DLinear, 416);
ABI_OFFSET(hipDeviceProp_tR0600, maxTexture2D, 420);
ABI_OFFSET(hipDeviceProp_tR0600, maxTexture2DMipmap, 428);
ABI_OFFSET(hipDeviceProp_tR0600, maxTexture2DLinear, 436);
ABI_OFFSET(hipDeviceProp_tR0600, maxTexture2DGather, 448);
ABI_OFFSET(hipDeviceProp_tR0600, maxTexture3D, 456);
ABI_OFFSET(hipDeviceProp_tR0600, maxTexture3DAlt, 468);
ABI_OFFSET(hipDeviceProp_tR0600, maxTextureCubemap, 480);
ABI_OFFSET(hipDeviceProp_tR0600, maxTexture1DLayered, 484);
ABI_OFFSET(hipDeviceProp_tR0600, maxTexture2DLayered, 492);
ABI_OFFSET(hipDeviceProp_tR0600, maxTextureCubemapLayered, 504);
ABI_OFFSET(hipDeviceProp_tR0600, maxSurface1D, 512);
ABI_OFFSET(hipDeviceProp_tR0600, maxSurface2D, 516);
ABI_OFFSET(hipDeviceProp_tR0600, maxSurface3D, 524);
ABI_OFFSET(hipDeviceProp_tR0600, maxSurface1DLayered, 536);
ABI_OFFSET(hipDeviceProp_tR0600, maxSurface2DLayered, 544);
ABI_OFFSET(hipDeviceProp_tR0600, maxSurfaceCubemap, 556);
ABI_OFFSET(hipDeviceProp_tR0600, maxSurfaceCubemapLayered, 560);
ABI_OFFSET(hipDeviceProp_tR0600, surfaceAlignment, 568);
ABI_OFFSET(hipDeviceProp_tR0600, concurrentKernels, 576);
ABI_OFFSET(hipDeviceProp_tR0600, ECCEnabled, 580);
ABI_OFFSET(hipDeviceProp_tR0600, pciBusID, 584);
ABI_OFFSET(hipDeviceProp_tR0600, pciDeviceID, 588);
ABI_OFFSET(hipDeviceProp_tR0600, pciDomainID, 592);
ABI_OFFSET(hipDeviceProp_tR0600, tccDriver, 596);
ABI_OFFSET(hipDeviceProp_tR0600, asyncEngineCount, 600);
ABI_OFFSET(hipDeviceProp_tR0600, unifiedAddressing, 604);
ABI_OFFSET(hipDeviceProp_tR0600, memoryClockRate, 608);
ABI_OFFSET(hipDeviceProp_tR0600, memoryBusWidth, 612);
ABI_OFFSET(hipDeviceProp_tR0600, l2CacheSize, 616);
ABI_OFFSET(hipDeviceProp_tR0600, persistingL2CacheMaxSize, 620);
ABI_OFFSET(hipDeviceProp_tR0600, maxThreadsPerMultiProcessor, 624);
ABI_OFFSET(hipDeviceProp_tR0600, streamPrioritiesSupported, 628);
ABI_OFFSET(hipDeviceProp_tR0600, globalL1CacheSupported, 632);
ABI_OFFSET(hipDeviceProp_tR0600, localL1CacheSupported, 636);
ABI_OFFSET(hipDeviceProp_tR0600, sharedMemPerMultiprocessor, 640);
ABI_OFFSET(hipDeviceProp_tR0600, regsPerMultiprocessor, 648);
ABI_OFFSET(hipDeviceProp_tR0600, managedMemory, 652);
ABI_OFFSET(hipDeviceProp_tR0600, isMultiGpuBoard, 656);
ABI_OFFSET(hipDeviceProp_tR0600, multiGpuBoardGroupID, 660);
ABI_OFFSET(hipDeviceProp_tR0600, hostNativeAtomicSupported, 664);
ABI_OFFSET(hipDeviceProp_tR0600, singleToDoublePrecisionPerfRatio, 668);
ABI_OFFSET(hipDeviceProp_tR0600, pageableMemoryAccess, 672);
ABI_OFFSET(hipDeviceProp_tR0600, concurrentManagedAccess, 676);
ABI_OFFSET(hipDeviceProp_tR0600, computePreemptionSupported, 680);
ABI_OFFSET(hipDeviceProp_tR0600, canUseHostPointerForRegisteredMem, 684);
ABI_OFFSET(hipDeviceProp_tR0600, cooperativeLaunch, 688);
ABI_OFFSET(hipDeviceProp_tR0600, cooperativeMultiDeviceLaunch, 692);
ABI_OFFSET(hipDeviceProp_tR0600, sharedMemPerBlockOptin, 696);
ABI_OFFSET(hipDeviceProp_tR0600, pageableMemoryAccessUsesHostPageTables, 704);
ABI_OFFSET(hipDeviceProp_tR0600, directManagedMemAccessFromHost, 708);
ABI_OFFSET(hipDeviceProp_tR0600, maxBlocksPerMultiProcessor, 712);
ABI_OFFSET(hipDeviceProp_tR0600, accessPolicyMaxWindowSize, 716);
ABI_OFFSET(hipDeviceProp_tR0600, reservedSharedMemPerBlock, 720);
ABI_OFFSET(hipDeviceProp_tR0600, hostRegisterSupported, 728);
ABI_OFFSET(hipDeviceProp_tR0600, sparseHipArraySupported, 732);
ABI_OFFSET(hipDeviceProp_tR0600, hostRegisterReadOnlySupported, 736);
ABI_OFFSET(hipDeviceProp_tR0600, timelineSemaphoreInteropSupported, 740);
ABI_OFFSET(hipDeviceProp_tR0600, memoryPoolsSupported, 744);
ABI_OFFSET(hipDeviceProp_tR0600, gpuDirectRDMASupported, 748);
ABI_OFFSET(hipDeviceProp_tR0600, gpuDirectRDMAFlushWritesOptions, 752);
ABI_OFFSET(hipDeviceProp_tR0600, gpuDirectRDMAWritesOrdering, 756);
ABI_OFFSET(hipDeviceProp_tR0600, memoryPoolSupportedHandleTypes, 760);
ABI_OFFSET(hipDeviceProp_tR0600, deferredMappingHipArraySupported, 764);
ABI_OFFSET(hipDeviceProp_tR0600, ipcEventSupported, 768);
ABI_OFFSET(hipDeviceProp_tR0600, clusterLaunch, 772);
ABI_OFFSET(hipDeviceProp_tR0600, unifiedFunctionPointers, 776);
ABI_OFFSET(hipDeviceProp_tR0600, reserved, 780);
ABI_OFFSET(hipDeviceProp_tR0600, hipReserved, 1032);
ABI_OFFSET(hipDeviceProp_tR0600, gcnArchName, 1160);
ABI_OFFSET(hipDeviceProp_tR0600, maxSharedMemoryPerMultiProcessor, 1416);
ABI_OFFSET(hipDeviceProp_tR0600, clockInstructionRate, 1424);
ABI_OFFSET(hipDeviceProp_tR0600, arch, 1428);
ABI_OFFSET(hipDeviceProp_tR0600, hdpMemFlushCntl, 1432);
ABI_OFFSET(hipDeviceProp_tR0600, hdpRegFlushCntl, 1440);
ABI_OFFSET(hipDeviceProp_tR0600, cooperativeMultiDeviceUnmatchedFunc, 1448);
ABI_OFFSET(hipDeviceProp_tR0600, cooperativeMultiDeviceUnmatchedGridDim, 1452);
ABI_OFFSET(hipDeviceProp_tR0600, cooperativeMultiDeviceUnmatchedBlockDim, 1456);
ABI_OFFSET(hipDeviceProp_tR0600, cooperativeMultiDeviceUnmatchedSharedMem, 1460);
ABI_OFFSET(hipDeviceProp_tR0600, isLargeBar, 1464);
ABI_OFFSET(hipDeviceProp_tR0600, asicRevision, 1468);
/* hipDeviceProp_tR0000 */
ABI_OFFSET(hipDeviceProp_tR0000, name, 0);
ABI_OFFSET(hipDeviceProp_tR0000, totalGlobalMem, 256);
ABI_OFFSET(hipDeviceProp_tR0000, sharedMemPerBlock, 264);
ABI_OFFSET(hipDeviceProp_tR0000, regsPerBlock, 272);
ABI_OFFSET(hipDeviceProp_tR0000, warpSize, 276);
ABI_OFFSET(hipDeviceProp_tR0000, maxThreadsPerBlock, 280);
ABI_OFFSET(hipDeviceProp_tR0000, maxThreadsDim, 284);
ABI_OFFSET(hipDeviceProp_tR0000, maxGridSize, 296);
ABI_OFFSET(hipDeviceProp_tR0000, clockRate, 308);
ABI_OFFSET(hipDeviceProp_tR0000, memoryClockRate, 312);
ABI_OFFSET(hipDeviceProp_tR0000, memoryBusWidth, 316);
ABI_OFFSET(hipDeviceProp_tR0000, totalConstMem, 320);
ABI_OFFSET(hipDeviceProp_tR0000, major, 328);
ABI_OFFSET(hipDeviceProp_tR0000, minor, 332);
ABI_OFFSET(hipDeviceProp_tR0000, multiProcessorCount, 336);
ABI_OFFSET(hipDeviceProp_tR0000, l2CacheSize, 340);
ABI_OFFSET(hipDeviceProp_tR0000, maxThreadsPerMultiProcessor, 344);
ABI_OFFSET(hipDeviceProp_tR0000, computeMode, 348);
ABI_OFFSET(hipDeviceProp_tR0000, clockInstructionRate, 352);
ABI_OFFSET(hipDeviceProp_tR0000, arch, 356);
ABI_OFFSET(hipDeviceProp_tR0000, concurrentKernels, 360);
ABI_OFFSET(hipDeviceProp_tR0000, pciDomainID, 364);
ABI_OFFSET(hipDeviceProp_tR0000, pciBusID, 368);
ABI_OFFSET(hipDeviceProp_tR0000, pciDeviceID, 372);
ABI_OFFSET(hipDeviceProp_tR0000, maxSharedMemoryPerMultiProcessor, 376);
ABI_OFFSET(hipDeviceProp_tR0000, isMultiGpuBoard, 384);
ABI_OFFSET(hipDeviceProp_tR0000, canMapHostMemory, 388);
ABI_OFFSET(hipDeviceProp_tR0000, gcnArch, 392);
ABI_OFFSET(hipDeviceProp_tR0000, gcnArchName, 396);
ABI_OFFSET(hipDeviceProp_tR0000, integrated, 652);
ABI_OFFSET(hipDeviceProp_tR0000, cooperativeLaunch, 656);
ABI_OFFSET(hipDeviceProp_tR0000, cooperativeMultiDeviceLaunch, 660);
ABI_OFFSET(hipDeviceProp_tR0000, maxTexture1DLinear, 664);
ABI_OFFSET(hipDeviceProp_tR0000, maxTexture1D, 668);
ABI_OFFSET(hipDeviceProp_tR0000, maxTexture2D, 672);
ABI_OFFSET(hipDeviceProp_tR0000, maxTexture3D, 680);
ABI_OFFSET(hipDeviceProp_tR0000, hdpMemFlushCntl, 696);
ABI_OFFSET(hipDeviceProp_tR0000, hdpRegFlushCntl, 704);
ABI_OFFSET(hipDeviceProp_tR0000, memPitch, 712);
ABI_OFFSET(hipDeviceProp_tR0000, textureAlignment, 720);
ABI_OFFSET(hipDeviceProp_tR0000, texturePitchAlignment, 728);
ABI_OFFSET(hipDeviceProp_tR0000, kernelExecTimeoutEnabled, 736);
ABI_OFFSET(hipDeviceProp_tR0000, ECCEnabled, 740);
ABI_OFFSET(hipDeviceProp_tR0000, tccDriver, 744);
ABI_OFFSET(hipDeviceProp_tR0000, cooperativeMultiDeviceUnmatchedFunc, 748);
ABI_OFFSET(hipDeviceProp_tR0000, cooperativeMultiDeviceUnmatchedGridDim, 752);
ABI_OFFSET(hipDeviceProp_tR0000, cooperativeMultiDeviceUnmatchedBlockDim, 756);
ABI_OFFSET(hipDeviceProp_tR0000, cooperativeMultiDeviceUnmatchedSharedMem, 760);
ABI_OFFSET(hipDeviceProp_tR0000, isLargeBar, 764);
ABI_OFFSET(hipDeviceProp_tR0000, asicRevision, 768);
ABI_OFFSET(hipDeviceProp_tR0000, managedMemory, 772);
ABI_OFFSET(hipDeviceProp_tR0000, directManagedMemAccessFromHost, 776);
ABI_OFFSET(hipDeviceProp_tR0000, concurrentManagedAccess, 780);
ABI_OFFSET(hipDeviceProp_tR0000, pageableMemoryAccess, 784);
ABI_OFFSET(hipDeviceProp_tR0000, pageableMemoryAccessUsesHostPageTables, 788);
/* hipFuncAttributes */
ABI_OFFSET(hipFuncAttributes, binaryVersion, 0);
ABI_OFFSET(hipFuncAttributes, cacheModeCA, 4);
ABI_OFFSET(hipFuncAttributes, constSizeBytes, 8);
ABI_OFFSET(hipFuncAttributes, localSizeBytes, 16);
ABI_OFFSET(hipFuncAttributes, maxDynamicSharedSizeBytes, 24);
ABI_OFFSET(hipFuncAttributes, maxThreadsPerBlock, 28);
ABI_OFFSET(hipFuncAttributes, numRegs, 32);
ABI_OFFSET(hipFuncAttributes, preferredShmemCarveout, 36);
ABI_OFFSET(hipFuncAttributes, ptxVersion, 40);
ABI_OFFSET(hipFuncAttributes, sharedSizeBytes, 48);
/* hipPointerAttribute_t */
ABI_OFFSET(hipPointerAttribute_t, type, 0);
ABI_OFFSET(hipPointerAttribute_t, device, 4);
ABI_OFFSET(hipPointerAttribute_t, devicePointer, 8);
ABI_OFFSET(hipPointerAttribute_t, hostPointer, 16);
ABI_OFFSET(hipPointerAttribute_t, isManaged, 24);
ABI_OFFSET(hipPointerAttribute_t, allocationFlags, 28);
/* dim3 */
ABI_OFFSET(dim3, x, 0);
ABI_OFFSET(dim3, y, 4);
ABI_OFFSET(dim3, z, 8);
/* hipLaunchParams_t */
ABI_OFFSET(hipLaunchParams_t, func, 0);
ABI_OFFSET(hipLaunchParams_t, gridDim, 8);
ABI_OFFSET(hipLaunchParams_t, blockDim, 20);
ABI_OFFSET(hipLaunchParams_t, args, 32);
ABI_OFFSET(hipLaunchParams_t, sharedMem, 40);
ABI_OFFSET(hipLaunchParams_t, stream, 48);
/* hipKernelNodeParams */
ABI_OFFSET(hipKernelNodeParams, blockDim, 0);
ABI_OFFSET(hipKernelNodeParams, extra, 16);
ABI_OFFSET(hipKernelNodeParams, func, 24);
ABI_OFFSET(hipKernelNodeParams, gridDim, 32);
ABI_OFFSET(hipKernelNodeParams, kernelParams, 48);
ABI_OFFSET(hipKernelNodeParams, sharedMemBytes, 56);
/* hipMemcpy3DParms */
ABI_OFFSET(hipMemcpy3DParms, srcArray, 0);
ABI_OFFSET(hipMemcpy3DParms, srcPos, 8);
ABI_OFFSET(hipMemcpy3DParms, srcPtr, 32);
ABI_OFFSET(hipMemcpy3DParms, dstArray, 64);
ABI_OFFSET(hipMemcpy3DParms, dstPos, 72);
ABI_OFFSET(hipMemcpy3DParms, dstPtr, 96);
ABI_OFFSET(hipMemcpy3DParms, extent, 128);
ABI_OFFSET(hipMemcpy3DParms, kind, 152);
/* hip_Memcpy2D */
ABI_OFFSET(hip_Memcpy2D, srcXInBytes, 0);
ABI_OFFSET(hip_Memcpy2D, srcY, 8);
ABI_OFFSET(hip_Memcpy2D, srcMemoryType, 16);
ABI_OFFSET(hip_Memcpy2D, srcHost, 24);
ABI_OFFSET(hip_Memcpy2D, srcDevice, 32);
ABI_OFFSET(hip_Memcpy2D, srcArray, 40);
ABI_OFFSET(hip_Memcpy2D, srcPitch, 48);
ABI_OFFSET(hip_Memcpy2D, dstXInBytes, 56);
ABI_OFFSET(hip_Memcpy2D, dstY, 64);
ABI_OFFSET(hip_Memcpy2D, dstMemoryType, 72);
ABI_OFFSET(hip_Memcpy2D, dstHost, 80);
ABI_OFFSET(hip_Memcpy2D, dstDevice, 88);
ABI_OFFSET(hip_Memcpy2D, dstArray, 96);
ABI_OFFSET(hip_Memcpy2D, dstPitch, 104);
ABI_OFFSET(hip_Memcpy2D, WidthInBytes, 112);
ABI_OFFSET(hip_Memcpy2D, Height, 120);

/* ---- the prototypes are usable as ROCm's are (compile-only: nothing here is linked) */
hipError_t abi_headers_use(hipFunction_t f, hipStream_t s, void* args, size_t args_size);
hipError_t abi_headers_use(hipFunction_t f, hipStream_t s, void* args, size_t args_size) {
  hipDeviceProp_t prop;
  hipDeviceProp_tR0000 old_prop;
  void* d = NULL;
  void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &args_size,
                    HIP_LAUNCH_PARAM_END};
  hipError_t e = hipGetDeviceProperties(&prop, 0);
  if (e == hipSuccess) e = hipGetDevicePropertiesR0000(&old_prop, 0);
  if (e == hipSuccess) e = hipMalloc(&d, 16);
  if (e == hipSuccess) e = hipMemsetD32Async((hipDeviceptr_t)d, 7u, 4, s);
  if (e == hipSuccess) e = hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, s, NULL, config);
  if (e == hipSuccess) e = hipStreamSynchronize(hipStreamPerThread);
#ifdef __cplusplus
  {
    float* typed = nullptr;
    hipEvent_t ev = nullptr;
    if (e == hipSuccess) e = hipMalloc(&typed, 4 * sizeof(float)); /* typed template */
    if (e == hipSuccess) e = hipEventRecord(ev);                    /* default stream argument */
    if (e == hipSuccess) e = hipMemcpyAsync(typed, d, 16, hipMemcpyDeviceToDevice);
    dim3 grid(4), block(64, 2);
    if (e == hipSuccess) e = hipLaunchKernel((const void*)f, grid, block, NULL);
  }
#endif
  {
    hiprtcProgram prog = NULL;
    const char* opts[] = {"-O3"};
    size_t n = 0;
    if (hiprtcCreateProgram(&prog, "", "k.hip", 0, NULL, NULL) == HIPRTC_SUCCESS &&
        hiprtcCompileProgram(prog, 1, opts) == HIPRTC_SUCCESS &&
        hiprtcGetCodeSize(prog, &n) == HIPRTC_SUCCESS && n == 0)
      e = hipErrorInvalidImage;
    (void)hiprtcGetErrorString(HIPRTC_ERROR_COMPILATION);
  }
  (void)hipGetErrorName(e);
  (void)hipGetErrorString(e);
  return hipFree(d) == hipSuccess ? e : hipErrorUnknown;
}

/* hip_runtime.h defines the qualifiers empty for a host compiler and includes what ROCm's
 * does: these use <stdio.h>, <assert.h>, <string.h>, <math.h> (and in C++ <cmath>,
 * <thread>, <mutex>) without including them. */
__host__ __device__ static inline float abi_twice(float x) { return 2.0f * x; }
__global__ void abi_kernel_declared_for_module_launch(float* out);
__device__ __constant__ int abi_constant_marker;

int abi_uses_runtime_includes(void) {
  char buf[16];
  snprintf(buf, sizeof buf, "%d", (int)sqrt(16.0));
  assert(strcmp(buf, "4") == 0);
  return (int)abi_twice(1.0f) + (int)strlen(buf);
}

#ifdef __cplusplus
int abi_uses_cxx_includes() {
  std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  int seen = 0;
  std::thread t([&seen] { seen = static_cast<int>(std::sqrt(9.0)); });
  t.join();
  return seen;
}
#endif
