//! The worker's metrics, in Prometheus' text format.
//!
//! Recording is ours, the text is `prometheus-client`'s: that crate's histograms take a lock on
//! every observation and its label families a map lookup under a lock, while every request of
//! every session records here. The label sets are all known in advance (opcode families,
//! refusal reasons), so each series is a plain atomic in a fixed array and recording is a few
//! relaxed atomic adds — no lock, no allocation. A scrape reads them (and the device figures:
//! memory in use and total, names, telemetry, from the backend) into a [`Scrape`], which the
//! crate's collector interface encodes in Prometheus' text format.
//!
//! [`Metrics`] is shared by every session of a worker (it travels in
//! [`SessionConfig`](crate::session::SessionConfig)); [`crate::http`] serves it.

use crate::backend::Backend;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::prometheus_text;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use proto_core::opcode::Family;
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

/// Upper bounds of the latency buckets, in seconds (10 µs to 10 s; the client's round trip on
/// loopback is tens of µs, a large copy or a synchronize seconds).
pub const LATENCY_BUCKETS: [f64; 18] =
    [10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 0.5, 1.0, 2.5, 10.0];

/// The opcode families by their number, and one more slot for frames whose opcode is unknown.
const FAMILY_SLOTS: usize = 9;
const UNKNOWN_FAMILY: usize = FAMILY_SLOTS - 1;

fn family_label(slot: usize) -> &'static str {
    match slot {
        0 => "session",
        1 => "device",
        2 => "memory",
        3 => "stream",
        4 => "event",
        5 => "module",
        6 => "rtc",
        7 => "graph",
        _ => "unknown",
    }
}

fn family_slot(family: Family) -> usize {
    usize::from(family.raw()).min(UNKNOWN_FAMILY)
}

/// Why the worker turned a connection or a login away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The worker already serves its most connections.
    ConnectionLimit,
    /// HELLO's credentials were refused.
    Authentication,
    /// Any other failed handshake: no common protocol version, a first request other than
    /// HELLO.
    Handshake,
}

impl Refusal {
    const ALL: [Refusal; 3] = [Refusal::ConnectionLimit, Refusal::Authentication, Refusal::Handshake];

    /// The `reason` label.
    pub fn label(self) -> &'static str {
        match self {
            Refusal::ConnectionLimit => "connection_limit",
            Refusal::Authentication => "authentication",
            Refusal::Handshake => "handshake",
        }
    }
}

/// A latency histogram of atomics (cumulative buckets are summed when rendered).
#[derive(Default)]
struct Histogram {
    /// Per bucket, observations that fell into it (not cumulative); the last is `+Inf`.
    buckets: [AtomicU64; LATENCY_BUCKETS.len() + 1],
    sum_nanos: AtomicU64,
}

impl Histogram {
    fn observe(&self, nanos: u64) {
        let seconds = nanos as f64 * 1e-9;
        let bucket = LATENCY_BUCKETS.iter().position(|&bound| seconds <= bound).unwrap_or(LATENCY_BUCKETS.len());
        self.buckets[bucket].fetch_add(1, Relaxed);
        self.sum_nanos.fetch_add(nanos, Relaxed);
    }

    fn snapshot(&self) -> Value {
        let buckets: Vec<(f64, u64)> =
            LATENCY_BUCKETS.iter().copied().chain([f64::INFINITY]).zip(&self.buckets).map(|(bound, n)| (bound, n.load(Relaxed))).collect();
        let count = buckets.iter().map(|&(_, n)| n).sum();
        Value::Histogram { sum: self.sum_nanos.load(Relaxed) as f64 * 1e-9, count, buckets }
    }
}

/// Counters of one opcode family.
#[derive(Default)]
struct FamilyStats {
    calls: AtomicU64,
    errors: AtomicU64,
    latency: Histogram,
}

