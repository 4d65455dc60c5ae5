//! Managed memory on the hip backend: the loaded runtime's `hipMallocManaged`, at the address
//! it chooses; the client maps its side there. The device side of memory that stream memory
//! operations address (signal and registered memory) is plain `hipMalloc` memory instead:
//! runtimes over CUDA refuse stream memory operations on managed memory.

use super::{lock, HipBackend};
use crate::backend::{BackendError, DeviceIndex, DevicePtr, ManagedBackend, MemoryBackend};

impl ManagedBackend for HipBackend {
    fn malloc_managed(&self, dev: DeviceIndex, size: u64, _hint: u64) -> Result<DevicePtr, BackendError> {
        let bytes =
            usize::try_from(size).ok().filter(|&n| n > 0).ok_or_else(|| BackendError::InvalidValue(format!("managed allocation of {size} bytes")))?;
        self.enter(dev)?;
        // Freed by `free` (hipFree).
        let ptr = self.api.malloc_managed(bytes)?;
        if let Err(e) = self.scrub_now(dev, ptr, bytes) {
            // The allocation just made, never handed out.
            let _ = self.api.free(ptr);
            return Err(e);
        }
        lock(&self.allocations).insert(ptr as u64, (size, dev));
        Ok(DevicePtr(ptr as u64))
    }

    fn malloc_device_twin(&self, dev: DeviceIndex, size: u64, _hint: u64) -> Result<DevicePtr, BackendError> {
        // hipMalloc memory, zeroed, in the allocation table like any other.
        self.malloc(dev, size)
    }
}
