//! Devices: count, properties, synchronization, limits and peers.

use super::{BackendError, DeviceIndex};

/// A `hipDeviceGetLimit` / `hipDeviceSetLimit` limit (`hipLimit_t`); the others are
/// `hipErrorUnsupportedLimit` before a backend sees them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DeviceLimit {
    /// `hipLimitStackSize`: stack bytes per GPU thread.
    StackSize,
    /// `hipLimitPrintfFifoSize`: bytes of device `printf` output buffered per launch.
    PrintfFifoSize,
    /// `hipLimitMallocHeapSize`: bytes of the device-side `malloc` heap.
    MallocHeapSize,
    /// `hipExtLimitScratchMin`: the least scratch (private) memory the device can be limited to.
    ScratchMin,
    /// `hipExtLimitScratchMax`: the most scratch memory the device can use.
    ScratchMax,
    /// `hipExtLimitScratchCurrent`: the scratch memory limit in effect.
    ScratchCurrent,
}

impl DeviceLimit {
    /// The `hipLimit_t` number of the limit.
    pub fn raw(self) -> u32 {
        match self {
            Self::StackSize => 0,
            Self::PrintfFifoSize => 1,
            Self::MallocHeapSize => 2,
            Self::ScratchMin => 0x1000,
            Self::ScratchMax => 0x1001,
            Self::ScratchCurrent => 0x1002,
        }
    }

    /// Whether ROCm 7's `hipDeviceGetLimit` answers it: all but the printf FIFO size.
    pub fn readable(self) -> bool {
        self != Self::PrintfFifoSize
    }

    /// Whether ROCm 7's `hipDeviceSetLimit` sets it: the stack, the heap, the current scratch.
    pub fn settable(self) -> bool {
        matches!(self, Self::StackSize | Self::MallocHeapSize | Self::ScratchCurrent)
    }

    /// Whether it is one of AMD's scratch limits (no other GPU has them).
    pub fn is_scratch(self) -> bool {
        matches!(self, Self::ScratchMin | Self::ScratchMax | Self::ScratchCurrent)
    }

    /// The limit for a `hipLimit_t` number, `None` for the unsupported ones.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::StackSize),
            1 => Some(Self::PrintfFifoSize),
            2 => Some(Self::MallocHeapSize),
            0x1000 => Some(Self::ScratchMin),
            0x1001 => Some(Self::ScratchMax),
            0x1002 => Some(Self::ScratchCurrent),
            _ => None,
        }
    }
}

/// What a client needs to fill `hipDeviceProp_t`; the session maps field by field.
/// Sizes are bytes, clocks kHz; `int` fields of `hipDeviceProp_t` are `i32` here and its
/// 0/1 flags `bool`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceProperties {
    /// Marketing name, at most 255 bytes (the C field is `char[256]`).
    pub name: String,
    /// `gcnArchName`, e.g. `gfx90a:sramecc+:xnack-`; `host` for the host backend.
    pub gcn_arch_name: String,
    pub total_global_mem: u64,
    pub shared_mem_per_block: u64,
    /// Most shared memory a block can opt into (`hipFuncAttributeMaxDynamicSharedMemorySize`).
    pub shared_mem_per_block_optin: u64,
    pub regs_per_block: i32,
    pub warp_size: i32,
    pub max_threads_per_block: i32,
    pub max_threads_dim: [i32; 3],
    pub max_grid_size: [i32; 3],
    pub clock_rate_khz: i32,
    pub memory_clock_rate_khz: i32,
    /// In bits.
    pub memory_bus_width: i32,
    pub total_const_mem: u64,
    pub major: i32,
    pub minor: i32,
    pub multi_processor_count: i32,
    pub l2_cache_size: i32,
    pub max_threads_per_multiprocessor: i32,
    /// `hipComputeMode`; 0 is `hipComputeModeDefault`.
    pub compute_mode: i32,
    pub concurrent_kernels: bool,
    pub pci_domain_id: i32,
    pub pci_bus_id: i32,
    pub pci_device_id: i32,
    pub max_shared_memory_per_multiprocessor: u64,
    pub is_multi_gpu_board: bool,
    pub can_map_host_memory: bool,
    pub integrated: bool,
    pub ecc_enabled: bool,
    pub unified_addressing: bool,
    pub managed_memory: bool,
    pub concurrent_managed_access: bool,
    pub pageable_memory_access: bool,
    pub cooperative_launch: bool,
    pub kernel_exec_timeout_enabled: bool,
    pub async_engine_count: i32,
    pub mem_pitch: u64,
    pub texture_alignment: u64,
    /// 32-bit registers available to the blocks resident on one multiprocessor.
    pub regs_per_multiprocessor: i32,
    /// Most blocks resident on one multiprocessor.
    pub max_blocks_per_multiprocessor: i32,
    /// Most L2 bytes set aside for persisting accesses (0 without the feature).
    pub persisting_l2_cache_max_size: i32,
    /// `hipLaunchCooperativeKernelMultiDevice` is supported.
    pub cooperative_multi_device_launch: bool,
    /// Rate of the counter device `clock64()` reads, in kHz.
    pub clock_instruction_rate_khz: i32,
}

