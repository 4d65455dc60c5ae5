//! The launch path, end to end on this machine: the real client library's packing
//! (`ArgLayout::pack_pointers_into`) and encoding (`Conn::post`, queued into the TCP sink's batch),
//! loopback TCP, and a real worker session on the host backend (its launch queues the
//! empty kernel for the executor threads).
//!
//! - `client_post`: what the application's thread pays per `hipModuleLaunchKernel`
//!   (packing, encoding, batching; the batch's `write` amortised). The worker drains the
//!   launches between samples, untimed.
//! - `end_to_end`: N launches and one `hipDeviceSynchronize`, per launch: the worker's
//!   per-launch cost when it is the slower side (receive, parse, dispatch, backend launch).
//!
//! `cargo bench -p hip-remote-benches --bench launch_path -- --warm-up-time 1 --measurement-time 3`
//! Figures: `docs/BENCHMARKS.md` ("Launch path").

use amdhip64::api::module::ArgLayout;
use amdhip64::config::ClientConfig;
use amdhip64::conn::Conn;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hip_worker::backend::{Backend, HostBackend, HostConfig, RtcBackend, RtcRequest};
use hip_worker::{Worker, WorkerConfig};
use proto_core::{calls, wire, Bulk, Caller};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Four parameters (two pointers, an int, a float), as a typical small kernel has.
const SOURCE: &str = r#"
extern "C" __global__ void empty(float* x, float* y, int n, float a) {}
"#;

/// Launches per end-to-end sample: as the bench's launch-rate figure, one synchronize after many.
const LAUNCHES_PER_SYNC: u64 = 2000;

struct Setup {
    _worker: Worker,
    conn: Conn,
    function: u64,
    layout: ArgLayout,
    /// The packing buffer, reused as the library's per-thread one is.
    packed: Vec<u8>,
}

fn setup() -> Setup {
    let backend = Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 64 << 20, allow_host_code: true, ..HostConfig::default() }));
    let request = RtcRequest { name: "launch_path.hip", source: SOURCE, ..RtcRequest::default() };
    let out = backend.rtc_compile(0, &request).expect("hiprtc runs");
    assert!(out.success, "compile failed (a C++ compiler is needed):\n{}", out.log);
    let worker = Worker::start("127.0.0.1:0", backend.clone() as Arc<dyn Backend>, WorkerConfig::default()).expect("worker starts");
    let mut config = ClientConfig::from_env().expect("client environment");
    config.worker = worker.local_addr().to_string();
    config.token = None;
    let mut conn = Conn::open(&config).expect("connects");
    let load = wire::ModuleLoad { device: 0, format: wire::ModuleFormat::HostModule, origin: "launch_path".into(), image: Bulk(&out.code) };
    let module = conn.call::<calls::ModuleLoad>(load).expect("module loads").module;
    let info = conn.call::<calls::ModuleGetFunction>(wire::SymbolLookup { module, name: "empty".into() }).expect("function");
    let function = info.function;
    let layout = ArgLayout::new(info.params.0.iter().map(|p| (p.offset.get(), p.size.get()))).expect("layout");
    Setup { _worker: worker, conn, function, layout, packed: Vec::new() }
}

/// One launch as `hipModuleLaunchKernel` sends it: `kernelParams` packed by the layout,
/// posted fire-and-forget.
fn launch(s: &mut Setup, params: &[*mut c_void; 4]) {
    // SAFETY: one pointer per parameter, each to a value of the parameter's size.
    unsafe { s.layout.pack_pointers_into(&mut s.packed, params.as_ptr()) }.expect("packs");
    let req = wire::LaunchKernel { function: s.function, grid: [1, 1, 1], block: [1, 1, 1], shared_mem: 0, stream: 0, args: s.packed[..].into() };
    s.conn.post::<calls::LaunchKernel>(req).expect("posts");
}

fn sync(s: &mut Setup) {
    s.conn.call::<calls::DeviceSynchronize>(wire::DeviceRef { device: 0 }).expect("synchronizes");
}

/// On-CPU nanoseconds of thread `tid` of this process so far (`schedstat`: exact, and blind
/// to time spent waiting for a core, so other load on the machine does not count).
fn thread_cpu_ns(tid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).unwrap_or_default();
    stat.split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// The id of this process's thread named `name`.
fn thread_named(name: &str) -> Option<String> {
    std::fs::read_dir("/proc/self/task").ok()?.flatten().find_map(|t| {
        let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
        (comm.trim() == name).then(|| t.file_name().to_string_lossy().into_owned())
    })
}

/// CPU time per launch of the client's thread and of the worker's session thread over
/// `batches` × (2 000 launches + 1 sync), printed: figures that a loaded machine does not
/// blur, unlike wall time.
fn cpu_per_launch(s: &mut Setup, params: &[*mut c_void; 4], batches: u64) {
    let Some(worker) = thread_named("hip-tcp-session") else {
        eprintln!("cpu_per_launch: no worker session thread found");
        return;
    };
    let client = current_tid();
    let (c0, w0) = (thread_cpu_ns(&client), thread_cpu_ns(&worker));
    for _ in 0..batches {
        for _ in 0..LAUNCHES_PER_SYNC {
            launch(s, params);
        }
        sync(s);
    }
    let n = (batches * LAUNCHES_PER_SYNC) as f64;
    let (c1, w1) = (thread_cpu_ns(&client), thread_cpu_ns(&worker));
    eprintln!(
        "launch_path/cpu_per_launch: client thread {:.0} ns, worker session thread {:.0} ns ({} launches)",
        (c1 - c0) as f64 / n,
        (w1 - w0) as f64 / n,
        n
    );
}

/// This thread's id (`gettid`), from `/proc/thread-self`.
fn current_tid() -> String {
    std::fs::read_link("/proc/thread-self").ok().and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned())).unwrap_or_default()
}

fn launch_path(c: &mut Criterion) {
    let mut s = setup();
    let (mut x, mut y, mut n, mut a) = (0x7f00_0000_1000u64, 0x7f00_0000_2000u64, 1000i32, 2.5f32);
    let params: [*mut c_void; 4] = [(&raw mut x).cast(), (&raw mut y).cast(), (&raw mut n).cast(), (&raw mut a).cast()];
    if cfg!(target_os = "linux") {
        for _ in 0..3 {
            cpu_per_launch(&mut s, &params, 100);
        }
    }
    let mut g = c.benchmark_group("launch_path");
    g.throughput(Throughput::Elements(1));
    g.bench_function("client_post", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                let batch = left.min(LAUNCHES_PER_SYNC);
                let t = Instant::now();
                for _ in 0..batch {
                    launch(&mut s, &params);
                }
                timed += t.elapsed();
                sync(&mut s);
                left -= batch;
            }
            timed
        })
    });
    g.throughput(Throughput::Elements(LAUNCHES_PER_SYNC));
    g.bench_function("end_to_end_2000_launches_and_sync", |b| {
        b.iter(|| {
            for _ in 0..LAUNCHES_PER_SYNC {
                launch(&mut s, &params);
            }
            sync(&mut s);
        })
    });
    g.finish();
}

criterion_group!(benches, launch_path);
criterion_main!(benches);
