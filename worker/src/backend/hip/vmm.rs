//! Virtual memory management on a HIP runtime: `hipMemAddressReserve`, `hipMemCreate`,
//! `hipMemMap`, `hipMemSetAccess` (optional entry points: a runtime without them answers
//! `hipErrorNotSupported`). Mapped ranges join the never-freeable ranges (with module
//! globals), so copies find their device.

use super::error::Check;
use super::{lock, HipBackend};
use crate::backend::vmm::{PhysicalHandle, VmmBackend};
use crate::backend::{BackendError, DeviceIndex, DevicePtr};
use std::ffi::{c_int, c_void};

/// `hipMemLocation`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct MemLocation {
    pub kind: u32,
    pub id: c_int,
}

/// `hipMemAllocationProp`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MemAllocationProp {
    pub kind: u32,
    pub requested_handle_type: u32,
    pub location: MemLocation,
    pub win32_handle_meta_data: *mut c_void,
    pub compression_type: u8,
    pub gpu_direct_rdma_capable: u8,
    pub usage: u16,
}

/// `hipMemAccessDesc`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MemAccessDesc {
    pub location: MemLocation,
    pub flags: u32,
}

const ALLOCATION_TYPE_PINNED: u32 = 1;
pub(super) const LOCATION_TYPE_DEVICE: u32 = 1;

pub(super) fn host_len(size: u64) -> Result<usize, BackendError> {
    usize::try_from(size).map_err(|_| BackendError::OutOfMemory(format!("{size} bytes exceed the address space")))
}

/// An optional entry point, or `hipErrorNotSupported` naming it.
pub(super) fn entry<T: Copy>(f: Option<T>, name: &str) -> Result<T, BackendError> {
    f.ok_or_else(|| BackendError::NotSupported(format!("the HIP runtime lacks {name}")))
}

impl HipBackend {
    fn allocation_prop(&self, dev: DeviceIndex) -> Result<MemAllocationProp, BackendError> {
        Ok(MemAllocationProp {
            kind: ALLOCATION_TYPE_PINNED,
            // Exportable as a POSIX descriptor, so a session process can share it with
            // another (`hipIpcGetMemHandle`, see `ipc.rs`), as CUDA needs it said at creation.
            requested_handle_type: super::ipc::HANDLE_TYPE_POSIX_FD as u32,
            location: MemLocation { kind: LOCATION_TYPE_DEVICE, id: self.ordinal(dev)? },
            win32_handle_meta_data: std::ptr::null_mut(),
            compression_type: 0,
            gpu_direct_rdma_capable: 0,
            usage: 0,
        })
    }

    fn physical_device(&self, handle: PhysicalHandle) -> Result<DeviceIndex, BackendError> {
        let get = entry(self.api.hipMemGetAllocationPropertiesFromHandle, "hipMemGetAllocationPropertiesFromHandle")?;
        let mut prop = self.allocation_prop(0)?;
        // SAFETY: a valid out-pointer; the handle came from `vmm_create`.
        unsafe { get(&mut prop, handle.0 as *mut c_void) }.check("hipMemGetAllocationPropertiesFromHandle")?;
        (0..self.devices.len() as DeviceIndex)
            .find(|&d| self.ordinal(d).is_ok_and(|o| o == prop.location.id))
            .ok_or_else(|| BackendError::InvalidValue(format!("physical allocation on HIP device {} is not served", prop.location.id)))
    }
}

impl VmmBackend for HipBackend {
    fn vmm_granularity(&self, dev: DeviceIndex, recommended: bool) -> Result<u64, BackendError> {
        let get = entry(self.api.hipMemGetAllocationGranularity, "hipMemGetAllocationGranularity")?;
        let prop = self.allocation_prop(dev)?;
        let mut granularity = 0usize;
        // SAFETY: valid pointers.
        unsafe { get(&mut granularity, &prop, recommended as c_int) }.check("hipMemGetAllocationGranularity")?;
        Ok(granularity as u64)
    }

