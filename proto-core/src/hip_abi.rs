//! HIP's C types that both ends lay out the same way: `hipDeviceProp_tR0600` (with
//! `hipUUID_t` and `hipDeviceArch_t`), which the worker's HIP backend receives from ROCm and
//! the client library fills for the application. Defined once here, the one crate both
//! depend on (as [`crate::hip_error`] is HIP's one error table); the client's `abi` re-exports
//! them and asserts every size and offset against ROCm's headers.
//!
//! The field names are ROCm's (`hip_runtime_api.h` documents each); they are not repeated here.
#![allow(non_camel_case_types, non_snake_case, missing_docs)]

use core::ffi::{c_char, c_int, c_uint};

/// `hipUUID_t`: a device's UUID, 16 bytes.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipUUID_t {
    pub bytes: [c_char; 16],
}

/// `hipUUID`.
pub type hipUUID = hipUUID_t;

/// `hipDeviceProp_tR0600`: ROCm 6 and 7's `hipDeviceProp_t` (1472 bytes), field for field. What
/// the worker's HIP backend reads from ROCm (`hipGetDevicePropertiesR0600`) and what the client
/// fills for the application: one definition for both.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipDeviceProp_tR0600 {
    pub name: [c_char; 256],
    pub uuid: hipUUID,
    pub luid: [c_char; 8],
    pub luidDeviceNodeMask: c_uint,
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: c_int,
    pub warpSize: c_int,
    pub memPitch: usize,
    pub maxThreadsPerBlock: c_int,
    pub maxThreadsDim: [c_int; 3],
    pub maxGridSize: [c_int; 3],
    pub clockRate: c_int,
    pub totalConstMem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub deviceOverlap: c_int,
    pub multiProcessorCount: c_int,
    pub kernelExecTimeoutEnabled: c_int,
    pub integrated: c_int,
    pub canMapHostMemory: c_int,
    pub computeMode: c_int,
    pub maxTexture1D: c_int,
    pub maxTexture1DMipmap: c_int,
    pub maxTexture1DLinear: c_int,
    pub maxTexture2D: [c_int; 2],
    pub maxTexture2DMipmap: [c_int; 2],
    pub maxTexture2DLinear: [c_int; 3],
    pub maxTexture2DGather: [c_int; 2],
    pub maxTexture3D: [c_int; 3],
    pub maxTexture3DAlt: [c_int; 3],
    pub maxTextureCubemap: c_int,
    pub maxTexture1DLayered: [c_int; 2],
    pub maxTexture2DLayered: [c_int; 3],
    pub maxTextureCubemapLayered: [c_int; 2],
    pub maxSurface1D: c_int,
    pub maxSurface2D: [c_int; 2],
    pub maxSurface3D: [c_int; 3],
    pub maxSurface1DLayered: [c_int; 2],
    pub maxSurface2DLayered: [c_int; 3],
    pub maxSurfaceCubemap: c_int,
    pub maxSurfaceCubemapLayered: [c_int; 2],
    pub surfaceAlignment: usize,
    pub concurrentKernels: c_int,
    pub ECCEnabled: c_int,
    pub pciBusID: c_int,
    pub pciDeviceID: c_int,
    pub pciDomainID: c_int,
    pub tccDriver: c_int,
    pub asyncEngineCount: c_int,
    pub unifiedAddressing: c_int,
    pub memoryClockRate: c_int,
    pub memoryBusWidth: c_int,
    pub l2CacheSize: c_int,
    pub persistingL2CacheMaxSize: c_int,
    pub maxThreadsPerMultiProcessor: c_int,
    pub streamPrioritiesSupported: c_int,
    pub globalL1CacheSupported: c_int,
    pub localL1CacheSupported: c_int,
    pub sharedMemPerMultiprocessor: usize,
    pub regsPerMultiprocessor: c_int,
    pub managedMemory: c_int,
    pub isMultiGpuBoard: c_int,
    pub multiGpuBoardGroupID: c_int,
    pub hostNativeAtomicSupported: c_int,
    pub singleToDoublePrecisionPerfRatio: c_int,
    pub pageableMemoryAccess: c_int,
    pub concurrentManagedAccess: c_int,
    pub computePreemptionSupported: c_int,
    pub canUseHostPointerForRegisteredMem: c_int,
    pub cooperativeLaunch: c_int,
    pub cooperativeMultiDeviceLaunch: c_int,
    pub sharedMemPerBlockOptin: usize,
    pub pageableMemoryAccessUsesHostPageTables: c_int,
    pub directManagedMemAccessFromHost: c_int,
    pub maxBlocksPerMultiProcessor: c_int,
    pub accessPolicyMaxWindowSize: c_int,
    pub reservedSharedMemPerBlock: usize,
    pub hostRegisterSupported: c_int,
    pub sparseHipArraySupported: c_int,
    pub hostRegisterReadOnlySupported: c_int,
    pub timelineSemaphoreInteropSupported: c_int,
    pub memoryPoolsSupported: c_int,
    pub gpuDirectRDMASupported: c_int,
    pub gpuDirectRDMAFlushWritesOptions: c_uint,
    pub gpuDirectRDMAWritesOrdering: c_int,
    pub memoryPoolSupportedHandleTypes: c_uint,
    pub deferredMappingHipArraySupported: c_int,
    pub ipcEventSupported: c_int,
    pub clusterLaunch: c_int,
    pub unifiedFunctionPointers: c_int,
    pub reserved: [c_int; 63],
    pub hipReserved: [c_int; 32],
    pub gcnArchName: [c_char; 256],
    pub maxSharedMemoryPerMultiProcessor: usize,
    pub clockInstructionRate: c_int,
    pub arch: hipDeviceArch_t,
    pub hdpMemFlushCntl: *mut c_uint,
    pub hdpRegFlushCntl: *mut c_uint,
    pub cooperativeMultiDeviceUnmatchedFunc: c_int,
    pub cooperativeMultiDeviceUnmatchedGridDim: c_int,
    pub cooperativeMultiDeviceUnmatchedBlockDim: c_int,
    pub cooperativeMultiDeviceUnmatchedSharedMem: c_int,
    pub isLargeBar: c_int,
    pub asicRevision: c_int,
}

