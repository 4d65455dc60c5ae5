//! The bench's *native* side: the worker's own backend (`CudaBackend` on an NVIDIA machine,
//! `HostBackend` otherwise) called in-process through the [`Backend`] trait, with no network
//! and no protocol in between. It is what hip-remote would cost if the application ran on
//! the worker itself, so `remote / native` is hip-remote's own overhead.

use crate::workload::{Arg, Gpu, Launch};
use hip_worker::backend::{
    Backend, DevicePtr, ExecGraph, GraphOp, GraphPlan, HostBackend, HostConfig, KernelFunction, LaunchConfig, MemsetPattern, ModuleFormat,
    ModuleHandle, RtcRequest, StreamHandle,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which backend runs the work, natively and in the embedded worker.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// The cuda backend when a usable NVIDIA GPU is found, else host emulation.
    Auto,
    /// CPU emulation (kernels compiled by the system C++ compiler).
    Host,
    /// NVIDIA GPUs through the CUDA driver.
    Cuda,
}

/// Builds the backend `kind` names (`auto`: cuda when it opens, else host, saying why).
pub fn make_backend(kind: BackendKind) -> Result<Arc<dyn Backend>, String> {
    // Two devices: the bench's peer section runs on the host backend too.
    let host = || {
        Arc::new(HostBackend::new(HostConfig { devices: 2, memory_per_device: 4 << 30, allow_host_code: true, ..HostConfig::default() }))
            as Arc<dyn Backend>
    };
    match kind {
        BackendKind::Host => Ok(host()),
        BackendKind::Cuda => cuda().map_err(|e| format!("the cuda backend is unavailable: {e}")),
        BackendKind::Auto => Ok(cuda().unwrap_or_else(|why| {
            eprintln!("backend auto: no usable NVIDIA GPU ({why}); using host emulation");
            host()
        })),
    }
}

#[cfg(feature = "cuda")]
fn cuda() -> Result<Arc<dyn Backend>, String> {
    hip_worker::backend::cuda::CudaBackend::new().map(|b| Arc::new(b) as Arc<dyn Backend>).map_err(|e| e.to_string())
}

#[cfg(not(feature = "cuda"))]
fn cuda() -> Result<Arc<dyn Backend>, String> {
    Err("this build has no `cuda` feature".into())
}

fn be(what: &str) -> impl Fn(hip_worker::backend::BackendError) -> String + '_ {
    move |e| format!("native {what}: {e}")
}

/// `device_synchronize` round trips in-process (the reference for the sync-call latency).
pub fn sync_samples(b: &dyn Backend, n: usize) -> Result<Vec<Duration>, String> {
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + n / 10 {
        let t = Instant::now();
        b.device_synchronize(0).map_err(be("device_synchronize"))?;
        if i >= n / 10 {
            samples.push(t.elapsed());
        }
    }
    Ok(samples)
}

/// Fire-and-forget 64-byte memsets on one stream, then one synchronize: operations per second.
pub fn memset_rate(b: &dyn Backend, n: usize) -> Result<f64, String> {
    let s = b.stream_create(0, 0, 0).map_err(be("stream_create"))?;
    let dev = b.malloc(0, 4096).map_err(be("malloc"))?;
    let run = || -> Result<f64, String> {
        let t = Instant::now();
        for _ in 0..n {
            b.memset(Some(s), dev, MemsetPattern::U8(0), 64).map_err(be("memset"))?;
        }
        b.stream_synchronize(s).map_err(be("stream_synchronize"))?;
        Ok(n as f64 / t.elapsed().as_secs_f64())
    };
    let rate = run();
    let _ = b.free(dev);
    let _ = b.stream_destroy(s);
    rate
}

/// A device buffer and a pageable host buffer of `bytes`, for the copy figures.
pub struct CopyBuffers<'a> {
    b: &'a dyn Backend,
    pub dev: DevicePtr,
    host: Vec<u8>,
}

