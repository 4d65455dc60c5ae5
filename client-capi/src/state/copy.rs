//! The one copy path: resolves a `hipMemcpyKind` against the client's allocation record and
//! moves the bytes (locally, or as an upload, download or worker-side copy). Shared by the
//! memory family and the symbol copies of registered device variables.

use super::allocations::{device_of_pointer, is_device_pointer, on_pointer};
use crate::abi::*;
use crate::remote::with_conn;
use crate::state::sync::call_sync;
use client_core::CallError;
use proto_core::wire;
use proto_core::{calls, Caller, Calls};
use std::ffi::c_void;

/// Direction of a copy once `hipMemcpyDefault` is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

pub fn direction(dst: *const c_void, src: *const c_void, kind: hipMemcpyKind) -> Result<Direction, CallError> {
    let (dst_dev, src_dev) = (is_device_pointer(dst as u64), is_device_pointer(src as u64));
    let from_pointers = match (dst_dev, src_dev) {
        (false, false) => Direction::HostToHost,
        (true, false) => Direction::HostToDevice,
        (false, true) => Direction::DeviceToHost,
        (true, true) => Direction::DeviceToDevice,
    };
    let stated = match kind {
        0 => Direction::HostToHost,
        1 => Direction::HostToDevice,
        2 => Direction::DeviceToHost,
        3 => Direction::DeviceToDevice,
        4 => return Ok(from_pointers),
        other => return Err(CallError::new(HipError::INVALID_MEMCPY_DIRECTION, format!("hipMemcpyKind {other} is not a copy direction"))),
    };
    // Like ROCm, a known device pointer decides over a kind that would treat it as host
    // memory: dereferencing a device address here would crash the application. Otherwise the
    // stated kind stands, and the worker refuses pointers that are not its allocations.
    let (dst_host, src_host) = match stated {
        Direction::HostToHost => (true, true),
        Direction::HostToDevice => (false, true),
        Direction::DeviceToHost => (true, false),
        Direction::DeviceToDevice => (false, false),
    };
    Ok(if (dst_host && dst_dev) || (src_host && src_dev) { from_pointers } else { stated })
}

/// Whether a synchronous upload of `len` bytes to `dst` may return once its bytes are sent
/// ([`crate::conn::Conn::upload`], which asks its session's managed mirrors itself: they
/// are pulled back only after a reply). A capture's refusal is reported only by a reply. A
/// destination this process did not allocate (freed, another session's, made up) waits too,
/// so HIP's immediate `hipErrorInvalidValue` stays where it is knowable.
pub fn sent_is_enough(dst: u64, len: usize) -> bool {
    !crate::state::capture::any_active()
        && crate::state::allocations::find_device_range(dst)
            .is_some_and(|(base, r)| r.kind == crate::state::allocations::RangeKind::Device && dst - base + len as u64 <= r.size)
}

/// Refuses a copy between devices of two workers of a device list: the bytes would have to
/// cross from one worker to the other, which is not implemented (and must not pass through
/// the client's own links). `None`: a device the client does not know, left to the worker.
pub fn refuse_across_workers(dst_device: Option<u32>, src_device: Option<u32>) -> Result<(), CallError> {
    let (Some(dst), Some(src)) = (dst_device, src_device) else { return Ok(()) };
    if crate::remote::same_worker(dst, src)? {
        return Ok(());
    }
    Err(CallError::new(
        HipError::NOT_SUPPORTED,
        format!(
            "a copy from device {src} to device {dst} crosses workers of the device list: copies between workers are not implemented (copy through host memory)"
        ),
    ))
}

/// Refuses a copy whose `len` bytes from `ptr` run past the end of the device allocation
/// holding `ptr`, at the call, as ROCm does (`ihipMemcpy_validate`: `hipErrorInvalidValue`);
/// otherwise an asynchronous copy would be posted and fail at a later, unrelated call.
/// Memory this library has no record of is left to the worker.
fn within_allocation(ptr: u64, len: usize) -> Result<(), CallError> {
    use crate::state::allocations::{find_device_range, RangeKind};
    match find_device_range(ptr) {
        Some((base, r)) if r.kind == RangeKind::Device && (ptr - base).saturating_add(len as u64) > r.size => Err(CallError::new(
            HipError::INVALID_VALUE,
            format!("a copy of {len} bytes at {ptr:#x} runs past the end of its allocation ({} bytes at {base:#x})", r.size),
        )),
        _ => Ok(()),
    }
}