    fn vmm_reserve(&self, size: u64, alignment: u64) -> Result<DevicePtr, BackendError> {
        let reserve = entry(self.api.hipMemAddressReserve, "hipMemAddressReserve")?;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        unsafe { reserve(&mut ptr, host_len(size)?, host_len(alignment)?, std::ptr::null_mut(), 0) }.check("hipMemAddressReserve")?;
        Ok(DevicePtr(ptr as u64))
    }

    fn vmm_reserve_at(&self, size: u64, alignment: u64, hint: u64) -> Result<DevicePtr, BackendError> {
        let reserve = entry(self.api.hipMemAddressReserve, "hipMemAddressReserve")?;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; `addr` is a hint the runtime may not honour.
        unsafe { reserve(&mut ptr, host_len(size)?, host_len(alignment)?, hint as usize as *mut std::ffi::c_void, 0) }
            .check("hipMemAddressReserve")?;
        Ok(DevicePtr(ptr as u64))
    }

    fn vmm_free_reservation(&self, ptr: DevicePtr, size: u64) -> Result<(), BackendError> {
        let free = entry(self.api.hipMemAddressFree, "hipMemAddressFree")?;
        // SAFETY: a reservation of this backend without mappings (the session checked).
        unsafe { free(ptr.0 as *mut c_void, host_len(size)?) }.check("hipMemAddressFree")
    }

    fn vmm_create(&self, dev: DeviceIndex, size: u64) -> Result<PhysicalHandle, BackendError> {
        let create = entry(self.api.hipMemCreate, "hipMemCreate")?;
        let prop = self.allocation_prop(dev)?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: valid pointers.
        unsafe { create(&mut handle, host_len(size)?, &prop, 0) }.check("hipMemCreate")?;
        Ok(PhysicalHandle(handle as u64))
    }

    fn vmm_release(&self, handle: PhysicalHandle) -> Result<(), BackendError> {
        let release = entry(self.api.hipMemRelease, "hipMemRelease")?;
        // SAFETY: a handle of `vmm_create`, released once.
        unsafe { release(handle.0 as *mut c_void) }.check("hipMemRelease")
    }

    fn vmm_map(&self, ptr: DevicePtr, size: u64, handle: PhysicalHandle) -> Result<(), BackendError> {
        let map = entry(self.api.hipMemMap, "hipMemMap")?;
        let dev = self.physical_device(handle)?;
        // SAFETY: an unmapped range inside a reservation and a live handle (the session checked).
        unsafe { map(ptr.0 as *mut c_void, host_len(size)?, 0, handle.0 as *mut c_void, 0) }.check("hipMemMap")?;
        lock(&self.globals).insert(ptr.0, (size, dev));
        Ok(())
    }

    fn vmm_unmap(&self, ptr: DevicePtr, size: u64) -> Result<(), BackendError> {
        let unmap = entry(self.api.hipMemUnmap, "hipMemUnmap")?;
        lock(&self.globals).remove(&ptr.0).ok_or_else(|| BackendError::InvalidValue(format!("{ptr} is not mapped")))?;
        // SAFETY: a mapping of this backend; no queued work uses it (the session waited).
        unsafe { unmap(ptr.0 as *mut c_void, host_len(size)?) }.check("hipMemUnmap")
    }

    fn vmm_set_access(&self, ptr: DevicePtr, size: u64, dev: DeviceIndex, flags: u32) -> Result<(), BackendError> {
        let set = entry(self.api.hipMemSetAccess, "hipMemSetAccess")?;
        let desc = MemAccessDesc { location: MemLocation { kind: LOCATION_TYPE_DEVICE, id: self.ordinal(dev)? }, flags };
        // SAFETY: one valid descriptor; a mapping of this backend.
        unsafe { set(ptr.0 as *mut c_void, host_len(size)?, &desc, 1) }.check("hipMemSetAccess")
    }

    fn vmm_scrub(&self, ptr: DevicePtr, size: u64, dev: DeviceIndex) -> Result<(), BackendError> {
        let len = usize::try_from(size).map_err(|_| BackendError::OutOfMemory(format!("{size} bytes exceed the address space")))?;
        self.enter(dev)?;
        self.scrub_now(dev, ptr.0 as *mut std::ffi::c_void, len)
    }
}
