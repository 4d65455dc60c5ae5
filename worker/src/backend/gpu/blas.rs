//! BLAS dispatch shared by the GPU backends: cuBLAS (cuda) and hipBLAS (hip) take the same
//! calls with the same C signatures and differ only in names, enum numbers and status codes,
//! which a [`Dialect`] states. [`BlasLibrary`] is the loaded library: its handle table and
//! one safe function per entry point the backends call; every `unsafe` of BLAS lives here.
//!
//! Every GEMM form goes through `GemmEx` / `GemmStridedBatchedEx` / `GemmBatchedEx` (the
//! s/d/c/z entry points are these with fixed types); level 1 and 2 use the typed functions,
//! whose signatures differ only in the element type behind their pointers. Each call sets the
//! handle's stream and pointer mode first (the session serialises a handle's calls).
//! Host-mode scalars are read by the library during the call.

use std::collections::HashMap;
use std::ffi::{c_int, c_longlong, c_void};
use std::path::PathBuf;
use std::sync::Mutex;

use crate::backend::blas::{Aligned16, BlasCall, BlasHandle, ElemType, Routine, Scalar};
use crate::backend::{BackendError, DeviceIndex};

pub(crate) type Handle = *mut c_void;
pub(crate) type Status = c_int;

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

/// What tells one BLAS library from the other.
pub(crate) struct Dialect {
    /// The library's name in messages ("cuBLAS").
    pub name: &'static str,
    /// Every entry point's prefix ("cublas").
    pub prefix: &'static str,
    /// The suffix of the typed level-1/2 entry points ("_v2" for cuBLAS).
    pub typed_suffix: &'static str,
    /// Handle creation, destruction, stream and pointer mode, the three GEMMs (full names).
    pub create: &'static str,
    pub destroy: &'static str,
    pub set_stream: &'static str,
    pub set_pointer_mode: &'static str,
    pub gemm_ex: &'static str,
    pub gemm_strided_batched_ex: &'static str,
    pub gemm_batched_ex: &'static str,
    /// `SetWorkspace` (user-owned workspace: what a captured routine must use), if the
    /// backend captures routines into its graphs.
    pub set_workspace: Option<&'static str>,
    /// The GEMMs' default algorithm.
    pub algo_default: c_int,
    /// The library's operation (transpose) number of a `hipblasOperation_t`.
    pub op: fn(u32) -> c_int,
    /// The library's compute type of a `hipblasComputeType_t`.
    pub compute: fn(u32) -> Result<c_int, BackendError>,
    /// A status → `Result`, naming the call.
    pub check: fn(&str, Status) -> Result<(), BackendError>,
}

/// A loaded BLAS library, its entry points, and the raw handles it made by backend handle id
/// (with their device).
pub(crate) struct BlasLibrary {
    dialect: &'static Dialect,
    lib: libloading::Library,
    create: CreateFn,
    destroy: DestroyFn,
    set_stream: SetStreamFn,
    set_pointer_mode: SetPointerModeFn,
    gemm_ex: GemmExFn,
    gemm_strided_batched_ex: GemmStridedBatchedExFn,
    gemm_batched_ex: GemmBatchedExFn,
    set_workspace: Option<SetWorkspaceFn>,
    handles: Mutex<HashMap<u64, (usize, DeviceIndex)>>,
    /// The workspace given to a handle (device address, bytes), set after `SetStream` (which
    /// resets the library's workspace to its own pool) for the runs captured into graphs.
    workspaces: Mutex<HashMap<u64, (u64, usize)>>,
}

/// `SetWorkspace`: (handle, device memory, bytes).
type SetWorkspaceFn = unsafe extern "C" fn(Handle, *mut c_void, usize) -> Status;

/// The library's type letter(s) of a level-1/2 routine.
fn prefix(t: ElemType) -> Result<&'static str, BackendError> {
    Ok(match t {
        ElemType::R32F => "S",
        ElemType::R64F => "D",
        ElemType::C32F => "C",
        ElemType::C64F => "Z",
        other => return Err(BackendError::NotSupported(format!("level 1/2 BLAS on {other:?}"))),
    })
}

