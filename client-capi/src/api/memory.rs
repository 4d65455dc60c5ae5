//! Memory family: device allocations, copies in every direction (sync and async), memset,
//! and pinned host memory.
//!
//! The client keeps the ranges of its device allocations so `hipMemcpyDefault` can tell
//! device pointers from host pointers, as unified addressing does on a local GPU. Host
//! allocations (`hipHostMalloc`) live in this process; the worker never sees them.

use crate::abi::*;
use crate::api::stream::stream_id;
use crate::boundary::current_device;
use crate::conn::CallError;
use crate::remote::{call_sync, with_conn};
use proto_core::{calls, Caller, Calls};
use proto_core::wire::{self, MemsetWidth};
use std::alloc::Layout;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_int, c_uint, c_void};
use std::sync::{Mutex, OnceLock};

/// Alignment of `hipHostMalloc` memory (a page, so it can later be registered for RDMA).
pub const HOST_ALLOC_ALIGN: usize = 4096;

/// `hipHostMalloc` flags this library accepts (Default, Portable, Mapped, WriteCombined,
/// NumaUser, Coherent, NonCoherent). Placement hints do not apply to client memory.
const HOST_MALLOC_FLAGS: c_uint = 0x1 | 0x2 | 0x4 | 0x2000_0000 | 0x4000_0000 | 0x8000_0000;

fn device_allocs() -> &'static Mutex<BTreeMap<u64, (u64, u32)>> {
    static ALLOCS: OnceLock<Mutex<BTreeMap<u64, (u64, u32)>>> = OnceLock::new();
    ALLOCS.get_or_init(Default::default)
}

fn host_allocs() -> &'static Mutex<HashMap<usize, Layout>> {
    static ALLOCS: OnceLock<Mutex<HashMap<usize, Layout>>> = OnceLock::new();
    ALLOCS.get_or_init(Default::default)
}

/// Pinned host allocations made so far, `(address, bytes)`: announced to a connection's
/// memory registry when it opens (RDMA registers each once and reuses it for every copy).
pub(crate) fn host_allocations() -> Vec<(usize, usize)> {
    host_allocs().lock().unwrap_or_else(|p| p.into_inner()).iter().map(|(&a, l)| (a, l.size())).collect()
}

/// Whether `ptr` lies inside one of this process's device allocations.
pub fn is_device_pointer(ptr: u64) -> bool {
    let allocs = device_allocs().lock().unwrap_or_else(|p| p.into_inner());
    allocs.range(..=ptr).next_back().is_some_and(|(base, (size, _))| ptr - base < (*size).max(1))
}

/// Records a device range the client did not allocate itself (a module global), so that
/// `hipMemcpyDefault` classifies it; it stays until the device is reset.
pub fn note_device_range(ptr: u64, size: u64, device: u32) {
    if ptr != 0 {
        device_allocs().lock().unwrap_or_else(|p| p.into_inner()).insert(ptr, (size, device));
    }
}

/// Drops the client-side record of a device's allocations (after `hipDeviceReset`).
pub fn forget_device_allocations(device: u32) {
    device_allocs().lock().unwrap_or_else(|p| p.into_inner()).retain(|_, (_, d)| *d != device);
}

fn malloc_on(device: u32, size: usize) -> Result<u64, CallError> {
    let ptr = with_conn(|c| {
        c.malloc(wire::Malloc { device, size: size as u64, flags: 0 }).map(|a| a.ptr)
    })?;
    if ptr != 0 {
        device_allocs().lock().unwrap_or_else(|p| p.into_inner()).insert(ptr, (size as u64, device));
    }
    Ok(ptr)
}

