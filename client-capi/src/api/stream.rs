//! Stream family. A `hipStream_t` is the worker's session-scoped handle; the null stream and
//! `hipStreamLegacy` map to the worker's null stream, `hipStreamPerThread` to the calling
//! thread's own stream ([`crate::handle::stream_id`]).

use crate::abi::*;
use crate::handle::{stream_id, Handle};
use crate::remote::with_conn;
use crate::state::devices::{check_device, current_device};
use crate::state::sync::call_sync;
use client_core::client_handles::Kind;
use client_core::CallError;
use proto_core::wire;
use proto_core::{calls, Caller, Calls};
use std::ffi::{c_int, c_uint};

/// `hipStreamNonBlocking`.
const STREAM_FLAGS: c_uint = 0x1;

fn create(stream: *mut hipStream_t, flags: c_uint, priority: c_int) -> Result<(), CallError> {
    non_null!(stream);
    if flags & !STREAM_FLAGS != 0 {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown stream flags {flags:#x}")));
    }
    let device = check_device(current_device() as c_int)?;
    let id = with_conn(|c| {
        // Without a round trip where the worker allows: the handle is ours, the creation
        // posted (its failure deferred, the handle then unknown to the worker).
        if let Some(stream) = c.without_round_trip().then(|| c.client_handles().create(Kind::Stream, device)).flatten() {
            return c.post::<calls::StreamCreateAt>(wire::StreamCreateAt { stream, device, flags, priority }).map(|()| stream);
        }
        c.stream_create(wire::StreamCreate { device, flags, priority }).map(|s| s.stream)
    })?;
    try_out!(stream, hipStream_t::from_id(id)?);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamCreate(stream: *mut hipStream_t) -> hipError_t {
    hip_boundary!("hipStreamCreate", { create(stream, 0, 0) })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamCreateWithFlags(stream: *mut hipStream_t, flags: c_uint) -> hipError_t {
    hip_boundary!("hipStreamCreateWithFlags", { create(stream, flags, 0) })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamCreateWithPriority(stream: *mut hipStream_t, flags: c_uint, priority: c_int) -> hipError_t {
    hip_boundary!("hipStreamCreateWithPriority", { create(stream, flags, priority) })
}

#[no_mangle]
pub extern "C" fn hipStreamDestroy(stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipStreamDestroy", {
        // ROCm: NULL is hipErrorInvalidHandle, the implicit streams
        // hipErrorInvalidResourceHandle (the same code).
        if matches!(stream.id(), 0..=2) {
            return Err(CallError::new(HipError::INVALID_HANDLE, "the null and implicit streams cannot be destroyed"));
        }
        let req = wire::StreamRef { stream: stream_id(stream) };
        crate::state::sync::stream_waits_settled(req.stream);
        // A live stream created here cannot be refused: posted. Any other handle waits for
        // the worker's verdict (HIP reports a bad handle at once).
        if with_conn(|c| Ok(c.client_handles().destroy(Kind::Stream, req.stream)))? {
            with_conn(|c| c.post::<calls::StreamDestroy>(req))?;
        } else {
            let id = req.stream;
            // Destroyed already: ROCm's answer, not the worker's unknown-handle one.
            if with_conn(|c| Ok(c.client_handles().is_destroyed_stream(id)))? {
                return Err(CallError::new(HipError::CONTEXT_IS_DESTROYED, format!("stream {id:#x} was destroyed")));
            }
            call_sync(|c| c.stream_destroy(req))?;
            with_conn(|c| {
                c.client_handles().note_destroyed_stream(id);
                Ok(())
            })?;
        }
        crate::state::streams::forget_stream(stream_id(stream))?;
        Ok(())
    })
}

/// ROCm's `hip::isValid` answers every handle that names no live stream (never created, or
/// destroyed) with `hipErrorContextIsDestroyed` in `hipStreamSynchronize` and
/// `hipStreamQuery`; the worker's answer for a handle it does not know is
/// `hipErrorInvalidHandle`.
fn not_a_stream_is_destroyed(e: CallError) -> CallError {
    if e.code == HipError::INVALID_HANDLE {
        CallError::new(HipError::CONTEXT_IS_DESTROYED, e.message)
    } else {
        e
    }
}

#[no_mangle]
pub extern "C" fn hipStreamSynchronize(stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipStreamSynchronize", {
        let stream = stream_id(stream);
        // ROCm (`hip::isValid`): a destroyed stream is hipErrorContextIsDestroyed.
        crate::api::event::check_stream_not_destroyed(stream, HipError::CONTEXT_IS_DESTROYED)?;
        crate::state::sync::synchronize_stream(stream, not_a_stream_is_destroyed)
    })
}

#[no_mangle]
pub extern "C" fn hipStreamQuery(stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipStreamQuery", {
        let stream = stream_id(stream);
        crate::api::event::check_stream_not_destroyed(stream, HipError::CONTEXT_IS_DESTROYED)?;
        let complete = with_conn(|c| c.stream_query(wire::StreamRef { stream }).map(|q| q.complete)).map_err(not_a_stream_is_destroyed)?;
        if complete {
            crate::state::sync::stream_waits_settled(stream);
            Ok(())
        } else {
            Err(CallError::new(HipError::NOT_READY, "stream has pending work"))
        }
    })
}

