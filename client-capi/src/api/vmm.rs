//! Virtual memory management: address reservations, physical allocations, mappings and
//! their access, all on the worker (a `hipMemGenericAllocationHandle_t` carries the
//! worker's handle). Argument checks and error codes follow ROCm's `hip_vm.cpp`.
//!
//! Shareable handles (`hipMemHandleTypePosixFileDescriptor`): the worker hands out an
//! unguessable 64-bit token; the "file descriptor" the application gets is a real one, a
//! sealed memfd of this process holding the token, so it travels between processes the way
//! a real one does (`SCM_RIGHTS`, `pidfd_getfd`, `/proc/PID/fd/N`), and importing reads the
//! token back from whatever descriptor arrives.

#![allow(non_upper_case_globals)] // HIP's constant names, matched as patterns

use super::shareable_fd;
use crate::abi::*;
use crate::remote::with_conn;
use crate::state::allocations::{forget_device_range, record_range_of_kind, RangeKind};
use client_core::CallError;
use proto_core::wire;
use proto_core::Calls;
use std::ffi::{c_int, c_ulonglong, c_void};

const GRANULARITY_MINIMUM: hipMemAllocationGranularity_flags = 0;
const GRANULARITY_RECOMMENDED: hipMemAllocationGranularity_flags = 1;

fn invalid(message: impl Into<String>) -> CallError {
    CallError::new(HipError::INVALID_VALUE, message)
}

fn handle_id(handle: hipMemGenericAllocationHandle_t) -> u64 {
    crate::handle::id(handle)
}

fn handle_of(id: u64) -> Result<hipMemGenericAllocationHandle_t, CallError> {
    crate::handle::from_id(id)
}

