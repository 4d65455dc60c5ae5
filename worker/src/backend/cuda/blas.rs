//! BLAS on the cuda backend: cuBLAS, loaded at run time like the driver (`libcublas.so.13`,
//! else `.so.12`, else `libcublas.so`). A worker without cuBLAS serves everything else and
//! answers BLAS calls with `hipErrorNotSupported`, saying why.
//!
//! Every GEMM form goes through `cublasGemmEx` / `cublasGemmStridedBatchedEx` /
//! `cublasGemmBatchedEx` (the s/d/c/z entry points are these with fixed types); level 1 and 2
//! use the typed `_v2` functions, whose signatures differ only in the element type behind
//! their pointers. Each call sets the handle's stream and pointer mode first (the session
//! serialises a handle's calls). Host-mode scalars are read by cuBLAS during the call.

use std::collections::HashMap;
use std::ffi::{c_int, c_longlong, c_void};
use std::sync::{Mutex, OnceLock};

use super::CudaBackend;
use crate::backend::blas::{blas_op, Aligned16, BlasBackend, BlasCall, BlasHandle, ElemType, Routine, Scalar};
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
struct Cublas {
    lib: libloading::Library,
    create: CreateFn,
    destroy: DestroyFn,
    set_stream: SetStreamFn,
    set_pointer_mode: SetPointerModeFn,
    gemm_ex: GemmExFn,
    gemm_strided_batched_ex: GemmStridedBatchedExFn,
    gemm_batched_ex: GemmBatchedExFn,
}

const LIBRARIES: &[&str] = &["libcublas.so.13", "libcublas.so.12", "libcublas.so"];

impl Cublas {
    fn load() -> Result<Self, String> {
        let mut why = Vec::new();
        for name in LIBRARIES {
            // SAFETY: loading cuBLAS runs its initialisers only.
            match unsafe { libloading::Library::new(name) } {
                Ok(lib) => return Self::bind(lib).map_err(|e| format!("{name}: {e}")),
                Err(e) => why.push(format!("{name}: {e}")),
            }
        }
        Err(format!("cuBLAS could not be loaded ({})", why.join("; ")))
    }

    fn bind(lib: libloading::Library) -> Result<Self, String> {
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbol has the declared cuBLAS signature (cublas_api.h).
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }.map_err(|e| format!("{}: {e}", $name))?
            };
        }
        Ok(Self {
            create: sym!("cublasCreate_v2"),
            destroy: sym!("cublasDestroy_v2"),
            set_stream: sym!("cublasSetStream_v2"),
            set_pointer_mode: sym!("cublasSetPointerMode_v2"),
            gemm_ex: sym!("cublasGemmEx"),
            gemm_strided_batched_ex: sym!("cublasGemmStridedBatchedEx"),
            gemm_batched_ex: sym!("cublasGemmBatchedEx"),
            lib,
        })
    }

    /// A typed level-1/2 entry point by name.
    fn typed<F: Copy>(&self, name: &str) -> Result<F, BackendError> {
        let c_name = format!("{name}\0");
        // SAFETY: callers ask for `F` matching the named function's cuBLAS signature.
        unsafe { self.lib.get::<F>(c_name.as_bytes()) }.map(|f| *f).map_err(|e| BackendError::NotSupported(format!("cuBLAS has no {name}: {e}")))
    }
}

fn cublas() -> Result<&'static Cublas, BackendError> {
    static CUBLAS: OnceLock<Result<Cublas, String>> = OnceLock::new();
    CUBLAS.get_or_init(Cublas::load).as_ref().map_err(|why| BackendError::NotSupported(why.clone()))
}

/// Raw cuBLAS handles by backend handle id, with their device.
struct Handles(Mutex<HashMap<u64, (usize, DeviceIndex)>>);

fn handles() -> &'static Handles {
    static HANDLES: OnceLock<Handles> = OnceLock::new();
    HANDLES.get_or_init(|| Handles(Mutex::default()))
}

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

/// cuBLAS's type letter(s) of a level-1/2 routine.
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
    c_int::try_from(v).map_err(|_| BackendError::InvalidValue(format!("dimension {v} exceeds cuBLAS's 32-bit interface")))
}