#[no_mangle]
pub extern "C" fn hipStreamWaitEvent(stream: hipStream_t, event: hipEvent_t, flags: c_uint) -> hipError_t {
    hip_boundary!("hipStreamWaitEvent", {
        // hipEventWaitDefault or hipEventWaitExternal (which differs only while capturing a
        // graph); checked here, as ROCm does, not deferred to the next synchronising call.
        if flags > 1 {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("hipStreamWaitEvent flags {flags:#x}")));
        }
        if event.is_null() {
            return Err(CallError::new(HipError::INVALID_HANDLE, "event is NULL"));
        }
        let req = wire::StreamWaitEvent { stream: stream_id(stream), event: event.id(), flags: 0 };
        // ROCm: a stream it cannot find is an invalid handle here.
        crate::api::event::check_stream_not_destroyed(req.stream, HipError::INVALID_HANDLE)?;
        if crate::remote::worker_count() > 1 {
            let stream_device = crate::remote::device_of_handle(req.stream).unwrap_or_else(current_device);
            if let Some(event_device) = crate::remote::device_of_handle(req.event) {
                if !crate::remote::same_worker(stream_device, event_device)? {
                    // Another worker's event: this thread waits until it has completed (a
                    // round trip to the event's worker), so the stream's later work is queued
                    // after it. Work queued on the stream earlier is not held back, as with a
                    // wait on a device.
                    let event = wire::EventRef { event: req.event };
                    return crate::remote::on_device(event_device, || call_sync(|c| c.event_synchronize(event)));
                }
            }
            return crate::remote::on_device(stream_device, || with_conn(|c| c.post::<calls::StreamWaitEvent>(req)));
        }
        with_conn(|c| c.post::<calls::StreamWaitEvent>(req))
    })
}

/// `hipStreamLegacy` and `hipStreamPerThread`: streams of the current device created with
/// no flags and the default priority.
fn is_implicit_stream(stream: hipStream_t) -> bool {
    matches!(stream.id(), 1 | 2)
}

/// Flags, priority and device of a created stream. A destroyed or unknown handle is
/// `hipErrorContextIsDestroyed`, ROCm's answer for a stream it cannot find.
fn stream_info(stream: hipStream_t) -> Result<wire::StreamInfo, CallError> {
    let stream = stream_id(stream);
    with_conn(|c| c.stream_get_info(wire::StreamRef { stream })).map_err(|e| {
        if e.code == HipError::INVALID_HANDLE {
            CallError::new(HipError::CONTEXT_IS_DESTROYED, e.message)
        } else {
            e
        }
    })
}

/// ROCm refuses the null stream here (hip-tests `Unit_hipStreamGetFlags_Negative`); the
/// implicit streams have no flags.
///
/// # Safety
/// `flags` is NULL or points to a writable `unsigned int`.
unsafe fn get_flags(stream: hipStream_t, flags: *mut c_uint) -> Result<(), CallError> {
    non_null!(flags);
    if stream.is_null() {
        return Err(CallError::new(HipError::INVALID_VALUE, "the null stream has no flags"));
    }
    let f = if is_implicit_stream(stream) { 0 } else { stream_info(stream)?.flags };
    try_out!(flags, f);
    Ok(())
}

/// The null and implicit streams have the default priority, 0.
///
/// # Safety
/// `priority` is NULL or points to a writable `int`.
unsafe fn get_priority(stream: hipStream_t, priority: *mut c_int) -> Result<(), CallError> {
    non_null!(priority);
    let p = if stream_id(stream) == 0 { 0 } else { stream_info(stream)?.priority };
    try_out!(priority, p);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamGetFlags(stream: hipStream_t, flags: *mut c_uint) -> hipError_t {
    hip_boundary!("hipStreamGetFlags", {
        // SAFETY: the caller's `flags` is NULL or writable (the HIP contract).
        unsafe { get_flags(stream, flags) }
    })
}

/// The per-thread-default-stream form: a null stream means `hipStreamPerThread`.
#[no_mangle]
pub unsafe extern "C" fn hipStreamGetFlags_spt(stream: hipStream_t, flags: *mut c_uint) -> hipError_t {
    hip_boundary!("hipStreamGetFlags_spt", {
        let stream = if stream.is_null() { hipStreamPerThread } else { stream };
        // SAFETY: as in hipStreamGetFlags.
        unsafe { get_flags(stream, flags) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamGetPriority(stream: hipStream_t, priority: *mut c_int) -> hipError_t {
    hip_boundary!("hipStreamGetPriority", {
        // SAFETY: the caller's `priority` is NULL or writable (the HIP contract).
        unsafe { get_priority(stream, priority) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamGetPriority_spt(stream: hipStream_t, priority: *mut c_int) -> hipError_t {
    hip_boundary!("hipStreamGetPriority_spt", {
        // SAFETY: as in hipStreamGetPriority.
        unsafe { get_priority(crate::handle::spt(stream), priority) }
    })
}

/// AMD's `hipGetStreamDeviceId`: the device of `stream` (the current device for the null
/// stream); -1, ROCm's answer, for a stream it does not know. Records no error.
#[no_mangle]
pub extern "C" fn hipGetStreamDeviceId(stream: hipStream_t) -> c_int {
    // No hip_boundary (it would record the result as the last error): panics are caught here.
    std::panic::catch_unwind(|| {
        if stream_id(stream) == 0 {
            return current_device() as c_int;
        }
        stream_info(stream).map_or(-1, |info| info.device as c_int)
    })
    .unwrap_or(-1)
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamGetDevice(stream: hipStream_t, device: *mut hipDevice_t) -> hipError_t {
    hip_boundary!("hipStreamGetDevice", {
        non_null!(device);
        let d = if stream_id(stream) == 0 { current_device() } else { stream_info(stream)?.device };
        try_out!(device, d as hipDevice_t);
        Ok(())
    })
}
