//! Managed memory (`hipMallocManaged`, advice, prefetch, range attributes, stream attachment)
//! and device-visible host memory (`hipHostRegister`, `hipHostGetDevicePointer`,
//! `hipHostGetFlags`, `hipHostMalloc(hipHostMallocMapped)`), on the coherence engine of
//! [`crate::state::managed`]. Semantics and limits: docs/MANAGED_MEMORY.md.

#![allow(non_upper_case_globals)] // HIP's constant names are matched as patterns

use crate::abi::*;
use crate::remote::with_conn;
use crate::state::allocations::{
    find_device_range, find_host_allocation, forget_device_range, record_host_allocation, record_range_of_kind, take_host_allocation, RangeKind,
};
use crate::state::devices::{current_device, device_count};
use crate::state::managed::{self, os, with_mirrors, Mirror, MirrorKind, PageAdvice};
use client_core::CallError;
use proto_core::wire::{self, MANAGED_PAGE};
use proto_core::Calls;
use std::ffi::{c_int, c_uint, c_ulonglong, c_void};

const PAGE: usize = MANAGED_PAGE as usize;

/// `hipHostRegister` flags ROCm accepts (Default, Portable, Mapped, IoMemory, ReadOnly).
const HOST_REGISTER_FLAGS: c_uint = hipHostRegisterPortable | hipHostRegisterMapped | hipHostRegisterIoMemory | hipHostRegisterReadOnly;
/// `hipMemRangeCoherencyModeCoarseGrain` / `…Indeterminate`.
const COHERENCY_COARSE_GRAIN: c_int = 1;
const COHERENCY_INDETERMINATE: c_int = 2;

fn invalid(message: impl Into<String>) -> CallError {
    CallError::new(HipError::INVALID_VALUE, message)
}

/// Allocates `size` bytes of managed or mapped host memory: pages of ours with a device twin
/// at the same address (managed: always; mapped host: when the worker can place it there).
/// `twin` is what the device side is (`wire::TWIN_MANAGED`, or `wire::TWIN_DEVICE` for memory
/// stream memory operations address: GPU drivers refuse them on managed memory).
pub fn alloc_mirrored(kind: MirrorKind, size: usize, flags: c_uint, twin: u32) -> Result<usize, CallError> {
    let len = size.checked_next_multiple_of(PAGE).ok_or_else(|| CallError::new(HipError::OUT_OF_MEMORY, format!("{size} bytes")))?;
    let device = current_device();
    let reserved = os::map_anywhere(len)?;
    let placed = with_conn(|c| c.managed_alloc(wire::ManagedAlloc { device, size: len as u64, hint: reserved as u64, twin }).map(|a| a.ptr));
    let device_base = match placed {
        Ok(ptr) => ptr,
        Err(e) => {
            os::unmap(reserved, len);
            return Err(e);
        }
    };
    let base = if device_base as usize == reserved || kind == MirrorKind::MappedHost {
        reserved
    } else {
        // The backend chose the address (cuda, hip): ours must be the same.
        os::unmap(reserved, len);
        if let Err(e) = os::map_at(device_base as usize, len) {
            let _ = with_conn(|c| c.managed_free(wire::ManagedFree { ptr: device_base }));
            return Err(CallError::new(
                HipError::OUT_OF_MEMORY,
                format!("the worker placed managed memory at {device_base:#x}, which this process cannot map: {}", e.message),
            ));
        }
        device_base as usize
    };
    with_mirrors(|m| m.insert(Mirror::new(kind, base, len, (base, base + size), device_base, device, flags)))?;
    let range_kind = if kind == MirrorKind::Managed { RangeKind::Managed } else { RangeKind::HostMapped };
    record_range_of_kind(base as u64, size as u64, device, flags, range_kind);
    if kind == MirrorKind::MappedHost {
        // Pinned memory too: hipHostGetFlags, pointer attributes and hipHostFree know it.
        if let Ok(layout) = std::alloc::Layout::from_size_align(size, PAGE) {
            record_host_allocation(base, layout, flags, device);
        }
    }
    Ok(base)
}

