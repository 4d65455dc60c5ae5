//! Stream-ordered memory pools: `hipMemPool*`, the devices' default and current pools,
//! `hipMallocAsync` / `hipMallocFromPoolAsync`. Pools live on the worker (session objects);
//! a `hipMemPool_t` carries the worker's handle. Argument checks and error codes follow
//! ROCm's `hip_mempool.cpp`.

#![allow(non_upper_case_globals)] // HIP's constant names, matched as patterns

use crate::abi::*;
use crate::handle::stream_id;
use crate::remote::with_conn;
use crate::state::allocations::{record_range_of_kind, RangeKind};
use client_core::CallError;
use proto_core::wire;
use proto_core::Calls;
use std::ffi::{c_int, c_void};

fn pool_id(pool: hipMemPool_t) -> u64 {
    pool as usize as u64
}

fn pool_handle(id: u64) -> Result<hipMemPool_t, CallError> {
    crate::handle::from_id(id)
}

fn invalid(message: impl Into<String>) -> CallError {
    CallError::new(HipError::INVALID_VALUE, message)
}

/// A device ordinal argument as the worker's `u32` (negative ones become out of range).
fn ordinal(device: c_int) -> u32 {
    u32::try_from(device).unwrap_or(u32::MAX)
}

fn malloc_from_pool(ptr: *mut *mut c_void, size: usize, pool: u64, stream: hipStream_t) -> Result<(), CallError> {
    non_null!(ptr);
    let req = wire::MallocFromPool { pool, device: crate::remote::routed_device(), size: size as u64, stream: stream_id(stream) };
    let capturing = crate::state::graph_host::capturing_graph(req.stream)?;
    let (p, device) = with_conn(|c| c.malloc_from_pool(req).map(|a| (a.ptr, a.device)))?;
    match (p, capturing) {
        (0, _) => {}
        // An allocation node of the capture's graph (the worker made one).
        (p, Some(graph)) => crate::state::allocations::record_graph_memory(p, size as u64, device, graph),
        (p, None) => record_range_of_kind(p, size as u64, device, 0, RangeKind::Pool),
    }
    try_out!(ptr, p as *mut c_void);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocAsync(ptr: *mut *mut c_void, size: usize, stream: hipStream_t) -> hipError_t {
    // From the current pool of the stream's device; sent even for 0 bytes: the worker
    // checks the stream first, as ROCm does.
    hip_boundary!("hipMallocAsync", { malloc_from_pool(ptr, size, 0, stream) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocFromPoolAsync(ptr: *mut *mut c_void, size: usize, mem_pool: hipMemPool_t, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipMallocFromPoolAsync", {
        non_null!(mem_pool);
        malloc_from_pool(ptr, size, pool_id(mem_pool), stream)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetDefaultMemPool(mem_pool: *mut hipMemPool_t, device: c_int) -> hipError_t {
    hip_boundary!("hipDeviceGetDefaultMemPool", {
        non_null!(mem_pool);
        let pool = with_conn(|c| c.device_get_pool(wire::DevicePoolQuery { device: ordinal(device), default: true }).map(|p| p.pool))?;
        try_out!(mem_pool, pool_handle(pool)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetMemPool(mem_pool: *mut hipMemPool_t, device: c_int) -> hipError_t {
    hip_boundary!("hipDeviceGetMemPool", {
        non_null!(mem_pool);
        let pool = with_conn(|c| c.device_get_pool(wire::DevicePoolQuery { device: ordinal(device), default: false }).map(|p| p.pool))?;
        try_out!(mem_pool, pool_handle(pool)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceSetMemPool(device: c_int, mem_pool: hipMemPool_t) -> hipError_t {
    hip_boundary!("hipDeviceSetMemPool", {
        non_null!(mem_pool);
        with_conn(|c| c.device_set_pool(wire::DeviceSetPool { device: ordinal(device), pool: pool_id(mem_pool) }).map(drop))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolCreate(mem_pool: *mut hipMemPool_t, pool_props: *const hipMemPoolProps) -> hipError_t {
    hip_boundary!("hipMemPoolCreate", {
        non_null!(mem_pool);
        non_null!(pool_props);
        // SAFETY: checked non-null; HIP's contract: it points at a hipMemPoolProps.
        let props = unsafe { pool_props.read() };
        if props.allocType != hipMemAllocationTypePinned {
            return Err(invalid(format!("pool allocType {} is not hipMemAllocationTypePinned", props.allocType)));
        }
        if props.location.type_ != hipMemLocationTypeDevice || props.location.id < 0 {
            return Err(invalid("a pool's location must be a device"));
        }
        match props.handleTypes {
            hipMemHandleTypeNone | hipMemHandleTypePosixFileDescriptor => {}
            hipMemHandleTypeWin32 | hipMemHandleTypeWin32Kmt => {
                return Err(CallError::new(HipError::NOT_SUPPORTED, "Windows handle types do not exist on this platform"))
            }
            other => return Err(invalid(format!("hipMemAllocationHandleType {other} does not exist"))),
        }
        let req = wire::PoolCreate { device: props.location.id as u32, max_size: props.maxSize as u64, handle_types: props.handleTypes };
        let pool = with_conn(|c| c.pool_create(req).map(|p| p.pool))?;
        try_out!(mem_pool, pool_handle(pool)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolDestroy(mem_pool: hipMemPool_t) -> hipError_t {
    hip_boundary!("hipMemPoolDestroy", {
        non_null!(mem_pool);
        with_conn(|c| c.pool_destroy(wire::PoolRef { pool: pool_id(mem_pool) }).map(drop))?;
        Ok(())
    })
}

/// Whether `attr` is one of the reuse policies (an `int` value); the rest are `uint64_t`.
fn is_flag_attribute(attr: hipMemPoolAttr) -> bool {
    matches!(attr, hipMemPoolReuseFollowEventDependencies | hipMemPoolReuseAllowOpportunistic | hipMemPoolReuseAllowInternalDependencies)
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolGetAttribute(mem_pool: hipMemPool_t, attr: hipMemPoolAttr, value: *mut c_void) -> hipError_t {
    hip_boundary!("hipMemPoolGetAttribute", {
        non_null!(mem_pool);
        non_null!(value);
        let v = with_conn(|c| c.pool_get_attribute(wire::PoolAttrQuery { pool: pool_id(mem_pool), attr }).map(|v| v.value))?;
        if is_flag_attribute(attr) {
            try_out!(value.cast::<c_int>(), v as c_int);
        } else {
            try_out!(value.cast::<u64>(), v);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolSetAttribute(mem_pool: hipMemPool_t, attr: hipMemPoolAttr, value: *mut c_void) -> hipError_t {
    hip_boundary!("hipMemPoolSetAttribute", {
        non_null!(mem_pool);
        non_null!(value);
        let v = if is_flag_attribute(attr) {
            // SAFETY: checked non-null; HIP's contract: an int for the reuse policies.
            unsafe { value.cast::<c_int>().read_unaligned() as u64 }
        } else if (hipMemPoolAttrReleaseThreshold..=hipMemPoolAttrUsedMemHigh).contains(&attr) {
            // SAFETY: checked non-null; HIP's contract: a uint64_t for the byte counts.
            unsafe { value.cast::<u64>().read_unaligned() }
        } else {
            0 // an attribute that does not exist: the worker refuses it
        };
        with_conn(|c| c.pool_set_attribute(wire::PoolSetAttr { pool: pool_id(mem_pool), attr, value: v }).map(drop))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolTrimTo(mem_pool: hipMemPool_t, min_bytes_to_hold: usize) -> hipError_t {
    hip_boundary!("hipMemPoolTrimTo", {
        non_null!(mem_pool);
        with_conn(|c| c.pool_trim_to(wire::PoolTrim { pool: pool_id(mem_pool), min_bytes: min_bytes_to_hold as u64 }).map(drop))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolSetAccess(mem_pool: hipMemPool_t, desc_list: *const hipMemAccessDesc, count: usize) -> hipError_t {
    hip_boundary!("hipMemPoolSetAccess", {
        non_null!(mem_pool);
        non_null!(desc_list);
        // ROCm 7: more descriptors than devices is an invalid device.
        let devices = crate::state::devices::device_count()?;
        if count > devices as usize {
            return Err(CallError::new(HipError::INVALID_DEVICE, format!("{count} access descriptors for {devices} device(s)")));
        }
        for i in 0..count {
            // SAFETY: checked non-null; HIP's contract: `count` descriptors.
            let desc = unsafe { desc_list.add(i).read() };
            if desc.location.type_ != hipMemLocationTypeDevice {
                return Err(invalid(format!("access descriptor {i}: location is not a device")));
            }
            let req = wire::PoolSetAccess { pool: pool_id(mem_pool), device: ordinal(desc.location.id), flags: desc.flags };
            with_conn(|c| c.pool_set_access(req).map(drop))?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolGetAccess(flags: *mut hipMemAccessFlags, mem_pool: hipMemPool_t, location: *mut hipMemLocation) -> hipError_t {
    hip_boundary!("hipMemPoolGetAccess", {
        non_null!(flags);
        non_null!(mem_pool);
        non_null!(location);
        // SAFETY: checked non-null; HIP's contract: it points at a hipMemLocation.
        let location = unsafe { location.read() };
        if location.type_ != hipMemLocationTypeDevice {
            return Err(invalid("location is not a device"));
        }
        let req = wire::PoolAccessQuery { pool: pool_id(mem_pool), device: ordinal(location.id) };
        let f = with_conn(|c| c.pool_get_access(req).map(|a| a.flags))?;
        try_out!(flags, f);
        Ok(())
    })
}

/// Marks `hipMemPoolPtrExportData` as ours: the magic, then the worker's token.
const EXPORT_DATA_MAGIC: &[u8; 8] = b"hipremot";

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolExportToShareableHandle(
    shared_handle: *mut c_void,
    mem_pool: hipMemPool_t,
    handle_type: hipMemAllocationHandleType,
    flags: std::ffi::c_uint,
) -> hipError_t {
    hip_boundary!("hipMemPoolExportToShareableHandle", {
        non_null!(mem_pool);
        non_null!(shared_handle);
        if flags != 0 {
            return Err(invalid(format!("flags {flags:#x} must be 0")));
        }
        let token = with_conn(|c| c.pool_export(wire::PoolExport { pool: pool_id(mem_pool), handle_type }).map(|t| t.token))?;
        let fd = super::vmm::token_fd(token)?;
        // The application owns the descriptor from now on.
        try_out!(shared_handle.cast::<c_int>(), fd);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolImportFromShareableHandle(
    mem_pool: *mut hipMemPool_t,
    shared_handle: *mut c_void,
    handle_type: hipMemAllocationHandleType,
    flags: std::ffi::c_uint,
) -> hipError_t {
    hip_boundary!("hipMemPoolImportFromShareableHandle", {
        non_null!(mem_pool);
        non_null!(shared_handle);
        if flags != 0 {
            return Err(invalid(format!("flags {flags:#x} must be 0")));
        }
        if handle_type != hipMemHandleTypePosixFileDescriptor {
            return Err(invalid(format!("handle type {handle_type}: only hipMemHandleTypePosixFileDescriptor")));
        }
        // As in CUDA, the descriptor itself is passed, cast to a pointer.
        let token = super::vmm::read_token(shared_handle as usize as c_int)?;
        let pool = with_conn(|c| c.pool_import(wire::PoolImport { token, handle_type }).map(|p| p.pool))?;
        try_out!(mem_pool, pool_handle(pool)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolExportPointer(export_data: *mut hipMemPoolPtrExportData, ptr: *mut c_void) -> hipError_t {
    hip_boundary!("hipMemPoolExportPointer", {
        non_null!(export_data);
        non_null!(ptr);
        let token = with_conn(|c| c.pool_export_pointer(wire::VmmAddress { ptr: ptr as u64 }).map(|t| t.token))?;
        let mut data = hipMemPoolPtrExportData { reserved: [0; 64] };
        data.reserved[..8].copy_from_slice(EXPORT_DATA_MAGIC);
        data.reserved[8..16].copy_from_slice(&token.to_le_bytes());
        try_out!(export_data, data);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolImportPointer(
    ptr: *mut *mut c_void,
    mem_pool: hipMemPool_t,
    export_data: *mut hipMemPoolPtrExportData,
) -> hipError_t {
    hip_boundary!("hipMemPoolImportPointer", {
        non_null!(ptr);
        non_null!(mem_pool);
        non_null!(export_data);
        // SAFETY: checked non-null; HIP's contract: it points at a hipMemPoolPtrExportData.
        let data = unsafe { export_data.read() };
        if &data.reserved[..8] != EXPORT_DATA_MAGIC {
            return Err(invalid("the export data was not made by hipMemPoolExportPointer"));
        }
        let token = u64::from_le_bytes(data.reserved[8..16].try_into().unwrap_or_default());
        // The worker bounds-checks every use of the imported range.
        let (p, device) =
            with_conn(|c| c.pool_import_pointer(wire::PoolImportPointer { pool: pool_id(mem_pool), token }).map(|a| (a.ptr, a.device)))?;
        // Known as device memory here (memsets, copies, pointer queries); its extent is the
        // worker's alone (size 0: unknown).
        record_range_of_kind(p, 0, device, 0, RangeKind::Pool);
        try_out!(ptr, p as *mut c_void);
        Ok(())
    })
}