/// One copy of `len` bytes; `stream` is `None` for the synchronous API.
///
/// # Safety
/// `dst` and `src` must be valid for `len` bytes in the direction's address spaces.
pub unsafe fn copy(dst: *mut c_void, src: *const c_void, len: usize, kind: hipMemcpyKind, stream: Option<u64>) -> Result<(), CallError> {
    if len == 0 {
        return Ok(());
    }
    non_null!(dst);
    non_null!(src);
    let sync = stream.is_none();
    let stream = stream.unwrap_or(0);
    let direction = direction(dst, src, kind)?;
    if matches!(direction, Direction::HostToDevice | Direction::DeviceToDevice) {
        within_allocation(dst as u64, len)?;
    }
    if matches!(direction, Direction::DeviceToHost | Direction::DeviceToDevice) {
        within_allocation(src as u64, len)?;
    }
    if !sync && matches!(direction, Direction::HostToDevice | Direction::DeviceToHost) && crate::state::capture::any_active() {
        if let Some(graph) = crate::state::graph_host::capturing_graph(stream)? {
            return capture_host_copy(graph, dst as u64, src as u64, len, direction == Direction::HostToDevice, stream);
        }
    }
    if !sync && direction != Direction::DeviceToDevice {
        crate::state::capture::refuse_host_copy(stream)?;
    }
    match direction {
        Direction::HostToHost => {
            // SAFETY: both are host buffers of `len` bytes (caller contract); they may overlap.
            unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
            Ok(())
        }
        Direction::HostToDevice => {
            // SAFETY: `src` is a host buffer of `len` bytes (caller contract).
            let data = unsafe { std::slice::from_raw_parts(src as *const u8, len) };
            on_pointer(dst as u64, || with_conn(|c| c.upload(dst as u64, data, stream, sync, sent_is_enough)))
        }
        // SAFETY: `dst` is a host buffer of `len` bytes that stays valid until the copy is
        // synchronised (HIP's contract for async copies; immediately for sync ones).
        Direction::DeviceToHost => on_pointer(src as u64, || with_conn(|c| unsafe { c.download(dst as *mut u8, src as u64, len, stream, sync) })),
        Direction::DeviceToDevice => {
            refuse_across_workers(device_of_pointer(dst as u64), device_of_pointer(src as u64))?;
            let req = wire::MemcpyDtoD { dst: dst as u64, src: src as u64, len: len as u64, stream, sync };
            on_pointer(src as u64, || if sync { call_sync(|c| c.memcpy_dtod(req)) } else { with_conn(|c| c.post::<calls::MemcpyDtoD>(req)) })
        }
    }
}

/// A host-to-device (`to_device`) or device-to-host copy on a stream capturing into `graph`:
/// a device-to-device memcpy node through a staging buffer whose host side every launch of
/// the graph moves ([`crate::state::graph_host`]), as ROCm's node reads host memory when it runs.
fn capture_host_copy(graph: u64, dst: u64, src: u64, len: usize, to_device: bool, stream: u64) -> Result<(), CallError> {
    let (device_side, host) = if to_device { (dst, src) } else { (src, dst) };
    let device = crate::state::allocations::find_device_range(device_side).map_or_else(crate::state::devices::current_device, |(_, r)| r.device);
    let staging = crate::state::graph_host::stage(graph, device, host as usize, len, to_device)?;
    let (dst, src) = if to_device { (dst, staging) } else { (staging, src) };
    with_conn(|c| c.post::<calls::MemcpyDtoD>(wire::MemcpyDtoD { dst, src, len: len as u64, stream, sync: false }))
}
