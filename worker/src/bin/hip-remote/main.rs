//! `hip-remote`: the project's front door.
//!
//! - `hip-remote demo`: starts an embedded host-backend worker on a free loopback port
//!   (unless `HIP_REMOTE_WORKER` names one), then drives the *real* client library
//!   (`libamdhip64.so`, loaded with dlopen exactly as an application would link it) through a
//!   sample workload, printing what happened and a few latency and bandwidth figures.
//! - `hip-remote ping`: round trips to a worker, and what it serves.

mod bench;
mod hip;

use clap::{Parser, Subcommand};
use hip::Hip;
use hip_worker::backend::{HostBackend, HostConfig};
use hip_worker::{Worker, WorkerConfig};
use proto_core::wire;
use proto_core::{Flags, Request, Response};
use std::ffi::{c_char, CStr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use transport_tcp::{FrameSink, FrameSource};

#[derive(Parser)]
#[command(name = "hip-remote", version, about = "Remote HIP execution: demo and diagnostics")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a sample HIP workload through the real client library against a worker.
    Demo {
        /// The client library (default: libamdhip64.so next to this executable).
        #[arg(long, env = "HIP_REMOTE_LIB")]
        lib: Option<PathBuf>,
        /// Bytes for the bandwidth figure, in MiB.
        #[arg(long, default_value_t = 64)]
        mib: usize,
    },
    /// End-to-end benchmark through the real library, beside raw TCP on the same machine.
    Bench {
        /// The client library (default: libamdhip64.so next to this executable).
        #[arg(long, env = "HIP_REMOTE_LIB")]
        lib: Option<PathBuf>,
        /// Largest copy in MiB.
        #[arg(long, default_value_t = 256)]
        max_mib: usize,
        /// Round trips for latency percentiles.
        #[arg(long, default_value_t = 20_000)]
        round_trips: usize,
        /// Fire-and-forget operations for the rate.
        #[arg(long, default_value_t = 200_000)]
        async_ops: usize,
        /// Write the figures as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Measure round trips to a worker and print what it serves.
    Ping {
        /// Worker address (default: HIP_REMOTE_WORKER or 127.0.0.1:18515).
        #[arg(long)]
        worker: Option<String>,
        /// Number of pings.
        #[arg(short, long, default_value_t = 1000)]
        count: usize,
    },
}

fn worker_addr(explicit: Option<String>) -> String {
    explicit
        .or_else(|| std::env::var("HIP_REMOTE_WORKER").ok())
        .unwrap_or_else(|| "127.0.0.1:18515".into())
        .trim_start_matches("tcp://")
        .to_string()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ping(addr: &str, count: usize) -> Result<(), String> {
    let (mut tx, mut rx) = transport_tcp::connect(addr, &Default::default()).map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let mut buf = vec![0u8; 4096];
    let mut id = 0u64;
    let mut exchange = |req: &Request<'_>, on: &mut dyn FnMut(Response<'_>)| -> Result<(), String> {
        id += 1;
        let f = req.encode_frame(&mut buf, Flags::empty(), id).map_err(|e| e.to_string())?;
        tx.send(&buf[..f.head_len], f.bulk).map_err(|e| e.to_string())?;
        let head = rx.recv_head().map_err(|e| e.to_string())?;
        let (header, control) = (head.header, head.control.to_vec());
        let mut bulk = vec![0u8; rx.bulk_remaining()];
        rx.recv_bulk(&mut bulk).map_err(|e| e.to_string())?;
        if header.flags.contains(Flags::ERROR) {
            let e = <wire::ErrorReply as proto_core::Message>::parse(&control, &[]).map_err(|e| e.to_string())?;
            return Err(format!("{:?}: {}", e.status, e.message.as_str()));
        }
        on(Response::parse(header.opcode, &control, &bulk).map_err(|e| e.to_string())?);
        Ok(())
    };
    let token = std::env::var("HIP_REMOTE_TOKEN").unwrap_or_default();
    let hello = Request::Hello(wire::Hello {
        min_version: 1,
        max_version: proto_core::PROTOCOL_VERSION,
        features: 0,
        client_name: "hip-remote ping".into(),
        resume_session: 0,
        auth_token: token.as_bytes().into(),
    });
    exchange(&hello, &mut |r| {
        if let Response::Hello(w) = r {
            println!("worker      {} (backend {}, protocol v{}, session {})", w.worker_name.as_str(), w.backend.as_str(), w.version, w.session_id);
        }
    })?;
    let mut devices = 0;
    exchange(&Request::GetDeviceCount(wire::Empty {}), &mut |r| {
        if let Response::GetDeviceCount(c) = r {
            devices = c.count;
        }
    })?;
    for device in 0..devices {
        exchange(&Request::GetDeviceProperties(wire::DeviceRef { device }), &mut |r| {
            if let Response::GetDeviceProperties(p) = r {
                println!(
                    "device {device}    {} [{}] {:.1} GiB, {} multiprocessors",
                    p.name.as_str(),
                    p.arch_name.as_str(),
                    p.total_global_mem as f64 / (1u64 << 30) as f64,
                    p.multi_processor_count
                );
            }
        })?;
    }
    let mut rtts = Vec::with_capacity(count);
    for n in 0..count.max(1) {
        let start = Instant::now();
        exchange(&Request::Ping(wire::Ping { nonce: n as u64, payload: Default::default() }), &mut |_| {})?;
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
    let _ = exchange(&Request::Goodbye(wire::Empty {}), &mut |_| {});
    Ok(())
}

fn default_lib() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    let name = if cfg!(target_os = "macos") { "libamdhip64.dylib" } else { "libamdhip64.so" };
    dir.join(name)
}

/// Starts an embedded host-backend worker unless `HIP_REMOTE_WORKER` names one.
fn embedded_worker() -> Result<Option<Worker>, String> {
    Ok(match std::env::var("HIP_REMOTE_WORKER") {
        Ok(addr) => {
            println!("using the worker at {addr} (HIP_REMOTE_WORKER)");
            None
        }
        Err(_) => {
            let backend = Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 4 << 30 }));
            let worker = Worker::start("127.0.0.1:0", backend, WorkerConfig::default()).map_err(|e| e.to_string())?;
            let addr = worker.local_addr().to_string();
            println!("started an embedded hip-worker (host backend) on {addr}");
            std::env::set_var("HIP_REMOTE_WORKER", &addr);
            Some(worker)
        }
    })
}

fn demo(lib: Option<PathBuf>, mib: usize) -> Result<(), String> {
    let _embedded = embedded_worker()?;
    let path = lib.unwrap_or_else(default_lib);
    let hip = Hip::load(&path)?;
    println!("loaded the client library {}", path.display());
    let mut count = 0;
    // SAFETY (all calls below): arguments follow the HIP API contracts: valid out-pointers,
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
    }
    println!("demo finished: every result checked");
    Ok(())
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo { lib, mib } => demo(lib, mib),
        Command::Ping { worker, count } => ping(&worker_addr(worker), count),
        Command::Bench { lib, max_mib, round_trips, async_ops, json } => (|| {
            let _embedded = embedded_worker()?;
            let hip = Hip::load(&lib.unwrap_or_else(default_lib))?;
            let report = bench::run(&hip, &bench::BenchOptions { max_mib, round_trips, async_ops, json })?;
            print!("{report}");
            Ok(())
        })(),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hip-remote: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
