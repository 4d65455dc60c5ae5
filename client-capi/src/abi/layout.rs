//! Size, alignment and offset assertions: numbers measured by the C compiler on
//! `client-capi/include/hip/*.h`, so a drift between the Rust and C views fails to compile.

use super::*;

// ------------------------------------------------------------------------------------------------
// Layout assertions (numbers measured by the C compiler on client-capi/include/hip/*.h)
// ------------------------------------------------------------------------------------------------

macro_rules! assert_layout {
    ($t:ty, $size:expr, $align:expr) => {
        const _: () =
            assert!(core::mem::size_of::<$t>() == $size && core::mem::align_of::<$t>() == $align);
    };
}
macro_rules! assert_offset {
    ($t:ty, $f:ident, $off:expr) => {
        const _: () = assert!(core::mem::offset_of!($t, $f) == $off);
    };
}

assert_layout!(hipDeviceArch_t, 4, 4);
assert_layout!(hipUUID_t, 16, 1);
assert_layout!(hipDeviceProp_tR0600, 1472, 8);
assert_layout!(hipPointerAttribute_t, 32, 8);
assert_layout!(hipChannelFormatDesc, 20, 4);
assert_layout!(HIP_ARRAY_DESCRIPTOR, 24, 8);
assert_layout!(HIP_ARRAY3D_DESCRIPTOR, 40, 8);
assert_layout!(hip_Memcpy2D, 128, 8);
assert_layout!(hipMipmappedArray, 64, 8);
assert_layout!(HIP_TEXTURE_DESC_st, 104, 4);
assert_layout!(hipResourceDesc, 64, 8);
assert_layout!(HIP_RESOURCE_DESC_st, 144, 8);
assert_layout!(hipResourceViewDesc, 48, 8);
assert_layout!(HIP_RESOURCE_VIEW_DESC_st, 112, 8);
assert_layout!(hipPitchedPtr, 32, 8);
assert_layout!(hipExtent, 24, 8);
assert_layout!(hipPos, 24, 8);
assert_layout!(hipMemcpy3DParms, 160, 8);
assert_layout!(HIP_MEMCPY3D, 184, 8);
assert_layout!(hipMemLocation, 8, 4);
assert_layout!(hipMemcpyAttributes, 24, 4);
assert_layout!(hipOffset3D, 24, 8);
assert_layout!(hipMemcpy3DOperand, 40, 8);
assert_layout!(hipMemcpy3DBatchOp, 112, 8);
assert_layout!(hipMemcpy3DPeerParms, 168, 8);
assert_layout!(textureReference, 88, 8);
assert_layout!(hipTextureDesc, 64, 4);
assert_layout!(surfaceReference, 8, 8);
assert_layout!(hipIpcMemHandle_st, 64, 1);
assert_layout!(hipIpcEventHandle_st, 64, 1);
assert_layout!(hipFuncAttributes, 56, 8);
assert_layout!(hipStreamBatchMemOpParams_union, 48, 8);
assert_layout!(hipBatchMemOpNodeParams, 32, 8);
assert_layout!(hipMemAccessDesc, 12, 4);
assert_layout!(hipMemPoolProps, 88, 8);
assert_layout!(hipMemPoolPtrExportData, 64, 1);
assert_layout!(dim3, 12, 4);
assert_layout!(hipLaunchParams_t, 56, 8);
assert_layout!(hipFunctionLaunchParams_t, 56, 8);
assert_layout!(hipExternalMemoryHandleDesc_st, 104, 8);
assert_layout!(hipExternalMemoryBufferDesc_st, 88, 8);
assert_layout!(hipExternalMemoryMipmappedArrayDesc_st, 64, 8);
assert_layout!(hipExternalSemaphoreHandleDesc_st, 96, 8);
assert_layout!(hipExternalSemaphoreSignalParams_st, 144, 8);
assert_layout!(hipExternalSemaphoreWaitParams_st, 144, 8);
assert_layout!(hipHostNodeParams, 16, 8);
assert_layout!(hipKernelNodeParams, 64, 8);
assert_layout!(hipMemsetParams, 48, 8);
assert_layout!(hipMemAllocNodeParams, 120, 8);
assert_layout!(hipAccessPolicyWindow, 32, 8);
assert_layout!(hipLaunchMemSyncDomainMap, 2, 1);
assert_layout!(hipLaunchAttributeValue, 64, 8);
assert_layout!(hipGraphInstantiateParams, 32, 8);
assert_layout!(hipMemAllocationProp, 32, 8);
assert_layout!(hipExternalSemaphoreSignalNodeParams, 24, 8);
assert_layout!(hipExternalSemaphoreWaitNodeParams, 24, 8);
assert_layout!(hipArrayMapInfo, 152, 8);
assert_layout!(hipMemcpyNodeParams, 176, 8);
assert_layout!(hipChildGraphNodeParams, 8, 8);
assert_layout!(hipEventWaitNodeParams, 8, 8);
assert_layout!(hipEventRecordNodeParams, 8, 8);
assert_layout!(hipMemFreeNodeParams, 8, 8);
assert_layout!(hipGraphNodeParams, 256, 8);
assert_layout!(hipGraphEdgeData, 8, 1);
assert_layout!(hipLaunchAttribute_st, 72, 8);
assert_layout!(hipLaunchConfig_st, 56, 8);
assert_layout!(HIP_LAUNCH_CONFIG_st, 56, 8);
assert_layout!(hipDeviceProp_tR0000, 792, 8);

