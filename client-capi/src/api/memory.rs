//! Memory family: device allocations, copies in every direction (sync and async), memset,
//! and pinned host memory.
//!
//! The client keeps the ranges of its device allocations so `hipMemcpyDefault` can tell
//! device pointers from host pointers, as unified addressing does on a local GPU. Host
//! allocations (`hipHostMalloc`) live in this process; the worker never sees them.

use crate::abi::*;
use crate::api::pointer::Known;
use crate::handle::stream_id;
use crate::remote::with_conn;
use crate::state::allocations::*;
use crate::state::copy::{copy, direction, Direction};
use crate::state::devices::{check_device, current_device};
use crate::state::sync::call_sync;
use client_core::CallError;
use proto_core::wire::{self, MemsetWidth};
use proto_core::{calls, Caller, Calls};
use std::alloc::Layout;
use std::ffi::{c_int, c_uint, c_void};

/// Alignment of `hipHostMalloc` memory (a page, so it can later be registered for RDMA).
pub const HOST_ALLOC_ALIGN: usize = 4096;

/// `hipHostMalloc` flags this library accepts (Default, Portable, Mapped, WriteCombined,
/// NumaUser, Coherent, NonCoherent). Placement hints do not apply to client memory.
const HOST_MALLOC_FLAGS: c_uint = 0x1 | 0x2 | 0x4 | 0x2000_0000 | 0x4000_0000 | 0x8000_0000;

/// How many allocations a device of a list of several workers may hold back while it looks
/// for an address no other worker's memory uses ([`collides_with_other_worker`]).
pub const MAX_ADDRESS_COLLISION_RETRIES: usize = 8;

fn malloc_on(device: u32, size: usize, flags: u32) -> Result<u64, CallError> {
    crate::remote::on_device(device, || {
        let allocate = || {
            with_conn(|c| {
                // Plain device memory is placed by the library where the worker allows it.
                if flags == 0 {
                    if let Some(ptr) = c.client_malloc(device, size as u64)? {
                        return Ok(ptr);
                    }
                }
                c.malloc(wire::Malloc { device, size: size as u64, flags }).map(|a| a.ptr)
            })
        };
        let mut held = Vec::new();
        let mut ptr = allocate()?;
        while ptr != 0 && collides_with_other_worker(ptr, size as u64, device) {
            held.push(ptr);
            if held.len() > MAX_ADDRESS_COLLISION_RETRIES {
                break;
            }
            ptr = allocate()?;
        }
        let found = held.last() != Some(&ptr);
        // Given back only now, so the worker could not hand the same address out again.
        for p in held {
            let _ = free_device(p);
        }
        if !found {
            return Err(CallError::new(
                HipError::OUT_OF_MEMORY,
                format!(
                    "device {device}: {MAX_ADDRESS_COLLISION_RETRIES} allocations of {size} bytes in a row overlapped another worker's memory (addresses must name one worker)"
                ),
            ));
        }
        record_device_range(ptr, size as u64, device, flags);
        Ok(ptr)
    })
}

