//! BLAS on the cuda backend: cuBLAS, loaded at run time like the driver (`libcublas.so.13`,
//! else `.so.12`, else `libcublas.so`). A worker without cuBLAS serves everything else and
//! answers BLAS calls with `hipErrorNotSupported`, saying why. The dispatch is the GPU
//! backends' shared one (`backend::gpu::blas`); this file states cuBLAS's names and numbers.

use std::ffi::c_int;
use std::path::PathBuf;
use std::sync::OnceLock;

use super::result::graph::Graph;
use super::result::{mem, stream as cu_stream};
use super::CudaBackend;
use crate::backend::blas::{blas_op, Aligned16, BlasBackend, BlasCall, BlasHandle};
use crate::backend::gpu::blas::{BlasLibrary, Dialect, Status};
use crate::backend::{BackendError, DeviceIndex, StreamHandle};
use cudarc::driver::sys;

const LIBRARIES: &[&str] = &["libcublas.so.13", "libcublas.so.12", "libcublas.so"];

static CUBLAS_DIALECT: Dialect = Dialect {
    name: "cuBLAS",
    prefix: "cublas",
    typed_suffix: "_v2",
    create: "cublasCreate_v2",
    destroy: "cublasDestroy_v2",
    set_stream: "cublasSetStream_v2",
    set_pointer_mode: "cublasSetPointerMode_v2",
    gemm_ex: "cublasGemmEx",
    gemm_strided_batched_ex: "cublasGemmStridedBatchedEx",
    gemm_batched_ex: "cublasGemmBatchedEx",
    set_workspace: Some("cublasSetWorkspace_v2"),
    // CUBLAS_GEMM_DEFAULT.
    algo_default: -1,
    op,
    compute,
    check,
};

fn check(what: &str, status: Status) -> Result<(), BackendError> {
    match status {
        0 => Ok(()),
        7 => Err(BackendError::InvalidValue(format!("{what}: CUBLAS_STATUS_INVALID_VALUE"))),
        3 => Err(BackendError::OutOfMemory(format!("{what}: CUBLAS_STATUS_ALLOC_FAILED"))),
        8 | 15 => Err(BackendError::NotSupported(format!("{what}: cuBLAS status {status} (not supported / architecture mismatch)"))),
        s => Err(BackendError::LaunchFailure(format!("{what}: cuBLAS status {s}"))),
    }
}

/// `cublasOperation_t` of a `hipblasOperation_t`.
fn op(t: u32) -> c_int {
    match t {
        blas_op::T => 1,
        blas_op::C => 2,
        _ => 0,
    }
}

/// `cublasComputeType_t` of a `hipblasComputeType_t`.
fn compute(t: u32) -> Result<c_int, BackendError> {
    Ok(match t {
        0 => 64,
        1 => 65,
        2 => 68,
        3 => 69,
        4 => 74,
        5 => 75,
        6 => 77,
        7 => 70,
        8 => 71,
        other => return Err(BackendError::NotSupported(format!("hipblasComputeType_t {other}"))),
    })
}

fn cublas() -> Result<&'static BlasLibrary, BackendError> {
    static CUBLAS: OnceLock<Result<BlasLibrary, String>> = OnceLock::new();
    CUBLAS
        .get_or_init(|| BlasLibrary::load(&CUBLAS_DIALECT, &LIBRARIES.iter().map(PathBuf::from).collect::<Vec<_>>()))
        .as_ref()
        .map_err(|why| BackendError::NotSupported(why.clone()))
}

/// The workspace a handle gets the first time one of its routines is captured into a graph:
/// what cuBLAS's documentation recommends for Hopper (32 MiB; 4 MiB suffices before it).
pub(super) const CAPTURE_WORKSPACE_BYTES: usize = 32 << 20;

impl CudaBackend {
    /// `call` on `handle`, captured into a graph of its own (run as a child graph node): on a
    /// private stream of the device, in relaxed mode, with the handle's own workspace (cuBLAS's
    /// rules for graphs: its pool would add memory nodes, which a child graph cannot hold).
    /// Host scalars are baked into the captured kernels, device ones read when the graph runs.
    /// The caller entered `device`, the plan's device.
    pub(super) fn blas_capture(&self, handle: BlasHandle, call: &BlasCall, device: DeviceIndex) -> Result<Graph, BackendError> {
        let lib = cublas()?;
        if lib.device_of(handle)? != device || !lib.can_set_workspace() {
            return Err(BackendError::NotSupported("this BLAS routine cannot be captured into the device's CUDA graph".into()));
        }
        if lib.workspace(handle).is_none() {
            let ptr = mem::alloc(CAPTURE_WORKSPACE_BYTES)?;
            lib.set_handle_workspace(handle, ptr, CAPTURE_WORKSPACE_BYTES);
        }
        let s = cu_stream::create(sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)?;
        let graph = Graph::capture(s, || lib.run_for_capture(handle, s.cast(), call));
        // The handle must not keep the stream destroyed next (every run binds its own).
        if let Err(e) = lib.unbind_stream(handle) {
            tracing::warn!(%e, "unbinding a BLAS handle from its capture stream failed");
        }
        // A private stream with nothing queued (captured work does not run).
        if let Err(e) = cu_stream::destroy(s) {
            tracing::warn!(%e, "destroying a BLAS capture stream failed");
        }
        graph
    }

    /// Runs `call`; a host-mode reduction's result lands in `out`.
    fn blas_run(&self, handle: BlasHandle, stream: Option<StreamHandle>, call: &BlasCall, out: &mut [u8; 16]) -> Result<(), BackendError> {
        let lib = cublas()?;
        let s = self.work_stream(stream, lib.device_of(handle)?)?;
        lib.run(handle, s.cast(), call, out)
    }
}

impl BlasBackend for CudaBackend {
    fn blas_pointer_arrays_in_graphs(&self) -> bool {
        // The library reads the arrays in this session's GPU context, as its kernels would.
        true
    }

    fn blas_create(&self, dev: DeviceIndex) -> Result<BlasHandle, BackendError> {
        let lib = cublas()?;
        self.enter(dev)?;
        lib.create_handle(self.next_handle.fetch_add(1, std::sync::atomic::Ordering::Relaxed), dev)
    }

    fn blas_destroy(&self, handle: BlasHandle) -> Result<(), BackendError> {
        let lib = cublas()?;
        let (taken, dev) = lib.take_handle(handle)?;
        self.enter(dev)?;
        let destroyed = lib.destroy_taken(taken);
        // After the handle: no routine of it runs any more (cuMemFree waits for the device).
        if let Some((ptr, _)) = lib.take_workspace(handle) {
            mem::free(ptr)?;
        }
        destroyed
    }

    fn blas_launch(&self, handle: BlasHandle, stream: Option<StreamHandle>, call: &BlasCall) -> Result<(), BackendError> {
        let mut scratch = Aligned16([0; 16]);
        self.blas_run(handle, stream, call, &mut scratch.0)
    }

    fn blas_reduce(&self, handle: BlasHandle, stream: Option<StreamHandle>, call: &BlasCall) -> Result<[u8; 16], BackendError> {
        // A complex result is stored with an aligned 16-byte store.
        let mut out = Aligned16([0; 16]);
        self.blas_run(handle, stream, call, &mut out.0)?;
        Ok(out.0)
    }
}
