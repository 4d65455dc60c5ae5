//! The kernel watchdog (`--max-kernel-ms N`, off by default): a kernel running longer than N
//! milliseconds ends its session with `hipErrorLaunchTimeOut`.
//!
//! A running kernel cannot be stopped from outside: host code runs on the stream's threads,
//! and a GPU kernel holds its context until it returns. So the watchdog works where ending
//! the kernel's *process* is possible and harms nobody else — a session process: a thread
//! there ([`start_in_session_process`]) sees the overrun, queues a final error frame for the
//! client (request id 0, which the client returns as its pending call's error), and ends the
//! process with [`EXIT_KERNEL_TIMEOUT`], which the worker logs and counts
//! ([`Metrics::kernel_timeout`](crate::metrics::Metrics::kernel_timeout)).
//!
//! Kernels are tracked only while the watchdog is on: [`kernel_running`] is one `OnceLock`
//! read when it is off.

use crate::backend::{hip_code, Backend};
use crate::device_faults::DeviceFaults;
use crate::metrics::Metrics;
use crate::session::LateReplies;
use proto_core::Status;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The largest `--max-kernel-ms` accepted: one day.
pub const MAX_KERNEL_MS_LIMIT: u64 = 24 * 60 * 60 * 1000;
/// Exit status of a session process the watchdog ended.
pub const EXIT_KERNEL_TIMEOUT: u8 = 4;
/// How often the watchdog looks at the running kernels, at most.
const MAX_POLL: Duration = Duration::from_millis(100);
/// How long the watchdog waits for the final error frame to be written before the process
/// ends anyway.
const FLUSH_GRACE: Duration = Duration::from_secs(2);

/// Checks a `--max-kernel-ms` value: 0 and values above [`MAX_KERNEL_MS_LIMIT`] are refused.
pub fn parse_limit(ms: u64) -> Result<Duration, String> {
    if ms == 0 || ms > MAX_KERNEL_MS_LIMIT {
        return Err(format!("--max-kernel-ms {ms} is outside 1..={MAX_KERNEL_MS_LIMIT} (leave the flag out to run kernels without a limit)"));
    }
    Ok(Duration::from_millis(ms))
}

/// The kernels running in this process, by launch number, with their start.
#[derive(Default)]
struct Running {
    next: AtomicU64,
    started: Mutex<HashMap<u64, Instant>>,
}

