//! Kernel workloads run identically natively and remotely: an empty-kernel launch rate, a
//! small MLP training loop and a chain of small kernels launched one by one or as a graph
//! ([`kernel_chain`]), written in HIP and compiled with hiprtc on the worker's backend
//! (natively: `RtcBackend::rtc_compile`; remotely: the client library's `__hipRemoteRtcCompile`,
//! libhiprtc's route onto the same connection, then `hipModuleLoadData`).
//!
//! Kernels use no `__shared__`, `__syncthreads` or atomics, so the same source runs on the host
//! backend (which refuses the first two) and gives bit-identical results natively and
//! remotely: every sum is one thread's sequential loop.

use crate::hip::{Dim3, Hip, KernelNodeParams};
use std::ffi::{c_char, c_int, c_void, CString};
use std::time::Instant;

/// The program every workload loads (one compile per side).
pub const SOURCE: &str = r#"#include <hip/hip_runtime.h>

extern "C" __global__ void empty() {}

// C[M×N] = beta·C + op(A)·op(B); op(A) is M×K (ta: A is stored K×M), op(B) is K×N (tb: B is
// stored N×K). One thread per output element; a block is a tile of C.
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K, int ta, int tb, float beta) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
    float a = ta ? A[(long long)k * M + row] : A[(long long)row * K + k];
    float b = tb ? B[(long long)col * K + k] : B[(long long)k * N + col];
    acc += a * b;
  }
  float* c = C + (long long)row * N + col;
  *c = (beta != 0.0f ? beta * *c : 0.0f) + acc;
}

// Z += bias (per column); A = relu ? max(Z, 0) : Z.
extern "C" __global__ void bias_act(float* Z, const float* bias, float* A, int M, int N, int relu) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= M * N) return;
  float z = Z[i] + bias[i % N];
  Z[i] = z;
  A[i] = relu ? fmaxf(z, 0.0f) : z;
}

// Per row: softmax cross-entropy loss against labels, and its gradient times scale.
extern "C" __global__ void softmax_xent(const float* Z, const int* labels, float* dZ, float* row_loss, int M, int C, float scale) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= M) return;
  const float* z = Z + (long long)r * C;
  float mx = z[0];
  for (int c = 1; c < C; ++c) mx = fmaxf(mx, z[c]);
  float sum = 0.0f;
  for (int c = 0; c < C; ++c) sum += expf(z[c] - mx);
  int label = labels[r];
  row_loss[r] = logf(sum) - (z[label] - mx);
  for (int c = 0; c < C; ++c) {
    float p = expf(z[c] - mx) / sum;
    dZ[(long long)r * C + c] = (p - (c == label ? 1.0f : 0.0f)) * scale;
  }
}

extern "C" __global__ void relu_grad(const float* dA, const float* Z, float* dZ, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dZ[i] = Z[i] > 0.0f ? dA[i] : 0.0f;
}

// out[col] = beta·out[col] + Σ_rows X[row][col].
extern "C" __global__ void colsum(const float* X, float* out, int M, int N, float beta) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= N) return;
  float acc = 0.0f;
  for (int r = 0; r < M; ++r) acc += X[(long long)r * N + col];
  out[col] = (beta != 0.0f ? beta * out[col] : 0.0f) + acc;
}

extern "C" __global__ void sgd(float* W, const float* G, int n, float lr) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) W[i] -= lr * G[i];
}

// y = a·x + y over n floats: the graph benchmark's small kernel, chained through y.
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void mean(const float* x, float* out, int n) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += x[i];
  out[0] = s / n;
}
"#;

/// One kernel argument.
#[derive(Copy, Clone, Debug)]
pub enum Arg {
    Ptr(u64),
    I32(i32),
    F32(f32),
}

impl Arg {
    /// The argument's bytes (little-endian, in the first `len`) and `len`.
    pub fn bytes(&self) -> ([u8; 8], usize) {
        let mut b = [0u8; 8];
        match *self {
            Arg::Ptr(p) => {
                b = p.to_ne_bytes();
                (b, 8)
            }
            Arg::I32(v) => {
                b[..4].copy_from_slice(&v.to_ne_bytes());
                (b, 4)
            }
            Arg::F32(v) => {
                b[..4].copy_from_slice(&v.to_ne_bytes());
                (b, 4)
            }
        }
    }
}

