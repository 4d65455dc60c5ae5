//! The private in-process ABI between hip-remote's `libhipblas` and `libamdhip64` (not part of
//! the wire protocol; see [`crate::rtc_entry`] for why it lives here): libhipblas encodes a
//! BLAS-family request ([`crate::wire::BlasCreate`], [`crate::wire::BlasHandle`],
//! [`crate::wire::BlasOp`]) and sends it through `libamdhip64`'s exported [`ENTRY_POINT`], so
//! a process keeps one connection and session, and BLAS work is ordered with the HIP work of
//! the same streams.

use core::ffi::{c_int, c_void};

/// The exported symbol's name, NUL-terminated for `dlsym`.
pub const ENTRY_POINT: &[u8] = b"__hipRemoteBlasCall\0";

/// `__hipRemoteBlasCall(opcode, request, request_len, stream, reply, reply_cap, reply_len)
/// -> hipError_t`: sends the BLAS-family request `opcode` (its encoded control part). For
/// `BlasOp` requests libamdhip64 replaces the message's `stream` with the worker's id of the
/// `hipStream_t` `stream` (null: the null stream; `hipStreamPerThread` resolved for the calling
/// thread). `BlasLaunch` is posted (a failure is deferred, as a kernel launch's); the others
/// wait, and their reply's control part is copied to `reply` (at most `reply_cap` bytes, its
/// length in `*reply_len`).
pub type BlasCallFn = unsafe extern "C" fn(
    opcode: u16,
    request: *const u8,
    request_len: usize,
    stream: *mut c_void,
    reply: *mut u8,
    reply_cap: usize,
    reply_len: *mut usize,
) -> c_int;