/// The device of a `hipMemAllocationProp` ROCm accepts: pinned memory on a device.
fn prop_device(prop: *const hipMemAllocationProp) -> Result<(u32, hipMemAllocationHandleType), CallError> {
    non_null!(prop);
    // SAFETY: checked non-null; HIP's contract: it points at a hipMemAllocationProp.
    let prop = unsafe { prop.read() };
    if prop.type_ != hipMemAllocationTypePinned || prop.location.type_ != hipMemLocationTypeDevice || prop.location.id < 0 {
        return Err(invalid("allocation properties must name pinned memory on a device"));
    }
    // SAFETY: both union members are the same integer type.
    let handle_type = unsafe { prop.__bindgen_anon_1.requestedHandleType };
    Ok((prop.location.id as u32, handle_type))
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetAllocationGranularity(
    granularity: *mut usize,
    prop: *const hipMemAllocationProp,
    option: hipMemAllocationGranularity_flags,
) -> hipError_t {
    hip_boundary!("hipMemGetAllocationGranularity", {
        non_null!(granularity);
        let (device, _) = prop_device(prop)?;
        if option != GRANULARITY_MINIMUM && option != GRANULARITY_RECOMMENDED {
            return Err(invalid(format!("granularity option {option} does not exist")));
        }
        let req = wire::VmmGranularityQuery { device, recommended: option == GRANULARITY_RECOMMENDED };
        let g = with_conn(|c| c.vmm_get_granularity(req).map(|g| g.granularity))?;
        try_out!(granularity, g as usize);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAddressReserve(
    ptr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    addr: *mut c_void,
    flags: c_ulonglong,
) -> hipError_t {
    hip_boundary!("hipMemAddressReserve", {
        non_null!(ptr);
        if flags != 0 {
            return Err(invalid(format!("flags {flags:#x} must be 0")));
        }
        let req = wire::AddressReserve { size: size as u64, alignment: alignment as u64, addr: addr as u64 };
        let p = with_conn(|c| c.address_reserve(req).map(|a| a.ptr))?;
        try_out!(ptr, p as *mut c_void);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAddressFree(dev_ptr: *mut c_void, size: usize) -> hipError_t {
    hip_boundary!("hipMemAddressFree", {
        non_null!(dev_ptr);
        if size == 0 {
            return Err(invalid("size is 0"));
        }
        with_conn(|c| c.address_free(wire::VmmSpan { ptr: dev_ptr as u64, size: size as u64 }).map(drop))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemCreate(
    handle: *mut hipMemGenericAllocationHandle_t,
    size: usize,
    prop: *const hipMemAllocationProp,
    flags: c_ulonglong,
) -> hipError_t {
    hip_boundary!("hipMemCreate", {
        non_null!(handle);
        if size == 0 || flags != 0 {
            return Err(invalid("size must be non-zero and flags 0"));
        }
        let (device, handle_type) = prop_device(prop)?;
        let req = wire::MemCreate { device, size: size as u64, handle_type };
        let id = with_conn(|c| c.mem_create(req).map(|p| p.handle))?;
        try_out!(handle, handle_of(id)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemRelease(handle: hipMemGenericAllocationHandle_t) -> hipError_t {
    hip_boundary!("hipMemRelease", {
        non_null!(handle);
        with_conn(|c| c.mem_release(wire::PhysicalRef { handle: handle_id(handle) }).map(drop))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemMap(
    ptr: *mut c_void,
    size: usize,
    offset: usize,
    handle: hipMemGenericAllocationHandle_t,
    flags: c_ulonglong,
) -> hipError_t {
    hip_boundary!("hipMemMap", {
        non_null!(ptr);
        non_null!(handle);
        // ROCm (and CUDA) map a physical allocation from its start only.
        if size == 0 || offset != 0 || flags != 0 {
            return Err(invalid("size must be non-zero, offset and flags 0"));
        }
        with_conn(|c| c.mem_map(wire::MemMap { ptr: ptr as u64, size: size as u64, handle: handle_id(handle) }).map(drop))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemUnmap(ptr: *mut c_void, size: usize) -> hipError_t {
    hip_boundary!("hipMemUnmap", {
        non_null!(ptr);
        if size == 0 {
            return Err(invalid("size is 0"));
        }
        with_conn(|c| c.mem_unmap(wire::VmmSpan { ptr: ptr as u64, size: size as u64 }).map(drop))?;
        forget_device_range(ptr as u64);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemSetAccess(ptr: *mut c_void, size: usize, desc: *const hipMemAccessDesc, count: usize) -> hipError_t {
    hip_boundary!("hipMemSetAccess", {
        non_null!(ptr);
        non_null!(desc);
        if size == 0 || count == 0 {
            return Err(invalid("size and count must be non-zero"));
        }
        let mut device = 0;
        for i in 0..count {
            // SAFETY: checked non-null; HIP's contract: `count` descriptors.
            let d = unsafe { desc.add(i).read() };
            if d.location.type_ != hipMemLocationTypeDevice || d.location.id < 0 {
                return Err(invalid(format!("access descriptor {i}: location is not a device")));
            }
            device = d.location.id as u32;
            let req = wire::MemSetAccess { ptr: ptr as u64, size: size as u64, device, flags: d.flags };
            with_conn(|c| c.mem_set_access(req).map(drop))?;
        }
        // Known as device memory from now on (hipMemcpyDefault, pointer queries).
        record_range_of_kind(ptr as u64, size as u64, device, 0, RangeKind::Vmm);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetAccess(flags: *mut c_ulonglong, location: *const hipMemLocation, ptr: *mut c_void) -> hipError_t {
    hip_boundary!("hipMemGetAccess", {
        non_null!(flags);
        non_null!(location);
        non_null!(ptr);
        // SAFETY: checked non-null; HIP's contract: it points at a hipMemLocation.
        let location = unsafe { location.read() };
        if location.type_ != hipMemLocationTypeDevice || location.id < 0 {
            return Err(invalid("location is not a device"));
        }
        let req = wire::MemAccessQuery { ptr: ptr as u64, device: location.id as u32 };
        let f = with_conn(|c| c.mem_get_access(req).map(|a| a.flags))?;
        try_out!(flags, f as c_ulonglong);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetAllocationPropertiesFromHandle(
    prop: *mut hipMemAllocationProp,
    handle: hipMemGenericAllocationHandle_t,
) -> hipError_t {
    hip_boundary!("hipMemGetAllocationPropertiesFromHandle", {
        non_null!(prop);
        non_null!(handle);
        let info = with_conn(|c| c.mem_get_properties(wire::PhysicalRef { handle: handle_id(handle) }).map(|i| (i.device, i.handle_type)))?;
        // SAFETY: a plain C struct; all-zero is a valid value.
        let mut out: hipMemAllocationProp = unsafe { std::mem::zeroed() };
        out.type_ = hipMemAllocationTypePinned;
        out.__bindgen_anon_1.requestedHandleType = info.1;
        out.location = hipMemLocation { type_: hipMemLocationTypeDevice, id: info.0 as c_int };
        try_out!(prop, out);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemRetainAllocationHandle(handle: *mut hipMemGenericAllocationHandle_t, addr: *mut c_void) -> hipError_t {
    hip_boundary!("hipMemRetainAllocationHandle", {
        non_null!(handle);
        non_null!(addr);
        let id = with_conn(|c| c.mem_retain(wire::VmmAddress { ptr: addr as u64 }).map(|p| p.handle))?;
        try_out!(handle, handle_of(id)?);
        Ok(())
    })
}

/// The shareable "file descriptor" holding `token` (see [`shareable_fd`]); the application
/// owns the returned descriptor.
pub(super) fn token_fd(token: u64) -> Result<c_int, CallError> {
    shareable_fd::create(token)
}

/// The token in a shareable "file descriptor" (any descriptor of a [`token_fd`] file).
pub(super) fn read_token(fd: c_int) -> Result<u64, CallError> {
    shareable_fd::read(fd).ok_or_else(|| invalid(format!("descriptor {fd} is not a shareable handle of hip-remote")))
}

#[no_mangle]
pub unsafe extern "C" fn hipMemExportToShareableHandle(
    shareable_handle: *mut c_void,
    handle: hipMemGenericAllocationHandle_t,
    handle_type: hipMemAllocationHandleType,
    flags: c_ulonglong,
) -> hipError_t {
    hip_boundary!("hipMemExportToShareableHandle", {
        non_null!(shareable_handle);
        non_null!(handle);
        if flags != 0 {
            return Err(invalid(format!("flags {flags:#x} must be 0")));
        }
        if handle_type != hipMemHandleTypePosixFileDescriptor {
            return Err(CallError::new(HipError::NOT_SUPPORTED, format!("handle type {handle_type}: only hipMemHandleTypePosixFileDescriptor")));
        }
        let token = with_conn(|c| c.mem_export(wire::MemExport { handle: handle_id(handle), handle_type }).map(|t| t.token))?;
        let fd = token_fd(token)?;
        // The application owns the descriptor from now on (it closes it).
        try_out!(shareable_handle.cast::<c_int>(), fd);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemImportFromShareableHandle(
    handle: *mut hipMemGenericAllocationHandle_t,
    os_handle: *mut c_void,
    handle_type: hipMemAllocationHandleType,
) -> hipError_t {
    hip_boundary!("hipMemImportFromShareableHandle", {
        non_null!(handle);
        non_null!(os_handle);
        if handle_type != hipMemHandleTypePosixFileDescriptor {
            return Err(CallError::new(HipError::NOT_SUPPORTED, format!("handle type {handle_type}: only hipMemHandleTypePosixFileDescriptor")));
        }
        // As in CUDA, the descriptor itself is passed, cast to a pointer.
        let fd = os_handle as usize as c_int;
        let token = read_token(fd)?;
        let id = with_conn(|c| c.mem_import(wire::MemImport { token, handle_type }).map(|p| p.handle))?;
        try_out!(handle, handle_of(id)?);
        Ok(())
    })
}
