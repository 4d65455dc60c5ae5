//! Device time per session and per tenant (`docs/ISOLATION.md`, "Fair sharing and
//! accounting").
//!
//! Each session owns a [`DeviceTime`]; the session hands it to the backend with every stream
//! it creates ([`StreamBackend::account_stream`]), and the backend adds the time that
//! stream's work kept the device busy: the host backend times each copy, memset and kernel
//! on the thread that runs it; the GPU backends time batches of work between two events.
//! What a session adds goes on at once to its tenant's [`TenantUsage`] in the worker's
//! metrics, or — in a session process, which has no metrics of its own — to the process's
//! row of the shared usage table ([`SharedUsage`]), which the worker reads and adds to the
//! tenant when it renders the metrics and when the process ends.
//!
//! Adding is two relaxed atomic adds; nothing here takes a lock on the work path.
//!
//! **Pacing.** Session processes do not share a scheduler: each has its own stream threads,
//! and the operating system shares the CPU (the host backend's "device") among them by
//! thread, which let equal clients' throughputs drift apart by 2× on a small machine. So
//! before each piece of device work a session process compares its virtual device time (the
//! CPU time its device work took) with
//! the least of the other session processes that worked within [`PACE_ACTIVE_WINDOW`]; more
//! than [`PACE_SLACK`] ahead, it sleeps [`PACE_STEP`] at a time (at most [`MAX_PACE_WAIT`]
//! per operation) and lets the others catch up. A session that was idle starts again at the
//! least virtual time of those working, so it gets no credit for its idle time (as the
//! kernel's fair scheduler places a waking task). The wait is bounded so that a session
//! process misreporting its time can only slow the others by that much per operation.
//!
//! **Pacing queued GPU work in shared serving.** Sessions served by one shared session process
//! launch into one GPU context; the driver serialises their launches behind a lock that is
//! not fair, and small kernels (where launching is the work) drifted 1.1–1.2× apart between
//! equal clients. There each session's row also paces the GPU work it queues: every operation
//! adds [`QUEUED_OP_VIRTUAL_COST`] to its virtual time and waits, as above, while the session is
//! ahead. Session processes with a context each are not paced so: the driver time-slices
//! their contexts evenly.
//!
//! [`StreamBackend::account_stream`]: crate::backend::StreamBackend::account_stream

use crate::backend::host::usage::{monotonic_nanos, process_cpu_nanos, SharedUsage};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// The `tenant` label of sessions that did not authenticate (a worker without tokens).
pub const ANONYMOUS_TENANT: &str = "anonymous";

/// Most tenants the metrics keep apart; later ones are counted under [`OTHER_TENANTS`].
/// Tenants come from the operator's token file, so this only bounds a file with very many.
pub const MAX_ACCOUNTED_TENANTS: usize = 4096;
/// The `tenant` label of the tenants past [`MAX_ACCOUNTED_TENANTS`].
pub const OTHER_TENANTS: &str = "other";

/// How recently another session process must have worked to count as competing.
pub const PACE_ACTIVE_WINDOW: Duration = Duration::from_millis(50);
/// How far a session process may run ahead of the least-served competing one.
pub const PACE_SLACK: Duration = Duration::from_millis(3);
/// One sleep of a session process that is ahead.
pub const PACE_STEP: Duration = Duration::from_micros(100);
/// How long a session process behind the others may leave the device unused, while another
/// waits for it, before it forfeits its share.
pub const PACE_FORFEIT: Duration = Duration::from_millis(2);
/// The longest one operation waits for the others to catch up.
pub const MAX_PACE_WAIT: Duration = Duration::from_millis(5);

/// Virtual time one operation queued on a GPU stream adds to its session in shared serving
/// (about what launching it costs the context's submission path on an H200).
pub const QUEUED_OP_VIRTUAL_COST: Duration = Duration::from_micros(2);

/// The variable that turns device-time accounting (and pacing) off: `HIP_WORKER_DEVICE_TIME=off`,
/// for measuring what it costs.
pub const DEVICE_TIME_VAR: &str = "HIP_WORKER_DEVICE_TIME";

