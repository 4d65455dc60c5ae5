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
        let (s, _) = self.stream_and_device(Some(stream), 0)?;
        let api = &self.api;
        let ptr = |p: crate::backend::DevicePtr| p.0 as *mut c_void;
        match op {
            MemOp::Wait { ptr: p, width: Width::W32, value, mask, condition } => {
                let f = api.hipStreamWaitValue32.ok_or_else(|| missing("hipStreamWaitValue32"))?;
                // SAFETY: a live stream of the current device; `p` is a device address the
                // session checked; the signature is the HIP header's.
                unsafe { f(s, ptr(p), value as u32, condition as u32, mask as u32) }.check("hipStreamWaitValue32")
            }
            MemOp::Wait { ptr: p, width: Width::W64, value, mask, condition } => {
                let f = api.hipStreamWaitValue64.ok_or_else(|| missing("hipStreamWaitValue64"))?;
                // SAFETY: as above.
                unsafe { f(s, ptr(p), value, condition as u32, mask) }.check("hipStreamWaitValue64")
            }
            MemOp::Write { ptr: p, width: Width::W32, value } => {
                let f = api.hipStreamWriteValue32.ok_or_else(|| missing("hipStreamWriteValue32"))?;
                // SAFETY: as above.
                unsafe { f(s, ptr(p), value as u32, 0) }.check("hipStreamWriteValue32")
            }
            MemOp::Write { ptr: p, width: Width::W64, value } => {
                let f = api.hipStreamWriteValue64.ok_or_else(|| missing("hipStreamWriteValue64"))?;
                // SAFETY: as above.
                unsafe { f(s, ptr(p), value, 0) }.check("hipStreamWriteValue64")
            }
        }
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