/// Every metric the worker records.
#[derive(Default)]
pub struct Metrics {
    sessions_open: AtomicI64,
    sessions_total: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    /// Bytes of copies between workers: fetched from other workers, answered to them.
    transfer_bytes_in: AtomicU64,
    transfer_bytes_out: AtomicU64,
    families: [FamilyStats; FAMILY_SLOTS],
    refused: [AtomicU64; Refusal::ALL.len()],
    /// Session processes started, [connection relayed, connection handed over].
    session_processes: [AtomicU64; 2],
    tenants: crate::accounting::Tenants,
    /// Per device: resets after a sticky fault, and sessions the fault ended.
    device_faults: std::sync::Mutex<std::collections::BTreeMap<u32, DeviceFaultCounts>>,
    /// Sessions the kernel watchdog ended (`--max-kernel-ms`).
    kernel_timeouts: AtomicU64,
}

#[derive(Default, Clone, Copy)]
struct DeviceFaultCounts {
    resets: u64,
    sessions_ended: u64,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").field("sessions_open", &self.sessions_open.load(Relaxed)).finish_non_exhaustive()
    }
}

impl Metrics {
    /// Counts a session as open until the returned guard drops.
    pub fn session_opened(self: &Arc<Self>) -> OpenSession {
        self.sessions_open.fetch_add(1, Relaxed);
        self.sessions_total.fetch_add(1, Relaxed);
        OpenSession(Arc::clone(self))
    }

    /// Bytes received from clients (whole frames).
    pub fn add_bytes_in(&self, bytes: u64) {
        self.bytes_in.fetch_add(bytes, Relaxed);
    }

    /// Bytes sent to clients (whole frames).
    pub fn add_bytes_out(&self, bytes: u64) {
        self.bytes_out.fetch_add(bytes, Relaxed);
    }

    /// Bytes a copy between workers fetched from another worker.
    pub fn add_transfer_bytes_in(&self, bytes: u64) {
        self.transfer_bytes_in.fetch_add(bytes, Relaxed);
    }

    /// Bytes this worker answered to another worker's fetch (also in the sent bytes).
    pub fn add_transfer_bytes_out(&self, bytes: u64) {
        self.transfer_bytes_out.fetch_add(bytes, Relaxed);
    }

    /// Bytes of copies between workers fetched from other workers so far.
    pub fn transfer_bytes_in(&self) -> u64 {
        self.transfer_bytes_in.load(Relaxed)
    }

    /// Bytes answered to other workers' fetches so far.
    pub fn transfer_bytes_out(&self) -> u64 {
        self.transfer_bytes_out.load(Relaxed)
    }

    /// A session process started; `handed_over`: it serves its connection itself (else the
    /// worker relays its frames).
    pub fn session_process_started(&self, handed_over: bool) {
        self.session_processes[usize::from(handed_over)].fetch_add(1, Relaxed);
    }

    /// Each tenant's usage (device time), which sessions charge.
    pub fn tenants(&self) -> &crate::accounting::Tenants {
        &self.tenants
    }

    /// A connection or login turned away.
    pub fn refused(&self, why: Refusal) {
        self.refused[why as usize].fetch_add(1, Relaxed);
    }

