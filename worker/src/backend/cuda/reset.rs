//! Resetting a device's primary context after a sticky fault (`crate::device_faults`): the
//! backend forgets everything of the device first — streams, events, allocations, modules,
//! device logs, cuBLAS handles and the pinned staging buffers allocated in that context —
//! then `cuDevicePrimaryCtxReset` destroys them all and the context starts fresh on next use.
//! Nothing is destroyed one by one: in a context in a sticky error state every call fails.

use super::error::Check;
use super::{lock, CudaBackend, Pinned};
use crate::backend::{BackendError, DeviceIndex};
use cudarc::driver::sys;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Contexts reset so far, so a staging buffer of a reset context that comes back from a
/// copy in flight is dropped instead of pooled.
#[derive(Default)]
pub(super) struct ResetLog {
    resets: AtomicU64,
    /// Context → the reset count right after its latest reset.
    contexts: Mutex<HashMap<usize, u64>>,
}

impl ResetLog {
    /// The current context and reset count, for a pinned buffer allocated now.
    pub(super) fn stamp(&self) -> (usize, u64) {
        let mut ctx = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        let _ = unsafe { sys::cuCtxGetCurrent(&mut ctx) };
        (ctx as usize, self.resets.load(Ordering::Acquire))
    }

    /// Whether `p` was allocated in a context reset since: its memory is gone.
    pub(super) fn outlived(&self, p: &Pinned) -> bool {
        lock(&self.contexts).get(&p.ctx).is_some_and(|&reset| p.born < reset)
    }

    fn record(&self, ctx: usize) {
        let count = self.resets.fetch_add(1, Ordering::AcqRel) + 1;
        lock(&self.contexts).insert(ctx, count);
    }
}

impl CudaBackend {
    /// See [`crate::backend::DeviceBackend::reset_device`].
    pub(super) fn reset(&self, dev: DeviceIndex) -> Result<(), BackendError> {
        let device = self.device(dev)?;
        let ctx = device.ctx.0 as usize;
        let streams: Vec<u64> = {
            let mut streams = lock(&self.streams);
            let gone: Vec<u64> = streams.iter().filter(|(_, e)| e.device == dev).map(|(&h, _)| h).collect();
            for h in &gone {
                streams.remove(h);
            }
            gone
        };
        {
            let mut outputs = lock(&self.outputs);
            for &stream in &streams {
                outputs.forget(stream);
            }
        }
        lock(&self.events).retain(|_, e| e.device != dev);
        let freed: Vec<u64> = {
            let mut allocations = lock(&self.allocations);
            let gone: Vec<u64> = allocations.iter().filter(|(_, (_, d))| *d == dev).map(|(&p, _)| p).collect();
            for p in &gone {
                allocations.remove(p);
            }
            gone
        };
        {
            let mut pool = lock(&self.pool_allocations);
            for p in &freed {
                pool.remove(p);
            }
        }
        lock(&self.globals).retain(|_, (_, d)| *d != dev);
        let modules: Vec<u64> = {
            let mut tables = lock(&self.modules);
            let gone: Vec<u64> = tables.modules.iter().filter(|(_, m)| m.device == dev).map(|(&h, _)| h).collect();
            for h in &gone {
                tables.modules.remove(h);
            }
            tables.functions.retain(|_, f| !gone.contains(&f.module));
            gone
        };
        {
            let mut logs = lock(&self.logs);
            for module in modules {
                logs.remove_module(module, None);
            }
        }
        lock(&self.log_streams).remove(&dev);
        self.launch_watch.forget_device(dev);
        super::blas::forget_device(dev);
        // Idle staging buffers of this context go with it (in-flight ones when they return).
        self.resets.record(ctx);
        lock(&self.staging).retain(|p| !self.resets.outlived(p));
        lock(&self.reserved).retain(|p| !self.resets.outlived(p));
        // SAFETY: a device this backend retained; nothing of its context is used any more
        // (the sessions that held work there are fenced).
        unsafe { sys::cuDevicePrimaryCtxReset_v2(device.dev) }.check("cuDevicePrimaryCtxReset")?;
        super::forget_current_context();
        // The reset keeps our retain and the handle; retaining once more brings the context
        // up again now (not inside the next session's first call), and says if the handle
        // moved, which the backend could not follow.
        // SAFETY: a device of this backend; the extra retain is released just below.
        let again =
            unsafe { cudarc::driver::result::primary_ctx::retain(device.dev) }.map_err(|e| super::error::map("cuDevicePrimaryCtxRetain", e))?;
        // SAFETY: releases the retain just made; the backend's own stays.
        let _ = unsafe { cudarc::driver::result::primary_ctx::release(device.dev) };
        if again != device.ctx.0 {
            return Err(BackendError::Unknown(format!("the primary context of device {dev} has a new handle after its reset: restart the worker")));
        }
        Ok(())
    }

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