/// One kernel launch, kept to be repeated or recorded in a graph.
#[derive(Clone, Debug)]
pub struct Launch {
    /// An index from [`Gpu::function`].
    pub function: usize,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: Vec<Arg>,
}

/// What a workload needs from a device, implemented natively ([`crate::native::NativeGpu`])
/// and through the client library ([`RemoteGpu`]), each on one stream of device 0.
pub trait Gpu {
    /// Compiles `source` with hiprtc for the device and loads it as the module.
    fn load(&mut self, source: &str) -> Result<(), String>;
    /// A kernel of the module, as an index for [`Gpu::launch`].
    fn function(&mut self, name: &str) -> Result<usize, String>;
    /// Device memory, freed when the `Gpu` is dropped.
    fn alloc(&mut self, bytes: usize) -> Result<u64, String>;
    /// Synchronous upload (after earlier work on the stream).
    fn upload(&mut self, dst: u64, data: &[u8]) -> Result<(), String>;
    /// Fire-and-forget launch on the stream.
    fn launch(&mut self, f: usize, grid: [u32; 3], block: [u32; 3], args: &[Arg]) -> Result<(), String>;
    /// Waits for the stream, then reads `out.len()` bytes at `src`: one synchronisation.
    fn read_after_sync(&mut self, src: u64, out: &mut [u8]) -> Result<(), String>;
    /// Waits for the stream; reports errors latched by queued work.
    fn synchronize(&mut self) -> Result<(), String>;
    /// Records `chain` as a graph of kernel nodes, each depending on the one before, and
    /// instantiates it; returns an index for [`Gpu::graph_launch`]. Freed with the `Gpu`.
    fn graph(&mut self, chain: &[Launch]) -> Result<usize, String>;
    /// Fire-and-forget launch of an instantiated graph on the stream.
    fn graph_launch(&mut self, graph: usize) -> Result<(), String>;
}

/// The remote [`Gpu`]: the real client library on one `hipStream_t`.
pub struct RemoteGpu<'a> {
    hip: &'a Hip,
    stream: *mut c_void,
    module: *mut c_void,
    functions: Vec<*mut c_void>,
    allocations: Vec<*mut c_void>,
    graphs: Vec<*mut c_void>,
    execs: Vec<*mut c_void>,
}

impl<'a> RemoteGpu<'a> {
    pub fn new(hip: &'a Hip) -> Result<Self, String> {
        let mut stream = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        hip.check("hipStreamCreate", unsafe { (hip.stream_create)(&mut stream) })?;
        Ok(Self { hip, stream, module: std::ptr::null_mut(), functions: Vec::new(), allocations: Vec::new(), graphs: Vec::new(), execs: Vec::new() })
    }

    /// The `hipStream_t` its work goes to.
    pub fn stream(&self) -> *mut c_void {
        self.stream
    }
}

/// Calls `f` with HIP's `kernelParams` for `args`: one pointer per argument, each to a value
/// whose first bytes are the argument (little-endian), valid during the call.
fn with_kernel_params<R>(args: &[Arg], f: impl FnOnce(*mut *mut c_void) -> R) -> Result<R, String> {
    const MAX: usize = 16;
    if args.len() > MAX {
        return Err(format!("{} kernel arguments (at most {MAX} here)", args.len()));
    }
    let mut values = [0u64; MAX];
    let mut pointers = [std::ptr::null_mut::<c_void>(); MAX];
    for (i, a) in args.iter().enumerate() {
        values[i] = u64::from_ne_bytes(a.bytes().0);
    }
    for (p, v) in pointers.iter_mut().zip(values.iter_mut()).take(args.len()) {
        *p = (v as *mut u64).cast();
    }
    Ok(f(if args.is_empty() { std::ptr::null_mut() } else { pointers.as_mut_ptr() }))
}

