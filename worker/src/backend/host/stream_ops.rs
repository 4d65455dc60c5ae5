//! Stream memory operations on the host backend: device memory is host memory, so a wait
//! polls the word on the stream's executor and a write stores it there, in stream order.

use super::stream::StreamOp;
use super::HostBackend;
use crate::backend::{BackendError, CheckedHostFn, MemOp, StreamHandle, StreamOpsBackend, Width};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Longest a `hipStreamWaitValue*` holds a host stream: past it the wait fails with
/// `hipErrorLaunchFailure`, latched on the stream (a GPU's wait would hang the queue; an
/// executor thread of the worker must not).
pub const MAX_STREAM_WAIT_VALUE: Duration = Duration::from_secs(30);
/// Longest pause between two reads of the word a wait polls.
const WAIT_POLL_MAX: Duration = Duration::from_millis(1);

fn read(ptr: u64, width: Width) -> u64 {
    match width {
        // SAFETY: the session checked that `ptr` lies inside one of its live allocations with
        // room for the word and is aligned to it; the allocation outlives the stream's queued
        // work (frees synchronize first). Atomics, as another stream may write concurrently.
        Width::W32 => u64::from(unsafe { AtomicU32::from_ptr(ptr as *mut u32) }.load(Ordering::Acquire)),
        // SAFETY: as above.
        Width::W64 => unsafe { AtomicU64::from_ptr(ptr as *mut u64) }.load(Ordering::Acquire),
    }
}

fn run(op: MemOp) -> Result<(), BackendError> {
    match op {
        MemOp::Write { ptr, width, value } => {
            match width {
                // SAFETY: as in `read`.
                Width::W32 => unsafe { AtomicU32::from_ptr(ptr.0 as *mut u32) }.store(value as u32, Ordering::Release),
                // SAFETY: as in `read`.
                Width::W64 => unsafe { AtomicU64::from_ptr(ptr.0 as *mut u64) }.store(value, Ordering::Release),
            }
            Ok(())
        }
        MemOp::Wait { ptr, width, value, mask, condition } => {
            let deadline = Instant::now() + MAX_STREAM_WAIT_VALUE;
            let mut pause = Duration::from_micros(10);
            while !condition.holds(read(ptr.0, width), value, mask) {
                if Instant::now() >= deadline {
                    return Err(BackendError::LaunchFailure(format!(
                        "hipStreamWaitValue on {:#x} not satisfied within {MAX_STREAM_WAIT_VALUE:?}",
                        ptr.0
                    )));
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(WAIT_POLL_MAX);
            }
            Ok(())
        }
    }
}

impl StreamOpsBackend for HostBackend {
    fn stream_mem_op(&self, stream: StreamHandle, op: MemOp) -> Result<(), BackendError> {
        self.stream(stream)?.submit(StreamOp::Checked(Box::new(move || run(op)))).map(drop)
    }

    fn launch_checked_host_func(&self, stream: StreamHandle, f: CheckedHostFn) -> Result<(), BackendError> {
        self.stream(stream)?.submit(StreamOp::Checked(f)).map(drop)
    }
}
