//! Virtual memory management on the host backend, with the host's own virtual memory:
//! a reservation is an inaccessible (`PROT_NONE`) anonymous mapping, physical memory a memfd
//! counted against its device's capacity, `map` places the memfd over part of a reservation
//! (`MAP_FIXED | MAP_SHARED`, so two mappings of one allocation share their bytes) and access
//! makes it readable and writable and known to the device address space, so copies and
//! kernels reach it like `hipMalloc` memory. An inaccessible or unmapped range is in no
//! address-space entry: copies to it are refused before any byte is touched.

use super::memory::{Reservation, PAGE};
use super::{read_lock, write_lock, HostBackend};
use crate::backend::vmm::{access, PhysicalHandle, VmmBackend};
use crate::backend::{BackendError, DeviceIndex, DevicePtr};
use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// Granularity recommended for reservations and physical allocations (a huge page).
pub const RECOMMENDED_GRANULARITY: u64 = 2 << 20;

/// Physical memory: a memfd and the capacity it holds.
#[derive(Debug)]
struct Physical {
    fd: OwnedFd,
    device: DeviceIndex,
    _capacity: Reservation,
}

/// What a mapping keeps alive: its physical memory (the address-space entry holds it).
#[derive(Debug)]
struct MappedBytes {
    _physical: Arc<Physical>,
}

/// The host backend's VMM tables.
#[derive(Debug, Default)]
pub(super) struct HostVmm {
    next: AtomicU64,
    physical: RwLock<HashMap<u64, Arc<Physical>>>,
    /// Live mappings: base → (size, physical).
    mappings: RwLock<HashMap<u64, (u64, Arc<Physical>)>>,
}

fn os_error(what: &str) -> BackendError {
    BackendError::OutOfMemory(format!("{what}: {}", std::io::Error::last_os_error()))
}

fn host_len(size: u64) -> Result<usize, BackendError> {
    usize::try_from(size).map_err(|_| BackendError::OutOfMemory(format!("{size} bytes exceed the host address space")))
}