/// Compiles `source` on the worker through the client library (`__hipRemoteRtcCompile`).
pub fn remote_compile(hip: &Hip, source: &str) -> Result<Vec<u8>, String> {
    struct Outcome {
        success: c_int,
        log: String,
        code: Vec<u8>,
    }
    unsafe extern "C" fn on_result(
        ctx: *mut c_void,
        success: c_int,
        log: *const c_char,
        log_len: usize,
        _lowered: *const c_char,
        _lowered_len: usize,
        code: *const c_void,
        code_len: usize,
    ) {
        // SAFETY: `ctx` is the `Outcome` below; the slices are valid during this call.
        unsafe {
            let out = &mut *(ctx as *mut Outcome);
            out.success = success;
            if log_len > 0 {
                out.log = String::from_utf8_lossy(std::slice::from_raw_parts(log as *const u8, log_len)).into_owned();
            }
            if code_len > 0 {
                out.code = std::slice::from_raw_parts(code as *const u8, code_len).to_vec();
            }
        }
    }
    let compile = hip.rtc_compile.ok_or("the client library does not export __hipRemoteRtcCompile")?;
    let mut out = Outcome { success: -1, log: String::new(), code: Vec::new() };
    let (name, options) = ("bench.hip", "-O3\0");
    let null = std::ptr::null();
    // SAFETY: every (pointer, length) pair is valid for the call; the callback fills `out`.
    let rc = unsafe {
        compile(
            name.as_ptr().cast(),
            name.len(),
            source.as_ptr().cast(),
            source.len(),
            null,
            0,
            null,
            0,
            options.as_ptr().cast(),
            options.len(),
            null,
            0,
            Some(on_result),
            (&mut out as *mut Outcome).cast(),
        )
    };
    if out.success != 1 {
        return Err(format!("remote hiprtc compile failed (hipError {rc}):\n{}", out.log));
    }
    Ok(out.code)
}

impl Gpu for RemoteGpu<'_> {
    fn load(&mut self, source: &str) -> Result<(), String> {
        let code = remote_compile(self.hip, source)?;
        // SAFETY: `code` is a complete image (host module or NUL-terminated PTX) as the worker
        // produced it.
        self.hip.check("hipModuleLoadData", unsafe { (self.hip.module_load_data)(&mut self.module, code.as_ptr().cast()) })
    }

    fn function(&mut self, name: &str) -> Result<usize, String> {
        let cname = CString::new(name).map_err(|e| e.to_string())?;
        let mut f = std::ptr::null_mut();
        // SAFETY: a loaded module, a NUL-terminated name, a valid out-pointer.
        self.hip.check("hipModuleGetFunction", unsafe { (self.hip.module_get_function)(&mut f, self.module, cname.as_ptr()) })?;
        self.functions.push(f);
        Ok(self.functions.len() - 1)
    }

    fn alloc(&mut self, bytes: usize) -> Result<u64, String> {
        let mut p = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        self.hip.check("hipMalloc", unsafe { (self.hip.malloc)(&mut p, bytes) })?;
        self.allocations.push(p);
        Ok(p as u64)
    }

    fn upload(&mut self, dst: u64, data: &[u8]) -> Result<(), String> {
        // SAFETY: `dst` from hipMalloc with room for `data`; the stream is ours.
        unsafe {
            self.hip.check("hipMemcpyAsync", (self.hip.memcpy_async)(dst as *mut c_void, data.as_ptr().cast(), data.len(), 1, self.stream))?;
            self.hip.check("hipStreamSynchronize", (self.hip.stream_synchronize)(self.stream))
        }
    }

    fn launch(&mut self, f: usize, grid: [u32; 3], block: [u32; 3], args: &[Arg]) -> Result<(), String> {
        let (hip, function, stream) = (self.hip, self.functions[f], self.stream);
        with_kernel_params(args, |params| {
            // SAFETY: a function of the loaded module; `params` holds one valid pointer per
            // kernel parameter, each to a value of that parameter's size (checked by the
            // library against the worker's layout).
            hip.check("hipModuleLaunchKernel", unsafe {
                (hip.module_launch_kernel)(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, stream, params, std::ptr::null_mut())
            })
        })?
    }

    fn read_after_sync(&mut self, src: u64, out: &mut [u8]) -> Result<(), String> {
        // A null-stream hipMemcpy waits for the (blocking) stream first: one round trip.
        // SAFETY: `src` from hipMalloc with at least `out.len()` bytes.
        self.hip.check("hipMemcpy", unsafe { (self.hip.memcpy)(out.as_mut_ptr().cast(), src as *const c_void, out.len(), 2) })
    }

    fn synchronize(&mut self) -> Result<(), String> {
        // SAFETY: our stream.
        self.hip.check("hipStreamSynchronize", unsafe { (self.hip.stream_synchronize)(self.stream) })
    }

    /// `hipGraphCreate`, one `hipGraphAddKernelNode` per launch (depending on the node before),
    /// `hipGraphInstantiate`: as an application records a step explicitly.
    fn graph(&mut self, chain: &[Launch]) -> Result<usize, String> {
        let hip = self.hip;
        let mut graph = std::ptr::null_mut();
        // SAFETY: valid out-pointer, flags 0.
        hip.check("hipGraphCreate", unsafe { (hip.graph_create)(&mut graph, 0) })?;
        self.graphs.push(graph);
        let mut previous: *mut c_void = std::ptr::null_mut();
        for l in chain {
            let dim = |d: [u32; 3]| Dim3 { x: d[0], y: d[1], z: d[2] };
            let func = self.functions[l.function];
            let mut node = std::ptr::null_mut();
            with_kernel_params(&l.args, |kernel_params| {
                let params = KernelNodeParams {
                    block_dim: dim(l.block),
                    extra: std::ptr::null_mut(),
                    func,
                    grid_dim: dim(l.grid),
                    kernel_params,
                    shared_mem_bytes: 0,
                };
                let count = usize::from(!previous.is_null());
                // SAFETY: a live graph; `previous` (when counted) is a node of it; `params`
                // holds a function of the loaded module and one valid pointer per parameter
                // (the library packs the values during the call).
                hip.check("hipGraphAddKernelNode", unsafe { (hip.graph_add_kernel_node)(&mut node, graph, &previous, count, &params) })
            })??;
            previous = node;
        }
        let mut exec = std::ptr::null_mut();
        let null = std::ptr::null_mut();
        // SAFETY: a live graph, a valid out-pointer; no error node or log wanted.
        hip.check("hipGraphInstantiate", unsafe { (hip.graph_instantiate)(&mut exec, graph, null, null.cast(), 0) })?;
        self.execs.push(exec);
        Ok(self.execs.len() - 1)
    }

    fn graph_launch(&mut self, graph: usize) -> Result<(), String> {
        let exec = *self.execs.get(graph).ok_or("no such graph")?;
        // SAFETY: an executable graph this object instantiated; our stream.
        self.hip.check("hipGraphLaunch", unsafe { (self.hip.graph_launch)(exec, self.stream) })
    }
}

