//! Managed memory on the hip backend: the loaded runtime's `hipMallocManaged`, at the address
//! it chooses; the client maps its side there.

use super::error::Check;
use super::{lock, HipBackend};
use crate::backend::{BackendError, DeviceIndex, DevicePtr, ManagedBackend};

/// `hipMemAttachGlobal`.
const HIP_MEM_ATTACH_GLOBAL: u32 = 0x1;

impl ManagedBackend for HipBackend {
    fn malloc_managed(&self, dev: DeviceIndex, size: u64, _hint: u64) -> Result<DevicePtr, BackendError> {
        let bytes =
            usize::try_from(size).ok().filter(|&n| n > 0).ok_or_else(|| BackendError::InvalidValue(format!("managed allocation of {size} bytes")))?;
        let malloc_managed =
            self.api.hipMallocManaged.ok_or_else(|| BackendError::NotSupported("the loaded HIP runtime has no hipMallocManaged".into()))?;
        self.enter(dev)?;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the device is current; freed by `free` (hipFree).
        unsafe { malloc_managed(&mut ptr, bytes, HIP_MEM_ATTACH_GLOBAL) }.check("hipMallocManaged")?;
        if let Err(e) = self.scrub_now(dev, ptr, bytes) {
            // SAFETY: the allocation just made, never handed out.
            let _ = unsafe { (self.api.hipFree)(ptr) };
            return Err(e);
        }
        lock(&self.allocations).insert(ptr as u64, (size, dev));
        Ok(DevicePtr(ptr as u64))
    }
}
