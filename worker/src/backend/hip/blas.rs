//! BLAS on the hip backend: `libhipblas.so` beside the HIP library the worker loaded (for a
//! chained worker that is hip-remote's own libhipblas, whose calls go on to the next worker).
//! A worker without it serves everything else and answers BLAS calls with
//! `hipErrorNotSupported`, saying why. The dispatch is the GPU backends' shared one
//! (`backend::gpu::blas`); the protocol's enums are hipBLAS's own, so they pass through.

use std::ffi::c_int;
use std::sync::OnceLock;

use super::HipBackend;
use crate::backend::blas::{Aligned16, BlasBackend, BlasCall, BlasHandle};
use crate::backend::gpu::blas::{BlasLibrary, Dialect, Status};
use crate::backend::{BackendError, DeviceIndex, StreamHandle};

static HIPBLAS_DIALECT: Dialect = Dialect {
    name: "hipBLAS",
    prefix: "hipblas",
    typed_suffix: "",
    create: "hipblasCreate",
    destroy: "hipblasDestroy",
    set_stream: "hipblasSetStream",
    set_pointer_mode: "hipblasSetPointerMode",
    gemm_ex: "hipblasGemmEx",
    gemm_strided_batched_ex: "hipblasGemmStridedBatchedEx",
    gemm_batched_ex: "hipblasGemmBatchedEx",
    // Routines in graphs are replayed on this backend.
    set_workspace: None,
    // HIPBLAS_GEMM_DEFAULT.
    algo_default: 160,
    op,
    compute,
    check,
};

/// Where `libhipblas.so` is looked for: beside the HIP library (set by `HipBackend::new`).
static LIBRARY_DIR: OnceLock<std::path::PathBuf> = OnceLock::new();

/// Records the HIP library's directory, where `libhipblas.so` is loaded from.
pub(super) fn set_library_dir(hip_library: &std::path::Path) {
    let dir = hip_library.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
    let _ = LIBRARY_DIR.set(dir);
}

fn check(what: &str, status: Status) -> Result<(), BackendError> {
    match status {
        0 => Ok(()),
        3 => Err(BackendError::InvalidValue(format!("{what}: HIPBLAS_STATUS_INVALID_VALUE"))),
        2 => Err(BackendError::OutOfMemory(format!("{what}: HIPBLAS_STATUS_ALLOC_FAILED"))),
        7 | 8 => Err(BackendError::NotSupported(format!("{what}: hipBLAS status {status} (not supported / architecture mismatch)"))),
        s => Err(BackendError::LaunchFailure(format!("{what}: hipBLAS status {s}"))),
    }
}

/// `hipblasOperation_t`: the protocol's values are hipBLAS's.
fn op(t: u32) -> c_int {
    t as c_int
}

/// `hipblasComputeType_t`: passed through.
fn compute(t: u32) -> Result<c_int, BackendError> {
    c_int::try_from(t).map_err(|_| BackendError::NotSupported(format!("hipblasComputeType_t {t}")))
}

fn hipblas() -> Result<&'static BlasLibrary, BackendError> {
    static HIPBLAS: OnceLock<Result<BlasLibrary, String>> = OnceLock::new();
    HIPBLAS
        .get_or_init(|| {
            let dir = LIBRARY_DIR.get().cloned().unwrap_or_default();
            let candidates: Vec<_> = ["libhipblas.so", "libhipblas.so.3"]
                .iter()
                .map(|name| if dir.as_os_str().is_empty() { name.into() } else { dir.join(name) })
                .collect();
            BlasLibrary::load(&HIPBLAS_DIALECT, &candidates)
        })
        .as_ref()
        .map_err(|why| BackendError::NotSupported(why.clone()))
}

impl HipBackend {
    /// Runs `call`; a host-mode reduction's result lands in `out`.
    fn blas_run(&self, handle: BlasHandle, stream: Option<StreamHandle>, call: &BlasCall, out: &mut [u8; 16]) -> Result<(), BackendError> {
        let lib = hipblas()?;
        let s = self.stream(stream, lib.device_of(handle)?)?;
        lib.run(handle, s.cast(), call, out)
    }
}

impl BlasBackend for HipBackend {
    fn blas_pointer_arrays_in_graphs(&self) -> bool {
        // The library reads the arrays in this session's GPU context, as its kernels would.
        true
    }

    fn blas_create(&self, dev: DeviceIndex) -> Result<BlasHandle, BackendError> {
        let lib = hipblas()?;
        self.enter(dev)?;
        lib.create_handle(self.next_handle.fetch_add(1, std::sync::atomic::Ordering::Relaxed), dev)
    }

    fn blas_destroy(&self, handle: BlasHandle) -> Result<(), BackendError> {
        let lib = hipblas()?;
        let (taken, dev) = lib.take_handle(handle)?;
        self.enter(dev)?;
        lib.destroy_taken(taken)
    }

    fn blas_launch(&self, handle: BlasHandle, stream: Option<StreamHandle>, call: &BlasCall) -> Result<(), BackendError> {
        let mut scratch = Aligned16([0; 16]);
        self.blas_run(handle, stream, call, &mut scratch.0)
    }

    fn blas_reduce(&self, handle: BlasHandle, stream: Option<StreamHandle>, call: &BlasCall) -> Result<[u8; 16], BackendError> {
        let mut out = Aligned16([0; 16]);
        self.blas_run(handle, stream, call, &mut out.0)?;
        Ok(out.0)
    }
}
