//! `hip-remote wan-bench`: the client library through the WAN proxy ([`crate::proxy`]) at
//! several round-trip times, counting the round trips and time of what a program does:
//!
//! - **start**: a fresh process to its first kernel's completion: connect, handshake and
//!   authentication (`hipGetDeviceCount`), `hipModuleLoadData` of a code object,
//!   `hipModuleGetFunction`, `hipModuleLaunchKernel`, `hipDeviceSynchronize`;
//! - **step**: 4 KiB `hipMemcpyAsync` up, 10 kernels, 4 KiB `hipMemcpyAsync` down into
//!   pinned memory (`hipHostMalloc`; into pageable memory HIP's copy is complete when it
//!   returns, a round trip of its own), `hipStreamSynchronize` (the result checked against
//!   its oracle);
//! - **weights**: one `hipMemcpy` of `--weights-mib` of pageable memory to the device;
//! - **train**: the bench's MLP training step (`workload::mlp`: its launches and one
//!   synchronising read of the loss).
//!
//! Each round-trip time runs in a child process (`hip-remote wan-child`, hidden) that starts
//! its own proxy to the worker and points its client library at it, so each client starts
//! cold, as a program does. The child prints one line `result {json}`.

use crate::hip::Hip;
use crate::proxy::{Counts, Link, Proxy};
use crate::workload::{self, Arg, Gpu, Launch, RemoteGpu};
use serde_json::{json, Value};
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Bytes of the step's two small copies.
pub const STEP_COPY: usize = 4096;
/// Kernels in one step.
pub const STEP_KERNELS: usize = 10;
/// Targets: round trips of a steady step and of the start.
pub const STEP_TARGET: f64 = 1.0;
pub const START_TARGET: u64 = 4;

/// What the parent asks each child to measure.
#[derive(Clone, Debug)]
pub struct Plan {
    pub weights_bytes: usize,
    pub steps: usize,
    pub train_steps: usize,
    pub jitter: Duration,
    pub bandwidth: Option<f64>,
    /// The weights' content: the same seed gives the same bytes (a program run again).
    pub weights_seed: u64,
    /// `HIP_REMOTE_CONTENT_STORE` for the children (the proxy is on loopback, where the
    /// library's `auto` turns it off).
    pub content_store: bool,
    /// Weights that compress (3 of 4 64-byte blocks zero, as sparse weights) rather than
    /// random bytes.
    pub compressible: bool,
}

/// One child's figures.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    pub rtt_ms: f64,
    /// Round trips of each call of the start, in order.
    pub start_calls: Vec<(String, u64, f64)>,
    pub start_rt: u64,
    pub start_ms: f64,
    pub step_rt: f64,
    pub step_ms: f64,
    pub weights_rt: u64,
    pub weights_ms: f64,
    pub weights_up_bytes: u64,
    /// The same bytes uploaded again to another buffer (the content store's hit, or with the
    /// store off, a copy the compression policy may send compressed).
    pub again_rt: u64,
    pub again_ms: f64,
    pub again_up_bytes: u64,
    pub train_rt: f64,
    pub train_ms: f64,
}

impl Figures {
    fn json(&self) -> Value {
        json!({
            "rtt_ms": self.rtt_ms,
            "start": {"round_trips": self.start_rt, "ms": self.start_ms,
                      "calls": self.start_calls.iter().map(|(n, rt, ms)| json!({"call": n, "round_trips": rt, "ms": ms})).collect::<Vec<_>>()},
            "step": {"round_trips": self.step_rt, "ms": self.step_ms},
            "weights": {"round_trips": self.weights_rt, "ms": self.weights_ms, "up_bytes": self.weights_up_bytes},
            "weights_again": {"round_trips": self.again_rt, "ms": self.again_ms, "up_bytes": self.again_up_bytes},
            "train": {"round_trips": self.train_rt, "ms": self.train_ms},
        })
    }

