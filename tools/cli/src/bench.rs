//! `hip-remote bench`: one run measures, side by side on the same machine,
//!
//! - **native**: the worker's backend (cuda or host) called in-process through the
//!   `Backend` trait — no network, no protocol ([`crate::native`]);
//! - **remote**: the real client library (`libamdhip64.so`, loaded with dlopen as an
//!   application links it) against a worker over loopback TCP (an embedded worker with the same
//!   backend kind, unless `HIP_REMOTE_WORKER` names one);
//! - **raw TCP**: plain sockets over the same loopback with the same socket options.
//!
//! Sections: sync call round trip (p50/p99/p99.9, full distributions for the plot); async op
//! rate (64-byte memsets); empty-kernel launch rate (hiprtc-compiled `empty()`, N
//! fire-and-forget launches and one synchronize, median of trials, native and remote
//! interleaved); an MLP training loop ([`crate::workload::mlp`]); graphs: a step of N small
//! kernels launched one by one and replayed as a graph, native and remote, interleaved
//! ([`crate::workload::kernel_chain`]); copy bandwidth 4 KiB … max,
//! H2D/D2H, pageable and pinned, per size against native and raw TCP (and, on the cuda
//! backend, plain `cuMemcpy` from pinned memory: the PCIe reference); parallel copies with K
//! threads on K streams (one connection: the client library has one per process), K
//! processes (K connections), K native threads and K raw TCP connections.
//!
//! Output: a markdown report (stdout, `--markdown`), JSON (`--json`) and PNG plots
//! (`--plots`: bandwidth.png, latency.png). A section that fails is reported as such and the
//! others still run; the command then exits non-zero.

use crate::hip::Hip;
use crate::native::{self, CopyBuffers, NativeGpu};
use crate::peer_bench;
use crate::plot::{self, Axis, Canvas, Series, PALETTE};
use crate::profile::SectionProfile;
use crate::variants;
use crate::workload::{self, ChainConfig, ChainRuns, Kernels, MlpConfig, MlpRun, RemoteGpu, CHAIN_WAYS};
use hip_worker::backend::{Backend, DevicePtr, StreamHandle};
use serde_json::{json, Value};
use std::ffi::c_void;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Options of one run.
pub struct BenchOptions {
    /// The client library (also handed to the child processes).
    pub lib: PathBuf,
    /// Small sizes everywhere (tests, CI, the host backend).
    pub quick: bool,
    /// Largest copy, bytes.
    pub max_bytes: usize,
    /// Bytes moved per copy figure (at least 3 copies; small sizes capped at 20 000).
    pub copy_volume: usize,
    /// Round trips for the latency figures.
    pub round_trips: usize,
    /// Fire-and-forget memsets for the async op rate.
    pub async_ops: usize,
    /// Empty-kernel launches per trial.
    pub launches: usize,
    /// Launch-rate trials per side (the median is reported).
    pub trials: usize,
    /// K values for the parallel copies.
    pub streams: Vec<usize>,
    /// Also run K child processes (K connections).
    pub processes: bool,
    /// Bytes of each parallel copy.
    pub parallel_bytes: usize,
    /// Bytes moved per parallel figure, all K together (at least 2 copies per K).
    pub parallel_volume: usize,
    /// The MLP workload.
    pub mlp: MlpConfig,
    /// The kernel chain (graphs vs one by one).
    pub chain: ChainConfig,
    /// Where the remote side's worker is, in words.
    pub worker: String,
    /// Only these sections (keys: [`SECTIONS`]); empty: all.
    pub sections: Vec<String>,
    /// Profile each section into this directory ([`crate::profile`]).
    pub profile: Option<PathBuf>,
    /// The client variants of the link figures ([`variants::variants`]).
    pub variants: Vec<String>,
    /// A worker on this host with a shared-memory listener (`shm:///PATH`), for the `shm` variant.
    pub shm_worker: Option<String>,
    /// Sizes of the link figures.
    pub link: variants::Plan,
}

/// The section keys `--sections` takes, in run order.
pub const SECTIONS: &[&str] = &["latency", "async", "sgemm", "kernels", "graphs", "copies", "parallel", "peer", "link"];

/// The link figures: native, and each variant's (or why it did not run).
struct LinkFigures {
    native: native::NativeLinkFigures,
    /// The loopback's own ceilings for the TCP variants: raw one-stream TCP GB/s of 1 MiB
    /// messages, and of the large copy's bytes over [`RAW_STRIPES`] streams at once.
    raw_tcp: Option<(f64, f64)>,
    runs: Vec<(variants::Variant, Result<variants::Figures, String>)>,
}

/// Everything a run produced.
pub struct Report {
    pub json: Value,
    pub markdown: String,
    pub errors: Vec<String>,
    bandwidth: Option<Canvas>,
    latency: Option<Canvas>,
}

impl Report {
    /// Writes `bandwidth.png` and `latency.png` into `dir`; returns their paths.
    pub fn write_plots(&self, dir: &Path) -> Result<Vec<PathBuf>, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut written = Vec::new();
        for (name, canvas) in [("bandwidth.png", &self.bandwidth), ("latency.png", &self.latency)] {
            if let Some(c) = canvas {
                let path = dir.join(name);
                std::fs::write(&path, c.png()).map_err(|e| format!("{}: {e}", path.display()))?;
                written.push(path);
            }
        }
        Ok(written)
    }
}

/// A latency distribution, µs, sorted.
struct Dist(Vec<f64>);

impl Dist {
    fn new(samples: Vec<Duration>) -> Self {
        let mut us: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        us.sort_by(f64::total_cmp);
        Self(us)
    }

    fn p(&self, q: f64) -> f64 {
        self.0.get(((self.0.len().max(1) - 1) as f64 * q).round() as usize).copied().unwrap_or(f64::NAN)
    }

    fn json(&self) -> Value {
        let mean = self.0.iter().sum::<f64>() / self.0.len().max(1) as f64;
        json!({
            "n": self.0.len(), "p50": r3(self.p(0.5)), "p90": r3(self.p(0.9)), "p99": r3(self.p(0.99)),
            "p999": r3(self.p(0.999)), "min": r3(self.p(0.0)), "max": r3(self.p(1.0)), "mean": r3(mean),
        })
    }
}

fn r3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        f64::NAN
    } else {
        s[s.len() / 2]
    }
}

struct Latency {
    native: Dist,
    remote: Dist,
    raw: Dist,
}

struct Launches {
    n: usize,
    native: Vec<f64>,
    remote: Vec<f64>,
    native_compile_s: f64,
    remote_compile_s: f64,
}

struct CopyRow {
    bytes: usize,
    reps: usize,
    native_h2d: f64,
    native_d2h: f64,
    h2d_pageable: f64,
    d2h_pageable: f64,
    h2d_pinned: f64,
    d2h_pinned: f64,
    raw: f64,
    cuda_pinned: Option<(f64, f64)>,
}

struct ParRow {
    k: usize,
    mode: &'static str,
    h2d: f64,
    d2h: f64,
}

const NATIVE_THREADS: &str = "native: K threads, K streams";
const REMOTE_THREADS: &str = "remote: K threads, K streams, one connection";
const REMOTE_PROCESSES: &str = "remote: K processes, K connections";
const RAW_CONNECTIONS: &str = "raw TCP: K connections";

#[derive(Default)]
struct Results {
    latency: Option<Latency>,
    memset: Option<(f64, f64)>,
    gemm: Option<GemmRun>,
    launches: Option<Launches>,
    mlp: Option<(MlpRun, MlpRun)>,
    chain: Option<ChainRuns>,
    copies: Vec<CopyRow>,
    cuda_pinned_note: Option<String>,
    parallel: Vec<ParRow>,
    peer: Option<peer_bench::PeerRun>,
    link: Option<LinkFigures>,
    errors: Vec<String>,
}

fn raw_pair() -> std::io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let client = TcpStream::connect(listener.local_addr()?)?;
    let (server, _) = listener.accept()?;
    for s in [&client, &server] {
        transport_tcp::tcp::configure(s, &transport_tcp::TcpConfig { io_timeout: None, ..Default::default() })?;
    }
    Ok((client, server))
}

/// Raw TCP 64-byte ping-pong round trips. Both readers poll before blocking exactly as the
/// transport's do (`HIP_REMOTE_TCP_SPIN_US`), so the ratio measures the protocol, not the
/// waiting strategy.
fn raw_round_trips(n: usize) -> std::io::Result<Vec<Duration>> {
    let spin = transport_tcp::TcpConfig::from_env().map_err(std::io::Error::other)?.spin;
    let (mut client, mut server) = raw_pair()?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let mut buf = [0u8; 64];
        loop {
            transport_tcp::spin::until_readable(&server, spin);
            if server.read_exact(&mut buf).is_err() {
                return Ok(());
            }
            server.write_all(&buf)?;
        }
    });
    let mut buf = [7u8; 64];
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + n / 10 {
        let t = Instant::now();
        client.write_all(&buf)?;
        transport_tcp::spin::until_readable(&client, spin);
        client.read_exact(&mut buf)?;
        if i >= n / 10 {
            samples.push(t.elapsed());
        }
    }
    drop(client);
    let _ = echo.join();
    Ok(samples)
}

/// One raw TCP "copy" channel: the sender writes `len` bytes from its own buffer, a sink
/// thread reads them into another buffer of the same size (as a copy moves them: no cache-hot
/// chunk reused) and acknowledges each message with one byte.
struct RawChannel {
    client: TcpStream,
    src: Vec<u8>,
    sink: Option<std::thread::JoinHandle<()>>,
}

