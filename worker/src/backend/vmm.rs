//! Virtual memory management (`hipMemAddressReserve`, `hipMemCreate`, `hipMemMap`, ...): the
//! backend reserves address ranges, creates physical allocations and maps them. The session
//! keeps the tables (which range is reserved, mapped, accessible) and checks every request
//! against them first, so a backend call only ever names its own live objects.

use super::{BackendError, DeviceIndex, DevicePtr};

/// A backend's physical allocation (`hipMemGenericAllocationHandle_t` on the worker).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct PhysicalHandle(pub u64);

/// `hipMemAccessFlags`.
pub mod access {
    /// No access.
    pub const NONE: u32 = 0;
    /// Read only.
    pub const READ: u32 = 1;
    /// Read and write.
    pub const READ_WRITE: u32 = 3;
}

/// Virtual memory management.
pub trait VmmBackend {
    /// The granularity of reservations and physical allocations on `dev`: the minimum, or
    /// the recommended one (`hipMemAllocationGranularityRecommended`).
    fn vmm_granularity(&self, dev: DeviceIndex, recommended: bool) -> Result<u64, BackendError>;

    /// Reserves `size` bytes of device address space aligned to `alignment` (0: the
    /// granularity); nothing is accessible there until mapped.
    fn vmm_reserve(&self, size: u64, alignment: u64) -> Result<DevicePtr, BackendError>;

    /// [`VmmBackend::vmm_reserve`] preferably at `hint` (the driver may place it elsewhere,
    /// as `cuMemAddressReserve`'s `addr` does). Default: the hint is not passed on.
    fn vmm_reserve_at(&self, size: u64, alignment: u64, hint: u64) -> Result<DevicePtr, BackendError> {
        let _ = hint;
        self.vmm_reserve(size, alignment)
    }

    /// Gives a reservation back (its mappings are gone already).
    fn vmm_free_reservation(&self, ptr: DevicePtr, size: u64) -> Result<(), BackendError>;

    /// Creates `size` bytes of physical memory on `dev`.
    fn vmm_create(&self, dev: DeviceIndex, size: u64) -> Result<PhysicalHandle, BackendError>;

    /// Releases physical memory (no mapping of it is left).
    fn vmm_release(&self, handle: PhysicalHandle) -> Result<(), BackendError>;

    /// Maps `size` bytes of `handle` from its start at `ptr` (inside a reservation, not
    /// mapped yet). Not accessible until [`Self::vmm_set_access`].
    fn vmm_map(&self, ptr: DevicePtr, size: u64, handle: PhysicalHandle) -> Result<(), BackendError>;

    /// Unmaps the mapping at `ptr` (no work using it is queued: the session waited).
    fn vmm_unmap(&self, ptr: DevicePtr, size: u64) -> Result<(), BackendError>;

    /// Sets `dev`'s access ([`access`]) to the mapping at `ptr`, the whole of it.
    fn vmm_set_access(&self, ptr: DevicePtr, size: u64, dev: DeviceIndex, flags: u32) -> Result<(), BackendError>;

    /// Zeroes the fresh mapping at `ptr` (`size` bytes, `dev` given access) before its first
    /// owner sees it: physical memory the driver hands out may hold what another session of
    /// this process released. Default: nothing to do (the host backend's memory is new from
    /// the kernel, which zeroes it).
    fn vmm_scrub(&self, ptr: DevicePtr, size: u64, dev: DeviceIndex) -> Result<(), BackendError> {
        let _ = (ptr, size, dev);
        Ok(())
    }
}
