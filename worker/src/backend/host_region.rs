//! Host memory a same-host session shares with its client (`hipHostMalloc` over `shm://`): a
//! sealed memfd the worker maps and registers with the backend
//! ([`TransportHooks::register_host_memory`]), so a copy from or to it is one DMA, as from
//! native pinned memory. Its memfd is passed to the client, which maps it too.

use super::{Backend, BackendError};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use transport_shm::sys::{sealed_memfd, Mapping};

/// The name of a region's memfd (seen in `/proc/PID/maps` as `memfd:hip-remote-host`).
pub const HOST_REGION_MEMFD_NAME: &std::ffi::CStr = c"hip-remote-host";

/// One shared, registered region; unregistered and unmapped when the last holder (the
/// session's table, a copy in flight) lets go. The session synchronises its work before it
/// drops its own hold, so the last drop never happens inside a stream callback (where GPU
/// runtimes forbid the unregister call).
pub struct HostRegion {
    mapping: Mapping,
    backend: Arc<dyn Backend>,
}

impl std::fmt::Debug for HostRegion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostRegion").field("addr", &self.addr()).field("len", &self.len()).finish()
    }
}

impl HostRegion {
    /// Creates a region of `len` bytes (a multiple of the page size), maps and registers it;
    /// returns it with its memfd (to pass to the client, then close).
    pub fn create(backend: Arc<dyn Backend>, len: usize) -> Result<(Arc<Self>, OwnedFd), BackendError> {
        let io = |e: std::io::Error| BackendError::OutOfMemory(format!("shared host memory of {len} bytes: {e}"));
        let fd = sealed_memfd(HOST_REGION_MEMFD_NAME, len).map_err(io)?;
        let mapping = Mapping::new(fd.as_fd(), len).map_err(io)?;
        backend.register_host_memory(mapping.as_ptr() as usize, len)?;
        Ok((Arc::new(Self { mapping, backend }), fd))
    }

    /// Where the region is mapped in the worker.
    pub fn addr(&self) -> usize {
        self.mapping.as_ptr() as usize
    }

    /// Bytes.
    pub fn len(&self) -> usize {
        self.mapping.len()
    }

    /// Never: a region is not empty.
    pub fn is_empty(&self) -> bool {
        self.mapping.is_empty()
    }

    /// `[offset, offset + len)` of the region, `None` when that is not wholly inside it.
    pub fn slice(self: &Arc<Self>, offset: u64, len: u64) -> Option<RegionSlice> {
        let end = offset.checked_add(len)?;
        (end <= self.len() as u64).then(|| RegionSlice { region: Arc::clone(self), offset: offset as usize, len: len as usize })
    }
}

impl Drop for HostRegion {
    fn drop(&mut self) {
        if let Err(e) = self.backend.unregister_host_memory(self.addr()) {
            tracing::warn!(%e, addr = self.addr(), "unregistering shared host memory failed");
        }
        // The mapping goes next (its own Drop).
    }
}

/// Part of a region a copy reads or writes; keeps the region alive until the copy is done.
#[derive(Debug)]
pub struct RegionSlice {
    region: Arc<HostRegion>,
    offset: usize,
    len: usize,
}

impl RegionSlice {
    /// The first byte's address in the worker.
    pub fn addr(&self) -> usize {
        self.region.addr() + self.offset
    }

    /// Bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `bytes` (at most the slice's length) to the slice's start.
    pub fn write(&self, bytes: &[u8]) {
        let n = bytes.len().min(self.len);
        // SAFETY: `[addr, addr + len)` lies inside the live mapping the slice holds (checked
        // by `HostRegion::slice`); the client may touch the same bytes meanwhile, which
        // changes what it reads, never what memory is accessed.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.addr() as *mut u8, n) };
    }
}

impl AsRef<[u8]> for RegionSlice {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: as in `write`: inside the live mapping held by `self`. The bytes are shared
        // with the client, which agreed (HIP's rules) not to write a copy's source meanwhile.
        unsafe { std::slice::from_raw_parts(self.addr() as *const u8, self.len) }
    }
}
