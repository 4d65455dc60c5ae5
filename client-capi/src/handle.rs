//! Handles crossing the C boundary: the one place where `hipStream_t` and friends turn into
//! the worker's ids and back.

use crate::abi::hipStream_t;

/// The worker's id for `stream`: the null stream, `hipStreamLegacy` and `hipStreamPerThread`
/// are all the device's default stream (0).
pub fn stream_id(stream: hipStream_t) -> u64 {
    match stream as u64 {
        1 | 2 => 0, // hipStreamLegacy, hipStreamPerThread
        id => id,
    }
}
