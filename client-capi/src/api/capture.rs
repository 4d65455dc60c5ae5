//! Stream capture: `hipStreamBeginCapture*`, `hipStreamEndCapture*`, `hipStreamIsCapturing*`,
//! `hipStreamGetCaptureInfo*` and `hipStreamUpdateCaptureDependencies`. The worker session
//! captures (the recorded work never leaves it, see `worker/src/session/capture.rs`); these
//! functions send the calling thread's id and capture mode, which HIP's per-thread rules need
//! and only this side knows. Argument checks and error codes follow ROCm's `hip_graph.cpp`.

use crate::abi::*;
use crate::handle::{spt, stream_id};
use crate::remote::with_conn;
use crate::state::capture;
use client_core::CallError;
use proto_core::wire;
use proto_core::Calls;
use std::cell::Cell;
use std::ffi::{c_uint, c_ulonglong};
use std::sync::atomic::{AtomicU64, Ordering};
use zerocopy::byteorder::little_endian::U64;

thread_local! {
    /// The calling thread's id in capture messages (HIP's capture rules are per thread, and
    /// one connection serves every thread).
    static THREAD: u64 = {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed)
    };
}

fn thread() -> u64 {
    THREAD.with(|t| *t)
}

fn invalid(message: impl Into<String>) -> CallError {
    CallError::new(HipError::INVALID_VALUE, message)
}

/// HIP's rule for calls that may not run during capture (`hipMalloc`, `hipFree`,
/// `hipHostMalloc`, `hipMallocManaged`, `hipModuleUnload`): in global or thread-local mode,
/// not while this thread captures, and in global mode not while any global capture runs
/// (`hipErrorStreamCaptureUnsupported`, the captures invalidated). Asks the worker only while
/// a capture may be running.
pub fn check_call_permitted() -> Result<(), CallError> {
    let mode = thread_capture_mode();
    if !capture::any_active() || mode == hipStreamCaptureModeRelaxed {
        return Ok(());
    }
    with_conn(|c| c.capture_check(wire::CaptureCheck { thread: thread(), mode })).map(drop)
}

/// The dependency handles of a capture call, none NULL.
///
/// # Safety
/// `deps` points at `count` handles when `count > 0`.
unsafe fn dependencies(deps: *const hipGraphNode_t, count: usize) -> Result<Vec<U64>, CallError> {
    if count == 0 {
        return Ok(Vec::new());
    }
    non_null!(deps);
    // SAFETY: the caller's contract.
    let deps = unsafe { std::slice::from_raw_parts(deps, count) };
    if deps.iter().any(|d| d.is_null()) {
        return Err(invalid("a dependency is NULL"));
    }
    Ok(deps.iter().map(|&d| U64::new(d as usize as u64)).collect())
}

fn begin(stream: hipStream_t, mode: hipStreamCaptureMode, graph: u64, deps: &[U64]) -> Result<(), CallError> {
    let req = wire::StreamBeginCapture { stream: stream_id(stream), mode, thread: thread(), graph, dependencies: proto_core::field::List(deps) };
    with_conn(|c| {
        c.stream_begin_capture(req)?;
        c.captures().began();
        Ok(())
    })
}

/// # Safety
/// `graph` is NULL or writable.
unsafe fn end(stream: hipStream_t, graph: *mut hipGraph_t) -> Result<(), CallError> {
    non_null!(graph);
    let stream = stream_id(stream);
    // These end the capture too (its graph gone); the other errors leave it running.
    let over = |e: &CallError| e.code == HipError::STREAM_CAPTURE_INVALIDATED || e.code == HipError::STREAM_CAPTURE_UNJOINED;
    let ended = with_conn(|c| {
        let ended = c.stream_end_capture(wire::StreamEndCapture { stream, thread: thread() });
        match &ended {
            Err(e) if !over(e) => {}
            _ => c.captures().ended(),
        }
        ended
    });
    let over = ended.as_ref().err().is_some_and(over);
    match ended {
        Ok(r) => try_out!(graph, crate::handle::from_id(r.graph)?),
        Err(e) => {
            if over {
                try_out!(graph, std::ptr::null_mut());
            }
            return Err(e);
        }
    }
    Ok(())
}

/// What `hipStreamGetCaptureInfo_v2` reports.
struct Info {
    status: hipStreamCaptureStatus,
    id: u64,
    graph: u64,
    dependencies: *const hipGraphNode_t,
    count: usize,
}