impl Drop for RemoteGpu<'_> {
    fn drop(&mut self) {
        // SAFETY: handles this object created, each released once.
        unsafe {
            let _ = (self.hip.stream_synchronize)(self.stream);
            for e in self.execs.drain(..) {
                let _ = (self.hip.graph_exec_destroy)(e);
            }
            for g in self.graphs.drain(..) {
                let _ = (self.hip.graph_destroy)(g);
            }
            for p in self.allocations.drain(..) {
                let _ = (self.hip.free)(p);
            }
            if !self.module.is_null() {
                let _ = (self.hip.module_unload)(self.module);
            }
            let _ = (self.hip.stream_destroy)(self.stream);
        }
    }
}

/// Empty-kernel launches per second: `n` fire-and-forget launches of `empty` on the stream,
/// then one synchronize (after a warm-up of `n / 10`).
pub fn launch_rate(gpu: &mut dyn Gpu, empty: usize, n: usize) -> Result<f64, String> {
    for _ in 0..(n / 10).max(1) {
        gpu.launch(empty, [1, 1, 1], [1, 1, 1], &[])?;
    }
    gpu.synchronize()?;
    let t = Instant::now();
    for _ in 0..n {
        gpu.launch(empty, [1, 1, 1], [1, 1, 1], &[])?;
    }
    gpu.synchronize()?;
    Ok(n as f64 / t.elapsed().as_secs_f64())
}

