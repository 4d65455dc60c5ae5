//! What the kernel watchdog and the fault fence ask of a device's context: launches
//! watched for overruns (`crate::backend::launch_watch`), and whether a context is in a
//! sticky error state (`crate::device_faults`). A context in that state is never reset in
//! place: CUDA leaves the process "in an inconsistent state" and says it "must be terminated
//! and relaunched" (measured: after `cuDevicePrimaryCtxReset` the next
//! `cuDevicePrimaryCtxRetain` answers the same error), so the process holding it is replaced
//! (`crate::sandbox::shared`).

use super::result;
use super::CudaBackend;
use crate::backend::DeviceIndex;
use cudarc::driver::sys;

impl CudaBackend {
    /// Records an event after a launch on `stream` (the watchdog is on).
    pub(super) fn watch_launch(&self, stream: sys::CUstream, dev: DeviceIndex) {
        self.launch_watch.launched((stream as usize, dev), || record_after(stream));
    }

    /// Records an event after a stream wait on `stream` (the watchdog is on): not a kernel of
    /// the tenant's however long the application holds it, whether CUDA's own wait or our
    /// wait kernel (`wait_kernel.rs`).
    pub(super) fn watch_wait(&self, stream: sys::CUstream, dev: DeviceIndex) {
        self.launch_watch.waited((stream as usize, dev), || record_after(stream));
    }

    /// The devices whose oldest unfinished launch of some stream ran past `limit`.
    pub(super) fn launches_overrun(&self, limit: std::time::Duration) -> Vec<DeviceIndex> {
        use crate::backend::launch_watch::Reached;
        let query = |dev: DeviceIndex, event: super::Raw<sys::CUevent>| {
            if self.enter(dev).is_err() {
                return Reached::Failed;
            }
            // An event recorded by `watch_launch` in `dev`'s context, not destroyed.
            match result::event::query(event.0) {
                Ok(true) => Reached::Done,
                Ok(false) => Reached::Running,
                Err(_) => Reached::Failed,
            }
        };
        let destroy = |dev: DeviceIndex, event: super::Raw<sys::CUevent>| {
            if self.enter(dev).is_ok() {
                // A reached event of `dev`'s context, forgotten by the watch.
                let _ = result::event::destroy(event.0);
            }
        };
        self.launch_watch.overrun(limit, query, destroy)
    }

    /// See [`crate::backend::DeviceBackend::device_fault`]: in a context in a sticky error
    /// state every call answers the error, `cuMemGetInfo` too, without waiting for work.
    pub(super) fn probe_fault(&self, dev: DeviceIndex) -> Option<bool> {
        self.enter(dev).ok()?;
        match cudarc::driver::result::mem_get_info() {
            Ok(_) => Some(false),
            Err(e) => Some(crate::device_faults::is_sticky(super::error::map("cuMemGetInfo", e).hip_code())),
        }
    }
}

/// An event recorded on `stream` after the work just queued there (its context current).
fn record_after(stream: sys::CUstream) -> Result<super::Raw<sys::CUevent>, crate::backend::BackendError> {
    let event = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)?;
    if let Err(e) = result::event::record(event, stream) {
        // The event just created, used by nothing.
        let _ = result::event::destroy(event);
        return Err(crate::backend::BackendError::from(e));
    }
    Ok(super::Raw(event))
}
