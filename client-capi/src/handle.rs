//! Handles crossing the C boundary: the one place where `hipStream_t`, `hipEvent_t`,
//! `hipModule_t` and `hipFunction_t` turn into ids (the worker's, or this library's tables')
//! and back, and where out-parameters are written (`try_out!`).
//!
//! A handle is an id dressed as a pointer: it is never dereferenced, so a stale or made-up one
//! is an unknown id (`hipErrorInvalidHandle` from whoever looks it up), never a crash.

use crate::abi::{hipEvent_t, hipFunction_t, hipModule_t, hipStream_t, HipError};
use crate::conn::CallError;

/// A C handle type that carries a 64-bit id.
pub trait Handle: Sized + Copy {
    /// The id the handle carries (lossless: pointers are at most 64 bits).
    fn id(self) -> u64;
    /// The handle for `id`; fails where a pointer cannot hold it (a 32-bit target).
    fn from_id(id: u64) -> Result<Self, CallError>;
}

macro_rules! handles {
    ($($t:ty),*) => {$(
        impl Handle for $t {
            fn id(self) -> u64 {
                self as usize as u64
            }
            fn from_id(id: u64) -> Result<Self, CallError> {
                // An integer-to-pointer cast: the value is an id, never dereferenced.
                usize::try_from(id).map(|addr| addr as Self).map_err(|_| {
                    CallError::new(HipError::UNKNOWN, format!("handle id {id:#x} does not fit a pointer"))
                })
            }
        }
    )*};
}
handles!(hipStream_t, hipEvent_t, hipModule_t, hipFunction_t);

/// The worker's id for `stream`: the null stream, `hipStreamLegacy` and `hipStreamPerThread`
/// are all the device's default stream (0).
pub fn stream_id(stream: hipStream_t) -> u64 {
    match stream.id() {
        1 | 2 => 0, // hipStreamLegacy, hipStreamPerThread
        id => id,
    }
}

/// The stream a `_spt` (per-thread default stream) entry point means: its null stream is
/// `hipStreamPerThread`. Every `_spt` variant goes through this and then [`stream_id`].
pub fn spt(stream: hipStream_t) -> hipStream_t {
    if stream.is_null() {
        crate::abi::hipStreamPerThread
    } else {
        stream
    }
}

/// Writes `$value` through the out-parameter `$out`, or fails the call with
/// `hipErrorInvalidValue` when `$out` is NULL: `try_out!(count, n)`.
macro_rules! try_out {
    ($out:expr, $value:expr) => {{
        let out = $out;
        if out.is_null() {
            return Err($crate::conn::CallError::new($crate::abi::HipError::INVALID_VALUE, concat!(stringify!($out), " is NULL")));
        }
        let value = $value;
        // SAFETY: checked non-null above; HIP's contract for out-parameters is that a non-null
        // one points at writable memory of its type.
        unsafe { out.write(value) };
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_default_streams_map_to_zero() {
        let e = hipEvent_t::from_id(0x1234).expect("fits");
        assert_eq!(e.id(), 0x1234);
        assert_eq!(stream_id(hipStream_t::from_id(1).expect("fits")), 0);
        assert_eq!(stream_id(hipStream_t::from_id(2).expect("fits")), 0);
        assert_eq!(stream_id(hipStream_t::from_id(77).expect("fits")), 77);
    }

    fn write_to(out: *mut u32) -> Result<(), CallError> {
        try_out!(out, 7);
        Ok(())
    }

    #[test]
    fn try_out_writes_or_refuses_null() {
        let mut v = 0u32;
        write_to(&mut v).expect("non-null");
        assert_eq!(v, 7);
        assert_eq!(write_to(std::ptr::null_mut()).unwrap_err().code, HipError::INVALID_VALUE);
    }
}