impl BlasLibrary {
    /// Loads the first of `candidates` that loads, and binds the entry points of `dialect`.
    pub(crate) fn load(dialect: &'static Dialect, candidates: &[PathBuf]) -> Result<Self, String> {
        let mut why = Vec::new();
        for path in candidates {
            // SAFETY: loading a BLAS library runs its initialisers only.
            match unsafe { libloading::Library::new(path) } {
                Ok(lib) => return Self::bind(dialect, lib).map_err(|e| format!("{}: {e}", path.display())),
                Err(e) => why.push(format!("{}: {e}", path.display())),
            }
        }
        Err(format!("{} could not be loaded ({})", dialect.name, why.join("; ")))
    }

    fn bind(dialect: &'static Dialect, lib: libloading::Library) -> Result<Self, String> {
        fn sym<F: Copy>(lib: &libloading::Library, name: &str) -> Result<F, String> {
            // SAFETY: each call below asks for the signature the library's header declares for
            // `name` (cublas_api.h, hipblas.h: the same for both).
            unsafe { lib.get::<F>(format!("{name}\0").as_bytes()) }.map(|f| *f).map_err(|e| format!("{name}: {e}"))
        }
        Ok(Self {
            dialect,
            create: sym(&lib, dialect.create)?,
            destroy: sym(&lib, dialect.destroy)?,
            set_stream: sym(&lib, dialect.set_stream)?,
            set_pointer_mode: sym(&lib, dialect.set_pointer_mode)?,
            gemm_ex: sym(&lib, dialect.gemm_ex)?,
            gemm_strided_batched_ex: sym(&lib, dialect.gemm_strided_batched_ex)?,
            gemm_batched_ex: sym(&lib, dialect.gemm_batched_ex)?,
            // Optional: without it routines in graphs are replayed, not captured.
            set_workspace: dialect.set_workspace.and_then(|name| sym(&lib, name).ok()),
            lib,
            handles: Mutex::default(),
            workspaces: Mutex::default(),
        })
    }

    /// A typed level-1/2 entry point: the dialect's prefix, `body`, its suffix.
    fn typed<F: Copy>(&self, body: &str) -> Result<F, BackendError> {
        let name = format!("{}{body}{}\0", self.dialect.prefix, self.dialect.typed_suffix);
        // SAFETY: callers ask for `F` matching the named function's signature (the fn types
        // above, one per routine family).
        unsafe { self.lib.get::<F>(name.as_bytes()) }
            .map(|f| *f)
            .map_err(|e| BackendError::NotSupported(format!("{} has no {}: {e}", self.dialect.name, name.trim_end_matches('\0'))))
    }

    fn check(&self, what: &str, status: Status) -> Result<(), BackendError> {
        (self.dialect.check)(what, status)
    }

    /// Creates a handle on the current device and files it as backend handle `id` of `dev`.
    pub(crate) fn create_handle(&self, id: u64, dev: DeviceIndex) -> Result<BlasHandle, BackendError> {
        let mut raw: Handle = std::ptr::null_mut();
        // SAFETY: `raw` is writable; the caller made `dev` current.
        self.check(self.dialect.create, unsafe { (self.create)(&mut raw) })?;
        self.handles.lock().unwrap_or_else(|p| p.into_inner()).insert(id, (raw as usize, dev));
        Ok(BlasHandle(id))
    }

    /// The device of a live handle.
    pub(crate) fn device_of(&self, handle: BlasHandle) -> Result<DeviceIndex, BackendError> {
        self.raw(handle).map(|(_, dev)| dev)
    }

    fn raw(&self, handle: BlasHandle) -> Result<(Handle, DeviceIndex), BackendError> {
        let table = self.handles.lock().unwrap_or_else(|p| p.into_inner());
        let &(raw, dev) = table.get(&handle.0).ok_or_else(|| BackendError::InvalidHandle(format!("BLAS handle {:#x}", handle.0)))?;
        Ok((raw as Handle, dev))
    }

