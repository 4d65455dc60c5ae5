//! `hip-remote tenants`: N client processes with equal work on one GPU, through a worker or
//! natively (each process its own context), for the aggregate rate and how evenly it is
//! shared (`docs/BENCHMARKS.md`, "Tenants sharing one GPU").
//!
//! The command re-executes itself as `hip-remote tenants-child` (hidden), once per client.
//! Each child loads the kernel, launches one warm-up batch and prints `ready`; the parent then
//! sends every child the same `go START END` (`CLOCK_MONOTONIC` nanoseconds, so all windows
//! coincide), each child launches batches of `--batch` kernels ([`DEFAULT_BATCH`]) on its stream, synchronizing
//! after each, from START until END, and prints `count N`. The aggregate is the sum of the
//! counts over the window; the spread is the most any client did over the least.
//!
//! `--side native-threads` runs the clients as threads of this one process sharing one
//! context (a stream each): what one context can launch with no worker in between, the
//! ceiling of a worker whose sessions share a context (`--isolation shared`).

use crate::child::LineChild;
use crate::native::{make_backend, BackendKind, NativeGpu};
use crate::workload::{Arg, Gpu, RemoteGpu};
use hip_worker::backend::host::usage::monotonic_nanos;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Launches between two synchronizations of a client, unless `--batch` says otherwise.
pub const DEFAULT_BATCH: usize = 32;
/// The most launches `--batch` may put between two synchronizations.
pub const MAX_BATCH: usize = 4096;
/// Threads per block of both kernels.
pub const BLOCK_THREADS: u32 = 256;
/// Blocks of the small kernel (a few of an H200's 132 SMs).
pub const SMALL_BLOCKS: u32 = 16;
/// Blocks of the GPU-filling kernel (many waves on any current GPU).
pub const FILL_BLOCKS: u32 = 4096;
/// Dependent multiply-adds per thread of the small kernel.
pub const SMALL_ITERATIONS: i32 = 64;
/// Dependent multiply-adds per thread of the GPU-filling kernel (tens of µs on an H200).
pub const FILL_ITERATIONS: i32 = 2048;
/// How long before the window opens the parent sends `go` (the children are all waiting).
const START_DELAY: Duration = Duration::from_millis(300);

/// The kernel every client launches.
pub const SOURCE: &str = r#"#include <hip/hip_runtime.h>
extern "C" __global__ void tenant_work(float* data, int n, int iterations) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = data[i];
  for (int k = 0; k < iterations; ++k) v = v * 0.999f + 0.001f;
  data[i] = v;
}
"#;

/// Which kernel the clients launch.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KernelSize {
    /// [`SMALL_BLOCKS`] blocks: launch overhead dominates.
    Small,
    /// [`FILL_BLOCKS`] blocks: the GPU is the limit.
    Fill,
}

impl KernelSize {
    fn blocks(self) -> u32 {
        match self {
            Self::Small => SMALL_BLOCKS,
            Self::Fill => FILL_BLOCKS,
        }
    }

    fn iterations(self) -> i32 {
        match self {
            Self::Small => SMALL_ITERATIONS,
            Self::Fill => FILL_ITERATIONS,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Small => "small",
            Self::Fill => "fill",
        }
    }
}

/// Where the clients' work runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Side {
    /// Through the client library to the worker in `HIP_REMOTE_WORKER`.
    Remote,
    /// In each client process itself (the cuda backend; `auto` falls back to host emulation).
    Native,
    /// Threads of this one process sharing one context, a stream each (no worker).
    NativeThreads,
}

/// One measured run.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub kernel: KernelSize,
    pub clients: usize,
    /// Kernels per client in the window.
    pub counts: Vec<u64>,
    pub window: Duration,
}

impl Outcome {
    /// Kernels per second, all clients together.
    pub fn aggregate(&self) -> f64 {
        self.counts.iter().sum::<u64>() as f64 / self.window.as_secs_f64()
    }