/// Shape of the MLP training run.
#[derive(Clone, Debug)]
pub struct MlpConfig {
    /// Samples per optimisation step.
    pub batch: usize,
    /// Input features.
    pub input: usize,
    /// Hidden units (one ReLU layer).
    pub hidden: usize,
    /// Output classes.
    pub classes: usize,
    /// Samples per forward/backward pass; gradients are accumulated over `batch / micro`
    /// passes (each 11 launches), so `micro` sets the launches per step.
    pub micro: usize,
    /// Timed steps.
    pub steps: usize,
    /// Untimed steps first.
    pub warmup: usize,
    /// SGD learning rate.
    pub lr: f32,
    /// Distinct batches in the synthetic data set, cycled through.
    pub data_batches: usize,
}

impl MlpConfig {
    /// Kernel launches per step: 11 per micro-batch, 4 updates, 1 loss reduction.
    pub fn launches_per_step(&self) -> usize {
        11 * (self.batch / self.micro) + 5
    }
}

/// What one side's MLP run measured.
#[derive(Clone, Debug)]
pub struct MlpRun {
    /// Wall time of each timed step, ms (launches + one synchronising loss read).
    pub step_ms: Vec<f64>,
    /// Mean training loss of every step (warm-up included), as read back each step.
    pub losses: Vec<f32>,
}

