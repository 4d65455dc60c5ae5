//! Devices: counts, properties, versions, synchronisation, memory information.

use crate::field::{FixedStr, Name};
use crate::limits::{ARCH_NAME_CAP, DEVICE_NAME_CAP};

message! {
    /// Versions of the worker's runtime.
    pub struct Versions<'a> {
        /// `hipDriverGetVersion` on the worker.
        pub driver_version: i32,
        /// `hipRuntimeGetVersion` on the worker.
        pub runtime_version: i32,
        /// Backend name and version, for logs.
        pub backend: Name<'a>,
    }
}

message! {
    /// Number of devices.
    pub struct DeviceCount {
        /// Devices the session may use.
        pub count: u32,
    }
}

message! {
    /// A request naming one device.
    pub struct DeviceRef {
        /// Device ordinal.
        pub device: u32,
    }
}

message! {
    /// Free and total device memory.
    pub struct MemInfo {
        /// Bytes free.
        pub free: u64,
        /// Bytes in all.
        pub total: u64,
    }
}

message! {
    /// `hipDeviceGetStreamPriorityRange`.
    pub struct PriorityRange {
        /// Least (numerically greatest) priority.
        pub least: i32,
        /// Greatest (numerically least) priority.
        pub greatest: i32,
    }
}

message! {
    /// `hipDeviceGetLimit`: one limit of one device.
    pub struct LimitRef {
        /// Device ordinal.
        pub device: u32,
        /// `hipLimit_t`: 0 stack size, 1 printf FIFO size, 2 malloc heap size.
        pub limit: u32,
    }
}

message! {
    /// `hipDeviceSetLimit`.
    pub struct SetLimit {
        /// Device ordinal.
        pub device: u32,
        /// `hipLimit_t` (as in [`LimitRef`]).
        pub limit: u32,
        /// Requested value, bytes.
        pub value: u64,
    }
}

message! {
    /// The value of a device limit.
    pub struct LimitValue {
        /// Bytes.
        pub value: u64,
    }
}

message! {
    /// `hipDeviceCanAccessPeer`.
    pub struct PeerQuery {
        /// Device whose kernels would access the peer's memory.
        pub device: u32,
        /// Device owning the memory.
        pub peer: u32,
    }
}

message! {
    /// Answer to [`PeerQuery`].
    pub struct PeerAccess {
        /// Whether `device` can access `peer`'s memory.
        pub can_access: bool,
    }
}

message! {
    /// `hipDeviceEnablePeerAccess` / `hipDeviceDisablePeerAccess` from the client's current
    /// device.
    pub struct PeerAccessChange {
        /// The current device: whose kernels gain or lose access.
        pub device: u32,
        /// Device owning the memory.
        pub peer: u32,
        /// Enable (`true`) or disable (`false`).
        pub enable: bool,
    }
}

message! {
    /// Everything `hipDeviceProp_t` and `hipDeviceGetAttribute` report, in wire form. The
    /// client fills both property layouts (R0600 and legacy) and answers attributes from it.
    pub struct DeviceProperties {
        /// Device name.
        pub name: FixedStr<DEVICE_NAME_CAP>,
        /// Architecture name (`gfx90a`, `sm_90`, `host`).
        pub arch_name: FixedStr<ARCH_NAME_CAP>,
        /// 16-byte device UUID.
        pub uuid: [u8; 16],
        /// Global memory bytes.
        pub total_global_mem: u64,
        /// Shared memory per block, bytes.
        pub shared_mem_per_block: u64,
        /// Registers per block.
        pub regs_per_block: u32,
        /// Warp (wavefront) size.
        pub warp_size: u32,
        /// Maximum pitch for pitched copies.
        pub mem_pitch: u64,
        /// Maximum threads per block.
        pub max_threads_per_block: u32,
        /// Maximum block dimensions.
        pub max_threads_dim: [u32; 3],
        /// Maximum grid dimensions.
        pub max_grid_size: [u32; 3],
        /// Core clock, kHz.
        pub clock_rate_khz: u32,
        /// Constant memory bytes.
        pub total_const_mem: u64,
        /// Compute capability / GCN major.
        pub major: u32,
        /// Compute capability / GCN minor.
        pub minor: u32,
        /// Texture alignment.
        pub texture_alignment: u64,
        /// Multiprocessors (SMs / CUs).
        pub multi_processor_count: u32,
        /// Whether kernels have a run-time limit.
        pub kernel_exec_timeout: bool,
        /// Integrated (shares memory with the host).
        pub integrated: bool,
        /// Can map host memory.
        pub can_map_host_memory: bool,
        /// Compute mode.
        pub compute_mode: u32,
        /// Concurrent kernels supported.
        pub concurrent_kernels: bool,
        /// ECC enabled.
        pub ecc_enabled: bool,
        /// PCI bus id.
        pub pci_bus_id: u32,
        /// PCI device id.
        pub pci_device_id: u32,
        /// PCI domain id.
        pub pci_domain_id: u32,
        /// Asynchronous copy engines.
        pub async_engine_count: u32,
        /// Unified addressing.
        pub unified_addressing: bool,
        /// Memory clock, kHz.
        pub memory_clock_rate_khz: u32,
        /// Memory bus width, bits.
        pub memory_bus_width: u32,
        /// L2 cache bytes.
        pub l2_cache_size: u32,
        /// Maximum persisting L2 bytes.
        pub persisting_l2_cache_max_size: u32,
        /// Maximum resident threads per multiprocessor.
        pub max_threads_per_multiprocessor: u32,
        /// Stream priorities supported.
        pub stream_priorities_supported: bool,
        /// Global L1 cache supported.
        pub global_l1_cache_supported: bool,
        /// Local L1 cache supported.
        pub local_l1_cache_supported: bool,
        /// Shared memory per multiprocessor, bytes.
        pub shared_mem_per_multiprocessor: u64,
        /// Registers per multiprocessor.
        pub regs_per_multiprocessor: u32,
        /// Managed memory supported.
        pub managed_memory: bool,
        /// Part of a multi-GPU board.
        pub is_multi_gpu_board: bool,
        /// Pageable memory access.
        pub pageable_memory_access: bool,
        /// Concurrent managed access.
        pub concurrent_managed_access: bool,
        /// Cooperative launch.
        pub cooperative_launch: bool,
        /// Cooperative multi-device launch.
        pub cooperative_multi_device_launch: bool,
        /// Opt-in shared memory per block, bytes.
        pub shared_mem_per_block_optin: u64,
        /// Maximum resident blocks per multiprocessor.
        pub max_blocks_per_multiprocessor: u32,
        /// Host-native atomics supported.
        pub host_native_atomic_supported: bool,
        /// Clock used for instructions (kHz).
        pub clock_instruction_rate_khz: u32,
    }
}