impl Running {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Instant>> {
        self.started.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How long the oldest running kernel has been running.
    fn oldest(&self, now: Instant) -> Option<Duration> {
        self.lock().values().map(|&t| now.saturating_duration_since(t)).max()
    }
}

/// Set once the watchdog runs in this process.
static RUNNING: OnceLock<Arc<Running>> = OnceLock::new();

/// Marks one kernel as running until dropped; created by the host backend's stream threads
/// around each launch.
pub struct KernelRunning {
    running: Arc<Running>,
    id: u64,
}

impl Drop for KernelRunning {
    fn drop(&mut self) {
        self.running.lock().remove(&self.id);
    }
}

/// A kernel starts now: `None` (and nothing recorded) while the watchdog is off.
pub fn kernel_running() -> Option<KernelRunning> {
    let running = Arc::clone(RUNNING.get()?);
    let id = running.next.fetch_add(1, Ordering::Relaxed);
    running.lock().insert(id, Instant::now());
    Some(KernelRunning { running, id })
}

/// The message of the final error frame.
pub fn timeout_message(limit: Duration) -> String {
    format!(
        "a kernel ran longer than the worker's limit of {} ms (--max-kernel-ms) and was stopped: the session has ended, its resources are freed; reconnect to go on",
        limit.as_millis()
    )
}

/// Starts the watchdog in a session process: when a kernel has run longer than `limit`,
/// queues the final error frame on `late` (the session's writer sends it), waits up to
/// [`FLUSH_GRACE`] for it to go out and ends the process with [`EXIT_KERNEL_TIMEOUT`].
/// A GPU backend's launches are watched too (`gpu`: its [`DeviceBackend::watch_launches`]
/// was turned on).
///
/// [`DeviceBackend::watch_launches`]: crate::backend::DeviceBackend::watch_launches
pub fn start_in_session_process(limit: Duration, late: Arc<LateReplies>, gpu: Option<Arc<dyn Backend>>) -> std::io::Result<()> {
    let running = Arc::clone(RUNNING.get_or_init(Arc::default));
    std::thread::Builder::new().name("hip-kernel-watchdog".into()).spawn(move || loop {
        std::thread::sleep(poll_interval(limit));
        let host_overrun = running.oldest(Instant::now()).is_some_and(|oldest| oldest > limit);
        let gpu_overrun = || gpu.as_ref().is_some_and(|backend| !backend.overrun_devices(limit).is_empty());
        if !host_overrun && !gpu_overrun() {
            continue;
        }
        tracing::warn!(limit_ms = limit.as_millis() as u64, "a kernel ran past --max-kernel-ms: ending the session");
        late.push_error(0, 0, Status::LAUNCH_TIME_OUT, &timeout_message(limit));
        let deadline = Instant::now() + FLUSH_GRACE;
        while !late.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        // The writer took the frame off the queue; give it a moment to finish writing it.
        std::thread::sleep(Duration::from_millis(50));
        std::process::exit(i32::from(EXIT_KERNEL_TIMEOUT));
    })?;
    Ok(())
}

fn poll_interval(limit: Duration) -> Duration {
    (limit / 4).clamp(Duration::from_millis(1), MAX_POLL)
}

/// The hook of a session process (`sandbox/child.rs`): starts the watchdog when the worker
/// passed a limit; without one, the process runs kernels unwatched.
pub fn start_for_session(max_kernel_ms: Option<u64>, session: &crate::session::Session) {
    let Some(limit) = max_kernel_ms.map(parse_limit) else { return };
    let backend = session.backend();
    let gpu = backend.watch_launches().then_some(backend);
    let started = limit.map_err(std::io::Error::other).and_then(|limit| start_in_session_process(limit, session.late_replies(), gpu));
    if let Err(e) = started {
        // Serving without the limit the operator asked for is not an option.
        tracing::error!(%e, "cannot start the kernel watchdog: ending the session");
        std::process::exit(i32::from(crate::sandbox::child::EXIT_SETUP_FAILED));
    }
}

/// Shared mode (every session of a device in one GPU context): a kernel past the limit
/// cannot be stopped without resetting that context, so the device goes through the fault
/// path ([`crate::device_faults`]): every session holding work on it gets
/// `hipErrorLaunchTimeOut` and the device is reset. Returns false (and starts nothing)
/// where the backend cannot watch its launches.
pub fn start_shared(backend: Arc<dyn Backend>, faults: Arc<DeviceFaults>, metrics: Arc<Metrics>, limit: Duration) -> std::io::Result<bool> {
    if !backend.watch_launches() {
        return Ok(false);
    }
    std::thread::Builder::new().name("hip-kernel-watchdog".into()).spawn(move || loop {
        std::thread::sleep(poll_interval(limit));
        for device in backend.overrun_devices(limit) {
            tracing::warn!(
                device,
                limit_ms = limit.as_millis() as u64,
                "a kernel ran past --max-kernel-ms on device {device}: resetting the device, which ends every session holding work on it"
            );
            metrics.kernel_timeout();
            faults.report(&*backend, &metrics, device, faults.generation(device), hip_code::LAUNCH_TIME_OUT, 0);
        }
    })?;
    Ok(true)
}

/// The watchdog of a shared session process (`--isolation shared` on a GPU backend,
/// [`crate::sandbox::shared`]): a kernel past the limit cannot be stopped without ending the
/// context every session in the process shares, so the process ends at once with
/// [`EXIT_KERNEL_TIMEOUT`]: the worker tells each of its sessions (`hipErrorLaunchTimeOut`)
/// and serves new sessions from a new process. It ends with `_exit`: the driver's exit
/// handlers would wait for the kernel that never ends; the kernel driver frees the context
/// with the process.
pub fn start_in_shared_process(limit: Duration, backend: Arc<dyn Backend>) -> std::io::Result<()> {
    if !backend.watch_launches() {
        tracing::info!("--max-kernel-ms: the {} backend runs no kernels here", backend.name());
        return Ok(());
    }
    std::thread::Builder::new().name("hip-kernel-watchdog".into()).spawn(move || loop {
        std::thread::sleep(poll_interval(limit));
        let overrun = backend.overrun_devices(limit);
        if overrun.is_empty() {
            continue;
        }
        tracing::warn!(
            devices = ?overrun,
            limit_ms = limit.as_millis() as u64,
            "a kernel ran past --max-kernel-ms: ending the shared session process, and with it every session in it"
        );
        // SAFETY: _exit ends the process without running exit handlers; nothing here
        // depends on them (the worker reads only the status).
        unsafe { libc::_exit(i32::from(EXIT_KERNEL_TIMEOUT)) };
    })?;
    Ok(())
}

/// The hook of the worker's side (where a session process's exit status is read): whether
/// the watchdog ended it; if so, logged and counted.
pub fn ended_by_watchdog(status: &std::process::ExitStatus, metrics: &crate::metrics::Metrics, session: u64) -> bool {
    if status.code() != Some(i32::from(EXIT_KERNEL_TIMEOUT)) {
        return false;
    }
    tracing::warn!(session, "a kernel ran past --max-kernel-ms: its session process was ended and the client told (hipErrorLaunchTimeOut)");
    metrics.kernel_timeout();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_checked() {
        assert!(parse_limit(0).is_err());
        assert!(parse_limit(MAX_KERNEL_MS_LIMIT + 1).is_err());
        assert_eq!(parse_limit(500), Ok(Duration::from_millis(500)));
    }

    #[test]
    fn the_oldest_running_kernel_is_what_counts() {
        let running = Running::default();
        let t0 = Instant::now();
        running.lock().insert(1, t0);
        running.lock().insert(2, t0 + Duration::from_millis(30));
        assert_eq!(running.oldest(t0 + Duration::from_millis(100)), Some(Duration::from_millis(100)));
        running.lock().remove(&1);
        assert_eq!(running.oldest(t0 + Duration::from_millis(100)), Some(Duration::from_millis(70)));
        running.lock().remove(&2);
        assert_eq!(running.oldest(t0), None);
    }
}