    fn from_json(v: &Value) -> Result<Self, String> {
        let f = |path: &[&str]| -> Result<f64, String> {
            path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_f64).ok_or_else(|| format!("the child's result has no {}", path.join(".")))
        };
        let calls = v["start"]["calls"].as_array().cloned().unwrap_or_default();
        Ok(Self {
            rtt_ms: f(&["rtt_ms"])?,
            start_calls: calls
                .iter()
                .map(|c| {
                    (c["call"].as_str().unwrap_or("?").to_string(), c["round_trips"].as_u64().unwrap_or(0), c["ms"].as_f64().unwrap_or(f64::NAN))
                })
                .collect(),
            start_rt: f(&["start", "round_trips"])? as u64,
            start_ms: f(&["start", "ms"])?,
            step_rt: f(&["step", "round_trips"])?,
            step_ms: f(&["step", "ms"])?,
            weights_rt: f(&["weights", "round_trips"])? as u64,
            weights_ms: f(&["weights", "ms"])?,
            weights_up_bytes: f(&["weights", "up_bytes"])? as u64,
            again_rt: f(&["weights_again", "round_trips"])? as u64,
            again_ms: f(&["weights_again", "ms"])?,
            again_up_bytes: f(&["weights_again", "up_bytes"])? as u64,
            train_rt: f(&["train", "round_trips"])?,
            train_ms: f(&["train", "ms"])?,
        })
    }
}

/// Runs one round-trip time in a child process against the worker in `HIP_REMOTE_WORKER`.
pub fn run_child(lib: &Path, code: &Path, rtt: Duration, plan: &Plan) -> Result<Figures, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(&exe);
    cmd.args(["wan-child", "--lib"]).arg(lib).arg("--code").arg(code);
    cmd.args(["--rtt-us", &rtt.as_micros().to_string(), "--jitter-us", &plan.jitter.as_micros().to_string()]);
    cmd.args(["--weights-bytes", &plan.weights_bytes.to_string(), "--steps", &plan.steps.to_string()]);
    cmd.args(["--train-steps", &plan.train_steps.to_string(), "--weights-seed", &plan.weights_seed.to_string()]);
    cmd.env("HIP_REMOTE_CONTENT_STORE", if plan.content_store { "on" } else { "off" });
    // The policy decides; `auto` would keep it off for the proxy's loopback address.
    cmd.env("HIP_REMOTE_COMPRESSION", "on");
    if plan.compressible {
        cmd.arg("--compressible");
    }
    if let Some(bw) = plan.bandwidth {
        cmd.args(["--bandwidth", &format!("{bw}")]);
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let out = cmd.output().map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("result "))
        .ok_or_else(|| format!("the wan child gave no result ({}; its stderr is above)", out.status))?;
    Figures::from_json(&serde_json::from_str(line).map_err(|e| format!("the wan child's result: {e}"))?)
}

/// The child: a proxy to the worker, the client library pointed at it, the four phases.
pub fn child_main(lib: &PathBuf, code: &Path, rtt: Duration, plan: &Plan) -> Result<(), String> {
    let worker = std::env::var("HIP_REMOTE_WORKER").map_err(|_| "wan-child: HIP_REMOTE_WORKER is not set".to_string())?;
    let target = worker.trim_start_matches("tcp://");
    let link = Link { delay: rtt / 2, jitter: plan.jitter, bandwidth: plan.bandwidth };
    let proxy = Proxy::start("127.0.0.1:0", target, link).map_err(|e| format!("proxy to {target}: {e}"))?;
    std::env::set_var("HIP_REMOTE_WORKER", proxy.local_addr().to_string());
    // The proxy is on this host: the client must not move to the worker's shared memory.
    std::env::set_var("HIP_REMOTE_SHM", "off");
    let code = std::fs::read(code).map_err(|e| format!("{}: {e}", code.display()))?;
    let hip = Hip::load(lib)?;
    let mut figures = Figures { rtt_ms: rtt.as_secs_f64() * 1e3, ..Figures::default() };
    start(&hip, &proxy, &code, &mut figures)?;
    step(&hip, &proxy, plan.steps, &mut figures)?;
    weights(&hip, &proxy, plan, &mut figures)?;
    train(&hip, &proxy, plan.train_steps, &mut figures)?;
    println!("result {}", figures.json());
    Ok(())
}

