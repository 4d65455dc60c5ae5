//! Managed memory and device-visible host memory: device ranges the client mirrors in its own
//! address space (see docs/MANAGED_MEMORY.md). The session keeps them coherent with ordinary
//! copies; a backend only has to place them.

use super::{BackendError, DeviceIndex, DevicePtr};

/// Places the device side of managed and mapped host memory.
pub trait ManagedBackend {
    /// Allocates `size` bytes of device memory for `device`, at `hint` when the backend can
    /// choose the address and `hint` is free, elsewhere otherwise (the client then maps its
    /// side at the returned address, or uses it as the device pointer of registered memory).
    /// Freed with [`MemoryBackend::free`](super::MemoryBackend::free).
    fn malloc_managed(&self, device: DeviceIndex, size: u64, hint: u64) -> Result<DevicePtr, BackendError>;

    /// Allocates the device side of host memory that stream memory operations address
    /// (`hipMallocSignalMemory`, `hipHostRegister`): memory `hipStreamWaitValue*` and
    /// `hipStreamWriteValue*` accept — plain device memory on the GPU backends, whose drivers
    /// refuse managed memory there — placed as [`malloc_managed`](Self::malloc_managed) places
    /// where the backend can. The session keeps it coherent with the same copies. Freed with
    /// [`MemoryBackend::free`](super::MemoryBackend::free).
    fn malloc_device_twin(&self, device: DeviceIndex, size: u64, hint: u64) -> Result<DevicePtr, BackendError>;
}