fn info(stream: hipStream_t) -> Result<Info, CallError> {
    let stream = stream_id(stream);
    with_conn(|c| {
        let r = c.stream_capture_query(wire::StreamCaptureQuery { stream })?;
        let (status, id, graph) = (r.status, r.id, r.graph);
        let nodes = r.dependencies.0.iter().map(|n| n.get() as usize).collect::<Box<[usize]>>();
        // A node handle is the worker's id as a pointer, so the array of ids is the array of
        // handles; the session keeps it until the stream's next query.
        let nodes = c.dependency_arrays().keep(stream, nodes);
        Ok(Info { status, id, graph, dependencies: nodes.as_ptr() as *const hipGraphNode_t, count: nodes.len() })
    })
}

/// # Safety
/// Each out-parameter is NULL or writable.
unsafe fn capture_info(stream: hipStream_t, status: *mut hipStreamCaptureStatus, id: *mut c_ulonglong) -> Result<(), CallError> {
    non_null!(status);
    let i = info(stream)?;
    try_out!(status, i.status);
    if i.status == hipStreamCaptureStatusActive && !id.is_null() {
        try_out!(id, i.id);
    }
    Ok(())
}

/// # Safety
/// Each out-parameter is NULL or writable.
unsafe fn capture_info_v2(
    stream: hipStream_t,
    status: *mut hipStreamCaptureStatus,
    id: *mut c_ulonglong,
    graph: *mut hipGraph_t,
    deps: *mut *const hipGraphNode_t,
    count: *mut usize,
) -> Result<(), CallError> {
    non_null!(status);
    let i = info(stream)?;
    try_out!(status, i.status);
    if i.status == hipStreamCaptureStatusActive {
        if !id.is_null() {
            try_out!(id, i.id);
        }
        if !graph.is_null() {
            try_out!(graph, crate::handle::from_id(i.graph)?);
        }
        if !deps.is_null() {
            try_out!(deps, i.dependencies);
        }
        if !count.is_null() {
            try_out!(count, i.count);
        }
    }
    Ok(())
}

#[no_mangle]
pub extern "C" fn hipStreamBeginCapture(stream: hipStream_t, mode: hipStreamCaptureMode) -> hipError_t {
    hip_boundary!("hipStreamBeginCapture", { begin(stream, mode, 0, &[]) })
}

#[no_mangle]
pub extern "C" fn hipStreamBeginCapture_spt(stream: hipStream_t, mode: hipStreamCaptureMode) -> hipError_t {
    hip_boundary!("hipStreamBeginCapture_spt", { begin(spt(stream), mode, 0, &[]) })
}

/// # Safety
/// `dependencies` points at `numDependencies` node handles when it is not NULL.
#[no_mangle]
pub unsafe extern "C" fn hipStreamBeginCaptureToGraph(
    stream: hipStream_t,
    graph: hipGraph_t,
    dependencies: *const hipGraphNode_t,
    dependencyData: *const hipGraphEdgeData,
    numDependencies: usize,
    mode: hipStreamCaptureMode,
) -> hipError_t {
    hip_boundary!("hipStreamBeginCaptureToGraph", {
        if !dependencyData.is_null() {
            return Err(CallError::new(HipError::NOT_SUPPORTED, "edge data on capture dependencies is not supported (as in ROCm)"));
        }
        non_null!(graph);
        if dependencies.is_null() != (numDependencies == 0) {
            return Err(invalid("dependencies and numDependencies disagree"));
        }
        // SAFETY: the caller's contract.
        let deps = unsafe { self::dependencies(dependencies, numDependencies)? };
        begin(stream, mode, graph as usize as u64, &deps)
    })
}

/// # Safety
/// `pGraph` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hipStreamEndCapture(stream: hipStream_t, pGraph: *mut hipGraph_t) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipStreamEndCapture", { unsafe { end(stream, pGraph) } })
}

/// # Safety
/// `pGraph` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hipStreamEndCapture_spt(stream: hipStream_t, pGraph: *mut hipGraph_t) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipStreamEndCapture_spt", { unsafe { end(spt(stream), pGraph) } })
}

/// # Safety
/// `pCaptureStatus` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hipStreamIsCapturing(stream: hipStream_t, pCaptureStatus: *mut hipStreamCaptureStatus) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipStreamIsCapturing", { unsafe { capture_info(stream, pCaptureStatus, std::ptr::null_mut()) } })
}