/// Round trips and time of `f`.
fn measured<R>(proxy: &Proxy, f: impl FnOnce() -> Result<R, String>) -> Result<(R, Counts, f64), String> {
    let before = proxy.counts();
    let t = Instant::now();
    let r = f()?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    Ok((r, proxy.counts().since(&before), ms))
}

fn start(hip: &Hip, proxy: &Proxy, code: &[u8], fig: &mut Figures) -> Result<(), String> {
    let before = proxy.counts();
    let t = Instant::now();
    let mut call = |name: &str, f: &mut dyn FnMut() -> Result<(), String>| -> Result<(), String> {
        let ((), c, ms) = measured(proxy, f)?;
        fig.start_calls.push((name.to_string(), c.round_trips, ms));
        Ok(())
    };
    let (mut count, mut module, mut function) = (0, std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: HIP contracts: valid out-pointers; `code` is a complete image that outlives the
    // load; `function` is the module's parameterless `empty` kernel.
    unsafe {
        call("hipGetDeviceCount (connect, handshake)", &mut || hip.check("hipGetDeviceCount", (hip.get_device_count)(&mut count)))?;
        call("hipModuleLoadData", &mut || hip.check("hipModuleLoadData", (hip.module_load_data)(&mut module, code.as_ptr().cast())))?;
        call("hipModuleGetFunction", &mut || hip.check("hipModuleGetFunction", (hip.module_get_function)(&mut function, module, c"empty".as_ptr())))?;
        call("hipModuleLaunchKernel", &mut || {
            hip.check(
                "hipModuleLaunchKernel",
                (hip.module_launch_kernel)(function, 1, 1, 1, 1, 1, 1, 0, std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut()),
            )
        })?;
        call("hipDeviceSynchronize", &mut || hip.check("hipDeviceSynchronize", (hip.device_synchronize)()))?;
    }
    fig.start_ms = t.elapsed().as_secs_f64() * 1e3;
    fig.start_rt = proxy.counts().since(&before).round_trips;
    Ok(())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn step(hip: &Hip, proxy: &Proxy, steps: usize, fig: &mut Figures) -> Result<(), String> {
    let mut gpu = RemoteGpu::new(hip)?;
    gpu.load(workload::SOURCE)?;
    let axpy = gpu.function("axpy")?;
    let n = STEP_COPY / 4;
    let (dx, dy) = (gpu.alloc(STEP_COPY)?, gpu.alloc(STEP_COPY)?);
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    gpu.upload(dx, &x.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>())?;
    let mut pinned: *mut c_void = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; freed below.
    hip.check("hipHostMalloc", unsafe { (hip.host_malloc)(&mut pinned, STEP_COPY, 0) })?;
    let result = step_rounds(hip, proxy, steps, &mut gpu, axpy, [dx, dy], &x, pinned.cast(), fig);
    // SAFETY: allocated above, no work uses it after the rounds' synchronize.
    unsafe { (hip.host_free)(pinned) };
    result
}

/// The measured rounds of [`step`]: `back` is a pinned buffer of `STEP_COPY` bytes.
#[allow(clippy::too_many_arguments)]
fn step_rounds(
    hip: &Hip,
    proxy: &Proxy,
    steps: usize,
    gpu: &mut RemoteGpu,
    axpy: usize,
    [dx, dy]: [u64; 2],
    x: &[f32],
    back: *mut f32,
    fig: &mut Figures,
) -> Result<(), String> {
    let n = STEP_COPY / 4;
    let grid = [(n as u32).div_ceil(256), 1, 1];
    let stream = gpu.stream();
    let (mut rts, mut times) = (Vec::new(), Vec::new());
    for s in 0..steps.max(1) + 1 {
        let y: Vec<f32> = (0..n).map(|i| (i + s) as f32).collect();
        // SAFETY: `back` holds `n` floats (STEP_COPY bytes), read only after the synchronize.
        let back_slice = |i: usize| unsafe { *back.add(i) };
        let ((), c, ms) = measured(proxy, || {
            // SAFETY: `dy` holds STEP_COPY bytes; `y` and `back` live until the synchronize.
            unsafe { hip.check("hipMemcpyAsync", (hip.memcpy_async)(dy as *mut c_void, y.as_ptr().cast(), STEP_COPY, 1, stream))? };
            for _ in 0..STEP_KERNELS {
                gpu.launch(axpy, grid, [256, 1, 1], &[Arg::F32(1.0), Arg::Ptr(dx), Arg::Ptr(dy), Arg::I32(n as i32)])?;
            }
            // SAFETY: as above.
            unsafe {
                hip.check("hipMemcpyAsync", (hip.memcpy_async)(back.cast(), dy as *const c_void, STEP_COPY, 2, stream))?;
                hip.check("hipStreamSynchronize", (hip.stream_synchronize)(stream))
            }
        })?;
        if let Some(i) = (0..n).find(|&i| back_slice(i) != y[i] + STEP_KERNELS as f32 * x[i]) {
            return Err(format!("step {s}: y[{i}] = {}, want {}", back_slice(i), y[i] + STEP_KERNELS as f32 * x[i]));
        }
        if s > 0 {
            rts.push(c.round_trips as f64);
            times.push(ms);
        }
    }
    fig.step_rt = rts.iter().sum::<f64>() / rts.len() as f64;
    fig.step_ms = median(times);
    Ok(())
}

fn weights(hip: &Hip, proxy: &Proxy, plan: &Plan, fig: &mut Figures) -> Result<(), String> {
    let (bytes, seed) = (plan.weights_bytes, plan.weights_seed);
    let (mut dev, mut again) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: valid out-pointers.
    unsafe {
        hip.check("hipMalloc", (hip.malloc)(&mut dev, bytes))?;
        hip.check("hipMalloc", (hip.malloc)(&mut again, bytes))?;
    }
    // Incompressible bytes, as trained weights are.
    let mut state = 0x853c_49e6_748f_ea9bu64 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut host: Vec<u8> = (0..bytes)
        .map(|_| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 56) as u8
        })
        .collect();
    if plan.compressible {
        for (i, block) in host.chunks_mut(64).enumerate() {
            if (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(seed) >> 62 != 0 {
                block.fill(0);
            }
        }
    }
    // SAFETY: `dev` and `host` hold `bytes` bytes.
    let ((), c, ms) = measured(proxy, || hip.check("hipMemcpy", unsafe { (hip.memcpy)(dev, host.as_ptr().cast(), bytes, 1) }))?;
    fig.weights_rt = c.round_trips;
    fig.weights_ms = ms;
    fig.weights_up_bytes = c.up_bytes;
    // SAFETY: as above.
    let ((), c, ms) = measured(proxy, || hip.check("hipMemcpy", unsafe { (hip.memcpy)(again, host.as_ptr().cast(), bytes, 1) }))?;
    (fig.again_rt, fig.again_ms, fig.again_up_bytes) = (c.round_trips, ms, c.up_bytes);
    // Both copies arrived whole: the device's bytes read back.
    let mut back = vec![0u8; bytes];
    for (name, ptr) in [("first", dev), ("second", again)] {
        // SAFETY: `ptr` holds `bytes` bytes, `back` too.
        hip.check("hipMemcpy", unsafe { (hip.memcpy)(back.as_mut_ptr().cast(), ptr, bytes, 2) })?;
        if back != host {
            return Err(format!("the {name} weight upload reads back different bytes"));
        }
    }
    // SAFETY: from hipMalloc above.
    unsafe {
        hip.check("hipFree", (hip.free)(dev))?;
        hip.check("hipFree", (hip.free)(again))
    }
}

/// The training step's [`Gpu`]: the remote one, noting the proxy's counts after each
/// synchronising read (the end of a step).
struct StepCounter<'a> {
    gpu: RemoteGpu<'a>,
    proxy: &'a Proxy,
    ends: Vec<Counts>,
}

