//! Managed memory on the CUDA backend: `cuMemAllocManaged` memory (attached globally), at the
//! address the driver chooses; the client maps its side there.

use super::error::Check;
use super::{lock, CudaBackend};
use crate::backend::{BackendError, DeviceIndex, DevicePtr, ManagedBackend};

/// `CU_MEM_ATTACH_GLOBAL`: every stream may access the memory.
const CU_MEM_ATTACH_GLOBAL: u32 = 0x1;

impl ManagedBackend for CudaBackend {
    fn malloc_managed(&self, dev: DeviceIndex, size: u64, _hint: u64) -> Result<DevicePtr, BackendError> {
        let bytes =
            usize::try_from(size).ok().filter(|&n| n > 0).ok_or_else(|| BackendError::InvalidValue(format!("managed allocation of {size} bytes")))?;
        self.enter(dev)?;
        let (free, _) = cudarc::driver::result::mem_get_info().map_err(|e| super::error::map("cuMemGetInfo", e))?;
        if bytes > free {
            return Err(BackendError::OutOfMemory(format!("{size} bytes requested, {free} free on device {dev}")));
        }
        let mut ptr = 0;
        // SAFETY: a valid out-pointer; the device's context is current; freed by `free`
        // (cuMemFree releases managed memory too).
        unsafe { super::sys::cuMemAllocManaged(&mut ptr, bytes, CU_MEM_ATTACH_GLOBAL) }.check("cuMemAllocManaged")?;
        if let Err(e) = self.scrub_now(dev, ptr, bytes) {
            // SAFETY: the allocation just made, never handed out.
            let _ = unsafe { cudarc::driver::result::free_sync(ptr) };
            return Err(e);
        }
        lock(&self.allocations).insert(ptr, (size, dev));
        Ok(DevicePtr(ptr))
    }
}
