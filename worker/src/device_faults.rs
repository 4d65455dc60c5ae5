//! Sticky device faults where sessions share a device's context, and the device
//! "generation" that fences them.
//!
//! A kernel that writes through a wild pointer (or asserts, or runs into a watchdog) leaves
//! the GPU context it ran in unusable: CUDA answers every later call in that context with the
//! same error, and HIP does the same for the process; neither can repair it in that process
//! ("the process must be terminated and relaunched", CUDA driver API). With
//! `--isolation shared` every session of the worker runs in one shared session process
//! ([`crate::sandbox::shared`]), so:
//!
//! 1. The session that meets a sticky error reports it here ([`DeviceFaults::report`]) for
//!    each device it holds work on whose context the backend finds broken
//!    ([`DeviceBackend::device_fault`]; a sticky code from a context that stayed usable, such
//!    as the cuda backend's device-log asserts, changes nothing): the first report of a
//!    generation logs one warning (device, code, session), tells the worker through the
//!    process's hook ([`DeviceFaults::replace_process_on_fault`]) — the worker then hands
//!    new sessions to a fresh process — and moves the device to its next generation. (Where
//!    no hook is set, the backend's [`DeviceBackend::reset_device`] runs instead: in place
//!    only for the host backend's injected test faults, a no-op for GPU backends.)
//! 2. Every session that held anything on the device before the fault is fenced for it: it
//!    answers the sticky code to all its later calls, as HIP does for a process, and forgets
//!    its handles of that device without handing them to the backend.
//! 3. Sessions that hold nothing on the device and sessions of other devices are served
//!    normally (new sessions go to the new process).
//!
//! [`DeviceBackend::reset_device`]: crate::backend::DeviceBackend::reset_device
//! [`DeviceBackend::device_fault`]: crate::backend::DeviceBackend::device_fault

use crate::backend::{hip_code, Backend, DeviceIndex};
use crate::metrics::Metrics;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The `hipError_t` values after which a device's context is unusable (CUDA's "sticky"
/// errors, which the cuda backend reports under these HIP codes: 714–718 as 700 or 719, see
/// `backend/cuda/error.rs`; clr records a queue error for the whole process).
pub const STICKY_CODES: [i32; 4] = [hip_code::ILLEGAL_ADDRESS, hip_code::LAUNCH_TIME_OUT, hip_code::ASSERT, hip_code::LAUNCH_FAILURE];

/// Whether `code` leaves the device's context unusable.
pub fn is_sticky(code: i32) -> bool {
    STICKY_CODES.contains(&code)
}

/// A fault that ended a device generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// The sticky `hipError_t`.
    pub code: i32,
    /// The session that met it first.
    pub session: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct DeviceRecord {
    generation: u64,
    /// The fault that ended the previous generation.
    last_fault: Option<Fault>,
}

/// What a shared session process tells the worker about a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultEvent {
    /// The device's first fault of a generation: its context is poisoned (the worker serves
    /// new sessions from a fresh process).
    Poisoned(Fault),
    /// Session `0` lost its work on the device to the fault (counted in the worker's metrics).
    Fenced(u64),
}

/// Where a shared session process sends its [`FaultEvent`]s instead of resetting a device
/// in place.
pub type PoisonHook = Box<dyn Fn(DeviceIndex, FaultEvent) + Send + Sync>;

/// Every device's generation, shared by the sessions of one backend.
#[derive(Default)]
pub struct DeviceFaults {
    devices: Mutex<HashMap<DeviceIndex, DeviceRecord>>,
    /// Resets so far on any device: a session compares it with the value it last saw, so
    /// checking for a reset costs one atomic load per request.
    resets: AtomicU64,
    /// Set in a shared session process ([`crate::sandbox::shared`]): a GPU context in a
    /// sticky state cannot be reset in the process that holds it (CUDA: "the process must be
    /// terminated and relaunched"), so the process is replaced instead.
    poisoned: std::sync::OnceLock<PoisonHook>,
}

impl std::fmt::Debug for DeviceFaults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceFaults").field("resets", &self.resets()).field("replaced_by_process", &self.poisoned.get().is_some()).finish()
    }
}