/// Puts an inaccessible anonymous mapping over `[ptr, ptr + len)` (a reservation's state).
fn protect_none(ptr: u64, len: usize) -> Result<(), BackendError> {
    // SAFETY: the range lies inside one of this backend's reservations (the session checked),
    // which only this backend maps into; MAP_FIXED replaces exactly that range.
    let addr = unsafe {
        libc::mmap(
            ptr as *mut libc::c_void,
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(os_error("mmap PROT_NONE"));
    }
    Ok(())
}

impl VmmBackend for HostBackend {
    fn vmm_granularity(&self, dev: DeviceIndex, recommended: bool) -> Result<u64, BackendError> {
        self.device(dev)?;
        Ok(if recommended { RECOMMENDED_GRANULARITY } else { PAGE })
    }

    fn vmm_reserve(&self, size: u64, alignment: u64) -> Result<DevicePtr, BackendError> {
        self.vmm_reserve_at(size, alignment, 0)
    }

    fn vmm_reserve_at(&self, size: u64, alignment: u64, hint: u64) -> Result<DevicePtr, BackendError> {
        let alignment = alignment.max(PAGE);
        let len = host_len(size)?;
        let padded = host_len(size.checked_add(alignment).ok_or_else(|| BackendError::OutOfMemory("reservation size overflows".into()))?)?;
        // SAFETY: a fresh anonymous PROT_NONE mapping; `hint` is only a hint (no MAP_FIXED):
        // the kernel places it elsewhere rather than over anything mapped. Nothing else
        // refers to it.
        let addr = unsafe {
            libc::mmap(
                hint as usize as *mut libc::c_void,
                padded,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(os_error("mmap reservation"));
        }
        let start = addr as u64;
        let base = start.next_multiple_of(alignment);
        let (head, tail) = ((base - start) as usize, padded - (base - start) as usize - len);
        // SAFETY: both trimmed pieces belong to the mapping made above and are not used.
        unsafe {
            if head > 0 {
                libc::munmap(addr, head);
            }
            if tail > 0 {
                libc::munmap((base as usize + len) as *mut libc::c_void, tail);
            }
        }
        Ok(DevicePtr(base))
    }

    fn vmm_free_reservation(&self, ptr: DevicePtr, size: u64) -> Result<(), BackendError> {
        // SAFETY: a reservation of this backend with no mapping left (the session checked).
        if unsafe { libc::munmap(ptr.0 as *mut libc::c_void, host_len(size)?) } != 0 {
            return Err(BackendError::InvalidValue(format!("munmap {ptr}: {}", std::io::Error::last_os_error())));
        }
        Ok(())
    }

    fn vmm_create(&self, dev: DeviceIndex, size: u64) -> Result<PhysicalHandle, BackendError> {
        let device = self.device(dev)?;
        let footprint = size.next_multiple_of(PAGE);
        let capacity = device.memory.try_reserve(footprint).ok_or_else(|| {
            let info = device.memory.info();
            BackendError::OutOfMemory(format!("{size} bytes requested on device {dev}, {} of {} free", info.free, info.total))
        })?;
        // A size-sealed memory file, so it can also be shared through IPC (client-placed
        // hipMalloc memory lives here).
        let fd = super::ipc::memory_file(host_len(footprint)?).map_err(|e| BackendError::OutOfMemory(format!("memory file: {e}")))?;
        let id = self.vmm.next.fetch_add(1, Ordering::Relaxed) + 1;
        write_lock(&self.vmm.physical).insert(id, Arc::new(Physical { fd, device: dev, _capacity: capacity }));
        Ok(PhysicalHandle(id))
    }

    fn vmm_release(&self, handle: PhysicalHandle) -> Result<(), BackendError> {
        // Mappings hold their own reference; the memory goes with the last one.
        write_lock(&self.vmm.physical)
            .remove(&handle.0)
            .map(drop)
            .ok_or_else(|| BackendError::InvalidValue(format!("physical allocation {} does not exist", handle.0)))
    }

    fn vmm_map(&self, ptr: DevicePtr, size: u64, handle: PhysicalHandle) -> Result<(), BackendError> {
        let physical = read_lock(&self.vmm.physical)
            .get(&handle.0)
            .cloned()
            .ok_or_else(|| BackendError::InvalidValue(format!("physical allocation {} does not exist", handle.0)))?;
        // Inaccessible until access is set: mapped PROT_NONE.
        // SAFETY: the range lies inside a reservation of this backend and is not mapped
        // (the session checked); MAP_FIXED replaces the reservation's PROT_NONE pages there.
        let addr = unsafe {
            libc::mmap(ptr.0 as *mut libc::c_void, host_len(size)?, libc::PROT_NONE, libc::MAP_SHARED | libc::MAP_FIXED, physical.fd.as_raw_fd(), 0)
        };
        if addr == libc::MAP_FAILED {
            return Err(os_error("mmap memfd"));
        }
        write_lock(&self.vmm.mappings).insert(ptr.0, (size, physical));
        Ok(())
    }

    fn vmm_unmap(&self, ptr: DevicePtr, size: u64) -> Result<(), BackendError> {
        write_lock(&self.vmm.mappings).remove(&ptr.0).ok_or_else(|| BackendError::InvalidValue(format!("{ptr} is not mapped")))?;
        // Out of the address space first: no new copy may start on it.
        drop(self.address_space.unmap_external(ptr));
        protect_none(ptr.0, host_len(size)?)
    }

    fn vmm_set_access(&self, ptr: DevicePtr, size: u64, dev: DeviceIndex, flags: u32) -> Result<(), BackendError> {
        self.device(dev)?;
        let physical = match read_lock(&self.vmm.mappings).get(&ptr.0) {
            Some((mapped, physical)) if *mapped == size => Arc::clone(physical),
            _ => return Err(BackendError::InvalidValue(format!("{ptr}+{size} is not a mapping"))),
        };
        let len = host_len(size)?;
        drop(self.address_space.unmap_external(ptr));
        // Read-only mappings are writable to the worker too, so its own copies never fault
        // (read-only is not enforced against writes on the host backend).
        let prot = if flags == access::NONE { libc::PROT_NONE } else { libc::PROT_READ | libc::PROT_WRITE };
        // SAFETY: a live mapping of this backend, exactly.
        if unsafe { libc::mprotect(ptr.0 as *mut libc::c_void, len, prot) } != 0 {
            return Err(os_error("mprotect"));
        }
        if flags != access::NONE {
            let owner = Arc::new(MappedBytes { _physical: Arc::clone(&physical) });
            self.address_space.map_external(physical.device, ptr.0, size, owner)?;
        }
        Ok(())
    }
}

impl HostBackend {
    /// The memory file behind the mapping of `size` bytes at `base`, shared for IPC
    /// (`None`: no mapping starts there).
    pub(super) fn vmm_mapping_share(&self, base: DevicePtr, size: u64) -> Result<Option<crate::backend::IpcShare>, BackendError> {
        let Some((mapped, physical)) = read_lock(&self.vmm.mappings).get(&base.0).map(|(s, p)| (*s, Arc::clone(p))) else { return Ok(None) };
        if mapped != size {
            return Err(BackendError::InvalidValue(format!("{base}+{size} is not one mapping ({mapped} bytes are mapped there)")));
        }
        let fd = physical.fd.try_clone().map_err(|e| BackendError::OutOfMemory(format!("duplicating a memory file: {e}")))?;
        Ok(Some(crate::backend::IpcShare::Fd { fd: Arc::new(fd), len: size.next_multiple_of(PAGE) }))
    }
}
