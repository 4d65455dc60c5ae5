//! The C types of the ABI: flag and limit macros, enums (integer aliases plus constants), the
//! structs of ROCm's headers, and the hand-written ones (bit fields, legacy layouts).

use super::*;

// ------------------------------------------------------------------------------------------------
// Flag and limit macros
// ------------------------------------------------------------------------------------------------

pub const __HIP_HAS_GET_PCH: u32 = 1;
pub const GENERIC_GRID_LAUNCH: u32 = 1;
pub const HIP_TRSA_OVERRIDE_FORMAT: u32 = 1;
pub const HIP_TRSF_READ_AS_INTEGER: u32 = 1;
pub const HIP_TRSF_NORMALIZED_COORDINATES: u32 = 2;
pub const HIP_TRSF_SRGB: u32 = 16;
pub const hipTextureType1D: u32 = 1;
pub const hipTextureType2D: u32 = 2;
pub const hipTextureType3D: u32 = 3;
pub const hipTextureTypeCubemap: u32 = 12;
pub const hipTextureType1DLayered: u32 = 241;
pub const hipTextureType2DLayered: u32 = 242;
pub const hipTextureTypeCubemapLayered: u32 = 252;
pub const HIP_IMAGE_OBJECT_SIZE_DWORD: u32 = 12;
pub const HIP_SAMPLER_OBJECT_SIZE_DWORD: u32 = 8;
pub const HIP_SAMPLER_OBJECT_OFFSET_DWORD: u32 = 12;
pub const HIP_TEXTURE_OBJECT_SIZE_DWORD: u32 = 20;
pub const hipIpcMemLazyEnablePeerAccess: u32 = 1;
pub const HIP_IPC_HANDLE_SIZE: u32 = 64;
pub const hipStreamDefault: u32 = 0;
pub const hipStreamNonBlocking: u32 = 1;
pub const hipEventDefault: u32 = 0;
pub const hipEventBlockingSync: u32 = 1;
pub const hipEventDisableTiming: u32 = 2;
pub const hipEventInterprocess: u32 = 4;
pub const hipEventRecordDefault: u32 = 0;
pub const hipEventRecordExternal: u32 = 1;
pub const hipEventWaitDefault: u32 = 0;
pub const hipEventWaitExternal: u32 = 1;
pub const hipEventDisableSystemFence: u32 = 536870912;
pub const hipEventReleaseToDevice: u32 = 1073741824;
pub const hipEventReleaseToSystem: u32 = 0x80000000;
pub const hipEnableDefault: u32 = 0;
pub const hipEnableLegacyStream: u32 = 1;
pub const hipEnablePerThreadDefaultStream: u32 = 2;
pub const hipHostAllocDefault: u32 = 0;
pub const hipHostMallocDefault: u32 = 0;
pub const hipHostAllocPortable: u32 = 1;
pub const hipHostMallocPortable: u32 = 1;
pub const hipHostAllocMapped: u32 = 2;
pub const hipHostMallocMapped: u32 = 2;
pub const hipHostAllocWriteCombined: u32 = 4;
pub const hipHostMallocWriteCombined: u32 = 4;
pub const hipHostMallocUncached: u32 = 268435456;
pub const hipHostAllocUncached: u32 = 268435456;
pub const hipHostMallocNumaUser: u32 = 536870912;
pub const hipHostMallocCoherent: u32 = 1073741824;
pub const hipHostMallocNonCoherent: u32 = 0x80000000;
pub const hipMemAttachGlobal: u32 = 1;
pub const hipMemAttachHost: u32 = 2;
pub const hipMemAttachSingle: u32 = 4;
pub const hipDeviceMallocDefault: u32 = 0;
pub const hipDeviceMallocFinegrained: u32 = 1;
pub const hipMallocSignalMemory: u32 = 2;
pub const hipDeviceMallocUncached: u32 = 3;
pub const hipDeviceMallocContiguous: u32 = 4;
pub const hipHostRegisterDefault: u32 = 0;
pub const hipHostRegisterPortable: u32 = 1;
pub const hipHostRegisterMapped: u32 = 2;
pub const hipHostRegisterIoMemory: u32 = 4;
pub const hipHostRegisterReadOnly: u32 = 8;
pub const hipExtHostRegisterCoarseGrained: u32 = 8;
pub const hipExtHostRegisterUncached: u32 = 0x80000000;
pub const hipDeviceScheduleAuto: u32 = 0;
pub const hipDeviceScheduleSpin: u32 = 1;
pub const hipDeviceScheduleYield: u32 = 2;
pub const hipDeviceScheduleBlockingSync: u32 = 4;
pub const hipDeviceScheduleMask: u32 = 7;
pub const hipDeviceMapHost: u32 = 8;
pub const hipDeviceLmemResizeToMax: u32 = 16;
pub const hipArrayDefault: u32 = 0;
pub const hipArrayLayered: u32 = 1;
pub const hipArraySurfaceLoadStore: u32 = 2;
pub const hipArrayCubemap: u32 = 4;
pub const hipArrayTextureGather: u32 = 8;
pub const hipOccupancyDefault: u32 = 0;
pub const hipOccupancyDisableCachingOverride: u32 = 1;
pub const hipCooperativeLaunchMultiDeviceNoPreSync: u32 = 1;
pub const hipCooperativeLaunchMultiDeviceNoPostSync: u32 = 2;
pub const hipExtAnyOrderLaunch: u32 = 1;
pub const hipStreamWaitValueGte: u32 = 0;
pub const hipStreamWaitValueEq: u32 = 1;
pub const hipStreamWaitValueAnd: u32 = 2;
pub const hipStreamWaitValueNor: u32 = 3;
pub const hipExternalMemoryDedicated: u32 = 1;
pub const hipGraphKernelNodePortDefault: u32 = 0;
pub const hipGraphKernelNodePortLaunchCompletion: u32 = 2;
pub const hipGraphKernelNodePortProgrammatic: u32 = 1;

/// `HIP_LAUNCH_PARAM_*` markers of `hipModuleLaunchKernel`'s `extra` array (`(void*)0x01` ...).
pub const HIP_LAUNCH_PARAM_BUFFER_POINTER: *mut c_void = 0x01 as *mut c_void;
pub const HIP_LAUNCH_PARAM_BUFFER_SIZE: *mut c_void = 0x02 as *mut c_void;
pub const HIP_LAUNCH_PARAM_END: *mut c_void = 0x03 as *mut c_void;

pub const hipCpuDeviceId: c_int = -1;
pub const hipInvalidDeviceId: c_int = -2;

/// `hipStreamLegacy` / `hipStreamPerThread`: reserved stream handle values.
pub const hipStreamLegacy: hipStream_t = 1 as hipStream_t;
pub const hipStreamPerThread: hipStream_t = 2 as hipStream_t;

// ------------------------------------------------------------------------------------------------
// Enums (integer alias + constants) and types, in ROCm header order
// ------------------------------------------------------------------------------------------------

pub type hipJitOption = c_uint;
pub const hipJitOptionMaxRegisters: hipJitOption = 0;
pub const hipJitOptionThreadsPerBlock: hipJitOption = 1;
pub const hipJitOptionWallTime: hipJitOption = 2;
pub const hipJitOptionInfoLogBuffer: hipJitOption = 3;
pub const hipJitOptionInfoLogBufferSizeBytes: hipJitOption = 4;
pub const hipJitOptionErrorLogBuffer: hipJitOption = 5;
pub const hipJitOptionErrorLogBufferSizeBytes: hipJitOption = 6;
pub const hipJitOptionOptimizationLevel: hipJitOption = 7;
pub const hipJitOptionTargetFromContext: hipJitOption = 8;
pub const hipJitOptionTarget: hipJitOption = 9;
pub const hipJitOptionFallbackStrategy: hipJitOption = 10;
pub const hipJitOptionGenerateDebugInfo: hipJitOption = 11;
pub const hipJitOptionLogVerbose: hipJitOption = 12;
pub const hipJitOptionGenerateLineInfo: hipJitOption = 13;
pub const hipJitOptionCacheMode: hipJitOption = 14;
pub const hipJitOptionSm3xOpt: hipJitOption = 15;
pub const hipJitOptionFastCompile: hipJitOption = 16;
pub const hipJitOptionGlobalSymbolNames: hipJitOption = 17;
pub const hipJitOptionGlobalSymbolAddresses: hipJitOption = 18;
pub const hipJitOptionGlobalSymbolCount: hipJitOption = 19;
pub const hipJitOptionLto: hipJitOption = 20;
pub const hipJitOptionFtz: hipJitOption = 21;
pub const hipJitOptionPrecDiv: hipJitOption = 22;
pub const hipJitOptionPrecSqrt: hipJitOption = 23;
pub const hipJitOptionFma: hipJitOption = 24;
pub const hipJitOptionPositionIndependentCode: hipJitOption = 25;
pub const hipJitOptionMinCTAPerSM: hipJitOption = 26;
pub const hipJitOptionMaxThreadsPerBlock: hipJitOption = 27;
pub const hipJitOptionOverrideDirectiveValues: hipJitOption = 28;
pub const hipJitOptionNumOptions: hipJitOption = 29;
pub const hipJitOptionIRtoISAOptExt: hipJitOption = 10000;
pub const hipJitOptionIRtoISAOptCountExt: hipJitOption = 10001;

pub type hipJitInputType = c_uint;
pub const hipJitInputCubin: hipJitInputType = 0;
pub const hipJitInputPtx: hipJitInputType = 1;
pub const hipJitInputFatBinary: hipJitInputType = 2;
pub const hipJitInputObject: hipJitInputType = 3;
pub const hipJitInputLibrary: hipJitInputType = 4;
pub const hipJitInputNvvm: hipJitInputType = 5;
pub const hipJitNumLegacyInputTypes: hipJitInputType = 6;
pub const hipJitInputLLVMBitcode: hipJitInputType = 100;
pub const hipJitInputLLVMBundledBitcode: hipJitInputType = 101;
pub const hipJitInputLLVMArchivesOfBundledBitcode: hipJitInputType = 102;
pub const hipJitInputSpirv: hipJitInputType = 103;
pub const hipJitNumInputTypes: hipJitInputType = 10;

pub type hipJitCacheMode = c_uint;
pub const hipJitCacheOptionNone: hipJitCacheMode = 0;
pub const hipJitCacheOptionCG: hipJitCacheMode = 1;
pub const hipJitCacheOptionCA: hipJitCacheMode = 2;