impl DeviceFaults {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<DeviceIndex, DeviceRecord>> {
        self.devices.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// From now on a device's first fault of a generation calls `hook` instead of resetting
    /// the device in place. False if a hook was set already.
    pub fn replace_process_on_fault(&self, hook: PoisonHook) -> bool {
        self.poisoned.set(hook).is_ok()
    }

    /// Session `session` was fenced for `device`: told to the process's hook, if any.
    pub fn note_fenced(&self, device: DeviceIndex, session: u64) {
        if let Some(hook) = self.poisoned.get() {
            hook(device, FaultEvent::Fenced(session));
        }
    }

    /// Resets on any device so far.
    pub fn resets(&self) -> u64 {
        self.resets.load(Ordering::Acquire)
    }

    /// The current generation of `device` (0 until its first reset).
    pub fn generation(&self, device: DeviceIndex) -> u64 {
        self.lock().get(&device).map_or(0, |r| r.generation)
    }

    /// The generations of every device reset at least once.
    pub fn generations(&self) -> HashMap<DeviceIndex, u64> {
        self.lock().iter().map(|(&d, r)| (d, r.generation)).collect()
    }

    /// The fault that ended the latest generation of `device`, if it was ever reset.
    pub fn last_fault(&self, device: DeviceIndex) -> Option<Fault> {
        self.lock().get(&device).and_then(|r| r.last_fault)
    }

    /// Session `session`, which last saw `device` at `seen_generation`, met sticky `code` on
    /// it. The first report of a generation tells the process's hook (or resets the device in
    /// place, where that is possible), under the lock, so later reporters wait for it, and
    /// returns that fault; a later one returns the fault that already ended the generation.
    pub fn report(&self, backend: &dyn Backend, metrics: &Metrics, device: DeviceIndex, seen_generation: u64, code: i32, session: u64) -> Fault {
        let mut devices = self.lock();
        let record = devices.entry(device).or_default();
        if record.generation != seen_generation {
            return record.last_fault.unwrap_or(Fault { code, session });
        }
        let fault = Fault { code, session };
        let name = proto_core::hip_error::name(code).to_string_lossy();
        match self.poisoned.get() {
            // The worker logs the warning (it knows which process, and what it does next).
            Some(_) => {
                tracing::info!(device, code, error = %name, session, "device fault: session {session} met {name} ({code}) on device {device}; telling the worker")
            }
            None => tracing::warn!(
                device,
                code,
                error = %name,
                session,
                "device fault: session {session} met {name} ({code}) on device {device}; every session holding work on it gets the error"
            ),
        }
        match self.poisoned.get() {
            Some(poisoned) => poisoned(device, FaultEvent::Poisoned(fault)),
            None => {
                if let Err(e) = backend.reset_device(device) {
                    tracing::error!(device, %e, "resetting the device after a fault failed: new sessions on it may fail too; restart the worker");
                }
            }
        }
        record.generation += 1;
        record.last_fault = Some(fault);
        self.resets.fetch_add(1, Ordering::AcqRel);
        metrics.device_reset(device);
        fault
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{HostBackend, HostConfig};

    #[test]
    fn the_first_report_of_a_generation_resets_once() {
        let backend = HostBackend::new(HostConfig { devices: 2, memory_per_device: 1 << 20, ..HostConfig::default() });
        let (faults, metrics) = (DeviceFaults::default(), Metrics::default());
        let first = faults.report(&backend, &metrics, 1, 0, hip_code::ILLEGAL_ADDRESS, 7);
        assert_eq!(first, Fault { code: hip_code::ILLEGAL_ADDRESS, session: 7 });
        // A second session that met the same fault at the same generation: no second reset.
        let again = faults.report(&backend, &metrics, 1, 0, hip_code::LAUNCH_FAILURE, 8);
        assert_eq!(again, first);
        assert_eq!((faults.generation(1), faults.generation(0), faults.resets()), (1, 0, 1));
        assert_eq!(metrics.device_resets(1), 1);
        assert_eq!(metrics.device_resets(0), 0);
        assert!(is_sticky(700) && is_sticky(719) && is_sticky(710) && is_sticky(702));
        assert!(!is_sticky(1) && !is_sticky(701) && !is_sticky(2));
    }
}
