//! Registered memory: the rings (owned, page-aligned allocations) and registrations of
//! memory owned by someone else (a backend's device memory, through
//! [`ExportedMemory`](crate::hook::ExportedMemory)).

use super::os_err;
use crate::hook::ExportedMemory;
use rdma_sys::*;
use std::alloc::Layout;
use std::io;
use std::os::fd::AsRawFd;

/// A page-aligned allocation registered with a protection domain; deregistered and freed on
/// drop (before the PD is deallocated: the owner drops it first).
pub(crate) struct RegBuf {
    ptr: *mut u8,
    layout: Layout,
    mr: *mut ibv_mr,
}

impl RegBuf {
    /// Allocates `len` zeroed bytes and registers them with `access`.
    ///
    /// # Safety
    /// `pd` must be a live protection domain that outlives the buffer.
    pub(crate) unsafe fn new(pd: *mut ibv_pd, len: usize, access: i32) -> io::Result<Self> {
        let layout = Layout::from_size_align(len.max(1), 4096).map_err(io::Error::other)?;
        // SAFETY: non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(io::Error::new(io::ErrorKind::OutOfMemory, "ring allocation"));
        }
        // SAFETY: `ptr` is valid for `len` bytes; the caller guarantees `pd`.
        let mr = unsafe { ibv_reg_mr(pd, ptr.cast(), len, access) };
        if mr.is_null() {
            let e = os_err("ibv_reg_mr (check `ulimit -l`: registration pins memory)");
            // SAFETY: allocated above with this layout.
            unsafe { std::alloc::dealloc(ptr, layout) };
            return Err(e);
        }
        Ok(Self { ptr, layout, mr })
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub(crate) fn addr(&self) -> u64 {
        self.ptr as u64
    }

    pub(crate) fn lkey(&self) -> u32 {
        // SAFETY: live MR.
        unsafe { (*self.mr).lkey }
    }
}

impl Drop for RegBuf {
    fn drop(&mut self) {
        // SAFETY: deregistered once, then the memory it pinned is freed with its layout.
        unsafe {
            ibv_dereg_mr(self.mr);
            std::alloc::dealloc(self.ptr, self.layout);
        }
    }
}

/// A registration of memory the transport does not own (see [`crate::hook`]).
pub struct MemoryRegion {
    mr: *mut ibv_mr,
    /// Keeps a dma-buf fd open as long as the registration.
    _fd: Option<std::os::fd::OwnedFd>,
}

// SAFETY: an MR handle may be used and released from any thread.
unsafe impl Send for MemoryRegion {}
// SAFETY: as above (read-only accessors).
unsafe impl Sync for MemoryRegion {}

/// Access rights for one-sided transfers: the NIC writes into the region (local write,
/// remote write) and the peer reads from it (remote read).
pub const ONE_SIDED_ACCESS: i32 =
    (ibv_access_flags::IBV_ACCESS_LOCAL_WRITE.0 | ibv_access_flags::IBV_ACCESS_REMOTE_WRITE.0 | ibv_access_flags::IBV_ACCESS_REMOTE_READ.0) as i32;

impl MemoryRegion {
    /// Registers exported memory with `pd`: `ibv_reg_mr` for host memory,
    /// `ibv_reg_dmabuf_mr` for a dma-buf.
    ///
    /// # Safety
    /// `pd` must be live and outlive the region; host memory must stay mapped until the
    /// region is dropped.
    pub unsafe fn register(pd: *mut ibv_pd, mem: ExportedMemory, access: i32) -> io::Result<Self> {
        match mem {
            ExportedMemory::Host { addr, len } => {
                // SAFETY: guaranteed by the caller.
                let mr = unsafe { ibv_reg_mr(pd, addr as *mut libc::c_void, len as usize, access) };
                if mr.is_null() {
                    return Err(os_err("ibv_reg_mr"));
                }
                Ok(Self { mr, _fd: None })
            }
            ExportedMemory::Dmabuf { fd, offset, len, iova } => {
                // SAFETY: guaranteed by the caller; `fd` is a dma-buf kept open with the MR.
                let mr = unsafe { ibv_reg_dmabuf_mr(pd, offset, len as usize, iova, fd.as_raw_fd(), access) };
                if mr.is_null() {
                    return Err(os_err("ibv_reg_dmabuf_mr"));
                }
                Ok(Self { mr, _fd: Some(fd) })
            }
        }
    }

    /// Local key (for work requests of this side).
    pub fn lkey(&self) -> u32 {
        // SAFETY: live MR.
        unsafe { (*self.mr).lkey }
    }

    /// Remote key (what the peer puts in its RDMA READ/WRITE).
    pub fn rkey(&self) -> u32 {
        // SAFETY: live MR.
        unsafe { (*self.mr).rkey }
    }
}

impl Drop for MemoryRegion {
    fn drop(&mut self) {
        // SAFETY: deregistered once.
        unsafe { ibv_dereg_mr(self.mr) };
    }
}
