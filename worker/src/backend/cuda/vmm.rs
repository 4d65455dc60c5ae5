//! Virtual memory management on CUDA: `cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`,
//! `cuMemSetAccess`. Mapped ranges are entered in the backend's table of never-freeable
//! ranges (with module globals), so copies find their device.

use super::{lock, result, sys, CudaBackend};
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
        let mut prop = result::vmm::zeroed_prop();
        prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = ordinal;
        // A driver that cannot answer is one without the handle type.
        if result::vmm::posix_fd_supported(ordinal).unwrap_or(false) {
            prop.requestedHandleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        }
        Ok(prop)
    }

    /// The backend's device index of a physical allocation.
    fn physical_device(&self, handle: PhysicalHandle) -> Result<DeviceIndex, BackendError> {
        // The handle came from `vmm_create`.
        let prop = result::vmm::properties_of(handle.0)?;
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
        Ok(result::vmm::granularity(&prop, option)? as u64)
    }

    fn vmm_reserve(&self, size: u64, alignment: u64) -> Result<DevicePtr, BackendError> {
        self.enter(0)?;
        Ok(DevicePtr(result::vmm::reserve(host_len(size)?, host_len(alignment)?)?))
    }

    fn vmm_reserve_at(&self, size: u64, alignment: u64, hint: u64) -> Result<DevicePtr, BackendError> {
        self.enter(0)?;
        Ok(DevicePtr(result::vmm::reserve_at(host_len(size)?, host_len(alignment)?, hint)?))
    }

    fn vmm_free_reservation(&self, ptr: DevicePtr, size: u64) -> Result<(), BackendError> {
        self.enter(0)?;
        // A reservation of this backend without mappings (the session checked).
        Ok(result::vmm::free_reservation(ptr.0, host_len(size)?)?)
    }

    fn vmm_create(&self, dev: DeviceIndex, size: u64) -> Result<PhysicalHandle, BackendError> {
        let prop = self.allocation_prop(dev)?;
        self.enter(dev)?;
        Ok(PhysicalHandle(result::vmm::create(host_len(size)?, &prop)?))
    }

    fn vmm_release(&self, handle: PhysicalHandle) -> Result<(), BackendError> {
        self.enter(self.physical_device(handle)?)?;
        // A handle of `vmm_create`, released once (the session's reference count).
        Ok(result::vmm::release(handle.0)?)
    }

    fn vmm_map(&self, ptr: DevicePtr, size: u64, handle: PhysicalHandle) -> Result<(), BackendError> {
        let dev = self.physical_device(handle)?;
        self.enter(dev)?;
        // An unmapped range inside a reservation and a live handle (the session checked).
        result::vmm::map(ptr.0, host_len(size)?, handle.0)?;
        lock(&self.globals).insert(ptr.0, (size, dev));
        Ok(())
    }

    fn vmm_unmap(&self, ptr: DevicePtr, size: u64) -> Result<(), BackendError> {
        let (_, dev) = lock(&self.globals).remove(&ptr.0).ok_or_else(|| BackendError::InvalidValue(format!("{ptr} is not mapped")))?;
        self.enter(dev)?;
        // A mapping of this backend; no queued work uses it (the session waited).
        Ok(result::vmm::unmap(ptr.0, host_len(size)?)?)
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
        Ok(result::vmm::set_access(ptr.0, host_len(size)?, &desc)?)
    }

    fn vmm_scrub(&self, ptr: DevicePtr, size: u64, dev: DeviceIndex) -> Result<(), BackendError> {
        self.enter(dev)?;
        self.scrub_now(dev, ptr.0, host_len(size)?)
    }
}