impl<'a> CopyBuffers<'a> {
    pub fn new(b: &'a dyn Backend, bytes: usize) -> Result<Self, String> {
        let dev = b.malloc(0, bytes as u64).map_err(be("malloc"))?;
        Ok(Self { b, dev, host: vec![3u8; bytes] })
    }

    /// GB/s of `reps` synchronous copies of `size` bytes (`h2d`: host → device), after one
    /// warm-up copy.
    pub fn gbps(&mut self, h2d: bool, size: usize, reps: usize) -> Result<f64, String> {
        let once = |host: &mut [u8]| {
            if h2d {
                self.b.memcpy_htod_sync(None, self.dev, &host[..size]).map_err(be("memcpy_htod_sync"))
            } else {
                self.b.memcpy_dtoh_sync(None, self.dev, &mut host[..size]).map_err(be("memcpy_dtoh_sync"))
            }
        };
        let mut host = std::mem::take(&mut self.host);
        let result = (|| {
            once(&mut host)?;
            let t = Instant::now();
            for _ in 0..reps {
                once(&mut host)?;
            }
            Ok((size * reps) as f64 / t.elapsed().as_secs_f64() / 1e9)
        })();
        self.host = host;
        result
    }
}

impl CopyBuffers<'_> {
    /// Gives the host buffer back early (the device buffer stays until drop).
    pub fn take_host(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.host)
    }
}

impl Drop for CopyBuffers<'_> {
    fn drop(&mut self) {
        let _ = self.b.free(self.dev);
    }
}

