//! Stream memory operations on CUDA: `cuStreamWaitValue32/64` and `cuStreamWriteValue32/64`
//! (HIP's wait conditions are CUDA's flags, value for value). CUDA's waits have no mask, so
//! a wait with a partial mask is `hipErrorNotSupported` here.

use super::error::Check;
use super::{sys, CudaBackend};
use crate::backend::{BackendError, CheckedHostFn, MemOp, StreamHandle, StreamOpsBackend, Width};

impl StreamOpsBackend for CudaBackend {
    fn stream_mem_op(&self, stream: StreamHandle, op: MemOp) -> Result<(), BackendError> {
        let s = self.stream(Some(stream), 0)?;
        match op {
            MemOp::Wait { ptr, width, value, mask, condition } => {
                let full = match width {
                    Width::W32 => u64::from(u32::MAX),
                    Width::W64 => u64::MAX,
                };
                if mask & full != full {
                    return Err(BackendError::NotSupported(format!("CUDA stream waits have no mask (mask {mask:#x})")));
                }
                let flags = condition as u32;
                match width {
                    // SAFETY: a live stream of the entered context; `ptr` is a device address
                    // of the session's, checked by the session.
                    Width::W32 => unsafe { sys::cuStreamWaitValue32_v2(s, ptr.0, value as u32, flags) }.check("cuStreamWaitValue32"),
                    // SAFETY: as above.
                    Width::W64 => unsafe { sys::cuStreamWaitValue64_v2(s, ptr.0, value, flags) }.check("cuStreamWaitValue64"),
                }
            }
            MemOp::Write { ptr, width, value } => match width {
                // SAFETY: as above.
                Width::W32 => unsafe { sys::cuStreamWriteValue32_v2(s, ptr.0, value as u32, 0) }.check("cuStreamWriteValue32"),
                // SAFETY: as above.
                Width::W64 => unsafe { sys::cuStreamWriteValue64_v2(s, ptr.0, value, 0) }.check("cuStreamWriteValue64"),
            },
        }
    }

    fn launch_checked_host_func(&self, stream: StreamHandle, f: CheckedHostFn) -> Result<(), BackendError> {
        let s = self.stream(Some(stream), 0)?;
        self.launch_host(
            s,
            Box::new(move || {
                if let Err(e) = f() {
                    tracing::warn!(%e, "a host step of a CUDA stream failed (CUDA host functions cannot report it)");
                }
            }),
        )
    }
}
