//! What the kernel watchdog and the fault fence ask of a device's context: launches
//! watched for overruns (`crate::backend::launch_watch`), and whether a context is in a
//! sticky error state (`crate::device_faults`). A context in that state is never reset in
//! place: CUDA leaves the process "in an inconsistent state" and says it "must be terminated
//! and relaunched" (measured: after `cuDevicePrimaryCtxReset` the next
//! `cuDevicePrimaryCtxRetain` answers the same error), so the process holding it is replaced
//! (`crate::sandbox::shared`).

use super::error::Check;
use super::CudaBackend;
use crate::backend::DeviceIndex;
use cudarc::driver::sys;

impl CudaBackend {
    /// Records an event after a launch on `stream` (the watchdog is on).
    pub(super) fn watch_launch(&self, stream: sys::CUstream, dev: DeviceIndex) {
        self.launch_watch.launched((stream as usize, dev), || {
            let mut event = std::ptr::null_mut();
            // SAFETY: a valid out-pointer; the stream's context is current (just launched).
            unsafe { sys::cuEventCreate(&mut event, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32) }.check("cuEventCreate")?;
            // SAFETY: an event just created and a live stream of the current context.
            if let Err(e) = unsafe { sys::cuEventRecord(event, stream) }.check("cuEventRecord") {
                // SAFETY: the event just created, used by nothing.
                let _ = unsafe { sys::cuEventDestroy_v2(event) };
                return Err(e);
            }
            Ok(super::Raw(event))
        });
    }

    /// The devices whose oldest unfinished launch of some stream ran past `limit`.
    pub(super) fn launches_overrun(&self, limit: std::time::Duration) -> Vec<DeviceIndex> {
        use crate::backend::launch_watch::Reached;
        let query = |dev: DeviceIndex, event: super::Raw<sys::CUevent>| {
            if self.enter(dev).is_err() {
                return Reached::Failed;
            }
            // SAFETY: an event recorded by `watch_launch` in `dev`'s context, not destroyed.
            match unsafe { sys::cuEventQuery(event.0) } {
                sys::CUresult::CUDA_SUCCESS => Reached::Done,
                sys::CUresult::CUDA_ERROR_NOT_READY => Reached::Running,
                _ => Reached::Failed,
            }
        };
        let destroy = |dev: DeviceIndex, event: super::Raw<sys::CUevent>| {
            if self.enter(dev).is_ok() {
                // SAFETY: a reached event of `dev`'s context, forgotten by the watch.
                let _ = unsafe { sys::cuEventDestroy_v2(event.0) };
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
