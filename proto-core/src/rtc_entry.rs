//! The private in-process ABI between hip-remote's `libhiprtc` and `libamdhip64` (not part of
//! the wire protocol; it lives here because every crate that needs it already depends on this
//! one): libhiprtc compiles through `libamdhip64`'s exported [`ENTRY_POINT`] so one process
//! keeps one connection and session. `client-capi` defines the function and checks it against
//! [`RtcCompileFn`]; `client-hiprtc` and the `hip-remote` CLI look it up with `dlsym`.

use core::ffi::{c_char, c_int, c_void};

/// The exported symbol's name, NUL-terminated for `dlsym`.
pub const ENTRY_POINT: &[u8] = b"__hipRemoteRtcCompile\0";

/// Receives a compilation's outcome, exactly once per call: `(ctx, success, log, log_len,
/// lowered_names, lowered_names_len, code, code_len)`. `success` is 1 (code delivered), 0 (the
/// compiler failed; its log is `log`) or -1 (no compilation happened; `log` says why). The
/// pointers are valid only during the callback.
pub type RtcResultFn = unsafe extern "C" fn(
    ctx: *mut c_void,
    success: c_int,
    log: *const c_char,
    log_len: usize,
    lowered_names: *const c_char,
    lowered_names_len: usize,
    code: *const c_void,
    code_len: usize,
);

/// `__hipRemoteRtcCompile(name, source, header_names, header_sources, options,
/// name_expressions, on_result, ctx) -> hipError_t`: every string and packed list
/// (`"a\0b\0"`) as `(pointer, byte length)`, UTF-8 without NUL.
pub type RtcCompileFn = unsafe extern "C" fn(
    name: *const c_char,
    name_len: usize,
    source: *const c_char,
    source_len: usize,
    header_names: *const c_char,
    header_names_len: usize,
    header_sources: *const c_char,
    header_sources_len: usize,
    options: *const c_char,
    options_len: usize,
    name_expressions: *const c_char,
    name_expressions_len: usize,
    on_result: Option<RtcResultFn>,
    ctx: *mut c_void,
) -> c_int;