    /// Takes `handle` out of the table, answering its device: the caller makes it current
    /// and calls [`BlasLibrary::destroy_taken`].
    pub(crate) fn take_handle(&self, handle: BlasHandle) -> Result<(TakenHandle, DeviceIndex), BackendError> {
        let (raw, dev) = self
            .handles
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&handle.0)
            .ok_or_else(|| BackendError::InvalidHandle(format!("BLAS handle {:#x}", handle.0)))?;
        Ok((TakenHandle(raw), dev))
    }

    /// Whether routines can run on a workspace of the caller's (`SetWorkspace` bound).
    pub(crate) fn can_set_workspace(&self) -> bool {
        self.set_workspace.is_some()
    }

    /// The workspace given to `handle`, if any.
    pub(crate) fn workspace(&self, handle: BlasHandle) -> Option<(u64, usize)> {
        self.workspaces.lock().unwrap_or_else(|p| p.into_inner()).get(&handle.0).copied()
    }

    /// Gives `handle` a workspace of `bytes` at device address `ptr` (the caller's memory,
    /// freed by the caller after the handle: [`BlasLibrary::take_workspace`]).
    pub(crate) fn set_handle_workspace(&self, handle: BlasHandle, ptr: u64, bytes: usize) {
        self.workspaces.lock().unwrap_or_else(|p| p.into_inner()).insert(handle.0, (ptr, bytes));
    }

    /// Binds `handle` to the null stream again (after a capture on a private stream that is
    /// about to be destroyed).
    pub(crate) fn unbind_stream(&self, handle: BlasHandle) -> Result<(), BackendError> {
        let (h, _) = self.raw(handle)?;
        // SAFETY: a live handle; the null stream is always valid.
        self.check(self.dialect.set_stream, unsafe { (self.set_stream)(h, std::ptr::null_mut()) })
    }

    /// Takes `handle`'s workspace out of the table (at its destruction).
    pub(crate) fn take_workspace(&self, handle: BlasHandle) -> Option<(u64, usize)> {
        self.workspaces.lock().unwrap_or_else(|p| p.into_inner()).remove(&handle.0)
    }

    /// Destroys a handle taken out of the table (its device current).
    pub(crate) fn destroy_taken(&self, taken: TakenHandle) -> Result<(), BackendError> {
        // SAFETY: a live handle, out of the table: destroyed once.
        self.check(self.dialect.destroy, unsafe { (self.destroy)(taken.0 as Handle) })
    }

    /// Runs `call` on `handle` in `stream` (a raw stream of the handle's device, current now);
    /// a host-mode reduction's result lands in `out`.
    pub(crate) fn run(&self, handle: BlasHandle, stream: *mut c_void, call: &BlasCall, out: &mut [u8; 16]) -> Result<(), BackendError> {
        self.run_on(handle, stream, call, out, false)
    }

    /// [`BlasLibrary::run`] on the handle's own workspace ([`BlasLibrary::set_handle_workspace`]),
    /// as a routine captured into a graph must (the library's pool would put memory nodes in
    /// the captured graph). Eager runs keep the library's per-stream pool, so they never share
    /// this workspace with a graph running on another stream.
    pub(crate) fn run_for_capture(&self, handle: BlasHandle, stream: *mut c_void, call: &BlasCall) -> Result<(), BackendError> {
        let mut scratch = Aligned16([0; 16]);
        self.run_on(handle, stream, call, &mut scratch.0, true)
    }

    fn run_on(&self, handle: BlasHandle, stream: *mut c_void, call: &BlasCall, out: &mut [u8; 16], own_workspace: bool) -> Result<(), BackendError> {
        let (h, _) = self.raw(handle)?;
        let d = self.dialect;
        let device_scalars = matches!(call.alpha, Scalar::Device(_));
        // SAFETY: a live handle of the current device; `stream` is a stream of it.
        unsafe {
            self.check(d.set_stream, (self.set_stream)(h, stream))?;
            if own_workspace {
                let (Some(set_workspace), Some((ptr, bytes))) = (self.set_workspace, self.workspace(handle)) else {
                    return Err(BackendError::NotSupported(format!("{} handle {:#x} has no workspace of its own", d.name, handle.0)));
                };
                // `ptr` is `bytes` of device memory of the handle's device, kept until the
                // handle is destroyed. (`SetStream` above reset the workspace to the pool.)
                self.check(d.set_workspace.unwrap_or("SetWorkspace"), set_workspace(h, ptr as *mut c_void, bytes))?;
            }
            self.check(d.set_pointer_mode, (self.set_pointer_mode)(h, c_int::from(device_scalars || call.result.is_some())))?;
        }
        // Host scalars are copied to 16-byte aligned storage: the library reads a complex
        // double with an aligned 16-byte load (a misaligned one faults the whole worker).
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
        let dim = |v: i64| c_int::try_from(v).map_err(|_| BackendError::InvalidValue(format!("dimension {v} exceeds {}'s 32-bit interface", d.name)));
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
                    let (at, ct, comp) = (call.ab_type.raw() as c_int, call.c_type.raw() as c_int, (d.compute)(call.compute)?);
                    let (ta, tb) = ((d.op)(call.trans[0]), (d.op)(call.trans[1]));
                    let algo = d.algo_default;
                    if call.pointer_arrays {
                        let batch = dim(call.batch)?;
                        let status = (self.gemm_batched_ex)(h, ta, tb, m, n, k, alpha, a, at, lda, b, at, ldb, beta, c, ct, ldc, batch, comp, algo);
                        self.check(d.gemm_batched_ex, status)
                    } else if call.batch != 1 {
                        let (sa, sb, sc, batch) = (call.a.stride, call.b.stride, call.c.stride, dim(call.batch)?);
                        let status = (self.gemm_strided_batched_ex)(
                            h, ta, tb, m, n, k, alpha, a, at, lda, sa, b, at, ldb, sb, beta, c, ct, ldc, sc, batch, comp, algo,
                        );
                        self.check(d.gemm_strided_batched_ex, status)
                    } else {
                        self.check(d.gemm_ex, (self.gemm_ex)(h, ta, tb, m, n, k, alpha, a, at, lda, b, at, ldb, beta, c, ct, ldc, comp, algo))
                    }
                }
                Routine::Axpy => self.check("axpy", self.typed::<AxpyFn>(&format!("{}axpy", p?))?(h, m, alpha, a, lda, c, ldc)),
                Routine::Scal => {
                    // A complex vector scaled by a real alpha is its own routine (Csscal, Zdscal):
                    // Cscal/Zscal would read a complex alpha.
                    let body = match (p?, call.scalar_type) {
                        ("C", ElemType::R32F) => "Csscal".to_string(),
                        ("Z", ElemType::R64F) => "Zdscal".to_string(),
                        (p, _) => format!("{p}scal"),
                    };
                    self.check("scal", self.typed::<ScalFn>(&body)?(h, m, alpha, c, ldc))
                }
                Routine::Copy => self.check("copy", self.typed::<CopyFn>(&format!("{}copy", p?))?(h, m, a, lda, c, ldc)),
                Routine::Swap => self.check("swap", self.typed::<CopyFn>(&format!("{}swap", p?))?(h, m, a.cast_mut(), lda, c, ldc)),
                Routine::Dot | Routine::Dotc => {
                    let p = p?;
                    let body = match (p, call.routine) {
                        ("S" | "D", _) => format!("{p}dot"),
                        (_, Routine::Dot) => format!("{p}dotu"),
                        _ => format!("{p}dotc"),
                    };
                    self.check("dot", self.typed::<DotFn>(&body)?(h, m, a, lda, b, ldb, result))
                }
                Routine::Nrm2 | Routine::Asum | Routine::Iamax | Routine::Iamin => {
                    let p = p?;
                    let body = match (call.routine, p) {
                        (Routine::Nrm2, "C") => "Scnrm2".to_string(),
                        (Routine::Nrm2, "Z") => "Dznrm2".to_string(),
                        (Routine::Nrm2, p) => format!("{p}nrm2"),
                        (Routine::Asum, "C") => "Scasum".to_string(),
                        (Routine::Asum, "Z") => "Dzasum".to_string(),
                        (Routine::Asum, p) => format!("{p}asum"),
                        (Routine::Iamax, p) => format!("I{}amax", p.to_lowercase()),
                        (_, p) => format!("I{}amin", p.to_lowercase()),
                    };
                    let name = format!("{}{body}{}", d.prefix, d.typed_suffix);
                    self.check(&name, self.typed::<ReduceFn>(&body)?(h, m, a, lda, result))
                }
                Routine::Gemv => self.check(
                    "gemv",
                    self.typed::<GemvFn>(&format!("{}gemv", p?))?(h, (d.op)(call.trans[0]), m, n, alpha, a, lda, b, ldb, beta, c, ldc),
                ),
                Routine::Ger | Routine::Gerc => {
                    let p = p?;
                    let body = match (p, call.routine) {
                        ("S" | "D", _) => format!("{p}ger"),
                        (_, Routine::Ger) => format!("{p}geru"),
                        _ => format!("{p}gerc"),
                    };
                    self.check("ger", self.typed::<GerFn>(&body)?(h, m, n, alpha, a, lda, b, ldb, c, ldc))
                }
            }
        }
    }
}

/// A raw handle out of the table, to be destroyed once.
pub(crate) struct TakenHandle(usize);
