//! Graph memcpy nodes that read or write this process's host memory: `hipGraphAddMemcpyNode1D`
//! with a host pointer, and a host-to-device or device-to-host `hipMemcpyAsync` captured from
//! a stream. ROCm's node reads (or writes) the host memory each time the graph runs; here the
//! host bytes live in this process and the graph runs on the worker, so each such node is a
//! device-to-device copy through a staging buffer of its own, and every `hipGraphLaunch` of
//! an executable graph holding some
//! - sends the host bytes of its uploads into their staging buffers before the launch, and
//! - lands its downloads' staging buffers in host memory after it,
//!
//! both in the launch stream's order. So an upload node reads the host memory as it is when
//! the graph is launched (ROCm: when the node runs), and a download's bytes are in host memory
//! once the launch stream is synchronised, as HIP defines.
//!
//! Not covered: nodes of a graph run as a child graph node (the child's own host copies are
//! not replayed through its parent), concurrent launches of one executable graph on streams
//! not ordered with each other (they share the staging buffers), and 2D/3D memcpy nodes with
//! host memory (`hipGraphAddMemcpyNode`): refused with `hipErrorNotSupported`.

use crate::abi::*;
use crate::remote::with_conn;
use crate::state::allocations::{forget_device_range, record_device_range};
use crate::state::sync::call_sync;
use client_core::graph_host::HostCopies;
use client_core::CallError;
use proto_core::wire;
use proto_core::Calls;
use std::sync::{Arc, MutexGuard};

/// Most host-memory copy nodes one graph may hold (each owns a staging buffer).
pub const MAX_HOST_COPIES_PER_GRAPH: usize = 4096;

pub use client_core::graph_host::HostCopy;

/// The host bindings of the graphs of the worker that issued `handle` (a graph or executable
/// graph), kept by its session (read without the connection's lock: a launch reads them
/// before it takes the connection).
fn tables(handle: u64) -> MutexGuard<'static, HostCopies> {
    crate::remote::published_for_handle(handle).host_copies()
}

/// Makes the staging buffer of a node copying `len` bytes between `host` and device memory
/// of `device` in `graph`, and binds it to the graph; answers the staging address the node
/// copies to (`to_device`) or from.
pub fn stage(graph: u64, device: u32, host: usize, len: usize, to_device: bool) -> Result<u64, CallError> {
    if tables(graph).count(graph) >= MAX_HOST_COPIES_PER_GRAPH {
        return Err(CallError::new(
            HipError::OUT_OF_MEMORY,
            format!("a graph holds at most {MAX_HOST_COPIES_PER_GRAPH} memcpy nodes of host memory"),
        ));
    }
    let staging = with_conn(|c| c.malloc(wire::Malloc { device, size: len as u64, flags: 0 }).map(|a| a.ptr))?;
    record_device_range(staging, len as u64, device, 0);
    tables(graph).bind(graph, HostCopy { host, staging, len, to_device });
    Ok(staging)
}

/// Frees the staging buffers of bindings no graph or executable graph holds any more.
fn release(copies: Vec<Arc<HostCopy>>) -> Result<(), CallError> {
    for copy in copies.into_iter().filter_map(Arc::into_inner) {
        forget_device_range(copy.staging);
        call_sync(|c| c.free(wire::Free { ptr: copy.staging }))?;
    }
    Ok(())
}

/// `graph` was cloned into `clone`: the clone's nodes copy through the same staging buffers.
pub fn graph_cloned(graph: u64, clone: u64) {
    tables(graph).graph_cloned(graph, clone);
}

/// `exec` was instantiated from `graph`: its launches move the graph's host bytes.
pub fn exec_instantiated(graph: u64, exec: u64) {
    tables(graph).exec_instantiated(graph, exec);
}

/// `graph` was destroyed (or its capture abandoned).
pub fn graph_destroyed(graph: u64) -> Result<(), CallError> {
    let copies = tables(graph).graph_destroyed(graph);
    release(copies)
}

/// `exec` was destroyed.
pub fn exec_destroyed(exec: u64) -> Result<(), CallError> {
    let copies = tables(exec).exec_destroyed(exec);
    release(copies)
}

/// The bindings of `exec` (cloned out of the lock: moving their bytes takes the connection;
/// `api::graph`'s launch does it, before and after the launch).
pub fn exec_copies(exec: u64) -> Vec<Arc<HostCopy>> {
    tables(exec).exec_copies(exec)
}

/// The graph `stream` captures into, if it captures (asks the worker only while a capture may
/// run).
pub fn capturing_graph(stream: u64) -> Result<Option<u64>, CallError> {
    if !crate::state::capture::any_active() {
        return Ok(None);
    }
    let info = with_conn(|c| c.stream_capture_query(wire::StreamCaptureQuery { stream }).map(|r| (r.status, r.graph)))?;
    Ok((info.0 == hipStreamCaptureStatusActive).then_some(info.1))
}
