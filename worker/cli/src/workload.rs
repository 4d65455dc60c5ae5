//! Kernel workloads run identically natively and remotely: an empty-kernel launch rate and a
//! small MLP training loop, written in HIP and compiled with hiprtc on the worker's backend
//! (natively: `RtcBackend::rtc_compile`; remotely: the client library's `__hipRemoteRtcCompile`,
//! libhiprtc's route onto the same connection, then `hipModuleLoadData`).
//!
//! Kernels use no `__shared__`, `__syncthreads` or atomics, so the same source runs on the host
//! backend (which refuses the first two) and gives bit-identical results natively and
//! remotely: every sum is one thread's sequential loop.

use crate::hip::Hip;
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
}

/// The remote [`Gpu`]: the real client library on one `hipStream_t`.
pub struct RemoteGpu<'a> {
    hip: &'a Hip,
    stream: *mut c_void,
    module: *mut c_void,
    functions: Vec<*mut c_void>,
    allocations: Vec<*mut c_void>,
}

impl<'a> RemoteGpu<'a> {
    pub fn new(hip: &'a Hip) -> Result<Self, String> {
        let mut stream = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        hip.check("hipStreamCreate", unsafe { (hip.stream_create)(&mut stream) })?;
        Ok(Self { hip, stream, module: std::ptr::null_mut(), functions: Vec::new(), allocations: Vec::new() })
    }
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
        const MAX: usize = 16;
        if args.len() > MAX {
            return Err(format!("{} kernel arguments (at most {MAX} here)", args.len()));
        }
        let mut values = [0u64; MAX];
        let mut pointers = [std::ptr::null_mut::<c_void>(); MAX];
        for (i, a) in args.iter().enumerate() {
            values[i] = u64::from_ne_bytes(a.bytes().0);
        }
        for (i, p) in pointers.iter_mut().enumerate().take(args.len()) {
            // Each value's first bytes are the argument (little-endian).
            *p = (&mut values[i] as *mut u64).cast();
        }
        let params = if args.is_empty() { std::ptr::null_mut() } else { pointers.as_mut_ptr() };
        // SAFETY: a function of the loaded module; `params` holds one valid pointer per kernel
        // parameter, each to a value of that parameter's size (checked by the library against
        // the worker's layout).
        self.hip.check("hipModuleLaunchKernel", unsafe {
            (self.hip.module_launch_kernel)(
                self.functions[f],
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                0,
                self.stream,
                params,
                std::ptr::null_mut(),
            )
        })
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
}

impl Drop for RemoteGpu<'_> {
    fn drop(&mut self) {
        // SAFETY: handles this object created, each released once.
        unsafe {
            let _ = (self.hip.stream_synchronize)(self.stream);
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
            },
            secs,
        ))
    }
}