impl Gpu for StepCounter<'_> {
    fn load(&mut self, source: &str) -> Result<(), String> {
        self.gpu.load(source)
    }
    fn function(&mut self, name: &str) -> Result<usize, String> {
        self.gpu.function(name)
    }
    fn alloc(&mut self, bytes: usize) -> Result<u64, String> {
        self.gpu.alloc(bytes)
    }
    fn upload(&mut self, dst: u64, data: &[u8]) -> Result<(), String> {
        self.gpu.upload(dst, data)
    }
    fn launch(&mut self, f: usize, grid: [u32; 3], block: [u32; 3], args: &[Arg]) -> Result<(), String> {
        self.gpu.launch(f, grid, block, args)
    }
    fn read_after_sync(&mut self, src: u64, out: &mut [u8]) -> Result<(), String> {
        self.gpu.read_after_sync(src, out)?;
        self.ends.push(self.proxy.counts());
        Ok(())
    }
    fn synchronize(&mut self) -> Result<(), String> {
        self.gpu.synchronize()
    }
    fn graph(&mut self, chain: &[Launch]) -> Result<usize, String> {
        self.gpu.graph(chain)
    }
    fn graph_launch(&mut self, graph: usize) -> Result<(), String> {
        self.gpu.graph_launch(graph)
    }
}