assert_offset!(hipDeviceProp_tR0600, name, 0);
assert_offset!(hipDeviceProp_tR0600, uuid, 256);
assert_offset!(hipDeviceProp_tR0600, luid, 272);
assert_offset!(hipDeviceProp_tR0600, luidDeviceNodeMask, 280);
assert_offset!(hipDeviceProp_tR0600, totalGlobalMem, 288);
assert_offset!(hipDeviceProp_tR0600, sharedMemPerBlock, 296);
assert_offset!(hipDeviceProp_tR0600, regsPerBlock, 304);
assert_offset!(hipDeviceProp_tR0600, warpSize, 308);
assert_offset!(hipDeviceProp_tR0600, memPitch, 312);
assert_offset!(hipDeviceProp_tR0600, maxThreadsPerBlock, 320);
assert_offset!(hipDeviceProp_tR0600, maxThreadsDim, 324);
assert_offset!(hipDeviceProp_tR0600, maxGridSize, 336);
assert_offset!(hipDeviceProp_tR0600, clockRate, 348);
assert_offset!(hipDeviceProp_tR0600, totalConstMem, 352);
assert_offset!(hipDeviceProp_tR0600, major, 360);
assert_offset!(hipDeviceProp_tR0600, minor, 364);
assert_offset!(hipDeviceProp_tR0600, textureAlignment, 368);
assert_offset!(hipDeviceProp_tR0600, texturePitchAlignment, 376);
assert_offset!(hipDeviceProp_tR0600, deviceOverlap, 384);
assert_offset!(hipDeviceProp_tR0600, multiProcessorCount, 388);
assert_offset!(hipDeviceProp_tR0600, kernelExecTimeoutEnabled, 392);
assert_offset!(hipDeviceProp_tR0600, integrated, 396);
assert_offset!(hipDeviceProp_tR0600, canMapHostMemory, 400);
assert_offset!(hipDeviceProp_tR0600, computeMode, 404);
assert_offset!(hipDeviceProp_tR0600, maxTexture1D, 408);
assert_offset!(hipDeviceProp_tR0600, maxTexture1DMipmap, 412);
assert_offset!(hipDeviceProp_tR0600, maxTexture1DLinear, 416);
assert_offset!(hipDeviceProp_tR0600, maxTexture2D, 420);
assert_offset!(hipDeviceProp_tR0600, maxTexture2DMipmap, 428);
assert_offset!(hipDeviceProp_tR0600, maxTexture2DLinear, 436);
assert_offset!(hipDeviceProp_tR0600, maxTexture2DGather, 448);
assert_offset!(hipDeviceProp_tR0600, maxTexture3D, 456);
assert_offset!(hipDeviceProp_tR0600, maxTexture3DAlt, 468);
assert_offset!(hipDeviceProp_tR0600, maxTextureCubemap, 480);
assert_offset!(hipDeviceProp_tR0600, maxTexture1DLayered, 484);
assert_offset!(hipDeviceProp_tR0600, maxTexture2DLayered, 492);
assert_offset!(hipDeviceProp_tR0600, maxTextureCubemapLayered, 504);
assert_offset!(hipDeviceProp_tR0600, maxSurface1D, 512);
assert_offset!(hipDeviceProp_tR0600, maxSurface2D, 516);
assert_offset!(hipDeviceProp_tR0600, maxSurface3D, 524);
assert_offset!(hipDeviceProp_tR0600, maxSurface1DLayered, 536);
assert_offset!(hipDeviceProp_tR0600, maxSurface2DLayered, 544);
assert_offset!(hipDeviceProp_tR0600, maxSurfaceCubemap, 556);
assert_offset!(hipDeviceProp_tR0600, maxSurfaceCubemapLayered, 560);
assert_offset!(hipDeviceProp_tR0600, surfaceAlignment, 568);
assert_offset!(hipDeviceProp_tR0600, concurrentKernels, 576);
assert_offset!(hipDeviceProp_tR0600, ECCEnabled, 580);
assert_offset!(hipDeviceProp_tR0600, pciBusID, 584);
assert_offset!(hipDeviceProp_tR0600, pciDeviceID, 588);
assert_offset!(hipDeviceProp_tR0600, pciDomainID, 592);
assert_offset!(hipDeviceProp_tR0600, tccDriver, 596);
assert_offset!(hipDeviceProp_tR0600, asyncEngineCount, 600);
assert_offset!(hipDeviceProp_tR0600, unifiedAddressing, 604);
assert_offset!(hipDeviceProp_tR0600, memoryClockRate, 608);
assert_offset!(hipDeviceProp_tR0600, memoryBusWidth, 612);
assert_offset!(hipDeviceProp_tR0600, l2CacheSize, 616);
assert_offset!(hipDeviceProp_tR0600, persistingL2CacheMaxSize, 620);
assert_offset!(hipDeviceProp_tR0600, maxThreadsPerMultiProcessor, 624);
assert_offset!(hipDeviceProp_tR0600, streamPrioritiesSupported, 628);
assert_offset!(hipDeviceProp_tR0600, globalL1CacheSupported, 632);
assert_offset!(hipDeviceProp_tR0600, localL1CacheSupported, 636);
assert_offset!(hipDeviceProp_tR0600, sharedMemPerMultiprocessor, 640);
assert_offset!(hipDeviceProp_tR0600, regsPerMultiprocessor, 648);
assert_offset!(hipDeviceProp_tR0600, managedMemory, 652);
assert_offset!(hipDeviceProp_tR0600, isMultiGpuBoard, 656);
assert_offset!(hipDeviceProp_tR0600, multiGpuBoardGroupID, 660);
assert_offset!(hipDeviceProp_tR0600, hostNativeAtomicSupported, 664);
assert_offset!(hipDeviceProp_tR0600, singleToDoublePrecisionPerfRatio, 668);
assert_offset!(hipDeviceProp_tR0600, pageableMemoryAccess, 672);
assert_offset!(hipDeviceProp_tR0600, concurrentManagedAccess, 676);
assert_offset!(hipDeviceProp_tR0600, computePreemptionSupported, 680);
assert_offset!(hipDeviceProp_tR0600, canUseHostPointerForRegisteredMem, 684);
assert_offset!(hipDeviceProp_tR0600, cooperativeLaunch, 688);
assert_offset!(hipDeviceProp_tR0600, cooperativeMultiDeviceLaunch, 692);
assert_offset!(hipDeviceProp_tR0600, sharedMemPerBlockOptin, 696);
assert_offset!(
    hipDeviceProp_tR0600,
    pageableMemoryAccessUsesHostPageTables,
    704
);
assert_offset!(hipDeviceProp_tR0600, directManagedMemAccessFromHost, 708);
assert_offset!(hipDeviceProp_tR0600, maxBlocksPerMultiProcessor, 712);
assert_offset!(hipDeviceProp_tR0600, accessPolicyMaxWindowSize, 716);
assert_offset!(hipDeviceProp_tR0600, reservedSharedMemPerBlock, 720);
assert_offset!(hipDeviceProp_tR0600, hostRegisterSupported, 728);
assert_offset!(hipDeviceProp_tR0600, sparseHipArraySupported, 732);
assert_offset!(hipDeviceProp_tR0600, hostRegisterReadOnlySupported, 736);
assert_offset!(hipDeviceProp_tR0600, timelineSemaphoreInteropSupported, 740);
assert_offset!(hipDeviceProp_tR0600, memoryPoolsSupported, 744);
assert_offset!(hipDeviceProp_tR0600, gpuDirectRDMASupported, 748);
assert_offset!(hipDeviceProp_tR0600, gpuDirectRDMAFlushWritesOptions, 752);
assert_offset!(hipDeviceProp_tR0600, gpuDirectRDMAWritesOrdering, 756);
assert_offset!(hipDeviceProp_tR0600, memoryPoolSupportedHandleTypes, 760);
assert_offset!(hipDeviceProp_tR0600, deferredMappingHipArraySupported, 764);
assert_offset!(hipDeviceProp_tR0600, ipcEventSupported, 768);
assert_offset!(hipDeviceProp_tR0600, clusterLaunch, 772);
assert_offset!(hipDeviceProp_tR0600, unifiedFunctionPointers, 776);
assert_offset!(hipDeviceProp_tR0600, reserved, 780);
assert_offset!(hipDeviceProp_tR0600, hipReserved, 1032);
assert_offset!(hipDeviceProp_tR0600, gcnArchName, 1160);
assert_offset!(hipDeviceProp_tR0600, maxSharedMemoryPerMultiProcessor, 1416);
assert_offset!(hipDeviceProp_tR0600, clockInstructionRate, 1424);
assert_offset!(hipDeviceProp_tR0600, arch, 1428);
assert_offset!(hipDeviceProp_tR0600, hdpMemFlushCntl, 1432);
assert_offset!(hipDeviceProp_tR0600, hdpRegFlushCntl, 1440);
assert_offset!(
    hipDeviceProp_tR0600,
    cooperativeMultiDeviceUnmatchedFunc,
    1448
);
assert_offset!(
    hipDeviceProp_tR0600,
    cooperativeMultiDeviceUnmatchedGridDim,
    1452
);
assert_offset!(
    hipDeviceProp_tR0600,
    cooperativeMultiDeviceUnmatchedBlockDim,
    1456
);
assert_offset!(
    hipDeviceProp_tR0600,
    cooperativeMultiDeviceUnmatchedSharedMem,
    1460
);
assert_offset!(hipDeviceProp_tR0600, isLargeBar, 1464);
assert_offset!(hipDeviceProp_tR0600, asicRevision, 1468);
assert_offset!(hipFuncAttributes, binaryVersion, 0);
assert_offset!(hipFuncAttributes, cacheModeCA, 4);
assert_offset!(hipFuncAttributes, constSizeBytes, 8);
assert_offset!(hipFuncAttributes, localSizeBytes, 16);
assert_offset!(hipFuncAttributes, maxDynamicSharedSizeBytes, 24);
assert_offset!(hipFuncAttributes, maxThreadsPerBlock, 28);
assert_offset!(hipFuncAttributes, numRegs, 32);
assert_offset!(hipFuncAttributes, preferredShmemCarveout, 36);
assert_offset!(hipFuncAttributes, ptxVersion, 40);
assert_offset!(hipFuncAttributes, sharedSizeBytes, 48);
assert_offset!(hipPointerAttribute_t, type_, 0);
assert_offset!(hipPointerAttribute_t, device, 4);
assert_offset!(hipPointerAttribute_t, devicePointer, 8);
assert_offset!(hipPointerAttribute_t, hostPointer, 16);
assert_offset!(hipPointerAttribute_t, isManaged, 24);
assert_offset!(hipPointerAttribute_t, allocationFlags, 28);
assert_offset!(dim3, x, 0);
assert_offset!(dim3, y, 4);
assert_offset!(dim3, z, 8);
assert_offset!(hipLaunchParams_t, func, 0);
assert_offset!(hipLaunchParams_t, gridDim, 8);
assert_offset!(hipLaunchParams_t, blockDim, 20);
assert_offset!(hipLaunchParams_t, args, 32);
assert_offset!(hipLaunchParams_t, sharedMem, 40);
assert_offset!(hipLaunchParams_t, stream, 48);
assert_offset!(hipKernelNodeParams, blockDim, 0);
assert_offset!(hipKernelNodeParams, extra, 16);
assert_offset!(hipKernelNodeParams, func, 24);
assert_offset!(hipKernelNodeParams, gridDim, 32);
assert_offset!(hipKernelNodeParams, kernelParams, 48);
assert_offset!(hipKernelNodeParams, sharedMemBytes, 56);
assert_offset!(hipMemsetParams, dst, 0);
assert_offset!(hipMemsetParams, elementSize, 8);
assert_offset!(hipMemsetParams, height, 16);
assert_offset!(hipMemsetParams, pitch, 24);
assert_offset!(hipMemsetParams, value, 32);
assert_offset!(hipMemsetParams, width, 40);
assert_offset!(hipMemcpy3DParms, srcArray, 0);
assert_offset!(hipMemcpy3DParms, srcPos, 8);
assert_offset!(hipMemcpy3DParms, srcPtr, 32);
assert_offset!(hipMemcpy3DParms, dstArray, 64);
assert_offset!(hipMemcpy3DParms, dstPos, 72);
assert_offset!(hipMemcpy3DParms, dstPtr, 96);
assert_offset!(hipMemcpy3DParms, extent, 128);
assert_offset!(hipMemcpy3DParms, kind, 152);
assert_offset!(hip_Memcpy2D, srcXInBytes, 0);
assert_offset!(hip_Memcpy2D, srcY, 8);
assert_offset!(hip_Memcpy2D, srcMemoryType, 16);
assert_offset!(hip_Memcpy2D, srcHost, 24);
assert_offset!(hip_Memcpy2D, srcDevice, 32);
assert_offset!(hip_Memcpy2D, srcArray, 40);
assert_offset!(hip_Memcpy2D, srcPitch, 48);
assert_offset!(hip_Memcpy2D, dstXInBytes, 56);
assert_offset!(hip_Memcpy2D, dstY, 64);
assert_offset!(hip_Memcpy2D, dstMemoryType, 72);
assert_offset!(hip_Memcpy2D, dstHost, 80);
assert_offset!(hip_Memcpy2D, dstDevice, 88);
assert_offset!(hip_Memcpy2D, dstArray, 96);
assert_offset!(hip_Memcpy2D, dstPitch, 104);
assert_offset!(hip_Memcpy2D, WidthInBytes, 112);
assert_offset!(hip_Memcpy2D, Height, 120);
assert_offset!(hipChannelFormatDesc, x, 0);
assert_offset!(hipChannelFormatDesc, y, 4);
assert_offset!(hipChannelFormatDesc, z, 8);
assert_offset!(hipChannelFormatDesc, w, 12);
assert_offset!(hipChannelFormatDesc, f, 16);
assert_offset!(hipPitchedPtr, ptr, 0);
assert_offset!(hipPitchedPtr, pitch, 8);
assert_offset!(hipPitchedPtr, xsize, 16);
assert_offset!(hipPitchedPtr, ysize, 24);
assert_offset!(hipExtent, width, 0);
assert_offset!(hipExtent, height, 8);
assert_offset!(hipExtent, depth, 16);
assert_offset!(hipPos, x, 0);
assert_offset!(hipPos, y, 8);
assert_offset!(hipPos, z, 16);
assert_offset!(hipIpcMemHandle_st, reserved, 0);
assert_offset!(hipIpcEventHandle_st, reserved, 0);
assert_offset!(hipUUID_t, bytes, 0);
assert_offset!(hipFunctionLaunchParams_t, function, 0);
assert_offset!(hipFunctionLaunchParams_t, gridDimX, 8);
assert_offset!(hipFunctionLaunchParams_t, gridDimY, 12);
assert_offset!(hipFunctionLaunchParams_t, gridDimZ, 16);
assert_offset!(hipFunctionLaunchParams_t, blockDimX, 20);
assert_offset!(hipFunctionLaunchParams_t, blockDimY, 24);
assert_offset!(hipFunctionLaunchParams_t, blockDimZ, 28);
assert_offset!(hipFunctionLaunchParams_t, sharedMemBytes, 32);
assert_offset!(hipFunctionLaunchParams_t, hStream, 40);
assert_offset!(hipFunctionLaunchParams_t, kernelParams, 48);
assert_offset!(hipMemPoolProps, allocType, 0);
assert_offset!(hipMemPoolProps, handleTypes, 4);
assert_offset!(hipMemPoolProps, location, 8);
assert_offset!(hipMemPoolProps, win32SecurityAttributes, 16);
assert_offset!(hipMemPoolProps, maxSize, 24);
assert_offset!(hipMemPoolProps, reserved, 32);
assert_offset!(hipMemAccessDesc, location, 0);
assert_offset!(hipMemAccessDesc, flags, 8);
assert_offset!(hipMemLocation, type_, 0);
assert_offset!(hipMemLocation, id, 4);
assert_offset!(hipDeviceProp_tR0000, name, 0);
assert_offset!(hipDeviceProp_tR0000, totalGlobalMem, 256);
assert_offset!(hipDeviceProp_tR0000, sharedMemPerBlock, 264);
assert_offset!(hipDeviceProp_tR0000, regsPerBlock, 272);
assert_offset!(hipDeviceProp_tR0000, warpSize, 276);
assert_offset!(hipDeviceProp_tR0000, maxThreadsPerBlock, 280);
assert_offset!(hipDeviceProp_tR0000, maxThreadsDim, 284);
assert_offset!(hipDeviceProp_tR0000, maxGridSize, 296);
assert_offset!(hipDeviceProp_tR0000, clockRate, 308);
assert_offset!(hipDeviceProp_tR0000, memoryClockRate, 312);
assert_offset!(hipDeviceProp_tR0000, memoryBusWidth, 316);
assert_offset!(hipDeviceProp_tR0000, totalConstMem, 320);
assert_offset!(hipDeviceProp_tR0000, major, 328);
assert_offset!(hipDeviceProp_tR0000, minor, 332);
assert_offset!(hipDeviceProp_tR0000, multiProcessorCount, 336);
assert_offset!(hipDeviceProp_tR0000, l2CacheSize, 340);
assert_offset!(hipDeviceProp_tR0000, maxThreadsPerMultiProcessor, 344);
assert_offset!(hipDeviceProp_tR0000, computeMode, 348);
assert_offset!(hipDeviceProp_tR0000, clockInstructionRate, 352);
assert_offset!(hipDeviceProp_tR0000, arch, 356);
assert_offset!(hipDeviceProp_tR0000, concurrentKernels, 360);
assert_offset!(hipDeviceProp_tR0000, pciDomainID, 364);
assert_offset!(hipDeviceProp_tR0000, pciBusID, 368);
assert_offset!(hipDeviceProp_tR0000, pciDeviceID, 372);
assert_offset!(hipDeviceProp_tR0000, maxSharedMemoryPerMultiProcessor, 376);
assert_offset!(hipDeviceProp_tR0000, isMultiGpuBoard, 384);
assert_offset!(hipDeviceProp_tR0000, canMapHostMemory, 388);
assert_offset!(hipDeviceProp_tR0000, gcnArch, 392);
assert_offset!(hipDeviceProp_tR0000, gcnArchName, 396);
assert_offset!(hipDeviceProp_tR0000, integrated, 652);
assert_offset!(hipDeviceProp_tR0000, cooperativeLaunch, 656);
assert_offset!(hipDeviceProp_tR0000, cooperativeMultiDeviceLaunch, 660);
assert_offset!(hipDeviceProp_tR0000, maxTexture1DLinear, 664);
assert_offset!(hipDeviceProp_tR0000, maxTexture1D, 668);
assert_offset!(hipDeviceProp_tR0000, maxTexture2D, 672);
assert_offset!(hipDeviceProp_tR0000, maxTexture3D, 680);
assert_offset!(hipDeviceProp_tR0000, hdpMemFlushCntl, 696);
assert_offset!(hipDeviceProp_tR0000, hdpRegFlushCntl, 704);
assert_offset!(hipDeviceProp_tR0000, memPitch, 712);
assert_offset!(hipDeviceProp_tR0000, textureAlignment, 720);
assert_offset!(hipDeviceProp_tR0000, texturePitchAlignment, 728);
assert_offset!(hipDeviceProp_tR0000, kernelExecTimeoutEnabled, 736);
assert_offset!(hipDeviceProp_tR0000, ECCEnabled, 740);
assert_offset!(hipDeviceProp_tR0000, tccDriver, 744);
assert_offset!(
    hipDeviceProp_tR0000,
    cooperativeMultiDeviceUnmatchedFunc,
    748
);
assert_offset!(
    hipDeviceProp_tR0000,
    cooperativeMultiDeviceUnmatchedGridDim,
    752
);
assert_offset!(
    hipDeviceProp_tR0000,
    cooperativeMultiDeviceUnmatchedBlockDim,
    756
);
assert_offset!(
    hipDeviceProp_tR0000,
    cooperativeMultiDeviceUnmatchedSharedMem,
    760
);
assert_offset!(hipDeviceProp_tR0000, isLargeBar, 764);
assert_offset!(hipDeviceProp_tR0000, asicRevision, 768);
assert_offset!(hipDeviceProp_tR0000, managedMemory, 772);
assert_offset!(hipDeviceProp_tR0000, directManagedMemAccessFromHost, 776);
assert_offset!(hipDeviceProp_tR0000, concurrentManagedAccess, 780);
assert_offset!(hipDeviceProp_tR0000, pageableMemoryAccess, 784);
assert_offset!(
    hipDeviceProp_tR0000,
    pageableMemoryAccessUsesHostPageTables,
    788
);