impl CudaBackend {
    fn blas_raw(&self, handle: BlasHandle, stream: Option<StreamHandle>, device_scalars: bool) -> Result<(Handle, &'static Cublas), BackendError> {
        let lib = cublas()?;
        let (raw, dev) = *handles()
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&handle.0)
            .ok_or_else(|| BackendError::InvalidHandle(format!("BLAS handle {:#x}", handle.0)))?;
        let s = self.work_stream(stream, dev)?;
        let raw = raw as Handle;
        // SAFETY: a live cuBLAS handle of `dev`'s context (current now); `s` is a stream of it.
        unsafe {
            check("cublasSetStream", (lib.set_stream)(raw, s.cast()))?;
            check("cublasSetPointerMode", (lib.set_pointer_mode)(raw, c_int::from(device_scalars)))?;
        }
        Ok((raw, lib))
    }

    /// Runs `call`; a host-mode reduction's result lands in `out`.
    fn blas_run(&self, handle: BlasHandle, stream: Option<StreamHandle>, call: &BlasCall, out: &mut [u8; 16]) -> Result<(), BackendError> {
        let device_scalars = matches!(call.alpha, Scalar::Device(_));
        let (h, lib) = self.blas_raw(handle, stream, device_scalars || call.result.is_some())?;
        // Host scalars are copied to 16-byte aligned storage: cuBLAS reads a complex double
        // with an aligned 16-byte load (a misaligned one faults the whole worker).
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
                    const ALGO_DEFAULT: c_int = -1;
                    if call.pointer_arrays {
                        check(
                            "cublasGemmBatchedEx",
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
                            "cublasGemmStridedBatchedEx",
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
                        check("cublasGemmEx", (lib.gemm_ex)(h, ta, tb, m, n, k, alpha, a, at, lda, b, at, ldb, beta, c, ct, ldc, comp, ALGO_DEFAULT))
                    }
                }
                Routine::Axpy => check("axpy", lib.typed::<AxpyFn>(&format!("cublas{}axpy_v2", p?))?(h, m, alpha, a, lda, c, ldc)),
                Routine::Scal => {
                    // A complex vector scaled by a real alpha is its own routine (Csscal, Zdscal):
                    // Cscal/Zscal would read a complex alpha.
                    let name = match (p?, call.scalar_type) {
                        ("C", ElemType::R32F) => "cublasCsscal_v2".to_string(),
                        ("Z", ElemType::R64F) => "cublasZdscal_v2".to_string(),
                        (p, _) => format!("cublas{p}scal_v2"),
                    };
                    check("scal", lib.typed::<ScalFn>(&name)?(h, m, alpha, c, ldc))
                }
                Routine::Copy => check("copy", lib.typed::<CopyFn>(&format!("cublas{}copy_v2", p?))?(h, m, a, lda, c, ldc)),
                Routine::Swap => check("swap", lib.typed::<CopyFn>(&format!("cublas{}swap_v2", p?))?(h, m, a.cast_mut(), lda, c, ldc)),
                Routine::Dot | Routine::Dotc => {
                    let p = p?;
                    let name = match (p, call.routine) {
                        ("S" | "D", _) => format!("cublas{p}dot_v2"),
                        (_, Routine::Dot) => format!("cublas{p}dotu_v2"),
                        _ => format!("cublas{p}dotc_v2"),
                    };
                    check("dot", lib.typed::<DotFn>(&name)?(h, m, a, lda, b, ldb, result))
                }
                Routine::Nrm2 | Routine::Asum | Routine::Iamax | Routine::Iamin => {
                    let p = p?;
                    let name = match (call.routine, p) {
                        (Routine::Nrm2, "C") => "cublasScnrm2_v2".to_string(),
                        (Routine::Nrm2, "Z") => "cublasDznrm2_v2".to_string(),
                        (Routine::Nrm2, p) => format!("cublas{p}nrm2_v2"),
                        (Routine::Asum, "C") => "cublasScasum_v2".to_string(),
                        (Routine::Asum, "Z") => "cublasDzasum_v2".to_string(),
                        (Routine::Asum, p) => format!("cublas{p}asum_v2"),
                        (Routine::Iamax, p) => format!("cublasI{}amax_v2", p.to_lowercase()),
                        (_, p) => format!("cublasI{}amin_v2", p.to_lowercase()),
                    };
                    check(&name, lib.typed::<ReduceFn>(&name)?(h, m, a, lda, result))
                }
                Routine::Gemv => check(
                    "gemv",
                    lib.typed::<GemvFn>(&format!("cublas{}gemv_v2", p?))?(h, op(call.trans[0]), m, n, alpha, a, lda, b, ldb, beta, c, ldc),
                ),
                Routine::Ger | Routine::Gerc => {
                    let p = p?;
                    let name = match (p, call.routine) {
                        ("S" | "D", _) => format!("cublas{p}ger_v2"),
                        (_, Routine::Ger) => format!("cublas{p}geru_v2"),
                        _ => format!("cublas{p}gerc_v2"),
                    };
                    check("ger", lib.typed::<GerFn>(&name)?(h, m, n, alpha, a, lda, b, ldb, c, ldc))
                }
            }
        }
    }
}

impl BlasBackend for CudaBackend {
    fn blas_create(&self, dev: DeviceIndex) -> Result<BlasHandle, BackendError> {
        let lib = cublas()?;
        self.enter(dev)?;
        let mut raw: Handle = std::ptr::null_mut();
        // SAFETY: `raw` is writable; `dev`'s context is current.
        check("cublasCreate", unsafe { (lib.create)(&mut raw) })?;
        let id = self.next_handle.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        handles().0.lock().unwrap_or_else(|p| p.into_inner()).insert(id, (raw as usize, dev));
        Ok(BlasHandle(id))
    }

    fn blas_destroy(&self, handle: BlasHandle) -> Result<(), BackendError> {
        let lib = cublas()?;
        let (raw, dev) = handles()
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&handle.0)
            .ok_or_else(|| BackendError::InvalidHandle(format!("BLAS handle {:#x}", handle.0)))?;
        self.enter(dev)?;
        // SAFETY: a live handle, removed from the table (destroyed once).
        check("cublasDestroy", unsafe { (lib.destroy)(raw as Handle) })
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
