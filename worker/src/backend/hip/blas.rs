//! BLAS on the hip backend: `libhipblas.so` beside the HIP library the worker loaded (for a
//! chained worker that is hip-remote's own libhipblas, whose calls go on to the next worker).
//! A worker without it serves everything else and answers BLAS calls with
//! `hipErrorNotSupported`, saying why.
//!
//! Every GEMM form goes through `hipblasGemmEx` / `hipblasGemmStridedBatchedEx` /
//! `hipblasGemmBatchedEx`; level 1 and 2 use the typed functions, whose signatures differ
//! only in the element type behind their pointers. The protocol's enums are hipBLAS's own, so
//! they pass through. Each call sets the handle's stream and pointer mode first.

use std::collections::HashMap;
use std::ffi::{c_int, c_longlong, c_void};
use std::sync::{Mutex, OnceLock};

use super::HipBackend;
use crate::backend::blas::{Aligned16, BlasBackend, BlasCall, BlasHandle, ElemType, Routine, Scalar};
use crate::backend::{BackendError, DeviceIndex, StreamHandle};

type Handle = *mut c_void;
type Status = c_int;

type CreateFn = unsafe extern "C" fn(*mut Handle) -> Status;
type DestroyFn = unsafe extern "C" fn(Handle) -> Status;
type SetStreamFn = unsafe extern "C" fn(Handle, *mut c_void) -> Status;
type SetPointerModeFn = unsafe extern "C" fn(Handle, c_int) -> Status;
type GemmExFn = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
    c_int,
    c_int,
    c_int,
) -> Status;
type GemmStridedBatchedExFn = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    c_int,
    c_longlong,
    *const c_void,
    c_int,
    c_int,
    c_longlong,
    *const c_void,
    *mut c_void,
    c_int,
    c_int,
    c_longlong,
    c_int,
    c_int,
    c_int,
) -> Status;
type GemmBatchedExFn = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
) -> Status;
/// `axpy`: (handle, n, alpha, x, incx, y, incy).
type AxpyFn = unsafe extern "C" fn(Handle, c_int, *const c_void, *const c_void, c_int, *mut c_void, c_int) -> Status;
/// `scal`: (handle, n, alpha, x, incx).
type ScalFn = unsafe extern "C" fn(Handle, c_int, *const c_void, *mut c_void, c_int) -> Status;
/// `copy`, `swap`: (handle, n, x, incx, y, incy).
type CopyFn = unsafe extern "C" fn(Handle, c_int, *const c_void, c_int, *mut c_void, c_int) -> Status;
/// `dot*`: (handle, n, x, incx, y, incy, result).
type DotFn = unsafe extern "C" fn(Handle, c_int, *const c_void, c_int, *const c_void, c_int, *mut c_void) -> Status;
/// `nrm2`, `asum`, `i?amax`, `i?amin`: (handle, n, x, incx, result).
type ReduceFn = unsafe extern "C" fn(Handle, c_int, *const c_void, c_int, *mut c_void) -> Status;
/// `gemv`: (handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy).
type GemvFn = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    *const c_void,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
) -> Status;
/// `ger*`: (handle, m, n, alpha, x, incx, y, incy, A, lda).
type GerFn = unsafe extern "C" fn(Handle, c_int, c_int, *const c_void, *const c_void, c_int, *const c_void, c_int, *mut c_void, c_int) -> Status;

/// The loaded library and the entry points used.
struct HipBlas {
    lib: libloading::Library,
    create: CreateFn,
    destroy: DestroyFn,
    set_stream: SetStreamFn,
    set_pointer_mode: SetPointerModeFn,
    gemm_ex: GemmExFn,
    gemm_strided_batched_ex: GemmStridedBatchedExFn,
    gemm_batched_ex: GemmBatchedExFn,
}

/// Where `libhipblas.so` is looked for: beside the HIP library (set by `HipBackend::new`).
static LIBRARY_DIR: OnceLock<std::path::PathBuf> = OnceLock::new();

