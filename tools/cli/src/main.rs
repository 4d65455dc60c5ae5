//! `hip-remote`: the project's front door.
//!
//! - `hip-remote demo`: starts an embedded worker (host backend unless `--backend` says
//!   otherwise) on a free loopback port (unless `HIP_REMOTE_WORKER` names one), then drives the
//!   *real* client library (`libamdhip64.so`, loaded with dlopen exactly as an application
//!   would link it) through a sample workload, printing what happened and a few latency and
//!   bandwidth figures.
//! - `hip-remote bench`: native (the backend in-process) vs remote (the client library over
//!   loopback TCP) vs raw TCP, in one run; see `bench.rs`.
//! - `hip-remote ping`: round trips to a worker, and what it serves.
//! - `hip-remote smi`: each worker's devices, memory in use and sessions, read from its
//!   metrics endpoint (`hip-worker --metrics`); see `smi.rs`.
//! - `hip-remote proxy`: a user-space WAN (delay, jitter, bandwidth) that counts round trips;
//!   `hip-remote wan-bench`: the client library through it at several round-trip times; see
//!   `proxy.rs` and `wan.rs`.
//! - `hip-remote install --prefix DIR`: an installed ROCm-style layout (`lib/`, `include/`,
//!   `bin/`); see `install.rs`.
//!
//! The embedded worker is Linux-only (as `hip-worker` is), and so are `bench`, `tenants` and
//! `install`. On macOS and Windows `hip-remote` is the client side: `ping`, `smi`, and `demo`
//! against the worker `HIP_REMOTE_WORKER` names.

#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

mod amdsmi_cli;
#[cfg(target_os = "linux")]
mod bench;
#[cfg(target_os = "linux")]
mod child;
// The demo uses part of it; the bench (Linux) the rest.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
mod hip;
#[cfg(target_os = "linux")]
mod install;
#[cfg(target_os = "linux")]
mod native;
#[cfg(target_os = "linux")]
mod peer_bench;
#[cfg(target_os = "linux")]
mod plot;
mod probe;
#[cfg(all(target_os = "linux", feature = "profiling"))]
mod profile;
#[cfg(all(target_os = "linux", not(feature = "profiling")))]
#[path = "profile_disabled.rs"]
mod profile;
mod proxy;
mod rocminfo;
mod smi;
#[cfg(target_os = "linux")]
mod tenants;
#[cfg(target_os = "linux")]
mod variants;
#[cfg(target_os = "linux")]
mod wan;
// The demo's kernel uses one of its helpers; the bench (Linux) uses the rest.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
mod workload;

use clap::{Parser, Subcommand};
use hip::Hip;
#[cfg(target_os = "linux")]
use hip_worker::backend::Backend;
#[cfg(target_os = "linux")]
use hip_worker::{Worker, WorkerConfig};
#[cfg(target_os = "linux")]
use native::BackendKind;
use proto_core::wire;
use proto_core::Request;
use std::ffi::{c_char, CStr};
use std::path::PathBuf;
#[cfg(target_os = "linux")]
use std::sync::Arc;
use std::time::{Duration, Instant};
use transport_core::{FrameSink, FrameSource};

