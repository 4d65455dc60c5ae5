//! Managed memory on the CUDA backend: `cuMemAllocManaged` memory (attached globally), at the
//! address the driver chooses; the client maps its side there. The device side of memory
//! that stream memory operations address (signal and registered memory) is plain device
//! memory instead: `cuStreamWriteValue*`/`cuStreamWaitValue*` refuse managed memory.

use super::{lock, result, CudaBackend};
use crate::backend::{BackendError, DeviceIndex, DevicePtr, ManagedBackend, MemoryBackend};

impl ManagedBackend for CudaBackend {
    fn malloc_managed(&self, dev: DeviceIndex, size: u64, _hint: u64) -> Result<DevicePtr, BackendError> {
        let bytes =
            usize::try_from(size).ok().filter(|&n| n > 0).ok_or_else(|| BackendError::InvalidValue(format!("managed allocation of {size} bytes")))?;
        self.enter(dev)?;
        let (free, _) = result::mem::info()?;
        if bytes > free {
            return Err(BackendError::OutOfMemory(format!("{size} bytes requested, {free} free on device {dev}")));
        }
        // Freed by `free` (cuMemFree releases managed memory too).
        let ptr = result::mem::alloc_managed(bytes)?;
        if let Err(e) = self.scrub_now(dev, ptr, bytes) {
            // The allocation just made, never handed out.
            let _ = result::mem::free(ptr);
            return Err(e);
        }
        lock(&self.allocations).insert(ptr, (size, dev));
        Ok(DevicePtr(ptr))
    }

    fn malloc_device_twin(&self, dev: DeviceIndex, size: u64, _hint: u64) -> Result<DevicePtr, BackendError> {
        // cuMemAlloc memory, zeroed, in the allocation table like any hipMalloc.
        self.malloc(dev, size)
    }
}
