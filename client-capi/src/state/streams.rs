//! What this library keeps per created stream: the attributes HIP lets a program set and the
//! worker does not hold (its CU mask, its synchronization policy). They live in the session
//! of the stream's worker (`client_core::streams`).

use crate::remote::with_conn;
use client_core::streams::StreamTable;
use client_core::CallError;

pub use client_core::streams::StreamExtras;

/// Runs `f` on the stream attributes of the worker this call goes to (a stream handle the
/// call named routes it to the stream's worker).
pub fn with_extras<R>(f: impl FnOnce(&mut StreamTable) -> R) -> Result<R, CallError> {
    with_conn(|c| Ok(f(c.streams())))
}

/// Forgets what was kept about a destroyed stream.
pub fn forget_stream(id: u64) -> Result<(), CallError> {
    with_extras(|t| t.forget(id))
}
