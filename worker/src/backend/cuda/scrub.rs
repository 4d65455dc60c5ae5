//! Zeroing memory before a session sees it. In shared mode every session of a device
//! allocates in one context, and `cuMemAlloc`/`cuMemAllocAsync` hand out memory another
//! session freed in that context without clearing it: each new allocation is filled with
//! zeros before its pointer is returned (blocking allocations on the device's internal
//! stream, waited for; stream-ordered ones on their own stream, ahead of any use).

use super::{result, CudaBackend};
use crate::backend::{BackendError, DeviceIndex};
use cudarc::driver::sys::CUstream;

impl CudaBackend {
    /// Zeroes `[ptr, ptr + len)` of `dev` and waits for it (the device's context current).
    pub(super) fn scrub_now(&self, dev: DeviceIndex, ptr: u64, len: usize) -> Result<(), BackendError> {
        let stream = self.log_stream(dev)?;
        self.scrub_on(ptr, len, stream)?;
        // The device's internal stream, live until the backend drops.
        Ok(result::stream::synchronize(stream)?)
    }

    /// Queues zeroing `[ptr, ptr + len)` on `stream` (stream-ordered memory).
    pub(super) fn scrub_on(&self, ptr: u64, len: usize, stream: CUstream) -> Result<(), BackendError> {
        // `[ptr, ptr + len)` is an allocation just made in the current context.
        Ok(result::mem::set_d8_async(ptr, 0, len, stream)?)
    }
}
