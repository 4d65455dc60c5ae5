//! What the process knows of its stream captures: whether any it began has not ended. The
//! C-side thread state of capture (the thread's id in capture messages, its capture mode) and
//! the capture calls themselves are `api::capture`'s; the layers below the API ask here.

use crate::abi::*;
use crate::remote::with_conn;
use client_core::CallError;
use proto_core::wire;
use proto_core::Calls;

/// Whether a capture this process began may still run (on any worker's session): calls
/// whose failure during capture must be reported at once wait for the worker then. The
/// count lives in each session (`client_core::capture`); reading it takes no lock.
pub fn any_active() -> bool {
    crate::remote::captures_active()
}

/// Copies to or from client memory cannot be captured (graph memcpy nodes of host memory are
/// not supported): on a capturing stream the copy is refused with
/// `hipErrorStreamCaptureUnsupported` before any byte is sent, and the capture invalidated.
pub fn refuse_host_copy(stream: u64) -> Result<(), CallError> {
    if !any_active() {
        return Ok(());
    }
    // A stream query applies HIP's rule for what a capture cannot record: on a capturing
    // stream it invalidates the capture and fails (on the legacy stream while a blocking
    // stream captures, with hipErrorStreamCaptureImplicit); elsewhere it only queries.
    with_conn(|c| c.stream_query(wire::StreamRef { stream })).map(drop)
}

/// Whether `stream` (a wire id) captures now: its callbacks become host nodes, which need a
/// token that outlives one run. Asks the worker only while a capture may be running.
pub fn captures(stream: u64) -> Result<bool, CallError> {
    if stream == 0 || !any_active() {
        return Ok(false);
    }
    let status = with_conn(|c| c.stream_capture_query(wire::StreamCaptureQuery { stream }).map(|r| r.status))?;
    Ok(status == hipStreamCaptureStatusActive)
}
