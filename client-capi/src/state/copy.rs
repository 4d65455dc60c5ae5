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

/// Refuses a 2D copy between devices of two workers of a device list (only linear copies
/// go from worker to worker). `None`: a device the client does not know, left to the worker.
pub fn refuse_across_workers(dst_device: Option<u32>, src_device: Option<u32>) -> Result<(), CallError> {
    let (Some(dst), Some(src)) = (dst_device, src_device) else { return Ok(()) };
    if crate::remote::same_worker(dst, src)? {
        return Ok(());
    }
    Err(CallError::new(
        HipError::NOT_SUPPORTED,
        format!("a 2D copy from device {src} to device {dst} crosses workers of the device list: only linear copies go from worker to worker (copy row by row, or through host memory)"),
    ))
}

/// Refuses a copy whose `len` bytes from `ptr` run past the end of the device allocation
/// holding `ptr`, at the call, as ROCm does (`ihipMemcpy_validate`: `hipErrorInvalidValue`);
/// otherwise an asynchronous copy would be posted and fail at a later, unrelated call.
/// Memory this library has no record of is left to the worker.
pub(crate) fn within_allocation(ptr: u64, len: usize) -> Result<(), CallError> {
    use crate::state::allocations::{find_device_range, RangeKind};
    match find_device_range(ptr) {
        Some((base, r)) if r.kind == RangeKind::Device && (ptr - base).saturating_add(len as u64) > r.size => Err(CallError::new(
            HipError::INVALID_VALUE,
            format!("a copy of {len} bytes at {ptr:#x} runs past the end of its allocation ({} bytes at {base:#x})", r.size),
        )),
        _ => Ok(()),
    }
}

/// Names each grant of a copy between workers within the source session.
static NEXT_GRANT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Whether `dst_device` and `src_device` are devices of two different workers of the list.
pub fn crosses_workers(dst_device: Option<u32>, src_device: Option<u32>) -> Result<bool, CallError> {
    match (dst_device, src_device) {
        (Some(dst), Some(src)) if crate::remote::worker_count() > 1 => Ok(!crate::remote::same_worker(dst, src)?),
        _ => Ok(false),
    }
}

/// The source worker's address as the destination is to dial it: as this client reached it,
/// with `tls://` when it reached it over TLS (the destination then fetches over TLS too).
fn source_address(config: &crate::config::ClientConfig) -> String {
    if config.tls.is_some() && !config.worker.contains("://") {
        return format!("tls://{}", config.worker);
    }
    config.worker.clone()
}