fn train(hip: &Hip, proxy: &Proxy, steps: usize, fig: &mut Figures) -> Result<(), String> {
    let mut counter = StepCounter { gpu: RemoteGpu::new(hip)?, proxy, ends: Vec::new() };
    let (kernels, _) = workload::Kernels::load(&mut counter)?;
    let cfg =
        workload::MlpConfig { batch: 64, input: 64, hidden: 128, classes: 8, micro: 1, steps: steps.max(2), warmup: 1, lr: 0.2, data_batches: 4 };
    let run = workload::mlp(&mut counter, &kernels, &cfg)?;
    if !run.losses.iter().all(|l| l.is_finite()) {
        return Err(format!("training losses not finite: {:?}", run.losses));
    }
    // Steps after the warm-up: from one step's end to the next.
    let ends = &counter.ends[cfg.warmup..];
    let rts: Vec<f64> = ends.windows(2).map(|w| w[1].since(&w[0]).round_trips as f64).collect();
    fig.train_rt = rts.iter().sum::<f64>() / rts.len().max(1) as f64;
    fig.train_ms = median(run.step_ms);
    Ok(())
}

/// The markdown tables of `rows`.
pub fn table(rows: &[Figures], plan: &Plan, worker: &str) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "WAN through `hip-remote proxy` (one-way delay = RTT/2, jitter {:?}, bandwidth {}), {worker}.\n\
         Round trips: TCP connects plus client→worker bursts (`tools/cli/src/proxy.rs`). Targets: start ≤ {START_TARGET}, step ≤ {STEP_TARGET}.\n\n",
        plan.jitter,
        plan.bandwidth.map_or("unlimited".to_string(), |b| format!("{:.1} MB/s", b / 1e6))
    ));
    s.push_str(&format!(
        "| RTT ms | start RT | start ms | step RT | step ms | {} MiB upload RT | upload ms | up MiB | again RT | again ms | again up MiB | train step RT | train step ms |\n",
        plan.weights_bytes >> 20
    ));
    s.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {:.1} | {:.2} | {:.2} | {} | {:.1} | {:.1} | {} | {:.1} | {:.3} | {:.2} | {:.2} |\n",
            r.rtt_ms,
            r.start_rt,
            r.start_ms,
            r.step_rt,
            r.step_ms,
            r.weights_rt,
            r.weights_ms,
            mib(r.weights_up_bytes),
            r.again_rt,
            r.again_ms,
            mib(r.again_up_bytes),
            r.train_rt,
            r.train_ms
        ));
    }
    if let Some(last) = rows.last() {
        s.push_str(&format!("\nThe start's round trips by call (RTT {} ms):\n\n| call | RT | ms |\n|---|---:|---:|\n", last.rtt_ms));
        for (name, rt, ms) in &last.start_calls {
            s.push_str(&format!("| {name} | {rt} | {ms:.1} |\n"));
        }
    }
    s
}

/// JSON of the whole run.
pub fn json(rows: &[Figures]) -> Value {
    Value::Array(rows.iter().map(Figures::json).collect())
}