/// Frees device memory the client placed or the worker allocated (already routed).
fn free_device(ptr: u64) -> Result<(), CallError> {
    if !with_conn(|c| c.client_free(ptr))? {
        call_sync(|c| c.free(wire::Free { ptr }))?;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    hip_boundary!("hipMalloc", {
        non_null!(ptr);
        crate::api::capture::check_call_permitted()?;
        let p = malloc_on(current_device(), size, 0)?;
        try_out!(ptr, p as *mut c_void);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> hipError_t {
    hip_boundary!("hipFree", {
        if ptr.is_null() {
            return Ok(());
        }
        crate::api::capture::check_call_permitted()?;
        if crate::api::managed::free_mirrored(ptr as usize, crate::state::managed::MirrorKind::Managed)? {
            return Ok(());
        }
        let is_signal = find_host_allocation(ptr as usize).is_some_and(|(base, h)| base == ptr as usize && h.flags == MALLOC_SIGNAL_MEMORY);
        if is_signal && crate::api::managed::free_mirrored(ptr as usize, crate::state::managed::MirrorKind::MappedHost)? {
            return Ok(());
        }
        on_pointer(ptr as u64, || free_device(ptr as u64))?;
        graph_memory_released(ptr as u64);
        forget_device_range(ptr as u64);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy(dst: *mut c_void, src: *const c_void, size: usize, kind: hipMemcpyKind) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy", { unsafe { copy(dst, src, size, kind, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyAsync(dst: *mut c_void, src: *const c_void, size: usize, kind: hipMemcpyKind, stream: hipStream_t) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyAsync", { unsafe { copy(dst, src, size, kind, Some(stream_id(stream))) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyHtoD(dst: hipDeviceptr_t, src: *const c_void, size: usize) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyHtoD", { unsafe { copy(dst, src, size, hipMemcpyHostToDevice, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyDtoH(dst: *mut c_void, src: hipDeviceptr_t, size: usize) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyDtoH", { unsafe { copy(dst, src, size, hipMemcpyDeviceToHost, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyDtoD(dst: hipDeviceptr_t, src: hipDeviceptr_t, size: usize) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyDtoD", { unsafe { copy(dst, src, size, hipMemcpyDeviceToDevice, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyHtoDAsync(dst: hipDeviceptr_t, src: *const c_void, size: usize, stream: hipStream_t) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyHtoDAsync", { unsafe { copy(dst, src, size, hipMemcpyHostToDevice, Some(stream_id(stream))) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyDtoHAsync(dst: *mut c_void, src: hipDeviceptr_t, size: usize, stream: hipStream_t) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyDtoHAsync", { unsafe { copy(dst, src, size, hipMemcpyDeviceToHost, Some(stream_id(stream))) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyDtoDAsync(dst: hipDeviceptr_t, src: hipDeviceptr_t, size: usize, stream: hipStream_t) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyDtoDAsync", { unsafe { copy(dst, src, size, hipMemcpyDeviceToDevice, Some(stream_id(stream))) } })
}

/// Where a memset's bytes go.
pub(crate) enum FillTarget {
    /// Device memory (or a device twin the worker fills): the request goes to the worker.
    Worker,
    /// Pinned or registered host memory of this process (`hipHostMalloc`, `hipHostRegister`):
    /// ROCm fills it as device-visible memory; its bytes live here, so they are filled here.
    Host,
}

/// Classifies a fill of `span` bytes from `dst` with this library's record of memory, so a bad
/// destination fails at the call with ROCm's `hipErrorInvalidValue` (an address no HIP call
/// made, or a span past its allocation's end) instead of on a later, unrelated call.
pub(crate) fn fill_target(dst: u64, span: u64) -> Result<FillTarget, CallError> {
    let past_end = |base: u64, size: u64| {
        CallError::new(HipError::INVALID_VALUE, format!("{span} bytes from {dst:#x} run past the end of its {size}-byte allocation at {base:#x}"))
    };
    if let Some((base, range)) = find_device_range(dst) {
        // A size of 0: an imported pool pointer, whose extent the worker alone knows and checks.
        if range.size != 0 && (dst - base).checked_add(span).is_none_or(|end| end > range.size) {
            return Err(past_end(base, range.size));
        }
        // Host-side memory is filled here while no capture runs (a capture records the fill
        // as a graph node instead).
        if range.kind != RangeKind::HostMapped || crate::state::capture::any_active() {
            return Ok(FillTarget::Worker);
        }
        return Ok(FillTarget::Host);
    }
    if let Some((base, alloc)) = find_host_allocation(dst as usize) {
        let size = alloc.layout.size() as u64;
        if (dst - base as u64).checked_add(span).is_none_or(|end| end > size) {
            return Err(past_end(base as u64, size));
        }
        if crate::state::capture::any_active() {
            return Err(CallError::new(
                HipError::STREAM_CAPTURE_UNSUPPORTED,
                "a memset of pinned host memory cannot be captured: this library fills it in the calling process",
            ));
        }
        return Ok(FillTarget::Host);
    }
    Err(CallError::new(HipError::INVALID_VALUE, format!("{dst:#x} is not memory a HIP call allocated or registered")))
}

/// Fills host memory of this process in stream order: the work queued before it on `stream`
/// (the null stream for the synchronous forms) finishes first, then `rows` rows of `width`
/// elements of `elem` bytes each, `pitch` bytes apart, are written from `dst`.
///
/// # Safety
/// The caller checked with [`fill_target`] that the whole extent lies in one live host
/// allocation or registration of this process.
pub(crate) unsafe fn fill_host(
    dst: u64,
    value: u32,
    elem: MemsetWidth,
    pitch: u64,
    width: u64,
    rows: u64,
    stream: Option<u64>,
) -> Result<(), CallError> {
    let stream = stream.unwrap_or(0);
    call_sync(|c| c.stream_synchronize(wire::StreamRef { stream }))?;
    let pattern: Vec<u8> = match elem {
        MemsetWidth::Byte => vec![value as u8],
        MemsetWidth::Half => (value as u16).to_ne_bytes().to_vec(),
        MemsetWidth::Word => value.to_ne_bytes().to_vec(),
    };
    let row_bytes = width as usize * pattern.len();
    for row in 0..rows {
        let start = (dst + row * pitch) as *mut u8;
        // SAFETY: the caller's contract: each row lies in live memory of this process, which
        // no device work queued before the fill still touches (the stream was synchronised).
        let bytes = unsafe { std::slice::from_raw_parts_mut(start, row_bytes) };
        for chunk in bytes.chunks_exact_mut(pattern.len()) {
            chunk.copy_from_slice(&pattern);
        }
    }
    Ok(())
}

pub(crate) fn memset(dst: *mut c_void, value: u32, width: MemsetWidth, count: usize, stream: Option<u64>) -> Result<(), CallError> {
    if count == 0 {
        return Ok(());
    }
    non_null!(dst);
    let span = (count as u64)
        .checked_mul(u64::from(width.raw()))
        .ok_or_else(|| CallError::new(HipError::INVALID_VALUE, format!("{count} elements overflow")))?;
    if let FillTarget::Host = fill_target(dst as u64, span)? {
        // SAFETY: `fill_target` found the whole span in host memory of this process.
        return unsafe { fill_host(dst as u64, value, width, span, count as u64, 1, stream) };
    }
    let req = wire::Memset { dst: dst as u64, value, width, count: count as u64, stream: stream.unwrap_or(0), sync: stream.is_none() };
    on_pointer(dst as u64, || match stream {
        None => call_sync(|c| c.memset(req)),
        Some(_) => with_conn(|c| c.post::<calls::Memset>(req)),
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemset(dst: *mut c_void, value: c_int, size: usize) -> hipError_t {
    hip_boundary!("hipMemset", { memset(dst, value as u32, MemsetWidth::Byte, size, None) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemsetAsync(dst: *mut c_void, value: c_int, size: usize, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipMemsetAsync", { memset(dst, value as u32, MemsetWidth::Byte, size, Some(stream_id(stream))) })
}

#[no_mangle]
pub extern "C" fn hipMemsetD8(dst: hipDeviceptr_t, value: u8, count: usize) -> hipError_t {
    hip_boundary!("hipMemsetD8", { memset(dst, value.into(), MemsetWidth::Byte, count, None) })
}

#[no_mangle]
pub extern "C" fn hipMemsetD16(dst: hipDeviceptr_t, value: u16, count: usize) -> hipError_t {
    hip_boundary!("hipMemsetD16", { memset(dst, value.into(), MemsetWidth::Half, count, None) })
}

#[no_mangle]
pub extern "C" fn hipMemsetD32(dst: hipDeviceptr_t, value: c_int, count: usize) -> hipError_t {
    hip_boundary!("hipMemsetD32", { memset(dst, value as u32, MemsetWidth::Word, count, None) })
}

#[no_mangle]
pub extern "C" fn hipMemsetD8Async(dst: hipDeviceptr_t, value: u8, count: usize, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipMemsetD8Async", { memset(dst, value.into(), MemsetWidth::Byte, count, Some(stream_id(stream))) })
}

#[no_mangle]
pub extern "C" fn hipMemsetD16Async(dst: hipDeviceptr_t, value: u16, count: usize, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipMemsetD16Async", { memset(dst, value.into(), MemsetWidth::Half, count, Some(stream_id(stream))) })
}

#[no_mangle]
pub extern "C" fn hipMemsetD32Async(dst: hipDeviceptr_t, value: c_int, count: usize, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipMemsetD32Async", { memset(dst, value as u32, MemsetWidth::Word, count, Some(stream_id(stream))) })
}

fn host_malloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> Result<(), CallError> {
    crate::api::capture::check_call_permitted()?;
    non_null!(ptr);
    if flags & !HOST_MALLOC_FLAGS != 0 {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown hipHostMalloc flags {flags:#x}")));
    }
    if size == 0 {
        try_out!(ptr, std::ptr::null_mut());
        return Ok(());
    }
    if flags & hipHostMallocMapped != 0 {
        // Device-addressable: a mirrored range the coherence engine keeps in step.
        let mem = crate::api::managed::alloc_mirrored(crate::state::managed::MirrorKind::MappedHost, size, flags, wire::TWIN_MANAGED)?;
        try_out!(ptr, mem as *mut c_void);
        return Ok(());
    }
    let layout = Layout::from_size_align(size, HOST_ALLOC_ALIGN)
        .map_err(|_| CallError::new(HipError::OUT_OF_MEMORY, format!("{size} bytes cannot be allocated")))?;
    // On a same-host connection: memory the worker shares and registered with the GPU, so
    // copies from it are one DMA (else, or without a worker yet reachable, local memory).
    // A client that cannot be on one does not connect for it.
    let config = crate::remote::config();
    let may_share = cfg!(target_os = "linux") && (crate::remote::is_open() || config.worker.starts_with("shm://") || config.same_host);
    if let Some(mem) = may_share.then(|| crate::remote::with_conn(|c| c.alloc_shared_host(size, flags)).ok().flatten()).flatten() {
        record_host_allocation(mem, layout, flags, current_device());
        try_out!(ptr, mem as *mut c_void);
        return Ok(());
    }
    // SAFETY: the layout has a non-zero size.
    let mem = unsafe { std::alloc::alloc(layout) };
    if mem.is_null() {
        return Err(CallError::new(HipError::OUT_OF_MEMORY, format!("host allocation of {size} bytes failed")));
    }
    record_host_allocation(mem as usize, layout, flags, current_device());
    crate::remote::remember_host_memory(mem as usize, size);
    try_out!(ptr, mem as *mut c_void);
    Ok(())
}

fn host_free(ptr: *mut c_void) -> Result<(), CallError> {
    if ptr.is_null() {
        return Ok(());
    }
    if crate::api::managed::free_mirrored(ptr as usize, crate::state::managed::MirrorKind::MappedHost)? {
        return Ok(());
    }
    if find_host_allocation(ptr as usize).is_some_and(|(base, _)| base == ptr as usize) {
        // Its device twin (made by hipHostGetDevicePointer) goes first.
        crate::api::managed::free_mirrored(ptr as usize, crate::state::managed::MirrorKind::Registered)?;
    }
    if crate::conn::is_shared_host_allocation(ptr as usize) {
        // Removed from the table first: no copy names the region any more.
        take_host_allocation(ptr as usize);
        crate::remote::with_conn(|c| c.free_shared_host(ptr as usize))?;
        return Ok(());
    }
    let layout = take_host_allocation(ptr as usize)
        .ok_or_else(|| CallError::new(HipError::INVALID_VALUE, format!("{ptr:?} was not allocated by hipHostMalloc")))?;
    // The transport lets go of the memory (its RDMA registration) before it is freed.
    crate::remote::forget_host_memory(ptr as usize);
    // SAFETY: `ptr` came from `alloc(layout)` in host_malloc and is freed once (removed above).
    unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipHostMalloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> hipError_t {
    hip_boundary!("hipHostMalloc", { host_malloc(ptr, size, flags) })
}

#[no_mangle]
pub unsafe extern "C" fn hipExtHostAlloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> hipError_t {
    hip_boundary!("hipExtHostAlloc", { host_malloc(ptr, size, flags) })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostAlloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> hipError_t {
    hip_boundary!("hipHostAlloc", { host_malloc(ptr, size, flags) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocHost(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    hip_boundary!("hipMallocHost", { host_malloc(ptr, size, 0) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAllocHost(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    hip_boundary!("hipMemAllocHost", { host_malloc(ptr, size, 0) })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostFree(ptr: *mut c_void) -> hipError_t {
    hip_boundary!("hipHostFree", { host_free(ptr) })
}

#[no_mangle]
pub unsafe extern "C" fn hipFreeHost(ptr: *mut c_void) -> hipError_t {
    hip_boundary!("hipFreeHost", { host_free(ptr) })
}

// ---- hipExtMallocWithFlags, pitched and stream-ordered allocations --------------------------

/// `hipExtMallocWithFlags` kinds ROCm accepts (one kind, not a mask).
const EXT_MALLOC_KINDS: [c_uint; 5] = [0, 1, 2, 3, 4];
/// `hipMallocSignalMemory`: must be exactly 8 bytes.
const MALLOC_SIGNAL_MEMORY: c_uint = 2;
/// Row pitch alignment of `hipMallocPitch` (ROCm's `imagePitchAlignment_` on every device).
const PITCH_ALIGNMENT: usize = 256;

#[no_mangle]
pub unsafe extern "C" fn hipExtMallocWithFlags(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> hipError_t {
    hip_boundary!("hipExtMallocWithFlags", {
        // ROCm checks the kind before the pointer.
        if !EXT_MALLOC_KINDS.contains(&flags) || (flags == MALLOC_SIGNAL_MEMORY && size != 8) {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("hipExtMallocWithFlags({size} bytes, flags {flags:#x}): not a valid kind")));
        }
        non_null!(ptr);
        // Signal memory is read and written by the host as well (ROCm's is host-coherent;
        // HIP's own stream-operation tests poke it directly): mapped host memory here, its
        // device twin what hipStreamWaitValue*/WriteValue* and kernels use — plain device
        // memory, as GPU drivers refuse stream memory operations on managed memory.
        let p = if flags == MALLOC_SIGNAL_MEMORY {
            crate::api::managed::alloc_mirrored(crate::state::managed::MirrorKind::MappedHost, size, flags, wire::TWIN_DEVICE)? as u64
        } else {
            malloc_on(current_device(), size, flags)?
        };
        try_out!(ptr, p as *mut c_void);
        Ok(())
    })
}

fn malloc_pitch(ptr: *mut *mut c_void, pitch: *mut usize, width: usize, height: usize) -> Result<(), CallError> {
    non_null!(ptr);
    non_null!(pitch);
    if width == 0 || height == 0 {
        // ROCm answers a null pointer and leaves `pitch` as it was.
        // SAFETY: checked non-null.
        try_out!(ptr, std::ptr::null_mut());
        return Ok(());
    }
    let row = width
        .checked_next_multiple_of(PITCH_ALIGNMENT)
        .ok_or_else(|| CallError::new(HipError::INVALID_VALUE, format!("row width {width} overflows")))?;
    let size = row.checked_mul(height).ok_or_else(|| CallError::new(HipError::OUT_OF_MEMORY, format!("{row} x {height} bytes overflows")))?;
    let p = malloc_on(current_device(), size, 0)?;
    // SAFETY: both checked non-null; the caller provides writable slots.
    unsafe {
        *pitch = row;
        *ptr = p as *mut c_void;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocPitch(ptr: *mut *mut c_void, pitch: *mut usize, width: usize, height: usize) -> hipError_t {
    hip_boundary!("hipMallocPitch", { malloc_pitch(ptr, pitch, width, height) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAllocPitch(
    dptr: *mut hipDeviceptr_t,
    pitch: *mut usize,
    width: usize,
    height: usize,
    element_size: c_uint,
) -> hipError_t {
    hip_boundary!("hipMemAllocPitch", {
        // Unlike hipMallocPitch, an empty area is an error here (as in ROCm).
        if width == 0 || height == 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, "hipMemAllocPitch of an empty area"));
        }
        if !matches!(element_size, 4 | 8 | 16) {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("elementSizeBytes {element_size} is not 4, 8 or 16")));
        }
        malloc_pitch(dptr, pitch, width, height)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFreeAsync(ptr: *mut c_void, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipFreeAsync", {
        non_null!(ptr);
        // A round trip, so a pointer that is no allocation is reported here, not later.
        let captured = is_unfreed_graph_memory(ptr as u64) && crate::state::graph_host::capturing_graph(stream_id(stream))?.is_some();
        let req = wire::FreeAsync { ptr: ptr as u64, stream: stream_id(stream) };
        on_pointer(ptr as u64, || call_sync(|c| c.free_async(req)))?;
        if captured {
            // A free node of the capture's graph: the memory stays the graph pool's.
            graph_memory_freed(ptr as u64);
        } else {
            graph_memory_released(ptr as u64);
            forget_device_range(ptr as u64);
        }
        Ok(())
    })
}

// ---- pointer queries (attributes: api/pointer.rs) ------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn hipMemPtrGetInfo(ptr: *mut c_void, size: *mut usize) -> hipError_t {
    hip_boundary!("hipMemPtrGetInfo", {
        non_null!(ptr);
        non_null!(size);
        let known = Known::find(ptr as u64).ok_or_else(|| CallError::new(HipError::INVALID_VALUE, format!("{ptr:?} is no HIP allocation")))?;
        try_out!(size, known.size() as usize);
        Ok(())
    })
}

// ---- peer and 2D copies -------------------------------------------------------------------

fn memcpy_peer(dst: *mut c_void, dst_device: c_int, src: *const c_void, src_device: c_int, len: usize, stream: Option<u64>) -> Result<(), CallError> {
    let dst_device = check_device(dst_device)?;
    let src_device = check_device(src_device)?;
    if len == 0 {
        return Ok(());
    }
    // ROCm's peer copies are device-to-device `hipMemcpyAsync`s: a length past either
    // allocation's end is `hipErrorInvalidValue` at the call (`ihipMemcpy_validate`).
    crate::state::copy::within_allocation(dst as u64, len)?;
    crate::state::copy::within_allocation(src as u64, len)?;
    if crate::state::copy::crosses_workers(Some(dst_device), Some(src_device))? {
        return crate::state::copy::copy_across_workers(dst as u64, dst_device, src as u64, src_device, len as u64, stream);
    }
    let req = wire::MemcpyPeer {
        dst: dst as u64,
        dst_device,
        src: src as u64,
        src_device,
        len: len as u64,
        stream: stream.unwrap_or(0),
        sync: stream.is_none(),
    };
    crate::remote::on_device(src_device, || match stream {
        None => call_sync(|c| c.memcpy_peer(req)),
        Some(_) => with_conn(|c| c.post::<calls::MemcpyPeer>(req)),
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyPeer(dst: *mut c_void, dst_device: c_int, src: *const c_void, src_device: c_int, size: usize) -> hipError_t {
    hip_boundary!("hipMemcpyPeer", { memcpy_peer(dst, dst_device, src, src_device, size, None) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyPeerAsync(
    dst: *mut c_void,
    dst_device: c_int,
    src: *const c_void,
    src_device: c_int,
    size: usize,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemcpyPeerAsync", { memcpy_peer(dst, dst_device, src, src_device, size, Some(stream_id(stream))) })
}

/// `hipMemcpyDeviceToDeviceNoCU`: a device-to-device copy to ROCm (no compute units used).
const MEMCPY_DEVICE_TO_DEVICE_NO_CU: hipMemcpyKind = 1024;

/// One 2D copy of `height` rows of `width` bytes; `stream` is `None` for the synchronous API.
///
/// # Safety
/// The rows of `dst` and `src` must be valid in the direction's address spaces.
#[allow(clippy::too_many_arguments)] // hipMemcpy2D's own parameters
pub(crate) unsafe fn copy_2d(
    dst: *mut c_void,
    dst_pitch: usize,
    src: *const c_void,
    src_pitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: Option<u64>,
) -> Result<(), CallError> {
    // ROCm's order: the kind, then empty copies, then the pitches, then the pointers.
    let kind = if kind == MEMCPY_DEVICE_TO_DEVICE_NO_CU { hipMemcpyDeviceToDevice } else { kind };
    if kind > hipMemcpyDefault {
        return Err(CallError::new(HipError::INVALID_MEMCPY_DIRECTION, format!("hipMemcpyKind {kind} is not a copy direction")));
    }
    if width == 0 || height == 0 {
        return Ok(());
    }
    if width > dst_pitch || width > src_pitch {
        return Err(CallError::new(HipError::INVALID_PITCH_VALUE, format!("row width {width} exceeds a pitch (dst {dst_pitch}, src {src_pitch})")));
    }
    non_null!(dst);
    non_null!(src);
    let sync = stream.is_none();
    let stream = stream.unwrap_or(0);
    match direction(dst, src, kind)? {
        Direction::HostToHost => {
            for row in 0..height {
                // SAFETY: row `row` of each side is `width` bytes of host memory (caller
                // contract); rows may overlap.
                unsafe { std::ptr::copy((src as *const u8).add(row * src_pitch), (dst as *mut u8).add(row * dst_pitch), width) };
            }
            Ok(())
        }
        Direction::HostToDevice => on_pointer(dst as u64, || {
            // SAFETY: `src`'s rows are readable host memory (caller contract).
            with_conn(|c| unsafe {
                c.upload_2d(
                    dst as u64,
                    dst_pitch as u64,
                    src as *const u8,
                    src_pitch,
                    width,
                    height,
                    stream,
                    sync,
                    crate::state::copy::sent_is_enough,
                )
            })
        }),
        Direction::DeviceToHost => on_pointer(src as u64, || {
            // SAFETY: `dst`'s rows are writable host memory until the copy is synchronised
            // (HIP's contract for async copies; immediately for sync ones).
            with_conn(|c| unsafe { c.download_2d(dst as *mut u8, dst_pitch, src as u64, src_pitch as u64, width, height, stream, sync) })
        }),
        Direction::DeviceToDevice => {
            crate::state::copy::refuse_across_workers(device_of_pointer(dst as u64), device_of_pointer(src as u64))?;
            let req = wire::MemcpyDtoD2D {
                dst: dst as u64,
                dst_pitch: dst_pitch as u64,
                src: src as u64,
                src_pitch: src_pitch as u64,
                width: width as u64,
                height: height as u64,
                stream,
                sync,
            };
            on_pointer(src as u64, || if sync { call_sync(|c| c.memcpy_dtod_2d(req)) } else { with_conn(|c| c.post::<calls::MemcpyDtoD2D>(req)) })
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2D(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy2D", { unsafe { copy_2d(dst, dpitch, src, spitch, width, height, kind, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy2DAsync", { unsafe { copy_2d(dst, dpitch, src, spitch, width, height, kind, Some(stream_id(stream))) } })
}