/// Records the HIP library's directory, where `libhipblas.so` is loaded from.
pub(super) fn set_library_dir(hip_library: &std::path::Path) {
    let dir = hip_library.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
    let _ = LIBRARY_DIR.set(dir);
}

impl HipBlas {
    fn load() -> Result<Self, String> {
        let dir = LIBRARY_DIR.get().cloned().unwrap_or_default();
        let mut why = Vec::new();
        for name in ["libhipblas.so", "libhipblas.so.3"] {
            let path = if dir.as_os_str().is_empty() { std::path::PathBuf::from(name) } else { dir.join(name) };
            // SAFETY: loading hipBLAS runs its initialisers only.
            match unsafe { libloading::Library::new(&path) } {
                Ok(lib) => return Self::bind(lib).map_err(|e| format!("{}: {e}", path.display())),
                Err(e) => why.push(format!("{}: {e}", path.display())),
            }
        }
        Err(format!("hipBLAS could not be loaded ({})", why.join("; ")))
    }

    fn bind(lib: libloading::Library) -> Result<Self, String> {
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbol has the declared hipBLAS signature (hipblas.h).
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }.map_err(|e| format!("{}: {e}", $name))?
            };
        }
        Ok(Self {
            create: sym!("hipblasCreate"),
            destroy: sym!("hipblasDestroy"),
            set_stream: sym!("hipblasSetStream"),
            set_pointer_mode: sym!("hipblasSetPointerMode"),
            gemm_ex: sym!("hipblasGemmEx"),
            gemm_strided_batched_ex: sym!("hipblasGemmStridedBatchedEx"),
            gemm_batched_ex: sym!("hipblasGemmBatchedEx"),
            lib,
        })
    }

    /// A typed level-1/2 entry point by name.
    fn typed<F: Copy>(&self, name: &str) -> Result<F, BackendError> {
        let c_name = format!("{name}\0");
        // SAFETY: callers ask for `F` matching the named function's hipBLAS signature.
        unsafe { self.lib.get::<F>(c_name.as_bytes()) }.map(|f| *f).map_err(|e| BackendError::NotSupported(format!("hipBLAS has no {name}: {e}")))
    }
}

fn hipblas() -> Result<&'static HipBlas, BackendError> {
    static HIPBLAS: OnceLock<Result<HipBlas, String>> = OnceLock::new();
    HIPBLAS.get_or_init(HipBlas::load).as_ref().map_err(|why| BackendError::NotSupported(why.clone()))
}

/// Raw hipBLAS handles by backend handle id, with their device.
struct Handles(Mutex<HashMap<u64, (usize, DeviceIndex)>>);

fn handles() -> &'static Handles {
    static HANDLES: OnceLock<Handles> = OnceLock::new();
    HANDLES.get_or_init(|| Handles(Mutex::default()))
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

/// hipBLAS's type letter(s) of a level-1/2 routine.
fn prefix(t: ElemType) -> Result<&'static str, BackendError> {
    Ok(match t {
        ElemType::R32F => "S",
        ElemType::R64F => "D",
        ElemType::C32F => "C",
        ElemType::C64F => "Z",
        other => return Err(BackendError::NotSupported(format!("level 1/2 BLAS on {other:?}"))),
    })
}

fn dim(v: i64) -> Result<c_int, BackendError> {
    c_int::try_from(v).map_err(|_| BackendError::InvalidValue(format!("dimension {v} exceeds hipBLAS's 32-bit interface")))
}