/// Deterministic pseudo-random numbers (xorshift64*), so both sides train the same model.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [-1, 1).
    fn uniform(&mut self) -> f32 {
        ((self.next() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn div_up(a: usize, b: usize) -> u32 {
    a.div_ceil(b) as u32
}

/// Trains a 2-layer MLP (input → hidden ReLU → classes, softmax cross-entropy, plain SGD) on a
/// synthetic teacher-labelled data set: per step, `batch / micro` forward+backward passes
/// accumulate the gradients, then 4 SGD updates and a loss mean, then one synchronising
/// 4-byte read of the loss.
pub fn mlp(gpu: &mut dyn Gpu, kernels: &Kernels, cfg: &MlpConfig) -> Result<MlpRun, String> {
    let (b, d, h, c, m) = (cfg.batch, cfg.input, cfg.hidden, cfg.classes, cfg.micro);
    if m == 0 || b % m != 0 {
        return Err(format!("batch {b} is not a multiple of the micro-batch {m}"));
    }
    let samples = b * cfg.data_batches.max(1);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let x: Vec<f32> = (0..samples * d).map(|_| rng.uniform()).collect();
    let teacher: Vec<f32> = (0..d * c).map(|_| rng.uniform()).collect();
    let labels: Vec<i32> = (0..samples)
        .map(|s| {
            let score = |k: usize| (0..d).map(|i| x[s * d + i] * teacher[i * c + k]).sum::<f32>();
            (0..c).max_by(|&p, &q| score(p).total_cmp(&score(q))).unwrap_or(0) as i32
        })
        .collect();
    let glorot = |rng: &mut Rng, fan_in: usize, fan_out: usize| -> Vec<f32> {
        let a = (6.0 / (fan_in + fan_out) as f32).sqrt();
        (0..fan_in * fan_out).map(|_| rng.uniform() * a).collect()
    };
    let w1 = glorot(&mut rng, d, h);
    let w2 = glorot(&mut rng, h, c);

    let f = 4usize;
    let dx = gpu.alloc(samples * d * f)?;
    let dl = gpu.alloc(samples * f)?;
    let (dw1, db1, dw2, db2) = (gpu.alloc(d * h * f)?, gpu.alloc(h * f)?, gpu.alloc(h * c * f)?, gpu.alloc(c * f)?);
    let (gw1, gb1, gw2, gb2) = (gpu.alloc(d * h * f)?, gpu.alloc(h * f)?, gpu.alloc(h * c * f)?, gpu.alloc(c * f)?);
    let (z1, a1, z2) = (gpu.alloc(m * h * f)?, gpu.alloc(m * h * f)?, gpu.alloc(m * c * f)?);
    let (dz2, da1, dz1) = (gpu.alloc(m * c * f)?, gpu.alloc(m * h * f)?, gpu.alloc(m * h * f)?);
    let (row_loss, loss) = (gpu.alloc(b * f)?, gpu.alloc(f)?);
    gpu.upload(dx, &f32_bytes(&x))?;
    gpu.upload(dl, &labels.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>())?;
    gpu.upload(dw1, &f32_bytes(&w1))?;
    gpu.upload(dw2, &f32_bytes(&w2))?;
    gpu.upload(db1, &f32_bytes(&vec![0.0; h]))?;
    gpu.upload(db2, &f32_bytes(&vec![0.0; c]))?;

    let k = kernels;
    let (mi, hi, ci) = (m as i32, h as i32, c as i32);
    // Tiles of C: 16×16 threads, or a row of 256 when C has fewer than 16 rows.
    let mm = |gpu: &mut dyn Gpu, a: u64, bm: u64, cm: u64, rows: usize, cols: usize, inner: usize, ta: i32, tb: i32, beta: f32| {
        let (grid, block) =
            if rows >= 16 { ([div_up(cols, 16), div_up(rows, 16), 1], [16, 16, 1]) } else { ([div_up(cols, 256), rows as u32, 1], [256, 1, 1]) };
        gpu.launch(
            k.matmul,
            grid,
            block,
            &[
                Arg::Ptr(a),
                Arg::Ptr(bm),
                Arg::Ptr(cm),
                Arg::I32(rows as i32),
                Arg::I32(cols as i32),
                Arg::I32(inner as i32),
                Arg::I32(ta),
                Arg::I32(tb),
                Arg::F32(beta),
            ],
        )
    };
    let lin = |n: usize| ([div_up(n, 256), 1, 1], [256, 1, 1]);
    let step = |gpu: &mut dyn Gpu, batch_index: usize| -> Result<f32, String> {
        for mb in 0..b / m {
            let first = batch_index * b + mb * m;
            let xs = dx + (first * d * f) as u64;
            let ls = dl + (first * f) as u64;
            let beta = if mb == 0 { 0.0 } else { 1.0 };
            mm(gpu, xs, dw1, z1, m, h, d, 0, 0, 0.0)?;
            let (g, bl) = lin(m * h);
            gpu.launch(k.bias_act, g, bl, &[Arg::Ptr(z1), Arg::Ptr(db1), Arg::Ptr(a1), Arg::I32(mi), Arg::I32(hi), Arg::I32(1)])?;
            mm(gpu, a1, dw2, z2, m, c, h, 0, 0, 0.0)?;
            let (g, bl) = lin(m * c);
            gpu.launch(k.bias_act, g, bl, &[Arg::Ptr(z2), Arg::Ptr(db2), Arg::Ptr(z2), Arg::I32(mi), Arg::I32(ci), Arg::I32(0)])?;
            let (g, bl) = lin(m);
            gpu.launch(
                k.softmax_xent,
                g,
                bl,
                &[
                    Arg::Ptr(z2),
                    Arg::Ptr(ls),
                    Arg::Ptr(dz2),
                    Arg::Ptr(row_loss + (mb * m * f) as u64),
                    Arg::I32(mi),
                    Arg::I32(ci),
                    Arg::F32(1.0 / b as f32),
                ],
            )?;
            mm(gpu, a1, dz2, gw2, h, c, m, 1, 0, beta)?;
            let (g, bl) = lin(c);
            gpu.launch(k.colsum, g, bl, &[Arg::Ptr(dz2), Arg::Ptr(gb2), Arg::I32(mi), Arg::I32(ci), Arg::F32(beta)])?;
            mm(gpu, dz2, dw2, da1, m, h, c, 0, 1, 0.0)?;
            let (g, bl) = lin(m * h);
            gpu.launch(k.relu_grad, g, bl, &[Arg::Ptr(da1), Arg::Ptr(z1), Arg::Ptr(dz1), Arg::I32(mi * hi)])?;
            mm(gpu, xs, dz1, gw1, d, h, m, 1, 0, beta)?;
            let (g, bl) = lin(h);
            gpu.launch(k.colsum, g, bl, &[Arg::Ptr(dz1), Arg::Ptr(gb1), Arg::I32(mi), Arg::I32(hi), Arg::F32(beta)])?;
        }
        for (w, g, n) in [(dw1, gw1, d * h), (db1, gb1, h), (dw2, gw2, h * c), (db2, gb2, c)] {
            let (gr, bl) = lin(n);
            gpu.launch(k.sgd, gr, bl, &[Arg::Ptr(w), Arg::Ptr(g), Arg::I32(n as i32), Arg::F32(cfg.lr)])?;
        }
        gpu.launch(k.mean, [1, 1, 1], [1, 1, 1], &[Arg::Ptr(row_loss), Arg::Ptr(loss), Arg::I32(b as i32)])?;
        let mut out = [0u8; 4];
        gpu.read_after_sync(loss, &mut out)?;
        Ok(f32::from_ne_bytes(out))
    };
    let mut run = MlpRun { step_ms: Vec::with_capacity(cfg.steps), losses: Vec::new() };
    for i in 0..cfg.warmup + cfg.steps {
        let t = Instant::now();
        let l = step(gpu, i % cfg.data_batches.max(1))?;
        if i >= cfg.warmup {
            run.step_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        run.losses.push(l);
    }
    gpu.synchronize()?;
    Ok(run)
}

/// The kernels of [`SOURCE`], resolved on one side.
pub struct Kernels {
    pub empty: usize,
    pub matmul: usize,
    pub bias_act: usize,
    pub softmax_xent: usize,
    pub relu_grad: usize,
    pub colsum: usize,
    pub sgd: usize,
    pub mean: usize,
    pub axpy: usize,
}

impl Kernels {
    /// Compiles and loads [`SOURCE`] on `gpu`; returns the kernels and the compile+load time.
    pub fn load(gpu: &mut dyn Gpu) -> Result<(Self, f64), String> {
        let t = Instant::now();
        gpu.load(SOURCE)?;
        let secs = t.elapsed().as_secs_f64();
        Ok((
            Self {
                empty: gpu.function("empty")?,
                matmul: gpu.function("matmul")?,
                bias_act: gpu.function("bias_act")?,
                softmax_xent: gpu.function("softmax_xent")?,
                relu_grad: gpu.function("relu_grad")?,
                colsum: gpu.function("colsum")?,
                sgd: gpu.function("sgd")?,
                mean: gpu.function("mean")?,
                axpy: gpu.function("axpy")?,
            },
            secs,
        ))
    }
}

/// Shape of the kernel-chain (graph) benchmark.
#[derive(Clone, Debug)]
pub struct ChainConfig {
    /// Kernels per step, each `axpy` over the same `y` (so each depends on the one before).
    pub kernels: usize,
    /// Floats each kernel updates.
    pub floats: usize,
    /// Timed steps per way.
    pub steps: usize,
    /// Untimed steps first.
    pub warmup: usize,
}

/// The four ways a chain step is run, in [`kernel_chain`]'s result order: (side, graph).
pub const CHAIN_WAYS: [(&str, bool); 4] = [("native", false), ("native", true), ("remote", false), ("remote", true)];

/// What one way of the chain measured.
#[derive(Clone, Debug)]
pub struct ChainRun {
    /// Wall time of each timed step, ms (the launches or the graph launch, then one
    /// stream synchronize).
    pub step_ms: Vec<f64>,
    /// Recording and instantiating the graph, ms (graph ways only).
    pub instantiate_ms: Option<f64>,
    /// `y` after every step (warm-up included).
    pub result: Vec<f32>,
}

/// The chain's results: each way's run, in [`CHAIN_WAYS`] order, and the `y` every way must
/// end with.
pub struct ChainRuns {
    pub runs: Vec<ChainRun>,
    pub expected: Vec<f32>,
}

/// The coefficient of the chain's `k`-th kernel: 0.25, 0.5, 0.75, 1, … With small integer
/// `x` and `y`, every intermediate value is a multiple of 0.25 below 2^21, so each `a·x + y`
/// is exact whether or not the compiler fuses it: every way and backend must give exactly
/// [`ChainRuns::expected`]. No coefficient is 0 and all have one sign, so a kernel that did
/// not run (or ran twice) always shows.
fn chain_coefficient(k: usize) -> f32 {
    ((k % 4) + 1) as f32 * 0.25
}

/// A step of `cfg.kernels` small kernels (`y = a·x + y` over `cfg.floats` floats, each kernel
/// after the one before) and one synchronize, four ways, interleaved round by round: native one
/// by one, native graph (the same launches as a [`GraphPlan`](hip_worker::backend::GraphPlan)
/// through the backend), remote one by one (`hipModuleLaunchKernel`), remote graph
/// (`hipGraphAddKernelNode` chain, `hipGraphLaunch`). Each way has its own `x` and `y`; `y` is
/// read back once at the end.
pub fn kernel_chain(native: &mut dyn Gpu, nk: &Kernels, remote: &mut dyn Gpu, rk: &Kernels, cfg: &ChainConfig) -> Result<ChainRuns, String> {
    let n = cfg.floats;
    if cfg.kernels == 0 || n == 0 || n > i32::MAX as usize {
        return Err(format!("a chain of {} kernels over {n} floats", cfg.kernels));
    }
    let rounds = cfg.warmup + cfg.steps;
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
    let y0: Vec<f32> = (0..n).map(|i| (i % 11) as f32).collect();
    let coefficients: Vec<f32> = (0..cfg.kernels).map(chain_coefficient).collect();
    // Exactness: |y| stays below 10 + 3·(every full step's sum + the largest partial sum).
    let (mut per_step, mut partial) = (0.0f64, 0.0f64);
    for &a in &coefficients {
        per_step += f64::from(a);
        partial = partial.max(per_step.abs());
    }
    if 10.0 + 3.0 * (rounds as f64 * per_step.abs() + partial) >= (1u64 << 21) as f64 {
        return Err(format!("{rounds} steps of {} kernels would leave the range where the chain's arithmetic is exact", cfg.kernels));
    }
    let expected: Vec<f32> = x.iter().zip(&y0).map(|(&x, &y)| (f64::from(y) + rounds as f64 * per_step * f64::from(x)) as f32).collect();

    struct Way {
        y: u64,
        launches: Vec<Launch>,
        graph: Option<usize>,
        run: ChainRun,
    }
    let mut ways = Vec::with_capacity(CHAIN_WAYS.len());
    for &(side, graph) in &CHAIN_WAYS {
        let (gpu, axpy): (&mut dyn Gpu, usize) = if side == "native" { (&mut *native, nk.axpy) } else { (&mut *remote, rk.axpy) };
        let (dx, dy) = (gpu.alloc(n * 4)?, gpu.alloc(n * 4)?);
        gpu.upload(dx, &f32_bytes(&x))?;
        gpu.upload(dy, &f32_bytes(&y0))?;
        let launches: Vec<Launch> = coefficients
            .iter()
            .map(|&a| Launch {
                function: axpy,
                grid: [div_up(n, 256), 1, 1],
                block: [256, 1, 1],
                args: vec![Arg::F32(a), Arg::Ptr(dx), Arg::Ptr(dy), Arg::I32(n as i32)],
            })
            .collect();
        let mut run = ChainRun { step_ms: Vec::with_capacity(cfg.steps), instantiate_ms: None, result: Vec::new() };
        let graph = if graph {
            let t = Instant::now();
            let g = gpu.graph(&launches)?;
            run.instantiate_ms = Some(t.elapsed().as_secs_f64() * 1e3);
            Some(g)
        } else {
            None
        };
        ways.push(Way { y: dy, launches, graph, run });
    }
    for round in 0..rounds {
        // Rotate the order each round so no way always follows the same one.
        for j in 0..ways.len() {
            let w = (j + round) % ways.len();
            let gpu: &mut dyn Gpu = if CHAIN_WAYS[w].0 == "native" { &mut *native } else { &mut *remote };
            let way = &mut ways[w];
            let t = Instant::now();
            match way.graph {
                Some(g) => gpu.graph_launch(g)?,
                None => {
                    for l in &way.launches {
                        gpu.launch(l.function, l.grid, l.block, &l.args)?;
                    }
                }
            }
            gpu.synchronize()?;
            if round >= cfg.warmup {
                way.run.step_ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    let mut runs = Vec::with_capacity(ways.len());
    for (w, mut way) in ways.into_iter().enumerate() {
        let gpu: &mut dyn Gpu = if CHAIN_WAYS[w].0 == "native" { &mut *native } else { &mut *remote };
        let mut bytes = vec![0u8; n * 4];
        gpu.read_after_sync(way.y, &mut bytes)?;
        way.run.result = bytes.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect();
        runs.push(way.run);
    }
    Ok(ChainRuns { runs, expected })
}
