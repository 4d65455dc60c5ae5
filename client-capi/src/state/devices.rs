//! What the client knows about devices: the worker's device count and properties (fixed for
//! the process, so fetched once and cached) and each thread's current device (`hipSetDevice`,
//! which never crosses the network).

use crate::abi::HipError;
use crate::remote::with_conn;
use client_core::CallError;
use proto_core::wire;
use proto_core::{calls, Calls};
use std::cell::Cell;
use std::ffi::{c_int, c_uint};

thread_local! {
    /// Whether `hipSetDevice` ran on this thread (then `hipSetValidDevices` changes nothing).
    static DEVICE_SET: Cell<bool> = const { Cell::new(false) };
}

/// The calling thread's current device (`hipSetDevice`); never crosses the network.
pub fn current_device() -> u32 {
    // Kept by the connection layer: with several workers, calls go to this device's.
    crate::remote::thread_device()
}

/// Sets the calling thread's current device (already validated): `hipSetDevice`.
pub fn set_current_device(dev: u32) {
    crate::remote::set_thread_device(dev);
    DEVICE_SET.with(|s| s.set(true));
}

/// Runs `f` with `dev` (already validated) as the calling thread's current device, then
/// restores the previous one as it was (multi-device launches resolve each kernel on its
/// stream's device this way).
pub fn with_current_device<R>(dev: u32, f: impl FnOnce() -> R) -> R {
    let (old, was_set) = (current_device(), DEVICE_SET.with(|s| s.get()));
    crate::remote::set_thread_device(dev);
    let out = crate::remote::on_device(dev, f);
    crate::remote::set_thread_device(old);
    DEVICE_SET.with(|s| s.set(was_set));
    out
}

/// Makes `dev` (already validated) the current device unless `hipSetDevice` chose one on this
/// thread: `hipSetValidDevices`, as ROCm does it.
pub fn prefer_device(dev: u32) {
    if !DEVICE_SET.with(|s| s.get()) {
        crate::remote::set_thread_device(dev);
    }
}

/// Number of devices the worker exposes (cached after the first successful query).
pub fn device_count() -> Result<u32, CallError> {
    if let Some(n) = crate::remote::known_device_count() {
        return Ok(n);
    }
    let n = if crate::remote::worker_count() > 1 {
        // The sum over the workers of a device list.
        crate::remote::device_count()?
    } else {
        // Device 0's properties come in the same round trip: the first launch checks its block
        // size against them, and most programs ask for them anyway.
        let (n, first) = with_conn(|c| {
            c.call_pair::<calls::GetDeviceCount, calls::GetDeviceProperties, _, _>(wire::Empty {}, wire::DeviceRef { device: 0 }, |d| d.count, |p| p)
        })?;
        if let (true, Ok(props)) = (n > 0, first) {
            remember_properties(0, props);
        }
        n
    };
    Ok(crate::remote::keep_device_count(n))
}

/// Caches `props` of `device` as the process sees them; returns them so.
fn remember_properties(device: u32, mut props: wire::DeviceProperties) -> wire::DeviceProperties {
    // Managed and mapped host memory are the client's coherence engine, whatever the worker's
    // device does: available, but the CPU may not touch managed memory while device work
    // runs (it becomes coherent at synchronisation; docs/MANAGED_MEMORY.md).
    props.managed_memory = true;
    props.can_map_host_memory = true;
    props.concurrent_managed_access = false;
    props.pageable_memory_access = false;
    // Major and minor as ROCm means them unless the user chose otherwise (`config`).
    (props.major, props.minor) = crate::remote::config().compute_capability.presented(props.arch_name.as_str(), (props.major, props.minor));
    if let Some(published) = crate::remote::published_if_known(device) {
        published.devices().remember_properties(device, props.clone());
    }
    props
}

/// Validates a device ordinal against the worker's count.
pub fn check_device(device: c_int) -> Result<u32, CallError> {
    let count = device_count()?;
    match u32::try_from(device) {
        Ok(d) if d < count => Ok(d),
        _ => Err(CallError::new(HipError::INVALID_DEVICE, format!("device {device} out of range (the workers have {count})"))),
    }
}

/// Properties of `device` (cached).
pub fn properties(device: u32) -> Result<wire::DeviceProperties, CallError> {
    if let Some(p) = crate::remote::published_if_known(device).and_then(|p| p.devices().properties(device).cloned()) {
        return Ok(p);
    }
    let props = crate::remote::on_device(device, || with_conn(|c| c.get_device_properties(wire::DeviceRef { device })))?;
    Ok(remember_properties(device, props))
}

/// What every launch checks against the device.
#[derive(Clone, Copy)]
pub struct LaunchLimits {
    /// `maxThreadsPerBlock`.
    pub max_threads_per_block: u32,
    /// `sharedMemPerBlock`.
    pub shared_mem_per_block: u64,
}

/// [`LaunchLimits`] of `device`, from a per-thread cache: cloning the whole cached property
/// set per launch showed in the launch rate.
pub fn launch_limits(device: u32) -> Result<LaunchLimits, CallError> {
    thread_local! {
        static CACHED: Cell<Option<(u32, LaunchLimits)>> = const { Cell::new(None) };
    }
    if let Some((d, limits)) = CACHED.with(|c| c.get()) {
        if d == device {
            return Ok(limits);
        }
    }
    let props = properties(device)?;
    let limits = LaunchLimits { max_threads_per_block: props.max_threads_per_block, shared_mem_per_block: props.shared_mem_per_block };
    CACHED.with(|c| c.set(Some((device, limits))));
    Ok(limits)
}

/// `device`'s scheduling flag, as ROCm keeps it on its device object (every thread sees a
/// device's flag); a device starts with `hipDeviceScheduleSpin`, as in ROCm. Opens nothing.
pub fn schedule_flag(device: u32) -> c_uint {
    crate::remote::published_if_known(device).and_then(|p| p.devices().schedule(device)).unwrap_or(crate::abi::hipDeviceScheduleSpin)
}

/// Sets `device`'s scheduling flag (`hipSetDeviceFlags`; the device list is known by then).
pub fn set_schedule_flag(device: u32, flag: c_uint) -> Result<(), CallError> {
    crate::remote::published_for_device(device)?.devices().set_schedule(device, flag);
    Ok(())
}

/// Whether `device`'s scheduling flag is `hipDeviceScheduleBlockingSync`: its synchronizing
/// calls block at once rather than spin.
pub fn blocking_sync(device: u32) -> bool {
    schedule_flag(device) == crate::abi::hipDeviceScheduleBlockingSync
}