/// Whether sessions account their streams' device time (unless [`DEVICE_TIME_VAR`] is `off`).
pub fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var(DEVICE_TIME_VAR).map_or(true, |v| v != "off"))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Device busy time of one session.
#[derive(Default)]
pub struct DeviceTime {
    nanos: AtomicU64,
    tenant: OnceLock<Arc<TenantUsage>>,
    shared_row: OnceLock<(Arc<SharedUsage>, usize)>,
    /// Whether queued GPU work is paced (sessions sharing one context; see the module).
    paces_queued_work: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for DeviceTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceTime").field("nanos", &self.nanos()).finish_non_exhaustive()
    }
}

impl DeviceTime {
    /// Adds `busy` to the session, and to its tenant or its shared-table row.
    pub fn add(&self, busy: Duration) {
        let nanos = busy.as_nanos().min(u128::from(u64::MAX)) as u64;
        self.add_nanos(nanos);
    }

    /// [`add`](Self::add) in nanoseconds.
    pub fn add_nanos(&self, nanos: u64) {
        if nanos == 0 {
            return;
        }
        self.nanos.fetch_add(nanos, Relaxed);
        if let Some(tenant) = self.tenant.get() {
            tenant.device_nanos.fetch_add(nanos, Relaxed);
        }
        if let Some((usage, row)) = self.shared_row.get() {
            usage.add_busy(*row, nanos);
            usage.mark_active(*row, monotonic_nanos(), None);
        }
    }

    /// Runs `work` (device work of this session): paces it, then adds its duration, and in a
    /// session process the CPU time it took to the virtual time pacing compares.
    pub fn run<T>(&self, work: impl FnOnce() -> T) -> T {
        let Some((usage, row)) = self.shared_row.get() else {
            let started = std::time::Instant::now();
            let outcome = work();
            self.add(started.elapsed());
            return outcome;
        };
        self.pace();
        let (started, cpu) = (std::time::Instant::now(), process_cpu_nanos());
        let outcome = work();
        // CPU time, not wall time: a kernel preempted by other processes' threads did not use
        // the host's "device" meanwhile.
        usage.add_virtual(*row, process_cpu_nanos().saturating_sub(cpu));
        self.add(started.elapsed());
        outcome
    }

    /// Waits while this session process is ahead of the others (see the module's "Pacing").
    fn pace(&self) {
        let Some((usage, row)) = self.shared_row.get() else { return };
        let (slack, window) = (PACE_SLACK.as_nanos() as u64, PACE_ACTIVE_WINDOW.as_nanos() as u64);
        let started = monotonic_nanos();
        let (_, my_active_at) = usage.pace_state(*row);
        let mut least = usage.least_active_virtual(*row, started.saturating_sub(window));
        if my_active_at < started.saturating_sub(window) {
            // Back from idle: level with those working, no credit for the idle time.
            usage.mark_active(*row, started, least.map(|(_, v)| v));
        }
        let mut now = started;
        // The row waited for, its virtual time, and since when it has not moved.
        let mut watched: Option<(usize, u64, u64)> = None;
        while let Some((behind, floor)) = least {
            let (mine, _) = usage.pace_state(*row);
            if mine <= floor.saturating_add(slack) || now - started >= MAX_PACE_WAIT.as_nanos() as u64 {
                break;
            }
            match watched {
                Some((r, v, since)) if r == behind && v == floor => {
                    if now - since >= PACE_FORFEIT.as_nanos() as u64 {
                        // It did not use the device while this one waited: it is not
                        // competing now, and forfeits the share it left.
                        usage.raise_virtual(behind, mine - slack);
                    }
                }
                _ => watched = Some((behind, floor, now)),
            }
            std::thread::sleep(PACE_STEP);
            now = monotonic_nanos();
            least = usage.least_active_virtual(*row, now.saturating_sub(window));
        }
        usage.mark_active(*row, now, None);
    }

    /// Paces this session's queued GPU work from now on (a session of the shared session
    /// process, whose sessions launch into one context).
    pub fn pace_queued_work(&self) {
        self.paces_queued_work.store(true, Relaxed);
    }