#[derive(Parser)]
#[command(name = "hip-remote", version = hip_remote_build_info::VERSION, about = "Remote HIP execution: demo and diagnostics")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once
enum Command {
    /// Run a sample HIP workload through the real client library against a worker.
    Demo {
        /// The client library (default: libamdhip64.so next to this executable, or in ../lib).
        #[arg(long, env = "HIP_REMOTE_LIB")]
        lib: Option<PathBuf>,
        /// Backend of the embedded worker.
        #[cfg(target_os = "linux")]
        #[arg(long, value_enum, default_value = "host")]
        backend: BackendKind,
        /// Bytes for the bandwidth figure, in MiB.
        #[arg(long, default_value_t = 64)]
        mib: usize,
        /// The embedded worker serves TLS (see `bench --tls`).
        #[cfg(target_os = "linux")]
        #[arg(long)]
        tls: bool,
    },
    /// Native (backend in-process) vs remote (client library over loopback TCP) vs raw TCP:
    /// round trips, async ops, kernel launch rate, an MLP training loop, copy bandwidth.
    #[cfg(target_os = "linux")]
    Bench(BenchArgs),
    #[cfg(target_os = "linux")]
    /// One process of the bench's parallel copies (internal).
    #[command(hide = true)]
    BenchChild {
        #[arg(long)]
        lib: PathBuf,
        #[arg(long)]
        bytes: usize,
        #[arg(long)]
        reps: usize,
    },
    #[cfg(target_os = "linux")]
    /// One client variant of the bench's link figures (internal; see `variants.rs`).
    #[command(hide = true)]
    BenchVariant {
        #[arg(long)]
        lib: PathBuf,
        #[arg(long)]
        big_bytes: usize,
        #[arg(long)]
        big_reps: usize,
        #[arg(long)]
        samples: usize,
        #[arg(long)]
        allocs: usize,
        #[arg(long)]
        alloc_bytes: usize,
        #[arg(long)]
        profile: Option<PathBuf>,
    },
    #[cfg(target_os = "linux")]
    /// N client processes with equal work on one GPU, through a worker (`--worker`) or each
    /// natively (`--side native`): aggregate kernels/s and fastest/slowest client, for small
    /// (16-block) and GPU-filling kernels (docs/BENCHMARKS.md, "Tenants sharing one GPU").
    Tenants {
        /// Client processes.
        #[arg(long, default_value_t = 8, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
        clients: usize,
        /// Seconds each measurement lasts.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        /// Kernels to measure (repeat or comma-separate; default both).
        #[arg(long, value_enum, value_delimiter = ',')]
        kernel: Vec<tenants::KernelSize>,
        /// Where the clients' work runs.
        #[arg(long, value_enum, default_value = "remote")]
        side: tenants::Side,
        /// Backend of native clients.
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendKind,
        /// The worker remote clients use (default: HIP_REMOTE_WORKER).
        #[arg(long)]
        worker: Option<String>,
        /// The client library (default: libamdhip64.so next to this executable, or in ../lib).
        #[arg(long, env = "HIP_REMOTE_LIB")]
        lib: Option<PathBuf>,
        /// Name of this mode in the table (e.g. `shared`, `process+mps`).
        #[arg(long)]
        label: Option<String>,
        /// Launches between two synchronizations of each client (1: every kernel waited for).
        #[arg(long, default_value_t = tenants::DEFAULT_BATCH, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=tenants::MAX_BATCH as u64))]
        batch: usize,
    },
    #[cfg(target_os = "linux")]
    /// One client of `tenants` (internal).
    #[command(hide = true)]
    TenantsChild {
        #[arg(long, value_enum)]
        side: tenants::Side,
        #[arg(long, value_enum)]
        backend: BackendKind,
        #[arg(long, value_enum)]
        kernel: tenants::KernelSize,
        #[arg(long)]
        batch: usize,
        #[arg(long)]
        lib: PathBuf,
    },
    /// Measure round trips to a worker and print what it serves.
    Ping {
        /// Worker address, `HOST:PORT` or `tls://HOST:PORT` (default: HIP_REMOTE_WORKER or
        /// 127.0.0.1:18515); TLS settings as for the client library (HIP_REMOTE_TLS_CA, ...).
        #[arg(long)]
        worker: Option<String>,
        /// Number of pings.
        #[arg(short, long, default_value_t = 1000)]
        count: usize,
    },
    /// Each worker's devices (name, arch), memory in use / total, sessions and utilisation,
    /// read from the worker's metrics endpoint (start it with `hip-worker --metrics`).
    Smi {
        /// A worker's metrics endpoint: HOST:PORT or http://HOST:PORT[/PATH]; repeat for
        /// several workers [default: 127.0.0.1:18516].
        #[arg(long = "worker", visible_alias = "metrics-url", value_name = "ADDR")]
        workers: Vec<String>,
        /// Print JSON (one object per worker) instead of tables.
        #[arg(long)]
        json: bool,
    },
    /// A user-space WAN between clients and a worker: one-way delay per direction, jitter
    /// (bytes stay in order), a bandwidth cap; prints round trips and bytes as they change.
    Proxy {
        /// Where clients connect (HOST:PORT).
        #[arg(long)]
        listen: String,
        /// The worker (HOST:PORT).
        #[arg(long)]
        to: String,
        /// One-way delay in each direction, ms (the round trip is twice this).
        #[arg(long, default_value_t = 0.0)]
        delay: f64,
        /// Extra delay per chunk, uniform in 0..=JITTER ms (order kept).
        #[arg(long, default_value_t = 0.0)]
        jitter: f64,
        /// Bandwidth in each direction: 100mbit, 1gbit, 50MB (bytes/s) ... [unlimited].
        #[arg(long)]
        bandwidth: Option<String>,
    },
    /// The client library through `proxy` at several round-trip times: round trips and time of
    /// program start, a launch-heavy step, a weight upload and a training step
    /// (docs/BENCHMARKS.md, "Over a WAN").
    #[cfg(target_os = "linux")]
    WanBench(WanArgs),
    /// One round-trip time of `wan-bench` (internal).
    #[cfg(target_os = "linux")]
    #[command(hide = true)]
    WanChild {
        #[arg(long)]
        lib: PathBuf,
        #[arg(long)]
        code: PathBuf,
        #[arg(long)]
        rtt_us: u64,
        #[arg(long)]
        jitter_us: u64,
        #[arg(long)]
        bandwidth: Option<f64>,
        #[arg(long)]
        weights_bytes: usize,
        #[arg(long)]
        steps: usize,
        #[arg(long)]
        train_steps: usize,
        #[arg(long)]
        weights_seed: u64,
        #[arg(long)]
        compressible: bool,
    },
    #[cfg(target_os = "linux")]
    /// Install a ROCm-style layout: DIR/lib (libamdhip64.so*, libhiprtc.so*, the shims of the
    /// other ROCm libraries), DIR/include, DIR/bin (hipcc, hipconfig, hip-worker, hip-remote);
    /// then ROCM_PATH=DIR ROCM_HOME=DIR LD_LIBRARY_PATH=DIR/lib is all a program needs.
    Install {
        /// The installation prefix.
        #[arg(long, value_name = "DIR")]
        prefix: PathBuf,
        /// Where the built libraries and programs are (default: this executable's directory).
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        /// The system the built files are for: macos and windows lay out a client (no worker,
        /// no shims); they need --from.
        #[arg(long, value_enum, default_value = "linux")]
        platform: install::Platform,
    },
}

