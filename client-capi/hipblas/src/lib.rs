//! hip-remote's drop-in `libhipblas.so.3`: ROCm 7's hipBLAS C API, with every routine run by the
//! worker's own BLAS (cuBLAS on a cuda worker, hipBLAS on a hip worker, a CPU BLAS on the host
//! backend). See docs/BLAS.md.
//!
//! **One connection.** Like libhiprtc, this library holds no connection of its own: each call
//! is encoded as a BLAS-family request (`proto_core::wire::BlasOp`...) and handed to
//! `__hipRemoteBlasCall`, an internal export of hip-remote's `libamdhip64.so.7`, which sends it
//! over that library's connection, ordered with the HIP work of the same stream. It is found
//! at run time (the process's global scope first, else by loading `libamdhip64.so.7`); this
//! library also carries `NEEDED libamdhip64.so.7` (see `build.rs`).
//!
//! **Handles** are ids into this library's table (never dereferenced): a destroyed, made-up or
//! NULL handle is `HIPBLAS_STATUS_NOT_INITIALIZED`, as hipBLAS maps rocBLAS's invalid handle.
//! A handle keeps its stream, pointer mode and atomics mode here; the worker holds a handle
//! of its BLAS on the device that was current at `hipblasCreate`.
//!
//! **Calls.** Routines whose results stay in device memory are fire-and-forget on the handle's
//! stream: a failure on the worker (an operand outside the session's allocations, a type the
//! worker's BLAS lacks) is reported by the next synchronising HIP call, as a kernel fault is.
//! Sizes, leading dimensions and enums are checked here first and refused at once, with
//! hipBLAS's status. Reductions (`dot`, `nrm2`, `asum`, `iamax`, `iamin`) in host pointer mode
//! wait for their result, as in ROCm. Scalars in host pointer mode travel by value; in device
//! pointer mode they stay device addresses the worker reads in stream order.
//!
//! Every other hipBLAS function CuPy and PyTorch link is exported and answers
//! `HIPBLAS_STATUS_NOT_SUPPORTED` (listed in `client-capi/symbols/hipblas_functions.txt` and
//! `hipblas_not_supported_reasons.txt`).
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![allow(non_snake_case, non_camel_case_types, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use proto_core::blas_entry::{BlasCallFn, ENTRY_POINT};
use proto_core::field::EncodeCx;
use proto_core::wire::{self, blas_op, BlasRoutine as Routine, BlasType as Ty};
use proto_core::{Message, Opcode};

/// `hipblasStatus_t`.
pub type hipblasStatus_t = c_int;
/// `hipblasHandle_t`: an opaque pointer (here an id).
pub type hipblasHandle_t = *mut c_void;
/// `hipStream_t`.
pub type hipStream_t = *mut c_void;
/// `hipblasOperation_t`.
pub type hipblasOperation_t = c_int;
/// `hipblasPointerMode_t`.
pub type hipblasPointerMode_t = c_int;
/// `hipblasAtomicsMode_t`.
pub type hipblasAtomicsMode_t = c_int;
/// `hipDataType`.
pub type hipDataType = c_int;
/// `hipblasComputeType_t`.
pub type hipblasComputeType_t = c_int;
/// `hipblasGemmAlgo_t`.
pub type hipblasGemmAlgo_t = c_int;
/// `hipblasStride`.
pub type hipblasStride = i64;

/// `hipblasStatus_t` values (ROCm's `hipblas-common.h`).
pub mod status {
    use std::ffi::c_int;
    /// `HIPBLAS_STATUS_SUCCESS`.
    pub const SUCCESS: c_int = 0;
    /// `HIPBLAS_STATUS_NOT_INITIALIZED`.
    pub const NOT_INITIALIZED: c_int = 1;
    /// `HIPBLAS_STATUS_ALLOC_FAILED`.
    pub const ALLOC_FAILED: c_int = 2;
    /// `HIPBLAS_STATUS_INVALID_VALUE`.
    pub const INVALID_VALUE: c_int = 3;
    /// `HIPBLAS_STATUS_EXECUTION_FAILED`.
    pub const EXECUTION_FAILED: c_int = 5;
    /// `HIPBLAS_STATUS_INTERNAL_ERROR`.
    pub const INTERNAL_ERROR: c_int = 6;
    /// `HIPBLAS_STATUS_NOT_SUPPORTED`.
    pub const NOT_SUPPORTED: c_int = 7;
    /// `HIPBLAS_STATUS_INVALID_ENUM`.
    pub const INVALID_ENUM: c_int = 10;
}

/// `HIPBLAS_POINTER_MODE_HOST` / `_DEVICE`.
pub const POINTER_MODE_HOST: c_int = 0;
/// `HIPBLAS_POINTER_MODE_DEVICE`.
pub const POINTER_MODE_DEVICE: c_int = 1;

type Status = c_int;

// ------------------------------------------------------------------------------------------------
// The entry point in libamdhip64
// ------------------------------------------------------------------------------------------------

#[cfg(target_os = "macos")]
const LIBAMDHIP64: &str = "libamdhip64.dylib";
/// AMD's Windows name (cargo builds `amdhip64.dll`; `scripts/dist.sh` installs it under this one).
#[cfg(windows)]
const LIBAMDHIP64: &str = "amdhip64_7.dll";
#[cfg(not(any(target_os = "macos", windows)))]
const LIBAMDHIP64: &str = "libamdhip64.so.7";

/// `hipGetDevice`, for the device a new handle lives on.
type GetDeviceFn = unsafe extern "C" fn(*mut c_int) -> c_int;

struct Entry {
    call: BlasCallFn,
    get_device: GetDeviceFn,
}

fn find_entry() -> Result<Entry, String> {
    #[cfg(unix)]
    {
        let this = libloading::os::unix::Library::this();
        // SAFETY: the symbols, when present, are hip-remote's with these types.
        if let (Ok(call), Ok(get_device)) = unsafe { (this.get::<BlasCallFn>(ENTRY_POINT), this.get::<GetDeviceFn>(b"hipGetDevice\0")) } {
            return Ok(Entry { call: *call, get_device: *get_device });
        }
    }
    // SAFETY: loading hip-remote's libamdhip64 runs only its (side-effect free) initialisers.
    let lib = unsafe { libloading::Library::new(LIBAMDHIP64) }
        .map_err(|e| format!("hip-remote's {LIBAMDHIP64} is not loaded and cannot be loaded: {e}"))?;
    // SAFETY: as above.
    let entry = unsafe {
        let call = lib.get::<BlasCallFn>(ENTRY_POINT).map_err(|e| format!("{LIBAMDHIP64} has no __hipRemoteBlasCall: {e}"))?;
        let get_device = lib.get::<GetDeviceFn>(b"hipGetDevice\0").map_err(|e| format!("{LIBAMDHIP64} has no hipGetDevice: {e}"))?;
        Entry { call: *call, get_device: *get_device }
    };
    // The library stays loaded for the life of the process: the pointers point into it.
    std::mem::forget(lib);
    Ok(entry)
}

fn entry() -> Result<&'static Entry, Status> {
    static FOUND: OnceLock<Entry> = OnceLock::new();
    if let Some(e) = FOUND.get() {
        return Ok(e);
    }
    match find_entry() {
        Ok(e) => Ok(FOUND.get_or_init(|| e)),
        Err(why) => {
            debug(&why);
            Err(status::NOT_INITIALIZED)
        }
    }
}

fn debug(msg: &str) {
    if std::env::var_os("HIP_REMOTE_DEBUG").is_some_and(|v| !v.is_empty() && v != "0") {
        eprintln!("hip-remote hipblas: {msg}");
    }
}

/// hipBLAS's status for a `hipError_t` from libamdhip64.
fn status_of(hip: c_int) -> Status {
    match hip {
        0 => status::SUCCESS,
        1 => status::INVALID_VALUE,   // hipErrorInvalidValue
        2 => status::ALLOC_FAILED,    // hipErrorOutOfMemory
        3 => status::NOT_INITIALIZED, // hipErrorNotInitialized
        101 => status::INVALID_VALUE, // hipErrorInvalidDevice
        801 => status::NOT_SUPPORTED, // hipErrorNotSupported
        _ => status::EXECUTION_FAILED,
    }
}

fn encode<'a, M: Message<'a>>(msg: &M) -> Vec<u8> {
    let mut buf = vec![0u8; M::MAX_CONTROL_LEN];
    let mut cx = EncodeCx::new(&mut buf);
    let n = msg.encode(&mut cx).and_then(|()| cx.w.finish()).expect("BLAS messages have fixed sizes");
    buf.truncate(n);
    buf
}

/// Sends one request; the reply's control part for calls that answer.
fn send<'a, M: Message<'a>>(op: Opcode, msg: &M, stream: hipStream_t) -> Result<Vec<u8>, Status> {
    let entry = entry()?;
    let request = encode(msg);
    let mut reply = [0u8; 64];
    let mut reply_len = 0usize;
    // SAFETY: `request` and `reply` are valid for their lengths; `reply_len` is writable.
    let hip = unsafe { (entry.call)(op.raw(), request.as_ptr(), request.len(), stream, reply.as_mut_ptr(), reply.len(), &mut reply_len) };
    match status_of(hip) {
        status::SUCCESS => Ok(reply[..reply_len.min(reply.len())].to_vec()),
        s => {
            debug(&format!("{} failed: hipError_t {hip}", op.name()));
            Err(s)
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Handles
// ------------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
struct HandleState {
    /// The worker's handle.
    worker: u64,
    stream: usize,
    pointer_mode: c_int,
    atomics_mode: c_int,
}

fn handles() -> MutexGuard<'static, HashMap<u64, HandleState>> {
    static HANDLES: OnceLock<Mutex<HashMap<u64, HandleState>>> = OnceLock::new();
    HANDLES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

fn handle_state(handle: hipblasHandle_t) -> Result<HandleState, Status> {
    handles().get(&(handle as u64)).copied().ok_or(status::NOT_INITIALIZED)
}

fn with_handle(handle: hipblasHandle_t, f: impl FnOnce(&mut HandleState) -> Status) -> Status {
    match handles().get_mut(&(handle as u64)) {
        Some(h) => f(h),
        None => status::NOT_INITIALIZED,
    }
}

/// Runs `f`, turning a panic into `HIPBLAS_STATUS_INTERNAL_ERROR` (no unwinding into C).
fn guard(f: impl FnOnce() -> Result<(), Status>) -> Status {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(())) => status::SUCCESS,
        Ok(Err(s)) => s,
        Err(_) => status::INTERNAL_ERROR,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipblasCreate(handle: *mut hipblasHandle_t) -> hipblasStatus_t {
    guard(|| {
        if handle.is_null() {
            return Err(status::INVALID_VALUE);
        }
        let entry = entry()?;
        let mut device = 0;
        // SAFETY: `device` is writable.
        let hip = unsafe { (entry.get_device)(&mut device) };
        if hip != 0 {
            return Err(status_of(hip));
        }
        let reply = send(Opcode::BlasCreate, &wire::BlasCreate { device: device as u32 }, std::ptr::null_mut())?;
        let worker = wire::BlasHandle::parse(&reply, &[]).map_err(|_| status::INTERNAL_ERROR)?.handle;
        static NEXT: AtomicU64 = AtomicU64::new(0x4842_0001);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        handles().insert(id, HandleState { worker, stream: 0, pointer_mode: POINTER_MODE_HOST, atomics_mode: 0 });
        // SAFETY: checked non-NULL; the caller's out parameter.
        unsafe { *handle = id as hipblasHandle_t };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipblasDestroy(handle: hipblasHandle_t) -> hipblasStatus_t {
    guard(|| {
        let state = handles().remove(&(handle as u64)).ok_or(status::NOT_INITIALIZED)?;
        send(Opcode::BlasDestroy, &wire::BlasHandle { handle: state.worker }, std::ptr::null_mut()).map(drop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipblasSetStream(handle: hipblasHandle_t, stream: hipStream_t) -> hipblasStatus_t {
    with_handle(handle, |h| {
        h.stream = stream as usize;
        status::SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipblasGetStream(handle: hipblasHandle_t, stream: *mut hipStream_t) -> hipblasStatus_t {
    if stream.is_null() {
        return status::INVALID_VALUE;
    }
    with_handle(handle, |h| {
        // SAFETY: checked non-NULL; the caller's out parameter.
        unsafe { *stream = h.stream as hipStream_t };
        status::SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipblasSetPointerMode(handle: hipblasHandle_t, mode: hipblasPointerMode_t) -> hipblasStatus_t {
    if mode != POINTER_MODE_HOST && mode != POINTER_MODE_DEVICE {
        return status::INVALID_ENUM;
    }
    with_handle(handle, |h| {
        h.pointer_mode = mode;
        status::SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipblasGetPointerMode(handle: hipblasHandle_t, mode: *mut hipblasPointerMode_t) -> hipblasStatus_t {
    if mode.is_null() {
        return status::INVALID_VALUE;
    }
    with_handle(handle, |h| {
        // SAFETY: checked non-NULL; the caller's out parameter.
        unsafe { *mode = h.pointer_mode };
        status::SUCCESS
    })
}

/// Atomics mode is kept and reported; the worker's BLAS chooses its own algorithms (cuBLAS
/// and rocBLAS default to allowing atomics, so results may differ in rounding between runs).
#[no_mangle]
pub unsafe extern "C" fn hipblasSetAtomicsMode(handle: hipblasHandle_t, mode: hipblasAtomicsMode_t) -> hipblasStatus_t {
    if mode != 0 && mode != 1 {
        return status::INVALID_ENUM;
    }
    with_handle(handle, |h| {
        h.atomics_mode = mode;
        status::SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipblasGetAtomicsMode(handle: hipblasHandle_t, mode: *mut hipblasAtomicsMode_t) -> hipblasStatus_t {
    if mode.is_null() {
        return status::INVALID_VALUE;
    }
    with_handle(handle, |h| {
        // SAFETY: checked non-NULL; the caller's out parameter.
        unsafe { *mode = h.atomics_mode };
        status::SUCCESS
    })
}

// ------------------------------------------------------------------------------------------------
// Routines
// ------------------------------------------------------------------------------------------------

/// A routine being described.
struct Op {
    h: HandleState,
    msg: wire::BlasOp,
}

/// `hipblasComputeType_t` implied by a scalar type.
fn default_compute(t: Ty) -> u32 {
    match t {
        Ty::R16F | Ty::R16BF => 0,
        Ty::R32F | Ty::C32F => 2,
        Ty::R64F | Ty::C64F => 7,
    }
}

fn op_of(t: hipblasOperation_t) -> Result<u32, Status> {
    match u32::try_from(t) {
        Ok(v @ blas_op::N..=blas_op::C) => Ok(v),
        _ => Err(status::INVALID_ENUM),
    }
}

fn dim(v: c_int) -> Result<i64, Status> {
    if v < 0 {
        Err(status::INVALID_VALUE)
    } else {
        Ok(i64::from(v))
    }
}

impl Op {
    fn new(handle: hipblasHandle_t, routine: Routine, ty: Ty) -> Result<Self, Status> {
        let h = handle_state(handle)?;
        let msg = wire::BlasOp {
            handle: h.worker,
            routine,
            ab_type: ty,
            c_type: ty,
            scalar_type: ty,
            compute: default_compute(ty),
            trans: [blas_op::N; 2],
            batch: 1,
            device_scalars: h.pointer_mode == POINTER_MODE_DEVICE,
            ..Default::default()
        };
        Ok(Self { h, msg })
    }

    /// A level-1 `n`.
    fn n(mut self, n: c_int) -> Self {
        // hipBLAS returns at once for n <= 0.
        self.msg.dims = [i64::from(n.max(0)), 0, 0];
        self
    }

    /// Reads a scalar argument (host mode: its value now; device mode: its address).
    ///
    /// # Safety
    /// In host pointer mode `p` must be NULL or point at a scalar of the op's scalar type.
    unsafe fn scalar(&mut self, p: *const c_void, beta: bool) -> Result<(), Status> {
        if p.is_null() {
            return Err(status::INVALID_VALUE);
        }
        if self.msg.device_scalars {
            *(if beta { &mut self.msg.beta_ptr } else { &mut self.msg.alpha_ptr }) = p as u64;
        } else {
            let size = self.msg.scalar_type.size() as usize;
            let dst = if beta { &mut self.msg.beta } else { &mut self.msg.alpha };
            // SAFETY: `p` points at `size` bytes (caller contract).
            dst[..size].copy_from_slice(unsafe { std::slice::from_raw_parts(p as *const u8, size) });
        }
        Ok(())
    }

    unsafe fn alpha(mut self, p: *const c_void) -> Result<Self, Status> {
        // SAFETY: forwarded caller contract.
        unsafe { self.scalar(p, false)? };
        Ok(self)
    }

    unsafe fn beta(mut self, p: *const c_void) -> Result<Self, Status> {
        // SAFETY: forwarded caller contract.
        unsafe { self.scalar(p, true)? };
        Ok(self)
    }

    fn a(mut self, p: *const c_void, ld: c_int, stride: i64) -> Self {
        (self.msg.a, self.msg.a_layout) = (p as u64, [i64::from(ld), stride]);
        self
    }

    fn b(mut self, p: *const c_void, ld: c_int, stride: i64) -> Self {
        (self.msg.b, self.msg.b_layout) = (p as u64, [i64::from(ld), stride]);
        self
    }

    fn c(mut self, p: *const c_void, ld: c_int, stride: i64) -> Self {
        (self.msg.c, self.msg.c_layout) = (p as u64, [i64::from(ld), stride]);
        self
    }

    fn launch(self) -> Result<(), Status> {
        send(Opcode::BlasLaunch, &self.msg, self.h.stream as hipStream_t).map(drop)
    }

    /// A reduction: into host memory (waits) or device memory (queued), by pointer mode.
    ///
    /// # Safety
    /// In host pointer mode `result` must point at the result's type.
    unsafe fn reduce(mut self, result: *mut c_void) -> Result<(), Status> {
        if result.is_null() {
            return Err(status::INVALID_VALUE);
        }
        let size = match self.msg.routine {
            Routine::Iamax | Routine::Iamin => 4,
            _ => self.msg.c_type.size() as usize,
        };
        if self.msg.device_scalars {
            self.msg.result_ptr = result as u64;
            return self.launch();
        }
        let reply = send(Opcode::BlasReduce, &self.msg, self.h.stream as hipStream_t)?;
        let value = wire::BlasResult::parse(&reply, &[]).map_err(|_| status::INTERNAL_ERROR)?.value;
        // SAFETY: `result` holds the result's `size` bytes (caller contract).
        unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), result as *mut u8, size) };
        Ok(())
    }
}

/// Checks gemm's sizes and leading dimensions as hipBLAS does.
fn check_gemm(ta: u32, tb: u32, m: i64, n: i64, k: i64, lda: c_int, ldb: c_int, ldc: c_int, batch: c_int) -> Result<(), Status> {
    let a_rows = if ta == blas_op::N { m } else { k };
    let b_rows = if tb == blas_op::N { k } else { n };
    if i64::from(lda) < a_rows.max(1) || i64::from(ldb) < b_rows.max(1) || i64::from(ldc) < m.max(1) || batch < 0 {
        return Err(status::INVALID_VALUE);
    }
    Ok(())
}

macro_rules! level1 {
    ($( $axpy:ident $scal:ident $copy:ident $swap:ident $asum:ident $nrm2:ident $amax:ident $amin:ident: $ty:expr, $real:expr; )*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $axpy(handle: hipblasHandle_t, n: c_int, alpha: *const c_void, x: *const c_void, incx: c_int, y: *mut c_void, incy: c_int) -> hipblasStatus_t {
            // SAFETY: hipBLAS's contract for the arguments.
            guard(|| unsafe { Op::new(handle, Routine::Axpy, $ty)?.n(n).alpha(alpha)? }.a(x, incx, 0).c(y, incy, 0).launch())
        }
        #[no_mangle]
        pub unsafe extern "C" fn $scal(handle: hipblasHandle_t, n: c_int, alpha: *const c_void, x: *mut c_void, incx: c_int) -> hipblasStatus_t {
            // SAFETY: hipBLAS's contract for the arguments.
            guard(|| unsafe { Op::new(handle, Routine::Scal, $ty)?.n(n).alpha(alpha)? }.c(x, incx, 0).launch())
        }
        #[no_mangle]
        pub unsafe extern "C" fn $copy(handle: hipblasHandle_t, n: c_int, x: *const c_void, incx: c_int, y: *mut c_void, incy: c_int) -> hipblasStatus_t {
            guard(|| Op::new(handle, Routine::Copy, $ty)?.n(n).a(x, incx, 0).c(y, incy, 0).launch())
        }
        #[no_mangle]
        pub unsafe extern "C" fn $swap(handle: hipblasHandle_t, n: c_int, x: *mut c_void, incx: c_int, y: *mut c_void, incy: c_int) -> hipblasStatus_t {
            guard(|| Op::new(handle, Routine::Swap, $ty)?.n(n).a(x, incx, 0).c(y, incy, 0).launch())
        }
        #[no_mangle]
        pub unsafe extern "C" fn $asum(handle: hipblasHandle_t, n: c_int, x: *const c_void, incx: c_int, result: *mut c_void) -> hipblasStatus_t {
            guard(|| {
                let mut op = Op::new(handle, Routine::Asum, $ty)?.n(n).a(x, incx, 0);
                op.msg.c_type = $real;
                // SAFETY: hipBLAS's contract for `result`.
                unsafe { op.reduce(result) }
            })
        }
        #[no_mangle]
        pub unsafe extern "C" fn $nrm2(handle: hipblasHandle_t, n: c_int, x: *const c_void, incx: c_int, result: *mut c_void) -> hipblasStatus_t {
            guard(|| {
                let mut op = Op::new(handle, Routine::Nrm2, $ty)?.n(n).a(x, incx, 0);
                op.msg.c_type = $real;
                // SAFETY: hipBLAS's contract for `result`.
                unsafe { op.reduce(result) }
            })
        }
        #[no_mangle]
        pub unsafe extern "C" fn $amax(handle: hipblasHandle_t, n: c_int, x: *const c_void, incx: c_int, result: *mut c_int) -> hipblasStatus_t {
            // SAFETY: hipBLAS's contract for `result`.
            guard(|| unsafe { Op::new(handle, Routine::Iamax, $ty)?.n(n).a(x, incx, 0).reduce(result.cast()) })
        }
        #[no_mangle]
        pub unsafe extern "C" fn $amin(handle: hipblasHandle_t, n: c_int, x: *const c_void, incx: c_int, result: *mut c_int) -> hipblasStatus_t {
            // SAFETY: hipBLAS's contract for `result`.
            guard(|| unsafe { Op::new(handle, Routine::Iamin, $ty)?.n(n).a(x, incx, 0).reduce(result.cast()) })
        }
    )*};
}

level1! {
    hipblasSaxpy hipblasSscal hipblasScopy hipblasSswap hipblasSasum hipblasSnrm2 hipblasIsamax hipblasIsamin: Ty::R32F, Ty::R32F;
    hipblasDaxpy hipblasDscal hipblasDcopy hipblasDswap hipblasDasum hipblasDnrm2 hipblasIdamax hipblasIdamin: Ty::R64F, Ty::R64F;
    hipblasCaxpy hipblasCscal hipblasCcopy hipblasCswap hipblasScasum hipblasScnrm2 hipblasIcamax hipblasIcamin: Ty::C32F, Ty::R32F;
    hipblasZaxpy hipblasZscal hipblasZcopy hipblasZswap hipblasDzasum hipblasDznrm2 hipblasIzamax hipblasIzamin: Ty::C64F, Ty::R64F;
}

macro_rules! dot {
    ($( $name:ident: $ty:expr, $routine:expr; )*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(handle: hipblasHandle_t, n: c_int, x: *const c_void, incx: c_int, y: *const c_void, incy: c_int, result: *mut c_void) -> hipblasStatus_t {
            // SAFETY: hipBLAS's contract for `result`.
            guard(|| unsafe { Op::new(handle, $routine, $ty)?.n(n).a(x, incx, 0).b(y, incy, 0).reduce(result) })
        }
    )*};
}

dot! {
    hipblasSdot: Ty::R32F, Routine::Dot;
    hipblasDdot: Ty::R64F, Routine::Dot;
    hipblasCdotu: Ty::C32F, Routine::Dot;
    hipblasCdotc: Ty::C32F, Routine::Dotc;
    hipblasZdotu: Ty::C64F, Routine::Dot;
    hipblasZdotc: Ty::C64F, Routine::Dotc;
}

macro_rules! real_scal {
    ($( $name:ident: $ty:expr, $real:ty; )*) => {$(
        /// Complex vector times a real scalar: the scalar is sent as a complex with zero
        /// imaginary part (host pointer mode only).
        #[no_mangle]
        pub unsafe extern "C" fn $name(handle: hipblasHandle_t, n: c_int, alpha: *const $real, x: *mut c_void, incx: c_int) -> hipblasStatus_t {
            guard(|| {
                let mut op = Op::new(handle, Routine::Scal, $ty)?.n(n).c(x, incx, 0);
                if op.msg.device_scalars {
                    return Err(status::NOT_SUPPORTED);
                }
                if alpha.is_null() {
                    return Err(status::INVALID_VALUE);
                }
                // SAFETY: `alpha` points at a real (hipBLAS's contract).
                let re = unsafe { *alpha };
                op.msg.alpha[..std::mem::size_of::<$real>()].copy_from_slice(&re.to_le_bytes());
                op.launch()
            })
        }
    )*};
}

real_scal! {
    hipblasCsscal: Ty::C32F, f32;
    hipblasZdscal: Ty::C64F, f64;
}

macro_rules! gemv {
    ($( $gemv:ident: $ty:expr; )*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $gemv(
            handle: hipblasHandle_t, trans: hipblasOperation_t, m: c_int, n: c_int, alpha: *const c_void, a: *const c_void, lda: c_int,
            x: *const c_void, incx: c_int, beta: *const c_void, y: *mut c_void, incy: c_int,
        ) -> hipblasStatus_t {
            guard(|| {
                let mut op = Op::new(handle, Routine::Gemv, $ty)?;
                op.msg.trans[0] = op_of(trans)?;
                op.msg.dims = [dim(m)?, dim(n)?, 0];
                if lda < m.max(1) || incx == 0 || incy == 0 {
                    return Err(status::INVALID_VALUE);
                }
                // SAFETY: hipBLAS's contract for the scalars.
                let op = unsafe { op.alpha(alpha)?.beta(beta)? };
                op.a(a, lda, 0).b(x, incx, 0).c(y, incy, 0).launch()
            })
        }
    )*};
}

gemv! {
    hipblasSgemv: Ty::R32F;
    hipblasDgemv: Ty::R64F;
    hipblasCgemv: Ty::C32F;
    hipblasZgemv: Ty::C64F;
}

macro_rules! ger {
    ($( $ger:ident: $ty:expr, $routine:expr; )*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $ger(
            handle: hipblasHandle_t, m: c_int, n: c_int, alpha: *const c_void, x: *const c_void, incx: c_int, y: *const c_void, incy: c_int,
            a: *mut c_void, lda: c_int,
        ) -> hipblasStatus_t {
            // SAFETY: hipBLAS's contract for the arguments.
            unsafe { ger(handle, $routine, $ty, m, n, alpha, x, incx, y, incy, a, lda) }
        }
    )*};
}

ger! {
    hipblasSger: Ty::R32F, Routine::Ger;
    hipblasDger: Ty::R64F, Routine::Ger;
    hipblasCgeru: Ty::C32F, Routine::Ger;
    hipblasCgerc: Ty::C32F, Routine::Gerc;
    hipblasZgeru: Ty::C64F, Routine::Ger;
    hipblasZgerc: Ty::C64F, Routine::Gerc;
}

unsafe fn ger(
    handle: hipblasHandle_t,
    routine: Routine,
    ty: Ty,
    m: c_int,
    n: c_int,
    alpha: *const c_void,
    x: *const c_void,
    incx: c_int,
    y: *const c_void,
    incy: c_int,
    a: *mut c_void,
    lda: c_int,
) -> hipblasStatus_t {
    guard(|| {
        let mut op = Op::new(handle, routine, ty)?;
        op.msg.dims = [dim(m)?, dim(n)?, 0];
        if lda < m.max(1) || incx == 0 || incy == 0 {
            return Err(status::INVALID_VALUE);
        }
        // SAFETY: hipBLAS's contract for `alpha`.
        let op = unsafe { op.alpha(alpha)? };
        op.a(x, incx, 0).b(y, incy, 0).c(a, lda, 0).launch()
    })
}

/// The shared body of every GEMM form.
unsafe fn gemm(
    handle: hipblasHandle_t,
    types: (Ty, Ty, Ty, u32),
    (ta, tb): (hipblasOperation_t, hipblasOperation_t),
    (m, n, k): (c_int, c_int, c_int),
    (alpha, beta): (*const c_void, *const c_void),
    (a, lda, sa): (*const c_void, c_int, i64),
    (b, ldb, sb): (*const c_void, c_int, i64),
    (c, ldc, sc): (*const c_void, c_int, i64),
    batch: c_int,
    pointer_arrays: bool,
) -> Result<(), Status> {
    let (ab, c_ty, scalar, compute) = types;
    let mut op = Op::new(handle, Routine::Gemm, ab)?;
    op.msg.trans = [op_of(ta)?, op_of(tb)?];
    op.msg.dims = [dim(m)?, dim(n)?, dim(k)?];
    check_gemm(op.msg.trans[0], op.msg.trans[1], op.msg.dims[0], op.msg.dims[1], op.msg.dims[2], lda, ldb, ldc, batch)?;
    if m == 0 || n == 0 || batch == 0 {
        return Ok(());
    }
    (op.msg.c_type, op.msg.scalar_type, op.msg.compute) = (c_ty, scalar, compute);
    op.msg.batch = i64::from(batch);
    op.msg.pointer_arrays = pointer_arrays;
    if sa < 0 || sb < 0 || sc < 0 {
        return Err(status::INVALID_VALUE);
    }
    // SAFETY: hipBLAS's contract for the scalars.
    let op = unsafe { op.alpha(alpha)?.beta(beta)? };
    op.a(a, lda, sa).b(b, ldb, sb).c(c, ldc, sc).launch()
}

macro_rules! gemm_forms {
    ($( $gemm:ident $strided:ident $batched:ident: $ty:expr; )*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $gemm(
            handle: hipblasHandle_t, ta: hipblasOperation_t, tb: hipblasOperation_t, m: c_int, n: c_int, k: c_int, alpha: *const c_void,
            a: *const c_void, lda: c_int, b: *const c_void, ldb: c_int, beta: *const c_void, c: *mut c_void, ldc: c_int,
        ) -> hipblasStatus_t {
            let t = ($ty, $ty, $ty, default_compute($ty));
            // SAFETY: hipBLAS's contract for the arguments.
            guard(|| unsafe { gemm(handle, t, (ta, tb), (m, n, k), (alpha, beta), (a, lda, 0), (b, ldb, 0), (c, ldc, 0), 1, false) })
        }
        #[no_mangle]
        pub unsafe extern "C" fn $strided(
            handle: hipblasHandle_t, ta: hipblasOperation_t, tb: hipblasOperation_t, m: c_int, n: c_int, k: c_int, alpha: *const c_void,
            a: *const c_void, lda: c_int, sa: hipblasStride, b: *const c_void, ldb: c_int, sb: hipblasStride, beta: *const c_void,
            c: *mut c_void, ldc: c_int, sc: hipblasStride, batch: c_int,
        ) -> hipblasStatus_t {
            let t = ($ty, $ty, $ty, default_compute($ty));
            // SAFETY: hipBLAS's contract for the arguments.
            guard(|| unsafe { gemm(handle, t, (ta, tb), (m, n, k), (alpha, beta), (a, lda, sa), (b, ldb, sb), (c, ldc, sc), batch, false) })
        }
        #[no_mangle]
        pub unsafe extern "C" fn $batched(
            handle: hipblasHandle_t, ta: hipblasOperation_t, tb: hipblasOperation_t, m: c_int, n: c_int, k: c_int, alpha: *const c_void,
            a: *const c_void, lda: c_int, b: *const c_void, ldb: c_int, beta: *const c_void, c: *const c_void, ldc: c_int, batch: c_int,
        ) -> hipblasStatus_t {
            let t = ($ty, $ty, $ty, default_compute($ty));
            // SAFETY: hipBLAS's contract for the arguments.
            guard(|| unsafe { gemm(handle, t, (ta, tb), (m, n, k), (alpha, beta), (a, lda, 0), (b, ldb, 0), (c, ldc, 0), batch, true) })
        }
    )*};
}

gemm_forms! {
    hipblasSgemm hipblasSgemmStridedBatched hipblasSgemmBatched: Ty::R32F;
    hipblasDgemm hipblasDgemmStridedBatched hipblasDgemmBatched: Ty::R64F;
    hipblasCgemm hipblasCgemmStridedBatched hipblasCgemmBatched: Ty::C32F;
    hipblasZgemm hipblasZgemmStridedBatched hipblasZgemmBatched: Ty::C64F;
}

/// `hipDataType` as the protocol's type.
fn data_type(t: hipDataType) -> Result<Ty, Status> {
    u32::try_from(t).ok().and_then(Ty::from_raw).ok_or(status::NOT_SUPPORTED)
}

/// The Ex forms' types: A/B, C and the scalars' type from the compute type.
fn ex_types(a: hipDataType, b: hipDataType, c: hipDataType, compute: hipblasComputeType_t) -> Result<(Ty, Ty, Ty, u32), Status> {
    let (a, b, c) = (data_type(a)?, data_type(b)?, data_type(c)?);
    if a != b {
        return Err(status::NOT_SUPPORTED);
    }
    let complex = c.is_complex();
    let scalar = match compute {
        0 | 1 if !complex => Ty::R16F,
        2..=6 => {
            if complex {
                Ty::C32F
            } else {
                Ty::R32F
            }
        }
        7 | 8 => {
            if complex {
                Ty::C64F
            } else {
                Ty::R64F
            }
        }
        _ => return Err(status::NOT_SUPPORTED),
    };
    Ok((a, c, scalar, compute as u32))
}

#[no_mangle]
pub unsafe extern "C" fn hipblasGemmEx(
    handle: hipblasHandle_t,
    ta: hipblasOperation_t,
    tb: hipblasOperation_t,
    m: c_int,
    n: c_int,
    k: c_int,
    alpha: *const c_void,
    a: *const c_void,
    a_type: hipDataType,
    lda: c_int,
    b: *const c_void,
    b_type: hipDataType,
    ldb: c_int,
    beta: *const c_void,
    c: *mut c_void,
    c_type: hipDataType,
    ldc: c_int,
    compute: hipblasComputeType_t,
    _algo: hipblasGemmAlgo_t,
) -> hipblasStatus_t {
    guard(|| {
        let t = ex_types(a_type, b_type, c_type, compute)?;
        // SAFETY: hipBLAS's contract for the arguments.
        unsafe { gemm(handle, t, (ta, tb), (m, n, k), (alpha, beta), (a, lda, 0), (b, ldb, 0), (c, ldc, 0), 1, false) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipblasGemmStridedBatchedEx(
    handle: hipblasHandle_t,
    ta: hipblasOperation_t,
    tb: hipblasOperation_t,
    m: c_int,
    n: c_int,
    k: c_int,
    alpha: *const c_void,
    a: *const c_void,
    a_type: hipDataType,
    lda: c_int,
    sa: hipblasStride,
    b: *const c_void,
    b_type: hipDataType,
    ldb: c_int,
    sb: hipblasStride,
    beta: *const c_void,
    c: *mut c_void,
    c_type: hipDataType,
    ldc: c_int,
    sc: hipblasStride,
    batch: c_int,
    compute: hipblasComputeType_t,
    _algo: hipblasGemmAlgo_t,
) -> hipblasStatus_t {
    guard(|| {
        let t = ex_types(a_type, b_type, c_type, compute)?;
        // SAFETY: hipBLAS's contract for the arguments.
        unsafe { gemm(handle, t, (ta, tb), (m, n, k), (alpha, beta), (a, lda, sa), (b, ldb, sb), (c, ldc, sc), batch, false) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipblasGemmBatchedEx(
    handle: hipblasHandle_t,
    ta: hipblasOperation_t,
    tb: hipblasOperation_t,
    m: c_int,
    n: c_int,
    k: c_int,
    alpha: *const c_void,
    a: *const c_void,
    a_type: hipDataType,
    lda: c_int,
    b: *const c_void,
    b_type: hipDataType,
    ldb: c_int,
    beta: *const c_void,
    c: *mut c_void,
    c_type: hipDataType,
    ldc: c_int,
    batch: c_int,
    compute: hipblasComputeType_t,
    _algo: hipblasGemmAlgo_t,
) -> hipblasStatus_t {
    guard(|| {
        let t = ex_types(a_type, b_type, c_type, compute)?;
        // SAFETY: hipBLAS's contract for the arguments.
        unsafe { gemm(handle, t, (ta, tb), (m, n, k), (alpha, beta), (a, lda, 0), (b, ldb, 0), (c, ldc, 0), batch, true) }
    })
}

// ------------------------------------------------------------------------------------------------
// Not supported
// ------------------------------------------------------------------------------------------------

/// Exports functions that answer `HIPBLAS_STATUS_NOT_SUPPORTED` whatever their arguments (a C
/// caller's arguments are the caller's to clean up, so the signature need not match).
macro_rules! not_supported {
    ($($name:ident)*) => {
        $(
            #[no_mangle]
            pub extern "C" fn $name() -> hipblasStatus_t {
                debug(concat!(stringify!($name), " is not supported (HIPBLAS_STATUS_NOT_SUPPORTED)"));
                status::NOT_SUPPORTED
            }
        )*
        /// The functions exported as `HIPBLAS_STATUS_NOT_SUPPORTED`.
        pub const NOT_SUPPORTED: &[&str] = &[$(stringify!($name)),*];
    };
}

not_supported! {
    hipblasSdgmm hipblasDdgmm hipblasCdgmm hipblasZdgmm
    hipblasSgeam hipblasDgeam hipblasCgeam hipblasZgeam
    hipblasSgetrfBatched hipblasDgetrfBatched hipblasCgetrfBatched hipblasZgetrfBatched
    hipblasSgetriBatched hipblasDgetriBatched hipblasCgetriBatched hipblasZgetriBatched
    hipblasSgetrsBatched hipblasDgetrsBatched hipblasCgetrsBatched hipblasZgetrsBatched
    hipblasSsbmv hipblasDsbmv
    hipblasSsyrk hipblasDsyrk hipblasCsyrk hipblasZsyrk
    hipblasStrsm hipblasDtrsm hipblasCtrsm hipblasZtrsm
    hipblasStrsmBatched hipblasDtrsmBatched hipblasCtrsmBatched hipblasZtrsmBatched
    hipblasStrsv hipblasDtrsv hipblasCtrsv hipblasZtrsv
    hipblasSsymm hipblasDsymm hipblasCsymm hipblasZsymm
    hipblasSetMathMode hipblasGetMathMode
}

#[cfg(test)]
mod tests {
    use super::*;

    const FUNCTIONS: &str = include_str!("../../symbols/hipblas_functions.txt");
    const REASONS: &str = include_str!("../../symbols/hipblas_not_supported_reasons.txt");

    fn listed(text: &str) -> Vec<&str> {
        text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).map(|l| l.split(':').next().unwrap().trim()).collect()
    }

    /// The not-supported list and its reasons name the same functions, all of them exported.
    #[test]
    fn lists_agree_with_the_exports() {
        let functions = listed(FUNCTIONS);
        let mut reasons = listed(REASONS);
        reasons.sort_unstable();
        let mut ours: Vec<&str> = NOT_SUPPORTED.to_vec();
        ours.sort_unstable();
        assert_eq!(reasons, ours, "hipblas_not_supported_reasons.txt vs the not_supported! list");
        for name in ours {
            assert!(functions.contains(&name), "{name} missing from hipblas_functions.txt");
        }
    }

    #[test]
    fn ex_types_pick_the_scalar_type_from_the_compute_type() {
        assert_eq!(ex_types(0, 0, 0, 2), Ok((Ty::R32F, Ty::R32F, Ty::R32F, 2)));
        assert_eq!(ex_types(2, 2, 2, 2), Ok((Ty::R16F, Ty::R16F, Ty::R32F, 2)));
        assert_eq!(ex_types(4, 4, 4, 2), Ok((Ty::C32F, Ty::C32F, Ty::C32F, 2)));
        assert_eq!(ex_types(2, 2, 2, 0), Ok((Ty::R16F, Ty::R16F, Ty::R16F, 0)));
        assert_eq!(ex_types(0, 0, 0, 9), Err(status::NOT_SUPPORTED));
        assert_eq!(ex_types(0, 1, 0, 2), Err(status::NOT_SUPPORTED));
    }

    #[test]
    fn unknown_handles_are_not_initialized() {
        let mut mode = 0;
        // SAFETY: a made-up handle and a valid out pointer.
        assert_eq!(unsafe { hipblasGetPointerMode(0x1234 as hipblasHandle_t, &mut mode) }, status::NOT_INITIALIZED);
        // SAFETY: as above.
        assert_eq!(unsafe { hipblasSetPointerMode(std::ptr::null_mut(), POINTER_MODE_DEVICE) }, status::NOT_INITIALIZED);
    }
}