    /// Starts timing one request; it is recorded when the returned guard drops.
    pub fn call(&self) -> CallRecord<'_> {
        self.call_started(Instant::now())
    }

    /// [`Metrics::call`] for a request whose handling began at `started` (the caller's own
    /// clock reading, shared: one fewer per request on the launch path).
    pub fn call_started(&self, started: Instant) -> CallRecord<'_> {
        CallRecord { metrics: self, started, slot: Cell::new(UNKNOWN_FAMILY), failed: Cell::new(false) }
    }

    /// Renders every metric in Prometheus' text exposition format (version 0.0.4, by
    /// `prometheus-client`), asking `backend` for the device figures.
    pub fn render(&self, backend: &dyn Backend) -> String {
        let mut scrape = Scrape::default();
        let s = &mut scrape;
        let info = s.family("hip_worker", "The worker's build and backend (always 1).", MetricType::Info);
        info.push(&[("version", hip_remote_build_info::VERSION), ("backend", backend.name())], Value::Info);
        s.family("hip_worker_sessions_open", "Sessions (connections) being served.", MetricType::Gauge)
            .push(&[], Value::Signed(self.sessions_open.load(Relaxed)));
        s.family("hip_worker_sessions", "Sessions (connections) served since the worker started.", MetricType::Counter)
            .push(&[], Value::Count(self.sessions_total.load(Relaxed)));
        s.family("hip_worker_received_bytes", "Bytes received from clients (whole frames).", MetricType::Counter)
            .push(&[], Value::Count(self.bytes_in.load(Relaxed)));
        s.family("hip_worker_sent_bytes", "Bytes sent to clients (whole frames).", MetricType::Counter)
            .push(&[], Value::Count(self.bytes_out.load(Relaxed)));
        s.family("hip_worker_transfer_received_bytes", "Bytes of copies between workers fetched from other workers.", MetricType::Counter)
            .push(&[], Value::Count(self.transfer_bytes_in.load(Relaxed)));
        s.family("hip_worker_transfer_sent_bytes", "Bytes of copies between workers answered to other workers' fetches.", MetricType::Counter)
            .push(&[], Value::Count(self.transfer_bytes_out.load(Relaxed)));
        let calls = s.family("hip_worker_calls", "Requests handled, by opcode family.", MetricType::Counter);
        for (slot, stats) in self.families.iter().enumerate() {
            calls.push(&[("family", family_label(slot))], Value::Count(stats.calls.load(Relaxed)));
        }
        let errors =
            s.family("hip_worker_call_errors", "Requests answered with an error (or a deferred one), by opcode family.", MetricType::Counter);
        for (slot, stats) in self.families.iter().enumerate() {
            errors.push(&[("family", family_label(slot))], Value::Count(stats.errors.load(Relaxed)));
        }
        let durations = s.family(
            "hip_worker_call_duration_seconds",
            "Time from a request's header to its reply being sent, by opcode family.",
            MetricType::Histogram,
        );
        for (slot, stats) in self.families.iter().enumerate() {
            durations.push(&[("family", family_label(slot))], stats.latency.snapshot());
        }
        let refused = s.family("hip_worker_refused", "Connections and logins turned away, by reason.", MetricType::Counter);
        for why in Refusal::ALL {
            refused.push(&[("reason", why.label())], Value::Count(self.refused[why as usize].load(Relaxed)));
        }
        let processes = s.family(
            "hip_worker_session_processes",
            "Session processes started, by how they get their connection (handed over: the process serves it, the worker sees none of its requests).",
            MetricType::Counter,
        );
        for (label, count) in [("relayed", &self.session_processes[0]), ("handed_over", &self.session_processes[1])] {
            processes.push(&[("connection", label)], Value::Count(count.load(Relaxed)));
        }
        let tenants = s.family(
            "hip_worker_tenant_device_seconds",
            "Device time the tenant's sessions used (host: copies, memsets and kernels as they ran; GPU: batches of stream work between events).",
            MetricType::Counter,
        );
        for (tenant, seconds) in self.tenants.device_seconds() {
            tenants.push(&[("tenant", &tenant)], Value::Float(seconds));
        }
        let faults: Vec<(u32, DeviceFaultCounts)> = self.fault_counts().iter().map(|(&d, &c)| (d, c)).collect();
        let resets =
            s.family("hip_worker_device_resets", "Device contexts reset after a sticky fault (--isolation shared), by device.", MetricType::Counter);
        for (device, counts) in &faults {
            resets.push(&[("device", &device.to_string())], Value::Count(counts.resets));
        }
        let ended = s.family(
            "hip_worker_sessions_ended_by_fault",
            "Sessions that lost their work on a device to a sticky fault there, by device.",
            MetricType::Counter,
        );
        for (device, counts) in &faults {
            ended.push(&[("device", &device.to_string())], Value::Count(counts.sessions_ended));
        }
        s.family("hip_worker_kernel_timeouts", "Sessions ended because a kernel ran longer than --max-kernel-ms.", MetricType::Counter)
            .push(&[], Value::Count(self.kernel_timeouts.load(Relaxed)));
        device_families(s, backend);
        scrape.encode()
    }
}

/// Keeps a session counted as open.
pub struct OpenSession(Arc<Metrics>);

impl Drop for OpenSession {
    fn drop(&mut self) {
        self.0.sessions_open.fetch_sub(1, Relaxed);
    }
}

/// One request being timed; recorded (call, error, latency) when dropped, on every path out of
/// the driver's request loop.
pub struct CallRecord<'m> {
    metrics: &'m Metrics,
    started: Instant,
    slot: Cell<usize>,
    failed: Cell<bool>,
}