#[cfg(target_os = "linux")]
#[derive(clap::Args)]
struct BenchArgs {
    /// The client library (default: libamdhip64.so next to this executable, or in ../lib).
    #[arg(long, env = "HIP_REMOTE_LIB")]
    lib: Option<PathBuf>,
    /// Backend for the native side and the embedded worker (auto: cuda when a GPU is usable).
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendKind,
    /// Small sizes everywhere (seconds on the host backend; for tests and CI). Explicit
    /// options still win.
    #[arg(long)]
    quick: bool,
    /// Largest copy in MiB [256; quick 1].
    #[arg(long)]
    max_mib: Option<usize>,
    /// Round trips for latency percentiles [20000; quick 300].
    #[arg(long)]
    round_trips: Option<usize>,
    /// Fire-and-forget memsets for the async op rate [200000; quick 2000].
    #[arg(long)]
    async_ops: Option<usize>,
    /// Empty-kernel launches per trial [100000; quick 2000].
    #[arg(long)]
    launches: Option<usize>,
    /// Launch-rate trials per side, median reported [3; quick 2].
    #[arg(long)]
    trials: Option<usize>,
    /// K values for the parallel copies.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    streams: Vec<usize>,
    /// Skip the K-process parallel copies.
    #[arg(long)]
    no_processes: bool,
    /// Size of each parallel copy in MiB [64; quick 1; at most --max-mib].
    #[arg(long)]
    parallel_mib: Option<usize>,
    /// MLP batch size [256; quick 16].
    #[arg(long)]
    mlp_batch: Option<usize>,
    /// MLP input features [256; quick 16].
    #[arg(long)]
    mlp_input: Option<usize>,
    /// MLP hidden units [512; quick 32].
    #[arg(long)]
    mlp_hidden: Option<usize>,
    /// MLP classes [16; quick 4].
    #[arg(long)]
    mlp_classes: Option<usize>,
    /// MLP micro-batch: 11 launches per micro-batch, batch/micro per step [1; quick 4].
    #[arg(long)]
    mlp_micro: Option<usize>,
    /// Timed MLP steps per side [30; quick 3].
    #[arg(long)]
    mlp_steps: Option<usize>,
    /// Kernels per step of the graph benchmark (a chain of small kernels launched one by one,
    /// then as a graph) [2000; quick 200].
    #[arg(long)]
    graph_kernels: Option<usize>,
    /// Timed graph-benchmark steps per way [20; quick 3].
    #[arg(long)]
    graph_steps: Option<usize>,
    /// Write the figures as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the markdown report here too (it always goes to stdout).
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Write bandwidth.png and latency.png into this directory.
    #[arg(long)]
    plots: Option<PathBuf>,
    /// The embedded worker serves TLS (a certificate made for this run; the client library
    /// trusts it through HIP_REMOTE_TLS_CA): the remote figures then include TLS's cost.
    /// For a worker elsewhere, set HIP_REMOTE_WORKER=tls://HOST:PORT instead.
    #[arg(long)]
    tls: bool,
    /// Run only these sections (latency, async, sgemm, kernels, graphs, copies, parallel,
    /// peer, link; peer needs two devices). The link table (data at the speed of the link): `--sections link,kernels,graphs`.
    #[arg(long, value_delimiter = ',')]
    sections: Vec<String>,
    /// Sample the process during each section (client and embedded worker threads) and write
    /// SECTION.svg (flamegraph) and SECTION.txt (top functions) here; the link variants'
    /// client processes write theirs into DIR/variant-NAME/.
    #[arg(long, value_name = "DIR")]
    profile: Option<PathBuf>,
    /// Client variants of the link figures, each a child process with its environment:
    /// tcp (HIP_REMOTE_STRIPES=0), tcp-striped (HIP_REMOTE_STRIPES=8), tcp-striped:N (N
    /// stripes), shm (HIP_REMOTE_WORKER= the --shm-worker address).
    #[arg(long, value_delimiter = ',', default_value = "tcp,tcp-striped,shm")]
    variants: Vec<String>,
    /// A worker on this host with a shared-memory listener, for the shm variant
    /// (`shm:///PATH`); without it that variant is reported as not available.
    #[arg(long, value_name = "URL")]
    shm_worker: Option<String>,
    /// Size of the link section's large copies in MiB [256; quick 4].
    #[arg(long)]
    big_mib: Option<usize>,
    /// Large copies per link figure [4; quick 2].
    #[arg(long)]
    big_reps: Option<usize>,
    /// Samples of the link section's 4 KiB copy and sync call [5000; quick 200].
    #[arg(long)]
    link_samples: Option<usize>,
    /// hipMalloc(1 MiB) + hipFree pairs of the link section's allocation figure [10000; quick 200].
    #[arg(long)]
    allocs: Option<usize>,
}