/// `hipDeviceArch_t`: 17 one-bit `unsigned` bit-fields packed LSB-first into one 32-bit unit
/// (x86-64 SysV), in declaration order.
#[repr(C)]
#[derive(Copy, Clone, Default, Debug, PartialEq, Eq)]
pub struct hipDeviceArch_t {
    pub bits: u32,
}

impl hipDeviceArch_t {
    /// `hasGlobalInt32Atomics`
    pub const HAS_GLOBAL_INT32_ATOMICS: u32 = 1 << 0;
    /// `hasGlobalFloatAtomicExch`
    pub const HAS_GLOBAL_FLOAT_ATOMIC_EXCH: u32 = 1 << 1;
    /// `hasSharedInt32Atomics`
    pub const HAS_SHARED_INT32_ATOMICS: u32 = 1 << 2;
    /// `hasSharedFloatAtomicExch`
    pub const HAS_SHARED_FLOAT_ATOMIC_EXCH: u32 = 1 << 3;
    /// `hasFloatAtomicAdd`
    pub const HAS_FLOAT_ATOMIC_ADD: u32 = 1 << 4;
    /// `hasGlobalInt64Atomics`
    pub const HAS_GLOBAL_INT64_ATOMICS: u32 = 1 << 5;
    /// `hasSharedInt64Atomics`
    pub const HAS_SHARED_INT64_ATOMICS: u32 = 1 << 6;
    /// `hasDoubles`
    pub const HAS_DOUBLES: u32 = 1 << 7;
    /// `hasWarpVote`
    pub const HAS_WARP_VOTE: u32 = 1 << 8;
    /// `hasWarpBallot`
    pub const HAS_WARP_BALLOT: u32 = 1 << 9;
    /// `hasWarpShuffle`
    pub const HAS_WARP_SHUFFLE: u32 = 1 << 10;
    /// `hasFunnelShift`
    pub const HAS_FUNNEL_SHIFT: u32 = 1 << 11;
    /// `hasThreadFenceSystem`
    pub const HAS_THREAD_FENCE_SYSTEM: u32 = 1 << 12;
    /// `hasSyncThreadsExt`
    pub const HAS_SYNC_THREADS_EXT: u32 = 1 << 13;
    /// `hasSurfaceFuncs`
    pub const HAS_SURFACE_FUNCS: u32 = 1 << 14;
    /// `has3dGrid`
    pub const HAS3D_GRID: u32 = 1 << 15;
    /// `hasDynamicParallelism`
    pub const HAS_DYNAMIC_PARALLELISM: u32 = 1 << 16;
}

impl hipUUID_t {
    /// All zero.
    pub const fn zeroed() -> Self {
        Self { bytes: [0; 16] }
    }
}