    /// The most any client did over the least (1.0: perfectly even).
    pub fn spread(&self) -> f64 {
        let (most, least) = (self.counts.iter().max().copied().unwrap_or(0), self.counts.iter().min().copied().unwrap_or(0));
        most as f64 / least.max(1) as f64
    }
}

/// Runs `clients` children launching `kernel` for `window`.
pub fn run(
    side: Side,
    backend: BackendKind,
    lib: &Path,
    clients: usize,
    kernel: KernelSize,
    window: Duration,
    batch: usize,
) -> Result<Outcome, String> {
    if side == Side::NativeThreads {
        return run_threads(backend, clients, kernel, window, batch);
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut children = Vec::with_capacity(clients);
    for _ in 0..clients {
        let side_arg = match side {
            Side::Remote => "remote",
            Side::Native | Side::NativeThreads => "native",
        };
        let backend_arg = match backend {
            BackendKind::Auto => "auto",
            BackendKind::Host => "host",
            BackendKind::Cuda => "cuda",
        };
        let mut command = Command::new(&exe);
        command
            .args(["tenants-child", "--side", side_arg, "--backend", backend_arg, "--kernel", kernel.label(), "--batch"])
            .arg(batch.to_string())
            .arg("--lib")
            .arg(lib);
        children.push(LineChild::spawn(command, "tenants-child")?);
    }
    for child in &mut children {
        child.expect("ready")?;
    }
    let start = monotonic_nanos() + START_DELAY.as_nanos() as u64;
    let go = format!("go {start} {}", start + window.as_nanos() as u64);
    for child in &mut children {
        child.send(&go)?;
    }
    let mut counts = Vec::with_capacity(clients);
    for child in &mut children {
        let count = child.expect("count")?;
        counts.push(count.parse().map_err(|e| format!("count {count:?}: {e}"))?);
    }
    Ok(Outcome { kernel, clients, counts, window })
}

/// The threads' side: `clients` threads of this process, one backend (one context), a stream
/// each, with the same window for all.
fn run_threads(backend: BackendKind, clients: usize, kernel: KernelSize, window: Duration, batch: usize) -> Result<Outcome, String> {
    let backend = make_backend(backend)?;
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
    let mut go_senders = Vec::with_capacity(clients);
    let mut threads = Vec::with_capacity(clients);
    for _ in 0..clients {
        let (go_tx, go_rx) = std::sync::mpsc::channel::<(u64, u64)>();
        go_senders.push(go_tx);
        let (backend, ready_tx) = (backend.clone(), ready_tx.clone());
        threads.push(std::thread::spawn(move || -> Result<u64, String> {
            let mut gpu = NativeGpu::new(backend)?;
            let workload = Workload::prepare(&mut gpu, kernel, batch)?;
            ready_tx.send(()).map_err(|_| "the parent stopped waiting".to_string())?;
            let (start, end) = go_rx.recv().map_err(|_| "no `go` from the parent".to_string())?;
            workload.run_window(&mut gpu, start, end)
        }));
    }
    drop(ready_tx);
    for _ in 0..clients {
        if ready_rx.recv().is_err() {
            break; // a thread failed before `ready`: its error is collected below
        }
    }
    let start = monotonic_nanos() + START_DELAY.as_nanos() as u64;
    for go in &go_senders {
        let _ = go.send((start, start + window.as_nanos() as u64));
    }
    let mut counts = Vec::with_capacity(clients);
    for thread in threads {
        counts.push(thread.join().map_err(|_| "a tenant thread panicked".to_string())??);
    }
    Ok(Outcome { kernel, clients, counts, window })
}

/// One client's work: its buffer, kernel and batch, loaded and warmed up.
struct Workload {
    f: usize,
    data: u64,
    blocks: u32,
    args: [Arg; 3],
    batch: usize,
}

impl Workload {
    /// Loads the kernel, fills the buffer and launches one warm-up batch.
    fn prepare(gpu: &mut dyn Gpu, kernel: KernelSize, batch: usize) -> Result<Self, String> {
        gpu.load(SOURCE)?;
        let f = gpu.function("tenant_work")?;
        let blocks = kernel.blocks();
        let n = (blocks * BLOCK_THREADS) as usize;
        let data = gpu.alloc(n * 4)?;
        gpu.upload(data, &vec![0u8; n * 4])?;
        let args = [Arg::Ptr(data), Arg::I32(n as i32), Arg::I32(kernel.iterations())];
        let workload = Self { f, data, blocks, args, batch };
        workload.batch(gpu)?;
        Ok(workload)
    }

    fn batch(&self, gpu: &mut dyn Gpu) -> Result<(), String> {
        for _ in 0..self.batch {
            gpu.launch(self.f, [self.blocks, 1, 1], [BLOCK_THREADS, 1, 1], &self.args)?;
        }
        gpu.synchronize()
    }

    /// Launches batches from `start` until `end` (`CLOCK_MONOTONIC` ns); the kernels run, checked
    /// by the buffer's value.
    fn run_window(&self, gpu: &mut dyn Gpu, start: u64, end: u64) -> Result<u64, String> {
        while monotonic_nanos() < start {
            std::thread::sleep(Duration::from_micros(100));
        }
        let mut count = 0u64;
        while monotonic_nanos() < end {
            self.batch(gpu)?;
            count += self.batch as u64;
        }
        let mut check = [0u8; 4];
        gpu.read_after_sync(self.data, &mut check)?;
        let value = f32::from_ne_bytes(check);
        if !value.is_finite() || value <= 0.0 {
            return Err(format!("the kernel's result {value} is not what {count} launches give"));
        }
        Ok(count)
    }
}

/// The child's side: one client.
pub fn child_main(side: Side, backend: BackendKind, lib: &PathBuf, kernel: KernelSize, batch: usize) -> Result<(), String> {
    let hip;
    let mut gpu: Box<dyn Gpu + '_> = match side {
        Side::Native | Side::NativeThreads => Box::new(NativeGpu::new(make_backend(backend)?)?),
        Side::Remote => {
            if std::env::var_os("HIP_REMOTE_WORKER").is_none() {
                return Err("tenants-child --side remote needs HIP_REMOTE_WORKER".into());
            }
            hip = crate::hip::Hip::load(lib)?;
            Box::new(RemoteGpu::new(&hip)?)
        }
    };
    let workload = Workload::prepare(&mut *gpu, kernel, batch)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready").and_then(|_| out.flush()).map_err(|e| e.to_string())?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).map_err(|e| e.to_string())?;
    let mut words = line.split_whitespace();
    let (Some("go"), Some(start), Some(end)) = (words.next(), words.next(), words.next()) else {
        return Err(format!("expected `go START END`, got {line:?}"));
    };
    let (start, end): (u64, u64) = (start.parse().map_err(|e| format!("{e}"))?, end.parse().map_err(|e| format!("{e}"))?);
    let count = workload.run_window(&mut *gpu, start, end)?;
    writeln!(out, "count {count}").and_then(|_| out.flush()).map_err(|e| e.to_string())
}

/// The table of `rows` (`(mode, outcome)`), and one `TENANTS ...` line per row for scripts.
pub fn table(rows: &[(String, Outcome)]) -> String {
    let mut out = format!("{:<14} {:<6} {:>7} {:>12} {:>16}\n", "mode", "kernel", "clients", "kernels/s", "fastest/slowest");
    for (mode, o) in rows {
        out.push_str(&format!("{:<14} {:<6} {:>7} {:>12.0} {:>16.3}\n", mode, o.kernel.label(), o.clients, o.aggregate(), o.spread()));
    }
    for (mode, o) in rows {
        let counts: Vec<String> = o.counts.iter().map(u64::to_string).collect();
        out.push_str(&format!(
            "TENANTS mode={mode} kernel={} clients={} kernels_per_s={:.0} spread={:.3} counts={}\n",
            o.kernel.label(),
            o.clients,
            o.aggregate(),
            o.spread(),
            counts.join(",")
        ));
    }
    out
}
