//! Managed and mapped host memory on the host backend: anonymous pages mapped at the address
//! the client reserved, so one address names the bytes on both sides (kernel arguments and
//! structures holding the pointer need no translation).

use super::HostBackend;
use crate::backend::{BackendError, DeviceIndex, DevicePtr, ManagedBackend};

/// Anonymous read-write pages owned by one placed allocation, unmapped on drop.
#[derive(Debug)]
pub(super) struct PlacedPages {
    addr: u64,
    len: usize,
}

impl PlacedPages {
    /// Maps `len` zeroed bytes at `hint` if that range is free in this process, elsewhere
    /// otherwise (never over an existing mapping).
    fn map(len: usize, hint: u64) -> Result<Self, BackendError> {
        let anywhere = || Self::mmap(len, 0, 0);
        if hint == 0 {
            return anywhere();
        }
        #[cfg(target_os = "linux")]
        let placed = Self::mmap(len, hint, libc::MAP_FIXED_NOREPLACE);
        #[cfg(not(target_os = "linux"))]
        let placed = Self::mmap(len, hint, 0);
        match placed {
            Ok(pages) if pages.addr == hint => Ok(pages),
            // Taken here (or an old kernel that ignores MAP_FIXED_NOREPLACE): the client
            // maps its side at the address we answer instead.
            Ok(elsewhere) => Ok(elsewhere),
            Err(_) => anywhere(),
        }
    }

    fn mmap(len: usize, hint: u64, extra_flags: libc::c_int) -> Result<Self, BackendError> {
        // SAFETY: an anonymous private mapping; with MAP_FIXED_NOREPLACE the kernel refuses to
        // replace an existing mapping, and without it `hint` is only a hint.
        let addr = unsafe {
            libc::mmap(
                hint as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | extra_flags,
                -1,
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(BackendError::OutOfMemory(format!("mmap of {len} bytes failed: {}", std::io::Error::last_os_error())));
        }
        Ok(Self { addr: addr as u64, len })
    }

    pub(super) fn addr(&self) -> u64 {
        self.addr
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for PlacedPages {
    fn drop(&mut self) {
        // SAFETY: the mapping was created by `mmap` above with this length and is unmapped once.
        unsafe { libc::munmap(self.addr as *mut libc::c_void, self.len) };
    }
}

impl ManagedBackend for HostBackend {
    fn malloc_managed(&self, device: DeviceIndex, size: u64, hint: u64) -> Result<DevicePtr, BackendError> {
        let len =
            usize::try_from(size).ok().filter(|&n| n > 0).ok_or_else(|| BackendError::InvalidValue(format!("managed allocation of {size} bytes")))?;
        let capacity = self.reserve_capacity(device, size)?;
        let pages = PlacedPages::map(len, hint)?;
        self.address_space.map_placed(device, pages, capacity)
    }

    fn malloc_device_twin(&self, device: DeviceIndex, size: u64, hint: u64) -> Result<DevicePtr, BackendError> {
        // Emulated managed memory is plain memory of one address space, which stream memory
        // operations address like any other: placed at `hint`, one address on both sides.
        self.malloc_managed(device, size, hint)
    }
}