/// The hardware reference on an NVIDIA GPU: synchronous `cuMemcpyHtoD`/`cuMemcpyDtoH` from
/// page-locked memory (`cuMemAllocHost`) straight to `dev`, no backend staging. Returns
/// `(h2d, d2h)` GB/s per `(size, reps)`; `None` off the cuda backend.
#[cfg(feature = "cuda")]
pub fn cuda_pinned_gbps(b: &dyn Backend, dev: DevicePtr, sizes: &[(usize, usize)]) -> Option<Result<Vec<(f64, f64)>, String>> {
    use cudarc::driver::{result, sys};
    if b.name() != "cuda" {
        return None;
    }
    let max = sizes.iter().map(|&(s, _)| s).max().unwrap_or(0);
    let ok = |what: &str, r: sys::CUresult| if r == sys::CUresult::CUDA_SUCCESS { Ok(()) } else { Err(format!("{what}: {r:?}")) };
    let run = || -> Result<Vec<(f64, f64)>, String> {
        let cu = result::device::get(0).map_err(|e| format!("cuDeviceGet: {e}"))?;
        // SAFETY: device 0 exists (the backend opened it); the primary context is the one the
        // backend allocated `dev` in, released below.
        let ctx = unsafe { result::primary_ctx::retain(cu) }.map_err(|e| format!("cuDevicePrimaryCtxRetain: {e}"))?;
        // SAFETY: a context just retained.
        let inner = unsafe { result::ctx::set_current(ctx) }.map_err(|e| format!("cuCtxSetCurrent: {e}")).and_then(|_| {
            hip_worker::backend::cuda::forget_current_context();
            let mut host: *mut std::ffi::c_void = std::ptr::null_mut();
            // SAFETY: valid out-pointer; freed below.
            ok("cuMemAllocHost", unsafe { sys::cuMemAllocHost_v2(&mut host, max.max(1)) })?;
            let figures = (|| {
                let mut out = Vec::new();
                for &(size, reps) in sizes {
                    let time = |h2d: bool| -> Result<f64, String> {
                        // SAFETY: `dev` holds at least `max` bytes (allocated by the caller for
                        // the largest copy) and `host` is a pinned buffer of `max` bytes.
                        let once = || unsafe {
                            if h2d {
                                ok("cuMemcpyHtoD", sys::cuMemcpyHtoD_v2(dev.0, host, size))
                            } else {
                                ok("cuMemcpyDtoH", sys::cuMemcpyDtoH_v2(host, dev.0, size))
                            }
                        };
                        once()?;
                        let t = Instant::now();
                        for _ in 0..reps {
                            once()?;
                        }
                        // SAFETY: context current.
                        ok("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })?;
                        Ok((size * reps) as f64 / t.elapsed().as_secs_f64() / 1e9)
                    };
                    out.push((time(true)?, time(false)?));
                }
                Ok(out)
            })();
            // SAFETY: allocated above, no copy in flight (all copies were synchronous).
            let _ = unsafe { sys::cuMemFreeHost(host) };
            figures
        });
        // SAFETY: retained above.
        let _ = unsafe { result::primary_ctx::release(cu) };
        inner
    };
    Some(run())
}

#[cfg(not(feature = "cuda"))]
pub fn cuda_pinned_gbps(_: &dyn Backend, _: DevicePtr, _: &[(usize, usize)]) -> Option<Result<Vec<(f64, f64)>, String>> {
    None
}

/// The native side of the link figures.
pub struct NativeLinkFigures {
    /// `(h2d, d2h)` GB/s of large copies from page-locked memory: `cuMemcpy` from
    /// `cuMemAllocHost` memory on cuda; the backend's copy on host (no page-locking there).
    pub pinned: (f64, f64),
    /// The same from pageable (`malloc`) memory: CUDA's own pageable path on cuda.
    pub pageable: (f64, f64),
    /// `(h2d, d2h)` GB/s of 1 MiB copies (`variants::MID_COPY`) from page-locked memory, as
    /// `pinned`.
    pub mid_pinned: (f64, f64),
    /// 4 KiB host-to-device copy from page-locked memory, µs each (mean of back-to-back
    /// `cuMemcpyHtoD`s on cuda; the backend's p50 below on host).
    pub small_pinned_h2d_us: f64,
    /// 4 KiB host-to-device copy (the backend's, from pageable memory), p50 µs.
    pub small_h2d_p50_us: f64,
    /// `device_synchronize`, p50 µs.
    pub sync_p50_us: f64,
    /// `allocs` × (malloc + free) and one synchronize through the backend, ms.
    pub allocs_ms: f64,
    /// How the copies were made, in words.
    pub how: &'static str,
}

/// Measures the native link figures: large copies of `big` bytes (`reps` each, after a
/// warm-up), `samples` small copies and sync calls, `allocs` allocations of `alloc_bytes`.
pub fn link_figures(
    b: &dyn Backend,
    big: usize,
    reps: usize,
    samples: usize,
    allocs: usize,
    alloc_bytes: usize,
) -> Result<NativeLinkFigures, String> {
    let mut bufs = CopyBuffers::new(b, big)?;
    let (pinned, pageable, how) = match cuda_copies(b, bufs.dev, big, reps) {
        Some(r) => {
            let [pinned, pageable] = r?;
            (pinned, pageable, "cuMemcpyHtoD/DtoH from cuMemAllocHost (pinned) and malloc (pageable) memory")
        }
        None => {
            let pageable = (bufs.gbps(true, big, reps)?, bufs.gbps(false, big, reps)?);
            (pageable, pageable, "the backend's synchronous copies (the host backend has no page-locked memory: pinned = pageable)")
        }
    };
    let host = vec![1u8; crate::variants::SMALL_COPY];
    let mut small = Vec::with_capacity(samples);
    for i in 0..samples + samples / 10 {
        let t = Instant::now();
        b.memcpy_htod_sync(None, bufs.dev, &host).map_err(be("memcpy_htod_sync"))?;
        if i >= samples / 10 {
            small.push(t.elapsed());
        }
    }
    let small_h2d_p50_us = crate::variants::p50_us(small);
    let mid = crate::variants::MID_COPY.min(big);
    let mid_reps = crate::variants::mid_copy_reps(samples);
    let small_reps = samples.max(1);
    let (mid_pinned, small_pinned_h2d_us) =
        match cuda_pinned_gbps(b, bufs.dev, &[(mid, mid_reps), (crate::variants::SMALL_COPY.min(big), small_reps)]) {
            Some(r) => {
                let r = r?;
                (r[0], crate::variants::SMALL_COPY as f64 / (r[1].0 * 1e9) * 1e6)
            }
            None => ((bufs.gbps(true, mid, mid_reps)?, bufs.gbps(false, mid, mid_reps)?), small_h2d_p50_us),
        };
    let sync_p50_us = crate::variants::p50_us(sync_samples(b, samples)?);
    drop(bufs.take_host());
    let t = Instant::now();
    for _ in 0..allocs {
        let p = b.malloc(0, alloc_bytes as u64).map_err(be("malloc"))?;
        b.free(p).map_err(be("free"))?;
    }
    b.device_synchronize(0).map_err(be("device_synchronize"))?;
    let allocs_ms = t.elapsed().as_secs_f64() * 1e3;
    Ok(NativeLinkFigures { pinned, pageable, mid_pinned, small_pinned_h2d_us, small_h2d_p50_us, sync_p50_us, allocs_ms, how })
}

/// `[pinned, pageable]` `(h2d, d2h)` GB/s of `reps` synchronous `cuMemcpy`s of `size` bytes
/// between `dev` and `cuMemAllocHost` / `malloc` memory; `None` off the cuda backend.
#[cfg(feature = "cuda")]
fn cuda_copies(b: &dyn Backend, dev: DevicePtr, size: usize, reps: usize) -> Option<Result<[(f64, f64); 2], String>> {
    use cudarc::driver::{result, sys};
    if b.name() != "cuda" {
        return None;
    }
    let ok = |what: &str, r: sys::CUresult| if r == sys::CUresult::CUDA_SUCCESS { Ok(()) } else { Err(format!("{what}: {r:?}")) };
    let run = || -> Result<[(f64, f64); 2], String> {
        let cu = result::device::get(0).map_err(|e| format!("cuDeviceGet: {e}"))?;
        // SAFETY: device 0 exists (the backend opened it); its primary context is the one the
        // backend allocated `dev` in, released below.
        let ctx = unsafe { result::primary_ctx::retain(cu) }.map_err(|e| format!("cuDevicePrimaryCtxRetain: {e}"))?;
        // SAFETY: a context just retained.
        let inner = unsafe { result::ctx::set_current(ctx) }.map_err(|e| format!("cuCtxSetCurrent: {e}")).and_then(|_| {
            hip_worker::backend::cuda::forget_current_context();
            let mut pinned: *mut std::ffi::c_void = std::ptr::null_mut();
            // SAFETY: valid out-pointer; freed below.
            ok("cuMemAllocHost", unsafe { sys::cuMemAllocHost_v2(&mut pinned, size.max(1)) })?;
            let mut pageable = vec![4u8; size.max(1)];
            let figures = (|| {
                let time = |host: *mut std::ffi::c_void, h2d: bool| -> Result<f64, String> {
                    // SAFETY: `dev` and `host` hold at least `size` bytes.
                    let once = || unsafe {
                        if h2d {
                            ok("cuMemcpyHtoD", sys::cuMemcpyHtoD_v2(dev.0, host, size))
                        } else {
                            ok("cuMemcpyDtoH", sys::cuMemcpyDtoH_v2(host, dev.0, size))
                        }
                    };
                    once()?;
                    let t = Instant::now();
                    for _ in 0..reps.max(1) {
                        once()?;
                    }
                    // SAFETY: context current.
                    ok("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })?;
                    Ok((size * reps.max(1)) as f64 / t.elapsed().as_secs_f64() / 1e9)
                };
                let page = pageable.as_mut_ptr().cast();
                Ok([(time(pinned, true)?, time(pinned, false)?), (time(page, true)?, time(page, false)?)])
            })();
            // SAFETY: allocated above, no copy in flight (all were synchronous).
            let _ = unsafe { sys::cuMemFreeHost(pinned) };
            figures
        });
        // SAFETY: retained above.
        let _ = unsafe { result::primary_ctx::release(cu) };
        inner
    };
    Some(run())
}

#[cfg(not(feature = "cuda"))]
fn cuda_copies(_: &dyn Backend, _: DevicePtr, _: usize, _: usize) -> Option<Result<[(f64, f64); 2], String>> {
    None
}

/// The native [`Gpu`]: backend calls on one stream of device 0.
pub struct NativeGpu {
    b: Arc<dyn Backend>,
    stream: StreamHandle,
    module: Option<ModuleHandle>,
    functions: Vec<KernelFunction>,
    allocations: Vec<DevicePtr>,
    graphs: Vec<ExecGraph>,
}

impl NativeGpu {
    pub fn new(b: Arc<dyn Backend>) -> Result<Self, String> {
        let stream = b.stream_create(0, 0, 0).map_err(be("stream_create"))?;
        Ok(Self { b, stream, module: None, functions: Vec::new(), allocations: Vec::new(), graphs: Vec::new() })
    }

    /// The argument blob of one launch of function `f`, laid out as the kernel's parameters.
    fn pack(&self, f: usize, args: &[Arg]) -> Result<Vec<u8>, String> {
        let kernel = &self.functions[f];
        let mut blob = vec![0u8; kernel.args_len() as usize];
        if kernel.params.len() != args.len() {
            return Err(format!("kernel {f} takes {} arguments, {} given", kernel.params.len(), args.len()));
        }
        for (p, a) in kernel.params.iter().zip(args) {
            let (bytes, len) = a.bytes();
            if p.size as usize != len {
                return Err(format!("kernel {f}: parameter of {} bytes given {len}", p.size));
            }
            blob[p.offset as usize..][..len].copy_from_slice(&bytes[..len]);
        }
        Ok(blob)
    }
}

impl Gpu for NativeGpu {
    fn load(&mut self, source: &str) -> Result<(), String> {
        let request = RtcRequest { name: "bench.hip", source, options: vec!["-O3"], ..RtcRequest::default() };
        let out = self.b.rtc_compile(0, &request).map_err(be("rtc_compile"))?;
        if !out.success {
            return Err(format!("native hiprtc compile failed:\n{}", out.log));
        }
        self.module = Some(self.b.module_load(0, ModuleFormat::Auto, &out.code).map_err(be("module_load"))?);
        Ok(())
    }

    fn function(&mut self, name: &str) -> Result<usize, String> {
        let module = self.module.ok_or("no module loaded")?;
        self.functions.push(self.b.module_function(module, name).map_err(be("module_function"))?);
        Ok(self.functions.len() - 1)
    }

    fn alloc(&mut self, bytes: usize) -> Result<u64, String> {
        let p = self.b.malloc(0, bytes as u64).map_err(be("malloc"))?;
        self.allocations.push(p);
        Ok(p.0)
    }

    fn upload(&mut self, dst: u64, data: &[u8]) -> Result<(), String> {
        self.b.memcpy_htod_sync(Some(self.stream), DevicePtr(dst), data).map_err(be("memcpy_htod_sync"))
    }

    fn launch(&mut self, f: usize, grid: [u32; 3], block: [u32; 3], args: &[Arg]) -> Result<(), String> {
        let blob = self.pack(f, args)?;
        self.b
            .launch_kernel(Some(self.stream), self.functions[f].handle, LaunchConfig { grid, block, shared_mem: 0 }, &blob)
            .map_err(be("launch_kernel"))
    }

    /// The chain as a [`GraphPlan`] (what the worker's session builds from a client's graph),
    /// instantiated by the backend: a native graph on cuda, a replayed list on host.
    fn graph(&mut self, chain: &[Launch]) -> Result<usize, String> {
        let mut plan = GraphPlan { device: 0, ops: Vec::with_capacity(chain.len()), dependencies: Vec::with_capacity(chain.len()) };
        for (i, l) in chain.iter().enumerate() {
            let args = self.pack(l.function, &l.args)?;
            let config = LaunchConfig { grid: l.grid, block: l.block, shared_mem: 0 };
            plan.ops.push(GraphOp::Kernel { function: self.functions[l.function].handle, config, args: args.into() });
            plan.dependencies.push(if i == 0 { Vec::new() } else { vec![i - 1] });
        }
        let exec = self.b.graph_instantiate(Arc::new(plan)).map_err(be("graph_instantiate"))?;
        self.graphs.push(exec);
        Ok(self.graphs.len() - 1)
    }

    fn graph_launch(&mut self, graph: usize) -> Result<(), String> {
        let exec = self.graphs.get(graph).ok_or("no such graph")?;
        self.b.graph_launch(Some(self.stream), exec).map_err(be("graph_launch"))
    }

    fn read_after_sync(&mut self, src: u64, out: &mut [u8]) -> Result<(), String> {
        self.b.memcpy_dtoh_sync(Some(self.stream), DevicePtr(src), out).map_err(be("memcpy_dtoh_sync"))
    }

    fn synchronize(&mut self) -> Result<(), String> {
        self.b.stream_synchronize(self.stream).map_err(be("stream_synchronize"))
    }
}

impl Drop for NativeGpu {
    fn drop(&mut self) {
        let _ = self.b.stream_synchronize(self.stream);
        for g in self.graphs.drain(..) {
            let _ = self.b.graph_exec_destroy(g);
        }
        for p in self.allocations.drain(..) {
            let _ = self.b.free(p);
        }
        if let Some(m) = self.module.take() {
            let _ = self.b.module_unload(m);
        }
        let _ = self.b.stream_destroy(self.stream);
    }
}

/// GFLOP/s of `reps` `n × n × n` SGEMMs through the backend's own BLAS (`BlasBackend`: cuBLAS
/// on cuda, the CPU BLAS on host), on one stream after one warm-up.
pub fn sgemm_gflops(b: &dyn Backend, n: usize, reps: usize) -> Result<f64, String> {
    use hip_worker::backend::blas::{blas_op, BlasCall, ElemType, Operand, Routine, Scalar};
    let s = b.stream_create(0, 0, 0).map_err(be("stream_create"))?;
    let bytes = (n * n * 4) as u64;
    let mut bufs = Vec::new();
    for _ in 0..3 {
        let p = b.malloc(0, bytes).map_err(be("malloc"))?;
        bufs.push(p);
    }
    let run = || -> Result<f64, String> {
        let handle = b.blas_create(0).map_err(be("blas_create"))?;
        let mut alpha = [0u8; 16];
        alpha[..4].copy_from_slice(&1.0f32.to_le_bytes());
        let ld = n as i64;
        let operand = |p: hip_worker::backend::DevicePtr| Operand { ptr: p.0, ld, stride: 0 };
        let call = BlasCall {
            routine: Routine::Gemm,
            ab_type: ElemType::R32F,
            c_type: ElemType::R32F,
            scalar_type: ElemType::R32F,
            compute: 2,
            trans: [blas_op::N; 2],
            dims: [ld, ld, ld],
            alpha: Scalar::Value(alpha),
            beta: Scalar::Value([0; 16]),
            a: operand(bufs[0]),
            b: operand(bufs[1]),
            c: operand(bufs[2]),
            batch: 1,
            pointer_arrays: false,
            result: None,
        };
        let timed = |count: usize| -> Result<f64, String> {
            let t = Instant::now();
            for _ in 0..count {
                b.blas_launch(handle, Some(s), &call).map_err(be("blas_launch"))?;
            }
            b.stream_synchronize(s).map_err(be("stream_synchronize"))?;
            Ok(t.elapsed().as_secs_f64())
        };
        timed(1)?;
        let secs = timed(reps)?;
        let _ = b.blas_destroy(handle);
        Ok(2.0 * (n as f64).powi(3) * reps as f64 / secs / 1e9)
    };
    let out = run();
    for p in bufs {
        let _ = b.free(p);
    }
    let _ = b.stream_destroy(s);
    out
}
