//! Stream family. A `hipStream_t` is the worker's session-scoped handle; the null stream,
//! `hipStreamLegacy` and `hipStreamPerThread` all map to the worker's null stream.

use crate::abi::*;
use crate::api::device::check_device;
use crate::boundary::current_device;
use crate::conn::CallError;
use crate::remote::{call_sync, with_conn};
use proto_core::{calls, Caller, Calls};
use proto_core::wire;
use std::ffi::{c_int, c_uint};

/// `hipStreamNonBlocking`.
const STREAM_FLAGS: c_uint = 0x1;

/// The wire id of a stream handle.
pub fn stream_id(stream: hipStream_t) -> u64 {
    match stream as u64 {
        1 | 2 => 0, // hipStreamLegacy, hipStreamPerThread
        id => id,
    }
}

fn create(stream: *mut hipStream_t, flags: c_uint, priority: c_int) -> Result<(), CallError> {
    non_null!(stream);
    if flags & !STREAM_FLAGS != 0 {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown stream flags {flags:#x}")));
    }
    let device = check_device(current_device() as c_int)?;
    let id = with_conn(|c| {
        c.stream_create(wire::StreamCreate { device, flags, priority }).map(|s| s.stream)
    })?;
    // SAFETY: checked non-null.
    unsafe { *stream = id as hipStream_t };
    Ok(())
}

#[no_mangle]
pub extern "C" fn hipStreamCreate(stream: *mut hipStream_t) -> hipError_t {
    hip_boundary!("hipStreamCreate", { create(stream, 0, 0) })
}

#[no_mangle]
pub extern "C" fn hipStreamCreateWithFlags(stream: *mut hipStream_t, flags: c_uint) -> hipError_t {
    hip_boundary!("hipStreamCreateWithFlags", { create(stream, flags, 0) })
}

#[no_mangle]
pub extern "C" fn hipStreamCreateWithPriority(stream: *mut hipStream_t, flags: c_uint, priority: c_int) -> hipError_t {
    hip_boundary!("hipStreamCreateWithPriority", { create(stream, flags, priority) })
}

#[no_mangle]
pub extern "C" fn hipStreamDestroy(stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipStreamDestroy", {
        if stream_id(stream) == 0 {
            return Err(CallError::new(HipError::INVALID_HANDLE, "the null stream cannot be destroyed"));
        }
        call_sync(|c| c.stream_destroy(wire::StreamRef { stream: stream_id(stream) }))
    })
}

#[no_mangle]
pub extern "C" fn hipStreamSynchronize(stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipStreamSynchronize", { call_sync(|c| c.stream_synchronize(wire::StreamRef { stream: stream_id(stream) })) })
}

#[no_mangle]
pub extern "C" fn hipStreamQuery(stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipStreamQuery", {
        let complete = with_conn(|c| {
            c.stream_query(wire::StreamRef { stream: stream_id(stream) }).map(|q| q.complete)
        })?;
        if complete {
            Ok(())
        } else {
            Err(CallError::new(HipError::NOT_READY, "stream has pending work"))
        }
    })
}

#[no_mangle]
pub extern "C" fn hipStreamWaitEvent(stream: hipStream_t, event: hipEvent_t, flags: c_uint) -> hipError_t {
    hip_boundary!("hipStreamWaitEvent", {
        non_null!(event);
        let req = wire::StreamWaitEvent { stream: stream_id(stream), event: event as u64, flags };
        with_conn(|c| c.post::<calls::StreamWaitEvent>(req))
    })
}
