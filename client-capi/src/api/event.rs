//! Event family. A `hipEvent_t` is the worker's session-scoped handle.

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

fn create(event: *mut hipEvent_t, flags: c_uint) -> Result<(), CallError> {
    non_null!(event);
    let device = check_device(current_device() as c_int)?;
    let id = with_conn(|c| {
        // Without a round trip where the worker allows (as for streams).
        // Flags that cannot fail (interprocess events and release scopes are checked, and
        // may fail, on the worker: they wait).
        let plain = flags & !(hipEventBlockingSync | hipEventDisableTiming) == 0;
        if let Some(event) = (plain && c.without_round_trip()).then(|| c.client_handles().create(Kind::Event, device)).flatten() {
            return c.post::<calls::EventCreateAt>(wire::EventCreateAt { event, device, flags }).map(|()| event);
        }
        c.event_create(wire::EventCreate { device, flags }).map(|e| e.event)
    })?;
    try_out!(event, hipEvent_t::from_id(id)?);
    Ok(())
}

/// ROCm answers a NULL event with `hipErrorInvalidHandle` (record, synchronize, query,
/// destroy, elapsed time), not `hipErrorInvalidValue`.
fn non_null_event(event: hipEvent_t) -> Result<(), CallError> {
    if event.is_null() {
        return Err(CallError::new(HipError::INVALID_HANDLE, "event is NULL"));
    }
    Ok(())
}

/// Refuses, at the call, a stream this library knows was destroyed: the posted request would
/// only fail at the next synchronising call. `code` is ROCm's answer for the calling API.
pub(crate) fn check_stream_not_destroyed(stream: u64, code: HipError) -> Result<(), CallError> {
    if with_conn(|c| Ok(c.client_handles().is_destroyed_stream(stream)))? {
        return Err(CallError::new(code, format!("stream {stream:#x} was destroyed")));
    }
    Ok(())
}

fn query(event: hipEvent_t, what: &str) -> Result<(), CallError> {
    let event = event.id();
    let complete = with_conn(|c| c.event_query(wire::EventRef { event }))?.complete;
    if complete {
        Ok(())
    } else {
        Err(CallError::new(HipError::NOT_READY, format!("{what} not reached yet")))
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipEventCreate(event: *mut hipEvent_t) -> hipError_t {
    hip_boundary!("hipEventCreate", { create(event, 0) })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventCreateWithFlags(event: *mut hipEvent_t, flags: c_uint) -> hipError_t {
    hip_boundary!("hipEventCreateWithFlags", { create(event, flags) })
}

/// Refuses recording `event` on a stream of another device, as ROCm does
/// (`hipEventRecord_common`: `hipErrorInvalidHandle`); a posted record would fail only at a
/// later, unrelated call. The null stream is the current device's. Handles whose device this
/// library does not know (chosen by the worker) are left to the worker.
fn check_event_stream_device(event: u64, stream: u64) -> Result<(), CallError> {
    use proto_core::wire::{PER_THREAD_STREAM_TAG, PER_THREAD_STREAM_TAG_MASK};
    let Some(event_device) = with_conn(|c| Ok(c.client_handles().device_of(Kind::Event, event)))? else { return Ok(()) };
    let stream_device = if stream == 0 {
        Some(current_device())
    } else if stream & PER_THREAD_STREAM_TAG_MASK == PER_THREAD_STREAM_TAG {
        Some((stream & 0xff) as u32)
    } else {
        with_conn(|c| Ok(c.client_handles().device_of(Kind::Stream, stream)))?
    };
    match stream_device {
        Some(stream_device) if stream_device != event_device => Err(CallError::new(
            HipError::INVALID_HANDLE,
            format!(
                "event {event:#x} belongs to device {event_device}, the stream to device {stream_device}: record it on a stream of its own device"
            ),
        )),
        _ => Ok(()),
    }
}

#[no_mangle]
pub extern "C" fn hipEventRecord(event: hipEvent_t, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipEventRecord", {
        non_null_event(event)?;
        let req = wire::EventRecord { event: event.id(), stream: stream_id(stream) };
        check_stream_not_destroyed(req.stream, HipError::CONTEXT_IS_DESTROYED)?;
        check_event_stream_device(req.event, req.stream)?;
        with_conn(|c| c.post::<calls::EventRecord>(req))
    })
}

#[no_mangle]
pub extern "C" fn hipEventSynchronize(event: hipEvent_t) -> hipError_t {
    hip_boundary!("hipEventSynchronize", {
        non_null_event(event)?;
        // The id is taken before the call: taking it notes the handle, which routes the call
        // to the event's worker (several workers).
        let event = event.id();
        crate::state::sync::synchronize_event(event)
    })
}

#[no_mangle]
pub extern "C" fn hipEventQuery(event: hipEvent_t) -> hipError_t {
    hip_boundary!("hipEventQuery", {
        non_null_event(event)?;
        query(event, "event")
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventElapsedTime(ms: *mut f32, start: hipEvent_t, stop: hipEvent_t) -> hipError_t {
    hip_boundary!("hipEventElapsedTime", {
        non_null!(ms);
        if start.is_null() || stop.is_null() {
            return Err(CallError::new(HipError::INVALID_HANDLE, "event is NULL"));
        }
        // `id()` notes the handles: the call goes to the start event's worker.
        let req = wire::EventElapsed { start: start.id(), end: stop.id() };
        if crate::remote::worker_count() > 1 {
            if let (Some(a), Some(b)) = (crate::remote::device_of_handle(req.start), crate::remote::device_of_handle(req.end)) {
                if !crate::remote::same_worker(a, b)? {
                    // ROCm's clr: events of two devices are an invalid handle here.
                    return Err(CallError::new(HipError::INVALID_HANDLE, "the start and stop events belong to devices of two workers"));
                }
            }
        }
        let elapsed = with_conn(|c| c.event_elapsed_time(req))?.ms;
        try_out!(ms, elapsed);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipEventDestroy(event: hipEvent_t) -> hipError_t {
    hip_boundary!("hipEventDestroy", {
        non_null_event(event)?;
        let req = wire::EventRef { event: event.id() };
        // A live event created here: posted (see hipStreamDestroy).
        if with_conn(|c| Ok(c.client_handles().destroy(Kind::Event, req.event)))? {
            return with_conn(|c| c.post::<calls::EventDestroy>(req));
        }
        // Destroyed already: ROCm's answer, not the worker's unknown-handle one.
        if with_conn(|c| Ok(c.client_handles().is_destroyed_event(req.event)))? {
            return Err(CallError::new(HipError::CONTEXT_IS_DESTROYED, format!("event {:#x} was destroyed", req.event)));
        }
        call_sync(|c| c.event_destroy(req))
    })
}