/// # Safety
/// `pCaptureStatus` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hipStreamIsCapturing_spt(stream: hipStream_t, pCaptureStatus: *mut hipStreamCaptureStatus) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipStreamIsCapturing_spt", { unsafe { capture_info(spt(stream), pCaptureStatus, std::ptr::null_mut()) } })
}

/// # Safety
/// Each out-parameter is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hipStreamGetCaptureInfo(
    stream: hipStream_t,
    pCaptureStatus: *mut hipStreamCaptureStatus,
    pId: *mut c_ulonglong,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipStreamGetCaptureInfo", { unsafe { capture_info(stream, pCaptureStatus, pId) } })
}

/// # Safety
/// Each out-parameter is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hipStreamGetCaptureInfo_spt(
    stream: hipStream_t,
    pCaptureStatus: *mut hipStreamCaptureStatus,
    pId: *mut c_ulonglong,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipStreamGetCaptureInfo_spt", { unsafe { capture_info(spt(stream), pCaptureStatus, pId) } })
}

/// # Safety
/// Each out-parameter is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hipStreamGetCaptureInfo_v2(
    stream: hipStream_t,
    captureStatus_out: *mut hipStreamCaptureStatus,
    id_out: *mut c_ulonglong,
    graph_out: *mut hipGraph_t,
    dependencies_out: *mut *const hipGraphNode_t,
    numDependencies_out: *mut usize,
) -> hipError_t {
    hip_boundary!("hipStreamGetCaptureInfo_v2", {
        // SAFETY: forwarded caller contract.
        unsafe { capture_info_v2(stream, captureStatus_out, id_out, graph_out, dependencies_out, numDependencies_out) }
    })
}

/// # Safety
/// Each out-parameter is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hipStreamGetCaptureInfo_v2_spt(
    stream: hipStream_t,
    captureStatus_out: *mut hipStreamCaptureStatus,
    id_out: *mut c_ulonglong,
    graph_out: *mut hipGraph_t,
    dependencies_out: *mut *const hipGraphNode_t,
    numDependencies_out: *mut usize,
) -> hipError_t {
    hip_boundary!("hipStreamGetCaptureInfo_v2_spt", {
        // SAFETY: forwarded caller contract.
        unsafe { capture_info_v2(spt(stream), captureStatus_out, id_out, graph_out, dependencies_out, numDependencies_out) }
    })
}

/// # Safety
/// `dependencies` points at `numDependencies` node handles when `numDependencies > 0`.
#[no_mangle]
pub unsafe extern "C" fn hipStreamUpdateCaptureDependencies(
    stream: hipStream_t,
    dependencies: *mut hipGraphNode_t,
    numDependencies: usize,
    flags: c_uint,
) -> hipError_t {
    hip_boundary!("hipStreamUpdateCaptureDependencies", {
        // SAFETY: the caller's contract.
        let deps = unsafe { self::dependencies(dependencies, numDependencies)? };
        let req = wire::StreamUpdateCaptureDependencies { stream: stream_id(stream), flags, dependencies: proto_core::field::List(&deps) };
        with_conn(|c| c.stream_update_capture_dependencies(req)).map(drop)
    })
}

// ---- stream capture mode ----------------------------------------------------------------

thread_local! {
    static CAPTURE_MODE: Cell<hipStreamCaptureMode> = const { Cell::new(hipStreamCaptureModeGlobal) };
}

/// The calling thread's stream-capture interaction mode (graphs read it when capturing).
pub fn thread_capture_mode() -> hipStreamCaptureMode {
    CAPTURE_MODE.with(|m| m.get())
}

/// Swaps the thread's capture mode with `*mode`.
///
/// # Safety
/// `mode` is NULL or points to a readable and writable `hipStreamCaptureMode`.
#[no_mangle]
pub unsafe extern "C" fn hipThreadExchangeStreamCaptureMode(mode: *mut hipStreamCaptureMode) -> hipError_t {
    hip_boundary!("hipThreadExchangeStreamCaptureMode", {
        non_null!(mode);
        // SAFETY: non-null and readable (the caller's contract).
        let wanted = unsafe { *mode };
        if wanted > hipStreamCaptureModeRelaxed {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown capture mode {wanted}")));
        }
        let old = CAPTURE_MODE.with(|m| m.replace(wanted));
        try_out!(mode, old);
        Ok(())
    })
}