    /// Before one operation is queued on a GPU stream of this session: waits while the
    /// session is ahead of the others sharing its context, then adds the operation's
    /// [`QUEUED_OP_VIRTUAL_COST`]. Nothing unless [`pace_queued_work`](Self::pace_queued_work).
    pub fn pace_queued_op(&self) {
        if !self.paces_queued_work.load(Relaxed) {
            return;
        }
        let Some((usage, row)) = self.shared_row.get() else { return };
        self.pace();
        usage.add_virtual(*row, QUEUED_OP_VIRTUAL_COST.as_nanos() as u64);
    }

    /// Device time of the session so far, nanoseconds.
    pub fn nanos(&self) -> u64 {
        self.nanos.load(Relaxed)
    }

    /// Charges this session's time to `tenant` from now on (what was added before is added
    /// now). Once; later calls are ignored.
    pub fn charge(&self, tenant: Arc<TenantUsage>) {
        let before = self.nanos();
        if self.tenant.set(Arc::clone(&tenant)).is_ok() {
            tenant.device_nanos.fetch_add(before, Relaxed);
        }
    }

    /// Reports this session's time into row `row` of `usage` from now on (a session
    /// process's row; what was added before is added now). Once.
    pub fn report_to(&self, usage: Arc<SharedUsage>, row: usize) {
        let before = self.nanos();
        if self.shared_row.set((Arc::clone(&usage), row)).is_ok() {
            usage.add_busy(row, before);
        }
    }

    /// Whether a tenant or a shared row receives this session's time.
    pub fn is_charged(&self) -> bool {
        self.tenant.get().is_some() || self.shared_row.get().is_some()
    }
}

/// What one tenant's sessions used.
#[derive(Default)]
pub struct TenantUsage {
    /// Device time of its sessions in this process, and of its session processes that ended.
    device_nanos: AtomicU64,
    /// Rows of the shared usage table its live session processes report into.
    live_rows: Mutex<Vec<(Arc<SharedUsage>, usize)>>,
}

impl TenantUsage {
    /// Device time so far, nanoseconds: sessions served here, session processes that ended,
    /// and what the live ones reported.
    pub fn device_nanos(&self) -> u64 {
        let rows = lock(&self.live_rows);
        let live: u64 = rows.iter().map(|(usage, row)| usage.busy_nanos(*row)).sum();
        self.device_nanos.load(Relaxed).saturating_add(live)
    }

    /// Counts row `row` of `usage` (a session process of this tenant) until the guard drops;
    /// the guard then takes what the row reported into the tenant's total. Drop it after the
    /// process has ended.
    pub fn attach_row(self: &Arc<Self>, usage: Arc<SharedUsage>, row: usize) -> AttachedRow {
        lock(&self.live_rows).push((Arc::clone(&usage), row));
        AttachedRow { tenant: Arc::clone(self), usage, row }
    }
}

/// A session process's row counted for its tenant; see [`TenantUsage::attach_row`].
pub struct AttachedRow {
    tenant: Arc<TenantUsage>,
    usage: Arc<SharedUsage>,
    row: usize,
}

impl Drop for AttachedRow {
    fn drop(&mut self) {
        // Under the lock a render holds, so the row's time is never counted twice or missed.
        let mut rows = lock(&self.tenant.live_rows);
        if let Some(at) = rows.iter().position(|(usage, row)| Arc::ptr_eq(usage, &self.usage) && *row == self.row) {
            rows.swap_remove(at);
        }
        let busy = self.usage.take_busy(self.row);
        self.tenant.device_nanos.fetch_add(busy, Relaxed);
    }
}

/// Every tenant the worker has served, by name.
#[derive(Default)]
pub struct Tenants {
    by_name: Mutex<BTreeMap<String, Arc<TenantUsage>>>,
}