impl RawChannel {
    fn new(len: usize) -> std::io::Result<Self> {
        let (client, mut server) = raw_pair()?;
        let sink = std::thread::spawn(move || {
            let mut dst = vec![0u8; len];
            loop {
                let mut got = 0;
                while got < len {
                    match server.read(&mut dst[got..]) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got += n,
                    }
                }
                if server.write_all(&[1]).is_err() {
                    return;
                }
            }
        });
        Ok(Self { client, src: vec![0x5a; len], sink: Some(sink) })
    }

    fn send(&mut self, reps: usize) -> Result<(), String> {
        let mut ack = [0u8; 1];
        for _ in 0..reps {
            self.client.write_all(&self.src).map_err(|e| e.to_string())?;
            self.client.read_exact(&mut ack).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

impl Drop for RawChannel {
    fn drop(&mut self) {
        let _ = self.client.shutdown(std::net::Shutdown::Both);
        if let Some(s) = self.sink.take() {
            let _ = s.join();
        }
    }
}

/// Raw one-stream TCP GB/s for `reps` messages of `len` bytes, each acknowledged.
fn raw_stream_gbps(len: usize, reps: usize) -> Result<f64, String> {
    let mut ch = RawChannel::new(len).map_err(|e| e.to_string())?;
    ch.send(1)?;
    let t = Instant::now();
    ch.send(reps)?;
    Ok((len * reps) as f64 / t.elapsed().as_secs_f64() / 1e9)
}

/// Streams of the raw TCP ceiling of striped copies (the client's default stripe count).
const RAW_STRIPES: usize = 8;

/// Raw TCP GB/s of `streams` channels at once, each sending `reps` messages of `len` bytes.
fn raw_streams_gbps(streams: usize, len: usize, reps: usize) -> Result<f64, String> {
    let mut channels = (0..streams).map(|_| RawChannel::new(len).map_err(|e| e.to_string())).collect::<Result<Vec<_>, _>>()?;
    for ch in &mut channels {
        ch.send(1)?;
    }
    let t = Instant::now();
    std::thread::scope(|scope| {
        let sends: Vec<_> = channels.iter_mut().map(|ch| scope.spawn(move || ch.send(reps))).collect();
        sends.into_iter().try_for_each(|h| h.join().map_err(|_| "a raw TCP sender panicked".to_string())?)
    })?;
    Ok((streams * len * reps) as f64 / t.elapsed().as_secs_f64() / 1e9)
}

/// Runs `k` threads that each `setup` (including a warm-up), then do `work(h2d = true)` and
/// `work(h2d = false)`, all threads starting each phase together at a barrier; returns each
/// phase's wall time, from the earliest thread's start to the latest thread's end (taken by
/// the threads themselves: a coordinator descheduled after the barrier would see less).
fn timed_phases<S>(
    k: usize,
    setup: &(dyn Fn() -> Result<S, String> + Sync),
    work: &(dyn Fn(&mut S, bool) -> Result<(), String> + Sync),
) -> Result<(Duration, Duration), String> {
    let barrier = Barrier::new(k);
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..k)
            .map(|_| {
                let barrier = &barrier;
                scope.spawn(move || -> Result<[(Instant, Instant); 2], String> {
                    let mut state = setup();
                    let mut result = state.as_ref().map(|_| ()).map_err(Clone::clone);
                    let mut spans = [(Instant::now(), Instant::now()); 2];
                    for (span, h2d) in spans.iter_mut().zip([true, false]) {
                        barrier.wait();
                        let start = Instant::now();
                        if let (Ok(s), Ok(())) = (state.as_mut(), &result) {
                            result = work(s, h2d);
                        }
                        *span = (start, Instant::now());
                    }
                    barrier.wait();
                    drop(state);
                    result.map(|_| spans)
                })
            })
            .collect();
        let mut all = Vec::new();
        for t in threads {
            all.push(t.join().map_err(|_| "a copy thread panicked".to_string())??);
        }
        let phase = |i: usize| {
            let start = all.iter().map(|s| s[i].0).min();
            let end = all.iter().map(|s| s[i].1).max();
            match (start, end) {
                (Some(a), Some(b)) => b.duration_since(a),
                _ => Duration::ZERO,
            }
        };
        Ok((phase(0), phase(1)))
    })
}

/// A remote copier: its own stream, device buffer and pinned host buffer.
struct RemoteCopier<'a> {
    hip: &'a Hip,
    stream: *mut c_void,
    dev: *mut c_void,
    host: *mut c_void,
    size: usize,
}

impl<'a> RemoteCopier<'a> {
    fn new(hip: &'a Hip, size: usize) -> Result<Self, String> {
        let mut c = Self { hip, stream: std::ptr::null_mut(), dev: std::ptr::null_mut(), host: std::ptr::null_mut(), size };
        // SAFETY: valid out-pointers; sizes as allocated.
        unsafe {
            hip.check("hipStreamCreate", (hip.stream_create)(&mut c.stream))?;
            hip.check("hipMalloc", (hip.malloc)(&mut c.dev, size))?;
            hip.check("hipHostMalloc", (hip.host_malloc)(&mut c.host, size, 0))?;
            std::ptr::write_bytes(c.host as *mut u8, 9, size);
        }
        c.copy(true, 1)?;
        c.copy(false, 1)?;
        Ok(c)
    }

    /// `reps` × (hipMemcpyAsync on the own stream + hipStreamSynchronize).
    fn copy(&mut self, h2d: bool, reps: usize) -> Result<(), String> {
        let (dst, src, kind) = if h2d { (self.dev, self.host, 1) } else { (self.host, self.dev, 2) };
        for _ in 0..reps {
            // SAFETY: both buffers hold `size` bytes; the stream is ours.
            unsafe {
                self.hip.check("hipMemcpyAsync", (self.hip.memcpy_async)(dst, src, self.size, kind, self.stream))?;
                self.hip.check("hipStreamSynchronize", (self.hip.stream_synchronize)(self.stream))?;
            }
        }
        Ok(())
    }
}

impl Drop for RemoteCopier<'_> {
    fn drop(&mut self) {
        // SAFETY: each handle created by `new` (or null, which HIP accepts), released once.
        unsafe {
            if !self.stream.is_null() {
                let _ = (self.hip.stream_synchronize)(self.stream);
                let _ = (self.hip.stream_destroy)(self.stream);
            }
            let _ = (self.hip.free)(self.dev);
            let _ = (self.hip.host_free)(self.host);
        }
    }
}

/// A native copier: its own backend stream, device buffer and pageable host buffer.
struct NativeCopier<'a> {
    b: &'a dyn Backend,
    stream: StreamHandle,
    dev: DevicePtr,
    host: Vec<u8>,
}

impl<'a> NativeCopier<'a> {
    fn new(b: &'a dyn Backend, size: usize) -> Result<Self, String> {
        let stream = b.stream_create(0, 0, 0).map_err(|e| format!("native stream_create: {e}"))?;
        let dev = match b.malloc(0, size as u64) {
            Ok(d) => d,
            Err(e) => {
                let _ = b.stream_destroy(stream);
                return Err(format!("native malloc: {e}"));
            }
        };
        let mut c = Self { b, stream, dev, host: vec![9u8; size] };
        c.copy(true, 1)?;
        c.copy(false, 1)?;
        Ok(c)
    }

    fn copy(&mut self, h2d: bool, reps: usize) -> Result<(), String> {
        for _ in 0..reps {
            if h2d {
                self.b.memcpy_htod_sync(Some(self.stream), self.dev, &self.host).map_err(|e| format!("native memcpy_htod_sync: {e}"))?;
            } else {
                self.b.memcpy_dtoh_sync(Some(self.stream), self.dev, &mut self.host).map_err(|e| format!("native memcpy_dtoh_sync: {e}"))?;
            }
        }
        Ok(())
    }
}

impl Drop for NativeCopier<'_> {
    fn drop(&mut self) {
        let _ = self.b.free(self.dev);
        let _ = self.b.stream_destroy(self.stream);
    }
}

/// Copy sizes: 4 KiB, 64 KiB, 1 MiB, then ×4 up to `max`.
fn copy_sizes(max: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut size = 4096;
    while size <= max {
        sizes.push(size);
        size *= if size < (1 << 20) { 16 } else { 4 };
    }
    if sizes.is_empty() {
        sizes.push(max.max(1));
    }
    sizes
}