#[cfg(target_os = "linux")]
#[derive(clap::Args)]
struct WanArgs {
    /// The client library (default: libamdhip64.so next to this executable, or in ../lib).
    #[arg(long, env = "HIP_REMOTE_LIB")]
    lib: Option<PathBuf>,
    /// Backend of the embedded worker (unless HIP_REMOTE_WORKER names a worker).
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendKind,
    /// Round-trip times to measure, ms.
    #[arg(long, value_delimiter = ',', default_value = "0,2,20,100")]
    rtt: Vec<f64>,
    /// Jitter, ms (see `proxy --jitter`).
    #[arg(long, default_value_t = 0.0)]
    jitter: f64,
    /// Bandwidth cap (see `proxy --bandwidth`) [unlimited].
    #[arg(long)]
    bandwidth: Option<String>,
    /// Size of the weight upload, MiB.
    #[arg(long, default_value_t = 1024)]
    weights_mib: usize,
    /// Timed launch-heavy steps per round-trip time.
    #[arg(long, default_value_t = 10)]
    steps: usize,
    /// Timed training steps per round-trip time.
    #[arg(long, default_value_t = 5)]
    train_steps: usize,
    /// The weights' content (the same seed: the same bytes, as a program run again uploads
    /// them) [a fresh one per run].
    #[arg(long)]
    weights_seed: Option<u64>,
    /// Name large uploads by hash first (HIP_REMOTE_CONTENT_STORE for the clients).
    #[arg(long, value_parser = ["on", "off"], default_value = "on")]
    content_store: String,
    /// Weights that compress (sparse: 3 of 4 64-byte blocks zero) instead of random bytes.
    #[arg(long)]
    compressible_weights: bool,
    /// Write the figures as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[cfg(target_os = "linux")]
fn wan_bench(a: WanArgs) -> Result<(), String> {
    let link_jitter = proxy::millis("jitter", a.jitter)?;
    let bandwidth = a.bandwidth.as_deref().map(proxy::parse_rate).transpose()?;
    if a.weights_mib == 0 || a.weights_mib > 4096 {
        return Err(format!("--weights-mib {}: give 1 to 4096", a.weights_mib));
    }
    let rtts = a.rtt.iter().map(|&ms| proxy::millis("rtt", ms)).collect::<Result<Vec<_>, _>>()?;
    let (_embedded, worker) = embedded_worker(native::make_backend(a.backend)?, false)?;
    let lib = a.lib.unwrap_or_else(default_lib);
    // The code object the children load: compiled once, on the worker, for its device.
    let code = {
        let hip = Hip::load(&lib)?;
        let mut devices = 0;
        // SAFETY: a valid out-pointer.
        hip.check("hipGetDeviceCount", unsafe { (hip.get_device_count)(&mut devices) })?;
        workload::remote_compile(&hip, workload::SOURCE)?
    };
    let code_path = std::env::temp_dir().join(format!("hip-remote-wan-{}.code", std::process::id()));
    std::fs::write(&code_path, &code).map_err(|e| format!("{}: {e}", code_path.display()))?;
    let fresh = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let plan = wan::Plan {
        weights_bytes: a.weights_mib << 20,
        steps: a.steps,
        train_steps: a.train_steps,
        jitter: link_jitter,
        bandwidth,
        weights_seed: a.weights_seed.unwrap_or(fresh),
        content_store: a.content_store == "on",
        compressible: a.compressible_weights,
    };
    // Each round-trip time uploads its own weights (a first run), unless a seed was given.
    let rows = (0u64..)
        .zip(&rtts)
        .map(|(i, &rtt)| {
            let seed = if a.weights_seed.is_some() { plan.weights_seed } else { plan.weights_seed.wrapping_add(i) };
            wan::run_child(&lib, &code_path, rtt, &wan::Plan { weights_seed: seed, ..plan.clone() })
        })
        .collect::<Result<Vec<_>, _>>();
    let _ = std::fs::remove_file(&code_path);
    let rows = rows?;
    print!("{}", wan::table(&rows, &plan, &worker));
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&wan::json(&rows)).map_err(|e| e.to_string())?;
        std::fs::write(path, format!("{text}\n")).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

fn worker_addr(explicit: Option<String>) -> String {
    explicit.or_else(|| std::env::var("HIP_REMOTE_WORKER").ok()).unwrap_or_else(|| "127.0.0.1:18515".into()).trim_start_matches("tcp://").to_string()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Both halves of a connection, whatever the transport.
type Halves = (Box<dyn FrameSink>, Box<dyn FrameSource>);

/// Connects to `addr`: TLS for `tls://HOST:PORT` or with HIP_REMOTE_TLS=1 (settings from the
/// environment, as the client library reads them), else plain TCP.
fn connect(addr: &str) -> Result<Halves, String> {
    let lookup = transport_core::config::env_lookup;
    let tls_flag = transport_core::config::flag(&lookup, "HIP_REMOTE_TLS").map_err(|e| e.to_string())?;
    let (host_port, tls) = match addr.strip_prefix("tls://") {
        Some(rest) => (rest, true),
        None => (addr, tls_flag == Some(true)),
    };
    let cannot = |e: std::io::Error| format!("cannot connect to {addr}: {e}");
    if tls {
        let settings = transport_tcp::tls::TlsClient::from_lookup(&lookup).map_err(|e| e.to_string())?;
        let (tx, rx) = transport_tcp::tls::connect(host_port, &Default::default(), &settings).map_err(cannot)?;
        return Ok((Box::new(tx), Box::new(rx)));
    }
    let (tx, rx) = transport_tcp::connect(host_port, &Default::default()).map_err(cannot)?;
    Ok((Box::new(tx), Box::new(rx)))
}

fn ping(addr: &str, count: usize) -> Result<(), String> {
    let mut session = probe::WorkerSession::open(addr, "hip-remote ping")?;
    println!("worker      {} (backend {}, protocol v{}, session {})", session.worker_name, session.backend, session.version, session.session_id);
    for (device, p) in session.devices()?.iter().enumerate() {
        println!(
            "device {device}    {} [{}] {:.1} GiB, {} multiprocessors",
            p.name.as_str(),
            p.arch_name.as_str(),
            p.total_global_mem as f64 / (1u64 << 30) as f64,
            p.multi_processor_count
        );
    }
    let mut rtts = Vec::with_capacity(count);
    for n in 0..count.max(1) {
        let start = Instant::now();
        session.call(&Request::Ping(wire::Ping { nonce: n as u64, payload: Default::default() }), &mut |_| {})?;
        rtts.push(start.elapsed());
    }
    rtts.sort();
    println!(
        "round trip  p50 {:.1} µs  p99 {:.1} µs  p99.9 {:.1} µs  ({} pings)",
        percentile(&rtts, 0.5).as_secs_f64() * 1e6,
        percentile(&rtts, 0.99).as_secs_f64() * 1e6,
        percentile(&rtts, 0.999).as_secs_f64() * 1e6,
        rtts.len()
    );
    session.close();
    Ok(())
}

#[cfg(target_os = "linux")]
#[allow(clippy::too_many_arguments)] // the subcommand's flags, parsed once
fn tenants_command(
    clients: usize,
    seconds: f64,
    kernels: Vec<tenants::KernelSize>,
    side: tenants::Side,
    backend: BackendKind,
    worker: Option<String>,
    lib: Option<PathBuf>,
    label: Option<String>,
    batch: usize,
) -> Result<(), String> {
    if !(0.1..=600.0).contains(&seconds) {
        return Err(format!("--seconds {seconds}: give 0.1 to 600"));
    }
    if let Some(worker) = &worker {
        // The children inherit it.
        std::env::set_var("HIP_REMOTE_WORKER", worker);
    }
    if side == tenants::Side::Remote && std::env::var_os("HIP_REMOTE_WORKER").is_none() {
        return Err("tenants: give --worker (or HIP_REMOTE_WORKER), or --side native".into());
    }
    let lib = lib.unwrap_or_else(default_lib);
    let kernels = if kernels.is_empty() { vec![tenants::KernelSize::Small, tenants::KernelSize::Fill] } else { kernels };
    let mode = label.unwrap_or_else(|| {
        match side {
            tenants::Side::Native => "native",
            tenants::Side::NativeThreads => "native-threads",
            tenants::Side::Remote => "worker",
        }
        .into()
    });
    let mut rows = Vec::new();
    for kernel in kernels {
        let outcome = tenants::run(side, backend, &lib, clients, kernel, Duration::from_secs_f64(seconds), batch)?;
        rows.push((mode.clone(), outcome));
    }
    print!("{}", tenants::table(&rows));
    Ok(())
}

/// The client library beside this executable (a build directory; on Windows, where DLLs sit
/// beside the programs, an installed layout too), else in `../lib` (an installed layout:
/// `DIR/bin/hip-remote`).
fn default_lib() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    let name = if cfg!(target_os = "macos") {
        "libamdhip64.dylib"
    } else if cfg!(windows) {
        // AMD's name, which scripts/dist.sh gives cargo's amdhip64.dll.
        "amdhip64_7.dll"
    } else {
        "libamdhip64.so"
    };
    let installed = dir.join("../lib").join(name);
    if !dir.join(name).exists() && installed.exists() {
        return installed;
    }
    dir.join(name)
}

#[cfg(target_os = "linux")]
/// A running embedded worker (stopped on drop) and, with TLS, the directory of its
/// certificate and CA (removed on drop).
struct Embedded {
    _worker: Box<dyn std::any::Any>,
    pki: Option<PathBuf>,
    /// Its same-host listener (`shm:///PATH`), for the bench's shm variant; not offered to
    /// TCP clients, so the other variants stay on TCP.
    shm: Option<(Box<dyn std::any::Any>, String)>,
}

#[cfg(target_os = "linux")]
impl Drop for Embedded {
    fn drop(&mut self) {
        if let Some(dir) = &self.pki {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(target_os = "linux")]
/// Makes a CA and a certificate for 127.0.0.1 signed by it in a fresh directory:
/// `ca.pem`, `worker.pem`, `worker.key`.
fn throwaway_pki() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("hip-remote-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let made = (|| -> Result<(), String> {
        let e = |e: rcgen::Error| e.to_string();
        let ca_key = rcgen::KeyPair::generate().map_err(e)?;
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(e)?;
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(rcgen::DnType::CommonName, "hip-remote throwaway CA");
        let ca = ca_params.self_signed(&ca_key).map_err(e)?;
        let key = rcgen::KeyPair::generate().map_err(e)?;
        let sans = vec!["127.0.0.1".to_string(), "localhost".to_string()];
        let cert = rcgen::CertificateParams::new(sans).map_err(e)?.signed_by(&key, &ca, &ca_key).map_err(e)?;
        for (name, text) in [("ca.pem", ca.pem()), ("worker.pem", cert.pem()), ("worker.key", key.serialize_pem())] {
            std::fs::write(dir.join(name), text).map_err(|io| format!("{}: {io}", dir.join(name).display()))?;
        }
        Ok(())
    })();
    made.map(|()| dir).map_err(|e| format!("cannot make a TLS certificate: {e}"))
}

#[cfg(target_os = "linux")]
/// Starts an embedded worker on `backend` (serving TLS when `tls`) unless `HIP_REMOTE_WORKER`
/// names one; returns it and where the worker is, in words.
fn embedded_worker(backend: Arc<dyn Backend>, tls: bool) -> Result<(Option<Embedded>, String), String> {
    Ok(match std::env::var("HIP_REMOTE_WORKER") {
        Ok(addr) => {
            eprintln!("using the worker at {addr} (HIP_REMOTE_WORKER)");
            (None, format!("the worker at {addr} (`HIP_REMOTE_WORKER`)"))
        }
        Err(_) => {
            let name = backend.name();
            // Sockets configured as `hip-worker` configures them.
            // A fresh token per run, so the client (which reads HIP_REMOTE_TOKEN) authenticates
            // as against any worker; the port is loopback only.
            let nonce = hip_worker::auth::new_nonce().map_err(|e| format!("no randomness for a token: {e}"))?;
            let token: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
            let tokens = hip_worker::auth::TokenStore::new(Some(&token), None)?;
            let session = hip_worker::session::SessionConfig { tokens: Some(Arc::new(tokens)), ..Default::default() };
            let tcp = hip_worker::config::accepted_tcp_config().map_err(|e| e.to_string())?;
            // Up to the most stripes a worker grants, so `tcp-striped:N` variants can try more.
            let stripes = hip_worker::stripes::StripeConfig { max_stripes: hip_worker::stripes::MAX_STRIPES };
            let config = WorkerConfig { session, tcp, stripes, ..WorkerConfig::default() };
            let shm = if tls { None } else { embedded_shm(backend.clone(), config.clone()) };
            let (worker, addr, pki): (Box<dyn std::any::Any>, String, Option<PathBuf>) = if tls {
                let dir = throwaway_pki()?;
                let server = hip_worker::tls::server_config(&dir.join("worker.pem"), &dir.join("worker.key"), None)?;
                let worker = hip_worker::tls::TlsWorker::start_tls("127.0.0.1:0", backend, config, server).map_err(|e| e.to_string())?;
                let addr = format!("tls://{}", worker.local_addr());
                // The client library (and the bench's child processes) trust this run's CA.
                std::env::set_var("HIP_REMOTE_TLS_CA", dir.join("ca.pem"));
                (Box::new(worker), addr, Some(dir))
            } else {
                let worker = Worker::start("127.0.0.1:0", backend, config).map_err(|e| e.to_string())?;
                let addr = worker.local_addr().to_string();
                (Box::new(worker), addr, None)
            };
            eprintln!("started an embedded hip-worker ({name} backend) on {addr}");
            std::env::set_var("HIP_REMOTE_WORKER", &addr);
            std::env::set_var("HIP_REMOTE_TOKEN", &token);
            (Some(Embedded { _worker: worker, pki, shm }), format!("an embedded worker ({name} backend, in this process) on {addr}"))
        }
    })
}

#[cfg(target_os = "linux")]
/// A same-host listener for the embedded worker at a fresh path (Linux); `None` elsewhere or
/// when it cannot be bound (the shm variant is then reported as not available).
fn embedded_shm(backend: Arc<dyn Backend>, config: WorkerConfig) -> Option<(Box<dyn std::any::Any>, String)> {
    #[cfg(target_os = "linux")]
    {
        let path = std::env::temp_dir().join(format!("hip-remote-bench-{}.sock", std::process::id()));
        match hip_worker::shm::ShmWorker::start_shm(&path, backend, config) {
            Ok(w) => return Some((Box::new(w), format!("shm://{}", path.display()))),
            Err(e) => eprintln!("no same-host listener for the embedded worker ({}: {e})", path.display()),
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (backend, config);
    None
}

#[cfg(target_os = "linux")]
fn bench(a: BenchArgs) -> Result<(), String> {
    let q = a.quick;
    let pick = |v: Option<usize>, full: usize, quick: usize| v.unwrap_or(if q { quick } else { full });
    let max_bytes = pick(a.max_mib, 256, 1) << 20;
    let lib = a.lib.unwrap_or_else(default_lib);
    let mlp = workload::MlpConfig {
        batch: pick(a.mlp_batch, 256, 16),
        input: pick(a.mlp_input, 256, 16),
        hidden: pick(a.mlp_hidden, 512, 32),
        classes: pick(a.mlp_classes, 16, 4),
        micro: pick(a.mlp_micro, 1, 4),
        steps: pick(a.mlp_steps, 30, 3),
        warmup: if q { 1 } else { 3 },
        lr: 0.2,
        data_batches: 4,
    };
    let backend = native::make_backend(a.backend)?;
    let (_embedded, worker) = embedded_worker(backend.clone(), a.tls)?;
    let hip = Hip::load(&lib)?;
    eprintln!("loaded the client library {}", lib.display());
    let opts = bench::BenchOptions {
        lib: lib.clone(),
        quick: q,
        max_bytes,
        copy_volume: if q { 8 << 20 } else { 512 << 20 },
        round_trips: pick(a.round_trips, 20_000, 300),
        async_ops: pick(a.async_ops, 200_000, 2000),
        launches: pick(a.launches, 100_000, 2000),
        trials: pick(a.trials, 3, 2),
        streams: a.streams.into_iter().filter(|&k| k > 0).collect(),
        processes: !a.no_processes,
        parallel_bytes: (pick(a.parallel_mib, 64, 1) << 20).min(max_bytes),
        parallel_volume: if q { 8 << 20 } else { 1 << 30 },
        mlp,
        chain: workload::ChainConfig {
            kernels: pick(a.graph_kernels, 2000, 200),
            floats: 512,
            steps: pick(a.graph_steps, 20, 3),
            warmup: if q { 1 } else { 3 },
        },
        worker,
        sections: a.sections,
        profile: a.profile,
        variants: a.variants,
        // `--shm-worker`, else the embedded worker's own same-host listener.
        shm_worker: a.shm_worker.or_else(|| _embedded.as_ref().and_then(|e| e.shm.as_ref()).map(|(_, addr)| addr.clone())),
        link: variants::Plan {
            big_bytes: pick(a.big_mib, 256, 4) << 20,
            big_reps: pick(a.big_reps, 4, 2),
            samples: pick(a.link_samples, 5000, 200),
            allocs: pick(a.allocs, 10_000, 200),
            alloc_bytes: 1 << 20,
        },
    };
    for s in &opts.sections {
        if !bench::SECTIONS.contains(&s.as_str()) {
            return Err(format!("unknown section {s:?}: the sections are {}", bench::SECTIONS.join(", ")));
        }
    }
    let report = bench::run(&hip, &backend, &opts);
    print!("{}", report.markdown);
    let write = |path: &PathBuf, bytes: &[u8]| std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()));
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&report.json).map_err(|e| e.to_string())?;
        write(path, format!("{text}\n").as_bytes())?;
    }
    if let Some(path) = &a.markdown {
        write(path, report.markdown.as_bytes())?;
    }
    if let Some(dir) = &a.plots {
        for p in report.write_plots(dir)? {
            eprintln!("wrote {}", p.display());
        }
    }
    if report.errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{} bench section(s) failed: {}", report.errors.len(), report.errors.join("; ")))
    }
}

