//! `hipDeviceProp_t` from `cuDeviceGetAttribute`, field by field. `gcn_arch_name` reports the
//! SM architecture (`sm_90` on an H100), which is what NVRTC and PTX loading target.

use super::result;
use crate::backend::{BackendError, DeviceProperties};
use cudarc::driver::sys::{CUdevice, CUdevice_attribute as A};

pub(super) fn attr(dev: CUdevice, a: A) -> Result<i32, BackendError> {
    Ok(result::device::attribute(dev, a)?)
}

/// Reads every property the wire reports.
pub fn read(dev: CUdevice) -> Result<DeviceProperties, BackendError> {
    let name = result::device::name(dev)?;
    let total = result::device::total_mem(dev)?;
    let major = attr(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attr(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    let a = |x| attr(dev, x);
    Ok(DeviceProperties {
        name,
        gcn_arch_name: format!("sm_{major}{minor}"),
        total_global_mem: total as u64,
        // What a block may use, as HIP means it (no opt-in: launches raise a kernel's limit
        // themselves, `module.rs`), rather than CUDA's 48 KiB before opt-in.
        shared_mem_per_block: a(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u64,
        shared_mem_per_block_optin: a(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u64,
        regs_per_block: a(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?,
        warp_size: a(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
        max_threads_per_block: a(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_threads_dim: [
            a(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
            a(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
            a(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
        ],
        max_grid_size: [
            a(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
            a(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
            a(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
        ],
        clock_rate_khz: a(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).unwrap_or(0),
        memory_clock_rate_khz: a(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).unwrap_or(0),
        memory_bus_width: a(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
        total_const_mem: a(A::CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY)? as u64,
        major,
        minor,
        multi_processor_count: a(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        l2_cache_size: a(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
        max_threads_per_multiprocessor: a(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
        compute_mode: a(A::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE)?,
        concurrent_kernels: a(A::CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS)? != 0,
        pci_domain_id: a(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
        pci_bus_id: a(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
        pci_device_id: a(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?,
        max_shared_memory_per_multiprocessor: a(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)? as u64,
        is_multi_gpu_board: a(A::CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD)? != 0,
        can_map_host_memory: a(A::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY)? != 0,
        integrated: a(A::CU_DEVICE_ATTRIBUTE_INTEGRATED)? != 0,
        ecc_enabled: a(A::CU_DEVICE_ATTRIBUTE_ECC_ENABLED)? != 0,
        unified_addressing: a(A::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING)? != 0,
        managed_memory: a(A::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)? != 0,
        concurrent_managed_access: a(A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)? != 0,
        pageable_memory_access: a(A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS)? != 0,
        cooperative_launch: a(A::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? != 0,
        kernel_exec_timeout_enabled: a(A::CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT)? != 0,
        async_engine_count: a(A::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT)?,
        mem_pitch: a(A::CU_DEVICE_ATTRIBUTE_MAX_PITCH)? as u64,
        texture_alignment: a(A::CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)? as u64,
        regs_per_multiprocessor: a(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?,
        max_blocks_per_multiprocessor: a(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
        // Drivers before CUDA 11 lack it: no persisting L2 there.
        persisting_l2_cache_max_size: a(A::CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE).unwrap_or(0),
        cooperative_multi_device_launch: a(A::CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH).unwrap_or(0) != 0,
        // CUDA's clock64() counts SM cycles: the SM clock (HIP's NVIDIA backend reports the
        // same, `clockInstructionRate = clockRate`).
        clock_instruction_rate_khz: a(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).unwrap_or(0),
    })
}