impl HipBackend {
    fn blas_raw(&self, handle: BlasHandle, stream: Option<StreamHandle>, device_scalars: bool) -> Result<(Handle, &'static HipBlas), BackendError> {
        let lib = hipblas()?;
        let (raw, dev) = *handles()
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&handle.0)
            .ok_or_else(|| BackendError::InvalidHandle(format!("BLAS handle {:#x}", handle.0)))?;
        let s = self.stream(stream, dev)?;
        let raw = raw as Handle;
        // SAFETY: a live hipBLAS handle of `dev` (current now); `s` is a stream of it.
        unsafe {
            check("hipblasSetStream", (lib.set_stream)(raw, s.cast()))?;
            check("hipblasSetPointerMode", (lib.set_pointer_mode)(raw, c_int::from(device_scalars)))?;
        }
        Ok((raw, lib))
    }

    /// Runs `call`; a host-mode reduction's result lands in `out`.
    fn blas_run(&self, handle: BlasHandle, stream: Option<StreamHandle>, call: &BlasCall, out: &mut [u8; 16]) -> Result<(), BackendError> {
        let device_scalars = matches!(call.alpha, Scalar::Device(_));
        let (h, lib) = self.blas_raw(handle, stream, device_scalars || call.result.is_some())?;
        // Host scalars at a 16-byte boundary, as the library may read them (see `Aligned16`).
        let host_value = |s: &Scalar| match s {
            Scalar::Value(bytes) => Aligned16(*bytes),
            Scalar::Device(_) => Aligned16([0; 16]),
        };
        let (alpha_value, beta_value) = (host_value(&call.alpha), host_value(&call.beta));
        let scalar = |s: &Scalar, value: &Aligned16| match s {
            Scalar::Value(_) => value.0.as_ptr().cast::<c_void>(),
            Scalar::Device(ptr) => *ptr as *const c_void,
        };
        let (alpha, beta) = (scalar(&call.alpha, &alpha_value), scalar(&call.beta, &beta_value));
        let (a, b, c) = (call.a.ptr as *const c_void, call.b.ptr as *const c_void, call.c.ptr as *mut c_void);
        let (lda, ldb, ldc) = (dim(call.a.ld)?, dim(call.b.ld)?, dim(call.c.ld)?);
        let (m, n, k) = (dim(call.dims[0])?, dim(call.dims[1])?, dim(call.dims[2])?);
        let result: *mut c_void = match call.result {
            Some(ptr) => ptr as *mut c_void,
            None => out.as_mut_ptr().cast(),
        };
        let p = prefix(call.ab_type);
        // SAFETY: the session checked every operand's extent against the session's
        // allocations of the handle's device; host scalars and `out` live across the call.
        unsafe {
            match call.routine {
                Routine::Gemm => {
                    let (at, ct, comp) = (call.ab_type.raw() as c_int, call.c_type.raw() as c_int, compute(call.compute)?);
                    let (ta, tb) = (op(call.trans[0]), op(call.trans[1]));
                    const ALGO_DEFAULT: c_int = 160; // HIPBLAS_GEMM_DEFAULT
                    if call.pointer_arrays {
                        check(
                            "hipblasGemmBatchedEx",
                            (lib.gemm_batched_ex)(
                                h,
                                ta,
                                tb,
                                m,
                                n,
                                k,
                                alpha,
                                a,
                                at,
                                lda,
                                b,
                                at,
                                ldb,
                                beta,
                                c,
                                ct,
                                ldc,
                                dim(call.batch)?,
                                comp,
                                ALGO_DEFAULT,
                            ),
                        )
                    } else if call.batch != 1 {
                        check(
                            "hipblasGemmStridedBatchedEx",
                            (lib.gemm_strided_batched_ex)(
                                h,
                                ta,
                                tb,
                                m,
                                n,
                                k,
                                alpha,
                                a,
                                at,
                                lda,
                                call.a.stride,
                                b,
                                at,
                                ldb,
                                call.b.stride,
                                beta,
                                c,
                                ct,
                                ldc,
                                call.c.stride,
                                dim(call.batch)?,
                                comp,
                                ALGO_DEFAULT,
                            ),
                        )
                    } else {
                        check("hipblasGemmEx", (lib.gemm_ex)(h, ta, tb, m, n, k, alpha, a, at, lda, b, at, ldb, beta, c, ct, ldc, comp, ALGO_DEFAULT))
                    }
                }
                Routine::Axpy => check("axpy", lib.typed::<AxpyFn>(&format!("hipblas{}axpy", p?))?(h, m, alpha, a, lda, c, ldc)),
                Routine::Scal => check("scal", lib.typed::<ScalFn>(&format!("hipblas{}scal", p?))?(h, m, alpha, c, ldc)),
                Routine::Copy => check("copy", lib.typed::<CopyFn>(&format!("hipblas{}copy", p?))?(h, m, a, lda, c, ldc)),
                Routine::Swap => check("swap", lib.typed::<CopyFn>(&format!("hipblas{}swap", p?))?(h, m, a.cast_mut(), lda, c, ldc)),
                Routine::Dot | Routine::Dotc => {
                    let p = p?;
                    let name = match (p, call.routine) {
                        ("S" | "D", _) => format!("hipblas{p}dot"),
                        (_, Routine::Dot) => format!("hipblas{p}dotu"),
                        _ => format!("hipblas{p}dotc"),
                    };
                    check("dot", lib.typed::<DotFn>(&name)?(h, m, a, lda, b, ldb, result))
                }
                Routine::Nrm2 | Routine::Asum | Routine::Iamax | Routine::Iamin => {
                    let p = p?;
                    let name = match (call.routine, p) {
                        (Routine::Nrm2, "C") => "hipblasScnrm2".to_string(),
                        (Routine::Nrm2, "Z") => "hipblasDznrm2".to_string(),
                        (Routine::Nrm2, p) => format!("hipblas{p}nrm2"),
                        (Routine::Asum, "C") => "hipblasScasum".to_string(),
                        (Routine::Asum, "Z") => "hipblasDzasum".to_string(),
                        (Routine::Asum, p) => format!("hipblas{p}asum"),
                        (Routine::Iamax, p) => format!("hipblasI{}amax", p.to_lowercase()),
                        (_, p) => format!("hipblasI{}amin", p.to_lowercase()),
                    };
                    check(&name, lib.typed::<ReduceFn>(&name)?(h, m, a, lda, result))
                }
                Routine::Gemv => check(
                    "gemv",
                    lib.typed::<GemvFn>(&format!("hipblas{}gemv", p?))?(h, op(call.trans[0]), m, n, alpha, a, lda, b, ldb, beta, c, ldc),
                ),
                Routine::Ger | Routine::Gerc => {
                    let p = p?;
                    let name = match (p, call.routine) {
                        ("S" | "D", _) => format!("hipblas{p}ger"),
                        (_, Routine::Ger) => format!("hipblas{p}geru"),
                        _ => format!("hipblas{p}gerc"),
                    };
                    check("ger", lib.typed::<GerFn>(&name)?(h, m, n, alpha, a, lda, b, ldb, c, ldc))
                }
            }
        }
    }
}

impl BlasBackend for HipBackend {
    fn blas_create(&self, dev: DeviceIndex) -> Result<BlasHandle, BackendError> {
        let lib = hipblas()?;
        self.enter(dev)?;
        let mut raw: Handle = std::ptr::null_mut();
        // SAFETY: `raw` is writable; `dev` is current.
        check("hipblasCreate", unsafe { (lib.create)(&mut raw) })?;
        let id = self.next_handle.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        handles().0.lock().unwrap_or_else(|p| p.into_inner()).insert(id, (raw as usize, dev));
        Ok(BlasHandle(id))
    }

    fn blas_destroy(&self, handle: BlasHandle) -> Result<(), BackendError> {
        let lib = hipblas()?;
        let (raw, dev) = handles()
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&handle.0)
            .ok_or_else(|| BackendError::InvalidHandle(format!("BLAS handle {:#x}", handle.0)))?;
        self.enter(dev)?;
        // SAFETY: a live handle, removed from the table (destroyed once).
        check("hipblasDestroy", unsafe { (lib.destroy)(raw as Handle) })
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