impl CallRecord<'_> {
    /// The request's family, once its opcode is known.
    pub fn set_family(&self, family: Family) {
        self.slot.set(family_slot(family));
    }

    /// The request was answered with an error (the driver's error paths share one borrow).
    pub fn fail(&self) {
        self.failed.set(true);
    }
}

impl Drop for CallRecord<'_> {
    fn drop(&mut self) {
        self.metrics.record(self.slot.get(), self.failed.get(), self.started.elapsed());
    }
}

impl Metrics {
    fn fault_counts(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<u32, DeviceFaultCounts>> {
        self.device_faults.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `device` was reset after a sticky fault (`crate::device_faults`).
    pub fn device_reset(&self, device: u32) {
        self.fault_counts().entry(device).or_default().resets += 1;
    }

    /// A session lost its work on `device` to a fault there (its own or another's).
    pub fn session_ended_by_fault(&self, device: u32) {
        self.fault_counts().entry(device).or_default().sessions_ended += 1;
    }

    /// Resets of `device` so far.
    pub fn device_resets(&self, device: u32) -> u64 {
        self.fault_counts().get(&device).map_or(0, |c| c.resets)
    }

    /// Sessions that lost their work on `device` to a fault so far.
    pub fn sessions_ended_by_fault(&self, device: u32) -> u64 {
        self.fault_counts().get(&device).map_or(0, |c| c.sessions_ended)
    }

    /// The kernel watchdog ended a session (`--max-kernel-ms`).
    pub fn kernel_timeout(&self) {
        self.kernel_timeouts.fetch_add(1, Relaxed);
    }

    /// Sessions the kernel watchdog ended so far.
    pub fn kernel_timeouts(&self) -> u64 {
        self.kernel_timeouts.load(Relaxed)
    }

    /// Records one request of `family` that another process handled (a session process,
    /// [`crate::sandbox`]), from the worker's relay: `elapsed` from its header to its reply.
    pub fn record_call(&self, family: Family, failed: bool, elapsed: std::time::Duration) {
        self.record(family_slot(family), failed, elapsed);
    }

    fn record(&self, slot: usize, failed: bool, elapsed: std::time::Duration) {
        let stats = &self.families[slot];
        stats.calls.fetch_add(1, Relaxed);
        if failed {
            stats.errors.fetch_add(1, Relaxed);
        }
        stats.latency.observe(elapsed.as_nanos().min(u128::from(u64::MAX)) as u64);
    }
}

fn device_families(s: &mut Scrape, backend: &dyn Backend) {
    let count = backend.device_count().unwrap_or(0);
    s.family("hip_worker_devices", "Devices the backend exposes.", MetricType::Gauge).push(&[], Value::Signed(i64::from(count)));
    let info = s.family("hip_worker_device", "Each device's name, architecture, PCI address and compute units (always 1).", MetricType::Info);
    for dev in 0..count {
        if let Ok(props) = backend.device_properties(dev) {
            let dev_label = dev.to_string();
            let pci = crate::telemetry::pci_address(&props);
            let compute_units = props.multi_processor_count.to_string();
            let labels = [
                ("device", dev_label.as_str()),
                ("name", &props.name),
                ("arch", &props.gcn_arch_name),
                ("pci", &pci),
                ("compute_units", &compute_units),
            ];
            info.push(&labels, Value::Info);
        }
    }
    let infos: Vec<_> = (0..count).filter_map(|dev| backend.mem_get_info(dev).ok().map(|info| (dev.to_string(), info))).collect();
    let used = s.family("hip_worker_device_memory_used_bytes", "Device memory in use, by every session (total minus free).", MetricType::Gauge);
    for (dev, info) in &infos {
        used.push(&[("device", dev)], Value::Count(info.total.saturating_sub(info.free)));
    }
    let total = s.family("hip_worker_device_memory_total_bytes", "Device memory capacity.", MetricType::Gauge);
    for (dev, info) in &infos {
        total.push(&[("device", dev)], Value::Count(info.total));
    }
    // Live figures (crate::telemetry): a device whose source lacks one has no sample.
    let telemetry: Vec<_> = (0..count)
        .filter_map(|dev| backend.device_properties(dev).ok().map(|props| (dev.to_string(), crate::telemetry::read(backend.name(), &props))))
        .collect();
    type Figure = fn(&crate::telemetry::DeviceTelemetry) -> Option<f64>;
    let figures: [(&'static str, &'static str, Figure); 4] = [
        ("hip_worker_device_utilization_ratio", "Busy share of the device's compute engine (0 to 1; the CPU's on the host backend).", |t| {
            t.utilization
        }),
        ("hip_worker_device_power_watts", "Board power now.", |t| t.power_watts),
        ("hip_worker_device_power_limit_watts", "Enforced power limit.", |t| t.power_limit_watts),
        ("hip_worker_device_temperature_celsius", "Core temperature.", |t| t.temperature_celsius),
    ];
    for (name, help, figure) in figures {
        let family = s.family(name, help, MetricType::Gauge);
        for (dev, t) in &telemetry {
            if let Some(value) = figure(t) {
                family.push(&[("device", dev)], Value::Float(value));
            }
        }
    }
    for (name, help, pick) in [
        ("hip_worker_device_clock_mhz", "Clock now, by domain (gfx, mem).", false),
        ("hip_worker_device_clock_max_mhz", "Highest clock, by domain (gfx, mem).", true),
    ] {
        let family = s.family(name, help, MetricType::Gauge);
        for (dev, t) in &telemetry {
            for (domain, now, max) in [("gfx", t.gfx_clock_mhz, t.gfx_clock_max_mhz), ("mem", t.mem_clock_mhz, t.mem_clock_max_mhz)] {
                if let Some(mhz) = if pick { max } else { now } {
                    family.push(&[("device", dev), ("domain", domain)], Value::Count(u64::from(mhz)));
                }
            }
        }
    }
}

/// One scrape's figures, read from the atomics and the backend and owned, for
/// `prometheus-client`'s text encoder (its collectors must own what they encode). Recording
/// stays on the atomics above: the crate's own histograms and label families lock.
#[derive(Debug, Default)]
struct Scrape {
    families: Vec<ScrapedFamily>,
}

/// One metric: name as `prometheus-client` takes it (without the `_total` of a counter or the
/// `_info` of an info metric, which the encoder appends), help, type and series.
#[derive(Debug)]
struct ScrapedFamily {
    name: &'static str,
    help: &'static str,
    kind: MetricType,
    series: Vec<(Vec<(&'static str, String)>, Value)>,
}

#[derive(Debug, Clone)]
enum Value {
    Count(u64),
    Signed(i64),
    /// Any float figure (seconds, watts, MHz, ratios).
    Float(f64),
    /// An info metric's `1`.
    Info,
    /// Per-bucket (not cumulative) counts with their upper bounds; `+Inf` last.
    Histogram {
        sum: f64,
        count: u64,
        buckets: Vec<(f64, u64)>,
    },
}

impl Scrape {
    fn family(&mut self, name: &'static str, help: &'static str, kind: MetricType) -> &mut ScrapedFamily {
        self.families.push(ScrapedFamily { name, help, kind, series: Vec::new() });
        self.families.last_mut().expect("just pushed")
    }

    fn encode(self) -> String {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(self));
        let mut out = String::with_capacity(16 << 10);
        // Writing into a String cannot fail.
        let _ = prometheus_text::encode(&mut out, &registry);
        out
    }
}

impl ScrapedFamily {
    fn push(&mut self, labels: &[(&'static str, &str)], value: Value) {
        self.series.push((labels.iter().map(|&(key, value)| (key, value.to_string())).collect(), value));
    }
}

impl Collector for Scrape {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for family in &self.families {
            let mut metric = encoder.encode_descriptor(family.name, family.help, None, family.kind)?;
            for (labels, value) in &family.series {
                if let Value::Info = value {
                    metric.encode_info(labels)?;
                    continue;
                }
                let mut series = metric.encode_family(labels)?;
                match value {
                    Value::Count(v) if family.kind == MetricType::Counter => series.encode_counter::<NoLabelSet, _, u64>(v, None)?,
                    Value::Count(v) => series.encode_gauge(v)?,
                    Value::Signed(v) => series.encode_gauge(v)?,
                    Value::Float(v) if family.kind == MetricType::Counter => series.encode_counter::<NoLabelSet, _, f64>(v, None)?,
                    Value::Float(v) => series.encode_gauge(v)?,
                    Value::Histogram { sum, count, buckets } => series.encode_histogram::<NoLabelSet>(*sum, *count, buckets, None)?,
                    Value::Info => unreachable!("handled above"),
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{HostBackend, HostConfig};

    #[test]
    fn histogram_buckets_are_cumulative_and_count_every_observation() {
        let metrics = Metrics::default();
        // Recorded durations, not timed ones: a loaded machine must not move one across a bucket.
        let memory = metrics.call();
        memory.set_family(Family::Memory);
        let slot = memory.slot.get();
        std::mem::forget(memory);
        for nanos in [5_000, 20_000, 20_000_000_000] {
            metrics.record(slot, false, std::time::Duration::from_nanos(nanos));
        }
        let text = metrics.render(&HostBackend::new(HostConfig::default()));
        assert!(text.contains("hip_worker_calls_total{family=\"memory\"} 3\n"), "{text}");
        assert!(text.contains("hip_worker_call_duration_seconds_bucket{family=\"memory\",le=\"1e-05\"} 1\n"), "{text}");
        assert!(text.contains("hip_worker_call_duration_seconds_bucket{family=\"memory\",le=\"2.5e-05\"} 2\n"), "{text}");
        assert!(text.contains("hip_worker_call_duration_seconds_bucket{family=\"memory\",le=\"10\"} 2\n"), "{text}");
        assert!(text.contains("hip_worker_call_duration_seconds_bucket{family=\"memory\",le=\"+Inf\"} 3\n"), "{text}");
        assert!(text.contains("hip_worker_call_duration_seconds_count{family=\"memory\"} 3\n"), "{text}");
    }

    #[test]
    fn label_values_are_escaped() {
        let mut scrape = Scrape::default();
        scrape.family("m", "A gauge.", MetricType::Gauge).push(&[("name", "a\"b\\c\nd")], Value::Count(1));
        assert_eq!(scrape.encode(), "# HELP m A gauge.\n# TYPE m gauge\nm{name=\"a\\\"b\\\\c\\nd\"} 1\n");
    }

    #[test]
    fn names_types_and_values_keep_their_text() {
        let metrics = Metrics::default();
        metrics.refused(Refusal::Authentication);
        let text = metrics.render(&HostBackend::new(HostConfig::default()));
        for expected in [
            "# TYPE hip_worker_info gauge\nhip_worker_info{version=\"",
            "# TYPE hip_worker_sessions_open gauge\nhip_worker_sessions_open 0\n",
            "# TYPE hip_worker_refused_total counter\n",
            "hip_worker_refused_total{reason=\"authentication\"} 1\n",
            "# TYPE hip_worker_call_duration_seconds histogram\n",
            "hip_worker_call_duration_seconds_sum{family=\"session\"} 0.0\n",
            "hip_worker_devices 1\n",
        ] {
            assert!(text.contains(expected), "{expected:?} not in\n{text}");
        }
        // One HELP and one TYPE per metric, none repeated.
        let types: Vec<&str> = text.lines().filter(|l| l.starts_with("# TYPE ")).collect();
        let unique: std::collections::BTreeSet<&str> = types.iter().copied().collect();
        assert_eq!(types.len(), unique.len(), "{text}");
    }

    #[test]
    fn device_memory_follows_allocations() {
        use crate::backend::MemoryBackend;
        let backend = HostBackend::new(HostConfig { devices: 2, memory_per_device: 64 << 20, allow_host_code: true, ..HostConfig::default() });
        let before = Metrics::default().render(&backend);
        assert!(before.contains("hip_worker_device_memory_total_bytes{device=\"1\"} 67108864\n"), "{before}");
        let ptr = backend.malloc(1, 1 << 20).unwrap();
        let after = Metrics::default().render(&backend);
        assert!(after.contains("hip_worker_device_memory_used_bytes{device=\"1\"} 1048576\n"), "{after}");
        assert!(after.contains("hip_worker_device_info{device=\"0\",name="), "{after}");
        backend.free(ptr).unwrap();
    }
}