/// The device family (`hipGetDeviceCount`, `hipGetDeviceProperties`, `hipDeviceSynchronize`,
/// limits, peers), and the backend's name.
pub trait DeviceBackend {
    /// `"host"`, `"cuda"` or `"hip"`.
    fn name(&self) -> &'static str;

    /// Number of devices this backend exposes.
    fn device_count(&self) -> Result<u32, BackendError>;

    /// Static properties of `dev` (`hipGetDeviceProperties`).
    fn device_properties(&self, dev: DeviceIndex) -> Result<DeviceProperties, BackendError>;

    /// Waits until all work queued on `dev`, on every stream of every session, is done.
    /// Errors latched on individual streams stay there, reported by that stream's
    /// synchronize/query (the session, which knows its streams, collects them).
    fn device_synchronize(&self, dev: DeviceIndex) -> Result<(), BackendError>;

    /// The current value of `limit` on `dev` (`hipDeviceGetLimit`).
    fn device_limit(&self, dev: DeviceIndex, limit: DeviceLimit) -> Result<u64, BackendError>;

    /// Sets `limit` on `dev` (`hipDeviceSetLimit`) and returns the value now in effect (a
    /// backend may round up); a value the backend cannot honour is `InvalidValue`.
    fn set_device_limit(&self, dev: DeviceIndex, limit: DeviceLimit, value: u64) -> Result<u64, BackendError>;

    /// Whether kernels on `dev` can access memory of `peer` (`hipDeviceCanAccessPeer`; the
    /// session answers `false` for `dev == peer` itself).
    fn can_access_peer(&self, dev: DeviceIndex, peer: DeviceIndex) -> Result<bool, BackendError>;

    /// Lets kernels on `dev` access memory of `peer` (`hipDeviceEnablePeerAccess`), for every
    /// session, for the rest of the worker's life: sessions enable and disable pairs in their
    /// own bookkeeping, and one session's disable must not unmap memory another's kernels use.
    /// Called only for pairs [`DeviceBackend::can_access_peer`] accepts; enabling a pair
    /// again is not an error. The default does nothing, for backends whose devices reach each
    /// other's memory without a mapping step (the host backend: one address space).
    fn enable_peer_access(&self, dev: DeviceIndex, peer: DeviceIndex) -> Result<(), BackendError> {
        let _ = (dev, peer);
        Ok(())
    }

    /// Makes `dev` usable again after a sticky fault (`crate::device_faults`), where that can
    /// be done in place: only the host backend's injected test faults. A GPU context in a
    /// sticky state is never reset in the process that holds it — CUDA: "the process must be
    /// terminated and relaunched" — so the GPU backends keep this default, which does
    /// nothing: the shared session process that holds the context is replaced instead
    /// (`crate::sandbox::shared`), and a session process ends with its session.
    fn reset_device(&self, dev: DeviceIndex) -> Result<(), BackendError> {
        let _ = dev;
        Ok(())
    }

    /// Whether `dev`'s context is in a sticky error state now: `Some(true)` broken,
    /// `Some(false)` healthy, `None` the backend cannot tell without waiting for other
    /// sessions' work. A session that met an error with a sticky code resets only the
    /// devices this does not call healthy: an error with such a code that left the context
    /// usable (the cuda backend's device-log asserts, the host backend's kernel faults, a
    /// chained worker's) resets nothing.
    fn device_fault(&self, dev: DeviceIndex) -> Option<bool> {
        let _ = dev;
        None
    }

    /// Starts recording launches for the kernel watchdog (`crate::watchdog`): an event
    /// after each. False where the backend cannot (the host backend's stream threads tell the
    /// watchdog themselves).
    fn watch_launches(&self) -> bool {
        false
    }

    /// The devices running a kernel that has been at the head of its stream longer than
    /// `limit` (see [`watch_launches`](Self::watch_launches)).
    fn overrun_devices(&self, limit: std::time::Duration) -> Vec<DeviceIndex> {
        let _ = limit;
        Vec::new()
    }
}