fn size_label(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes & ((1 << 20) - 1) == 0 {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes & ((1 << 10) - 1) == 0 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

/// Runs every section; a failing section is recorded and the rest still run.
pub fn run(hip: &Hip, native_backend: &Arc<dyn Backend>, opts: &BenchOptions) -> Report {
    let nb: &dyn Backend = &**native_backend;
    let mut r = Results::default();
    let section = |key: &str, name: &str, errors: &mut Vec<String>, f: &mut dyn FnMut() -> Result<(), String>| {
        if !opts.sections.is_empty() && !opts.sections.iter().any(|s| s == key) {
            return;
        }
        eprintln!("bench: {name}…");
        let profile = match opts.profile.as_deref().map(|dir| SectionProfile::start(dir, key)).transpose() {
            Ok(p) => p,
            Err(e) => {
                errors.push(format!("{name}: {e}"));
                None
            }
        };
        let t = Instant::now();
        let result = f();
        let secs = t.elapsed().as_secs_f64();
        if let Some(p) = profile {
            match p.finish() {
                Ok(paths) => paths.iter().for_each(|p| eprintln!("bench: wrote {}", p.display())),
                Err(e) => errors.push(format!("{name}: {e}")),
            }
        }
        if let Err(e) = result {
            eprintln!("bench: {name} failed: {e}");
            errors.push(format!("{name}: {e}"));
        } else {
            eprintln!("bench: {name} done in {secs:.1} s");
        }
    };
    let mut errors = Vec::new();

    // 1. Sync call round trips.
    section("latency", "round trips", &mut errors, &mut || {
        let raw = raw_round_trips(opts.round_trips).map_err(|e| e.to_string())?;
        let mut remote = Vec::with_capacity(opts.round_trips);
        for i in 0..opts.round_trips + opts.round_trips / 10 {
            let t = Instant::now();
            // SAFETY: no arguments.
            hip.check("hipDeviceSynchronize", unsafe { (hip.device_synchronize)() })?;
            if i >= opts.round_trips / 10 {
                remote.push(t.elapsed());
            }
        }
        let native = native::sync_samples(nb, opts.round_trips)?;
        r.latency = Some(Latency { native: Dist::new(native), remote: Dist::new(remote), raw: Dist::new(raw) });
        Ok(())
    });

    // 2. Async op rate.
    section("async", "async op rate", &mut errors, &mut || {
        // SAFETY: arguments follow the HIP API contracts (valid out-pointers, a 4 KiB buffer).
        let remote = unsafe {
            let mut stream = std::ptr::null_mut();
            hip.check("hipStreamCreate", (hip.stream_create)(&mut stream))?;
            let mut small = std::ptr::null_mut();
            hip.check("hipMalloc", (hip.malloc)(&mut small, 4096))?;
            let t = Instant::now();
            for _ in 0..opts.async_ops {
                hip.check("hipMemsetAsync", (hip.memset_async)(small, 0, 64, stream))?;
            }
            hip.check("hipStreamSynchronize", (hip.stream_synchronize)(stream))?;
            let rate = opts.async_ops as f64 / t.elapsed().as_secs_f64();
            hip.check("hipFree", (hip.free)(small))?;
            hip.check("hipStreamDestroy", (hip.stream_destroy)(stream))?;
            rate
        };
        let native = native::memset_rate(nb, opts.async_ops)?;
        r.memset = Some((native, remote));
        Ok(())
    });

    // 2b. SGEMM throughput: native cuBLAS (or the host BLAS) through the backend trait vs
    // libhipblas.so.3 (beside the client library) forwarded to the worker.
    section("sgemm", "sgemm (hipBLAS)", &mut errors, &mut || {
        let n = if opts.quick { 256 } else { 4096 };
        let reps = if opts.quick { 3 } else { 20 };
        let native = native::sgemm_gflops(nb, n, reps)?;
        let remote = remote_sgemm_gflops(hip, &opts.lib, n, reps)?;
        r.gemm = Some(GemmRun { n, reps, native, remote });
        Ok(())
    });

    // 3. Kernels: launch rate and the MLP, both sides from the same hiprtc source.
    let mut gpus: Option<(NativeGpu, RemoteGpu<'_>, Kernels, Kernels)> = None;
    section("kernels", "kernels (launch rate, MLP)", &mut errors, &mut || {
        let mut ng = NativeGpu::new(native_backend.clone())?;
        let mut rg = RemoteGpu::new(hip)?;
        let (nk, native_compile_s) = Kernels::load(&mut ng)?;
        let (rk, remote_compile_s) = Kernels::load(&mut rg)?;
        let (ng, rg, nk, rk) = gpus.insert((ng, rg, nk, rk));
        let mut l = Launches { n: opts.launches, native: Vec::new(), remote: Vec::new(), native_compile_s, remote_compile_s };
        for _ in 0..opts.trials.max(1) {
            l.native.push(workload::launch_rate(ng, nk.empty, opts.launches)?);
            l.remote.push(workload::launch_rate(rg, rk.empty, opts.launches)?);
        }
        r.launches = Some(l);
        let native_run = workload::mlp(ng, nk, &opts.mlp)?;
        let remote_run = workload::mlp(rg, rk, &opts.mlp)?;
        r.mlp = Some((native_run, remote_run));
        Ok(())
    });

    // 3b. Graphs: the kernel chain one by one and as a graph, on the kernels loaded above.
    section("graphs", "graphs (kernel chain)", &mut errors, &mut || {
        let Some((ng, rg, nk, rk)) = gpus.as_mut() else {
            return Err("no kernels (the kernels section failed before loading them)".into());
        };
        let runs = workload::kernel_chain(ng, nk, rg, rk, &opts.chain)?;
        let wrong = chain_mismatches(&runs);
        r.chain = Some(runs);
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(format!("wrong results: {}", wrong.join("; ")))
        }
    });
    drop(gpus);

    // 4. Copies, per size.
    section("copies", "copies", &mut errors, &mut || {
        let max = opts.max_bytes;
        let sizes = copy_sizes(max);
        let reps_for = |size: usize| (opts.copy_volume / size).clamp(3, 20_000);
        let mut nbuf = CopyBuffers::new(nb, max)?;
        // SAFETY: every call in the block follows the HIP API contracts: valid out-pointers,
        // buffers of `max` bytes.
        let (dev, pinned) = unsafe {
            let mut dev = std::ptr::null_mut();
            hip.check("hipMalloc", (hip.malloc)(&mut dev, max))?;
            let mut pinned: *mut c_void = std::ptr::null_mut();
            hip.check("hipHostMalloc", (hip.host_malloc)(&mut pinned, max, 0))?;
            std::ptr::write_bytes(pinned as *mut u8, 2, max);
            (dev, pinned)
        };
        let mut pageable = vec![1u8; max];
        let result = (|| -> Result<(), String> {
            for &size in &sizes {
                let reps = reps_for(size);
                let remote = |kind: i32, host: *mut c_void| -> Result<f64, String> {
                    let (dst, src) = if kind == 1 { (dev, host as *const c_void) } else { (host, dev as *const c_void) };
                    // SAFETY: `dev` and `host` hold at least `size` bytes.
                    unsafe {
                        hip.check("hipMemcpy", (hip.memcpy)(dst, src, size, kind))?; // warm-up
                        let t = Instant::now();
                        for _ in 0..reps {
                            hip.check("hipMemcpy", (hip.memcpy)(dst, src, size, kind))?;
                        }
                        Ok((size * reps) as f64 / t.elapsed().as_secs_f64() / 1e9)
                    }
                };
                let row = CopyRow {
                    bytes: size,
                    reps,
                    native_h2d: nbuf.gbps(true, size, reps)?,
                    native_d2h: nbuf.gbps(false, size, reps)?,
                    h2d_pageable: remote(1, pageable.as_mut_ptr().cast())?,
                    d2h_pageable: remote(2, pageable.as_mut_ptr().cast())?,
                    h2d_pinned: remote(1, pinned)?,
                    d2h_pinned: remote(2, pinned)?,
                    raw: raw_stream_gbps(size, reps)?,
                    cuda_pinned: None,
                };
                eprintln!(
                    "bench:   {:>8}: native {:.2}/{:.2}, remote {:.2}/{:.2} (pinned {:.2}/{:.2}), raw TCP {:.2} GB/s",
                    size_label(size),
                    row.native_h2d,
                    row.native_d2h,
                    row.h2d_pageable,
                    row.d2h_pageable,
                    row.h2d_pinned,
                    row.d2h_pinned,
                    row.raw
                );
                r.copies.push(row);
            }
            let plan: Vec<(usize, usize)> = sizes.iter().map(|&s| (s, reps_for(s))).collect();
            match native::cuda_pinned_gbps(nb, nbuf.dev, &plan) {
                None => {}
                Some(Ok(figures)) => {
                    for (row, f) in r.copies.iter_mut().zip(figures) {
                        row.cuda_pinned = Some(f);
                    }
                }
                Some(Err(e)) => r.cuda_pinned_note = Some(format!("the cuMemcpy pinned reference failed: {e}")),
            }
            Ok(())
        })();
        // SAFETY: allocated above, released once.
        unsafe {
            let _ = (hip.host_free)(pinned);
            let _ = (hip.free)(dev);
        }
        result
    });

    // 5. Parallel copies.
    section("parallel", "parallel copies", &mut errors, &mut || {
        let size = opts.parallel_bytes;
        for &k in &opts.streams {
            let reps = (opts.parallel_volume / (k * size)).max(2);
            let gbps = |(h2d, d2h): (Duration, Duration)| {
                let bytes = (k * reps * size) as f64;
                (bytes / h2d.as_secs_f64() / 1e9, bytes / d2h.as_secs_f64() / 1e9)
            };
            let mut push = |mode: &'static str, res: Result<(f64, f64), String>, errors: &mut Vec<String>| match res {
                Ok((h2d, d2h)) => {
                    eprintln!("bench:   K={k} {mode}: {h2d:.2} / {d2h:.2} GB/s");
                    r.parallel.push(ParRow { k, mode, h2d, d2h });
                }
                Err(e) => errors.push(format!("parallel copies, K={k}, {mode}: {e}")),
            };
            let mut errs = Vec::new();
            let native_res = timed_phases(k, &|| NativeCopier::new(nb, size), &|c: &mut NativeCopier<'_>, h2d| c.copy(h2d, reps)).map(gbps);
            push(NATIVE_THREADS, native_res, &mut errs);
            let remote_res = timed_phases(k, &|| RemoteCopier::new(hip, size), &|c: &mut RemoteCopier<'_>, h2d| c.copy(h2d, reps)).map(gbps);
            push(REMOTE_THREADS, remote_res, &mut errs);
            if opts.processes {
                push(REMOTE_PROCESSES, crate::child::processes_gbps(&opts.lib, k, size, reps), &mut errs);
            }
            let raw_res = timed_phases(
                k,
                &|| {
                    let mut ch = RawChannel::new(size).map_err(|e| e.to_string())?;
                    ch.send(1)?;
                    Ok(ch)
                },
                &|ch: &mut RawChannel, _| ch.send(reps),
            )
            .map(gbps);
            push(RAW_CONNECTIONS, raw_res, &mut errs);
            if !errs.is_empty() {
                return Err(errs.join("; "));
            }
        }
        Ok(())
    });

    // 5b. Peer copies between devices 0 and 1 (a note, not a failure, with one device).
    section("peer", "peer copies", &mut errors, &mut || {
        let volume = if opts.quick { opts.copy_volume } else { peer_bench::PEER_VOLUME };
        let run = peer_bench::run(nb, &opts.lib, opts.max_bytes, volume)?;
        if let peer_bench::PeerRun::NotRun(why) = &run {
            eprintln!("bench:   {why}");
        }
        r.peer = Some(run);
        Ok(())
    });

    // 6. The link figures: large copies, the small copy, the sync call and allocations,
    // native and per client variant (each a child process with its environment).
    section("link", "link figures", &mut errors, &mut || {
        let plan = &opts.link;
        let native = native::link_figures(nb, plan.big_bytes, plan.big_reps, plan.samples, plan.allocs, plan.alloc_bytes)?;
        eprintln!(
            "bench:   native: pinned {:.2}/{:.2}, 1 MiB pinned {:.2}/{:.2}, pageable {:.2}/{:.2} GB/s; 4 KiB H2D pinned {:.1}, pageable p50 {:.1} µs; sync p50 {:.1} µs; allocations {:.1} ms",
            native.pinned.0,
            native.pinned.1,
            native.mid_pinned.0,
            native.mid_pinned.1,
            native.pageable.0,
            native.pageable.1,
            native.small_pinned_h2d_us,
            native.small_h2d_p50_us,
            native.sync_p50_us,
            native.allocs_ms
        );
        let mut runs = Vec::new();
        for v in variants::variants(&opts.variants, opts.shm_worker.as_deref())? {
            let figures = match &v.unavailable {
                Some(why) => Err(why.clone()),
                None => variants::run(&opts.lib, &v, plan, opts.profile.as_deref()),
            };
            match &figures {
                Ok(f) => eprintln!(
                    "bench:   {}: pinned {:.2}/{:.2}, 1 MiB pinned {:.2}/{:.2}, pageable {:.2}/{:.2} GB/s; 4 KiB H2D p50 pinned {:.1}, pageable {:.1} µs; sync p50 {:.1} µs; allocations {:.1} ms",
                    v.name,
                    f.h2d_pinned,
                    f.d2h_pinned,
                    f.mid_pinned.0,
                    f.mid_pinned.1,
                    f.h2d_pageable,
                    f.d2h_pageable,
                    f.small_pinned_h2d_p50_us,
                    f.small_h2d_p50_us,
                    f.sync_p50_us,
                    f.allocs_ms
                ),
                Err(e) => eprintln!("bench:   {}: {e}", v.name),
            }
            runs.push((v, figures));
        }
        let failed: Vec<String> = runs
            .iter()
            .filter(|(v, f)| v.unavailable.is_none() && f.is_err())
            .map(|(v, f)| format!("{}: {}", v.name, f.as_ref().err().cloned().unwrap_or_default()))
            .collect();
        // What loopback TCP itself moves, measured here as the variants were.
        let raw_tcp = (|| -> Result<(f64, f64), String> {
            let mid = variants::MID_COPY.min(plan.big_bytes);
            let striped = (plan.big_bytes / RAW_STRIPES).max(1);
            Ok((raw_stream_gbps(mid, variants::mid_copy_reps(plan.samples))?, raw_streams_gbps(RAW_STRIPES, striped, plan.big_reps.max(1))?))
        })();
        let raw_tcp = match raw_tcp {
            Ok(r) => {
                eprintln!("bench:   raw TCP: 1 MiB one stream {:.2} GB/s, {RAW_STRIPES} streams {:.2} GB/s", r.0, r.1);
                Some(r)
            }
            Err(e) => {
                eprintln!("bench:   raw TCP: {e}");
                None
            }
        };
        r.link = Some(LinkFigures { native, raw_tcp, runs });
        if failed.is_empty() {
            Ok(())
        } else {
            Err(failed.join("; "))
        }
    });

    r.errors = errors;
    finish(r, native_backend.as_ref(), hip, opts)
}

/// The chain way `i` of [`CHAIN_WAYS`] in words.
fn chain_way(i: usize) -> String {
    let (side, graph) = CHAIN_WAYS[i];
    format!("{side} {}", if graph { "graph" } else { "one by one" })
}

/// Each way whose `y` is not exactly the expected one, in words.
fn chain_mismatches(c: &ChainRuns) -> Vec<String> {
    let mut wrong = Vec::new();
    for (i, run) in c.runs.iter().enumerate() {
        let differ: Vec<usize> = (0..c.expected.len()).filter(|&k| run.result.get(k).map(|v| v.to_bits()) != Some(c.expected[k].to_bits())).collect();
        if let Some(&first) = differ.first() {
            wrong.push(format!(
                "{}: {} of {} values differ (first at {first}: {}, expected {})",
                chain_way(i),
                differ.len(),
                c.expected.len(),
                run.result.get(first).map_or("missing".into(), |v| v.to_string()),
                c.expected[first]
            ));
        }
    }
    wrong
}

/// `ratio` against a target: "met", or by how much it is missed.
fn verdict(ratio: f64, target: f64, at_least: bool) -> String {
    let sign = if at_least { "≥" } else { "≤" };
    if !ratio.is_finite() {
        return format!("{sign} {target}× — not measured");
    }
    let met = if at_least { ratio >= target } else { ratio <= target };
    if met {
        format!("{sign} {target}× — met")
    } else {
        let by = (ratio - target).abs();
        format!("{sign} {target}× — **missed by {by:.3}× ({:.1} %)**", by / target * 100.0)
    }
}

fn target_json(name: &str, ratio: f64, target: f64, at_least: bool) -> Value {
    let met = ratio.is_finite() && if at_least { ratio >= target } else { ratio <= target };
    json!({
        "name": name, "ratio": r3(ratio), "target": target, "direction": if at_least { "at_least" } else { "at_most" },
        "met": met, "shortfall": if met || !ratio.is_finite() { 0.0 } else { r3((ratio - target).abs()) },
    })
}

/// What a figure of the link table must reach.
#[derive(Clone, Copy, Debug)]
enum Goal {
    /// remote / native at least this.
    RatioAtLeast(f64),
    /// remote / native (or the row's own ratio) at most this.
    RatioAtMost(f64),
    /// The remote figure itself at least this (in the row's unit).
    AtLeast(f64),
    /// The remote figure itself at most this.
    AtMost(f64),
    /// Shown for reference.
    None,
}

impl Goal {
    fn text(self, unit: &str) -> String {
        match self {
            Goal::RatioAtLeast(t) => format!("≥ {t}× native"),
            Goal::RatioAtMost(t) => format!("≤ {t}×"),
            Goal::AtLeast(t) => format!("≥ {t} {unit}"),
            Goal::AtMost(t) => format!("≤ {t} {unit}"),
            Goal::None => String::new(),
        }
    }

    /// Whether `remote` (with `ratio`) meets it; `None` when there is nothing to meet or the
    /// figure is missing.
    fn met(self, remote: f64, ratio: f64) -> Option<bool> {
        let (value, target, at_least) = match self {
            Goal::RatioAtLeast(t) => (ratio, t, true),
            Goal::RatioAtMost(t) => (ratio, t, false),
            Goal::AtLeast(t) => (remote, t, true),
            Goal::AtMost(t) => (remote, t, false),
            Goal::None => return None,
        };
        value.is_finite().then_some(if at_least { value >= target } else { value <= target })
    }

    fn has_target(self) -> bool {
        !matches!(self, Goal::None)
    }
}

/// One row of the link table.
struct Row {
    figure: String,
    variant: String,
    unit: &'static str,
    native: f64,
    remote: f64,
    ratio: f64,
    goal: Goal,
}

/// The "Targets: data at the speed of the link" table (markdown and JSON) from whatever the run measured.
fn link_table(r: &Results, opts: &BenchOptions) -> (String, Value) {
    let mut rows: Vec<Row> = Vec::new();
    let mut unavailable: Vec<(String, String)> = Vec::new();
    let mb = size_label(opts.link.big_bytes);
    if let Some(i) = &r.link {
        let n = &i.native;
        for (v, figures) in &i.runs {
            let f = match figures {
                Ok(f) => f,
                Err(e) => {
                    unavailable.push((v.name.clone(), e.clone()));
                    continue;
                }
            };
            let shm = v.name == "shm";
            let row = |figure: String, unit, native: f64, remote: f64, ratio: f64, goal| Row {
                figure,
                variant: v.name.clone(),
                unit,
                native,
                remote,
                ratio,
                goal,
            };
            // TCP: 40 % of the H100's PCIe link; same-host: 0.8× native pinned.
            let pinned_goal = if shm { Goal::RatioAtLeast(0.8) } else { Goal::AtLeast(22.0) };
            rows.push(row(format!("{mb} pinned H2D"), "GB/s", n.pinned.0, f.h2d_pinned, f.h2d_pinned / n.pinned.0, pinned_goal));
            rows.push(row(format!("{mb} pinned D2H"), "GB/s", n.pinned.1, f.d2h_pinned, f.d2h_pinned / n.pinned.1, pinned_goal));
            // 1 MiB (below the stripes' threshold): a third of native over one TCP
            // connection, 0.8× over the same-host transport.
            let mid_goal = Goal::RatioAtLeast(if shm { 0.8 } else { 0.3 });
            let mid = size_label(crate::variants::MID_COPY.min(opts.link.big_bytes));
            rows.push(row(format!("{mid} pinned H2D"), "GB/s", n.mid_pinned.0, f.mid_pinned.0, f.mid_pinned.0 / n.mid_pinned.0, mid_goal));
            rows.push(row(format!("{mid} pinned D2H"), "GB/s", n.mid_pinned.1, f.mid_pinned.1, f.mid_pinned.1 / n.mid_pinned.1, mid_goal));
            rows.push(row(
                "4 KiB pinned H2D `hipMemcpy` p50, worker idle (native: mean of back-to-back copies)".into(),
                "µs",
                n.small_pinned_h2d_us,
                f.small_pinned_h2d_p50_us,
                f.small_pinned_h2d_p50_us / n.small_pinned_h2d_us,
                if shm { Goal::RatioAtMost(1.0) } else { Goal::None },
            ));
            rows.push(row(
                format!("{mb} pageable H2D"),
                "GB/s",
                n.pageable.0,
                f.h2d_pageable,
                f.h2d_pageable / n.pageable.0,
                Goal::RatioAtLeast(0.8),
            ));
            rows.push(row(
                format!("{mb} pageable D2H"),
                "GB/s",
                n.pageable.1,
                f.d2h_pageable,
                f.d2h_pageable / n.pageable.1,
                Goal::RatioAtLeast(0.8),
            ));
            rows.push(row(
                "4 KiB H2D `hipMemcpy` p50, worker idle (ratio: / this variant's sync call p50)".into(),
                "µs",
                n.small_h2d_p50_us,
                f.small_h2d_p50_us,
                f.small_h2d_p50_us / f.sync_p50_us,
                Goal::RatioAtMost(1.0),
            ));
            rows.push(row(
                "4 KiB H2D `hipMemcpy` back to back (mean per copy; native: its p50)".into(),
                "µs",
                n.small_h2d_p50_us,
                f.small_h2d_back_to_back_us,
                f.small_h2d_back_to_back_us / n.small_h2d_p50_us,
                Goal::None,
            ));
            rows.push(row(
                "sync call p50 (`hipDeviceSynchronize`)".into(),
                "µs",
                n.sync_p50_us,
                f.sync_p50_us,
                f.sync_p50_us / n.sync_p50_us,
                if shm { Goal::AtMost(3.0) } else { Goal::None },
            ));
            rows.push(row(
                format!("{} × (hipMalloc {} + hipFree) + 1 sync", opts.link.allocs, size_label(opts.link.alloc_bytes)),
                "ms",
                n.allocs_ms,
                f.allocs_ms,
                f.allocs_ms / n.allocs_ms,
                Goal::RatioAtMost(1.5),
            ));
        }
    }
    if let Some((one, striped)) = r.link.as_ref().and_then(|i| i.raw_tcp) {
        // The loopback's ceilings for the TCP variants (ratio: / native pinned).
        let n = &r.link.as_ref().expect("link figures").native;
        let mid = size_label(crate::variants::MID_COPY.min(opts.link.big_bytes));
        rows.push(Row {
            figure: format!("{mid} messages, raw TCP, one stream (the ceiling of `tcp`)"),
            variant: "raw TCP".into(),
            unit: "GB/s",
            native: n.mid_pinned.0,
            remote: one,
            ratio: one / n.mid_pinned.0,
            goal: Goal::None,
        });
        rows.push(Row {
            figure: format!("{mb} over {RAW_STRIPES} raw TCP streams (the ceiling of `tcp-striped`)"),
            variant: "raw TCP".into(),
            unit: "GB/s",
            native: n.pinned.0,
            remote: striped,
            ratio: striped / n.pinned.0,
            goal: Goal::None,
        });
    }
    let worker_transport = if opts.worker.starts_with("the worker at") { "the configured worker" } else { "loopback TCP" };
    if let Some(l) = &r.launches {
        let (n, rm) = (median(&l.native), median(&l.remote));
        rows.push(Row {
            figure: format!("empty-kernel launch rate ({} launches + 1 sync)", l.n),
            variant: worker_transport.into(),
            unit: "/s",
            native: n,
            remote: rm,
            ratio: rm / n,
            goal: Goal::RatioAtLeast(0.95),
        });
    }
    if let Some(c) = &r.chain {
        let med: Vec<f64> = c.runs.iter().map(|run| median(&run.step_ms)).collect();
        rows.push(Row {
            figure: format!("step of {} small kernels + 1 sync (one by one)", opts.chain.kernels),
            variant: worker_transport.into(),
            unit: "ms",
            native: med[0],
            remote: med[2],
            ratio: med[2] / med[0],
            goal: Goal::RatioAtMost(1.05),
        });
    }
    let mut md = String::new();
    if rows.is_empty() && unavailable.is_empty() {
        return (md, Value::Null);
    }
    let _ = writeln!(md, "## Targets: data at the speed of the link\n");
    if let Some(i) = &r.link {
        let _ = writeln!(
            md,
            "Native: {}. Remote: the client library in a child process per variant, with the variant's environment ({}). \
             The variant's transport is whichever the library negotiates under that environment.\n",
            i.native.how,
            i.runs
                .iter()
                .map(|(v, _)| format!(
                    "`{}`: {}",
                    v.name,
                    if v.env.is_empty() { "—".to_string() } else { v.env.iter().map(|(k, x)| format!("{k}={x}")).collect::<Vec<_>>().join(" ") }
                ))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    let _ = writeln!(md, "| figure | variant | native | remote | ratio | target | verdict |");
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    let fmt = |v: f64, unit: &str| match unit {
        "GB/s" => format!("{v:.2} GB/s"),
        "µs" => format!("{v:.1} µs"),
        "ms" => format!("{v:.2} ms"),
        _ => format!("{v:.0} {unit}"),
    };
    let mut json_rows = Vec::new();
    for row in &rows {
        let met = row.goal.met(row.remote, row.ratio);
        let verdict = match met {
            Some(true) => "met".to_string(),
            Some(false) => "**missed**".to_string(),
            None if row.goal.has_target() => "not measured".to_string(),
            None => "—".to_string(),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:.3}× | {} | {verdict} |",
            row.figure,
            row.variant,
            fmt(row.native, row.unit),
            fmt(row.remote, row.unit),
            row.ratio,
            row.goal.text(row.unit)
        );
        json_rows.push(json!({
            "figure": row.figure, "variant": row.variant, "unit": row.unit, "native": r3(row.native), "remote": r3(row.remote),
            "ratio": r3(row.ratio), "target": row.goal.text(row.unit), "met": met,
        }));
    }
    for (name, why) in &unavailable {
        let _ = writeln!(md, "| all figures | {name} | | | | | {why} |");
        json_rows.push(json!({"figure": "all", "variant": name, "unavailable": why}));
    }
    md.push('\n');
    (
        md,
        json!({"rows": json_rows, "sizes": {"big_bytes": opts.link.big_bytes, "big_reps": opts.link.big_reps, "samples": opts.link.samples, "allocs": opts.link.allocs, "alloc_bytes": opts.link.alloc_bytes}}),
    )
}

fn finish(r: Results, nb: &dyn Backend, hip: &Hip, opts: &BenchOptions) -> Report {
    let props = nb.device_properties(0).ok();
    let device = props.as_ref().map(|p| format!("{} ({})", p.name, p.gcn_arch_name)).unwrap_or_else(|| "?".into());
    let remote_device = {
        let mut name = [0 as std::ffi::c_char; 256];
        // SAFETY: a 256-byte buffer.
        let ok = unsafe { (hip.device_get_name)(name.as_mut_ptr(), 256, 0) } == 0;
        // SAFETY: NUL-terminated by hipDeviceGetName on success.
        ok.then(|| unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned())
    };
    let mut md = String::new();
    let mut targets: Vec<(String, f64, f64, bool)> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let _ = writeln!(md, "# hip-remote bench\n");
    let _ = writeln!(
        md,
        "Backend **{}**, device {device}. *Native*: that backend called in-process through the `Backend` trait (no network). \
         *Remote*: the real client library (`{}`) over loopback TCP to {}. *Raw TCP*: plain sockets over the same loopback, same \
         socket options.{}\n",
        nb.name(),
        opts.lib.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default(),
        opts.worker,
        if opts.quick { " **Quick run** (`--quick`: small sizes; figures are not meaningful)." } else { "" }
    );
    if let (Some(p), Some(remote)) = (&props, &remote_device) {
        if &p.name != remote {
            notes.push(format!("the remote worker's device 0 is \"{remote}\", the native backend's \"{}\": the two sides differ", p.name));
        }
    }

    let (link_md, link_json) = link_table(&r, opts);
    md.push_str(&link_md);
    let peer_json = r.peer.as_ref().map(|run| {
        let (peer_md, json) = peer_bench::report(run);
        md.push_str(&peer_md);
        json
    });

    // Summary.
    let _ = writeln!(md, "## Summary\n");
    let _ = writeln!(md, "| figure | native (in-process) | remote (loopback TCP) | raw TCP | remote / native | remote / raw TCP | target |");
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    let mut j = serde_json::Map::new();
    j.insert("schema".into(), json!(2));
    j.insert("link".into(), link_json);
    if let Some(peer) = peer_json {
        j.insert("peer_copies".into(), peer);
    }
    j.insert(
        "setup".into(),
        json!({
            "backend": nb.name(), "device": device, "remote_device": remote_device, "worker": opts.worker, "quick": opts.quick,
            "lib": opts.lib.display().to_string(), "round_trips": opts.round_trips, "async_ops": opts.async_ops,
            "launches": opts.launches, "trials": opts.trials, "max_bytes": opts.max_bytes, "copy_volume": opts.copy_volume,
            "streams": opts.streams, "processes": opts.processes, "parallel_bytes": opts.parallel_bytes,
            "chain_kernels": opts.chain.kernels, "chain_steps": opts.chain.steps,
        }),
    );
    if let Some(l) = &r.latency {
        let ratio = l.remote.p(0.5) / l.raw.p(0.5);
        let v = verdict(ratio, 1.2, false);
        targets.push(("sync round trip p50, remote / raw TCP".to_string(), ratio, 1.2, false));
        for (q, name, target) in [(0.5, "p50", v.as_str()), (0.99, "p99", ""), (0.999, "p99.9", "")] {
            let _ = writeln!(
                md,
                "| sync call round trip {name} (remote `hipDeviceSynchronize`; native `device_synchronize`; raw 64 B ping-pong, same spin) | {:.1} µs | {:.1} µs | {:.1} µs | {:.2}× | {:.2}× | {} |",
                l.native.p(q),
                l.remote.p(q),
                l.raw.p(q),
                l.remote.p(q) / l.native.p(q),
                l.remote.p(q) / l.raw.p(q),
                if target.is_empty() { String::new() } else { format!("remote / raw {target}") }
            );
        }
        j.insert("round_trip_us".into(), json!({"native": l.native.json(), "remote": l.remote.json(), "raw_tcp": l.raw.json()}));
    }
    if let Some((native, remote)) = r.memset {
        let _ = writeln!(
            md,
            "| async op rate (64 B memset, fire-and-forget, one sync) | {native:.0} ops/s | {remote:.0} ops/s | | {:.2}× | | |",
            remote / native
        );
        j.insert("async_ops_per_s".into(), json!({"native": native.round(), "remote": remote.round(), "ratio": r3(remote / native)}));
    }
    if let Some(g) = &r.gemm {
        let ratio = g.remote / g.native;
        let v = verdict(ratio, 0.95, true);
        targets.push((format!("{n}² sgemm throughput, remote / native", n = g.n), ratio, 0.95, true));
        let _ = writeln!(
            md,
            "| {n}² sgemm ({reps} on one stream + 1 sync; native: the backend's BLAS in-process; remote: libhipblas) | {:.1} GFLOP/s | {:.1} GFLOP/s | | {ratio:.3}× | | remote / native {v} |",
            g.native,
            g.remote,
            n = g.n,
            reps = g.reps
        );
        j.insert("sgemm_gflops".into(), json!({"n": g.n, "reps": g.reps, "native": r3(g.native), "remote": r3(g.remote), "ratio": r3(ratio)}));
    }
    if let Some(l) = &r.launches {
        let (n, rm) = (median(&l.native), median(&l.remote));
        let v = verdict(rm / n, 0.95, true);
        targets.push(("empty-kernel launch rate, remote / native".to_string(), rm / n, 0.95, true));
        let _ = writeln!(
            md,
            "| empty-kernel launch rate ({} fire-and-forget launches + 1 sync, median of {}) | {n:.0} /s | {rm:.0} /s | | {:.3}× | | remote / native {v} |",
            l.n,
            l.native.len(),
            rm / n
        );
        j.insert(
            "launch_rate".into(),
            json!({
                "launches": l.n, "native_per_s": n.round(), "remote_per_s": rm.round(), "ratio": r3(rm / n),
                "native_trials": l.native.iter().map(|v| v.round()).collect::<Vec<_>>(),
                "remote_trials": l.remote.iter().map(|v| v.round()).collect::<Vec<_>>(),
                "native_compile_load_s": r3(l.native_compile_s), "remote_compile_load_s": r3(l.remote_compile_s),
            }),
        );
    }
    if let Some((nrun, rrun)) = &r.mlp {
        let c = &opts.mlp;
        let (n, rm) = (median(&nrun.step_ms), median(&rrun.step_ms));
        let ratio = n / rm;
        let v = verdict(ratio, 0.95, true);
        targets.push(("MLP training throughput, remote / native".to_string(), ratio, 0.95, true));
        let _ = writeln!(
            md,
            "| MLP training step (batch {}, {}→{}→{}, {} launches + 1 sync per step; median of {}) | {n:.3} ms | {rm:.3} ms | | {ratio:.3}× (throughput) | | remote / native {v} |",
            c.batch,
            c.input,
            c.hidden,
            c.classes,
            c.launches_per_step(),
            nrun.step_ms.len()
        );
        let same = nrun.losses == rrun.losses;
        if !same {
            notes.push("the MLP losses differ between native and remote (they should be bit-identical)".into());
        }
        let side = |run: &MlpRun| {
            let med = median(&run.step_ms);
            json!({
                "step_ms_median": r3(med), "step_ms_mean": r3(run.step_ms.iter().sum::<f64>() / run.step_ms.len().max(1) as f64),
                "step_ms": run.step_ms.iter().map(|v| r3(*v)).collect::<Vec<_>>(),
                "samples_per_s": (c.batch as f64 / med * 1e3).round(), "launches_per_s": (c.launches_per_step() as f64 / med * 1e3).round(),
                "losses": run.losses,
            })
        };
        j.insert(
            "mlp".into(),
            json!({
                "config": {"batch": c.batch, "input": c.input, "hidden": c.hidden, "classes": c.classes, "micro_batch": c.micro,
                           "steps": c.steps, "warmup": c.warmup, "lr": c.lr, "data_batches": c.data_batches},
                "launches_per_step": c.launches_per_step(), "native": side(nrun), "remote": side(rrun),
                "throughput_ratio": r3(ratio), "losses_identical": same,
            }),
        );
    }
    if let Some(c) = &r.chain {
        let cfg = &opts.chain;
        let med: Vec<f64> = c.runs.iter().map(|run| median(&run.step_ms)).collect();
        let (native_one, native_graph, remote_one, remote_graph) = (med[0], med[1], med[2], med[3]);
        let ratio = native_graph / remote_graph;
        targets.push(("graph replay throughput, remote / native".to_string(), ratio, 0.95, true));
        let _ = writeln!(
            md,
            "| kernel chain one by one ({} small kernels launched + 1 sync per step; median of {}) | {native_one:.3} ms | {remote_one:.3} ms | | {:.3}× (throughput) | | |",
            cfg.kernels,
            cfg.steps,
            native_one / remote_one
        );
        let _ = writeln!(
            md,
            "| kernel chain as a graph ({} serial kernel nodes: 1 graph launch + 1 sync per step) | {native_graph:.3} ms | {remote_graph:.3} ms | | {ratio:.3}× (throughput) | | remote / native {} |",
            cfg.kernels,
            verdict(ratio, 0.95, true)
        );
        let wrong = chain_mismatches(c);
        let mut ways = serde_json::Map::new();
        for (i, (run, med)) in c.runs.iter().zip(&med).enumerate() {
            let (side, graph) = CHAIN_WAYS[i];
            ways.insert(
                format!("{side}_{}", if graph { "graph" } else { "one_by_one" }),
                json!({
                    "step_ms_median": r3(*med), "step_ms_mean": r3(run.step_ms.iter().sum::<f64>() / run.step_ms.len().max(1) as f64),
                    "step_ms": run.step_ms.iter().map(|v| r3(*v)).collect::<Vec<_>>(),
                    "kernels_per_s": (cfg.kernels as f64 / med * 1e3).round(), "instantiate_ms": run.instantiate_ms.map(r3),
                }),
            );
        }
        j.insert(
            "graph".into(),
            json!({
                "config": {"kernels": cfg.kernels, "floats": cfg.floats, "steps": cfg.steps, "warmup": cfg.warmup},
                "ways": ways,
                "throughput_ratios": {
                    "remote_over_native_one_by_one": r3(native_one / remote_one), "remote_over_native_graph": r3(ratio),
                    "graph_over_one_by_one_native": r3(native_one / native_graph), "graph_over_one_by_one_remote": r3(remote_one / remote_graph),
                },
                "results_correct": wrong.is_empty(), "result_mismatches": wrong,
            }),
        );
    }
    if let Some(last) = r.copies.last() {
        for (dir, native, remote) in [("H2D", last.native_h2d, last.h2d_pageable), ("D2H", last.native_d2h, last.d2h_pageable)] {
            let ratio = remote / last.raw;
            targets.push((format!("{} {dir} pageable, remote / raw TCP", size_label(last.bytes)), ratio, 0.9, true));
            let _ = writeln!(
                md,
                "| {} {dir} pageable copy | {native:.2} GB/s | {remote:.2} GB/s | {:.2} GB/s | {:.2}× | {ratio:.2}× | remote / raw {} |",
                size_label(last.bytes),
                last.raw,
                remote / native,
                verdict(ratio, 0.9, true)
            );
        }
    }

    // Copies.
    if !r.copies.is_empty() {
        let cuda = r.copies.iter().any(|c| c.cuda_pinned.is_some());
        let _ = writeln!(md, "\n## Copies (GB/s)\n");
        let _ = writeln!(
            md,
            "Native: the backend's `memcpy_htod_sync`/`memcpy_dtoh_sync` from pageable memory. Remote: `hipMemcpy` from pageable \
             (`malloc`) and pinned (`hipHostMalloc`) memory. Raw TCP: one connection, one acknowledged message per copy.{}\n",
            if cuda { " CUDA pinned: `cuMemcpyHtoD`/`cuMemcpyDtoH` from `cuMemAllocHost` memory, no backend (the PCIe reference)." } else { "" }
        );
        let _ = write!(md, "| size | H2D native | H2D remote pageable | H2D remote pinned | H2D remote / native | D2H native | D2H remote pageable | D2H remote pinned | D2H remote / native | raw TCP |");
        let _ = writeln!(md, "{}", if cuda { " CUDA pinned H2D / D2H |" } else { "" });
        let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|{}", if cuda { "---|" } else { "" });
        for c in &r.copies {
            let _ = write!(
                md,
                "| {} | {:.2} | {:.2} | {:.2} | {:.2}× | {:.2} | {:.2} | {:.2} | {:.2}× | {:.2} |",
                size_label(c.bytes),
                c.native_h2d,
                c.h2d_pageable,
                c.h2d_pinned,
                c.h2d_pageable.max(c.h2d_pinned) / c.native_h2d,
                c.native_d2h,
                c.d2h_pageable,
                c.d2h_pinned,
                c.d2h_pageable.max(c.d2h_pinned) / c.native_d2h,
                c.raw
            );
            let _ = writeln!(
                md,
                "{}",
                c.cuda_pinned.map(|(h, d)| format!(" {h:.2} / {d:.2} |")).unwrap_or_else(|| if cuda { " |".into() } else { String::new() })
            );
        }
        let _ = writeln!(md, "\nremote / native uses the better of pageable and pinned.");
        j.insert(
            "copies".into(),
            Value::Array(
                r.copies
                    .iter()
                    .map(|c| {
                        json!({
                            "bytes": c.bytes, "reps": c.reps,
                            "native_h2d_gbps": r3(c.native_h2d), "native_d2h_gbps": r3(c.native_d2h),
                            "remote_h2d_pageable_gbps": r3(c.h2d_pageable), "remote_d2h_pageable_gbps": r3(c.d2h_pageable),
                            "remote_h2d_pinned_gbps": r3(c.h2d_pinned), "remote_d2h_pinned_gbps": r3(c.d2h_pinned),
                            "raw_tcp_gbps": r3(c.raw),
                            "cuda_pinned_h2d_gbps": c.cuda_pinned.map(|p| r3(p.0)), "cuda_pinned_d2h_gbps": c.cuda_pinned.map(|p| r3(p.1)),
                        })
                    })
                    .collect(),
            ),
        );
    }
    if let Some(note) = &r.cuda_pinned_note {
        notes.push(note.clone());
    }

    // Parallel copies.
    if !r.parallel.is_empty() {
        let reference = r.copies.iter().rev().find(|c| c.bytes <= opts.parallel_bytes).or(r.copies.last());
        let pcie = reference.and_then(|c| c.cuda_pinned);
        let _ = writeln!(md, "\n## Parallel copies ({} per copy, aggregate GB/s)\n", size_label(opts.parallel_bytes));
        let _ = writeln!(
            md,
            "Each of K threads has its own stream, device buffer and host buffer (remote: pinned; `hipMemcpyAsync` + \
             `hipStreamSynchronize` per copy). The client library keeps **one connection per process**, so K remote threads share \
             one TCP stream; K processes (this binary re-executed) have one connection each. Ratios compare with the native \
             figure for the same K{}.\n",
            if pcie.is_some() { " and with one-stream CUDA pinned copies of the same size (native PCIe)" } else { "" }
        );
        let _ = write!(md, "| K | mode | H2D | D2H | H2D / native | D2H / native |");
        let _ = writeln!(md, "{}", if pcie.is_some() { " H2D / PCIe | D2H / PCIe |" } else { "" });
        let _ = writeln!(md, "|---|---|---|---|---|---|{}", if pcie.is_some() { "---|---|" } else { "" });
        let mut rows = Vec::new();
        for p in &r.parallel {
            let native = r.parallel.iter().find(|q| q.k == p.k && q.mode == NATIVE_THREADS);
            let (rh, rd) = native.map(|n| (p.h2d / n.h2d, p.d2h / n.d2h)).unwrap_or((f64::NAN, f64::NAN));
            let _ = write!(md, "| {} | {} | {:.2} | {:.2} | {rh:.2}× | {rd:.2}× |", p.k, p.mode, p.h2d, p.d2h);
            let _ = writeln!(md, "{}", pcie.map(|(h, d)| format!(" {:.2}× | {:.2}× |", p.h2d / h, p.d2h / d)).unwrap_or_default());
            rows.push(json!({
                "k": p.k, "mode": p.mode, "h2d_gbps": r3(p.h2d), "d2h_gbps": r3(p.d2h),
                "h2d_vs_native": r3(rh), "d2h_vs_native": r3(rd),
                "h2d_vs_pcie": pcie.map(|(h, _)| r3(p.h2d / h)), "d2h_vs_pcie": pcie.map(|(_, d)| r3(p.d2h / d)),
            }));
        }
        j.insert("parallel".into(), json!({"bytes": opts.parallel_bytes, "rows": rows}));
    }

    // MLP details.
    if let Some((nrun, rrun)) = &r.mlp {
        let c = &opts.mlp;
        let _ = writeln!(md, "\n## MLP training loop\n");
        let _ = writeln!(
            md,
            "2-layer MLP ({}→{} ReLU→{} softmax cross-entropy, SGD lr {}), batch {} as {} micro-batches of {} with gradient \
             accumulation: {} kernel launches (naive matmul, bias+ReLU, softmax-CE gradient, ReLU gradient, column sums, SGD, loss \
             mean; no `__shared__`) and one synchronising 4-byte loss read per step. Synthetic teacher-labelled data, {} batches \
             cycled; {} warm-up + {} timed steps per side.\n",
            c.input,
            c.hidden,
            c.classes,
            c.lr,
            c.batch,
            c.batch / c.micro,
            c.micro,
            c.launches_per_step(),
            c.data_batches,
            c.warmup,
            c.steps
        );
        let (n, rm) = (median(&nrun.step_ms), median(&rrun.step_ms));
        let _ = writeln!(md, "| side | step median | step mean | samples/s | launches/s | loss first → last |");
        let _ = writeln!(md, "|---|---|---|---|---|---|");
        for (name, run, med) in [("native", nrun, n), ("remote", rrun, rm)] {
            let mean = run.step_ms.iter().sum::<f64>() / run.step_ms.len().max(1) as f64;
            let _ = writeln!(
                md,
                "| {name} | {med:.3} ms | {mean:.3} ms | {:.0} | {:.0} | {:.4} → {:.4} |",
                c.batch as f64 / med * 1e3,
                c.launches_per_step() as f64 / med * 1e3,
                run.losses.first().copied().unwrap_or(f32::NAN),
                run.losses.last().copied().unwrap_or(f32::NAN)
            );
        }
        let _ = writeln!(md, "\nLosses native vs remote: {}.", if nrun.losses == rrun.losses { "bit-identical at every step" } else { "**differ**" });
    }

    // Graph details.
    if let Some(c) = &r.chain {
        let cfg = &opts.chain;
        let _ = writeln!(md, "\n## Graphs: a step of {} kernels, one by one and as a graph\n", cfg.kernels);
        let _ = writeln!(
            md,
            "Each step runs {} `axpy` kernels (`y = a·x + y` over {} floats, each after the one before: they all update the same \
             `y`) and one stream synchronize. One by one: {} launches (native: the backend's `launch_kernel`; remote: \
             `hipModuleLaunchKernel`). Graph: the same launches recorded once as a chain of kernel nodes and instantiated (native: \
             a `GraphPlan` through the backend's `graph_instantiate`; remote: `hipGraphCreate` + `hipGraphAddKernelNode` + \
             `hipGraphInstantiate`), then one `graph_launch` / `hipGraphLaunch` per step. The four ways alternate step by step; \
             {} warm-up + {} timed steps each.\n",
            cfg.kernels, cfg.floats, cfg.kernels, cfg.warmup, cfg.steps
        );
        let med: Vec<f64> = c.runs.iter().map(|run| median(&run.step_ms)).collect();
        let _ = writeln!(md, "| way | step median | step mean | kernels/s | record + instantiate |");
        let _ = writeln!(md, "|---|---|---|---|---|");
        for (i, (run, med)) in c.runs.iter().zip(&med).enumerate() {
            let mean = run.step_ms.iter().sum::<f64>() / run.step_ms.len().max(1) as f64;
            let _ = writeln!(
                md,
                "| {} | {med:.3} ms | {mean:.3} ms | {:.0} | {} |",
                chain_way(i),
                cfg.kernels as f64 / med * 1e3,
                run.instantiate_ms.map(|v| format!("{v:.1} ms")).unwrap_or_default()
            );
        }
        let _ = writeln!(
            md,
            "\nThroughput ratios: remote / native one by one {:.3}×; remote / native graph {:.3}× ({}); graph / one by one: \
             native {:.2}×, remote {:.2}×.",
            med[0] / med[2],
            med[1] / med[3],
            verdict(med[1] / med[3], 0.95, true),
            med[0] / med[1],
            med[2] / med[3]
        );
        let wrong = chain_mismatches(c);
        if wrong.is_empty() {
            let _ = writeln!(md, "\nResults: every way ended with exactly the expected `y` ({} floats).", c.expected.len());
        } else {
            let _ = writeln!(md, "\nResults: **wrong**: {}.", wrong.join("; "));
        }
    }

    let _ = writeln!(md, "\n## Targets\n");
    for (name, ratio, target, at_least) in &targets {
        let _ = writeln!(md, "- {name}: {ratio:.3}×, {}", verdict(*ratio, *target, *at_least));
    }
    j.insert("targets".into(), Value::Array(targets.iter().map(|(n, r, t, a)| target_json(n, *r, *t, *a)).collect()));
    for e in &r.errors {
        notes.push(format!("**section failed** — {e}"));
    }
    if !notes.is_empty() {
        let _ = writeln!(md, "\n## Notes\n");
        for n in &notes {
            let _ = writeln!(md, "- {n}");
        }
    }
    j.insert("notes".into(), json!(notes));
    j.insert("errors".into(), json!(r.errors));

    let bandwidth = (!r.copies.is_empty()).then(|| bandwidth_plot(&r.copies, nb.name()));
    let latency = r.latency.as_ref().map(|l| latency_plot(l, nb.name()));
    Report { json: Value::Object(j), markdown: md, errors: r.errors, bandwidth, latency }
}

fn bandwidth_plot(copies: &[CopyRow], backend: &str) -> Canvas {
    let (w, h) = (1400, 560);
    let mut c = Canvas::new(w, h);
    let ticks: Vec<(f64, String)> = copies.iter().map(|r| (r.bytes as f64, size_label(r.bytes).replace(' ', ""))).collect();
    let (min, max) = (copies[0].bytes as f64, copies[copies.len() - 1].bytes as f64);
    let (min, max) = if max > min { (min, max) } else { (min / 2.0, max * 2.0) };
    let panel = |c: &mut Canvas, x0: i64, h2d: bool| {
        let pick = |f: &dyn Fn(&CopyRow) -> f64| -> Vec<(f64, f64)> { copies.iter().map(|r| (r.bytes as f64, f(r))).collect() };
        let mut series = vec![
            Series {
                name: "native (backend in-process)".into(),
                color: PALETTE[0],
                points: pick(&|r| if h2d { r.native_h2d } else { r.native_d2h }),
                markers: true,
            },
            Series {
                name: "remote, pageable".into(),
                color: PALETTE[1],
                points: pick(&|r| if h2d { r.h2d_pageable } else { r.d2h_pageable }),
                markers: true,
            },
            Series {
                name: "remote, pinned".into(),
                color: PALETTE[3],
                points: pick(&|r| if h2d { r.h2d_pinned } else { r.d2h_pinned }),
                markers: true,
            },
            Series { name: "raw TCP (1 connection)".into(), color: PALETTE[2], points: pick(&|r| r.raw), markers: true },
        ];
        if copies.iter().all(|r| r.cuda_pinned.is_some()) {
            series.push(Series {
                name: "CUDA pinned cuMemcpy (PCIe)".into(),
                color: PALETTE[4],
                points: pick(&|r| r.cuda_pinned.map(|p| if h2d { p.0 } else { p.1 }).unwrap_or(f64::NAN)),
                markers: true,
            });
        }
        let top = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).filter(|v| v.is_finite()).fold(0.0, f64::max);
        let xa = Axis { label: "copy size".into(), log: true, min, max, ticks: ticks.clone() };
        let ya = Axis::linear("GB/s", 0.0, top * 1.15);
        let title = format!("{} bandwidth ({backend} backend)", if h2d { "host -> device" } else { "device -> host" });
        plot::chart(c, (x0, 0, w as i64 / 2, h as i64), &title, &xa, &ya, &series);
    };
    panel(&mut c, 0, true);
    panel(&mut c, w as i64 / 2, false);
    c
}

fn latency_plot(l: &Latency, backend: &str) -> Canvas {
    let (w, h) = (900, 560);
    let mut c = Canvas::new(w, h);
    let cdf = |d: &Dist| -> Vec<(f64, f64)> {
        let n = d.0.len();
        let step = (n / 1500).max(1);
        let mut pts: Vec<(f64, f64)> = (0..n).step_by(step).map(|i| (d.0[i].max(1e-3), (i + 1) as f64 / n as f64)).collect();
        if let Some(&last) = d.0.last() {
            pts.push((last.max(1e-3), 1.0));
        }
        pts
    };
    let series = vec![
        Series {
            name: format!("native device_synchronize (p50 {:.1} µs)", l.native.p(0.5)),
            color: PALETTE[0],
            points: cdf(&l.native),
            markers: false,
        },
        Series {
            name: format!("remote hipDeviceSynchronize (p50 {:.1} µs)", l.remote.p(0.5)),
            color: PALETTE[1],
            points: cdf(&l.remote),
            markers: false,
        },
        Series { name: format!("raw TCP 64 B ping-pong (p50 {:.1} µs)", l.raw.p(0.5)), color: PALETTE[2], points: cdf(&l.raw), markers: false },
    ];
    let lo = [&l.native, &l.remote, &l.raw].iter().map(|d| d.p(0.0)).fold(f64::INFINITY, f64::min).max(1e-3);
    let hi = [&l.native, &l.remote, &l.raw].iter().map(|d| d.p(1.0)).fold(0.0, f64::max);
    let xa = Axis::log10("round trip, µs (log scale)", lo, hi);
    let ya = Axis::linear("fraction of calls <= x", 0.0, 1.0);
    plot::chart(&mut c, (0, 0, w as i64, h as i64), &format!("sync call round trip CDF ({backend} backend)"), &xa, &ya, &series);
    c
}

/// One SGEMM figure: GFLOP/s of `reps` `n × n × n` products, each side.
struct GemmRun {
    n: usize,
    reps: usize,
    native: f64,
    remote: f64,
}

/// `hipblasSgemm` through hip-remote's `libhipblas.so.3` (found beside `lib`), `reps` products
/// of `n × n` matrices on one stream, after one warm-up; GFLOP/s.
fn remote_sgemm_gflops(hip: &Hip, lib: &Path, n: usize, reps: usize) -> Result<f64, String> {
    use std::ffi::{c_int, c_void};
    type CreateFn = unsafe extern "C" fn(*mut *mut c_void) -> c_int;
    type DestroyFn = unsafe extern "C" fn(*mut c_void) -> c_int;
    type SetStreamFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
    #[allow(clippy::type_complexity)]
    type SgemmFn = unsafe extern "C" fn(
        *mut c_void,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        *const f32,
        *const c_void,
        c_int,
        *const c_void,
        c_int,
        *const f32,
        *mut c_void,
        c_int,
    ) -> c_int;
    let path = lib.with_file_name("libhipblas.so.3");
    // SAFETY: hip-remote's libhipblas; its initialisers have no side effects.
    let blas = unsafe { libloading::Library::new(&path) }.map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: the symbols have hipBLAS's signatures.
    let (create, destroy, set_stream, sgemm) = unsafe {
        let get = |e: libloading::Error| format!("libhipblas: {e}");
        (
            *blas.get::<CreateFn>(b"hipblasCreate\0").map_err(get)?,
            *blas.get::<DestroyFn>(b"hipblasDestroy\0").map_err(get)?,
            *blas.get::<SetStreamFn>(b"hipblasSetStream\0").map_err(get)?,
            *blas.get::<SgemmFn>(b"hipblasSgemm\0").map_err(get)?,
        )
    };
    let bytes = n * n * 4;
    let dim = n as c_int;
    let blas_check = |what: &str, st: c_int| if st == 0 { Ok(()) } else { Err(format!("{what}: hipblasStatus_t {st}")) };
    // SAFETY: valid out-pointers; three device buffers of n² floats; hipBLAS's contracts.
    unsafe {
        let mut stream = std::ptr::null_mut();
        hip.check("hipStreamCreate", (hip.stream_create)(&mut stream))?;
        let mut bufs = [std::ptr::null_mut(); 3];
        for b in &mut bufs {
            hip.check("hipMalloc", (hip.malloc)(b, bytes))?;
            hip.check("hipMemset", (hip.memset)(*b, 0, bytes))?;
        }
        let mut handle = std::ptr::null_mut();
        blas_check("hipblasCreate", create(&mut handle))?;
        blas_check("hipblasSetStream", set_stream(handle, stream))?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        const OP_N: c_int = 111;
        let run = |count: usize| -> Result<f64, String> {
            let t = Instant::now();
            for _ in 0..count {
                blas_check("hipblasSgemm", sgemm(handle, OP_N, OP_N, dim, dim, dim, &alpha, bufs[0], dim, bufs[1], dim, &beta, bufs[2], dim))?;
            }
            hip.check("hipStreamSynchronize", (hip.stream_synchronize)(stream))?;
            Ok(t.elapsed().as_secs_f64())
        };
        run(1)?;
        let secs = run(reps)?;
        blas_check("hipblasDestroy", destroy(handle))?;
        for b in bufs {
            hip.check("hipFree", (hip.free)(b))?;
        }
        hip.check("hipStreamDestroy", (hip.stream_destroy)(stream))?;
        Ok(2.0 * (n as f64).powi(3) * reps as f64 / secs / 1e9)
    }
}
