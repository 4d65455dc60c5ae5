//! `hipDeviceProp_t` as ROCm 6 and later lay it out (`hipGetDevicePropertiesR0600`, 1472
//! bytes): `proto_core::hip_abi`'s definition, the one the client fills too, and its
//! conversion into [`DeviceProperties`].

use crate::backend::DeviceProperties;
use std::ffi::c_char;

/// ROCm's `hipDeviceProp_tR0600`.
pub use proto_core::hip_abi::hipDeviceProp_tR0600 as HipDeviceProp;

/// What the wire reports of `prop`, field by field.
pub fn properties(prop: &HipDeviceProp) -> DeviceProperties {
    let text = |chars: &[c_char]| {
        let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    DeviceProperties {
        name: text(&prop.name),
        gcn_arch_name: text(&prop.gcnArchName),
        total_global_mem: prop.totalGlobalMem as u64,
        shared_mem_per_block: prop.sharedMemPerBlock as u64,
        shared_mem_per_block_optin: prop.sharedMemPerBlockOptin as u64,
        regs_per_block: prop.regsPerBlock,
        warp_size: prop.warpSize,
        max_threads_per_block: prop.maxThreadsPerBlock,
        max_threads_dim: prop.maxThreadsDim,
        max_grid_size: prop.maxGridSize,
        clock_rate_khz: prop.clockRate,
        memory_clock_rate_khz: prop.memoryClockRate,
        memory_bus_width: prop.memoryBusWidth,
        total_const_mem: prop.totalConstMem as u64,
        major: prop.major,
        minor: prop.minor,
        multi_processor_count: prop.multiProcessorCount,
        l2_cache_size: prop.l2CacheSize,
        max_threads_per_multiprocessor: prop.maxThreadsPerMultiProcessor,
        compute_mode: prop.computeMode,
        concurrent_kernels: prop.concurrentKernels != 0,
        pci_domain_id: prop.pciDomainID,
        pci_bus_id: prop.pciBusID,
        pci_device_id: prop.pciDeviceID,
        max_shared_memory_per_multiprocessor: prop.maxSharedMemoryPerMultiProcessor as u64,
        is_multi_gpu_board: prop.isMultiGpuBoard != 0,
        can_map_host_memory: prop.canMapHostMemory != 0,
        integrated: prop.integrated != 0,
        ecc_enabled: prop.ECCEnabled != 0,
        unified_addressing: prop.unifiedAddressing != 0,
        managed_memory: prop.managedMemory != 0,
        concurrent_managed_access: prop.concurrentManagedAccess != 0,
        pageable_memory_access: prop.pageableMemoryAccess != 0,
        cooperative_launch: prop.cooperativeLaunch != 0,
        kernel_exec_timeout_enabled: prop.kernelExecTimeoutEnabled != 0,
        async_engine_count: prop.asyncEngineCount,
        mem_pitch: prop.memPitch as u64,
        texture_alignment: prop.textureAlignment as u64,
        regs_per_multiprocessor: prop.regsPerMultiprocessor,
        max_blocks_per_multiprocessor: prop.maxBlocksPerMultiProcessor,
        persisting_l2_cache_max_size: prop.persistingL2CacheMaxSize,
        cooperative_multi_device_launch: prop.cooperativeMultiDeviceLaunch != 0,
        clock_instruction_rate_khz: prop.clockInstructionRate,
    }
}