#[no_mangle]
pub unsafe extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    hip_boundary!("hipMalloc", {
        non_null!(ptr);
        let p = malloc_on(current_device(), size)?;
        // SAFETY: checked non-null; the caller provides a writable pointer slot.
        unsafe { *ptr = p as *mut c_void };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> hipError_t {
    hip_boundary!("hipFree", {
        if ptr.is_null() {
            return Ok(());
        }
        call_sync(|c| c.free(wire::Free { ptr: ptr as u64 }))?;
        device_allocs().lock().unwrap_or_else(|p| p.into_inner()).remove(&(ptr as u64));
        Ok(())
    })
}

/// Direction of a copy once `hipMemcpyDefault` is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

fn direction(dst: *const c_void, src: *const c_void, kind: hipMemcpyKind) -> Result<Direction, CallError> {
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

/// One copy of `len` bytes; `stream` is `None` for the synchronous API.
///
/// # Safety
/// `dst` and `src` must be valid for `len` bytes in the direction's address spaces.
unsafe fn copy(dst: *mut c_void, src: *const c_void, len: usize, kind: hipMemcpyKind, stream: Option<u64>) -> Result<(), CallError> {
    if len == 0 {
        return Ok(());
    }
    non_null!(dst);
    non_null!(src);
    let sync = stream.is_none();
    let stream = stream.unwrap_or(0);
    match direction(dst, src, kind)? {
        Direction::HostToHost => {
            // SAFETY: both are host buffers of `len` bytes (caller contract); they may overlap.
            unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
            Ok(())
        }
        Direction::HostToDevice => {
            // SAFETY: `src` is a host buffer of `len` bytes (caller contract).
            let data = unsafe { std::slice::from_raw_parts(src as *const u8, len) };
            with_conn(|c| c.upload(dst as u64, data, stream, sync))
        }
        // SAFETY: `dst` is a host buffer of `len` bytes that stays valid until the copy is
        // synchronised (HIP's contract for async copies; immediately for sync ones).
        Direction::DeviceToHost => with_conn(|c| unsafe { c.download(dst as *mut u8, src as u64, len, stream, sync) }),
        Direction::DeviceToDevice => {
            let req = wire::MemcpyDtoD { dst: dst as u64, src: src as u64, len: len as u64, stream, sync };
            if sync {
                call_sync(|c| c.memcpy_dtod(req))
            } else {
                with_conn(|c| c.post::<calls::MemcpyDtoD>(req))
            }
        }
    }
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

fn memset(dst: *mut c_void, value: u32, width: MemsetWidth, count: usize, stream: Option<u64>) -> Result<(), CallError> {
    if count == 0 {
        return Ok(());
    }
    non_null!(dst);
    let req = wire::Memset {
        dst: dst as u64,
        value,
        width,
        count: count as u64,
        stream: stream.unwrap_or(0),
        sync: stream.is_none(),
    };
    match stream {
        None => call_sync(|c| c.memset(req)),
        Some(_) => with_conn(|c| c.post::<calls::Memset>(req)),
    }
}

#[no_mangle]
pub extern "C" fn hipMemset(dst: *mut c_void, value: c_int, size: usize) -> hipError_t {
    hip_boundary!("hipMemset", { memset(dst, value as u32, MemsetWidth::Byte, size, None) })
}

#[no_mangle]
pub extern "C" fn hipMemsetAsync(dst: *mut c_void, value: c_int, size: usize, stream: hipStream_t) -> hipError_t {
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
    non_null!(ptr);
    if flags & !HOST_MALLOC_FLAGS != 0 {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown hipHostMalloc flags {flags:#x}")));
    }
    if size == 0 {
        // SAFETY: checked non-null.
        unsafe { *ptr = std::ptr::null_mut() };
        return Ok(());
    }
    let layout = Layout::from_size_align(size, HOST_ALLOC_ALIGN)
        .map_err(|_| CallError::new(HipError::OUT_OF_MEMORY, format!("{size} bytes cannot be allocated")))?;
    // SAFETY: the layout has a non-zero size.
    let mem = unsafe { std::alloc::alloc(layout) };
    if mem.is_null() {
        return Err(CallError::new(HipError::OUT_OF_MEMORY, format!("host allocation of {size} bytes failed")));
    }
    host_allocs().lock().unwrap_or_else(|p| p.into_inner()).insert(mem as usize, layout);
    crate::remote::remember_host_memory(mem as usize, size);
    // SAFETY: checked non-null.
    unsafe { *ptr = mem as *mut c_void };
    Ok(())
}

fn host_free(ptr: *mut c_void) -> Result<(), CallError> {
    if ptr.is_null() {
        return Ok(());
    }
    let layout = host_allocs()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&(ptr as usize))
        .ok_or_else(|| CallError::new(HipError::INVALID_VALUE, format!("{ptr:?} was not allocated by hipHostMalloc")))?;
    // The transport lets go of the memory (its RDMA registration) before it is freed.
    crate::remote::forget_host_memory(ptr as usize);
    // SAFETY: `ptr` came from `alloc(layout)` in host_malloc and is freed once (removed above).
    unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
    Ok(())
}

#[no_mangle]
pub extern "C" fn hipHostMalloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> hipError_t {
    hip_boundary!("hipHostMalloc", { host_malloc(ptr, size, flags) })
}

#[no_mangle]
pub extern "C" fn hipExtHostAlloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> hipError_t {
    hip_boundary!("hipExtHostAlloc", { host_malloc(ptr, size, flags) })
}

#[no_mangle]
pub extern "C" fn hipHostAlloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> hipError_t {
    hip_boundary!("hipHostAlloc", { host_malloc(ptr, size, flags) })
}

#[no_mangle]
pub extern "C" fn hipMallocHost(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    hip_boundary!("hipMallocHost", { host_malloc(ptr, size, 0) })
}

#[no_mangle]
pub extern "C" fn hipMemAllocHost(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    hip_boundary!("hipMemAllocHost", { host_malloc(ptr, size, 0) })
}

#[no_mangle]
pub extern "C" fn hipHostFree(ptr: *mut c_void) -> hipError_t {
    hip_boundary!("hipHostFree", { host_free(ptr) })
}

#[no_mangle]
pub extern "C" fn hipFreeHost(ptr: *mut c_void) -> hipError_t {
    hip_boundary!("hipFreeHost", { host_free(ptr) })
}
