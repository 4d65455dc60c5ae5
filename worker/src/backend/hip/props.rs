//! `hipDeviceProp_t` as ROCm 6 and later lay it out (`hipGetDevicePropertiesR0600`, 1472
//! bytes; the same layout as client-capi's `hipDeviceProp_tR0600`, checked by size and
//! offsets there), and its conversion into [`DeviceProperties`].

#![allow(non_snake_case)]

use crate::backend::DeviceProperties;
use std::ffi::{c_char, c_int, c_uint};

/// ROCm's `hipDeviceProp_tR0600`, field for field (`uuid` as its 16 bytes, the `arch`
/// bit-fields as their one 32-bit unit).
#[repr(C)]
#[derive(Copy, Clone)]
pub struct HipDeviceProp {
    pub name: [c_char; 256],
    pub uuid: [c_char; 16],
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
    pub arch: u32,
    pub hdpMemFlushCntl: *mut c_uint,
    pub hdpRegFlushCntl: *mut c_uint,
    pub cooperativeMultiDeviceUnmatchedFunc: c_int,
    pub cooperativeMultiDeviceUnmatchedGridDim: c_int,
    pub cooperativeMultiDeviceUnmatchedBlockDim: c_int,
    pub cooperativeMultiDeviceUnmatchedSharedMem: c_int,
    pub isLargeBar: c_int,
    pub asicRevision: c_int,
}

const _: () = assert!(std::mem::size_of::<HipDeviceProp>() == 1472);
const _: () = assert!(std::mem::offset_of!(HipDeviceProp, totalGlobalMem) == 288);

impl HipDeviceProp {
    /// An all-zero value for the runtime to fill.
    pub fn zeroed() -> Self {
        // SAFETY: integers, arrays of integers and raw pointers: all-zero is a valid value of
        // every field.
        unsafe { std::mem::zeroed() }
    }

    /// What the wire reports, field by field.
    pub fn properties(&self) -> DeviceProperties {
        let text = |chars: &[c_char]| {
            let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        };
        DeviceProperties {
            name: text(&self.name),
            gcn_arch_name: text(&self.gcnArchName),
            total_global_mem: self.totalGlobalMem as u64,
            shared_mem_per_block: self.sharedMemPerBlock as u64,
            shared_mem_per_block_optin: self.sharedMemPerBlockOptin as u64,
            regs_per_block: self.regsPerBlock,
            warp_size: self.warpSize,
            max_threads_per_block: self.maxThreadsPerBlock,
            max_threads_dim: self.maxThreadsDim,
            max_grid_size: self.maxGridSize,
            clock_rate_khz: self.clockRate,
            memory_clock_rate_khz: self.memoryClockRate,
            memory_bus_width: self.memoryBusWidth,
            total_const_mem: self.totalConstMem as u64,
            major: self.major,
            minor: self.minor,
            multi_processor_count: self.multiProcessorCount,
            l2_cache_size: self.l2CacheSize,
            max_threads_per_multiprocessor: self.maxThreadsPerMultiProcessor,
            compute_mode: self.computeMode,
            concurrent_kernels: self.concurrentKernels != 0,
            pci_domain_id: self.pciDomainID,
            pci_bus_id: self.pciBusID,
            pci_device_id: self.pciDeviceID,
            max_shared_memory_per_multiprocessor: self.maxSharedMemoryPerMultiProcessor as u64,
            is_multi_gpu_board: self.isMultiGpuBoard != 0,
            can_map_host_memory: self.canMapHostMemory != 0,
            integrated: self.integrated != 0,
            ecc_enabled: self.ECCEnabled != 0,
            unified_addressing: self.unifiedAddressing != 0,
            managed_memory: self.managedMemory != 0,
            concurrent_managed_access: self.concurrentManagedAccess != 0,
            pageable_memory_access: self.pageableMemoryAccess != 0,
            cooperative_launch: self.cooperativeLaunch != 0,
            kernel_exec_timeout_enabled: self.kernelExecTimeoutEnabled != 0,
            async_engine_count: self.asyncEngineCount,
            mem_pitch: self.memPitch as u64,
            texture_alignment: self.textureAlignment as u64,
            regs_per_multiprocessor: self.regsPerMultiprocessor,
            max_blocks_per_multiprocessor: self.maxBlocksPerMultiProcessor,
            persisting_l2_cache_max_size: self.persistingL2CacheMaxSize,
            cooperative_multi_device_launch: self.cooperativeMultiDeviceLaunch != 0,
            clock_instruction_rate_khz: self.clockInstructionRate,
        }
    }
}