pub type hipJitFallback = c_uint;
pub const hipJitPreferPTX: hipJitFallback = 0;
pub const hipJitPreferBinary: hipJitFallback = 1;

pub type hipLibraryOption_e = c_uint;
pub const hipLibraryHostUniversalFunctionAndDataTable: hipLibraryOption_e = 0;
pub const hipLibraryBinaryIsPreserved: hipLibraryOption_e = 1;

pub type hipLibraryOption = hipLibraryOption_e;
#[repr(C)]
pub struct ihiprtcLinkState {
    _unused: [u8; 0],
}
pub type hiprtcLinkState = *mut ihiprtcLinkState;
#[repr(C)]
pub struct _hiprtcProgram {
    _unused: [u8; 0],
}
pub type hiprtcProgram = *mut _hiprtcProgram;
pub const HIP_SUCCESS: c_uint = 0;
pub const HIP_ERROR_INVALID_VALUE: c_uint = 1;
pub const HIP_ERROR_NOT_INITIALIZED: c_uint = 2;
pub const HIP_ERROR_LAUNCH_OUT_OF_RESOURCES: c_uint = 3;

// `hipUUID_t`, `hipDeviceProp_tR0600` and `hipDeviceArch_t` are `proto_core::hip_abi`'s, shared
// with the worker's HIP backend (re-exported by `abi`).

pub type hipMemoryType = c_uint;
pub const hipMemoryTypeUnregistered: hipMemoryType = 0;
pub const hipMemoryTypeHost: hipMemoryType = 1;
pub const hipMemoryTypeDevice: hipMemoryType = 2;
pub const hipMemoryTypeManaged: hipMemoryType = 3;
pub const hipMemoryTypeArray: hipMemoryType = 10;
pub const hipMemoryTypeUnified: hipMemoryType = 11;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipPointerAttribute_t {
    pub type_: hipMemoryType,
    pub device: c_int,
    pub devicePointer: *mut c_void,
    pub hostPointer: *mut c_void,
    pub isManaged: c_int,
    pub allocationFlags: c_uint,
}

pub type hipDeviceAttribute_t = c_uint;
pub const hipDeviceAttributeCudaCompatibleBegin: hipDeviceAttribute_t = 0;
pub const hipDeviceAttributeEccEnabled: hipDeviceAttribute_t = 0;
pub const hipDeviceAttributeAsyncEngineCount: hipDeviceAttribute_t = 2;
pub const hipDeviceAttributeCanMapHostMemory: hipDeviceAttribute_t = 3;
pub const hipDeviceAttributeClockRate: hipDeviceAttribute_t = 5;
pub const hipDeviceAttributeComputeMode: hipDeviceAttribute_t = 6;
pub const hipDeviceAttributeConcurrentKernels: hipDeviceAttribute_t = 8;
pub const hipDeviceAttributeConcurrentManagedAccess: hipDeviceAttribute_t = 9;
pub const hipDeviceAttributeCooperativeLaunch: hipDeviceAttribute_t = 10;
pub const hipDeviceAttributeDeviceOverlap: hipDeviceAttribute_t = 12;
pub const hipDeviceAttributeGlobalL1CacheSupported: hipDeviceAttribute_t = 14;
pub const hipDeviceAttributeIntegrated: hipDeviceAttribute_t = 16;
pub const hipDeviceAttributeIsMultiGpuBoard: hipDeviceAttribute_t = 17;
pub const hipDeviceAttributeKernelExecTimeout: hipDeviceAttribute_t = 18;
pub const hipDeviceAttributeL2CacheSize: hipDeviceAttribute_t = 19;
pub const hipDeviceAttributeLocalL1CacheSupported: hipDeviceAttribute_t = 20;
pub const hipDeviceAttributeLuid: hipDeviceAttribute_t = 21;
pub const hipDeviceAttributeLuidDeviceNodeMask: hipDeviceAttribute_t = 22;
pub const hipDeviceAttributeComputeCapabilityMajor: hipDeviceAttribute_t = 23;
pub const hipDeviceAttributeManagedMemory: hipDeviceAttribute_t = 24;
pub const hipDeviceAttributeMaxBlockDimX: hipDeviceAttribute_t = 26;
pub const hipDeviceAttributeMaxBlockDimY: hipDeviceAttribute_t = 27;
pub const hipDeviceAttributeMaxBlockDimZ: hipDeviceAttribute_t = 28;
pub const hipDeviceAttributeMaxGridDimX: hipDeviceAttribute_t = 29;
pub const hipDeviceAttributeMaxGridDimY: hipDeviceAttribute_t = 30;
pub const hipDeviceAttributeMaxGridDimZ: hipDeviceAttribute_t = 31;
pub const hipDeviceAttributeMaxSurface1D: hipDeviceAttribute_t = 32;
pub const hipDeviceAttributeMaxSurface1DLayered: hipDeviceAttribute_t = 33;
pub const hipDeviceAttributeMaxSurface2D: hipDeviceAttribute_t = 34;
pub const hipDeviceAttributeMaxSurface2DLayered: hipDeviceAttribute_t = 35;
pub const hipDeviceAttributeMaxSurface3D: hipDeviceAttribute_t = 36;
pub const hipDeviceAttributeMaxSurfaceCubemap: hipDeviceAttribute_t = 37;
pub const hipDeviceAttributeMaxTexture1DWidth: hipDeviceAttribute_t = 39;
pub const hipDeviceAttributeMaxTexture1DLayered: hipDeviceAttribute_t = 40;
pub const hipDeviceAttributeMaxTexture1DLinear: hipDeviceAttribute_t = 41;
pub const hipDeviceAttributeMaxTexture1DMipmap: hipDeviceAttribute_t = 42;
pub const hipDeviceAttributeMaxTexture2DWidth: hipDeviceAttribute_t = 43;
pub const hipDeviceAttributeMaxTexture2DHeight: hipDeviceAttribute_t = 44;
pub const hipDeviceAttributeMaxTexture2DGather: hipDeviceAttribute_t = 45;
pub const hipDeviceAttributeMaxTexture2DLayered: hipDeviceAttribute_t = 46;
pub const hipDeviceAttributeMaxTexture2DLinear: hipDeviceAttribute_t = 47;
pub const hipDeviceAttributeMaxTexture2DMipmap: hipDeviceAttribute_t = 48;
pub const hipDeviceAttributeMaxTexture3DWidth: hipDeviceAttribute_t = 49;
pub const hipDeviceAttributeMaxTexture3DHeight: hipDeviceAttribute_t = 50;
pub const hipDeviceAttributeMaxTexture3DDepth: hipDeviceAttribute_t = 51;
pub const hipDeviceAttributeMaxTexture3DAlt: hipDeviceAttribute_t = 52;
pub const hipDeviceAttributeMaxTextureCubemap: hipDeviceAttribute_t = 53;
pub const hipDeviceAttributeMaxThreadsDim: hipDeviceAttribute_t = 55;
pub const hipDeviceAttributeMaxThreadsPerBlock: hipDeviceAttribute_t = 56;
pub const hipDeviceAttributeMaxPitch: hipDeviceAttribute_t = 58;
pub const hipDeviceAttributeMemoryBusWidth: hipDeviceAttribute_t = 59;
pub const hipDeviceAttributeMemoryClockRate: hipDeviceAttribute_t = 60;
pub const hipDeviceAttributeComputeCapabilityMinor: hipDeviceAttribute_t = 61;
pub const hipDeviceAttributeMultiGpuBoardGroupID: hipDeviceAttribute_t = 62;
pub const hipDeviceAttributeMultiprocessorCount: hipDeviceAttribute_t = 63;
pub const hipDeviceAttributeUnused1: hipDeviceAttribute_t = 64;
pub const hipDeviceAttributePageableMemoryAccess: hipDeviceAttribute_t = 65;
pub const hipDeviceAttributePciBusId: hipDeviceAttribute_t = 67;
pub const hipDeviceAttributePciDeviceId: hipDeviceAttribute_t = 68;
pub const hipDeviceAttributePciDomainId: hipDeviceAttribute_t = 69;
pub const hipDeviceAttributePciDomainID: hipDeviceAttribute_t = 69;
pub const hipDeviceAttributeMaxRegistersPerBlock: hipDeviceAttribute_t = 71;
pub const hipDeviceAttributeMaxSharedMemoryPerBlock: hipDeviceAttribute_t = 74;
pub const hipDeviceAttributeSharedMemPerBlockOptin: hipDeviceAttribute_t = 75;
pub const hipDeviceAttributeSurfaceAlignment: hipDeviceAttribute_t = 79;
pub const hipDeviceAttributeTccDriver: hipDeviceAttribute_t = 80;
pub const hipDeviceAttributeTextureAlignment: hipDeviceAttribute_t = 81;
pub const hipDeviceAttributeTexturePitchAlignment: hipDeviceAttribute_t = 82;
pub const hipDeviceAttributeTotalConstantMemory: hipDeviceAttribute_t = 83;
pub const hipDeviceAttributeTotalGlobalMem: hipDeviceAttribute_t = 84;
pub const hipDeviceAttributeUnifiedAddressing: hipDeviceAttribute_t = 85;
pub const hipDeviceAttributeUnused2: hipDeviceAttribute_t = 86;
pub const hipDeviceAttributeWarpSize: hipDeviceAttribute_t = 87;
pub const hipDeviceAttributeMemoryPoolsSupported: hipDeviceAttribute_t = 88;
pub const hipDeviceAttributeHostRegisterSupported: hipDeviceAttribute_t = 90;
pub const hipDeviceAttributeHostNumaId: hipDeviceAttribute_t = 92;
pub const hipDeviceAttributeCudaCompatibleEnd: hipDeviceAttribute_t = 9999;
pub const hipDeviceAttributeAmdSpecificBegin: hipDeviceAttribute_t = 10000;
pub const hipDeviceAttributeClockInstructionRate: hipDeviceAttribute_t = 10000;
pub const hipDeviceAttributeUnused3: hipDeviceAttribute_t = 10001;
pub const hipDeviceAttributeUnused4: hipDeviceAttribute_t = 10003;
pub const hipDeviceAttributeUnused5: hipDeviceAttribute_t = 10004;
pub const hipDeviceAttributeHdpMemFlushCntl: hipDeviceAttribute_t = 10005;
pub const hipDeviceAttributeHdpRegFlushCntl: hipDeviceAttribute_t = 10006;
pub const hipDeviceAttributeIsLargeBar: hipDeviceAttribute_t = 10011;
pub const hipDeviceAttributeAsicRevision: hipDeviceAttribute_t = 10012;
pub const hipDeviceAttributeImageSupport: hipDeviceAttribute_t = 10014;
pub const hipDeviceAttributeFineGrainSupport: hipDeviceAttribute_t = 10016;
pub const hipDeviceAttributeWallClockRate: hipDeviceAttribute_t = 10017;
pub const hipDeviceAttributeNumberOfXccs: hipDeviceAttribute_t = 10018;
pub const hipDeviceAttributePciChipId: hipDeviceAttribute_t = 10020;
pub const hipDeviceAttributeAmdSpecificEnd: hipDeviceAttribute_t = 19999;
pub const hipDeviceAttributeVendorSpecificBegin: hipDeviceAttribute_t = 20000;