/// Frees the mirrored range whose application part starts at `ptr` if it is of `kind`:
/// `Ok(false)` when it is not one.
pub fn free_mirrored(ptr: usize, kind: MirrorKind) -> Result<bool, CallError> {
    let Some(mirror) = managed::remove_if(ptr, |m| m.kind == kind)? else { return Ok(false) };
    forget_device_range(ptr as u64);
    if kind == MirrorKind::MappedHost {
        take_host_allocation(ptr);
    }
    let freed = with_conn(|c| c.managed_free(wire::ManagedFree { ptr: mirror.device_base }));
    if kind != MirrorKind::Registered {
        os::unmap(mirror.base, mirror.len);
    }
    freed.map(|_| true)
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocManaged(dev_ptr: *mut *mut c_void, size: usize, flags: c_uint) -> hipError_t {
    hip_boundary!("hipMallocManaged", {
        crate::api::capture::check_call_permitted()?;
        non_null!(dev_ptr);
        if size == 0 {
            return Err(invalid("hipMallocManaged of 0 bytes"));
        }
        if flags != hipMemAttachGlobal && flags != hipMemAttachHost {
            return Err(invalid(format!("hipMallocManaged flags {flags:#x} are neither hipMemAttachGlobal nor hipMemAttachHost")));
        }
        let ptr = alloc_mirrored(MirrorKind::Managed, size, flags, wire::TWIN_MANAGED)?;
        try_out!(dev_ptr, ptr as *mut c_void);
        Ok(())
    })
}

// ---- advice, prefetch, range attributes ------------------------------------------------------

/// A device ordinal or `hipCpuDeviceId` as a location, as ROCm converts it.
fn location_of(device: c_int) -> hipMemLocation {
    if device == hipCpuDeviceId {
        hipMemLocation { type_: hipMemLocationTypeHost, id: hipCpuDeviceId }
    } else {
        hipMemLocation { type_: hipMemLocationTypeDevice, id: device }
    }
}

/// The target of a location: `(device or hipCpuDeviceId, is the CPU)`.
fn target_of(location: hipMemLocation) -> Result<(c_int, bool), CallError> {
    match location.type_ {
        hipMemLocationTypeDevice => Ok((location.id, false)),
        hipMemLocationTypeHost | hipMemLocationTypeHostNumaCurrent => Ok((hipCpuDeviceId, true)),
        hipMemLocationTypeHostNuma => Ok((hipCpuDeviceId, true)),
        other => Err(invalid(format!("memory location type {other} is not a device or the host"))),
    }
}

fn check_target_device(device: c_int) -> Result<(), CallError> {
    let count = device_count()?;
    if device < 0 || device as u32 >= count {
        return Err(CallError::new(HipError::INVALID_DEVICE, format!("device {device} does not exist ({count} devices)")));
    }
    Ok(())
}

/// Runs `f` on the mirrored range holding all of `[ptr, ptr + count)` and the pages it spans.
fn with_range<R>(ptr: *const c_void, count: usize, what: &str, f: impl FnOnce(&mut Mirror, std::ops::Range<usize>) -> R) -> Result<R, CallError> {
    let addr = ptr as usize;
    managed::peek_mirrors(|mirrors| {
        let mirror = mirrors.find_mut(addr).ok_or_else(|| invalid(format!("{what}: {ptr:?} is not managed or mapped memory")))?;
        if count > mirror.owned_end - addr {
            return Err(invalid(format!("{what}: {count} bytes from {ptr:?} pass the end of its allocation")));
        }
        let span = mirror.page_span(addr, count);
        Ok(f(mirror, span))
    })?
    .unwrap_or_else(|| Err(invalid(format!("{what}: {ptr:?} is not managed or mapped memory"))))
}

fn mem_advise(ptr: *const c_void, count: usize, advice: hipMemoryAdvise, location: hipMemLocation) -> Result<(), CallError> {
    if ptr.is_null() || count == 0 {
        return Err(invalid("hipMemAdvise needs a pointer and a non-zero count"));
    }
    let (target, cpu) = target_of(location)?;
    let read_mostly = advice == hipMemAdviseSetReadMostly || advice == hipMemAdviseUnsetReadMostly;
    if !read_mostly && !cpu {
        check_target_device(target)?;
    }
    let apply: fn(&mut PageAdvice, c_int) = match advice {
        hipMemAdviseSetReadMostly => |a, _| a.read_mostly = true,
        hipMemAdviseUnsetReadMostly => |a, _| a.read_mostly = false,
        hipMemAdviseSetPreferredLocation => |a, t| a.preferred_location = t,
        hipMemAdviseUnsetPreferredLocation => |a, _| a.preferred_location = hipInvalidDeviceId,
        hipMemAdviseSetAccessedBy => |a, t| a.accessed_by |= accessor_bit(t),
        hipMemAdviseUnsetAccessedBy => |a, t| a.accessed_by &= !accessor_bit(t),
        hipMemAdviseSetCoarseGrain => |a, _| a.coarse_grain = true,
        hipMemAdviseUnsetCoarseGrain => |a, _| a.coarse_grain = false,
        other => return Err(invalid(format!("hipMemoryAdvise {other} is not an advice"))),
    };
    with_range(ptr, count, "hipMemAdvise", |mirror, pages| {
        for page in &mut mirror.advice[pages] {
            apply(page, target);
        }
    })
}

/// `accessed_by` bit of a device (bit `d + 1`) or the CPU (bit 0).
fn accessor_bit(target: c_int) -> u64 {
    match target {
        hipCpuDeviceId => 1,
        d if (0..63).contains(&d) => 1 << (d + 1),
        _ => 0,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAdvise(dev_ptr: *const c_void, count: usize, advice: hipMemoryAdvise, device: c_int) -> hipError_t {
    hip_boundary!("hipMemAdvise", { mem_advise(dev_ptr, count, advice, location_of(device)) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAdvise_v2(dev_ptr: *const c_void, count: usize, advice: hipMemoryAdvise, location: hipMemLocation) -> hipError_t {
    hip_boundary!("hipMemAdvise_v2", { mem_advise(dev_ptr, count, advice, location) })
}

/// Prefetch to a device pushes the CPU's changes now (the device then has everything);
/// prefetch to the CPU is satisfied by the pull of the synchronisation that must come before
/// the CPU reads. Device memory (`hipMalloc`) needs nothing.
fn prefetch(ptr: *const c_void, count: usize, location: hipMemLocation) -> Result<(), CallError> {
    if ptr.is_null() || count == 0 {
        return Err(invalid("hipMemPrefetchAsync needs a pointer and a non-zero count"));
    }
    let (target, cpu) = target_of(location)?;
    if !cpu {
        check_target_device(target)?;
    }
    if managed::find(ptr as usize, |_| ())?.is_none() {
        return match find_device_range(ptr as u64) {
            Some((base, range)) if (ptr as u64 - base).saturating_add(count as u64) <= range.size => Ok(()),
            Some(_) => Err(invalid(format!("hipMemPrefetchAsync: {count} bytes from {ptr:?} pass the end of its allocation"))),
            None => Err(invalid(format!("hipMemPrefetchAsync: {ptr:?} is not memory HIP allocated"))),
        };
    }
    with_range(ptr, count, "hipMemPrefetchAsync", |mirror, pages| {
        for page in &mut mirror.advice[pages] {
            page.last_prefetch = target;
        }
    })?;
    if !cpu {
        managed::push_all()?;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPrefetchAsync(dev_ptr: *const c_void, count: usize, device: c_int, _stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipMemPrefetchAsync", { prefetch(dev_ptr, count, location_of(device)) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPrefetchAsync_v2(
    dev_ptr: *const c_void,
    count: usize,
    location: hipMemLocation,
    flags: c_uint,
    _stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemPrefetchAsync_v2", {
        if flags != 0 {
            return Err(invalid(format!("hipMemPrefetchAsync_v2 flags {flags:#x} must be 0")));
        }
        prefetch(dev_ptr, count, location)
    })
}

/// ROCm's checks: every array present, at least one operation and location, no more
/// locations than operations, location starts strictly ascending from 0, flags 0, a stream.
#[no_mangle]
pub unsafe extern "C" fn hipMemPrefetchBatchAsync(
    dev_ptrs: *mut *mut c_void,
    sizes: *mut usize,
    count: usize,
    prefetch_locs: *mut hipMemLocation,
    prefetch_loc_idxs: *mut usize,
    num_prefetch_locs: usize,
    flags: c_ulonglong,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemPrefetchBatchAsync", {
        if dev_ptrs.is_null() || sizes.is_null() || prefetch_locs.is_null() || prefetch_loc_idxs.is_null() {
            return Err(invalid("hipMemPrefetchBatchAsync: an array is NULL"));
        }
        if count == 0 || num_prefetch_locs == 0 || num_prefetch_locs > count {
            return Err(invalid(format!("hipMemPrefetchBatchAsync: {count} operations, {num_prefetch_locs} locations")));
        }
        if flags != 0 || stream.is_null() {
            return Err(invalid("hipMemPrefetchBatchAsync needs flags 0 and a stream"));
        }
        // SAFETY: non-null arrays of `count` / `num_prefetch_locs` elements (HIP's contract).
        let (ptrs, sizes, locs, starts) = unsafe {
            (
                std::slice::from_raw_parts(dev_ptrs, count),
                std::slice::from_raw_parts(sizes, count),
                std::slice::from_raw_parts(prefetch_locs, num_prefetch_locs),
                std::slice::from_raw_parts(prefetch_loc_idxs, num_prefetch_locs),
            )
        };
        if starts[0] != 0 || starts.iter().any(|&s| s >= count) || starts.windows(2).any(|w| w[1] <= w[0]) {
            return Err(invalid("hipMemPrefetchBatchAsync: location starts must ascend from 0 below the operation count"));
        }
        for (op, (&ptr, &size)) in ptrs.iter().zip(sizes).enumerate() {
            if ptr.is_null() || size == 0 {
                return Err(invalid(format!("hipMemPrefetchBatchAsync: operation {op} has no pointer or size")));
            }
            let location = locs[starts.iter().rposition(|&s| s <= op).unwrap_or(0)];
            if location.type_ == hipMemLocationTypeDevice && (location.id < 0 || location.id as u32 >= device_count()?) {
                return Err(invalid(format!("hipMemPrefetchBatchAsync: device {} does not exist", location.id)));
            }
        }
        for (op, (&ptr, &size)) in ptrs.iter().zip(sizes).enumerate() {
            let location = locs[starts.iter().rposition(|&s| s <= op).unwrap_or(0)];
            prefetch(ptr, size, location)?;
        }
        Ok(())
    })
}

/// One attribute over `[ptr, ptr + count)`, written into `data` (`data_size` bytes).
fn range_attribute(data: *mut c_void, data_size: usize, attribute: hipMemRangeAttribute, ptr: *const c_void, count: usize) -> Result<(), CallError> {
    let pages: Vec<PageAdvice> = with_range(ptr, count, "hipMemRangeGetAttribute", |mirror, pages| mirror.advice[pages].to_vec())?;
    let same = |value: fn(&PageAdvice) -> c_int| {
        let first = value(&pages[0]);
        if pages.iter().all(|p| value(p) == first) {
            first
        } else {
            hipInvalidDeviceId
        }
    };
    let scalar = match attribute {
        hipMemRangeAttributeReadMostly => Some(pages.iter().all(|p| p.read_mostly) as c_int),
        hipMemRangeAttributePreferredLocation => Some(same(|p| p.preferred_location)),
        hipMemRangeAttributeLastPrefetchLocation => Some(same(|p| p.last_prefetch)),
        hipMemRangeAttributeCoherencyMode => Some(match pages.iter().filter(|p| p.coarse_grain).count() {
            0 => hipMemRangeCoherencyModeFineGrain as c_int,
            n if n == pages.len() => COHERENCY_COARSE_GRAIN,
            _ => COHERENCY_INDETERMINATE,
        }),
        hipMemRangeAttributeAccessedBy => None,
        other => return Err(invalid(format!("hipMemRangeAttribute {other} is not a range attribute"))),
    };
    let out = data as *mut c_int;
    match scalar {
        Some(value) => {
            if data_size != size_of::<c_int>() {
                return Err(invalid(format!("range attribute {attribute} needs 4 bytes of data, not {data_size}")));
            }
            // SAFETY: `data` is non-null (checked by the callers) and holds 4 bytes.
            unsafe { out.write_unaligned(value) };
        }
        None => {
            if !data_size.is_multiple_of(size_of::<c_int>()) {
                return Err(invalid(format!("hipMemRangeAttributeAccessedBy needs a multiple of 4 bytes, not {data_size}")));
            }
            // Devices (and the CPU) that have AccessedBy set for every page, then -2s.
            let common = pages.iter().fold(u64::MAX, |all, p| all & p.accessed_by);
            let accessors = (0..64).filter(|bit| common & (1 << bit) != 0).map(|bit| if bit == 0 { hipCpuDeviceId } else { bit - 1 });
            let mut accessors = accessors.chain(std::iter::repeat(hipInvalidDeviceId));
            for i in 0..data_size / size_of::<c_int>() {
                // SAFETY: `data` holds `data_size` bytes (HIP's contract), `i` is below that.
                unsafe { out.add(i).write_unaligned(accessors.next().unwrap_or(hipInvalidDeviceId)) };
            }
        }
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipMemRangeGetAttribute(
    data: *mut c_void,
    data_size: usize,
    attribute: hipMemRangeAttribute,
    dev_ptr: *const c_void,
    count: usize,
) -> hipError_t {
    hip_boundary!("hipMemRangeGetAttribute", {
        if data.is_null() || data_size == 0 || dev_ptr.is_null() || count == 0 {
            return Err(invalid("hipMemRangeGetAttribute: NULL data or pointer, or a zero size"));
        }
        range_attribute(data, data_size, attribute, dev_ptr, count)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemRangeGetAttributes(
    data: *mut *mut c_void,
    data_sizes: *mut usize,
    attributes: *mut hipMemRangeAttribute,
    num_attributes: usize,
    dev_ptr: *const c_void,
    count: usize,
) -> hipError_t {
    hip_boundary!("hipMemRangeGetAttributes", {
        if data.is_null() || data_sizes.is_null() || attributes.is_null() || num_attributes == 0 || dev_ptr.is_null() || count == 0 {
            return Err(invalid("hipMemRangeGetAttributes: NULL array or pointer, or a zero count"));
        }
        // SAFETY: non-null arrays of `num_attributes` elements (HIP's contract).
        let (data, sizes, attributes) = unsafe {
            (
                std::slice::from_raw_parts(data, num_attributes),
                std::slice::from_raw_parts(data_sizes, num_attributes),
                std::slice::from_raw_parts(attributes, num_attributes),
            )
        };
        if data.iter().any(|d| d.is_null()) {
            return Err(invalid("hipMemRangeGetAttributes: a data pointer is NULL"));
        }
        for i in 0..num_attributes {
            range_attribute(data[i], sizes[i], attributes[i], dev_ptr, count)?;
        }
        Ok(())
    })
}

/// Records the association; every stream may access managed memory here (the engine keeps
/// all of it coherent at every synchronisation), so it changes nothing else.
#[no_mangle]
pub unsafe extern "C" fn hipStreamAttachMemAsync(stream: hipStream_t, dev_ptr: *mut c_void, length: usize, flags: c_uint) -> hipError_t {
    hip_boundary!("hipStreamAttachMemAsync", {
        non_null!(dev_ptr);
        if flags != hipMemAttachGlobal && flags != hipMemAttachHost && flags != hipMemAttachSingle {
            return Err(invalid(format!("hipStreamAttachMemAsync flags {flags:#x} are not one attach mode")));
        }
        if flags == hipMemAttachSingle && stream.is_null() {
            return Err(invalid("hipMemAttachSingle needs a stream"));
        }
        let stream = crate::handle::stream_id(stream);
        let attached = managed::peek_mirrors(|mirrors| {
            let mirror = mirrors.find_mut(dev_ptr as usize)?;
            if length != 0 && length != mirror.owned_end - mirror.owned_start {
                return Some(Err(invalid(format!("hipStreamAttachMemAsync: length {length} is neither 0 nor the allocation's size"))));
            }
            mirror.attached = Some((stream, flags));
            Some(Ok(()))
        })?
        .flatten();
        match attached {
            Some(done) => done,
            // Other memory HIP allocated is accepted as ROCm accepts it; nothing to record.
            None => match find_device_range(dev_ptr as u64) {
                Some(_) => Ok(()),
                None => Err(invalid(format!("{dev_ptr:?} is not memory HIP allocated"))),
            },
        }
    })
}

// ---- device-visible host memory --------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn hipHostRegister(host_ptr: *mut c_void, size_bytes: usize, flags: c_uint) -> hipError_t {
    hip_boundary!("hipHostRegister", {
        if host_ptr.is_null() || size_bytes == 0 {
            return Err(invalid("hipHostRegister needs a pointer and a non-zero size"));
        }
        if flags & !HOST_REGISTER_FLAGS != 0 {
            return Err(invalid(format!("unknown hipHostRegister flags {flags:#x}")));
        }
        let start = host_ptr as usize;
        let end = start.checked_add(size_bytes).ok_or_else(|| invalid("hipHostRegister range wraps"))?;
        if managed::peek_mirrors(|m| m.overlaps(start, end))?.unwrap_or(false) || find_host_allocation(start).is_some() {
            return Err(CallError::new(HipError::HOST_MEMORY_ALREADY_REGISTERED, format!("{host_ptr:?}: already registered or mapped")));
        }
        register(start, size_bytes, flags)?;
        Ok(())
    })
}

/// Gives the application's `size` bytes at `start` a device twin; answers the twin's address
/// for `start`.
fn register(start: usize, size: usize, flags: c_uint) -> Result<u64, CallError> {
    // The twin covers whole pages; the device pointer of `start` is its offset into them, the
    // same address when the worker could place them there.
    let end = start + size;
    let base = start / PAGE * PAGE;
    let len = end.next_multiple_of(PAGE) - base;
    let device = current_device();
    // Plain device memory: `hipStreamWriteValue*`/`WaitValue*` address registered memory (HIP's
    // stream-operation tests do), which GPU drivers refuse on managed memory; the twin is then
    // the current device's memory.
    let alloc = wire::ManagedAlloc { device, size: len as u64, hint: base as u64, twin: wire::TWIN_DEVICE };
    let device_base = with_conn(|c| c.managed_alloc(alloc).map(|a| a.ptr))?;
    let mirror = Mirror::new(MirrorKind::Registered, base, len, (start, end), device_base, device, flags);
    let device_ptr = mirror.device_address(start);
    with_mirrors(|m| m.insert(mirror))?;
    record_range_of_kind(start as u64, size as u64, device, flags, RangeKind::HostMapped);
    Ok(device_ptr)
}

#[no_mangle]
pub unsafe extern "C" fn hipHostUnregister(host_ptr: *mut c_void) -> hipError_t {
    hip_boundary!("hipHostUnregister", {
        non_null!(host_ptr);
        if !free_mirrored(host_ptr as usize, MirrorKind::Registered)? {
            return Err(CallError::new(HipError::HOST_MEMORY_NOT_REGISTERED, format!("{host_ptr:?} was not registered with hipHostRegister")));
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostGetDevicePointer(dev_ptr: *mut *mut c_void, host_ptr: *mut c_void, flags: c_uint) -> hipError_t {
    hip_boundary!("hipHostGetDevicePointer", {
        non_null!(dev_ptr);
        non_null!(host_ptr);
        if flags != 0 {
            return Err(invalid(format!("hipHostGetDevicePointer flags {flags:#x} must be 0")));
        }
        let mirrored = managed::find(host_ptr as usize, |m| (m.kind != MirrorKind::Managed).then(|| m.device_address(host_ptr as usize)))?.flatten();
        let device_ptr = match mirrored {
            Some(ptr) => ptr,
            // ROCm maps all pinned memory: plain hipHostMalloc memory gets its twin now.
            None => match find_host_allocation(host_ptr as usize) {
                Some((base, allocation)) => {
                    let twin = register(base, allocation.layout.size(), allocation.flags)?;
                    twin + (host_ptr as usize - base) as u64
                }
                None => return Err(invalid(format!("{host_ptr:?} is neither pinned (hipHostMalloc) nor registered (hipHostRegister)"))),
            },
        };
        try_out!(dev_ptr, device_ptr as *mut c_void);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostGetFlags(flags_ptr: *mut c_uint, host_ptr: *mut c_void) -> hipError_t {
    hip_boundary!("hipHostGetFlags", {
        non_null!(flags_ptr);
        non_null!(host_ptr);
        let mirrored = managed::find(host_ptr as usize, |m| (m.kind != MirrorKind::Managed).then_some(m.flags))?.flatten();
        let flags = mirrored
            .or_else(|| find_host_allocation(host_ptr as usize).map(|(_, h)| h.flags))
            .ok_or_else(|| invalid(format!("{host_ptr:?} is not host memory HIP allocated or registered")))?;
        try_out!(flags_ptr, flags);
        Ok(())
    })
}

/// Bytes the coherence engine pushed to and pulled from the worker so far (hip-remote's own
/// diagnostic: tests prove with it that only changed pages move).
#[no_mangle]
pub unsafe extern "C" fn hipRemoteManagedStats(pushed: *mut c_ulonglong, pulled: *mut c_ulonglong) -> hipError_t {
    hip_boundary!("hipRemoteManagedStats", {
        let (p, q) = managed::stats();
        try_out!(pushed, p);
        try_out!(pulled, q);
        Ok(())
    })
}
