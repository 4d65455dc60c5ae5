//! Virtual memory management on CUDA: `cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`,
//! `cuMemSetAccess`. Mapped ranges are entered in the backend's table of never-freeable
//! ranges (with module globals), so copies find their device.

use super::error::Check;
use super::{lock, sys, CudaBackend};
use crate::backend::vmm::{PhysicalHandle, VmmBackend};
use crate::backend::{BackendError, DeviceIndex, DevicePtr};

fn host_len(size: u64) -> Result<usize, BackendError> {
    usize::try_from(size).map_err(|_| BackendError::OutOfMemory(format!("{size} bytes exceed the address space")))
}

impl CudaBackend {
    /// Pinned device memory on `dev`, as `cuMemCreate` and the granularity query want it:
    /// exportable as a POSIX file descriptor where the device supports that, so a session
    /// process can share it with another (`hipIpcGetMemHandle`, see `ipc.rs`).
    pub(super) fn allocation_prop(&self, dev: DeviceIndex) -> Result<sys::CUmemAllocationProp, BackendError> {
        let ordinal = self.device(dev)?.dev;
        // SAFETY: a plain C struct; all-zero is its documented default.
        let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
        prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = ordinal;
        let mut posix_fd: std::ffi::c_int = 0;
        // SAFETY: a valid out-pointer and device.
        let queried = unsafe {
            sys::cuDeviceGetAttribute(
                &mut posix_fd,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                ordinal,
            )
        };
        if queried == sys::CUresult::CUDA_SUCCESS && posix_fd != 0 {
            prop.requestedHandleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        }
        Ok(prop)
    }

    /// The backend's device index of a physical allocation.
    fn physical_device(&self, handle: PhysicalHandle) -> Result<DeviceIndex, BackendError> {
        // SAFETY: as in `allocation_prop`.
        let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
        // SAFETY: a valid out-pointer; the handle came from `vmm_create`.
        unsafe { sys::cuMemGetAllocationPropertiesFromHandle(&mut prop, handle.0) }.check("cuMemGetAllocationPropertiesFromHandle")?;
        (0..self.devices.len() as DeviceIndex)
            .find(|&d| self.devices[d as usize].dev == prop.location.id)
            .ok_or_else(|| BackendError::InvalidValue(format!("physical allocation on CUDA device {} is not served", prop.location.id)))
    }
}

impl VmmBackend for CudaBackend {
    fn vmm_granularity(&self, dev: DeviceIndex, recommended: bool) -> Result<u64, BackendError> {
        let prop = self.allocation_prop(dev)?;
        self.enter(dev)?;
        let option = if recommended {
            sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
        } else {
            sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM
        };
        let mut granularity = 0usize;
        // SAFETY: valid pointers; a context is current.
        unsafe { sys::cuMemGetAllocationGranularity(&mut granularity, &prop, option) }.check("cuMemGetAllocationGranularity")?;
        Ok(granularity as u64)
    }

    fn vmm_reserve(&self, size: u64, alignment: u64) -> Result<DevicePtr, BackendError> {
        self.enter(0)?;
        let mut ptr = 0;
        // SAFETY: a valid out-pointer; a context is current.
        unsafe { sys::cuMemAddressReserve(&mut ptr, host_len(size)?, host_len(alignment)?, 0, 0) }.check("cuMemAddressReserve")?;
        Ok(DevicePtr(ptr))
    }

    fn vmm_reserve_at(&self, size: u64, alignment: u64, hint: u64) -> Result<DevicePtr, BackendError> {
        self.enter(0)?;
        let mut ptr = 0;
        // SAFETY: a valid out-pointer; a context is current; `addr` is a hint the driver may
        // not honour (it then reserves elsewhere).
        unsafe { sys::cuMemAddressReserve(&mut ptr, host_len(size)?, host_len(alignment)?, hint, 0) }.check("cuMemAddressReserve")?;
        Ok(DevicePtr(ptr))
    }

    fn vmm_free_reservation(&self, ptr: DevicePtr, size: u64) -> Result<(), BackendError> {
        self.enter(0)?;
        // SAFETY: a reservation of this backend without mappings (the session checked).
        unsafe { sys::cuMemAddressFree(ptr.0, host_len(size)?) }.check("cuMemAddressFree")
    }

    fn vmm_create(&self, dev: DeviceIndex, size: u64) -> Result<PhysicalHandle, BackendError> {
        let prop = self.allocation_prop(dev)?;
        self.enter(dev)?;
        let mut handle = 0;
        // SAFETY: valid pointers; a context is current.
        unsafe { sys::cuMemCreate(&mut handle, host_len(size)?, &prop, 0) }.check("cuMemCreate")?;
        Ok(PhysicalHandle(handle))
    }

    fn vmm_release(&self, handle: PhysicalHandle) -> Result<(), BackendError> {
        self.enter(self.physical_device(handle)?)?;
        // SAFETY: a handle of `vmm_create`, released once (the session's reference count).
        unsafe { sys::cuMemRelease(handle.0) }.check("cuMemRelease")
    }

    fn vmm_map(&self, ptr: DevicePtr, size: u64, handle: PhysicalHandle) -> Result<(), BackendError> {
        let dev = self.physical_device(handle)?;
        self.enter(dev)?;
        // SAFETY: an unmapped range inside a reservation and a live handle (the session checked).
        unsafe { sys::cuMemMap(ptr.0, host_len(size)?, 0, handle.0, 0) }.check("cuMemMap")?;
        lock(&self.globals).insert(ptr.0, (size, dev));
        Ok(())
    }

    fn vmm_unmap(&self, ptr: DevicePtr, size: u64) -> Result<(), BackendError> {
        let (_, dev) = lock(&self.globals).remove(&ptr.0).ok_or_else(|| BackendError::InvalidValue(format!("{ptr} is not mapped")))?;
        self.enter(dev)?;
        // SAFETY: a mapping of this backend; no queued work uses it (the session waited).
        unsafe { sys::cuMemUnmap(ptr.0, host_len(size)?) }.check("cuMemUnmap")
    }

    fn vmm_set_access(&self, ptr: DevicePtr, size: u64, dev: DeviceIndex, flags: u32) -> Result<(), BackendError> {
        let prop = self.allocation_prop(dev)?;
        let flags = match flags {
            0 => sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_NONE,
            1 => sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READ,
            _ => sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        let desc = sys::CUmemAccessDesc { location: prop.location, flags };
        self.enter(dev)?;
        // SAFETY: one valid descriptor; a mapping of this backend.
        unsafe { sys::cuMemSetAccess(ptr.0, host_len(size)?, &desc, 1) }.check("cuMemSetAccess")
    }

    fn vmm_scrub(&self, ptr: DevicePtr, size: u64, dev: DeviceIndex) -> Result<(), BackendError> {
        self.enter(dev)?;
        self.scrub_now(dev, ptr.0, host_len(size)?)
    }
}