/// The kernel part of the demo: HIP source compiled by hiprtc on the worker (for whatever
/// device it has), loaded with hipModuleLoadData, launched with kernelParams, checked.
const DEMO_KERNEL: &str = r#"
#include <hip/hip_runtime.h>
extern "C" __global__ void scale_add(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;

/// # Safety
/// `hip` must be the loaded client library.
unsafe fn demo_kernel(hip: &Hip) -> Result<(), String> {
    let t = Instant::now();
    let code = workload::remote_compile(hip, DEMO_KERNEL)?;
    println!("kernel      scale_add compiled on the worker in {:.0} ms ({} bytes of code)", t.elapsed().as_secs_f64() * 1e3, code.len());
    let n: i32 = 1 << 20;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut y: Vec<f32> = vec![1.0; n as usize];
    let bytes = n as usize * 4;
    // SAFETY: HIP contracts as above; `code` outlives hipModuleLoadData, pointers are valid.
    unsafe {
        let mut module = std::ptr::null_mut();
        hip.check("hipModuleLoadData", (hip.module_load_data)(&mut module, code.as_ptr().cast()))?;
        let mut function = std::ptr::null_mut();
        hip.check("hipModuleGetFunction", (hip.module_get_function)(&mut function, module, c"scale_add".as_ptr()))?;
        let (mut dx, mut dy) = (std::ptr::null_mut(), std::ptr::null_mut());
        hip.check("hipMalloc", (hip.malloc)(&mut dx, bytes))?;
        hip.check("hipMalloc", (hip.malloc)(&mut dy, bytes))?;
        hip.check("hipMemcpy", (hip.memcpy)(dx, x.as_ptr().cast(), bytes, 1))?;
        hip.check("hipMemcpy", (hip.memcpy)(dy, y.as_ptr().cast(), bytes, 1))?;
        let mut a = 2.0f32;
        let mut count = n;
        let mut params: [*mut std::ffi::c_void; 4] = [
            (&mut dx as *mut *mut std::ffi::c_void).cast(),
            (&mut dy as *mut *mut std::ffi::c_void).cast(),
            (&mut a as *mut f32).cast(),
            (&mut count as *mut i32).cast(),
        ];
        let blocks = ((n + 255) / 256) as u32;
        let t = Instant::now();
        hip.check(
            "hipModuleLaunchKernel",
            (hip.module_launch_kernel)(function, blocks, 1, 1, 256, 1, 1, 0, std::ptr::null_mut(), params.as_mut_ptr(), std::ptr::null_mut()),
        )?;
        hip.check("hipDeviceSynchronize", (hip.device_synchronize)())?;
        let ran = t.elapsed();
        hip.check("hipMemcpy", (hip.memcpy)(y.as_mut_ptr().cast(), dy, bytes, 2))?;
        if let Some(i) = (0..n as usize).find(|&i| y[i] != 2.0 * x[i] + 1.0) {
            return Err(format!("kernel result y[{i}] = {}, want {}", y[i], 2.0 * x[i] + 1.0));
        }
        println!("kernel      y = 2·x + y over {n} elements verified (launch + synchronize {:.2} ms)", ran.as_secs_f64() * 1e3);
        hip.check("hipFree", (hip.free)(dx))?;
        hip.check("hipFree", (hip.free)(dy))?;
        hip.check("hipModuleUnload", (hip.module_unload)(module))?;
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn demo_embedded(lib: Option<PathBuf>, backend: BackendKind, mib: usize, tls: bool) -> Result<(), String> {
    let _embedded = embedded_worker(native::make_backend(backend)?, tls)?;
    demo(lib, mib)
}

fn demo(lib: Option<PathBuf>, mib: usize) -> Result<(), String> {
    if cfg!(not(target_os = "linux")) && std::env::var_os("HIP_REMOTE_WORKER").is_none() {
        return Err("demo: set HIP_REMOTE_WORKER=HOST:PORT or tls://HOST:PORT (and HIP_REMOTE_TOKEN if the worker asks for one): \
                    the embedded worker needs Linux"
            .into());
    }
    let path = lib.unwrap_or_else(default_lib);
    let hip = Hip::load(&path)?;
    println!("loaded the client library {}", path.display());
    let mut count = 0;
    // SAFETY: every call in the block follows the HIP API contracts: valid out-pointers,
    // buffers of the stated sizes, device pointers from hipMalloc.
    unsafe {
        hip.check("hipGetDeviceCount", (hip.get_device_count)(&mut count))?;
        let mut name = [0 as c_char; 256];
        hip.check("hipDeviceGetName", (hip.device_get_name)(name.as_mut_ptr(), 256, 0))?;
        println!("{count} device(s); device 0: {}", CStr::from_ptr(name.as_ptr()).to_string_lossy());

        let len = mib << 20;
        let src: Vec<u8> = (0..len).map(|i| (i * 31 + 7) as u8).collect();
        let mut back = vec![0u8; len];
        let mut dev = std::ptr::null_mut();
        hip.check("hipMalloc", (hip.malloc)(&mut dev, len))?;
        let t = Instant::now();
        hip.check("hipMemcpy H2D", (hip.memcpy)(dev, src.as_ptr().cast(), len, 1))?;
        let h2d = t.elapsed();
        let t = Instant::now();
        hip.check("hipMemcpy D2H", (hip.memcpy)(back.as_mut_ptr().cast(), dev, len, 2))?;
        let d2h = t.elapsed();
        if back != src {
            return Err("data read back differs from data written".into());
        }
        hip.check("hipMemset", (hip.memset)(dev, 0x5a, 4096))?;
        hip.check("hipMemcpy D2H", (hip.memcpy)(back.as_mut_ptr().cast(), dev, 4096, 2))?;
        if back[..4096].iter().any(|&b| b != 0x5a) {
            return Err("memset result differs".into());
        }
        println!("{mib} MiB round trip verified; memset verified");
        let gbps = |d: Duration| len as f64 / d.as_secs_f64() / 1e9;
        println!("bandwidth   host→device {:.2} GB/s, device→host {:.2} GB/s", gbps(h2d), gbps(d2h));

        let mut rtts = Vec::new();
        for _ in 0..2000 {
            let t = Instant::now();
            hip.check("hipDeviceSynchronize", (hip.device_synchronize)())?;
            rtts.push(t.elapsed());
        }
        rtts.sort();
        println!(
            "latency     hipDeviceSynchronize p50 {:.1} µs, p99 {:.1} µs",
            percentile(&rtts, 0.5).as_secs_f64() * 1e6,
            percentile(&rtts, 0.99).as_secs_f64() * 1e6
        );
        let (mut free, mut total) = (0, 0);
        hip.check("hipMemGetInfo", (hip.mem_get_info)(&mut free, &mut total))?;
        println!("memory      {} MiB free of {} MiB while holding the buffer", free >> 20, total >> 20);
        hip.check("hipFree", (hip.free)(dev))?;
        demo_kernel(&hip)?;
    }
    println!("demo finished: every result checked");
    Ok(())
}

/// The ROCm tools `hip-remote` also is, by the name it was started as (the installed layout
/// links them to it).
const PROBE_TOOLS: &[&str] = &["rocminfo", "rocm_agent_enumerator", "amd-smi"];

fn main() -> std::process::ExitCode {
    let argv0 = std::env::args().next().unwrap_or_default();
    let tool = std::path::Path::new(&argv0).file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
    if PROBE_TOOLS.contains(&tool.as_str()) {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let ran = if tool == "amd-smi" { amdsmi_cli::run(&args) } else { rocminfo::run(&tool, &args, &worker_addr(None)) };
        return match ran {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{tool}: {e}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    let cli = Cli::parse();
    // The embedded worker's logs (warnings and up unless HIP_REMOTE_LOG says otherwise).
    #[cfg(target_os = "linux")]
    if let Err(e) = hip_worker::logging::init(&std::env::var("HIP_REMOTE_LOG").unwrap_or_else(|_| "warn".into()), "HIP_REMOTE_LOG") {
        eprintln!("hip-remote: {e}");
        return std::process::ExitCode::from(2);
    }
    let result = match cli.command {
        #[cfg(target_os = "linux")]
        Command::Demo { lib, backend, mib, tls } => demo_embedded(lib, backend, mib, tls),
        #[cfg(not(target_os = "linux"))]
        Command::Demo { lib, mib } => demo(lib, mib),
        Command::Ping { worker, count } => ping(&worker_addr(worker), count),
        Command::Smi { mut workers, json } => {
            if workers.is_empty() {
                workers.push(format!("127.0.0.1:{}", smi::DEFAULT_METRICS_PORT));
            }
            smi::smi(&workers, json)
        }
        #[cfg(target_os = "linux")]
        Command::Bench(args) => bench(args),
        #[cfg(target_os = "linux")]
        Command::BenchChild { lib, bytes, reps } => child::child_main(&lib, bytes, reps),
        #[cfg(target_os = "linux")]
        Command::Tenants { clients, seconds, kernel, side, backend, worker, lib, label, batch } => {
            tenants_command(clients, seconds, kernel, side, backend, worker, lib, label, batch)
        }
        #[cfg(target_os = "linux")]
        Command::TenantsChild { side, backend, kernel, batch, lib } => tenants::child_main(side, backend, &lib, kernel, batch),
        #[cfg(target_os = "linux")]
        Command::BenchVariant { lib, big_bytes, big_reps, samples, allocs, alloc_bytes, profile } => {
            let plan = variants::Plan { big_bytes, big_reps, samples, allocs, alloc_bytes };
            variants::child_main(&lib, &plan, profile.as_deref())
        }
        #[cfg(target_os = "linux")]
        Command::Install { prefix, from, platform } => install::install(&prefix, from, platform),
        Command::Proxy { listen, to, delay, jitter, bandwidth } => (|| {
            let link = proxy::Link {
                delay: proxy::millis("delay", delay)?,
                jitter: proxy::millis("jitter", jitter)?,
                bandwidth: bandwidth.as_deref().map(proxy::parse_rate).transpose()?,
            };
            proxy::serve(&listen, &to, link)
        })(),
        #[cfg(target_os = "linux")]
        Command::WanBench(args) => wan_bench(args),
        #[cfg(target_os = "linux")]
        Command::WanChild { lib, code, rtt_us, jitter_us, bandwidth, weights_bytes, steps, train_steps, weights_seed, compressible } => {
            let content_store = std::env::var("HIP_REMOTE_CONTENT_STORE").is_ok_and(|v| v == "on");
            let jitter = Duration::from_micros(jitter_us);
            let plan = wan::Plan { weights_bytes, steps, train_steps, jitter, bandwidth, weights_seed, content_store, compressible };
            wan::child_main(&lib, &code, Duration::from_micros(rtt_us), &plan)
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hip-remote: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