/// A copy of `len` bytes from `src` on `src_device` to `dst` on `dst_device`, devices of two
/// workers: worker to worker, never through this process (docs/CLIENT.md, "Copies between
/// workers"). Per piece of at most [`wire::MAX_TRANSFER_BYTES`], the source worker is offered a
/// one-time grant (an id and a secret drawn here), read in its stream's order, and the
/// destination worker told to fetch it from the source's address and write it in its own
/// stream's order. Both are posted: an asynchronous copy returns without a round trip; a
/// synchronous one waits for the destination's answer. `stream` (`None`: synchronous) orders
/// the side of the worker it belongs to; the other side uses its null stream.
pub fn copy_across_workers(dst: u64, dst_device: u32, src: u64, src_device: u32, len: u64, stream: Option<u64>) -> Result<(), CallError> {
    use crate::remote::{device_of_handle, on_device, with_conn, worker_config, worker_of_device};
    let (src_worker, dst_worker) = (worker_of_device(src_device)?, worker_of_device(dst_device)?);
    let sync = stream.is_none();
    let stream = stream.unwrap_or(0);
    let (src_stream, dst_stream) = match device_of_handle(stream).map(worker_of_device).transpose()? {
        None => (0, 0),
        Some(w) if w == src_worker => (stream, 0),
        Some(w) if w == dst_worker => (0, stream),
        Some(w) => {
            return Err(CallError::new(
                HipError::INVALID_HANDLE,
                format!("the stream of a copy from device {src_device} to device {dst_device} belongs to worker {w}, neither the source's nor the destination's"),
            ))
        }
    };
    // Refused before anything moves when either worker cannot take part (WELCOME says).
    let has = |device: u32, feature: u64| on_device(device, || with_conn(|c| Ok(c.welcome().has(feature))));
    let cannot = |worker: usize, why: &str| {
        CallError::new(
            HipError::NOT_SUPPORTED,
            format!("a copy from device {src_device} to device {dst_device} crosses workers, and worker {worker} of the device list ({}) {why} (copy through host memory)", worker_config(worker).worker),
        )
    };
    // An older worker does not say it takes part.
    const TAKES_NO_PART: &str = "takes no part in copies between workers";
    if !has(src_device, wire::features::TRANSFER_SOURCE)? {
        return Err(cannot(src_worker, TAKES_NO_PART));
    }
    if !has(dst_device, wire::features::TRANSFER_PULL)? {
        let why = if has(dst_device, wire::features::TRANSFER_SOURCE)? {
            format!("may not dial other workers: start it with --dial-workers naming {}", worker_config(src_worker).worker)
        } else {
            TAKES_NO_PART.to_owned()
        };
        return Err(cannot(dst_worker, &why));
    }
    let source = source_address(worker_config(src_worker));
    let source_session = on_device(src_device, || with_conn(|c| Ok(c.welcome().session_id)))?;
    let mut done = 0u64;
    while done < len {
        let piece = (len - done).min(wire::MAX_TRANSFER_BYTES);
        let grant_id = NEXT_GRANT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut secret = [0u8; wire::TRANSFER_SECRET_LEN];
        getrandom::fill(&mut secret).map_err(|e| CallError::new(HipError::UNKNOWN, format!("no randomness for a copy between workers: {e}")))?;
        let offer = wire::TransferOffer { grant_id, secret: proto_core::field::Bytes(&secret), src: src + done, len: piece, stream: src_stream };
        // Sent at once: the destination's fetch waits for it.
        on_device(src_device, || {
            with_conn(|c| {
                c.post::<calls::TransferOffer>(offer)?;
                c.flush()
            })
        })?;
        let pull = wire::TransferPull {
            grant_id,
            secret: proto_core::field::Bytes(&secret),
            source_session,
            source: proto_core::field::Str(&source),
            dst: dst + done,
            len: piece,
            stream: dst_stream,
            sync,
        };
        on_device(dst_device, || {
            if sync {
                call_sync(|c| c.transfer_pull(pull))
            } else {
                // Sent at once too: the grant waits for its fetch a bounded time.
                with_conn(|c| {
                    c.post::<calls::TransferPull>(pull)?;
                    c.flush()
                })
            }
        })?;
        done += piece;
    }
    Ok(())
}

/// Whether `ptr` is pinned host memory of this process: `hipHostMalloc` memory or a
/// `hipHostRegister` range.
fn is_pinned_host(ptr: usize) -> bool {
    use crate::state::allocations::{find_device_range, find_host_allocation, RangeKind};
    find_host_allocation(ptr).is_some() || find_device_range(ptr as u64).is_some_and(|(_, r)| r.kind == RangeKind::HostMapped)
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
        Direction::DeviceToHost => {
            // Into pageable memory the copy is complete on return, asynchronous API or not,
            // as in ROCm (`isAsync = false` for a host destination) and CUDA ("returns only
            // once the copy has completed"): a host callback or another thread may read it
            // next. Into pinned or registered memory it lands in stream order.
            let wait = sync || !is_pinned_host(dst as usize);
            // SAFETY: `dst` is a host buffer of `len` bytes that stays valid until the copy is
            // synchronised (HIP's contract for async copies into pinned memory; on return for
            // the others).
            on_pointer(src as u64, || with_conn(|c| unsafe { c.download(dst as *mut u8, src as u64, len, stream, wait) }))
        }
        Direction::DeviceToDevice => {
            let (dst_device, src_device) = (device_of_pointer(dst as u64), device_of_pointer(src as u64));
            if let (true, Some(dst_device), Some(src_device)) = (crosses_workers(dst_device, src_device)?, dst_device, src_device) {
                return copy_across_workers(dst as u64, dst_device, src as u64, src_device, len as u64, (!sync).then_some(stream));
            }
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
