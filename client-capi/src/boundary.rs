//! The C boundary: every exported function runs its body through [`hip_boundary!`], which
//! catches panics (returning `hipErrorUnknown`; `panic = "unwind"` is set in every profile so
//! there is something to catch) and records non-success results as the thread's last error,
//! as HIP's `hipGetLastError` requires.
//!
//! Convention for exports: every one runs inside [`hip_boundary!`], and one that takes a raw
//! pointer is `unsafe extern "C"`; `tests/export_convention.rs` checks both and lists the few
//! exports that cannot use the boundary (they return no `hipError_t`, or must not record one).

use crate::abi::HipError;
use std::cell::Cell;

thread_local! {
    static LAST_ERROR: Cell<HipError> = const { Cell::new(HipError::SUCCESS) };
    /// The result of the thread's last call through the boundary, success included
    /// (ROCm's `last_command_error_`, read by `hipExtGetLastError`).
    static LAST_COMMAND: Cell<HipError> = const { Cell::new(HipError::SUCCESS) };
}

/// `hipExtGetLastError`: the result of the thread's last HIP call, reset to success.
pub fn take_last_command_result() -> HipError {
    LAST_COMMAND.with(|e| e.replace(HipError::SUCCESS))
}

/// Records `err` as the result of the thread's last call, and as its last error unless it is
/// success; returns it.
/// `hipErrorNotReady` is a status, not a failure: like ROCm, it is not recorded.
pub fn record(err: HipError) -> HipError {
    LAST_COMMAND.with(|e| e.set(err));
    if err != HipError::SUCCESS && err != HipError::NOT_READY {
        LAST_ERROR.with(|e| e.set(err));
    }
    err
}

/// `hipGetLastError`: the last error, reset to success.
pub fn take_last_error() -> HipError {
    LAST_ERROR.with(|e| e.replace(HipError::SUCCESS))
}

/// `hipPeekAtLastError`.
pub fn peek_last_error() -> HipError {
    LAST_ERROR.with(|e| e.get())
}

/// Converts a call's outcome to the C result, explaining failures on stderr in debug mode.
pub fn finish(name: &str, result: Result<(), client_core::CallError>) -> HipError {
    let code = finish_inner(name, result);
    LAST_COMMAND.with(|e| e.set(code));
    code
}

fn finish_inner(name: &str, result: Result<(), client_core::CallError>) -> HipError {
    match result {
        Ok(()) => HipError::SUCCESS,
        Err(e) => {
            if crate::remote::config().debug {
                eprintln!("hip-remote: {name}: {} ({})", e.message, e.code.name().to_string_lossy());
            }
            record(e.code)
        }
    }
}

/// Wraps an exported function body: `hip_boundary!("hipFoo", { ...; Ok(()) })`. The body is a
/// `Result<(), CallError>` expression; panics become `hipErrorUnknown`.
macro_rules! hip_boundary {
    ($name:literal, $body:block) => {{
        // Which worker this call's requests go to, when it names a handle (several workers).
        let _route = $crate::remote::CallRoute::begin();
        $crate::conn::profile::entering($name);
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> Result<(), ::client_core::CallError> { $body })) {
            Ok(result) => $crate::boundary::finish($name, result),
            Err(_) => {
                eprintln!(concat!("hip-remote: internal panic in ", $name, "; returning hipErrorUnknown"));
                $crate::boundary::record($crate::abi::HipError::UNKNOWN)
            }
        }
    }};
}

/// Fails with `hipErrorInvalidValue` when a pointer argument is null.
macro_rules! non_null {
    ($ptr:expr) => {
        if $ptr.is_null() {
            return Err(::client_core::CallError::new($crate::abi::HipError::INVALID_VALUE, concat!(stringify!($ptr), " is NULL")));
        }
    };
}