impl Tenants {
    /// The usage of `tenant` (`None`: [`ANONYMOUS_TENANT`]).
    pub fn get(&self, tenant: Option<&str>) -> Arc<TenantUsage> {
        let name = tenant.unwrap_or(ANONYMOUS_TENANT);
        let mut by_name = lock(&self.by_name);
        if let Some(usage) = by_name.get(name) {
            return Arc::clone(usage);
        }
        let name = if by_name.len() >= MAX_ACCOUNTED_TENANTS { OTHER_TENANTS } else { name };
        Arc::clone(by_name.entry(name.to_owned()).or_default())
    }

    /// Each tenant's device time so far, seconds, by name.
    pub fn device_seconds(&self) -> Vec<(String, f64)> {
        let tenants: Vec<(String, Arc<TenantUsage>)> = lock(&self.by_name).iter().map(|(n, u)| (n.clone(), Arc::clone(u))).collect();
        tenants.into_iter().map(|(name, usage)| (name, usage.device_nanos() as f64 * 1e-9)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sessions_time_reaches_its_tenant_including_what_came_before_charging() {
        let tenants = Tenants::default();
        let session = DeviceTime::default();
        session.add(Duration::from_millis(3));
        session.charge(tenants.get(Some("a")));
        session.add(Duration::from_millis(4));
        session.charge(tenants.get(Some("b")));
        assert_eq!(session.nanos(), 7_000_000);
        assert_eq!(tenants.get(Some("a")).device_nanos(), 7_000_000);
        assert_eq!(tenants.get(Some("b")).device_nanos(), 0, "charged once");
        assert_eq!(tenants.get(None).device_nanos(), 0);
        let seconds = tenants.device_seconds();
        assert_eq!(seconds.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["a", ANONYMOUS_TENANT, "b"]);
    }

    #[test]
    fn a_session_process_row_counts_while_live_and_after_it_ended() {
        let usage = Arc::new(SharedUsage::create(1, 4).unwrap());
        let tenants = Tenants::default();
        let tenant = tenants.get(Some("t"));
        let attached = tenant.attach_row(Arc::clone(&usage), 2);
        // The session process's side.
        let child = DeviceTime::default();
        child.add(Duration::from_micros(5));
        child.report_to(Arc::clone(&usage), 2);
        child.add(Duration::from_micros(6));
        assert_eq!(tenant.device_nanos(), 11_000);
        drop(attached);
        assert_eq!(tenant.device_nanos(), 11_000, "kept after the process ended");
        assert_eq!(usage.busy_nanos(2), 0, "the row starts at zero for the next process");
    }

    #[test]
    fn a_session_ahead_waits_for_a_competing_one_and_an_idle_one_forfeits() {
        let usage = Arc::new(SharedUsage::create(1, 8).unwrap());
        for row in [1, 2] {
            usage.note_row_used(row);
        }
        let (ahead, behind) = (DeviceTime::default(), DeviceTime::default());
        ahead.report_to(Arc::clone(&usage), 1);
        behind.report_to(Arc::clone(&usage), 2);
        // Nobody else works: no wait.
        let started = std::time::Instant::now();
        ahead.run(|| ());
        assert!(started.elapsed() < PACE_FORFEIT, "waited {:?} with nobody to wait for", started.elapsed());
        // The other one worked just now and is 10 ms behind.
        usage.mark_active(2, monotonic_nanos(), None);
        usage.add_virtual(1, 10_000_000);
        // It keeps using the device: this one waits for it.
        let catching_up = std::thread::spawn({
            let usage = Arc::clone(&usage);
            move || {
                for _ in 0..20 {
                    usage.add_virtual(2, 250_000);
                    usage.mark_active(2, monotonic_nanos(), None);
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
        });
        let started = std::time::Instant::now();
        ahead.run(|| ());
        let waited = started.elapsed();
        catching_up.join().unwrap();
        assert!(waited >= PACE_STEP && waited < MAX_PACE_WAIT * 3, "waited {waited:?} for a competitor catching up");
        // Now it stops using the device while still counted as working: it forfeits.
        let (mine, _) = usage.pace_state(1);
        usage.mark_active(2, monotonic_nanos(), None);
        let started = std::time::Instant::now();
        ahead.run(|| ());
        assert!(started.elapsed() < MAX_PACE_WAIT, "waited {:?} for a competitor that left its share", started.elapsed());
        assert!(usage.pace_state(2).0 + PACE_SLACK.as_nanos() as u64 >= mine, "the idle one was raised to this one's level");
    }

    #[test]
    fn queued_gpu_work_is_paced_only_when_sessions_share_a_context() {
        let usage = Arc::new(SharedUsage::create(1, 8).unwrap());
        usage.note_row_used(1);
        let eager = DeviceTime::default();
        eager.report_to(Arc::clone(&usage), 1);
        // A session process of its own (not marked): queued work adds nothing and never waits.
        for _ in 0..10 {
            eager.pace_queued_op();
        }
        assert_eq!(usage.pace_state(1).0, 0, "an unpaced session's queued work counted");

        // Sharing a context with a session that keeps working at a lower rate: the eager one
        // may run ahead by the slack, not more. The premise needs the slower thread to keep
        // working: one starved by a loaded machine for a pacing window is idle by design (and
        // not waited for), so such a measurement says nothing and is made again.
        let slack_ops = (PACE_SLACK.as_nanos() / QUEUED_OP_VIRTUAL_COST.as_nanos()) as u64;
        const ATTEMPTS: usize = 5;
        for attempt in 1..=ATTEMPTS {
            let Some((eager_ops, slow_ops)) = race_two_paced_sessions() else {
                eprintln!("attempt {attempt}: the slower thread was starved for a pacing window; measuring again");
                continue;
            };
            assert!(slow_ops > 0);
            // Unpaced, the eager thread queues millions of operations in 300 ms; paced, at most
            // the slack and what forfeits grant beyond the other's count.
            assert!(
                eager_ops <= slow_ops * 3 + slack_ops * 4,
                "the eager session queued {eager_ops} operations against the other's {slow_ops} (slack {slack_ops})"
            );
            return;
        }
        panic!("in {ATTEMPTS} attempts the slower thread was always starved for a pacing window: the machine is too loaded to measure pacing");
    }

    /// Two paced sessions sharing a context for 300 ms, one queueing as fast as it can, the
    /// other one operation every 20 µs: their operation counts, or `None` when the slower
    /// one went a pacing window without an operation (starved by the machine, not competing).
    fn race_two_paced_sessions() -> Option<(u64, u64)> {
        let usage = Arc::new(SharedUsage::create(1, 8).unwrap());
        for row in [1, 2] {
            usage.note_row_used(row);
        }
        let (eager, other) = (DeviceTime::default(), DeviceTime::default());
        eager.report_to(Arc::clone(&usage), 1);
        other.report_to(Arc::clone(&usage), 2);
        eager.pace_queued_work();
        other.pace_queued_work();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let slow = std::thread::spawn({
            let stop = Arc::clone(&stop);
            move || {
                let (mut ops, mut longest_gap, mut last) = (0u64, Duration::ZERO, std::time::Instant::now());
                while !stop.load(Relaxed) {
                    other.pace_queued_op();
                    ops += 1;
                    longest_gap = longest_gap.max(last.elapsed());
                    last = std::time::Instant::now();
                    std::thread::sleep(Duration::from_micros(20));
                }
                (ops, longest_gap)
            }
        });
        let started = std::time::Instant::now();
        let mut eager_ops = 0u64;
        while started.elapsed() < Duration::from_millis(300) {
            eager.pace_queued_op();
            eager_ops += 1;
        }
        stop.store(true, Relaxed);
        let (slow_ops, longest_gap) = slow.join().unwrap();
        (longest_gap < PACE_ACTIVE_WINDOW / 2).then_some((eager_ops, slow_ops))
    }

    #[test]
    fn tenants_past_the_bound_share_one_label() {
        let tenants = Tenants::default();
        for i in 0..MAX_ACCOUNTED_TENANTS {
            tenants.get(Some(&format!("t{i}")));
        }
        tenants.get(Some("late")).device_nanos.fetch_add(5, Relaxed);
        assert_eq!(tenants.get(Some(OTHER_TENANTS)).device_nanos(), 5);
        assert_eq!(tenants.device_seconds().len(), MAX_ACCOUNTED_TENANTS + 1);
    }
}
