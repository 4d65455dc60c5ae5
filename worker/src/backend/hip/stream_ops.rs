//! Stream memory operations and blocking host functions on the HIP runtime:
//! `hipStreamWaitValue*`/`hipStreamWriteValue*` and `hipLaunchHostFunc` (optional symbols:
//! an older runtime without them answers `hipErrorNotSupported`).

use super::error::Check;
use super::HipBackend;
use crate::backend::{BackendError, CheckedHostFn, MemOp, StreamHandle, StreamOpsBackend, Width};
use std::ffi::c_void;

fn missing(name: &str) -> BackendError {
    BackendError::NotSupported(format!("the HIP runtime lacks {name}"))
}

impl StreamOpsBackend for HipBackend {
    fn stream_mem_op(&self, stream: StreamHandle, op: MemOp) -> Result<(), BackendError> {
        let (s, device) = self.stream_and_device(Some(stream), 0)?;
        let api = &self.api;
        match op {
            MemOp::Wait { ptr, width: Width::W32, value, mask, condition } => {
                api.stream_wait_value32(s, ptr.0, value as u32, condition as u32, mask as u32)?
            }
            MemOp::Wait { ptr, width: Width::W64, value, mask, condition } => api.stream_wait_value64(s, ptr.0, value, condition as u32, mask)?,
            MemOp::Write { ptr, width: Width::W32, value } => api.stream_write_value32(s, ptr.0, value as u32)?,
            MemOp::Write { ptr, width: Width::W64, value } => api.stream_write_value64(s, ptr.0, value)?,
        }
        // The application may hold a wait for any time: not an overrun of the tenant's.
        if matches!(op, MemOp::Wait { .. }) && self.launch_watch.enabled() {
            self.watch_wait(s, device);
        }
        Ok(())
    }

    /// `hipLaunchHostFunc`: unlike [`crate::backend::StreamBackend::launch_host_func`] here
    /// (which runs after the stream reaches it without holding the stream), the stream waits
    /// for `f`, as a stream callback needs.
    fn launch_checked_host_func(&self, stream: StreamHandle, f: CheckedHostFn) -> Result<(), BackendError> {
        unsafe extern "C" fn trampoline(user: *mut c_void) {
            // SAFETY: `user` is the Box leaked below, called exactly once by the runtime.
            let f = unsafe { Box::from_raw(user as *mut CheckedHostFn) };
            if let Ok(Err(e)) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
                tracing::warn!(%e, "a host step of a HIP stream failed (HIP host functions cannot report it)");
            }
        }
        let launch = self.api.hipLaunchHostFunc.ok_or_else(|| missing("hipLaunchHostFunc"))?;
        let (s, _) = self.stream_and_device(Some(stream), 0)?;
        let user = Box::into_raw(Box::new(f));
        // SAFETY: a live stream of the current device; the trampoline frees `user`.
        let r = unsafe { launch(s, Some(trampoline), user.cast()) }.check("hipLaunchHostFunc");
        if r.is_err() {
            // SAFETY: the runtime did not take it; reclaim.
            drop(unsafe { Box::from_raw(user) });
        }
        r
    }
}