pub type hipDriverProcAddressQueryResult = c_uint;
pub type hipComputeMode = c_uint;
pub const hipComputeModeDefault: hipComputeMode = 0;
pub const hipComputeModeExclusive: hipComputeMode = 1;
pub const hipComputeModeProhibited: hipComputeMode = 2;
pub const hipComputeModeExclusiveProcess: hipComputeMode = 3;

pub type hipFlushGPUDirectRDMAWritesOptions = c_uint;
pub type hipGPUDirectRDMAWritesOrdering = c_uint;
pub type hipDeviceptr_t = *mut c_void;
pub type hipChannelFormatKind = c_uint;
pub const hipChannelFormatKindSigned: hipChannelFormatKind = 0;
pub const hipChannelFormatKindUnsigned: hipChannelFormatKind = 1;
pub const hipChannelFormatKindFloat: hipChannelFormatKind = 2;
pub const hipChannelFormatKindNone: hipChannelFormatKind = 3;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipChannelFormatDesc {
    pub x: c_int,
    pub y: c_int,
    pub z: c_int,
    pub w: c_int,
    pub f: hipChannelFormatKind,
}

#[repr(C)]
pub struct hipArray {
    _unused: [u8; 0],
}
pub type hipArray_t = *mut hipArray;
pub type hipArray_const_t = *const hipArray;
pub type hipArray_Format = c_uint;
pub const HIP_AD_FORMAT_UNSIGNED_INT8: hipArray_Format = 1;
pub const HIP_AD_FORMAT_UNSIGNED_INT16: hipArray_Format = 2;
pub const HIP_AD_FORMAT_UNSIGNED_INT32: hipArray_Format = 3;
pub const HIP_AD_FORMAT_SIGNED_INT8: hipArray_Format = 8;
pub const HIP_AD_FORMAT_SIGNED_INT16: hipArray_Format = 9;
pub const HIP_AD_FORMAT_SIGNED_INT32: hipArray_Format = 10;
pub const HIP_AD_FORMAT_HALF: hipArray_Format = 16;
pub const HIP_AD_FORMAT_FLOAT: hipArray_Format = 32;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct HIP_ARRAY_DESCRIPTOR {
    pub Width: usize,
    pub Height: usize,
    pub Format: hipArray_Format,
    pub NumChannels: c_uint,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct HIP_ARRAY3D_DESCRIPTOR {
    pub Width: usize,
    pub Height: usize,
    pub Depth: usize,
    pub Format: hipArray_Format,
    pub NumChannels: c_uint,
    pub Flags: c_uint,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hip_Memcpy2D {
    pub srcXInBytes: usize,
    pub srcY: usize,
    pub srcMemoryType: hipMemoryType,
    pub srcHost: *const c_void,
    pub srcDevice: hipDeviceptr_t,
    pub srcArray: hipArray_t,
    pub srcPitch: usize,
    pub dstXInBytes: usize,
    pub dstY: usize,
    pub dstMemoryType: hipMemoryType,
    pub dstHost: *mut c_void,
    pub dstDevice: hipDeviceptr_t,
    pub dstArray: hipArray_t,
    pub dstPitch: usize,
    pub WidthInBytes: usize,
    pub Height: usize,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMipmappedArray {
    pub data: *mut c_void,
    pub desc: hipChannelFormatDesc,
    pub type_: c_uint,
    pub width: c_uint,
    pub height: c_uint,
    pub depth: c_uint,
    pub min_mipmap_level: c_uint,
    pub max_mipmap_level: c_uint,
    pub flags: c_uint,
    pub format: hipArray_Format,
    pub num_channels: c_uint,
}

pub type hipMipmappedArray_t = *mut hipMipmappedArray;
pub type hipmipmappedArray = hipMipmappedArray_t;
pub type hipMipmappedArray_const_t = *const hipMipmappedArray;
pub type hipResourceType = c_uint;
pub const hipResourceTypeArray: hipResourceType = 0;
pub const hipResourceTypeMipmappedArray: hipResourceType = 1;
pub const hipResourceTypeLinear: hipResourceType = 2;
pub const hipResourceTypePitch2D: hipResourceType = 3;

pub type HIPresourcetype_enum = c_uint;
pub const HIP_RESOURCE_TYPE_ARRAY: HIPresourcetype_enum = 0;
pub const HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY: HIPresourcetype_enum = 1;
pub const HIP_RESOURCE_TYPE_LINEAR: HIPresourcetype_enum = 2;
pub const HIP_RESOURCE_TYPE_PITCH2D: HIPresourcetype_enum = 3;

pub type HIPresourcetype = HIPresourcetype_enum;
pub type hipResourcetype = HIPresourcetype_enum;
pub type HIPaddress_mode_enum = c_uint;
pub const HIP_TR_ADDRESS_MODE_WRAP: HIPaddress_mode_enum = 0;
pub const HIP_TR_ADDRESS_MODE_CLAMP: HIPaddress_mode_enum = 1;
pub const HIP_TR_ADDRESS_MODE_MIRROR: HIPaddress_mode_enum = 2;
pub const HIP_TR_ADDRESS_MODE_BORDER: HIPaddress_mode_enum = 3;

pub type HIPaddress_mode = HIPaddress_mode_enum;
pub type HIPfilter_mode_enum = c_uint;
pub const HIP_TR_FILTER_MODE_POINT: HIPfilter_mode_enum = 0;
pub const HIP_TR_FILTER_MODE_LINEAR: HIPfilter_mode_enum = 1;

pub type HIPfilter_mode = HIPfilter_mode_enum;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct HIP_TEXTURE_DESC_st {
    pub addressMode: [HIPaddress_mode; 3],
    pub filterMode: HIPfilter_mode,
    pub flags: c_uint,
    pub maxAnisotropy: c_uint,
    pub mipmapFilterMode: HIPfilter_mode,
    pub mipmapLevelBias: f32,
    pub minMipmapLevelClamp: f32,
    pub maxMipmapLevelClamp: f32,
    pub borderColor: [f32; 4],
    pub reserved: [c_int; 12],
}

pub type HIP_TEXTURE_DESC = HIP_TEXTURE_DESC_st;
pub type hipResourceViewFormat = c_uint;
pub const hipResViewFormatNone: hipResourceViewFormat = 0;
pub const hipResViewFormatUnsignedChar1: hipResourceViewFormat = 1;
pub const hipResViewFormatUnsignedChar2: hipResourceViewFormat = 2;
pub const hipResViewFormatUnsignedChar4: hipResourceViewFormat = 3;
pub const hipResViewFormatSignedChar1: hipResourceViewFormat = 4;
pub const hipResViewFormatSignedChar2: hipResourceViewFormat = 5;
pub const hipResViewFormatSignedChar4: hipResourceViewFormat = 6;
pub const hipResViewFormatUnsignedShort1: hipResourceViewFormat = 7;
pub const hipResViewFormatUnsignedShort2: hipResourceViewFormat = 8;
pub const hipResViewFormatUnsignedShort4: hipResourceViewFormat = 9;
pub const hipResViewFormatSignedShort1: hipResourceViewFormat = 10;
pub const hipResViewFormatSignedShort2: hipResourceViewFormat = 11;
pub const hipResViewFormatSignedShort4: hipResourceViewFormat = 12;
pub const hipResViewFormatUnsignedInt1: hipResourceViewFormat = 13;
pub const hipResViewFormatUnsignedInt2: hipResourceViewFormat = 14;
pub const hipResViewFormatUnsignedInt4: hipResourceViewFormat = 15;
pub const hipResViewFormatSignedInt1: hipResourceViewFormat = 16;
pub const hipResViewFormatSignedInt2: hipResourceViewFormat = 17;
pub const hipResViewFormatSignedInt4: hipResourceViewFormat = 18;
pub const hipResViewFormatHalf1: hipResourceViewFormat = 19;
pub const hipResViewFormatHalf2: hipResourceViewFormat = 20;
pub const hipResViewFormatHalf4: hipResourceViewFormat = 21;
pub const hipResViewFormatFloat1: hipResourceViewFormat = 22;
pub const hipResViewFormatFloat2: hipResourceViewFormat = 23;
pub const hipResViewFormatFloat4: hipResourceViewFormat = 24;
pub const hipResViewFormatSignedBlockCompressed4: hipResourceViewFormat = 29;
pub const hipResViewFormatSignedBlockCompressed5: hipResourceViewFormat = 31;
pub const hipResViewFormatSignedBlockCompressed6H: hipResourceViewFormat = 33;

pub type HIPresourceViewFormat_enum = c_uint;
pub const HIP_RES_VIEW_FORMAT_NONE: HIPresourceViewFormat_enum = 0;
pub const HIP_RES_VIEW_FORMAT_UINT_1X8: HIPresourceViewFormat_enum = 1;
pub const HIP_RES_VIEW_FORMAT_UINT_2X8: HIPresourceViewFormat_enum = 2;
pub const HIP_RES_VIEW_FORMAT_UINT_4X8: HIPresourceViewFormat_enum = 3;
pub const HIP_RES_VIEW_FORMAT_SINT_1X8: HIPresourceViewFormat_enum = 4;
pub const HIP_RES_VIEW_FORMAT_SINT_2X8: HIPresourceViewFormat_enum = 5;
pub const HIP_RES_VIEW_FORMAT_SINT_4X8: HIPresourceViewFormat_enum = 6;
pub const HIP_RES_VIEW_FORMAT_UINT_1X16: HIPresourceViewFormat_enum = 7;
pub const HIP_RES_VIEW_FORMAT_UINT_2X16: HIPresourceViewFormat_enum = 8;
pub const HIP_RES_VIEW_FORMAT_UINT_4X16: HIPresourceViewFormat_enum = 9;
pub const HIP_RES_VIEW_FORMAT_SINT_1X16: HIPresourceViewFormat_enum = 10;
pub const HIP_RES_VIEW_FORMAT_SINT_2X16: HIPresourceViewFormat_enum = 11;
pub const HIP_RES_VIEW_FORMAT_SINT_4X16: HIPresourceViewFormat_enum = 12;
pub const HIP_RES_VIEW_FORMAT_UINT_1X32: HIPresourceViewFormat_enum = 13;
pub const HIP_RES_VIEW_FORMAT_UINT_2X32: HIPresourceViewFormat_enum = 14;
pub const HIP_RES_VIEW_FORMAT_UINT_4X32: HIPresourceViewFormat_enum = 15;
pub const HIP_RES_VIEW_FORMAT_SINT_1X32: HIPresourceViewFormat_enum = 16;
pub const HIP_RES_VIEW_FORMAT_SINT_2X32: HIPresourceViewFormat_enum = 17;
pub const HIP_RES_VIEW_FORMAT_SINT_4X32: HIPresourceViewFormat_enum = 18;

pub type HIPresourceViewFormat = HIPresourceViewFormat_enum;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipResourceDesc {
    pub resType: hipResourceType,
    pub res: hipResourceDesc__bindgen_ty_1,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipResourceDesc__bindgen_ty_1 {
    pub array: hipResourceDesc__bindgen_ty_1__bindgen_ty_1,
    pub mipmap: hipResourceDesc__bindgen_ty_1__bindgen_ty_2,
    pub linear: hipResourceDesc__bindgen_ty_1__bindgen_ty_3,
    pub pitch2D: hipResourceDesc__bindgen_ty_1__bindgen_ty_4,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipResourceDesc__bindgen_ty_1__bindgen_ty_1 {
    pub array: hipArray_t,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipResourceDesc__bindgen_ty_1__bindgen_ty_2 {
    pub mipmap: hipMipmappedArray_t,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipResourceDesc__bindgen_ty_1__bindgen_ty_3 {
    pub devPtr: *mut c_void,
    pub desc: hipChannelFormatDesc,
    pub sizeInBytes: usize,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipResourceDesc__bindgen_ty_1__bindgen_ty_4 {
    pub devPtr: *mut c_void,
    pub desc: hipChannelFormatDesc,
    pub width: usize,
    pub height: usize,
    pub pitchInBytes: usize,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct HIP_RESOURCE_DESC_st {
    pub resType: HIPresourcetype,
    pub res: HIP_RESOURCE_DESC_st__bindgen_ty_1,
    pub flags: c_uint,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union HIP_RESOURCE_DESC_st__bindgen_ty_1 {
    pub array: HIP_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_1,
    pub mipmap: HIP_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_2,
    pub linear: HIP_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3,
    pub pitch2D: HIP_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_4,
    pub reserved: HIP_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_5,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct HIP_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_1 {
    pub hArray: hipArray_t,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct HIP_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_2 {
    pub hMipmappedArray: hipMipmappedArray_t,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct HIP_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 {
    pub devPtr: hipDeviceptr_t,
    pub format: hipArray_Format,
    pub numChannels: c_uint,
    pub sizeInBytes: usize,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct HIP_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_4 {
    pub devPtr: hipDeviceptr_t,
    pub format: hipArray_Format,
    pub numChannels: c_uint,
    pub width: usize,
    pub height: usize,
    pub pitchInBytes: usize,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct HIP_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_5 {
    pub reserved: [c_int; 32],
}

pub type HIP_RESOURCE_DESC = HIP_RESOURCE_DESC_st;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipResourceViewDesc {
    pub format: hipResourceViewFormat,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub firstMipmapLevel: c_uint,
    pub lastMipmapLevel: c_uint,
    pub firstLayer: c_uint,
    pub lastLayer: c_uint,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct HIP_RESOURCE_VIEW_DESC_st {
    pub format: HIPresourceViewFormat,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub firstMipmapLevel: c_uint,
    pub lastMipmapLevel: c_uint,
    pub firstLayer: c_uint,
    pub lastLayer: c_uint,
    pub reserved: [c_uint; 16],
}

pub type HIP_RESOURCE_VIEW_DESC = HIP_RESOURCE_VIEW_DESC_st;
pub type hipMemcpyKind = c_uint;
pub const hipMemcpyHostToHost: hipMemcpyKind = 0;
pub const hipMemcpyHostToDevice: hipMemcpyKind = 1;
pub const hipMemcpyDeviceToHost: hipMemcpyKind = 2;
pub const hipMemcpyDeviceToDevice: hipMemcpyKind = 3;
pub const hipMemcpyDefault: hipMemcpyKind = 4;
pub const hipMemcpyDeviceToDeviceNoCU: hipMemcpyKind = 1024;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipPitchedPtr {
    pub ptr: *mut c_void,
    pub pitch: usize,
    pub xsize: usize,
    pub ysize: usize,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExtent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipPos {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemcpy3DParms {
    pub srcArray: hipArray_t,
    pub srcPos: hipPos,
    pub srcPtr: hipPitchedPtr,
    pub dstArray: hipArray_t,
    pub dstPos: hipPos,
    pub dstPtr: hipPitchedPtr,
    pub extent: hipExtent,
    pub kind: hipMemcpyKind,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct HIP_MEMCPY3D {
    pub srcXInBytes: usize,
    pub srcY: usize,
    pub srcZ: usize,
    pub srcLOD: usize,
    pub srcMemoryType: hipMemoryType,
    pub srcHost: *const c_void,
    pub srcDevice: hipDeviceptr_t,
    pub srcArray: hipArray_t,
    pub srcPitch: usize,
    pub srcHeight: usize,
    pub dstXInBytes: usize,
    pub dstY: usize,
    pub dstZ: usize,
    pub dstLOD: usize,
    pub dstMemoryType: hipMemoryType,
    pub dstHost: *mut c_void,
    pub dstDevice: hipDeviceptr_t,
    pub dstArray: hipArray_t,
    pub dstPitch: usize,
    pub dstHeight: usize,
    pub WidthInBytes: usize,
    pub Height: usize,
    pub Depth: usize,
}

pub type hipMemLocationType = c_uint;
pub const hipMemLocationTypeInvalid: hipMemLocationType = 0;
pub const hipMemLocationTypeNone: hipMemLocationType = 0;
pub const hipMemLocationTypeDevice: hipMemLocationType = 1;
pub const hipMemLocationTypeHost: hipMemLocationType = 2;
pub const hipMemLocationTypeHostNuma: hipMemLocationType = 3;
pub const hipMemLocationTypeHostNumaCurrent: hipMemLocationType = 4;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemLocation {
    pub type_: hipMemLocationType,
    pub id: c_int,
}

pub type hipMemcpyFlags = c_uint;
pub const hipMemcpyFlagDefault: hipMemcpyFlags = 0;
pub const hipMemcpyFlagPreferOverlapWithCompute: hipMemcpyFlags = 1;

pub type hipMemcpySrcAccessOrder = c_uint;
pub const hipMemcpySrcAccessOrderInvalid: hipMemcpySrcAccessOrder = 0;
pub const hipMemcpySrcAccessOrderStream: hipMemcpySrcAccessOrder = 1;
pub const hipMemcpySrcAccessOrderDuringApiCall: hipMemcpySrcAccessOrder = 2;
pub const hipMemcpySrcAccessOrderAny: hipMemcpySrcAccessOrder = 3;
pub const hipMemcpySrcAccessOrderMax: hipMemcpySrcAccessOrder = 2147483647;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemcpyAttributes {
    pub srcAccessOrder: hipMemcpySrcAccessOrder,
    pub srcLocHint: hipMemLocation,
    pub dstLocHint: hipMemLocation,
    pub flags: c_uint,
}

pub type hipMemcpy3DOperandType = c_uint;
pub const hipMemcpyOperandTypePointer: hipMemcpy3DOperandType = 1;
pub const hipMemcpyOperandTypeArray: hipMemcpy3DOperandType = 2;
pub const hipMemcpyOperandTypeMax: hipMemcpy3DOperandType = 2147483647;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipOffset3D {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemcpy3DOperand {
    pub type_: hipMemcpy3DOperandType,
    pub op: hipMemcpy3DOperand__bindgen_ty_1,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipMemcpy3DOperand__bindgen_ty_1 {
    pub ptr: hipMemcpy3DOperand__bindgen_ty_1__bindgen_ty_1,
    pub array: hipMemcpy3DOperand__bindgen_ty_1__bindgen_ty_2,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemcpy3DOperand__bindgen_ty_1__bindgen_ty_1 {
    pub ptr: *mut c_void,
    pub rowLength: usize,
    pub layerHeight: usize,
    pub locHint: hipMemLocation,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemcpy3DOperand__bindgen_ty_1__bindgen_ty_2 {
    pub array: hipArray_t,
    pub offset: hipOffset3D,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemcpy3DBatchOp {
    pub src: hipMemcpy3DOperand,
    pub dst: hipMemcpy3DOperand,
    pub extent: hipExtent,
    pub srcAccessOrder: hipMemcpySrcAccessOrder,
    pub flags: c_uint,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemcpy3DPeerParms {
    pub srcArray: hipArray_t,
    pub srcPos: hipPos,
    pub srcPtr: hipPitchedPtr,
    pub srcDevice: c_int,
    pub dstArray: hipArray_t,
    pub dstPos: hipPos,
    pub dstPtr: hipPitchedPtr,
    pub dstDevice: c_int,
    pub extent: hipExtent,
}

pub type hipFunction_attribute = c_uint;
pub const HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: hipFunction_attribute = 0;
pub const HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: hipFunction_attribute = 1;
pub const HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: hipFunction_attribute = 2;
pub const HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: hipFunction_attribute = 3;
pub const HIP_FUNC_ATTRIBUTE_NUM_REGS: hipFunction_attribute = 4;
pub const HIP_FUNC_ATTRIBUTE_PTX_VERSION: hipFunction_attribute = 5;
pub const HIP_FUNC_ATTRIBUTE_BINARY_VERSION: hipFunction_attribute = 6;
pub const HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA: hipFunction_attribute = 7;
pub const HIP_FUNC_ATTRIBUTE_MAX: hipFunction_attribute = 10;

pub type hipPointer_attribute = c_uint;
pub const HIP_POINTER_ATTRIBUTE_CONTEXT: hipPointer_attribute = 1;
pub const HIP_POINTER_ATTRIBUTE_MEMORY_TYPE: hipPointer_attribute = 2;
pub const HIP_POINTER_ATTRIBUTE_DEVICE_POINTER: hipPointer_attribute = 3;
pub const HIP_POINTER_ATTRIBUTE_HOST_POINTER: hipPointer_attribute = 4;
pub const HIP_POINTER_ATTRIBUTE_P2P_TOKENS: hipPointer_attribute = 5;
pub const HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS: hipPointer_attribute = 6;
pub const HIP_POINTER_ATTRIBUTE_BUFFER_ID: hipPointer_attribute = 7;
pub const HIP_POINTER_ATTRIBUTE_IS_MANAGED: hipPointer_attribute = 8;
pub const HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL: hipPointer_attribute = 9;
pub const HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR: hipPointer_attribute = 11;
pub const HIP_POINTER_ATTRIBUTE_RANGE_SIZE: hipPointer_attribute = 12;
pub const HIP_POINTER_ATTRIBUTE_MAPPED: hipPointer_attribute = 13;
pub const HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS: hipPointer_attribute = 16;
pub const HIP_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: hipPointer_attribute = 17;

#[repr(C)]
pub struct __hip_texture {
    _unused: [u8; 0],
}
pub type hipTextureObject_t = *mut __hip_texture;
pub type hipTextureAddressMode = c_uint;
pub const hipAddressModeWrap: hipTextureAddressMode = 0;
pub const hipAddressModeClamp: hipTextureAddressMode = 1;
pub const hipAddressModeMirror: hipTextureAddressMode = 2;
pub const hipAddressModeBorder: hipTextureAddressMode = 3;

pub type hipTextureFilterMode = c_uint;
pub const hipFilterModePoint: hipTextureFilterMode = 0;
pub const hipFilterModeLinear: hipTextureFilterMode = 1;

pub type hipTextureReadMode = c_uint;
pub const hipReadModeElementType: hipTextureReadMode = 0;
pub const hipReadModeNormalizedFloat: hipTextureReadMode = 1;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct textureReference {
    pub normalized: c_int,
    pub readMode: hipTextureReadMode,
    pub filterMode: hipTextureFilterMode,
    pub addressMode: [hipTextureAddressMode; 3],
    pub channelDesc: hipChannelFormatDesc,
    pub sRGB: c_int,
    pub maxAnisotropy: c_uint,
    pub mipmapFilterMode: hipTextureFilterMode,
    pub mipmapLevelBias: f32,
    pub minMipmapLevelClamp: f32,
    pub maxMipmapLevelClamp: f32,
    pub textureObject: hipTextureObject_t,
    pub numChannels: c_int,
    pub format: hipArray_Format,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipTextureDesc {
    pub addressMode: [hipTextureAddressMode; 3],
    pub filterMode: hipTextureFilterMode,
    pub readMode: hipTextureReadMode,
    pub sRGB: c_int,
    pub borderColor: [f32; 4],
    pub normalizedCoords: c_int,
    pub maxAnisotropy: c_uint,
    pub mipmapFilterMode: hipTextureFilterMode,
    pub mipmapLevelBias: f32,
    pub minMipmapLevelClamp: f32,
    pub maxMipmapLevelClamp: f32,
}

#[repr(C)]
pub struct __hip_surface {
    _unused: [u8; 0],
}
pub type hipSurfaceObject_t = *mut __hip_surface;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct surfaceReference {
    pub surfaceObject: hipSurfaceObject_t,
}

pub type hipSurfaceBoundaryMode = c_uint;
pub const hipBoundaryModeZero: hipSurfaceBoundaryMode = 0;
pub const hipBoundaryModeTrap: hipSurfaceBoundaryMode = 1;
pub const hipBoundaryModeClamp: hipSurfaceBoundaryMode = 2;

#[repr(C)]
pub struct ihipCtx_t {
    _unused: [u8; 0],
}
pub type hipCtx_t = *mut ihipCtx_t;
pub type hipDevice_t = c_int;
pub type hipDeviceP2PAttr = c_uint;
pub const hipDevP2PAttrPerformanceRank: hipDeviceP2PAttr = 0;
pub const hipDevP2PAttrAccessSupported: hipDeviceP2PAttr = 1;
pub const hipDevP2PAttrNativeAtomicSupported: hipDeviceP2PAttr = 2;
pub const hipDevP2PAttrHipArrayAccessSupported: hipDeviceP2PAttr = 3;

pub type hipDriverEntryPointQueryResult = c_uint;
#[repr(C)]
pub struct ihipStream_t {
    _unused: [u8; 0],
}
pub type hipStream_t = *mut ihipStream_t;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipIpcMemHandle_st {
    pub reserved: [c_char; 64],
}

pub type hipIpcMemHandle_t = hipIpcMemHandle_st;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipIpcEventHandle_st {
    pub reserved: [c_char; 64],
}

pub type hipIpcEventHandle_t = hipIpcEventHandle_st;
#[repr(C)]
pub struct ihipModule_t {
    _unused: [u8; 0],
}
pub type hipModule_t = *mut ihipModule_t;
#[repr(C)]
pub struct ihipModuleSymbol_t {
    _unused: [u8; 0],
}
pub type hipFunction_t = *mut ihipModuleSymbol_t;
#[repr(C)]
pub struct ihipLinkState_t {
    _unused: [u8; 0],
}
pub type hipLinkState_t = *mut ihipLinkState_t;
#[repr(C)]
pub struct ihipLibrary_t {
    _unused: [u8; 0],
}
pub type hipLibrary_t = *mut ihipLibrary_t;
#[repr(C)]
pub struct ihipKernel_t {
    _unused: [u8; 0],
}
pub type hipKernel_t = *mut ihipKernel_t;
#[repr(C)]
pub struct ihipMemPoolHandle_t {
    _unused: [u8; 0],
}
pub type hipMemPool_t = *mut ihipMemPoolHandle_t;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipFuncAttributes {
    pub binaryVersion: c_int,
    pub cacheModeCA: c_int,
    pub constSizeBytes: usize,
    pub localSizeBytes: usize,
    pub maxDynamicSharedSizeBytes: c_int,
    pub maxThreadsPerBlock: c_int,
    pub numRegs: c_int,
    pub preferredShmemCarveout: c_int,
    pub ptxVersion: c_int,
    pub sharedSizeBytes: usize,
}

#[repr(C)]
pub struct ihipEvent_t {
    _unused: [u8; 0],
}
pub type hipEvent_t = *mut ihipEvent_t;
pub type hipLimit_t = c_uint;
pub const hipLimitStackSize: hipLimit_t = 0;
pub const hipLimitPrintfFifoSize: hipLimit_t = 1;
pub const hipLimitMallocHeapSize: hipLimit_t = 2;
pub const hipExtLimitScratchMin: hipLimit_t = 4096;
pub const hipExtLimitScratchMax: hipLimit_t = 4097;
pub const hipExtLimitScratchCurrent: hipLimit_t = 4098;
pub const hipLimitRange: hipLimit_t = 4099;

pub type hipStreamBatchMemOpType = c_uint;
pub const hipStreamMemOpWaitValue32: hipStreamBatchMemOpType = 1;
pub const hipStreamMemOpWriteValue32: hipStreamBatchMemOpType = 2;
pub const hipStreamMemOpWaitValue64: hipStreamBatchMemOpType = 4;
pub const hipStreamMemOpWriteValue64: hipStreamBatchMemOpType = 5;
pub const hipStreamMemOpBarrier: hipStreamBatchMemOpType = 6;
pub const hipStreamMemOpFlushRemoteWrites: hipStreamBatchMemOpType = 3;

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipStreamBatchMemOpParams_union {
    pub operation: hipStreamBatchMemOpType,
    pub waitValue: hipStreamBatchMemOpParams_union_hipStreamMemOpWaitValueParams_t,
    pub writeValue: hipStreamBatchMemOpParams_union_hipStreamMemOpWriteValueParams_t,
    pub flushRemoteWrites: hipStreamBatchMemOpParams_union_hipStreamMemOpFlushRemoteWritesParams_t,
    pub memoryBarrier: hipStreamBatchMemOpParams_union_hipStreamMemOpMemoryBarrierParams_t,
    pub pad: [u64; 6],
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipStreamBatchMemOpParams_union_hipStreamMemOpWaitValueParams_t {
    pub operation: hipStreamBatchMemOpType,
    pub address: hipDeviceptr_t,
    pub __bindgen_anon_1: hipStreamBatchMemOpParams_union_hipStreamMemOpWaitValueParams_t__bindgen_ty_1,
    pub flags: c_uint,
    pub alias: hipDeviceptr_t,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipStreamBatchMemOpParams_union_hipStreamMemOpWaitValueParams_t__bindgen_ty_1 {
    pub value: u32,
    pub value64: u64,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipStreamBatchMemOpParams_union_hipStreamMemOpWriteValueParams_t {
    pub operation: hipStreamBatchMemOpType,
    pub address: hipDeviceptr_t,
    pub __bindgen_anon_1: hipStreamBatchMemOpParams_union_hipStreamMemOpWriteValueParams_t__bindgen_ty_1,
    pub flags: c_uint,
    pub alias: hipDeviceptr_t,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipStreamBatchMemOpParams_union_hipStreamMemOpWriteValueParams_t__bindgen_ty_1 {
    pub value: u32,
    pub value64: u64,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipStreamBatchMemOpParams_union_hipStreamMemOpFlushRemoteWritesParams_t {
    pub operation: hipStreamBatchMemOpType,
    pub flags: c_uint,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipStreamBatchMemOpParams_union_hipStreamMemOpMemoryBarrierParams_t {
    pub operation: hipStreamBatchMemOpType,
    pub flags: c_uint,
}

pub type hipStreamBatchMemOpParams = hipStreamBatchMemOpParams_union;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipBatchMemOpNodeParams {
    pub ctx: hipCtx_t,
    pub count: c_uint,
    pub paramArray: *mut hipStreamBatchMemOpParams,
    pub flags: c_uint,
}

pub type hipMemoryAdvise = c_uint;
pub const hipMemAdviseSetReadMostly: hipMemoryAdvise = 1;
pub const hipMemAdviseUnsetReadMostly: hipMemoryAdvise = 2;
pub const hipMemAdviseSetPreferredLocation: hipMemoryAdvise = 3;
pub const hipMemAdviseUnsetPreferredLocation: hipMemoryAdvise = 4;
pub const hipMemAdviseSetAccessedBy: hipMemoryAdvise = 5;
pub const hipMemAdviseUnsetAccessedBy: hipMemoryAdvise = 6;
pub const hipMemAdviseSetCoarseGrain: hipMemoryAdvise = 100;
pub const hipMemAdviseUnsetCoarseGrain: hipMemoryAdvise = 101;

pub type hipMemRangeCoherencyMode = c_uint;
pub const hipMemRangeCoherencyModeFineGrain: hipMemRangeCoherencyMode = 0;

pub type hipMemRangeAttribute = c_uint;
pub const hipMemRangeAttributeReadMostly: hipMemRangeAttribute = 1;
pub const hipMemRangeAttributePreferredLocation: hipMemRangeAttribute = 2;
pub const hipMemRangeAttributeAccessedBy: hipMemRangeAttribute = 3;
pub const hipMemRangeAttributeLastPrefetchLocation: hipMemRangeAttribute = 4;
pub const hipMemRangeAttributeCoherencyMode: hipMemRangeAttribute = 100;

pub type hipMemPoolAttr = c_uint;
pub const hipMemPoolReuseFollowEventDependencies: hipMemPoolAttr = 1;
pub const hipMemPoolReuseAllowOpportunistic: hipMemPoolAttr = 2;
pub const hipMemPoolReuseAllowInternalDependencies: hipMemPoolAttr = 3;
pub const hipMemPoolAttrReleaseThreshold: hipMemPoolAttr = 4;
pub const hipMemPoolAttrReservedMemCurrent: hipMemPoolAttr = 5;
pub const hipMemPoolAttrReservedMemHigh: hipMemPoolAttr = 6;
pub const hipMemPoolAttrUsedMemCurrent: hipMemPoolAttr = 7;
pub const hipMemPoolAttrUsedMemHigh: hipMemPoolAttr = 8;

pub type hipMemAccessFlags = c_uint;
pub const hipMemAccessFlagsProtNone: hipMemAccessFlags = 0;
pub const hipMemAccessFlagsProtRead: hipMemAccessFlags = 1;
pub const hipMemAccessFlagsProtReadWrite: hipMemAccessFlags = 3;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemAccessDesc {
    pub location: hipMemLocation,
    pub flags: hipMemAccessFlags,
}

pub type hipMemAllocationType = c_uint;
pub const hipMemAllocationTypeInvalid: hipMemAllocationType = 0;
pub const hipMemAllocationTypePinned: hipMemAllocationType = 1;
pub const hipMemAllocationTypeUncached: hipMemAllocationType = 1073741824;
pub const hipMemAllocationTypeMax: hipMemAllocationType = 2147483647;

pub type hipMemAllocationHandleType = c_uint;
pub const hipMemHandleTypeNone: hipMemAllocationHandleType = 0;
/// (Missing from the generated enum constants.)
pub const hipMemHandleTypePosixFileDescriptor: hipMemAllocationHandleType = 1;
pub const hipMemHandleTypeWin32: hipMemAllocationHandleType = 2;
pub const hipMemHandleTypeWin32Kmt: hipMemAllocationHandleType = 4;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemPoolProps {
    pub allocType: hipMemAllocationType,
    pub handleTypes: hipMemAllocationHandleType,
    pub location: hipMemLocation,
    pub win32SecurityAttributes: *mut c_void,
    pub maxSize: usize,
    pub reserved: [c_uchar; 56],
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemPoolPtrExportData {
    pub reserved: [c_uchar; 64],
}

pub type hipFuncAttribute = c_uint;
pub const hipFuncAttributeMaxDynamicSharedMemorySize: hipFuncAttribute = 8;
pub const hipFuncAttributePreferredSharedMemoryCarveout: hipFuncAttribute = 9;
pub const hipFuncAttributeMax: hipFuncAttribute = 10;

pub type hipFuncCache_t = c_uint;
pub const hipFuncCachePreferNone: hipFuncCache_t = 0;
pub const hipFuncCachePreferShared: hipFuncCache_t = 1;
pub const hipFuncCachePreferL1: hipFuncCache_t = 2;
pub const hipFuncCachePreferEqual: hipFuncCache_t = 3;

pub type hipSharedMemConfig = c_uint;
pub const hipSharedMemBankSizeDefault: hipSharedMemConfig = 0;
pub const hipSharedMemBankSizeFourByte: hipSharedMemConfig = 1;
pub const hipSharedMemBankSizeEightByte: hipSharedMemConfig = 2;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipLaunchParams_t {
    pub func: *mut c_void,
    pub gridDim: dim3,
    pub blockDim: dim3,
    pub args: *mut *mut c_void,
    pub sharedMem: usize,
    pub stream: hipStream_t,
}

pub type hipLaunchParams = hipLaunchParams_t;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipFunctionLaunchParams_t {
    pub function: hipFunction_t,
    pub gridDimX: c_uint,
    pub gridDimY: c_uint,
    pub gridDimZ: c_uint,
    pub blockDimX: c_uint,
    pub blockDimY: c_uint,
    pub blockDimZ: c_uint,
    pub sharedMemBytes: c_uint,
    pub hStream: hipStream_t,
    pub kernelParams: *mut *mut c_void,
}

pub type hipFunctionLaunchParams = hipFunctionLaunchParams_t;
pub type hipExternalMemoryHandleType_enum = c_uint;
pub type hipExternalMemoryHandleType = hipExternalMemoryHandleType_enum;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalMemoryHandleDesc_st {
    pub type_: hipExternalMemoryHandleType,
    pub handle: hipExternalMemoryHandleDesc_st__bindgen_ty_1,
    pub size: c_ulonglong,
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipExternalMemoryHandleDesc_st__bindgen_ty_1 {
    pub fd: c_int,
    pub win32: hipExternalMemoryHandleDesc_st__bindgen_ty_1__bindgen_ty_1,
    pub nvSciBufObject: *const c_void,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalMemoryHandleDesc_st__bindgen_ty_1__bindgen_ty_1 {
    pub handle: *mut c_void,
    pub name: *const c_void,
}

pub type hipExternalMemoryHandleDesc = hipExternalMemoryHandleDesc_st;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalMemoryBufferDesc_st {
    pub offset: c_ulonglong,
    pub size: c_ulonglong,
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

pub type hipExternalMemoryBufferDesc = hipExternalMemoryBufferDesc_st;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalMemoryMipmappedArrayDesc_st {
    pub offset: c_ulonglong,
    pub formatDesc: hipChannelFormatDesc,
    pub extent: hipExtent,
    pub flags: c_uint,
    pub numLevels: c_uint,
}

pub type hipExternalMemoryMipmappedArrayDesc = hipExternalMemoryMipmappedArrayDesc_st;
pub type hipExternalMemory_t = *mut c_void;
pub type hipExternalSemaphoreHandleType_enum = c_uint;
pub const hipExternalSemaphoreHandleTypeTimelineSemaphoreWin32: hipExternalSemaphoreHandleType_enum = 10;

pub type hipExternalSemaphoreHandleType = hipExternalSemaphoreHandleType_enum;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalSemaphoreHandleDesc_st {
    pub type_: hipExternalSemaphoreHandleType,
    pub handle: hipExternalSemaphoreHandleDesc_st__bindgen_ty_1,
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipExternalSemaphoreHandleDesc_st__bindgen_ty_1 {
    pub fd: c_int,
    pub win32: hipExternalSemaphoreHandleDesc_st__bindgen_ty_1__bindgen_ty_1,
    pub NvSciSyncObj: *const c_void,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalSemaphoreHandleDesc_st__bindgen_ty_1__bindgen_ty_1 {
    pub handle: *mut c_void,
    pub name: *const c_void,
}

pub type hipExternalSemaphoreHandleDesc = hipExternalSemaphoreHandleDesc_st;
pub type hipExternalSemaphore_t = *mut c_void;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalSemaphoreSignalParams_st {
    pub params: hipExternalSemaphoreSignalParams_st__bindgen_ty_1,
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalSemaphoreSignalParams_st__bindgen_ty_1 {
    pub fence: hipExternalSemaphoreSignalParams_st__bindgen_ty_1__bindgen_ty_1,
    pub nvSciSync: hipExternalSemaphoreSignalParams_st__bindgen_ty_1__bindgen_ty_2,
    pub keyedMutex: hipExternalSemaphoreSignalParams_st__bindgen_ty_1__bindgen_ty_3,
    pub reserved: [c_uint; 12],
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalSemaphoreSignalParams_st__bindgen_ty_1__bindgen_ty_1 {
    pub value: c_ulonglong,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipExternalSemaphoreSignalParams_st__bindgen_ty_1__bindgen_ty_2 {
    pub fence: *mut c_void,
    pub reserved: c_ulonglong,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalSemaphoreSignalParams_st__bindgen_ty_1__bindgen_ty_3 {
    pub key: c_ulonglong,
}

pub type hipExternalSemaphoreSignalParams = hipExternalSemaphoreSignalParams_st;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalSemaphoreWaitParams_st {
    pub params: hipExternalSemaphoreWaitParams_st__bindgen_ty_1,
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalSemaphoreWaitParams_st__bindgen_ty_1 {
    pub fence: hipExternalSemaphoreWaitParams_st__bindgen_ty_1__bindgen_ty_1,
    pub nvSciSync: hipExternalSemaphoreWaitParams_st__bindgen_ty_1__bindgen_ty_2,
    pub keyedMutex: hipExternalSemaphoreWaitParams_st__bindgen_ty_1__bindgen_ty_3,
    pub reserved: [c_uint; 10],
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalSemaphoreWaitParams_st__bindgen_ty_1__bindgen_ty_1 {
    pub value: c_ulonglong,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipExternalSemaphoreWaitParams_st__bindgen_ty_1__bindgen_ty_2 {
    pub fence: *mut c_void,
    pub reserved: c_ulonglong,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalSemaphoreWaitParams_st__bindgen_ty_1__bindgen_ty_3 {
    pub key: c_ulonglong,
    pub timeoutMs: c_uint,
}

pub type hipExternalSemaphoreWaitParams = hipExternalSemaphoreWaitParams_st;
pub type hipGraphicsRegisterFlags = c_uint;
pub const hipGraphicsRegisterFlagsNone: hipGraphicsRegisterFlags = 0;
pub const hipGraphicsRegisterFlagsReadOnly: hipGraphicsRegisterFlags = 1;

#[repr(C)]
pub struct _hipGraphicsResource {
    _unused: [u8; 0],
}
pub type hipGraphicsResource = _hipGraphicsResource;
pub type hipGraphicsResource_t = *mut hipGraphicsResource;
#[repr(C)]
pub struct ihipGraph {
    _unused: [u8; 0],
}
pub type hipGraph_t = *mut ihipGraph;
#[repr(C)]
pub struct hipGraphNode {
    _unused: [u8; 0],
}
pub type hipGraphNode_t = *mut hipGraphNode;
#[repr(C)]
pub struct hipGraphExec {
    _unused: [u8; 0],
}
pub type hipGraphExec_t = *mut hipGraphExec;
#[repr(C)]
pub struct hipUserObject {
    _unused: [u8; 0],
}
pub type hipUserObject_t = *mut hipUserObject;
pub type hipGraphNodeType = c_uint;
pub const hipGraphNodeTypeKernel: hipGraphNodeType = 0;
pub const hipGraphNodeTypeMemcpy: hipGraphNodeType = 1;
pub const hipGraphNodeTypeMemset: hipGraphNodeType = 2;
pub const hipGraphNodeTypeHost: hipGraphNodeType = 3;
pub const hipGraphNodeTypeGraph: hipGraphNodeType = 4;
pub const hipGraphNodeTypeEmpty: hipGraphNodeType = 5;
pub const hipGraphNodeTypeWaitEvent: hipGraphNodeType = 6;
pub const hipGraphNodeTypeEventRecord: hipGraphNodeType = 7;
pub const hipGraphNodeTypeExtSemaphoreSignal: hipGraphNodeType = 8;
pub const hipGraphNodeTypeExtSemaphoreWait: hipGraphNodeType = 9;
pub const hipGraphNodeTypeMemAlloc: hipGraphNodeType = 10;
pub const hipGraphNodeTypeMemFree: hipGraphNodeType = 11;
pub const hipGraphNodeTypeMemcpyFromSymbol: hipGraphNodeType = 12;
pub const hipGraphNodeTypeMemcpyToSymbol: hipGraphNodeType = 13;
pub const hipGraphNodeTypeBatchMemOp: hipGraphNodeType = 14;
pub const hipGraphNodeTypeCount: hipGraphNodeType = 15;

pub type hipHostFn_t = Option<unsafe extern "C" fn(userData: *mut c_void)>;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipHostNodeParams {
    pub fn_: hipHostFn_t,
    pub userData: *mut c_void,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipKernelNodeParams {
    pub blockDim: dim3,
    pub extra: *mut *mut c_void,
    pub func: *mut c_void,
    pub gridDim: dim3,
    pub kernelParams: *mut *mut c_void,
    pub sharedMemBytes: c_uint,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemsetParams {
    pub dst: *mut c_void,
    pub elementSize: c_uint,
    pub height: usize,
    pub pitch: usize,
    pub value: c_uint,
    pub width: usize,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemAllocNodeParams {
    pub poolProps: hipMemPoolProps,
    pub accessDescs: *const hipMemAccessDesc,
    pub accessDescCount: usize,
    pub bytesize: usize,
    pub dptr: *mut c_void,
}

pub type hipAccessProperty = c_uint;
pub const hipAccessPropertyNormal: hipAccessProperty = 0;
pub const hipAccessPropertyStreaming: hipAccessProperty = 1;
pub const hipAccessPropertyPersisting: hipAccessProperty = 2;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipAccessPolicyWindow {
    pub base_ptr: *mut c_void,
    pub hitProp: hipAccessProperty,
    pub hitRatio: f32,
    pub missProp: hipAccessProperty,
    pub num_bytes: usize,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipLaunchMemSyncDomainMap {
    pub default_: c_uchar,
    pub remote: c_uchar,
}

pub type hipLaunchMemSyncDomain = c_uint;
pub const hipLaunchMemSyncDomainDefault: hipLaunchMemSyncDomain = 0;
pub const hipLaunchMemSyncDomainRemote: hipLaunchMemSyncDomain = 1;

pub type hipSynchronizationPolicy = c_uint;
pub const hipSyncPolicyAuto: hipSynchronizationPolicy = 1;
pub const hipSyncPolicySpin: hipSynchronizationPolicy = 2;
pub const hipSyncPolicyYield: hipSynchronizationPolicy = 3;
pub const hipSyncPolicyBlockingSync: hipSynchronizationPolicy = 4;

pub type hipLaunchAttributeID = c_uint;
pub const hipLaunchAttributeAccessPolicyWindow: hipLaunchAttributeID = 1;
pub const hipLaunchAttributeCooperative: hipLaunchAttributeID = 2;
pub const hipLaunchAttributeSynchronizationPolicy: hipLaunchAttributeID = 3;
pub const hipLaunchAttributePriority: hipLaunchAttributeID = 8;
pub const hipLaunchAttributeMemSyncDomainMap: hipLaunchAttributeID = 9;
pub const hipLaunchAttributeMemSyncDomain: hipLaunchAttributeID = 10;
pub const hipLaunchAttributeMax: hipLaunchAttributeID = 11;

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipLaunchAttributeValue {
    pub pad: [c_char; 64],
    pub accessPolicyWindow: hipAccessPolicyWindow,
    pub cooperative: c_int,
    pub priority: c_int,
    pub syncPolicy: hipSynchronizationPolicy,
    pub memSyncDomainMap: hipLaunchMemSyncDomainMap,
    pub memSyncDomain: hipLaunchMemSyncDomain,
}

pub type hipGraphExecUpdateResult = c_uint;
pub const hipGraphExecUpdateSuccess: hipGraphExecUpdateResult = 0;
pub const hipGraphExecUpdateError: hipGraphExecUpdateResult = 1;
pub const hipGraphExecUpdateErrorTopologyChanged: hipGraphExecUpdateResult = 2;
pub const hipGraphExecUpdateErrorNodeTypeChanged: hipGraphExecUpdateResult = 3;
pub const hipGraphExecUpdateErrorFunctionChanged: hipGraphExecUpdateResult = 4;
pub const hipGraphExecUpdateErrorParametersChanged: hipGraphExecUpdateResult = 5;
pub const hipGraphExecUpdateErrorNotSupported: hipGraphExecUpdateResult = 6;
pub const hipGraphExecUpdateErrorUnsupportedFunctionChange: hipGraphExecUpdateResult = 7;

pub type hipStreamCaptureMode = c_uint;
pub const hipStreamCaptureModeGlobal: hipStreamCaptureMode = 0;
pub const hipStreamCaptureModeThreadLocal: hipStreamCaptureMode = 1;
pub const hipStreamCaptureModeRelaxed: hipStreamCaptureMode = 2;

pub type hipStreamCaptureStatus = c_uint;
pub const hipStreamCaptureStatusNone: hipStreamCaptureStatus = 0;
pub const hipStreamCaptureStatusActive: hipStreamCaptureStatus = 1;
pub const hipStreamCaptureStatusInvalidated: hipStreamCaptureStatus = 2;

pub type hipStreamUpdateCaptureDependenciesFlags = c_uint;
pub const hipStreamAddCaptureDependencies: hipStreamUpdateCaptureDependenciesFlags = 0;
pub const hipStreamSetCaptureDependencies: hipStreamUpdateCaptureDependenciesFlags = 1;
pub type hipGraphMemAttributeType = c_uint;
pub const hipGraphMemAttrUsedMemCurrent: hipGraphMemAttributeType = 0;
pub const hipGraphMemAttrUsedMemHigh: hipGraphMemAttributeType = 1;
pub const hipGraphMemAttrReservedMemCurrent: hipGraphMemAttributeType = 2;
pub const hipGraphMemAttrReservedMemHigh: hipGraphMemAttributeType = 3;

pub type hipUserObjectFlags = c_uint;
pub const hipUserObjectNoDestructorSync: hipUserObjectFlags = 1;

pub type hipUserObjectRetainFlags = c_uint;
pub const hipGraphUserObjectMove: hipUserObjectRetainFlags = 1;

pub type hipGraphInstantiateFlags = c_uint;
pub const hipGraphInstantiateFlagUpload: hipGraphInstantiateFlags = 2;

pub type hipGraphDebugDotFlags = c_uint;
pub const hipGraphDebugDotFlagsVerbose: hipGraphDebugDotFlags = 1;
pub const hipGraphDebugDotFlagsKernelNodeParams: hipGraphDebugDotFlags = 4;
pub const hipGraphDebugDotFlagsMemcpyNodeParams: hipGraphDebugDotFlags = 8;
pub const hipGraphDebugDotFlagsMemsetNodeParams: hipGraphDebugDotFlags = 16;
pub const hipGraphDebugDotFlagsHostNodeParams: hipGraphDebugDotFlags = 32;
pub const hipGraphDebugDotFlagsEventNodeParams: hipGraphDebugDotFlags = 64;
pub const hipGraphDebugDotFlagsHandles: hipGraphDebugDotFlags = 1024;

pub type hipGraphInstantiateResult = c_uint;
pub const hipGraphInstantiateSuccess: hipGraphInstantiateResult = 0;
pub const hipGraphInstantiateError: hipGraphInstantiateResult = 1;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipGraphInstantiateParams {
    pub errNode_out: hipGraphNode_t,
    pub flags: c_ulonglong,
    pub result_out: hipGraphInstantiateResult,
    pub uploadStream: hipStream_t,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemAllocationProp {
    pub type_: hipMemAllocationType,
    pub __bindgen_anon_1: hipMemAllocationProp__bindgen_ty_1,
    pub location: hipMemLocation,
    pub win32HandleMetaData: *mut c_void,
    pub allocFlags: hipMemAllocationProp__bindgen_ty_2,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipMemAllocationProp__bindgen_ty_1 {
    pub requestedHandleType: hipMemAllocationHandleType,
    pub requestedHandleTypes: hipMemAllocationHandleType,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemAllocationProp__bindgen_ty_2 {
    pub compressionType: c_uchar,
    pub gpuDirectRDMACapable: c_uchar,
    pub usage: c_ushort,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalSemaphoreSignalNodeParams {
    pub extSemArray: *mut hipExternalSemaphore_t,
    pub paramsArray: *const hipExternalSemaphoreSignalParams,
    pub numExtSems: c_uint,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipExternalSemaphoreWaitNodeParams {
    pub extSemArray: *mut hipExternalSemaphore_t,
    pub paramsArray: *const hipExternalSemaphoreWaitParams,
    pub numExtSems: c_uint,
}

#[repr(C)]
pub struct ihipMemGenericAllocationHandle {
    _unused: [u8; 0],
}
pub type hipMemGenericAllocationHandle_t = *mut ihipMemGenericAllocationHandle;
pub type hipMemAllocationGranularity_flags = c_uint;
pub type hipMemHandleType = c_uint;
pub const hipMemHandleTypeGeneric: hipMemHandleType = 0;

pub type hipMemOperationType = c_uint;
pub const hipMemOperationTypeMap: hipMemOperationType = 1;
pub const hipMemOperationTypeUnmap: hipMemOperationType = 2;

pub type hipArraySparseSubresourceType = c_uint;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipArrayMapInfo {
    pub resourceType: hipResourceType,
    pub resource: hipArrayMapInfo__bindgen_ty_1,
    pub subresourceType: hipArraySparseSubresourceType,
    pub subresource: hipArrayMapInfo__bindgen_ty_2,
    pub memOperationType: hipMemOperationType,
    pub memHandleType: hipMemHandleType,
    pub memHandle: hipArrayMapInfo__bindgen_ty_3,
    pub offset: c_ulonglong,
    pub deviceBitMask: c_uint,
    pub flags: c_uint,
    pub reserved: [c_uint; 2],
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipArrayMapInfo__bindgen_ty_1 {
    pub mipmap: hipMipmappedArray,
    pub array: hipArray_t,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipArrayMapInfo__bindgen_ty_2 {
    pub sparseLevel: hipArrayMapInfo__bindgen_ty_2__bindgen_ty_1,
    pub miptail: hipArrayMapInfo__bindgen_ty_2__bindgen_ty_2,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipArrayMapInfo__bindgen_ty_2__bindgen_ty_1 {
    pub level: c_uint,
    pub layer: c_uint,
    pub offsetX: c_uint,
    pub offsetY: c_uint,
    pub offsetZ: c_uint,
    pub extentWidth: c_uint,
    pub extentHeight: c_uint,
    pub extentDepth: c_uint,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipArrayMapInfo__bindgen_ty_2__bindgen_ty_2 {
    pub layer: c_uint,
    pub offset: c_ulonglong,
    pub size: c_ulonglong,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipArrayMapInfo__bindgen_ty_3 {
    pub memHandle: hipMemGenericAllocationHandle_t,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemcpyNodeParams {
    pub flags: c_int,
    pub reserved: [c_int; 3],
    pub copyParams: hipMemcpy3DParms,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipChildGraphNodeParams {
    pub graph: hipGraph_t,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipEventWaitNodeParams {
    pub event: hipEvent_t,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipEventRecordNodeParams {
    pub event: hipEvent_t,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipMemFreeNodeParams {
    pub dptr: *mut c_void,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipGraphNodeParams {
    pub type_: hipGraphNodeType,
    pub reserved0: [c_int; 3],
    pub __bindgen_anon_1: hipGraphNodeParams__bindgen_ty_1,
    pub reserved2: c_longlong,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipGraphNodeParams__bindgen_ty_1 {
    pub reserved1: [c_longlong; 29],
    pub kernel: hipKernelNodeParams,
    pub memcpy: hipMemcpyNodeParams,
    pub memset: hipMemsetParams,
    pub host: hipHostNodeParams,
    pub graph: hipChildGraphNodeParams,
    pub eventWait: hipEventWaitNodeParams,
    pub eventRecord: hipEventRecordNodeParams,
    pub extSemSignal: hipExternalSemaphoreSignalNodeParams,
    pub extSemWait: hipExternalSemaphoreWaitNodeParams,
    pub alloc: hipMemAllocNodeParams,
    pub free: hipMemFreeNodeParams,
}

pub type hipGraphDependencyType = c_uint;
pub const hipGraphDependencyTypeDefault: hipGraphDependencyType = 0;
pub const hipGraphDependencyTypeProgrammatic: hipGraphDependencyType = 1;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipGraphEdgeData {
    pub from_port: c_uchar,
    pub reserved: [c_uchar; 5],
    pub to_port: c_uchar,
    pub type_: c_uchar,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipLaunchAttribute_st {
    pub id: hipLaunchAttributeID,
    pub pad: [c_char; 4],
    pub __bindgen_anon_1: hipLaunchAttribute_st__bindgen_ty_1,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union hipLaunchAttribute_st__bindgen_ty_1 {
    pub val: hipLaunchAttributeValue,
    pub value: hipLaunchAttributeValue,
}

pub type hipLaunchAttribute = hipLaunchAttribute_st;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipLaunchConfig_st {
    pub gridDim: dim3,
    pub blockDim: dim3,
    pub dynamicSmemBytes: usize,
    pub stream: hipStream_t,
    pub attrs: *mut hipLaunchAttribute,
    pub numAttrs: c_uint,
}

pub type hipLaunchConfig_t = hipLaunchConfig_st;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct HIP_LAUNCH_CONFIG_st {
    pub gridDimX: c_uint,
    pub gridDimY: c_uint,
    pub gridDimZ: c_uint,
    pub blockDimX: c_uint,
    pub blockDimY: c_uint,
    pub blockDimZ: c_uint,
    pub sharedMemBytes: c_uint,
    pub hStream: hipStream_t,
    pub attrs: *mut hipLaunchAttribute,
    pub numAttrs: c_uint,
}

pub type HIP_LAUNCH_CONFIG = HIP_LAUNCH_CONFIG_st;
pub type hipMemRangeHandleType = c_uint;
pub const hipMemRangeHandleTypeDmaBufFd: hipMemRangeHandleType = 1;
pub const hipMemRangeHandleTypeMax: hipMemRangeHandleType = 2147483647;

pub type hipMemRangeFlags = c_uint;
pub const hipMemRangeFlagDmaBufMappingTypePcie: hipMemRangeFlags = 1;
pub const hipMemRangeFlagsMax: hipMemRangeFlags = 2147483647;

pub type hipStreamCallback_t = Option<unsafe extern "C" fn(stream: hipStream_t, status: hipError_t, userData: *mut c_void)>;
// ------------------------------------------------------------------------------------------------
// Hand-written: bit-field struct, legacy device properties, helpers
// ------------------------------------------------------------------------------------------------

/// `hipDeviceProp_tR0000`: the pre-ROCm-6 `hipDeviceProp_t`, still filled by
/// `hipGetDevicePropertiesR0000` / `hipChooseDeviceR0000` and by the unsuffixed exported symbols
/// `hipGetDeviceProperties` / `hipChooseDevice` (binaries built before ROCm 6 call those; ROCm 6+
/// headers `#define` the unsuffixed names to the R0600 functions).
#[repr(C)]
#[derive(Copy, Clone)]
pub struct hipDeviceProp_tR0000 {
    pub name: [c_char; 256],
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: c_int,
    pub warpSize: c_int,
    pub maxThreadsPerBlock: c_int,
    pub maxThreadsDim: [c_int; 3],
    pub maxGridSize: [c_int; 3],
    pub clockRate: c_int,
    pub memoryClockRate: c_int,
    pub memoryBusWidth: c_int,
    pub totalConstMem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub multiProcessorCount: c_int,
    pub l2CacheSize: c_int,
    pub maxThreadsPerMultiProcessor: c_int,
    pub computeMode: c_int,
    pub clockInstructionRate: c_int,
    pub arch: hipDeviceArch_t,
    pub concurrentKernels: c_int,
    pub pciDomainID: c_int,
    pub pciBusID: c_int,
    pub pciDeviceID: c_int,
    pub maxSharedMemoryPerMultiProcessor: usize,
    pub isMultiGpuBoard: c_int,
    pub canMapHostMemory: c_int,
    pub gcnArch: c_int,
    pub gcnArchName: [c_char; 256],
    pub integrated: c_int,
    pub cooperativeLaunch: c_int,
    pub cooperativeMultiDeviceLaunch: c_int,
    pub maxTexture1DLinear: c_int,
    pub maxTexture1D: c_int,
    pub maxTexture2D: [c_int; 2],
    pub maxTexture3D: [c_int; 3],
    pub hdpMemFlushCntl: *mut c_uint,
    pub hdpRegFlushCntl: *mut c_uint,
    pub memPitch: usize,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub kernelExecTimeoutEnabled: c_int,
    pub ECCEnabled: c_int,
    pub tccDriver: c_int,
    pub cooperativeMultiDeviceUnmatchedFunc: c_int,
    pub cooperativeMultiDeviceUnmatchedGridDim: c_int,
    pub cooperativeMultiDeviceUnmatchedBlockDim: c_int,
    pub cooperativeMultiDeviceUnmatchedSharedMem: c_int,
    pub isLargeBar: c_int,
    pub asicRevision: c_int,
    pub managedMemory: c_int,
    pub directManagedMemAccessFromHost: c_int,
    pub concurrentManagedAccess: c_int,
    pub pageableMemoryAccess: c_int,
    pub pageableMemoryAccessUsesHostPageTables: c_int,
}

macro_rules! zeroed_ctor {
    ($($t:ty),* $(,)?) => {$(
        impl $t {
            /// All-zero value (every field of this C struct is valid as zero).
            #[inline]
            pub const fn zeroed() -> Self {
                // SAFETY: plain-old-data C struct: integers, arrays, raw pointers, unions thereof.
                unsafe { core::mem::zeroed() }
            }
        }
    )*};
}
zeroed_ctor!(hipDeviceProp_tR0000, hipFuncAttributes, hipPointerAttribute_t, hipChannelFormatDesc, hipIpcMemHandle_t, hipIpcEventHandle_t);

impl dim3 {
    pub const fn new(x: u32, y: u32, z: u32) -> Self {
        dim3 { x, y, z }
    }
}

/// `hipDeviceProp_t` in ROCm 6+ headers is `#define`d to the R0600 layout.
pub type hipDeviceProp_t = hipDeviceProp_tR0600;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_arch_bits() {
        assert_eq!(hipDeviceArch_t::HAS_DYNAMIC_PARALLELISM, 1 << 16);
        assert_eq!(core::mem::size_of::<hipDeviceArch_t>(), 4);
    }

    #[test]
    fn launch_param_markers() {
        assert_eq!(HIP_LAUNCH_PARAM_BUFFER_POINTER as usize, 1);
        assert_eq!(HIP_LAUNCH_PARAM_BUFFER_SIZE as usize, 2);
        assert_eq!(HIP_LAUNCH_PARAM_END as usize, 3);
        assert_eq!(HIP_VERSION, 70253211);
    }
}