impl hipDeviceProp_tR0600 {
    /// All zero (null pointers): what a runtime fills, or a caller's starting point.
    pub const fn zeroed() -> Self {
        Self {
            name: [0; 256],
            uuid: hipUUID_t::zeroed(),
            luid: [0; 8],
            luidDeviceNodeMask: 0,
            totalGlobalMem: 0,
            sharedMemPerBlock: 0,
            regsPerBlock: 0,
            warpSize: 0,
            memPitch: 0,
            maxThreadsPerBlock: 0,
            maxThreadsDim: [0; 3],
            maxGridSize: [0; 3],
            clockRate: 0,
            totalConstMem: 0,
            major: 0,
            minor: 0,
            textureAlignment: 0,
            texturePitchAlignment: 0,
            deviceOverlap: 0,
            multiProcessorCount: 0,
            kernelExecTimeoutEnabled: 0,
            integrated: 0,
            canMapHostMemory: 0,
            computeMode: 0,
            maxTexture1D: 0,
            maxTexture1DMipmap: 0,
            maxTexture1DLinear: 0,
            maxTexture2D: [0; 2],
            maxTexture2DMipmap: [0; 2],
            maxTexture2DLinear: [0; 3],
            maxTexture2DGather: [0; 2],
            maxTexture3D: [0; 3],
            maxTexture3DAlt: [0; 3],
            maxTextureCubemap: 0,
            maxTexture1DLayered: [0; 2],
            maxTexture2DLayered: [0; 3],
            maxTextureCubemapLayered: [0; 2],
            maxSurface1D: 0,
            maxSurface2D: [0; 2],
            maxSurface3D: [0; 3],
            maxSurface1DLayered: [0; 2],
            maxSurface2DLayered: [0; 3],
            maxSurfaceCubemap: 0,
            maxSurfaceCubemapLayered: [0; 2],
            surfaceAlignment: 0,
            concurrentKernels: 0,
            ECCEnabled: 0,
            pciBusID: 0,
            pciDeviceID: 0,
            pciDomainID: 0,
            tccDriver: 0,
            asyncEngineCount: 0,
            unifiedAddressing: 0,
            memoryClockRate: 0,
            memoryBusWidth: 0,
            l2CacheSize: 0,
            persistingL2CacheMaxSize: 0,
            maxThreadsPerMultiProcessor: 0,
            streamPrioritiesSupported: 0,
            globalL1CacheSupported: 0,
            localL1CacheSupported: 0,
            sharedMemPerMultiprocessor: 0,
            regsPerMultiprocessor: 0,
            managedMemory: 0,
            isMultiGpuBoard: 0,
            multiGpuBoardGroupID: 0,
            hostNativeAtomicSupported: 0,
            singleToDoublePrecisionPerfRatio: 0,
            pageableMemoryAccess: 0,
            concurrentManagedAccess: 0,
            computePreemptionSupported: 0,
            canUseHostPointerForRegisteredMem: 0,
            cooperativeLaunch: 0,
            cooperativeMultiDeviceLaunch: 0,
            sharedMemPerBlockOptin: 0,
            pageableMemoryAccessUsesHostPageTables: 0,
            directManagedMemAccessFromHost: 0,
            maxBlocksPerMultiProcessor: 0,
            accessPolicyMaxWindowSize: 0,
            reservedSharedMemPerBlock: 0,
            hostRegisterSupported: 0,
            sparseHipArraySupported: 0,
            hostRegisterReadOnlySupported: 0,
            timelineSemaphoreInteropSupported: 0,
            memoryPoolsSupported: 0,
            gpuDirectRDMASupported: 0,
            gpuDirectRDMAFlushWritesOptions: 0,
            gpuDirectRDMAWritesOrdering: 0,
            memoryPoolSupportedHandleTypes: 0,
            deferredMappingHipArraySupported: 0,
            ipcEventSupported: 0,
            clusterLaunch: 0,
            unifiedFunctionPointers: 0,
            reserved: [0; 63],
            hipReserved: [0; 32],
            gcnArchName: [0; 256],
            maxSharedMemoryPerMultiProcessor: 0,
            clockInstructionRate: 0,
            arch: hipDeviceArch_t { bits: 0 },
            hdpMemFlushCntl: core::ptr::null_mut(),
            hdpRegFlushCntl: core::ptr::null_mut(),
            cooperativeMultiDeviceUnmatchedFunc: 0,
            cooperativeMultiDeviceUnmatchedGridDim: 0,
            cooperativeMultiDeviceUnmatchedBlockDim: 0,
            cooperativeMultiDeviceUnmatchedSharedMem: 0,
            isLargeBar: 0,
            asicRevision: 0,
        }
    }
}

/// ROCm's size on 64-bit targets (the client's `abi` checks every offset too).
#[cfg(target_pointer_width = "64")]
const _: () = assert!(core::mem::size_of::<hipDeviceProp_tR0600>() == 1472);
