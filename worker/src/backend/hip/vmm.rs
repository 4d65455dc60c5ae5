//! Virtual memory management on a HIP runtime: `hipMemAddressReserve`, `hipMemCreate`,
//! `hipMemMap`, `hipMemSetAccess` (optional entry points: a runtime without them answers
//! `hipErrorNotSupported`). Mapped ranges join the never-freeable ranges (with module
//! globals), so copies find their device.

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
        let mut prop = self.allocation_prop(0)?;
        // The handle came from `vmm_create`.
        self.api.mem_allocation_properties(handle.0 as *mut c_void, &mut prop)?;
        (0..self.devices.len() as DeviceIndex)
            .find(|&d| self.ordinal(d).is_ok_and(|o| o == prop.location.id))
            .ok_or_else(|| BackendError::InvalidValue(format!("physical allocation on HIP device {} is not served", prop.location.id)))
    }
}

impl VmmBackend for HipBackend {
    fn vmm_granularity(&self, dev: DeviceIndex, recommended: bool) -> Result<u64, BackendError> {
        let prop = self.allocation_prop(dev)?;
        Ok(self.api.mem_granularity(&prop, recommended as c_int)? as u64)
    }

    fn vmm_reserve(&self, size: u64, alignment: u64) -> Result<DevicePtr, BackendError> {
        Ok(DevicePtr(self.api.mem_address_reserve(host_len(size)?, host_len(alignment)?)?))
    }

    fn vmm_reserve_at(&self, size: u64, alignment: u64, hint: u64) -> Result<DevicePtr, BackendError> {
        Ok(DevicePtr(self.api.mem_address_reserve_at(host_len(size)?, host_len(alignment)?, hint)?))
    }

    fn vmm_free_reservation(&self, ptr: DevicePtr, size: u64) -> Result<(), BackendError> {
        // A reservation of this backend without mappings (the session checked).
        Ok(self.api.mem_address_free(ptr.0, host_len(size)?)?)
    }

    fn vmm_create(&self, dev: DeviceIndex, size: u64) -> Result<PhysicalHandle, BackendError> {
        let prop = self.allocation_prop(dev)?;
        Ok(PhysicalHandle(self.api.mem_create(host_len(size)?, &prop)?))
    }

    fn vmm_release(&self, handle: PhysicalHandle) -> Result<(), BackendError> {
        // A handle of `vmm_create`, released once.
        Ok(self.api.mem_release(handle.0)?)
    }

    fn vmm_map(&self, ptr: DevicePtr, size: u64, handle: PhysicalHandle) -> Result<(), BackendError> {
        let dev = self.physical_device(handle)?;
        // An unmapped range inside a reservation and a live handle (the session checked).
        self.api.mem_map(ptr.0, host_len(size)?, handle.0)?;
        lock(&self.globals).insert(ptr.0, (size, dev));
        Ok(())
    }

    fn vmm_unmap(&self, ptr: DevicePtr, size: u64) -> Result<(), BackendError> {
        if self.api.hipMemUnmap.is_none() {
            return Err(BackendError::NotSupported("the HIP runtime lacks hipMemUnmap".into()));
        }
        lock(&self.globals).remove(&ptr.0).ok_or_else(|| BackendError::InvalidValue(format!("{ptr} is not mapped")))?;
        // A mapping of this backend; no queued work uses it (the session waited).
        Ok(self.api.mem_unmap(ptr.0, host_len(size)?)?)
    }

    fn vmm_set_access(&self, ptr: DevicePtr, size: u64, dev: DeviceIndex, flags: u32) -> Result<(), BackendError> {
        let desc = MemAccessDesc { location: MemLocation { kind: LOCATION_TYPE_DEVICE, id: self.ordinal(dev)? }, flags };
        Ok(self.api.mem_set_access(ptr.0, host_len(size)?, &desc)?)
    }

    fn vmm_scrub(&self, ptr: DevicePtr, size: u64, dev: DeviceIndex) -> Result<(), BackendError> {
        let len = usize::try_from(size).map_err(|_| BackendError::OutOfMemory(format!("{size} bytes exceed the address space")))?;
        self.enter(dev)?;
        self.scrub_now(dev, ptr.0 as *mut std::ffi::c_void, len)
    }
}
